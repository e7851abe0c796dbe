//! Hertz's law for a sphere with Hunt & Crossley dissipation (ICF Sec. IV-C names it as an
//! instance of eq. (5)): `f_n = k_H x₊^{3/2} (1 + d ẋ)₊` with `k_H = (4/3) E* √R`, so a
//! sphere of radius `R` pressed with force `F` on a flat sinks
//! `δ = (9F²/(16 E*² R))^{1/3}` (Johnson, *Contact Mechanics*, eq. (4.23)).
//!
//! Discretized as eq. (6) with `s = x0 − δt v_n` (the penetration at the end of the step):
//! `n(v_n) = δt k_H s^{3/2} (1 − d v_n)` for `v_n < v̂ = min(x0/δt, 1/d)` (eq. (16)'s clamp),
//! zero above. Its antiderivative, by parts,
//! `N⁺(v_n) = −(2k_H/5) s^{5/2} (1 − d v_n) + (4 k_H d/(35 δt)) s^{7/2}`, vanishes at `s = 0`.
//! `∂f/∂x = (3/2) k_H √x (1 + dẋ) ≥ 0` and `∂f/∂ẋ = k_H x^{3/2} d ≥ 0` for `E* > 0`, `d ≥ 0`,
//! so the potential is convex (eq. (8)).

use crate::contact::law::{NormalEval, NormalLaw};
use crate::scalar::{lit, Scalar};

/// Hertz's law discretized at step `δt` from previous penetration `x0`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hertz<T: Scalar> {
    /// `k_H = (4/3) E* √R` (N/m^{3/2}).
    pub stiffness: T,
    /// Dissipation d (s/m).
    pub dissipation: T,
    /// Previous penetration `x0 = −φ0` (m).
    pub x0: T,
    /// Time step δt (s).
    pub dt: T,
    /// The velocity `v̂ = min(x0/δt, 1/d)` above which the impulse vanishes (m/s).
    pub v_hat: T,
}

impl<T: Scalar> Hertz<T> {
    /// The law for effective modulus `E*` (Pa), effective radius `R` (m), dissipation `d`
    /// (s/m), previous penetration `x0` (m) and step `dt` (s).
    pub fn new(modulus: T, radius: T, dissipation: T, x0: T, dt: T) -> Self {
        let v_elastic = x0 / dt;
        // Real-part branch: with d = 0 only the elastic bound exists.
        let v_hat = if dissipation.re() > 0.0 {
            v_elastic.min(T::one() / dissipation)
        } else {
            v_elastic
        };
        Hertz {
            stiffness: lit::<T>(4.0 / 3.0) * modulus * radius.sqrt(),
            dissipation,
            x0,
            dt,
            v_hat,
        }
    }

    /// `N⁺(v_n)`, see the module docs; zero where the end penetration `s` is not positive
    /// (which also keeps `√s`'s infinite derivative at `s = 0` out of dual numbers).
    fn antiderivative_plus(&self, v_n: T) -> T {
        let s = self.x0 - self.dt * v_n;
        if s.re() <= 0.0 {
            return T::zero();
        }
        let s52 = s * s * s.sqrt();
        let two_fifths: T = lit(0.4);
        let four_35ths: T = lit(4.0 / 35.0);
        -two_fifths * self.stiffness * s52 * (T::one() - self.dissipation * v_n)
            + four_35ths * self.stiffness * self.dissipation / self.dt * s52 * s
    }
}

impl<T: Scalar> NormalLaw<T> for Hertz<T> {
    fn force(&self, x: T, xdot: T) -> T {
        // Apart, zero: √x's infinite derivative at 0 would make dual parts NaN.
        if x.re() <= 0.0 {
            return T::zero();
        }
        self.stiffness * x * x.sqrt() * (T::one() + self.dissipation * xdot).max(T::zero())
    }

