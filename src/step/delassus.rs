//! Delassus estimates of the contacts (SAP paper Sec. V; DESIGN "SAP in detail"):
//! `w_i = ‖J_i M̂⁻¹ J_iᵀ‖_F / 3`, with `M̂` the block-diagonal (per tree) part of
//! `A = M + δt D`. SAP and the regularized Lagged model read them for their regularization
//! (ICF eq. (44)).
#![allow(non_snake_case)]

use nalgebra::{DMatrix, Matrix3xX};

use crate::error::{Error, Result};
use crate::math::block::BlockDiagonalCholesky;
use crate::scalar::{lit, Scalar};

/// Delassus estimates `w_i = ‖J_i A⁻¹ J_iᵀ‖_F / 3` (1/kg), SAP paper Sec. V, of the contact
/// Jacobians `J` side by side (3 × nv each, as [`ConvexProblem::J`](crate::solver::ConvexProblem::J)); A is
/// block-diagonal over trees, so this is the per-tree estimate. `touched[i]` lists the cliques
/// (trees) whose velocities contact `i` moves: `J_i` is zero elsewhere, so only those blocks
/// are solved.
pub fn delassus_estimates<T: Scalar>(
    A: &DMatrix<T>,
    cliques: &[Vec<usize>],
    J: &Matrix3xX<T>,
    touched: &[Vec<usize>],
) -> Result<Vec<T>> {
    let chol =
        BlockDiagonalCholesky::new(A, cliques).ok_or(Error::NotPositiveDefinite { index: 0 })?;
    let nv = A.nrows();
    Ok(touched
        .iter()
        .enumerate()
        .map(|(i, touched)| {
            let Jt = J.columns(i * nv, nv).transpose();
            let Jt = DMatrix::from_column_slice(Jt.nrows(), 3, Jt.as_slice());
            chol.quadratic_form(&Jt, touched).norm() / lit::<T>(3.0)
        })
        .collect())
}
