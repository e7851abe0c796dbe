//! Step Jacobians by the implicit function theorem, reusing the Newton factor
//! (ICF ext. Sec. X-B): `∂v/∂θ = −H⁻¹ ∂r/∂θ`.
#![allow(non_snake_case)]

use nalgebra::{Const, DMatrix, DVector, SVector, U1};
use num_dual::{Derivative, DualSVec64};

use crate::derivatives::lifted::{lifted_step, Directions, NominalStep};
use crate::derivatives::parameters::Parameter;
use crate::derivatives::StepJacobians;
use crate::error::Result;
use crate::multibody::integrate_positions;
use crate::solver::linalg::{DenseCholesky, SpdSolver};
use crate::solver::{solve, ConvexSolution, ProblemEval};
use crate::step::{Simulator, State};

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

/// Solves the f64 step at `(state, u)`, asking the solver to factor `H` at the solution.
pub fn nominal_step(
    sim: &mut Simulator,
    state: &State,
    u: &DVector<f64>,
) -> Result<(NominalStep, ConvexSolution)> {
    let problem = sim.assemble(state, u)?;
    let mut params = sim.settings.solver;
    params.factor_at_solution = true;
    let solution = solve(&problem.problem, &state.v, &params)?;
    let q_next = integrate_positions(&sim.model, &state.q, &solution.v, sim.settings.dt);
    let nominal = NominalStep {
        state: state.clone(),
        u: u.clone(),
        problem,
        v: solution.v.clone(),
        q_next,
    };
    Ok((nominal, solution))
}

/// The factor of `H` at the solution: the solver's own when it belongs to the returned `v`,
/// otherwise `H(v)` refactored once. Returns the factor and whether it was refactored.
pub fn current_factor(
    nominal: &NominalStep,
    solution: ConvexSolution,
) -> Result<(DenseCholesky, bool)> {
    match solution.factor {
        Some(f) if f.v == solution.v => Ok((f.cholesky, false)),
        _ => {
            let ProblemEval { hessian, .. } = nominal.problem.problem.evaluate(&solution.v);
            let mut cholesky = DenseCholesky::default();
            cholesky.factor(&hessian)?;
            Ok((cholesky, true))
        }
    }
}

/// `∂r/∂θ` (nv × n) at the converged `v`, one dual evaluation of the residual per chunk.
pub fn residual_jacobian(
    sim: &Simulator,
    nominal: &NominalStep,
    params: &[Parameter],
    dirs: Directions,
) -> Result<DMatrix<f64>> {
    let (nv, n) = (dirs.nv, dirs.len());
    let v = nominal.v.map(Chunk::from_re);
    let mut dr = DMatrix::zeros(nv, n);
    for start in (0..n).step_by(CHUNK) {
        let theta: Vec<Chunk> = (0..n).map(|k| seed(k, start)).collect();
        let lifted = lifted_step(sim, nominal, params, &theta)?;
        let r = lifted.problem.problem.residual(&v);
        for i in 0..nv {
            let e = eps(&r[i]);
            for j in 0..CHUNK.min(n - start) {
                dr[(i, start + j)] = e[j];
            }
        }
    }
    Ok(dr)
}

/// Position block `∂q'/∂θ` (nv × n, tangent) of `q' = q0 ⊕ δt N(q0) v` given `∂v/∂θ`.
pub fn position_jacobian(
    sim: &Simulator,
    nominal: &NominalStep,
    dv: &DMatrix<f64>,
    dirs: Directions,
) -> DMatrix<f64> {
    let (nv, n) = (dirs.nv, dirs.len());
    let model = sim.model.cast::<Chunk>();
    let q0 = nominal.state.q.map(Chunk::from_re);
    let q_next = nominal.q_next.map(Chunk::from_re);
    let dt = Chunk::from_re(sim.settings.dt);
    let mut dq = DMatrix::zeros(nv, n);
    for start in (0..n).step_by(CHUNK) {
        let width = CHUNK.min(n - start);
        let delta = DVector::from_fn(nv, |i, _| seed(i, start));
        let v = DVector::from_fn(nv, |i, _| {
            Chunk::new(
                nominal.v[i],
                Derivative::some(SVector::<f64, CHUNK>::from_fn(|j, _| {
                    if j < width {
                        dv[(i, start + j)]
                    } else {
                        0.0
                    }
                })),
            )
        });
        let q = integrate_positions(&model, &model.retract(&q0, &delta), &v, dt);
        let d = model.difference(&q, &q_next);
        for i in 0..nv {
            let e = eps(&d[i]);
            for j in 0..width {
                dq[(i, start + j)] = e[j];
            }
        }
    }
    dq
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
    let (nominal, solution) = nominal_step(sim, state, u)?;
    let (factor, _) = current_factor(&nominal, solution)?;
    let dirs = Directions {
        nv: sim.model.nv(),
        nu: sim.model.nu(),
        np: params.len(),
    };
    let mut dv = -residual_jacobian(sim, &nominal, params, dirs)?;
    factor.solve_many_in_place(&mut dv);
    let dq = position_jacobian(sim, &nominal, &dv, dirs);
    let mut full = DMatrix::zeros(2 * dirs.nv, dirs.len());
    full.rows_mut(0, dirs.nv).copy_from(&dq);
    full.rows_mut(dirs.nv, dirs.nv).copy_from(&dv);
    let next = State {
        t: state.t + sim.settings.dt,
        q: nominal.q_next.clone(),
        v: nominal.v.clone(),
    };
    let names = params.iter().map(|p| p.name(sim)).collect();
    Ok(StepJacobians::from_full(
        full, dirs.nv, dirs.nu, names, next,
    ))
}
