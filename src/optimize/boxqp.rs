//! The box-constrained QP of the control-limited backward pass (Tassa, Mansard & Todorov,
//! "Control-limited differential dynamic programming", ICRA 2014, Algorithm 1):
//!
//! `min_δu ½ δuᵀ H δu + gᵀ δu  s.t.  lo ≤ δu ≤ hi`
//!
//! by projected Newton: at each iterate the clamped set holds the coordinates at a bound whose
//! gradient pushes outward; a Newton step on the free coordinates (Cholesky of `H_ff`) is
//! followed by an Armijo line search along the projected path. The final free set and its
//! factor give the feedback gains (`K_f = −H_ff⁻¹ Q_ux,f`, clamped rows zero).
#![allow(non_snake_case)]

use nalgebra::{Cholesky, DMatrix, DVector, Dyn};

/// Newton iterations of the QP (Tassa et al. use 100).
const MAX_ITERATIONS: usize = 100;
/// Stop when the free gradient norm is below this.
const GRADIENT_TOLERANCE: f64 = 1e-8;
/// Stop when the relative cost improvement is below this.
const IMPROVEMENT_TOLERANCE: f64 = 1e-8;
/// Armijo constant of the projected line search.
const ARMIJO: f64 = 0.1;
/// Step shrink factor of the projected line search.
const SHRINK: f64 = 0.6;
/// Smallest step of the projected line search.
const MIN_STEP: f64 = 1e-22;

/// Solution of the box QP.
#[derive(Debug)]
pub struct BoxQpSolution {
    /// The minimizer `δu` (n).
    pub x: DVector<f64>,
    /// `free[i]`: coordinate `i` is not clamped at the solution.
    pub free: Vec<bool>,
    /// Cholesky factor of `H_ff` (free rows and columns), `None` if all are clamped.
    pub factor: Option<Cholesky<f64, Dyn>>,
}

/// `H` restricted to the rows and columns flagged in `free`.
fn free_block(H: &DMatrix<f64>, free: &[bool]) -> DMatrix<f64> {
    let idx: Vec<usize> = (0..free.len()).filter(|&i| free[i]).collect();
    DMatrix::from_fn(idx.len(), idx.len(), |i, j| H[(idx[i], idx[j])])
}

/// Solves the box QP from the start point `x0` (clamped first). Returns `None` when a free
/// block of `H` is not positive definite (the caller raises its regularization).
pub fn solve_box_qp(
    H: &DMatrix<f64>,
    g: &DVector<f64>,
    lo: &DVector<f64>,
    hi: &DVector<f64>,
    x0: &DVector<f64>,
) -> Option<BoxQpSolution> {
    let n = g.len();
    let clamp = |x: &DVector<f64>| DVector::from_fn(n, |i, _| x[i].clamp(lo[i], hi[i]));
    let value = |x: &DVector<f64>| 0.5 * x.dot(&(H * x)) + g.dot(x);
    let mut x = clamp(x0);
    let mut f = value(&x);
    let mut free = vec![true; n];
    let mut factor = None;
    for _ in 0..MAX_ITERATIONS {
        let grad = g + H * &x;
        let new_free: Vec<bool> = (0..n)
            .map(|i| !((x[i] <= lo[i] && grad[i] > 0.0) || (x[i] >= hi[i] && grad[i] < 0.0)))
            .collect();
        if new_free.iter().all(|f| !f) {
            free = new_free;
            factor = None;
            break;
        }
        if factor.is_none() || new_free != free {
            factor = Some(free_block(H, &new_free).cholesky()?);
            free = new_free;
        }
        let idx: Vec<usize> = (0..n).filter(|&i| free[i]).collect();
        let grad_f = DVector::from_fn(idx.len(), |i, _| grad[idx[i]]);
        if grad_f.norm() < GRADIENT_TOLERANCE {
            break;
        }
        let step_f = -factor
            .as_ref()
            .expect("invariant: factor set above")
            .solve(&grad_f);
        let mut dx = DVector::zeros(n);
        for (k, &i) in idx.iter().enumerate() {
            dx[i] = step_f[k];
        }
        let slope = grad.dot(&dx);
        let mut step = 1.0;
        let mut accepted = None;
        while step >= MIN_STEP {
            let candidate = clamp(&(&x + &dx * step));
            let fc = value(&candidate);
            if (fc - f) / (step * slope) >= ARMIJO {
                accepted = Some((candidate, fc));
                break;
            }
            step *= SHRINK;
        }
        let Some((candidate, fc)) = accepted else {
            break;
        };
        let improvement = f - fc;
        x = candidate;
        f = fc;
        if improvement < IMPROVEMENT_TOLERANCE * f.abs().max(1e-12) {
            break;
        }
    }
    // The gains need the factor of the final free set.
    let grad = g + H * &x;
    let final_free: Vec<bool> = (0..n)
        .map(|i| !((x[i] <= lo[i] && grad[i] > 0.0) || (x[i] >= hi[i] && grad[i] < 0.0)))
        .collect();
    if final_free != free || (factor.is_none() && final_free.iter().any(|&f| f)) {
        factor = if final_free.iter().any(|&f| f) {
            Some(free_block(H, &final_free).cholesky()?)
        } else {
            None
        };
        free = final_free;
    }
    Some(BoxQpSolution { x, free, factor })
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn unconstrained_minimizer_when_inside() {
        let H = DMatrix::from_row_slice(2, 2, &[2.0, 0.5, 0.5, 1.0]);
        let g = DVector::from_vec(vec![-1.0, 0.3]);
        let inf = DVector::from_element(2, 10.0);
        let s = solve_box_qp(&H, &g, &(-&inf), &inf, &DVector::zeros(2)).unwrap();
        let exact = -H.clone().cholesky().unwrap().solve(&g);
        assert_relative_eq!(s.x, exact, epsilon = 1e-10);
        assert_eq!(s.free, vec![true, true]);
    }

    #[test]
    fn clamps_at_active_bound_and_solves_the_rest() {
        // H = I: the minimizer is −g clamped. g = (−2, 2): both coordinates clamp; with
        // g = (−2, 0.5) the second is interior at −0.5.
        let H = DMatrix::from_row_slice(2, 2, &[1.0, 0.0, 0.0, 1.0]);
        let g = DVector::from_vec(vec![-2.0, 2.0]);
        let one = DVector::from_element(2, 1.0);
        let s = solve_box_qp(&H, &g, &(-&one), &one, &DVector::zeros(2)).unwrap();
        assert_relative_eq!(s.x, DVector::from_vec(vec![1.0, -1.0]), epsilon = 1e-12);
        assert_eq!(s.free, vec![false, false]);
        let g = DVector::from_vec(vec![-2.0, 0.5]);
        let s = solve_box_qp(&H, &g, &(-&one), &one, &DVector::zeros(2)).unwrap();
        assert_relative_eq!(s.x, DVector::from_vec(vec![1.0, -0.5]), epsilon = 1e-12);
        assert_eq!(s.free, vec![false, true]);
    }

    #[test]
    fn indefinite_free_block_is_reported() {
        let H = DMatrix::from_row_slice(2, 2, &[1.0, 0.0, 0.0, -1.0]);
        let g = DVector::from_vec(vec![0.1, 0.1]);
        let one = DVector::from_element(2, 1.0);
        assert!(solve_box_qp(&H, &g, &(-&one), &one, &DVector::zeros(2)).is_none());
    }
}
