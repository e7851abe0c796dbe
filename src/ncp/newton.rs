//! Semismooth Newton with a line search on the Fischer–Burmeister system `Φ(z) = 0` of the
//! MNCP (in place of PATH, Xie & Chakraborty Sec. VI; De Luca, Facchinei & Kanzow 1996).
//!
//! Each iteration takes an element `J` of the generalized Jacobian of Φ and solves the
//! Levenberg–Marquardt-regularized Newton system
//!
//! `(JᵀJ + λ I) d = −JᵀΦ`,  `λ = min(‖Φ‖², λ_max)`,
//!
//! which is the Newton step `J d = −Φ` when `J` is non-singular and Φ small, and stays defined
//! where the MNCP has non-isolated solutions (a separated pair's friction multiplier σ, the
//! point of a flat face with no load). The merit `ψ = ½‖Φ‖²` then decreases along `d`
//! (`∇ψ = JᵀΦ`), and a backtracking Armijo search `ψ(z + αd) ≤ ψ(z) + c α ∇ψᵀd` picks the
//! step. The iteration stops when `‖Φ‖_∞ ≤ tolerance`; it is warm-started by the caller.

#![allow(non_snake_case)]

use std::fmt;

use nalgebra::{DMatrix, DVector};

use crate::error::{Error, Result};

/// Parameters of the semismooth Newton solver.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NcpSolverParams {
    /// Stop when `‖Φ‖_∞` is at most this (mixed units: N·s, m, and their products); nominal
    /// 1e-10, so that every complementarity pair holds to far better than 1e-8.
    pub tolerance: f64,
    /// Newton iterations before the step fails, nominal 100.
    pub max_iterations: usize,
    /// Largest Levenberg–Marquardt weight λ_max, nominal 1e-6.
    pub max_regularization: f64,
    /// Armijo constant c, nominal 1e-4.
    pub armijo: f64,
    /// Backtracking halvings per line search before giving up on the iteration, nominal 40.
    pub max_line_search_iterations: usize,
}

impl Default for NcpSolverParams {
    fn default() -> Self {
        NcpSolverParams {
            tolerance: 1e-10,
            max_iterations: 100,
            max_regularization: 1e-6,
            armijo: 1e-4,
            max_line_search_iterations: 40,
        }
    }
}

impl NcpSolverParams {
    /// Sets the tolerance on `‖Φ‖_∞`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] unless `0 < tolerance < 1`.
    pub fn with_tolerance(mut self, tolerance: f64) -> Result<Self> {
        if !(tolerance > 0.0 && tolerance < 1.0) {
            return Err(Error::invalid("tolerance", tolerance, "must be in (0, 1)"));
        }
        self.tolerance = tolerance;
        Ok(self)
    }

    /// Sets the Newton iteration limit.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for 0.
    pub fn with_max_iterations(mut self, max_iterations: usize) -> Result<Self> {
        if max_iterations == 0 {
            return Err(Error::invalid("max_iterations", 0, "must be at least 1"));
        }
        self.max_iterations = max_iterations;
        Ok(self)
    }
}

/// Statistics of one MNCP solve.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NcpStats {
    /// Newton iterations performed.
    pub iterations: usize,
    /// Backtracking steps summed over the iterations.
    pub line_search_iterations: usize,
    /// Final `‖Φ‖_∞`.
    pub residual: f64,
    /// The tolerance it was held to.
    pub tolerance: f64,
    /// Number of unknowns (= equations).
    pub unknowns: usize,
    /// Number of contact pairs.
    pub contacts: usize,
}

impl fmt::Display for NcpStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} iterations, {} line-search iterations, residual ‖Φ‖∞ = {:.3e} (tolerance {:.3e}), {} unknowns, {} contact pairs",
            self.iterations,
            self.line_search_iterations,
            self.residual,
            self.tolerance,
            self.unknowns,
            self.contacts
        )
    }
}

