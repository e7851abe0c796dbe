//! Solver parameters with their nominal values.

use crate::error::{Error, Result};
use crate::solver::linalg::LinearSolver;

/// Parameters of the Newton solver.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SolverParams {
    /// Relative tolerance ε_r of SAP's optimality criterion (nominal 1e-5).
    pub relative_tolerance: f64,
    /// Absolute tolerance ε_a (N·s scaled by `diag(A)^{-1/2}`, nominal 1e-14).
    pub absolute_tolerance: f64,
    /// Relative cost-stagnation tolerance: stop when `ℓ_prev − ℓ ≤ 1e-15 |ℓ|`-type round-off
    /// (nominal 1e-15).
    pub cost_tolerance: f64,
    /// Newton iterations before giving up with an error (nominal 100).
    pub max_iterations: usize,
    /// Line-search iterations before giving up with an error (nominal 100).
    pub max_line_search_iterations: usize,
    /// Largest step length α tried by the line search (nominal 1.5, as Drake's SAP).
    pub alpha_max: f64,
    /// On convergence, factor `H` at the returned `v` (it is already evaluated there), so
    /// that the implicit-function-theorem gradients reuse a current factor. Off by default:
    /// the forward simulation does not need it.
    pub factor_at_solution: bool,
    /// Estimate the condition number of the last factored `H` for the statistics
    /// ([`crate::solver::SolverStats::condition`]; on by default). The derivative path turns it
    /// off: it reads no statistics, and the estimate's triangular solves cost more than a
    /// factorization on small systems (about 2 µs at nv = 13).
    pub condition_estimate: bool,
    /// Dense or sparse factorization of the Newton Hessian (default automatic by size).
    pub linear_solver: LinearSolver,
}

impl Default for SolverParams {
    fn default() -> Self {
        SolverParams {
            relative_tolerance: 1e-5,
            absolute_tolerance: 1e-14,
            cost_tolerance: 1e-15,
            max_iterations: 100,
            max_line_search_iterations: 100,
            alpha_max: 1.5,
            factor_at_solution: false,
            condition_estimate: true,
            linear_solver: LinearSolver::Auto,
        }
    }
}

impl SolverParams {
    /// Sets ε_r.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] unless `0 < tol < 1`.
    pub fn with_relative_tolerance(mut self, tol: f64) -> Result<Self> {
        if !(tol > 0.0 && tol < 1.0) {
            return Err(Error::invalid(
                "relative_tolerance",
                tol,
                "must be in (0, 1)",
            ));
        }
        self.relative_tolerance = tol;
        Ok(self)
    }

    /// Sets the Newton iteration limit.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for zero.
    pub fn with_max_iterations(mut self, n: usize) -> Result<Self> {
        if n == 0 {
            return Err(Error::invalid("max_iterations", n, "must be at least 1"));
        }
        self.max_iterations = n;
        Ok(self)
    }
}