    #[inline(always)]
    fn discrete(&self, v_n: T) -> NormalEval<T> {
        let v_hat = self.v_hat;
        let s = self.x0 - self.dt * v_n;
        // Active piece chosen on the real part; the derivative is that of the active piece.
        if v_n.re() >= v_hat.re() || s.re() <= 0.0 {
            return NormalEval {
                antiderivative: self.antiderivative_plus(v_hat),
                impulse: T::zero(),
                impulse_derivative: T::zero(),
            };
        }
        let root = s.sqrt();
        let damping = T::one() - self.dissipation * v_n;
        let three_halves: T = lit(1.5);
        NormalEval {
            antiderivative: self.antiderivative_plus(v_n),
            impulse: self.dt * self.stiffness * s * root * damping,
            impulse_derivative: -self.dt
                * self.stiffness
                * root
                * (three_halves * self.dt * damping + self.dissipation * s),
        }
    }

    #[inline(always)]
    fn x0(&self) -> T {
        self.x0
    }

    /// The tangent at `x0`: `k̃ = (3/2) k_H √x0`, `x̃0 = x0/(3/2)`; no stiffness apart.
    fn linearized(&self) -> (T, T) {
        if self.x0.re() <= 0.0 {
            return (T::zero(), T::zero());
        }
        let three_halves: T = lit(1.5);
        (
            three_halves * self.stiffness * self.x0.sqrt(),
            self.x0 / three_halves,
        )
    }

    #[inline(always)]
    fn release_velocity(&self) -> T {
        self.v_hat
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::testing::{
        check_discrete_law, check_models_with_law, dissipative_velocities, DISSIPATIVE_CASES,
    };
    use crate::contact::{ContactParams, NormalLawKind};
    use num_dual::Dual64;

    fn hertz(p: &ContactParams<f64>) -> ContactParams<f64> {
        ContactParams {
            law: NormalLawKind::Hertz,
            hertz_radius: 0.05,
            ..*p
        }
    }

    #[test]
    fn impulse_is_derivative_of_antiderivative_on_both_sides_of_v_hat() {
        for (x0, d) in DISSIPATIVE_CASES {
            let law = |v: Dual64| {
                Hertz::new(
                    Dual64::from(2e9),
                    Dual64::from(0.05),
                    Dual64::from(d),
                    Dual64::from(x0),
                    Dual64::from(1e-3),
                )
                .discrete(v)
            };
            check_discrete_law(law, dissipative_velocities(), 1e-9, &format!("x0 {x0}"));
        }
    }

    #[test]
    fn discrete_impulse_is_force_at_the_implicit_state() {
        let law = Hertz::<f64>::new(2e9, 0.05, 500.0, 1e-6, 1e-3);
        let v_n = -1e-4;
        let expected = 1e-3 * law.force(1e-6 - 1e-3 * v_n, -v_n);
        assert!((law.discrete(v_n).impulse - expected).abs() < 1e-12 * expected);
        // Hertz's sphere: F = (4/3) E* √R δ^{3/2}.
        let delta: f64 = 1e-5;
        let f = (4.0 / 3.0) * 2e9 * 0.05_f64.sqrt() * delta.powf(1.5);
        assert!((law.force(delta, 0.0) - f).abs() < 1e-12 * f);
    }

    #[test]
    fn linearization_reproduces_the_force_and_its_slope() {
        let law = Hertz::<f64>::new(2e9, 0.05, 0.0, 2e-6, 1e-3);
        let (k, x) = law.linearized();
        assert!((k * x - law.force(2e-6, 0.0)).abs() < 1e-12 * k * x);
        let h = 1e-10;
        let slope = (law.force(2e-6 + h, 0.0) - law.force(2e-6 - h, 0.0)) / (2.0 * h);
        assert!((k - slope).abs() < 1e-6 * k);
        assert_eq!(
            Hertz::<f64>::new(2e9, 0.05, 0.0, -1e-6, 1e-3)
                .linearized()
                .0,
            0.0
        );
    }

    #[test]
    fn lagged_similar_and_sap_with_hertz_are_convex_with_exact_impulses() {
        for &x0 in &[1e-6, 2e-4, -1e-4, 0.0] {
            check_models_with_law!(x0, hertz);
        }
    }
}
