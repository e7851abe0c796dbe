//! Central finite differences of the f64 step in the tangent space (the third reference path).

use nalgebra::{DMatrix, DVector};

use crate::derivatives::parameters::Parameter;
use crate::derivatives::StepJacobians;
use crate::error::Result;
use crate::step::{Simulator, State};

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
/// space (outputs measured as `x' ⊖ x'_nominal`). Accurate only if the solver converges far
/// below the perturbation (tighten `sim.settings.solver` first; [`super::gradient_check`] does).
///
/// # Errors
/// Solver failures at any perturbed point.
pub fn step_jacobians_fd(
    sim: &mut Simulator,
    state: &State,
    u: &DVector<f64>,
    params: &[Parameter],
) -> Result<StepJacobians> {
    let (nv, nu, np) = (sim.model.nv(), sim.model.nu(), params.len());
    let (nominal, _) = sim.step(state, u)?;
    let mut full = DMatrix::zeros(2 * nv, 2 * nv + nu + np);
    for k in 0..full.ncols() {
        let h = if k < nv {
            POSITION_STEP
        } else if k < 2 * nv {
            VELOCITY_STEP
        } else if k < 2 * nv + nu {
            CONTROL_STEP
        } else {
            PARAMETER_STEP * params[k - 2 * nv - nu].value(sim).abs().max(1e-6)
        };
        let mut column = DVector::zeros(2 * nv);
        for (offset, weight) in [(2.0, -1.0), (1.0, 8.0), (-1.0, -8.0), (-2.0, 1.0)] {
            let next = perturbed_step(sim, state, u, params, k, offset * h)?;
            let mut x = DVector::zeros(2 * nv);
            x.rows_mut(0, nv)
                .copy_from(&sim.model.difference(&next.q, &nominal.q));
            x.rows_mut(nv, nv).copy_from(&(&next.v - &nominal.v));
            column += x * weight;
        }
        full.set_column(k, &(column / (12.0 * h)));
    }
    let names = params.iter().map(|p| p.name(sim)).collect();
    Ok(StepJacobians::from_full(full, nv, nu, names, nominal))
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
