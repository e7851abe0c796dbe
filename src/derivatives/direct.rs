//! The direct reference path: the step's Newton iterations run in dual numbers (one chunk of
//! directions at a time), independent of the implicit function theorem. The dual Newton starts
//! from the converged f64 velocities with zero derivative parts, so it needs no globalization
//! through the non-smooth regions that the f64 solver's exact line search handles; the
//! derivative parts then converge through the dual iterations themselves.
#![allow(non_snake_case)]

use nalgebra::{DMatrix, DVector};
use num_dual::Dual64;

use crate::collision::FoundPolygon;
use crate::derivatives::ift::{eps, moved_seeds, nominal_step, seeds, Chunk, CHUNK};
use crate::derivatives::lifted::{lifted_step, Directions, NominalStep};
use crate::derivatives::parameters::Parameter;
use crate::derivatives::topology::{moved_directions, unmoved};
use crate::derivatives::StepJacobians;
use crate::error::{Error, Result};
use crate::multibody::{integrate_positions, MultibodyModel};
use crate::scalar::{lit, Scalar};
use crate::solver::{ConvexProblem, SolverStats};
use crate::step::{Simulator, State};

/// Newton iterations before the dual solve gives up.
const MAX_ITERATIONS: usize = 50;
/// Relative size of the real part of a Newton step below which it has converged.
const STEP_TOLERANCE: f64 = 1e-12;

/// Full Newton steps in dual numbers from `v_guess` (the converged f64 velocities): the real
/// parts stay put to round-off, and the derivative parts converge through the iterations; two
/// more steps after the real step is negligible settle them.
fn newton_dual<T: Scalar>(problem: &ConvexProblem<T>, v_guess: &DVector<T>) -> Result<DVector<T>> {
    let mut v = v_guess.clone();
    let mut settled = 0;
    for _ in 0..MAX_ITERATIONS {
        let eval = problem.evaluate(&v);
        let chol = eval
            .hessian
            .clone()
            .cholesky()
            .ok_or(Error::NotPositiveDefinite { index: 0 })?;
        let dv = chol.solve(&(-&eval.gradient));
        let dv_norm = dv.iter().map(|x| x.re() * x.re()).sum::<f64>().sqrt();
        let v_norm = v.iter().map(|x| x.re() * x.re()).sum::<f64>().sqrt();
        v += dv;
        if dv_norm <= STEP_TOLERANCE * (1.0 + v_norm) {
            settled += 1;
            if settled == 2 {
                return Ok(v);
            }
        }
    }
    Err(Error::NotConverged {
        stats: Box::new(SolverStats {
            iterations: MAX_ITERATIONS,
            contacts: problem.nc(),
            ..Default::default()
        }),
    })
}

/// The step of `nominal` assembled in `T` with `theta` seeded (its polygons replaced by
/// `polygons` when given) and solved by [`newton_dual`]: the positions after the step as
/// `q' ⊖ q'_nominal` and the velocities `v'` (`model` is the simulator's, in `T`).
fn dual_step<T: Scalar>(
    sim: &Simulator,
    nominal: &NominalStep,
    params: &[Parameter],
    model: &MultibodyModel<T>,
    theta: &[T],
    polygons: Option<&[FoundPolygon]>,
) -> Result<(DVector<T>, DVector<T>)> {
    let lifted = lifted_step(sim, nominal, params, theta, polygons)?;
    let v = newton_dual(&lifted.problem.problem, &nominal.v.map(lit::<T>))?;
    let q = integrate_positions(model, &lifted.q0, &v, lit::<T>(sim.settings.dt));
    Ok((model.difference(&q, &nominal.q_next.map(lit::<T>)), v))
}

/// Step Jacobians by Newton iterations in dual numbers (the second reference path).
///
/// # Errors
/// Solver failures of the f64 or the dual solve.
pub fn step_jacobians_direct(
    sim: &mut Simulator,
    state: &State,
    u: &DVector<f64>,
    params: &[Parameter],
) -> Result<StepJacobians> {
    let nominal = nominal_step(sim, state, u)?;
    let dirs = Directions {
        nv: sim.model.nv(),
        nu: sim.model.nu(),
        np: params.len(),
    };
    let (nv, n) = (dirs.nv, dirs.len());
    let mut full = DMatrix::zeros(2 * nv, n);
    let moved = moved_directions(sim, &nominal, params, dirs, 0..n)?;
    let model = sim.model.cast::<Chunk>();
    for chunk in unmoved(0..n, &moved).chunks(CHUNK) {
        let (dq, v) = dual_step(sim, &nominal, params, &model, &seeds(n, chunk), None)?;
        for i in 0..nv {
            let (eq, ev) = (eps(&dq[i]), eps(&v[i]));
            for (j, &k) in chunk.iter().enumerate() {
                full[(i, k)] = eq[j];
                full[(nv + i, k)] = ev[j];
            }
        }
    }
    // The mean of the two one-sided derivatives ([`crate::derivatives::topology`]).
    let model = sim.model.cast::<Dual64>();
    for m in &moved {
        for (step, polygons) in &m.sides {
            let theta = moved_seeds(n, m.direction, *step);
            let (dq, v) = dual_step(sim, &nominal, params, &model, &theta, Some(polygons))?;
            for i in 0..nv {
                full[(i, m.direction)] += 0.5 * dq[i].eps;
                full[(nv + i, m.direction)] += 0.5 * v[i].eps;
            }
        }
    }
    let next = State {
        t: state.t + sim.settings.dt,
        q: nominal.q_next,
        v: nominal.v,
    };
    let names = params.iter().map(|p| p.name(sim)).collect();
    Ok(StepJacobians::from_full(full, nv, dirs.nu, names, next))
}
