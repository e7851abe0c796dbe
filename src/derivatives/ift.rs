//! Step Jacobians by the implicit function theorem, reusing the Newton factor
//! (ICF ext. Sec. X-B): `∂v/∂θ = −H⁻¹ ∂r/∂θ`.
//!
//! The factor must be that of `H` at the nominal solution: the nominal step records the
//! generation of its factor ([`NominalStep::factor_generation`]), and
//! [`jacobians_given_factor`] refuses a factor of another generation or at other velocities
//! ([`Error::StaleFactor`]).
#![allow(non_snake_case)]

use std::ops::Range;

use nalgebra::{Const, DMatrix, DVector, DVectorView, Matrix3, Quaternion, SVector, Vector3, U1};
use num_dual::{Derivative, Dual64, DualSVec64};

use crate::derivatives::analytic::{state_residual_jacobian_into, AnalyticScratch};
use crate::derivatives::lifted::{lifted_step, Directions, NominalStep};
use crate::derivatives::parameters::Parameter;
use crate::derivatives::topology::{moved_directions, unmoved};
use crate::derivatives::StepJacobians;
use crate::error::{Error, Result};
use crate::multibody::integrate_positions_into;
use crate::solver::linalg::{Factorization, SpdSolver};
use crate::solver::{ConvexSolution, NewtonFactor, NewtonFactorRef, ProblemEval};
use crate::step::{assign, Simulator, State};

/// Directions per dual-number evaluation (chunked forward mode, as ForwardDiff.jl).
pub const CHUNK: usize = 8;

/// The dual number of one chunk.
pub type Chunk = DualSVec64<CHUNK>;

/// Direction `k` seeded for the chunk starting at `start`: zero real part, unit derivative in
/// slot `k − start` when `k` is in the chunk.
pub fn seed(k: usize, start: usize) -> Chunk {
    if (start..start + CHUNK).contains(&k) {
        Chunk::new(
            0.0,
            Derivative::some(SVector::<f64, CHUNK>::from_fn(|i, _| {
                if i == k - start {
                    1.0
                } else {
                    0.0
                }
            })),
        )
    } else {
        Chunk::from_re(0.0)
    }
}

/// The derivative part of a chunk dual.
pub fn eps(x: &Chunk) -> SVector<f64, CHUNK> {
    x.eps.unwrap_generic(Const::<CHUNK>, U1)
}

/// Solves the f64 step at `(state, u)` in the simulator's Newton workspace
/// ([`Simulator::solve`]), asking the solver to factor `H` at the solution and to skip the
/// condition estimate (no statistics are read here). The factor stays in the workspace
/// ([`workspace_factor`]); the step records its generation.
pub fn nominal_step(sim: &mut Simulator, state: &State, u: &DVector<f64>) -> Result<NominalStep> {
    let mut nominal = NominalStep::default();
    nominal_step_into(sim, state, u, &mut nominal)?;
    Ok(nominal)
}

/// [`nominal_step`] written over `nominal`, its storage reused (the problem's through
/// [`Simulator::assemble_into`]): the same step, without allocating once the contact pattern
/// has been seen.
///
/// # Errors
/// As [`nominal_step`]; `nominal` holds no step then.
pub fn nominal_step_into(
    sim: &mut Simulator,
    state: &State,
    u: &DVector<f64>,
    nominal: &mut NominalStep,
) -> Result<()> {
    nominal.factor_generation = None;
    sim.assemble_into(state, u, &mut nominal.problem)?;
    let mut params = sim.settings.solver;
    params.factor_at_solution = true;
    params.condition_estimate = false;
    sim.solve(&nominal.problem.problem, &state.v, &params)?;
    assign(&mut nominal.v, sim.newton().v());
    nominal.factor_generation = sim.newton().factor().map(|f| f.generation);
    integrate_positions_into(
        &sim.model,
        &state.q,
        &nominal.v,
        sim.settings.dt,
        &mut nominal.q_next,
    );
    nominal.state.t = state.t;
    assign(&mut nominal.state.q, &state.q);
    assign(&mut nominal.state.v, &state.v);
    assign(&mut nominal.u, u);
    Ok(())
}

/// The simulator's factor of `H` when it is the one `nominal` recorded and belongs to
/// `nominal.v`; `None` when the workspace has no factor, one of another factorization (a solve
/// since) or one at other velocities (a forward step since, which leaves the factor of the
/// iterate before its last Newton update): that stale factor is never handed out.
pub fn workspace_factor<'a>(
    sim: &'a Simulator,
    nominal: &NominalStep,
) -> Option<NewtonFactorRef<'a>> {
    sim.newton()
        .factor()
        .filter(|f| check_factor(nominal, f).is_ok())
}

