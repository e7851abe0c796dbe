//! Condition number estimate `κ₁(H) = ‖H‖₁ ‖H⁻¹‖₁` from a Cholesky factor, with Hager's
//! 1-norm estimator for `‖H⁻¹‖₁` (Hager 1984; Higham, *Accuracy and Stability of Numerical
//! Algorithms*, Alg. 15.4): a few solves with the factor, never `H⁻¹` itself. The estimate is
//! a lower bound of `‖H⁻¹‖₁`, usually within a factor of 3.
#![allow(non_snake_case)]

use nalgebra::DVector;

use crate::solver::linalg::{BlockHessian, SpdSolver};

/// Hager iterations: the estimate settles in 2-3 (Higham).
const MAX_ITERATIONS: usize = 5;

/// Scratch vectors of [`condition_estimate`] (n each), kept to avoid allocation.
#[derive(Clone, Debug, Default)]
pub struct ConditionScratch {
    x: DVector<f64>,
    y: DVector<f64>,
    z: DVector<f64>,
}

/// Estimate of the 1-norm condition number of the symmetric positive definite `H`, given its
/// factorization `factor`.
pub fn condition_estimate(
    H: &BlockHessian,
    factor: &impl SpdSolver,
    scratch: &mut ConditionScratch,
) -> f64 {
    let n = H.n();
    if n == 0 {
        return 1.0;
    }
    if scratch.x.len() != n {
        scratch.x = DVector::zeros(n);
        scratch.y = DVector::zeros(n);
        scratch.z = DVector::zeros(n);
    }
    let norm_H = H.norm_1(&mut scratch.z);
    let ConditionScratch { x, y, z } = scratch;
    x.fill(1.0 / n as f64);
    let mut estimate = 0.0;
    for iteration in 0..MAX_ITERATIONS {
        y.copy_from(x);
        factor.solve_in_place(y);
        let norm_y = y.lp_norm(1);
        if iteration > 0 && norm_y <= estimate {
            break;
        }
        estimate = norm_y;
        // z = H⁻ᵀ sign(y) = H⁻¹ sign(y) (H symmetric).
        for (zi, yi) in z.iter_mut().zip(y.iter()) {
            *zi = if *yi >= 0.0 { 1.0 } else { -1.0 };
        }
        factor.solve_in_place(z);
        let j = z.iamax();
        // No coordinate direction improves on x: a local maximum of ‖H⁻¹x‖₁.
        if iteration > 0 && z[j].abs() <= z.dot(x) {
            break;
        }
        x.fill(0.0);
        x[j] = 1.0;
    }
    norm_H * estimate
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::linalg::DenseCholesky;
    use nalgebra::DMatrix;

    #[test]
    fn estimates_diagonal_and_dense_conditions() {
        let D = DMatrix::from_diagonal(&DVector::from_vec(vec![1.0, 10.0, 1e4, 3.0]));
        let H = BlockHessian::from_dense(&D);
        let mut f = DenseCholesky::default();
        f.factor(&H).unwrap();
        let kappa = condition_estimate(&H, &f, &mut ConditionScratch::default());
        assert!((kappa - 1e4).abs() < 1e-8, "{kappa}");
        let B = DMatrix::from_fn(6, 6, |i, j| ((i * 5 + j * 3) % 7) as f64 - 3.0);
        let A = &B * B.transpose() + DMatrix::identity(6, 6) * 0.1;
        let H = BlockHessian::from_dense(&A);
        f.factor(&H).unwrap();
        let exact = {
            let inv = A.clone().try_inverse().unwrap();
            let n1 = |M: &DMatrix<f64>| (0..6).map(|j| M.column(j).lp_norm(1)).fold(0.0, f64::max);
            n1(&A) * n1(&inv)
        };
        let kappa = condition_estimate(&H, &f, &mut ConditionScratch::default());
        // Hager's estimate is a lower bound, within a factor of 3 in practice.
        assert!(
            kappa <= exact * (1.0 + 1e-10) && kappa >= exact / 3.0,
            "{kappa} vs {exact}"
        );
    }
}
