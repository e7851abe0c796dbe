//! The factor of the Newton Hessian handed to the derivatives (ICF ext. Sec. X-B,
//! `∂v/∂θ = −H⁻¹ ∂r/∂θ`): the factorization of `H(v)`, the velocities `v` it belongs to and
//! its generation.
//!
//! Every numeric factorization gets a new generation, unique in the process
//! ([`FactorGeneration`]). Whoever keeps a factor for the implicit function theorem records the
//! generation it expects, and the IFT refuses a factor of another generation
//! ([`crate::error::Error::StaleFactor`]): equal velocities alone cannot tell the factor of one
//! solve from that of another solve that ended at the same `v`.
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use nalgebra::DVector;

use crate::solver::linalg::Factorization;

/// The generation the next numeric factorization gets.
static NEXT_GENERATION: AtomicU64 = AtomicU64::new(1);

/// The generation of a numeric factorization of a Newton Hessian: each new factorization
/// gets a new one, unique in the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FactorGeneration(u64);

impl FactorGeneration {
    /// A generation no factorization has had yet, for a factorization just made.
    pub(crate) fn next() -> Self {
        // Relaxed: only uniqueness is needed, not an order with other memory.
        FactorGeneration(NEXT_GENERATION.fetch_add(1, Ordering::Relaxed))
    }
}

impl fmt::Display for FactorGeneration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// A Cholesky factor of the Newton Hessian `H(v)` with the `v` it belongs to and its
/// generation, owned.
#[derive(Debug)]
pub struct NewtonFactor {
    /// The factorization of `H(v)` (dense or sparse).
    pub cholesky: Factorization,
    /// The velocities `H` was evaluated at (nv).
    pub v: DVector<f64>,
    /// The generation of the factorization.
    pub generation: FactorGeneration,
}

impl NewtonFactor {
    /// `cholesky`, a factorization of `H(v)` just made: it gets a new generation.
    pub fn new(cholesky: Factorization, v: DVector<f64>) -> Self {
        NewtonFactor {
            cholesky,
            v,
            generation: FactorGeneration::next(),
        }
    }

    /// The factor, borrowed.
    pub fn view(&self) -> NewtonFactorRef<'_> {
        NewtonFactorRef {
            cholesky: &self.cholesky,
            v: &self.v,
            generation: self.generation,
        }
    }
}

/// A Cholesky factor of the Newton Hessian `H(v)` with the `v` it belongs to and its
/// generation, borrowed (from a [`crate::solver::NewtonWorkspace`] or a [`NewtonFactor`]).
#[derive(Clone, Copy, Debug)]
pub struct NewtonFactorRef<'a> {
    /// The factorization of `H(v)` (dense or sparse).
    pub cholesky: &'a Factorization,
    /// The velocities `H` was evaluated at (nv).
    pub v: &'a DVector<f64>,
    /// The generation of the factorization.
    pub generation: FactorGeneration,
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;

    /// Two factorizations of the very same matrix at the very same velocities are told apart
    /// by their generations; a borrowed view keeps its factor's.
    #[test]
    fn each_factorization_gets_a_new_generation() {
        let h = DMatrix::from_row_slice(2, 2, &[2.0, 0.5, 0.5, 1.0]);
        let v = DVector::from_vec(vec![0.1, -0.2]);
        let a = NewtonFactor::new(Factorization::dense(&h).unwrap(), v.clone());
        let b = NewtonFactor::new(Factorization::dense(&h).unwrap(), v);
        assert_eq!(a.v, b.v);
        assert_ne!(a.generation, b.generation);
        assert_eq!(a.view().generation, a.generation);
        assert_ne!(a.generation.to_string(), b.generation.to_string());
    }
}
