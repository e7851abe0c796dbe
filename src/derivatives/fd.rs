//! Central finite differences of the f64 step in the tangent space (the third reference path).

use nalgebra::{DMatrix, DVector};

use crate::derivatives::parameters::Parameter;
use crate::derivatives::StepJacobians;
use crate::error::Result;
use crate::step::{Simulator, State};

/// Output weights: 1 for the position rows `δq'`, `δt` for the velocity rows `v'`, so that
/// every output is a displacement over the step (`q' = q0 ⊕ δt N v'`) and the rows of a
/// column are commensurate.
pub fn output_weights(nv: usize, dt: f64) -> Vec<f64> {
    (0..2 * nv).map(|i| if i < nv { 1.0 } else { dt }).collect()
}

/// Step for position directions (tangent coordinates: m, rad). Small, because stiff contacts
/// carry penetrations of 1e-7 m under light loads and the force law has a kink at zero
/// penetration; the fourth-order stencil keeps the truncation error negligible.
pub const POSITION_STEP: f64 = 1e-8;
/// Step for velocity directions (m/s, rad/s): they move penetrations only by `δt·h`, and a
/// larger step keeps the round-off of position outputs (`ε |q| / h`) small.
pub const VELOCITY_STEP: f64 = 1e-7;
/// Step for actuation directions (N or N·m).
pub const CONTROL_STEP: f64 = 1e-6;
/// Relative step for named parameters.
pub const PARAMETER_STEP: f64 = 1e-6;

/// Step Jacobians by central differences of fourth order: each direction perturbed by ±h and
/// ±2h, the step run in f64, `(−x'(2h) + 8x'(h) − 8x'(−h) + x'(−2h)) / 12h` in the tangent
/// space (outputs measured as `x' ⊖ x'_nominal`), with the steps [`POSITION_STEP`],
/// [`VELOCITY_STEP`], [`CONTROL_STEP`] and [`PARAMETER_STEP`]. Accurate only if the solver
/// converges far below the perturbation (tighten `sim.settings.solver` first;
/// [`super::gradient_check`] does).
///
/// # Errors
/// Solver failures at any perturbed point.
pub fn step_jacobians_fd(
    sim: &mut Simulator,
    state: &State,
    u: &DVector<f64>,
    params: &[Parameter],
) -> Result<StepJacobians> {
    jacobian_by_columns(sim, state, u, params, |sim, nominal, k, h| {
        central_difference(sim, state, u, params, nominal, k, h)
    })
}

/// The step Jacobians with column `k` given by `column(sim, nominal, k, h)`, with `nominal` the
/// unperturbed next state and `h` the base step of direction `k`.
fn jacobian_by_columns(
    sim: &mut Simulator,
    state: &State,
    u: &DVector<f64>,
    params: &[Parameter],
    mut column: impl FnMut(&mut Simulator, &State, usize, f64) -> Result<DVector<f64>>,
) -> Result<StepJacobians> {
    let (nv, nu, np) = (sim.model.nv(), sim.model.nu(), params.len());
    let (nominal, _) = sim.step(state, u)?;
    let mut full = DMatrix::zeros(2 * nv, 2 * nv + nu + np);
    for k in 0..full.ncols() {
        let h = base_step(sim, params, k);
        full.set_column(k, &column(sim, &nominal, k, h)?);
    }
    let names = params.iter().map(|p| p.name(sim)).collect();
    Ok(StepJacobians::from_full(full, nv, nu, names, nominal))
}

/// Steps of [`step_jacobians_fd_selected`], as multiples of the base step of each direction.
pub const STEP_LADDER: [f64; 7] = [1e4, 1e3, 1e2, 1e1, 1.0, 1e-1, 1e-2];

/// Sum of the magnitudes of the fourth-order stencil's weights, `(1 + 8 + 8 + 1) / 12`: an
/// output known to `ε |x'|` contributes up to `STENCIL_GAIN ε |x'| / h` to an estimate.
pub const STENCIL_GAIN: f64 = 1.5;

/// Step Jacobians by fourth-order central differences with the step chosen per column: each
/// column is estimated at every step of [`STEP_LADDER`] (times its base step), and the
/// estimate at step `h` is taken whose error bound is least: its gap to the estimate at the
/// previous (larger) step, which bounds its truncation error, plus its round-off
/// `STENCIL_GAIN ε ‖W x'‖∞ / h`, both in the weighted norm of [`output_weights`] (a column is
/// one directional derivative; choosing per entry would favour entries too small to resolve).
///
/// A single step cannot serve every direction: round-off grows as `ε |x'| / h`, while a stencil
/// that reaches a kink of the step (a contact that opens, a clamp) is wrong at any order. A
/// rotating sphere is smooth over steps of 1e-3 rad about its centre, a penetration of 5e-7 m
/// only over steps far below it. Where successive estimates agree and round-off is small,
/// both errors are small; this is the reference [`super::gradient_check`] compares against.
/// The round-off term matters where a column is too small to move the outputs at small steps:
/// there successive estimates agree exactly (both zero) without resolving anything. It costs
/// `4 × 7` steps per column.
///
/// # Errors
/// Solver failures at any perturbed point.
pub fn step_jacobians_fd_selected(
    sim: &mut Simulator,
    state: &State,
    u: &DVector<f64>,
    params: &[Parameter],
) -> Result<StepJacobians> {
    step_jacobians_fd_bounded(sim, state, u, params).map(|(j, _)| j)
}