/// Checks that `factor` is the factor of `H` `nominal` expects: of the generation it recorded
/// and at its velocities.
///
/// # Errors
/// [`Error::StaleFactor`] otherwise.
pub fn check_factor(nominal: &NominalStep, factor: &NewtonFactorRef<'_>) -> Result<()> {
    let stale = |reason| Error::StaleFactor {
        expected: nominal.factor_generation,
        found: factor.generation,
        reason,
    };
    if nominal.factor_generation != Some(factor.generation) {
        return Err(stale(
            "the factor is of another factorization than the step's (another solve or step)",
        ));
    }
    if *factor.v != nominal.v {
        return Err(stale(
            "the factor is of H at other velocities than the step's solution",
        ));
    }
    Ok(())
}

/// `H(v)` at the nominal solution, factored once (dense): a factor of a new generation.
fn factor_at_solution(nominal: &NominalStep) -> Result<NewtonFactor> {
    let ProblemEval { hessian, .. } = nominal.problem.problem.evaluate(&nominal.v);
    Ok(NewtonFactor::new(
        Factorization::dense(&hessian)?,
        nominal.v.clone(),
    ))
}

/// `H(v)` at the nominal solution, factored once (dense), recorded in `nominal` as the factor
/// its derivatives expect.
///
/// # Errors
/// [`Error::NotPositiveDefinite`] when `H` cannot be factored.
pub fn refactor(nominal: &mut NominalStep) -> Result<NewtonFactor> {
    let factor = factor_at_solution(nominal)?;
    nominal.factor_generation = Some(factor.generation);
    Ok(factor)
}

/// The factor of `H` at the solution of a [`crate::solver::solve`]: the solver's own when it
/// belongs to the returned `v`, otherwise `H(v)` refactored once at `nominal`, the step of
/// that solve. Returns the factor and whether it was refactored.
///
/// # Errors
/// [`Error::NotPositiveDefinite`] when `H` cannot be factored.
pub fn current_factor(
    nominal: &NominalStep,
    solution: ConvexSolution,
) -> Result<(NewtonFactor, bool)> {
    match solution.factor {
        Some(f) if f.v == solution.v => Ok((f, false)),
        _ => Ok((factor_at_solution(nominal)?, true)),
    }
}

/// `∂r/∂θ` (nv × n) at the converged `v`, one dual evaluation of the residual per chunk: the
/// dual reference for all directions.
pub fn residual_jacobian(
    sim: &Simulator,
    nominal: &NominalStep,
    params: &[Parameter],
    dirs: Directions,
) -> Result<DMatrix<f64>> {
    residual_jacobian_columns(sim, nominal, params, dirs, 0..dirs.len())
}

/// Columns `columns` of `∂r/∂θ` (nv × `columns.len()`) by duals, chunk by chunk, only those
/// directions seeded; a direction along which pressure-field polygons change topology at
/// first order on its own, the mean of its derivatives a little way along it on either side
/// (`crate::derivatives::topology`).
pub fn residual_jacobian_columns(
    sim: &Simulator,
    nominal: &NominalStep,
    params: &[Parameter],
    dirs: Directions,
    columns: Range<usize>,
) -> Result<DMatrix<f64>> {
    let (nv, n) = (dirs.nv, dirs.len());
    let v = nominal.v.map(Chunk::from_re);
    let mut dr = DMatrix::zeros(nv, columns.len());
    let moved = moved_directions(sim, nominal, params, dirs, columns.clone())?;
    for chunk in unmoved(columns.clone(), &moved).chunks(CHUNK) {
        let theta = seeds(n, chunk);
        let lifted = lifted_step(sim, nominal, params, &theta, None)?;
        let r = lifted.problem.problem.residual(&v);
        for i in 0..nv {
            let e = eps(&r[i]);
            for (j, &k) in chunk.iter().enumerate() {
                dr[(i, k - columns.start)] = e[j];
            }
        }
    }
    let v = nominal.v.map(Dual64::from_re);
    for m in &moved {
        for (step, polygons) in &m.sides {
            let theta = moved_seeds(n, m.direction, *step);
            let lifted = lifted_step(sim, nominal, params, &theta, Some(polygons))?;
            let r = lifted.problem.problem.residual(&v);
            for i in 0..nv {
                dr[(i, m.direction - columns.start)] += 0.5 * r[i].eps;
            }
        }
    }
    Ok(dr)
}

