//! One-dimensional constraints of the convex problem (SAP paper Sec. V; DESIGN "Constraints
//! in the convex problem"): joint limits, couplers, PD servos and joint friction, each a row
//! `v_c = Σ_k c_k v_k` with a regularization `R > 0`, a bias `v̂` and a closed impulse set
//! `[γ_lo, γ_hi]` (ℝ, ℝ₊ or a box).
//!
//! The impulse is the projection `γ = P(y)`, `y = −(v_c − v̂)/R`, onto the set, and the row
//! adds to the cost
//!
//! ```text
//!   ℓ(v_c) = −min_{γ ∈ [γ_lo, γ_hi]} (½ R γ² + γ (v_c − v̂)) = R γ y − ½ R γ²,
//! ```
//!
//! convex in `v_c` with `∂ℓ/∂v_c = −γ` (so the momentum balance gains `cᵀγ`, as a contact's
//! `J_iᵀγ_i`) and `∂²ℓ/∂v_c² = 1/R` where `γ` is inside the set, zero where it is clamped.
//! For ℝ₊ this is SAP's `½ R (y)₊²`; for a box it is Huber-like (linear beyond the bounds).

#![allow(non_snake_case)]

use crate::scalar::{lit, Scalar};

/// What a [`ConstraintRow`] models; reports name rows by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConstraintKind {
    /// The lower position limit of a joint velocity (its index).
    LowerLimit(usize),
    /// The upper position limit of a joint velocity (its index).
    UpperLimit(usize),
    /// Coupler `index` of the model.
    Coupler(usize),
    /// The position servo of actuator `index`.
    Servo(usize),
    /// Coulomb friction on a joint velocity (its index).
    Friction(usize),
}

/// One constraint row of the convex problem; see the module docs.
#[derive(Clone, Debug)]
pub struct ConstraintRow<T: Scalar> {
    /// What it models.
    pub kind: ConstraintKind,
    /// `(velocity index, coefficient c_k)`: `v_c = Σ c_k v_k` (m/s or rad/s).
    pub entries: Vec<(usize, T)>,
    /// Regularization R (> 0; s/kg or s/(kg·m²)).
    pub R: T,
    /// Bias v̂ (m/s or rad/s).
    pub v_hat: T,
    /// Lowest impulse (N·s or N·m·s), `None` for −∞.
    pub lower: Option<T>,
    /// Highest impulse, `None` for +∞.
    pub upper: Option<T>,
}

/// Cost, impulse and curvature of one row at its constraint velocity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowEval<T: Scalar> {
    /// ℓ (J).
    pub cost: T,
    /// γ = −∂ℓ/∂v_c (N·s or N·m·s).
    pub gamma: T,
    /// `∂²ℓ/∂v_c² ≥ 0`: `1/R` inside the impulse set, zero on its bounds.
    pub G: T,
}

impl<T: Scalar> ConstraintRow<T> {
    /// `v_c = Σ c_k x_k`.
    pub fn velocity(&self, x: &[T]) -> T {
        self.entries
            .iter()
            .fold(T::zero(), |acc, &(k, c)| acc + c * x[k])
    }

    /// Cost, impulse and curvature at constraint velocity `v_c` (module docs).
    pub fn eval(&self, v_c: T) -> RowEval<T> {
        let y = (self.v_hat - v_c) / self.R;
        let (gamma, G) = match (self.lower, self.upper) {
            (Some(lo), _) if y.re() <= lo.re() => (lo, T::zero()),
            (_, Some(hi)) if y.re() >= hi.re() => (hi, T::zero()),
            _ => (y, T::one() / self.R),
        };
        let half: T = lit(0.5);
        RowEval {
            cost: self.R * gamma * (y - half * gamma),
            gamma,
            G,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(lower: Option<f64>, upper: Option<f64>) -> ConstraintRow<f64> {
        ConstraintRow {
            kind: ConstraintKind::Coupler(0),
            entries: vec![(0, 1.0), (2, -0.5)],
            R: 0.25,
            v_hat: 0.1,
            lower,
            upper,
        }
    }

    /// γ = −∂ℓ/∂v_c and G = ∂γ/∂(−v_c) by central differences, inside and on both sides of
    /// a box, on ℝ₊ and on ℝ; the cost is continuous across the bounds.
    #[test]
    fn impulse_and_curvature_are_the_derivatives_of_the_cost() {
        let h = 1e-6;
        for r in [
            row(None, None),
            row(Some(0.0), None),
            row(Some(-0.3), Some(0.2)),
        ] {
            for v_c in [-1.0, -0.2, 0.0, 0.07, 0.12, 0.3, 1.0] {
                let e = r.eval(v_c);
                let (p, m) = (r.eval(v_c + h), r.eval(v_c - h));
                let dcost = (p.cost - m.cost) / (2.0 * h);
                assert!((e.gamma + dcost).abs() < 1e-8, "{r:?} at {v_c}: {e:?}");
                let dgamma = -(p.gamma - m.gamma) / (2.0 * h);
                assert!((e.G - dgamma).abs() < 1e-6, "{r:?} at {v_c}: {e:?}");
                assert!(r.lower.is_none_or(|lo| e.gamma >= lo));
                assert!(r.upper.is_none_or(|hi| e.gamma <= hi));
            }
        }
    }

    /// On ℝ the row is the quadratic `(v_c − v̂)²/(2R)`; on ℝ₊ it vanishes once the
    /// constraint velocity exceeds the bias (the limit is not pushed).
    #[test]
    fn closed_forms() {
        let e = row(None, None).eval(0.5);
        assert!((e.cost - 0.4f64.powi(2) / 0.5).abs() < 1e-15);
        assert!((e.gamma + 0.4 / 0.25).abs() < 1e-15 && e.G == 4.0);
        let e = row(Some(0.0), None).eval(0.5);
        assert_eq!((e.cost, e.gamma, e.G), (0.0, 0.0, 0.0));
        assert_eq!(row(None, None).velocity(&[2.0, 7.0, 1.0]), 1.5);
    }
}
