//! Newton's method on the convex step problem, in f64 (ICF ext. Sec. X).
#![allow(non_snake_case)]

use nalgebra::{DVector, Vector3};

use crate::error::{Error, Result};
use crate::solver::linalg::{DenseCholesky, SpdSolver};
use crate::solver::line_search::{exact_line_search, LineSearchProblem};
use crate::solver::{ConvergenceCriterion, ConvexProblem, SolverParams, SolverStats};

/// The solution of one convex problem.
#[derive(Debug)]
pub struct ConvexSolution {
    /// Next-step velocities v (nv).
    pub v: DVector<f64>,
    /// Contact velocities `v_c,i = J_i v + b_i` (m/s, contact frame).
    pub v_c: Vec<Vector3<f64>>,
    /// Impulses γ_i (N·s, contact frame, on body B).
    pub gamma: Vec<Vector3<f64>>,
    /// Statistics.
    pub stats: SolverStats,
    /// The last Cholesky factor of `H` and the velocities it was computed at; `None` when no
    /// Newton step was taken. Stale when `factor.v ≠ v` (the last step moved `v`): the
    /// derivative path must then refactor at `v` ([`crate::derivatives`]).
    pub factor: Option<NewtonFactor>,
}

/// A Cholesky factor of the Newton Hessian `H(v)` with the `v` it belongs to.
#[derive(Debug)]
pub struct NewtonFactor {
    /// The factorization of `H(v)`.
    pub cholesky: DenseCholesky,
    /// The velocities `H` was evaluated at (nv).
    pub v: DVector<f64>,
}

/// Solves `min ℓ(v)` from the initial guess `v_guess` (nv).
///
/// # Errors
/// [`Error::NotConverged`] after `max_iterations`, [`Error::NonFinite`] on a non-finite
/// cost or gradient, [`Error::NotPositiveDefinite`] if `H` cannot be factored; the first
/// two carry the statistics.
pub fn solve(
    problem: &ConvexProblem<f64>,
    v_guess: &DVector<f64>,
    params: &SolverParams,
) -> Result<ConvexSolution> {
    let nc = problem.nc();
    let D = problem.A.diagonal().map(|a| 1.0 / a.sqrt());
    let mut stats = SolverStats {
        contacts: nc,
        ..Default::default()
    };
    let mut v = v_guess.clone();
    let mut factor: Option<NewtonFactor> = None;
    let mut dv_c = vec![Vector3::zeros(); nc];
    let mut previous_cost = f64::INFINITY;
    let eval = loop {
        let eval = problem.evaluate(&v);
        let p = &problem.A * (&v - &problem.v0);
        stats.cost = eval.cost;
        stats.residual = eval.gradient.component_mul(&D).norm();
        stats.tolerance = params.absolute_tolerance
            + params.relative_tolerance
                * p.component_mul(&D)
                    .norm()
                    .max(eval.generalized_impulse.component_mul(&D).norm());
        if !(stats.residual.is_finite() && eval.cost.is_finite()) {
            return Err(Error::NonFinite {
                stage: "Newton iteration (cost or gradient)".into(),
                stats,
            });
        }
        let converged = if stats.residual <= stats.tolerance {
            Some(ConvergenceCriterion::Optimality)
        } else if previous_cost - eval.cost
            <= params.cost_tolerance * eval.cost.abs().max(previous_cost.abs())
            && stats.iterations > 0
        {
            Some(ConvergenceCriterion::CostStagnation)
        } else {
            None
        };
        if let Some(criterion) = converged {
            stats.criterion = criterion;
            if params.factor_at_solution {
                let mut cholesky = DenseCholesky::default();
                cholesky.factor(&eval.hessian)?;
                factor = Some(NewtonFactor {
                    cholesky,
                    v: v.clone(),
                });
            }
            break eval;
        }
        if stats.iterations >= params.max_iterations {
            return Err(Error::NotConverged { stats });
        }
        previous_cost = eval.cost;
        let mut cholesky = DenseCholesky::default();
        cholesky.factor(&eval.hessian)?;
        let mut dv = -&eval.gradient;
        cholesky.solve_in_place(&mut dv);
        factor = Some(NewtonFactor {
            cholesky,
            v: v.clone(),
        });
        let Adv = &problem.A * &dv;
        for (dv_ci, J_i) in dv_c.iter_mut().zip(&problem.J) {
            *dv_ci = J_i * &dv;
        }
        let ls = LineSearchProblem {
            a2: dv.dot(&Adv),
            a1: Adv.dot(&(&v - &problem.v_star)),
            v_c: &eval.v_c,
            dv_c: &dv_c,
            contacts: &problem.contacts,
        };
        let Some((alpha, ls_iterations)) =
            exact_line_search(&ls, params.alpha_max, params.max_line_search_iterations)
        else {
            return Err(Error::NotConverged { stats });
        };
        stats.line_search_iterations += ls_iterations;
        stats.iterations += 1;
        v += dv * alpha;
    };
    Ok(ConvexSolution {
        v,
        v_c: eval.v_c,
        gamma: eval.gamma,
        stats,
        factor,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::{ContactParams, ContactPool, Lagged};
    use nalgebra::{DMatrix, Matrix3xX};

    /// A point mass resting on a Lagged contact: the normal impulse balances gravity.
    #[test]
    fn point_mass_weight_is_balanced() {
        let (m, g, dt, k) = (2.0, 9.81, 1e-2, 1e6);
        let x0 = m * g / k;
        let p = ContactParams {
            stiffness: k,
            dissipation: 0.0,
            ..Default::default()
        };
        let problem = ConvexProblem {
            A: DMatrix::identity(3, 3) * m,
            v_star: DVector::from_vec(vec![0.0, 0.0, -g * dt]),
            v0: DVector::zeros(3),
            J: vec![Matrix3xX::identity(3)],
            b: vec![Vector3::zeros()],
            contacts: ContactPool::Lagged(vec![Lagged::new(&p, x0, 0.0, dt)]),
        };
        let sol = solve(&problem, &DVector::zeros(3), &SolverParams::default()).unwrap();
        assert!(sol.v.norm() < 1e-9, "{:?}", sol.v);
        assert!((sol.gamma[0].z / dt - m * g).abs() < 1e-6 * m * g);
        assert!(problem.residual(&sol.v).norm() <= 1e-6 * m * g * dt);
    }

    /// The iteration limit produces an error that carries the statistics.
    #[test]
    fn non_convergence_is_an_error_with_stats() {
        let p = ContactParams {
            stiffness: 1e9,
            mu: 1.0,
            ..Default::default()
        };
        let problem = ConvexProblem {
            A: DMatrix::identity(3, 3),
            v_star: DVector::from_vec(vec![1.0, 0.0, -3.0]),
            v0: DVector::zeros(3),
            J: vec![Matrix3xX::identity(3)],
            b: vec![Vector3::zeros()],
            contacts: ContactPool::Lagged(vec![Lagged::new(&p, 1e-3, -1.0, 1e-3)]),
        };
        let params = SolverParams::default().with_max_iterations(1).unwrap();
        match solve(&problem, &DVector::zeros(3), &params) {
            Err(Error::NotConverged { stats }) => {
                assert_eq!((stats.iterations, stats.contacts), (1, 1))
            }
            other => panic!("expected NotConverged, got {other:?}"),
        }
    }
}
