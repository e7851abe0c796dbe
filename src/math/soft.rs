//! The soft norm of ICF Appendix A: a convex, twice-differentiable stand-in for `‖x‖`.
//!
//! `‖x‖_s = sqrt(‖x‖² + ε²) − ε` (ICF eq. (45)), gradient `x̂_s = x / (‖x‖_s + ε)`
//! (eq. (46)) and Hessian `P⊥(x̂_s) / (‖x‖_s + ε)` (eq. (47)). Well defined at `x = 0`, also
//! for dual numbers (the square root never sees zero while `ε > 0`).

use nalgebra::{Matrix2, Vector2};

use crate::scalar::Scalar;

/// Soft norm of a 2-vector with its gradient and Hessian, ICF eqs. (45)-(47).
#[derive(Clone, Copy, Debug)]
pub struct SoftNorm<T: Scalar> {
    /// `‖x‖_s`, units of x.
    pub value: T,
    /// Soft unit vector `x̂_s` (dimensionless).
    pub unit: Vector2<T>,
    /// Hessian `P⊥(x̂_s)/(‖x‖_s + ε)` (1/units of x). Note `P⊥ = I − x̂_s x̂_sᵀ` is not a
    /// projector when `‖x̂_s‖ < 1`, as in the paper.
    pub hessian: Matrix2<T>,
}

/// Soft norm `‖x‖_s` with gradient and Hessian, ICF eqs. (45)-(47).
#[inline(always)]
pub fn soft_norm<T: Scalar>(x: &Vector2<T>, eps: T) -> SoftNorm<T> {
    let root = (x.norm_squared() + eps * eps).sqrt();
    // One division, then products.
    let inverse = T::one() / root;
    let unit = x * inverse;
    SoftNorm {
        value: root - eps,
        unit,
        hessian: (Matrix2::identity() - unit * unit.transpose()) * inverse,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_dual::{hessian, Dual2SVec64};

    #[test]
    fn gradient_and_hessian_match_second_order_duals() {
        let eps = 1e-2;
        for &(a, b) in &[(0.0, 0.0), (1e-3, -2e-3), (0.5, 0.1), (-3.0, 4.0)] {
            let x = nalgebra::SVector::<f64, 2>::new(a, b);
            let (f, g, h) = hessian(
                |x: nalgebra::SVector<Dual2SVec64<2>, 2>| {
                    soft_norm(&Vector2::new(x[0], x[1]), Dual2SVec64::from(eps)).value
                },
                &x,
            );
            let s = soft_norm(&Vector2::new(a, b), eps);
            assert!((f - s.value).abs() < 1e-15);
            assert!((g - nalgebra::SVector::<f64, 2>::from(s.unit)).norm() < 1e-13);
            assert!((h - s.hessian).norm() < 1e-10 * (1.0 + h.norm()));
        }
    }
}