/// The directions θ (n) with `chunk[j]` seeded in slot `j`.
pub fn seeds(n: usize, chunk: &[usize]) -> Vec<Chunk> {
    let mut theta = vec![Chunk::from_re(0.0); n];
    for (j, &k) in chunk.iter().enumerate() {
        theta[k] = seed(j, 0);
    }
    theta
}

/// The directions θ (n), one dual number each, moved by `step` along `direction` and seeded
/// there.
pub fn moved_seeds(n: usize, direction: usize, step: f64) -> Vec<Dual64> {
    let mut theta = vec![Dual64::from_re(0.0); n];
    theta[direction] = Dual64::new(step, 1.0);
    theta
}

/// `(∂δθ'/∂δθ0, ∂δθ'/∂ω)` (3 × 3 each) of a joint quaternion's update
/// `q' = (q0 ⊕ δθ) ⊕ δt (ω + ε)`, measured as `δθ' = q' ⊖ q'_nominal`, in closed form; `q0`,
/// `q_next` are `(w, x, y, z)`.
///
/// The rotation is `u = q + (δt/2) (0, ω) ⊗ q`, `q' = u / |u|`
/// ([`crate::math::integrate_quaternion`]), with `q = q0 ⊕ δθ` moving as
/// `δq = ½ (0, δθ) ⊗ q0 / |q0|` (the retraction at unit time; the variation is orthogonal to
/// `q0`). A variation `δu` moves `q'` by `δq' = (δu − q' ⟨q', δu⟩) / |u|`, and the difference
/// `δθ' = 2 vec(d) / w(d)`, `d = q' ⊗ q'_nominal*` ([`crate::multibody::JointKind::difference`]), by
/// `2 (w(d) vec(δd) − vec(d) w(δd)) / w(d)²` with `δd = δq' ⊗ q'_nominal*`.
fn quaternion_position_blocks(
    q0: DVectorView<f64>,
    omega: DVectorView<f64>,
    q_next: DVectorView<f64>,
    dt: f64,
) -> (Matrix3<f64>, Matrix3<f64>) {
    let quaternion = |x: &DVectorView<f64>| Quaternion::new(x[0], x[1], x[2], x[3]);
    let pure = |x: Vector3<f64>| Quaternion::from_parts(0.0, x);
    let start = quaternion(&q0);
    let q = start / start.norm();
    let w = pure(Vector3::new(omega[0], omega[1], omega[2]));
    let u = q + w * q * (0.5 * dt);
    let (norm, q1) = (u.norm(), u / u.norm());
    let nominal = quaternion(&q_next).conjugate();
    let d = q1 * nominal;
    let rotation = |du: Quaternion<f64>| {
        let dq1 = (du - q1 * q1.dot(&du)) / norm;
        let dd = dq1 * nominal;
        (dd.imag() * d.w - d.imag() * dd.w) * (2.0 / (d.w * d.w))
    };
    let (mut Pq, mut Pv) = (Matrix3::zeros(), Matrix3::zeros());
    for k in 0..3 {
        let e = pure(Vector3::ith(k, 1.0));
        let dq = e * start * (0.5 / start.norm());
        Pq.set_column(k, &rotation(dq + w * dq * (0.5 * dt)));
        Pv.set_column(k, &rotation(e * q * (0.5 * dt)));
    }
    (Pq, Pv)
}

/// Position block `∂q'/∂θ` (nv × n, tangent) of `q' = q0 ⊕ δt N(q0) v` given `∂v/∂θ`. The
/// update is joint by joint, so `∂δq'_j/∂θ = P_v,j ∂v_j/∂θ`, plus `P_q,j` on joint j's own
/// `δq0` columns: `P_q = 1`, `P_v = δt 1` for flat coordinates (revolute, prismatic, planar
/// and a free joint's position), `quaternion_position_blocks` for the rotation of free and
/// ball joints.
pub fn position_jacobian(
    sim: &Simulator,
    nominal: &NominalStep,
    dv: &DMatrix<f64>,
    dirs: Directions,
) -> DMatrix<f64> {
    let mut dq = DMatrix::zeros(0, 0);
    position_jacobian_into(sim, nominal, dv, dirs, &mut dq);
    dq
}

