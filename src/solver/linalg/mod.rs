//! The linear-algebra seam of the Newton solver (ICF ext. Sec. X): factor the SPD Hessian
//! `H = A + Σ J_iᵀ G_i J_i` once per iteration, given as clique blocks ([`BlockHessian`]),
//! and solve with it, also for many right-hand sides (the derivative path).
//!
//! - [`DenseCholesky`]: faer's dense `L Lᵀ`, for small systems;
//! - [`SparseCholesky`]: faer's sparse `L Lᵀ` (supernodal where it pays) with AMD ordering; the symbolic
//!   analysis is kept while the block pattern (the contact graph) does not change.
//!
//! [`LinearSolver`] picks one: `Auto` takes the sparse factorization from
//! [`SPARSE_MIN_VELOCITIES`] velocities on when there is more than one clique.
#![allow(non_snake_case)]

pub(crate) mod blocks;
pub(crate) mod condition;
pub(crate) mod dense;
pub(crate) mod sparse;

pub use blocks::{BlockHessian, BlockPattern};
pub use condition::{condition_estimate, ConditionScratch};
pub use dense::DenseCholesky;
pub use sparse::SparseCholesky;

use std::fmt;
use std::str::FromStr;

use nalgebra::{DMatrix, DVector};

use crate::error::{Error, Result};

/// A symmetric positive definite solver: factor, then solve.
pub trait SpdSolver {
    /// Factors `H` (n × n, symmetric, as clique blocks).
    ///
    /// # Errors
    /// [`crate::error::Error::NotPositiveDefinite`] on a non-positive pivot.
    fn factor(&mut self, H: &BlockHessian) -> Result<()>;
    /// Overwrites `rhs` (n) with `H⁻¹ rhs` using the last factor.
    fn solve_in_place(&self, rhs: &mut DVector<f64>);
    /// Overwrites every column of `rhs` (n × k) with `H⁻¹` times it.
    fn solve_many_in_place(&self, rhs: &mut DMatrix<f64>);
}

/// From this many velocities on, `Auto` uses the sparse factorization (when the Hessian has
/// more than one clique). Measured crossover on the clutter's free bodies: docs/benchmarks.md, "Scale".
pub const SPARSE_MIN_VELOCITIES: usize = 60;

/// Which factorization the Newton solver uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LinearSolver {
    /// Dense below [`SPARSE_MIN_VELOCITIES`] or with a single clique, sparse otherwise.
    #[default]
    Auto,
    /// Always [`DenseCholesky`].
    Dense,
    /// Always [`SparseCholesky`].
    Sparse,
}

impl LinearSolver {
    /// Every choice, in the order documented.
    pub const ALL: [LinearSolver; 3] = [
        LinearSolver::Auto,
        LinearSolver::Dense,
        LinearSolver::Sparse,
    ];

    /// The name used in problem files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            LinearSolver::Auto => "auto",
            LinearSolver::Dense => "dense",
            LinearSolver::Sparse => "sparse",
        }
    }

    /// Whether to factor `pattern` sparsely.
    pub fn use_sparse(self, pattern: &BlockPattern) -> bool {
        match self {
            LinearSolver::Auto => pattern.n() >= SPARSE_MIN_VELOCITIES && pattern.cliques.len() > 1,
            LinearSolver::Dense => false,
            LinearSolver::Sparse => true,
        }
    }
}

impl fmt::Display for LinearSolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for LinearSolver {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        LinearSolver::ALL
            .into_iter()
            .find(|l| l.name() == s)
            .ok_or_else(|| Error::invalid("linear_solver", s, "expected auto, dense or sparse"))
    }
}

/// A factorization of either kind, behind [`SpdSolver`].
#[derive(Debug)]
pub enum Factorization {
    /// Dense.
    Dense(DenseCholesky),
    /// Sparse (supernodal or simplicial, faer decides); boxed, being the larger.
    Sparse(Box<SparseCholesky>),
}

impl Default for Factorization {
    fn default() -> Self {
        Factorization::Dense(DenseCholesky::default())
    }
}

impl Factorization {
    /// The dense factorization of the dense `H` (n × n).
    ///
    /// # Errors
    /// [`Error::NotPositiveDefinite`].
    pub fn dense(H: &DMatrix<f64>) -> Result<Self> {
        let mut f = DenseCholesky::default();
        f.factor_dense(H)?;
        Ok(Factorization::Dense(f))
    }

    /// Factors `H` with the kind `choice` asks for, keeping this factorization's buffers (and
    /// its symbolic analysis) when the kind does not change.
    ///
    /// # Errors
    /// [`Error::NotPositiveDefinite`].
    pub fn factor_with(&mut self, choice: LinearSolver, H: &BlockHessian) -> Result<()> {
        let sparse = choice.use_sparse(&H.pattern);
        match (sparse, &mut *self) {
            (true, Factorization::Sparse(_)) | (false, Factorization::Dense(_)) => {}
            (true, _) => *self = Factorization::Sparse(Box::default()),
            (false, _) => *self = Factorization::Dense(DenseCholesky::default()),
        }
        self.factor(H)
    }

    /// Whether this is the sparse factorization.
    pub fn is_sparse(&self) -> bool {
        matches!(self, Factorization::Sparse(_))
    }
}

impl SpdSolver for Factorization {
    fn factor(&mut self, H: &BlockHessian) -> Result<()> {
        match self {
            Factorization::Dense(f) => f.factor(H),
            Factorization::Sparse(f) => f.factor(H),
        }
    }

    fn solve_in_place(&self, rhs: &mut DVector<f64>) {
        match self {
            Factorization::Dense(f) => f.solve_in_place(rhs),
            Factorization::Sparse(f) => f.solve_in_place(rhs),
        }
    }

    fn solve_many_in_place(&self, rhs: &mut DMatrix<f64>) {
        match self {
            Factorization::Dense(f) => f.solve_many_in_place(rhs),
            Factorization::Sparse(f) => f.solve_many_in_place(rhs),
        }
    }
}
