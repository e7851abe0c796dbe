//! The linear-algebra seam of the Newton solver: factor the SPD Hessian `H` once per
#![allow(non_snake_case)]
//! iteration, solve with it (also for many right-hand sides, as the derivative path will).
//! Dense Cholesky ([`DenseCholesky`], faer) serves small systems; a supernodal sparse
//! factorization plugs in behind the same trait.

pub mod dense;

pub use dense::DenseCholesky;

use nalgebra::{DMatrix, DVector};

use crate::error::Result;

/// A symmetric positive definite solver: factor, then solve.
pub trait SpdSolver {
    /// Factors `H` (n × n, symmetric; only the lower triangle is read).
    ///
    /// # Errors
    /// [`crate::error::Error::NotPositiveDefinite`] on a non-positive pivot.
    fn factor(&mut self, H: &DMatrix<f64>) -> Result<()>;
    /// Overwrites `rhs` (n) with `H⁻¹ rhs` using the last factor.
    fn solve_in_place(&self, rhs: &mut DVector<f64>);
    /// Overwrites every column of `rhs` (n × k) with `H⁻¹` times it.
    fn solve_many_in_place(&self, rhs: &mut DMatrix<f64>);
}