/// [`position_jacobian`] into `dq` (written over, its storage reused when it has the shape of
/// `dv`).
pub fn position_jacobian_into(
    sim: &Simulator,
    nominal: &NominalStep,
    dv: &DMatrix<f64>,
    dirs: Directions,
    dq: &mut DMatrix<f64>,
) {
    let (n, dt) = (dirs.len(), sim.settings.dt);
    if dq.shape() != dv.shape() {
        *dq = DMatrix::zeros(dv.nrows(), dv.ncols());
    }
    for (x, y) in dq.as_mut_slice().iter_mut().zip(dv.as_slice()) {
        *x = y * dt;
    }
    for joint in &sim.model.joints {
        let (start, nvj) = (joint.v_start, joint.kind.nv());
        let mut flat = start..start + nvj;
        if let Some(k) = joint.kind.quaternion_start() {
            flat.start += 3;
            let (Pq, Pv) = quaternion_position_blocks(
                nominal.state.q.rows(joint.q_start + k, 4),
                nominal.v.rows(start, 3),
                nominal.q_next.rows(joint.q_start + k, 4),
                dt,
            );
            for col in 0..n {
                let x = Pv * dv.fixed_view::<3, 1>(start, col);
                dq.fixed_view_mut::<3, 1>(start, col).copy_from(&x);
            }
            let mut own = dq.fixed_view_mut::<3, 3>(start, start);
            own += Pq;
        }
        for i in flat {
            dq[(i, i)] += 1.0;
        }
    }
}

/// Buffers of the step Jacobians kept from one call to the next: the simulator owns one for
/// [`step_jacobians`], which then allocates only what it returns once the contact pattern has
/// been seen (`docs/benchmarks.md`, "Step Jacobians with controls").
#[derive(Default)]
pub struct IftWorkspace {
    /// The last nominal step, written over by the next ([`nominal_step_into`]).
    nominal: NominalStep,
    /// `∂r/∂θ`, then `∂v/∂θ` in place (nv × n).
    dv: DMatrix<f64>,
    /// `∂q'/∂θ` (nv × n, tangent).
    dq: DMatrix<f64>,
    analytic: AnalyticScratch,
}

/// Names the workspace only: its buffers hold the last call's intermediate values.
impl std::fmt::Debug for IftWorkspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IftWorkspace").finish_non_exhaustive()
    }
}

/// The step Jacobians given the nominal step and the factor of `H` at its solution:
/// `∂r/∂θ` analytically for the state and controls ([`state_residual_jacobian`]; by duals
/// when the step has pressure-field polygons) and by duals for the named `params`,
/// `∂v/∂θ = −H⁻¹ ∂r/∂θ`, then the positions.
///
/// [`state_residual_jacobian`]: crate::derivatives::analytic::state_residual_jacobian
///
/// # Errors
/// [`Error::StaleFactor`] for a factor that is not the one `nominal` recorded
/// ([`check_factor`]); geometry pairs whose features cannot be re-evaluated, a singular `A`.
pub fn jacobians_given_factor(
    sim: &Simulator,
    nominal: &NominalStep,
    factor: NewtonFactorRef<'_>,
    params: &[Parameter],
) -> Result<StepJacobians> {
    let (mut dv, mut dq) = (DMatrix::zeros(0, 0), DMatrix::zeros(0, 0));
    let mut scratch = AnalyticScratch::default();
    jacobians_in(
        sim,
        nominal,
        factor,
        params,
        (&mut dv, &mut dq),
        &mut scratch,
    )
}