/// [`step_jacobians_fd_selected`] and the error bound of each chosen column (weighted as
/// [`output_weights`], in the column's units): the resolution of the reference itself. Where
/// the estimates along the ladder scatter (Solo12 standing on four feet: weakly responding
/// velocity columns scatter by 1e-6 to 4e-6 between steps of 1e-9 and 1e-3 m/s), the chosen
/// estimate's gap to its neighbour says so.
///
/// # Errors
/// Solver failures at any perturbed point.
pub fn step_jacobians_fd_bounded(
    sim: &mut Simulator,
    state: &State,
    u: &DVector<f64>,
    params: &[Parameter],
) -> Result<(StepJacobians, Vec<f64>)> {
    let mut bounds = Vec::new();
    let (nv, dt) = (sim.model.nv(), sim.settings.dt);
    let weights = output_weights(nv, dt);
    let gap = |a: &DVector<f64>, b: &DVector<f64>| {
        weights
            .iter()
            .enumerate()
            .fold(0.0f64, |m, (i, w)| m.max(w * (a[i] - b[i]).abs()))
    };
    let jacobians = jacobian_by_columns(sim, state, u, params, |sim, nominal, k, h| {
        let size = nominal.q.amax().max(dt * nominal.v.amax());
        let roundoff = |m: f64| STENCIL_GAIN * f64::EPSILON * size / (m * h);
        let estimates = STEP_LADDER
            .iter()
            .map(|m| central_difference(sim, state, u, params, nominal, k, m * h))
            .collect::<Result<Vec<_>>>()?;
        let bound = |i: usize| gap(&estimates[i - 1], &estimates[i]) + roundoff(STEP_LADDER[i]);
        let best = (1..estimates.len())
            .min_by(|&a, &b| bound(a).total_cmp(&bound(b)))
            .unwrap_or(1);
        bounds.push(bound(best));
        Ok(estimates[best].clone())
    })?;
    Ok((jacobians, bounds))
}

/// The base step of direction `k` of θ = [δq, δv, δu, parameters].
fn base_step(sim: &Simulator, params: &[Parameter], k: usize) -> f64 {
    let (nv, nu) = (sim.model.nv(), sim.model.nu());
    if k < nv {
        POSITION_STEP
    } else if k < 2 * nv {
        VELOCITY_STEP
    } else if k < 2 * nv + nu {
        CONTROL_STEP
    } else {
        PARAMETER_STEP * params[k - 2 * nv - nu].value(sim).abs().max(1e-6)
    }
}

/// Column `k` of the step Jacobian by the fourth-order stencil with step `h`.
fn central_difference(
    sim: &mut Simulator,
    state: &State,
    u: &DVector<f64>,
    params: &[Parameter],
    nominal: &State,
    k: usize,
    h: f64,
) -> Result<DVector<f64>> {
    let nv = sim.model.nv();
    let mut column = DVector::zeros(2 * nv);
    for (offset, weight) in [(2.0, -1.0), (1.0, 8.0), (-1.0, -8.0), (-2.0, 1.0)] {
        let next = perturbed_step(sim, state, u, params, k, offset * h)?;
        let mut x = DVector::zeros(2 * nv);
        x.rows_mut(0, nv)
            .copy_from(&sim.model.difference(&next.q, &nominal.q));
        x.rows_mut(nv, nv).copy_from(&(&next.v - &nominal.v));
        column += x * weight;
    }
    Ok(column / (12.0 * h))
}

/// The step with direction `k` of θ = [δq, δv, δu, parameters] moved by `delta`.
fn perturbed_step(
    sim: &mut Simulator,
    state: &State,
    u: &DVector<f64>,
    params: &[Parameter],
    k: usize,
    delta: f64,
) -> Result<State> {
    let (nv, nu) = (sim.model.nv(), sim.model.nu());
    let mut s = state.clone();
    let mut uu = u.clone();
    if k < nv {
        let tangent = DVector::from_fn(nv, |i, _| if i == k { delta } else { 0.0 });
        s.q = sim.model.retract(&state.q, &tangent);
    } else if k < 2 * nv {
        s.v[k - nv] += delta;
    } else if k < 2 * nv + nu {
        uu[k - 2 * nv] += delta;
    } else {
        let p = params[k - 2 * nv - nu];
        let value = p.value(sim);
        p.set(sim, value + delta)?;
        let next = sim.step(&s, &uu);
        p.set(sim, value)?;
        return Ok(next?.0);
    }
    Ok(sim.step(&s, &uu)?.0)
}
