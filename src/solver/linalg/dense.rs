//! Dense Cholesky `H = L Lᵀ` with faer, on nalgebra storage (both column-major, no copy of
//! the right-hand sides).
#![allow(non_snake_case)]

use faer::linalg::solvers::{Llt, Solve};
use faer::{MatMut, MatRef, Side};
use nalgebra::{DMatrix, DVector};

use crate::error::{Error, Result};
use crate::solver::linalg::SpdSolver;

/// Dense Cholesky factorization (faer), for systems up to a few hundred velocities.
#[derive(Debug, Default)]
pub struct DenseCholesky {
    llt: Option<Llt<f64>>,
}

impl DenseCholesky {
    /// Overwrites the `k` columns (column-major, `n` rows) of `data` with `H⁻¹` times them.
    fn solve_columns(&self, data: &mut [f64], n: usize, k: usize) {
        let llt = self
            .llt
            .as_ref()
            .expect("invariant: solve after a successful factor");
        llt.solve_in_place(MatMut::from_column_major_slice_mut(data, n, k));
    }
}

impl SpdSolver for DenseCholesky {
    fn factor(&mut self, H: &DMatrix<f64>) -> Result<()> {
        let n = H.nrows();
        let view = MatRef::from_column_major_slice(H.as_slice(), n, n);
        match Llt::new(view, Side::Lower) {
            Ok(llt) => {
                self.llt = Some(llt);
                Ok(())
            }
            Err(faer::linalg::cholesky::llt::factor::LltError::NonPositivePivot { index }) => {
                self.llt = None;
                Err(Error::NotPositiveDefinite { index })
            }
        }
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
        s.factor(&H).unwrap();
        s.solve_in_place(&mut rhs);
        assert!((rhs - &x).norm() < 1e-12);
        let mut many = &H * DMatrix::from_columns(&[x.clone(), x.clone() * 2.0]);
        s.solve_many_in_place(&mut many);
        assert!((many.column(1) - &x * 2.0).norm() < 1e-12);
        assert!(matches!(
            s.factor(&(-H)),
            Err(Error::NotPositiveDefinite { .. })
        ));
    }
}
