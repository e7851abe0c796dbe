//! Maximum power dissipation over an ellipsoidal limit surface, with the torsional moment
//! (Xie & Chakraborty Sec. III-C, eqs. (4)-(6), (9); Howe & Cutkosky 1996).
//!
//! The contact wrench at the ECP — friction impulses `p_t, p_o` along the tangents `t, o` and
//! the moment impulse `p_r` about the normal `n` — maximizes the dissipated power
//! `−(v_t p_t + v_o p_o + v_r p_r)` over the ellipsoid (eq. (6))
//!
//! `(p_t/e_t)² + (p_o/e_o)² + (p_r/e_r)² ≤ (μ p_n)²`,
//!
//! where `v_t = W_tᵀν⁺`, `v_o = W_oᵀν⁺` are the sliding velocities of the ECP and
//! `v_r = W_rᵀν⁺` the relative spin about the normal, all at the end of the step. Its
//! Fritz-John conditions (eq. (9)) with multiplier σ are
//!
//! ```text
//! 0 = e_t² μ p_n v_t + p_t σ
//! 0 = e_o² μ p_n v_o + p_o σ
//! 0 = e_r² μ p_n v_r + p_r σ
//! 0 ≤ σ ⊥ (μ p_n)² − (p_t/e_t)² − (p_o/e_o)² − (p_r/e_r)² ≥ 0
//! ```
//!
//! While sliding the wrench lies on the ellipsoid and `σ = √(e_t² v_t² + e_o² v_o² + e_r² v_r²)`;
//! for pure translation `‖(p_t, p_o)‖ = e_t μ p_n` when `e_t = e_o`, so `e_t = e_o = 1` gives
//! Coulomb's law. `e_r` (m) is the largest moment per unit friction force the patch can hold:
//! for a uniform pressure on a disc of radius a it is `2a/3`.

use crate::error::{Error, Result};
use crate::scalar::{lit, Scalar};

/// The friction ellipsoid of a contact (eq. (6)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrictionEllipsoid {
    /// Coefficient of friction μ (≥ 0).
    pub mu: f64,
    /// Semi-axis e_t of the tangential force (dimensionless, > 0), nominal 1.
    pub e_t: f64,
    /// Semi-axis e_o of the other tangential force (dimensionless, > 0), nominal 1.
    pub e_o: f64,
    /// Semi-axis e_r of the moment about the normal (m, > 0).
    pub e_r: f64,
}

impl Default for FrictionEllipsoid {
    /// μ = 0.5, `e_t = e_o = 1` (Coulomb for translation), `e_r = 0.01` m.
    fn default() -> Self {
        FrictionEllipsoid {
            mu: 0.5,
            e_t: 1.0,
            e_o: 1.0,
            e_r: 0.01,
        }
    }
}

impl FrictionEllipsoid {
    /// Checks `μ ≥ 0` and `e_t, e_o, e_r > 0`, all finite.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming the offending semi-axis.
    pub fn validate(&self) -> Result<()> {
        if !(self.mu >= 0.0 && self.mu.is_finite()) {
            return Err(Error::invalid("mu", self.mu, "must be finite and ≥ 0"));
        }
        for (name, x) in [("e_t", self.e_t), ("e_o", self.e_o), ("e_r", self.e_r)] {
            if !(x > 0.0 && x.is_finite()) {
                return Err(Error::invalid(
                    name,
                    x,
                    "friction ellipsoid semi-axes must be positive and finite",
                ));
            }
        }
        Ok(())
    }

    /// The three equations of eq. (9) (N·s·m/s = J units, per unit of σ):
    /// `e_k² μ p_n v_k + p_k σ` for `k = t, o, r`.
    ///
    /// `p = (p_n, p_t, p_o, p_r)` (N·s, N·s, N·s, N·m·s), `v = (v_t, v_o, v_r)` (m/s, m/s, rad/s).
    pub fn maximum_dissipation<T: Scalar>(&self, p: &[T; 4], v: &[T; 3], sigma: T) -> [T; 3] {
        let mu: T = lit(self.mu);
        let e = [self.e_t, self.e_o, self.e_r].map(|e| lit::<T>(e * e));
        [
            e[0] * mu * p[0] * v[0] + p[1] * sigma,
            e[1] * mu * p[0] * v[1] + p[2] * sigma,
            e[2] * mu * p[0] * v[2] + p[3] * sigma,
        ]
    }

    /// The limit-surface slack `(μ p_n)² − (p_t/e_t)² − (p_o/e_o)² − (p_r/e_r)²` ((N·s)²),
    /// complementary to σ in eq. (9).
    pub fn limit_surface_slack<T: Scalar>(&self, p: &[T; 4]) -> T {
        let mu: T = lit(self.mu);
        let (et, eo, er): (T, T, T) = (lit(self.e_t), lit(self.e_o), lit(self.e_r));
        let mpn = mu * p[0];
        let (a, b, c) = (p[1] / et, p[2] / eo, p[3] / er);
        mpn * mpn - a * a - b * b - c * c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sliding: the wrench from eq. (9) with σ the weighted slip speed lies on the ellipsoid
    /// and opposes the motion.
    #[test]
    fn sliding_wrench_lies_on_the_ellipsoid_and_opposes_motion() {
        let e = FrictionEllipsoid {
            mu: 0.4,
            e_t: 1.0,
            e_o: 0.8,
            e_r: 0.05,
        };
        let p_n = 2.0;
        let v = [0.3, -0.2, 1.5];
        let sigma = (e.e_t.powi(2) * v[0] * v[0]
            + e.e_o.powi(2) * v[1] * v[1]
            + e.e_r.powi(2) * v[2] * v[2])
            .sqrt();
        let k = [e.e_t, e.e_o, e.e_r];
        let p = [
            p_n,
            -k[0] * k[0] * e.mu * p_n * v[0] / sigma,
            -k[1] * k[1] * e.mu * p_n * v[1] / sigma,
            -k[2] * k[2] * e.mu * p_n * v[2] / sigma,
        ];
        let r = e.maximum_dissipation(&p, &v, sigma);
        assert!(r.iter().all(|x| x.abs() < 1e-14));
        assert!(e.limit_surface_slack(&p).abs() < 1e-12);
        let power: f64 = (0..3).map(|i| v[i] * p[i + 1]).sum();
        assert!(power < 0.0);
    }

    #[test]
    fn invalid_semi_axes_are_rejected() {
        let e = FrictionEllipsoid {
            e_r: 0.0,
            ..Default::default()
        };
        assert!(e.validate().is_err());
    }
}
