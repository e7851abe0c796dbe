//! The Fischer–Burmeister reformulation of a complementarity pair, which replaces PATH
//! (Xie & Chakraborty Sec. VI use PATH on the MNCP of Sec. IV-B):
//!
//! `0 ≤ a ⊥ b ≥ 0  ⇔  φ(a, b) = a + b − √(a² + b²) = 0`.
//!
//! φ is semismooth; away from the origin its gradient is `(1 − a/r, 1 − b/r)`, `r = √(a²+b²)`.
//! At the origin we take the element of Clarke's generalized Jacobian along the direction
//! `(1, 1)/√2`, `(1 − 1/√2, 1 − 1/√2)` (Facchinei & Pang, Sec. 9.1).

/// `φ(a, b) = a + b − √(a² + b²)`, zero exactly when `a ≥ 0`, `b ≥ 0` and `a b = 0`.
pub fn fischer_burmeister(a: f64, b: f64) -> f64 {
    // hypot avoids overflow and keeps the cancellation near the axes accurate.
    a + b - a.hypot(b)
}

/// An element `(∂φ/∂a, ∂φ/∂b)` of the generalized Jacobian of [`fischer_burmeister`].
pub fn fischer_burmeister_gradient(a: f64, b: f64) -> (f64, f64) {
    let r = a.hypot(b);
    if r > 0.0 {
        (1.0 - a / r, 1.0 - b / r)
    } else {
        let g = 1.0 - std::f64::consts::FRAC_1_SQRT_2;
        (g, g)
    }
}

/// The smoothed `φ_ε(a, b) = a + b − √(a² + b² + 2ε²)` (Kanzow 1996), zero exactly when
/// `a > 0`, `b > 0` and `a b = ε²`; smooth for ε > 0, [`fischer_burmeister`] at ε = 0.
pub fn smoothed_fischer_burmeister(a: f64, b: f64, smoothing: f64) -> f64 {
    if smoothing == 0.0 {
        return fischer_burmeister(a, b);
    }
    a + b - (a * a + b * b + 2.0 * smoothing * smoothing).sqrt()
}

/// The gradient `(∂φ_ε/∂a, ∂φ_ε/∂b)` of [`smoothed_fischer_burmeister`];
/// [`fischer_burmeister_gradient`] at ε = 0.
pub fn smoothed_fischer_burmeister_gradient(a: f64, b: f64, smoothing: f64) -> (f64, f64) {
    if smoothing == 0.0 {
        return fischer_burmeister_gradient(a, b);
    }
    let r = (a * a + b * b + 2.0 * smoothing * smoothing).sqrt();
    (1.0 - a / r, 1.0 - b / r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_exactly_on_the_complementarity_set() {
        assert_eq!(fischer_burmeister(0.0, 3.0), 0.0);
        assert_eq!(fischer_burmeister(2.0, 0.0), 0.0);
        assert!(fischer_burmeister(1.0, 1.0) > 0.0);
        assert!(fischer_burmeister(-1.0, 2.0) < 0.0);
        assert!(fischer_burmeister(2.0, -1.0) < 0.0);
    }

    #[test]
    fn smoothed_zeros_are_the_central_path() {
        let eps = 1e-2;
        // a b = ε² with a, b > 0 is a zero; the exact function at ε = 0.
        assert!(smoothed_fischer_burmeister(0.5, 2e-4, eps).abs() < 1e-15);
        assert!(smoothed_fischer_burmeister(0.0, 3.0, eps) < 0.0);
        assert_eq!(
            smoothed_fischer_burmeister(0.3, -0.7, 0.0),
            fischer_burmeister(0.3, -0.7)
        );
        let h = 1e-6;
        for (a, b) in [(0.0, 0.0), (0.3, -0.7), (-0.5, -0.1)] {
            let (ga, gb) = smoothed_fischer_burmeister_gradient(a, b, eps);
            let f = |a, b| smoothed_fischer_burmeister(a, b, eps);
            let fa = (f(a + h, b) - f(a - h, b)) / (2.0 * h);
            let fb = (f(a, b + h) - f(a, b - h)) / (2.0 * h);
            assert!((ga - fa).abs() < 1e-7 && (gb - fb).abs() < 1e-7);
        }
    }

    #[test]
    fn gradient_matches_central_differences_away_from_the_origin() {
        let h = 1e-6;
        for (a, b) in [(0.3, -0.7), (1.0, 2.0), (-0.5, -0.1)] {
            let (ga, gb) = fischer_burmeister_gradient(a, b);
            let fa = (fischer_burmeister(a + h, b) - fischer_burmeister(a - h, b)) / (2.0 * h);
            let fb = (fischer_burmeister(a, b + h) - fischer_burmeister(a, b - h)) / (2.0 * h);
            assert!((ga - fa).abs() < 1e-8 && (gb - fb).abs() < 1e-8);
        }
    }
}