/// [`jacobians_given_factor`] computed in `dv` and `dq` (`∂v/∂θ` and `∂q'/∂θ`, written over)
/// and the buffers of `scratch`.
fn jacobians_in(
    sim: &Simulator,
    nominal: &NominalStep,
    factor: NewtonFactorRef<'_>,
    params: &[Parameter],
    (dv, dq): (&mut DMatrix<f64>, &mut DMatrix<f64>),
    scratch: &mut AnalyticScratch,
) -> Result<StepJacobians> {
    check_factor(nominal, &factor)?;
    let dirs = Directions {
        nv: sim.model.nv(),
        nu: sim.model.nu(),
        np: params.len(),
    };
    let (nv, n_state) = (dirs.nv, 2 * dirs.nv + dirs.nu);
    // Pressure-field polygons change their stiffness `A·g` with the state: their columns come
    // from the dual evaluation, which clips the polygons again in duals.
    let has_polygons = nominal
        .problem
        .contacts
        .iter()
        .any(|c| c.feature.polygon().is_some());
    if has_polygons {
        *dv = residual_jacobian_columns(sim, nominal, params, dirs, 0..n_state)?;
    } else {
        state_residual_jacobian_into(sim, nominal, scratch, dv)?;
    }
    if dirs.np > 0 {
        dv.resize_horizontally_mut(dirs.len(), 0.0);
        dv.columns_mut(n_state, dirs.np)
            .copy_from(&residual_jacobian_columns(
                sim,
                nominal,
                params,
                dirs,
                n_state..dirs.len(),
            )?);
    }
    // Over the storage: nalgebra's element iterator costs a dozen instructions an entry.
    for x in dv.as_mut_slice() {
        *x = -*x;
    }
    factor.cholesky.solve_many_in_place(dv);
    position_jacobian_into(sim, nominal, dv, dirs, dq);
    // Columns `start..start + columns` of `[dq; dv]`, gathered column by column as slices.
    let block = |start: usize, columns: usize| {
        let (dq, dv) = (dq.as_slice(), dv.as_slice());
        let mut data = Vec::with_capacity(2 * nv * columns);
        for j in start..start + columns {
            data.extend_from_slice(&dq[j * nv..(j + 1) * nv]);
            data.extend_from_slice(&dv[j * nv..(j + 1) * nv]);
        }
        DMatrix::from_vec(2 * nv, columns, data)
    };
    Ok(StepJacobians {
        state: block(0, 2 * nv),
        control: block(2 * nv, dirs.nu),
        parameters: block(n_state, dirs.np),
        parameter_names: params.iter().map(|p| p.name(sim)).collect(),
        next: State {
            t: nominal.state.t + sim.settings.dt,
            q: nominal.q_next.clone(),
            v: nominal.v.clone(),
        },
    })
}

/// Jacobians of the step from `state` with actuation `u` (nu) with respect to the state (in
/// the tangent space), the actuation and the named `params`, by the implicit function
/// theorem on the factored Newton Hessian.
///
/// # Errors
/// Solver failures, and geometry pairs whose features cannot be re-evaluated.
pub fn step_jacobians(
    sim: &mut Simulator,
    state: &State,
    u: &DVector<f64>,
    params: &[Parameter],
) -> Result<StepJacobians> {
    // The simulator's buffers, out of it while the step borrows it; back before returning.
    let mut workspace: Box<IftWorkspace> = sim
        .kept_buffers
        .take()
        .and_then(|kept| kept.downcast().ok())
        .unwrap_or_default();
    let jacobians = step_jacobians_in(sim, &mut workspace, state, u, params);
    sim.kept_buffers = Some(workspace);
    jacobians
}

/// [`step_jacobians`] in the buffers of `workspace`.
fn step_jacobians_in(
    sim: &mut Simulator,
    workspace: &mut IftWorkspace,
    state: &State,
    u: &DVector<f64>,
    params: &[Parameter],
) -> Result<StepJacobians> {
    let IftWorkspace {
        nominal,
        dv,
        dq,
        analytic,
    } = workspace;
    nominal_step_into(sim, state, u, nominal)?;
    let refactored;
    let factor = match workspace_factor(sim, nominal) {
        Some(f) => f,
        None => {
            refactored = refactor(nominal)?;
            refactored.view()
        }
    };
    jacobians_in(sim, nominal, factor, params, (dv, dq), analytic)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::shipped;

    /// The Jacobians computed in the simulator's buffers ([`step_jacobians`], each call
    /// writing over the last one's) are those of fresh buffers ([`nominal_step`] and
    /// [`jacobians_given_factor`]) bit for bit, along the arm's push of the sphere, contacts
    /// coming and going: nothing of one call leaks into the next.
    #[test]
    fn reused_buffers_give_the_fresh_jacobians() {
        let mut p = shipped("arm-push-sphere");
        let sim = &mut p.simulator;
        let u = DVector::zeros(sim.model.nu());
        let mut state = p.initial_state.clone();
        let bits = |m: &DMatrix<f64>| m.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let mut contacts = 0;
        while state.t < 0.3 {
            let reused = step_jacobians(sim, &state, &u, &[]).expect("step Jacobians");
            let mut nominal = nominal_step(sim, &state, &u).expect("nominal step");
            let refactored;
            let factor = match workspace_factor(sim, &nominal) {
                Some(f) => f,
                None => {
                    refactored = refactor(&mut nominal).expect("H factors");
                    refactored.view()
                }
            };
            let fresh = jacobians_given_factor(sim, &nominal, factor, &[]).expect("Jacobians");
            assert_eq!(bits(&reused.state), bits(&fresh.state), "t = {}", state.t);
            assert_eq!(
                bits(&reused.control),
                bits(&fresh.control),
                "t = {}",
                state.t
            );
            contacts += nominal.problem.contacts.len();
            state = reused.next;
        }
        assert!(contacts > 0, "the arm never touched the sphere");
    }
}
