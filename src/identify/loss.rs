//! Loss on the whitened residuals `r_i = (ŷ_i − y_i)/σ_i`: the objective is
//! `L = Σ_i ρ(r_i)` with
//!
//! - squared: `ρ(r) = ½ r²`;
//! - Huber (threshold δ > 0): `ρ(r) = ½ r²` for `|r| ≤ δ`, `δ (|r| − ½ δ)` beyond, so that
//!   outliers count linearly rather than quadratically.
//!
//! Both solvers see a least-squares problem in the robustified residuals
//! `r̃_i = sign(r_i) √(2ρ(r_i))` (`L = ½ ‖r̃‖²`), whose derivative is
//! `dr̃/dr = ρ′(r)/r̃ = δ/√(2δ|r| − δ²)` beyond the threshold and 1 inside: continuous at
//! `|r| = δ`, so Gauss–Newton on `r̃` is iteratively reweighted least squares on `r`.

/// The loss `ρ`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Loss {
    /// `ρ(r) = ½ r²`.
    #[default]
    Squared,
    /// Huber's loss with threshold δ (in units of the noise level σ; 1.345 gives 95 %
    /// efficiency on Gaussian noise).
    Huber {
        /// δ > 0.
        threshold: f64,
    },
}

impl Loss {
    /// `(r̃, dr̃/dr)` for a whitened residual `r`.
    pub fn robustify(&self, r: f64) -> (f64, f64) {
        match *self {
            Loss::Huber { threshold } if r.abs() > threshold => {
                let root = (2.0 * threshold * r.abs() - threshold * threshold).sqrt();
                (r.signum() * root, threshold / root)
            }
            _ => (r, 1.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huber_is_half_square_inside_and_linear_outside() {
        let huber = Loss::Huber { threshold: 1.5 };
        let rho = |r: f64| 0.5 * huber.robustify(r).0.powi(2);
        assert_eq!(rho(1.0), 0.5);
        assert!((rho(-4.0) - 1.5 * (4.0 - 0.75)).abs() < 1e-14);
        // dr̃/dr against a central difference, on both sides of the threshold.
        for r in [-3.0, 0.7, 1.5001, 10.0] {
            let h = 1e-7;
            let fd = (huber.robustify(r + h).0 - huber.robustify(r - h).0) / (2.0 * h);
            assert!((huber.robustify(r).1 - fd).abs() < 1e-6, "r = {r}");
        }
        assert_eq!(Loss::Squared.robustify(-7.0), (-7.0, 1.0));
    }
}
