//! Delassus estimates of the contacts (SAP paper Sec. V; DESIGN "SAP in detail"):
//! `w_i = ‖J_i M̂⁻¹ J_iᵀ‖_F / 3`, with `M̂` the block-diagonal (per tree) part of
//! `A = M + δt D`. SAP and the regularized Lagged model read them for their regularization
//! (ICF eq. (44)).
#![allow(non_snake_case)]

use nalgebra::{DMatrix, Matrix3xX};

use crate::error::{Error, Result};
use crate::math::block::BlockDiagonalCholesky;
use crate::scalar::{lit, Scalar};
use crate::solver::ContactJacobians;

/// Delassus estimates `w_i = ‖J_i A⁻¹ J_iᵀ‖_F / 3` (1/kg), SAP paper Sec. V, of the contact
/// Jacobians `J` side by side (3 × nv each); A is block-diagonal over trees, so this is the
/// per-tree estimate. Only the blocks of the cliques (trees) whose velocities a contact moves
/// (its nonzero columns) are solved.
pub fn delassus_estimates<T: Scalar>(
    A: &DMatrix<T>,
    cliques: &[Vec<usize>],
    J: &Matrix3xX<T>,
) -> Result<Vec<T>> {
    let chol =
        BlockDiagonalCholesky::new(A, cliques).ok_or(Error::NotPositiveDefinite { index: 0 })?;
    let J = ContactJacobians::from_dense(J, A.nrows());
    Ok(delassus_estimates_with(&chol, &J))
}

/// [`delassus_estimates`] with the factor `chol` of `A`'s clique blocks (nv × nv).
pub(super) fn delassus_estimates_with<T: Scalar>(
    chol: &BlockDiagonalCholesky<T>,
    J: &ContactJacobians<T>,
) -> Vec<T> {
    (0..J.nc())
        .map(|i| {
            let (index, columns) = J.columns(i);
            chol.columns_quadratic_form(index, columns).norm() / lit::<T>(3.0)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::skew;
    use crate::step::contact_frame;
    use nalgebra::{Matrix3, Vector3};

    /// Cholesky solves of well-conditioned 3 × 3 and 6 × 6 blocks and products with a
    /// rotation: a few hundred ulps at most.
    const TOLERANCE: f64 = 1e-13;

    /// `R_CW` for a tilted normal: the estimate does not depend on the frame.
    fn R_CW() -> Matrix3<f64> {
        contact_frame(&Vector3::new(0.2, -0.4, 0.9).normalize()).transpose()
    }

    fn relative_error(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    /// A point mass `m` on the ground: `J = R_CW`, `J M⁻¹ Jᵀ = 1/m`, so
    /// `w = ‖1/m‖_F / 3 = √3 / (3m)`.
    #[test]
    fn point_mass_on_the_ground() {
        let m = 2.5;
        let A = DMatrix::identity(3, 3) * m;
        let J = Matrix3xX::from_column_slice(R_CW().as_slice());
        let w = delassus_estimates(&A, &[vec![0, 1, 2]], &J).unwrap();
        let expected = 3.0_f64.sqrt() / (3.0 * m);
        assert!(relative_error(w[0], expected) <= TOLERANCE, "{w:?}");
    }

    /// A free solid sphere (mass m, radius r, `I = 2/5 m r²`) touching the ground at
    /// `p = (0, 0, −r)` from its centre: `J = R_CW [1 | −[p]×]` for `v = (v_o; ω)`, so
    /// `J M⁻¹ Jᵀ = R_CW (1/m + [p]× [p]×ᵀ / I) R_WC = R_CW diag(7/2, 7/2, 1) R_WC / m` and
    /// `w = √(2 (7/2)² + 1) / (3m) = √25.5 / (3m)`.
    #[test]
    fn free_sphere_on_the_ground() {
        let (m, r) = (0.7, 0.05);
        let inertia = 0.4 * m * r * r;
        let mut A = DMatrix::zeros(6, 6);
        for i in 0..3 {
            A[(i, i)] = m;
            A[(i + 3, i + 3)] = inertia;
        }
        let p = Vector3::new(0.0, 0.0, -r);
        let R = R_CW();
        let mut J = Matrix3xX::zeros(6);
        J.columns_mut(0, 3).copy_from(&R);
        J.columns_mut(3, 3).copy_from(&(-R * skew(&p)));
        let w = delassus_estimates(&A, &[(0..6).collect()], &J).unwrap();
        let expected = 25.5_f64.sqrt() / (3.0 * m);
        assert!(relative_error(w[0], expected) <= TOLERANCE, "{w:?}");
    }

    /// Two point masses, one clique each, and two contacts side by side: the first mass on
    /// the ground (`J_0 = [R_CW, 0]`, one clique) and the two masses against each other
    /// (`J_1 = [−R_CW, R_CW]`, two cliques). The contact between them sums both cliques,
    /// `w_1 = √3 (1/m_a + 1/m_b) / 3`.
    #[test]
    fn contact_between_two_bodies_touches_two_cliques() {
        let (m_a, m_b) = (2.0, 0.5);
        let mut A = DMatrix::identity(6, 6) * m_a;
        A.view_mut((3, 3), (3, 3)).fill_with_identity();
        A.view_mut((3, 3), (3, 3)).scale_mut(m_b);
        let cliques = [vec![0, 1, 2], vec![3, 4, 5]];
        let R = R_CW();
        let mut J = Matrix3xX::zeros(12);
        J.columns_mut(0, 3).copy_from(&R);
        J.columns_mut(6, 3).copy_from(&(-R));
        J.columns_mut(9, 3).copy_from(&R);
        let sqrt3 = 3.0_f64.sqrt();
        let w = delassus_estimates(&A, &cliques, &J).unwrap();
        assert!(
            relative_error(w[0], sqrt3 / (3.0 * m_a)) <= TOLERANCE,
            "{w:?}"
        );
        let both = sqrt3 * (1.0 / m_a + 1.0 / m_b) / 3.0;
        assert!(relative_error(w[1], both) <= TOLERANCE, "{w:?}");
    }

    /// A singular `A` is an error, not a NaN.
    #[test]
    fn singular_mass_matrix_is_an_error() {
        let A = DMatrix::<f64>::zeros(3, 3);
        let J = Matrix3xX::identity(3);
        assert!(matches!(
            delassus_estimates(&A, &[vec![0, 1, 2]], &J),
            Err(Error::NotPositiveDefinite { .. })
        ));
    }
}
