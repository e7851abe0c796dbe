//! Dense Cholesky `H = L Lᵀ` with faer, in place in a buffer kept across factorizations (no
//! allocation once the size is known), sequential: at these sizes threads cost more than they
//! save.
#![allow(non_snake_case)]

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt;
use faer::{Conj, MatMut, MatRef, Par};
use nalgebra::{DMatrix, DVector};

use crate::error::{Error, Result};
use crate::solver::linalg::{BlockHessian, SpdSolver};

/// Dense Cholesky factorization (faer), for systems up to about a hundred velocities.
#[derive(Default)]
pub struct DenseCholesky {
    /// `L` in the lower triangle (n × n); the upper triangle is scratch.
    L: DMatrix<f64>,
    /// faer's workspace and the n it was sized for.
    scratch: Option<(usize, MemBuffer)>,
    factored: bool,
}

impl std::fmt::Debug for DenseCholesky {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DenseCholesky")
            .field("n", &self.L.nrows())
            .field("factored", &self.factored)
            .finish()
    }
}

impl DenseCholesky {
    /// Factors the dense symmetric `H` (n × n; only the lower triangle is read).
    ///
    /// # Errors
    /// [`Error::NotPositiveDefinite`] on a non-positive pivot.
    pub fn factor_dense(&mut self, H: &DMatrix<f64>) -> Result<()> {
        if self.L.shape() != H.shape() {
            self.L = H.clone();
        } else {
            self.L.copy_from(H);
        }
        self.factor_in_place()
    }

    /// Factors the matrix already in `self.L`.
    fn factor_in_place(&mut self) -> Result<()> {
        let n = self.L.nrows();
        if self.scratch.as_ref().is_none_or(|(m, _)| *m != n) {
            let req =
                llt::factor::cholesky_in_place_scratch::<f64>(n, Par::Seq, Default::default());
            self.scratch = Some((n, MemBuffer::new(req)));
        }
        let (_, scratch) = self.scratch.as_mut().expect("invariant: sized above");
        let view = MatMut::from_column_major_slice_mut(self.L.as_mut_slice(), n, n);
        let result = llt::factor::cholesky_in_place(
            view,
            Default::default(),
            Par::Seq,
            MemStack::new(scratch),
            Default::default(),
        );
        self.factored = result.is_ok();
        match result {
            Ok(_) => Ok(()),
            Err(llt::factor::LltError::NonPositivePivot { index }) => {
                Err(Error::NotPositiveDefinite { index })
            }
        }
    }

    /// Overwrites the `k` columns (column-major, `n` rows) of `data` with `H⁻¹` times them.
    fn solve_columns(&self, data: &mut [f64], n: usize, k: usize) {
        assert!(self.factored, "invariant: solve after a successful factor");
        let L = MatRef::from_column_major_slice(self.L.as_slice(), n, n);
        let mut empty = [];
        llt::solve::solve_in_place_with_conj(
            L,
            Conj::No,
            MatMut::from_column_major_slice_mut(data, n, k),
            Par::Seq,
            MemStack::new(&mut empty),
        );
    }
}

impl SpdSolver for DenseCholesky {
    fn factor(&mut self, H: &BlockHessian) -> Result<()> {
        H.lower_to_dense(&mut self.L);
        self.factor_in_place()
    }

    fn solve_in_place(&self, rhs: &mut DVector<f64>) {
        let n = rhs.len();
        self.solve_columns(rhs.as_mut_slice(), n, 1);
    }

    fn solve_many_in_place(&self, rhs: &mut DMatrix<f64>) {
        let (n, k) = rhs.shape();
        self.solve_columns(rhs.as_mut_slice(), n, k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_spd_system_and_rejects_indefinite() {
        let B = DMatrix::from_fn(5, 5, |i, j| ((i * 3 + j * 7) % 5) as f64 - 2.0);
        let H = &B * B.transpose() + DMatrix::identity(5, 5);
        let x = DVector::from_fn(5, |i, _| i as f64 - 1.5);
        let mut rhs = &H * &x;
        let mut s = DenseCholesky::default();
        s.factor_dense(&H).unwrap();
        s.solve_in_place(&mut rhs);
        assert!((rhs - &x).norm() < 1e-12);
        let mut many = &H * DMatrix::from_columns(&[x.clone(), x.clone() * 2.0]);
        s.solve_many_in_place(&mut many);
        assert!((many.column(1) - &x * 2.0).norm() < 1e-12);
        assert!(matches!(
            s.factor(&BlockHessian::from_dense(&(-H))),
            Err(Error::NotPositiveDefinite { .. })
        ));
    }
}
