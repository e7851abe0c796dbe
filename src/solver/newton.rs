//! Newton's method on the convex step problem, in f64 (ICF ext. Sec. X).
//!
//! Each iteration: `H Δv = −∇ℓ` with `H = A + Σ J_iᵀ G_i J_i` factored behind the
//! [`linalg`](crate::solver::linalg) seam (dense, or sparse on the clique blocks),
//! then the exact line search on `α ↦ ℓ(v + αΔv)`, until SAP's optimality criterion or cost
//! stagnation. The loop itself lives in [`NewtonWorkspace::iterate`], on reusable data.
#![allow(non_snake_case)]

use nalgebra::{DVector, Vector3};

use crate::error::Result;
use crate::solver::{ConvexProblem, NewtonFactor, NewtonWorkspace, SolverParams, SolverStats};

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
    /// The last Cholesky factor of `H`, the velocities it was computed at and its generation;
    /// `None` when no Newton step was taken. Stale when `factor.v ≠ v` (the last step moved
    /// `v`): the derivative path must then refactor at `v` ([`crate::derivatives`]).
    pub factor: Option<NewtonFactor>,
}

/// Solves `min ℓ(v)` from the initial guess `v_guess` (nv), with a fresh
/// [`NewtonWorkspace`]; a simulator keeps its own workspace across steps instead.
///
/// # Errors
/// [`crate::error::Error::NotConverged`] after `max_iterations`,
/// [`crate::error::Error::NonFinite`] on a non-finite cost or gradient,
/// [`crate::error::Error::NotPositiveDefinite`] if `H` cannot be factored; the first two
/// carry the statistics.
pub fn solve(
    problem: &ConvexProblem<f64>,
    v_guess: &DVector<f64>,
    params: &SolverParams,
) -> Result<ConvexSolution> {
    let mut workspace = NewtonWorkspace::default();
    workspace.prepare(problem);
    let stats = workspace.iterate(problem, v_guess, params)?;
    Ok(ConvexSolution {
        v: workspace.v().clone(),
        v_c: workspace.v_c().to_vec(),
        gamma: workspace.gamma().to_vec(),
        stats,
        factor: workspace.take_factor(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::{ContactParams, ContactPool, HuntCrossley, Lagged};
    use crate::error::Error;
    use crate::solver::{ContactJacobians, ConvergenceCriterion};
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
            cliques: vec![vec![0, 1, 2]],
            v_star: DVector::from_vec(vec![0.0, 0.0, -g * dt]),
            v0: DVector::zeros(3),
            J: ContactJacobians::from_dense(&Matrix3xX::identity(3), 3),
            b: vec![Vector3::zeros()],
            constraints: Vec::new(),
            contacts: ContactPool::Lagged(vec![Lagged::new(
                HuntCrossley::from_params(&p, x0, dt),
                &p,
                0.0,
                dt,
            )]),
        };
        let sol = solve(&problem, &DVector::zeros(3), &SolverParams::default()).unwrap();
        assert!(sol.v.norm() < 1e-9, "{:?}", sol.v);
        assert!((sol.gamma[0].z / dt - m * g).abs() < 1e-6 * m * g);
        assert!(problem.residual(&sol.v).norm() <= 1e-6 * m * g * dt);
    }

    /// A Hessian that cannot be factored (here an indefinite "mass matrix" with a positive
    /// diagonal, eigenvalues −1, 1, 3: the second pivot is 1 − 2² < 0, and a contact 1 m
    /// apart that adds nothing to it) is an error with the
    /// pivot and the statistics of the solve up to then, not a bare pivot.
    #[test]
    fn failed_factorization_carries_the_statistics() {
        let p = ContactParams::default();
        let problem = ConvexProblem {
            A: DMatrix::from_row_slice(3, 3, &[1.0, 2.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0, 1.0]),
            cliques: vec![vec![0, 1, 2]],
            v_star: DVector::from_vec(vec![0.0, 0.0, -0.1]),
            v0: DVector::zeros(3),
            J: ContactJacobians::from_dense(&Matrix3xX::identity(3), 3),
            b: vec![Vector3::zeros()],
            constraints: Vec::new(),
            contacts: ContactPool::Lagged(vec![Lagged::new(
                HuntCrossley::from_params(&p, -1.0, 1e-3),
                &p,
                0.0,
                1e-3,
            )]),
        };
        let e = solve(&problem, &DVector::zeros(3), &SolverParams::default()).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "matrix is not positive definite (pivot 1) in the Newton Hessian: 0 iterations"
            ),
            "{e}"
        );
        match e {
            Error::HessianNotPositiveDefinite { pivot, stats } => {
                assert_eq!((pivot, stats.iterations, stats.contacts), (1, 0, 1))
            }
            other => panic!("expected HessianNotPositiveDefinite, got {other:?}"),
        }
    }

    /// A Hessian that round-off left indefinite (`A = [[1, 1], [1, 1 − 2⁻⁵³]]`, eigenvalue
    /// −5.6e-17: the stored form of a matrix positive definite only in exact arithmetic) fails
    /// Cholesky; the solver factors `H + δ diag(H)` with the smallest shift that works
    /// (δ = 1e-14), says so in the statistics, and still reaches the optimality criterion.
    #[test]
    fn a_hessian_indefinite_by_round_off_is_factored_shifted() {
        let p = ContactParams::default();
        let a = DMatrix::from_row_slice(2, 2, &[1.0, 1.0, 1.0, 1.0 - f64::EPSILON / 2.0]);
        assert!(a.clone().cholesky().is_none());
        let problem = ConvexProblem {
            A: a,
            cliques: vec![vec![0, 1]],
            v_star: DVector::from_vec(vec![0.5, 0.5]),
            v0: DVector::zeros(2),
            J: ContactJacobians::from_dense(
                &Matrix3xX::from_row_slice(&[1.0, 0.0, 0.0, 1.0, 0.0, 0.0]),
                2,
            ),
            b: vec![Vector3::zeros()],
            constraints: Vec::new(),
            contacts: ContactPool::Lagged(vec![Lagged::new(
                HuntCrossley::from_params(&p, -1.0, 1e-3),
                &p,
                0.0,
                1e-3,
            )]),
        };
        let sol = solve(&problem, &DVector::zeros(2), &SolverParams::default()).unwrap();
        assert_eq!(sol.stats.hessian_shift, crate::solver::HESSIAN_SHIFTS[0]);
        assert_eq!(sol.stats.criterion, ConvergenceCriterion::Optimality);
        assert!(sol
            .stats
            .to_string()
            .contains("Hessian shifted by 1e-14 diag(H)"));
        assert!((sol.v[0] + sol.v[1] - 1.0).abs() < 1e-12, "{:?}", sol.v);
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
            cliques: vec![vec![0, 1, 2]],
            v_star: DVector::from_vec(vec![1.0, 0.0, -3.0]),
            v0: DVector::zeros(3),
            J: ContactJacobians::from_dense(&Matrix3xX::identity(3), 3),
            b: vec![Vector3::zeros()],
            constraints: Vec::new(),
            contacts: ContactPool::Lagged(vec![Lagged::new(
                HuntCrossley::from_params(&p, 1e-3, 1e-3),
                &p,
                -1.0,
                1e-3,
            )]),
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