/// Solves `Φ(z) = 0` from `z` (the warm start), where `system(z)` returns Φ and an element of
/// its generalized Jacobian. On success `z` holds the solution.
///
/// # Errors
/// [`Error::NcpNotConverged`] with the statistics when the iteration limit is reached or the
/// line search cannot decrease ψ; [`Error::NonFinite`]-like failures are reported the same
/// way, with a non-finite residual.
pub fn semismooth_newton(
    z: &mut DVector<f64>,
    contacts: usize,
    params: &NcpSolverParams,
    mut system: impl FnMut(&DVector<f64>) -> (DVector<f64>, DMatrix<f64>),
) -> Result<NcpStats> {
    let mut stats = NcpStats {
        tolerance: params.tolerance,
        unknowns: z.len(),
        contacts,
        ..Default::default()
    };
    let (mut phi, mut J) = system(z);
    loop {
        stats.residual = phi.amax();
        if !stats.residual.is_finite() {
            return Err(Error::NcpNotConverged { stats });
        }
        if stats.residual <= params.tolerance {
            return Ok(stats);
        }
        if stats.iterations >= params.max_iterations {
            return Err(Error::NcpNotConverged { stats });
        }
        stats.iterations += 1;
        let psi = 0.5 * phi.norm_squared();
        let gradient = J.tr_mul(&phi);
        let lambda = (2.0 * psi).min(params.max_regularization);
        let mut H = J.tr_mul(&J);
        // A relative floor keeps the factorization defined when Φ is tiny and J singular.
        let floor = 1e-14 * H.diagonal().amax().max(1e-300);
        for i in 0..H.nrows() {
            H[(i, i)] += lambda + floor;
        }
        let Some(chol) = H.cholesky() else {
            return Err(Error::NcpNotConverged { stats });
        };
        let d = -chol.solve(&gradient);
        let slope = gradient.dot(&d);
        let mut alpha = 1.0;
        let mut accepted = None;
        for _ in 0..params.max_line_search_iterations {
            let trial = &*z + &d * alpha;
            let (phi_t, J_t) = system(&trial);
            if 0.5 * phi_t.norm_squared() <= psi + params.armijo * alpha * slope
                && phi_t.iter().all(|x| x.is_finite())
            {
                accepted = Some((trial, phi_t, J_t));
                break;
            }
            stats.line_search_iterations += 1;
            alpha *= 0.5;
        }
        let Some((trial, phi_t, J_t)) = accepted else {
            return Err(Error::NcpNotConverged { stats });
        };
        *z = trial;
        phi = phi_t;
        J = J_t;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ncp::fischer_burmeister::{fischer_burmeister, fischer_burmeister_gradient};

    /// A one-variable NCP `0 ≤ x ⊥ x − 1 ≥ 0` has the solution x = 1.
    #[test]
    fn solves_a_scalar_complementarity_problem() {
        let mut z = DVector::from_element(1, 5.0);
        let stats = semismooth_newton(&mut z, 0, &NcpSolverParams::default(), |z| {
            let (a, b) = (z[0], z[0] - 1.0);
            let (ga, gb) = fischer_burmeister_gradient(a, b);
            (
                DVector::from_element(1, fischer_burmeister(a, b)),
                DMatrix::from_element(1, 1, ga + gb),
            )
        })
        .expect("converges");
        assert!((z[0] - 1.0).abs() < 1e-10);
        assert!(stats.iterations < 20);
    }

    #[test]
    fn failure_carries_the_statistics() {
        let mut z = DVector::from_element(1, 0.0);
        let params = NcpSolverParams::default()
            .with_max_iterations(3)
            .expect("valid");
        // x² + 1 = 0 has no real solution.
        let err = semismooth_newton(&mut z, 0, &params, |z| {
            (
                DVector::from_element(1, z[0] * z[0] + 1.0),
                DMatrix::from_element(1, 1, 2.0 * z[0]),
            )
        })
        .expect_err("no solution");
        match err {
            Error::NcpNotConverged { stats } => assert!(stats.residual >= 1.0),
            other => panic!("unexpected {other}"),
        }
    }
}
