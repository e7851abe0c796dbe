//! The linear Hunt & Crossley law (ICF eq. (13)) and its discrete potential in the stable
//! `f0` form (eqs. (15)-(16)).

use crate::contact::law::{LawParameters, NormalEval, NormalLaw};
use crate::scalar::{lit, Scalar};

/// Linear Hunt & Crossley law `f_n = k x₊ (1 + d ẋ)₊` (ICF eq. (13)), discretized at step
/// `δt` from previous penetration `x0`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HuntCrossley<T: Scalar> {
    /// Stiffness k (N/m).
    pub stiffness: T,
    /// Dissipation d (s/m).
    pub dissipation: T,
    /// Elastic force at the previous step `f0 = k x0` (N); negative for `x0 < 0`.
    pub f0: T,
    /// Previous penetration `x0 = −φ0` (m).
    pub x0: T,
    /// Time step δt (s).
    pub dt: T,
    /// The velocity `v̂ = min(x0/δt, 1/d)` above which the impulse vanishes (m/s, ICF
    /// eq. (16)).
    pub v_hat: T,
}

impl<T: Scalar> HuntCrossley<T> {
    /// The law for stiffness `k`, dissipation `d`, previous penetration `x0` and step `dt`.
    pub fn new(stiffness: T, dissipation: T, x0: T, dt: T) -> Self {
        let v_elastic = x0 / dt;
        // Real-part branch: with d = 0 only the elastic bound exists.
        let v_hat = if dissipation.re() > 0.0 {
            v_elastic.min(T::one() / dissipation)
        } else {
            v_elastic
        };
        HuntCrossley {
            stiffness,
            dissipation,
            f0: stiffness * x0,
            x0,
            dt,
            v_hat,
        }
    }

    /// The law of `params` (its `stiffness` and `dissipation`).
    pub fn from_params(params: &impl LawParameters<T>, x0: T, dt: T) -> Self {
        Self::new(params.stiffness(), params.dissipation(), x0, dt)
    }

    /// `N⁺(v_n; f0)` in the stable form of ICF eq. (15), `Δf = −δt k v_n`.
    fn antiderivative_plus(&self, v_n: T) -> T {
        let df = -self.dt * self.stiffness * v_n;
        let half: T = lit(0.5);
        let two_thirds: T = lit(2.0 / 3.0);
        self.dt
            * (v_n * (self.f0 + half * df)
                - self.dissipation * v_n * v_n * half * (self.f0 + two_thirds * df))
    }
}

impl<T: Scalar> NormalLaw<T> for HuntCrossley<T> {
    fn force(&self, x: T, xdot: T) -> T {
        let elastic = (self.stiffness * x).max(T::zero());
        elastic * (T::one() + self.dissipation * xdot).max(T::zero())
    }

    /// ICF eqs. (6), (15), (16): for `v_n < v̂`, `n = δt (f0 + Δf)(1 − d v_n)`; above `v̂` the
    /// impulse is zero and `N = N⁺(v̂)`.
    #[inline(always)]
    fn discrete(&self, v_n: T) -> NormalEval<T> {
        let v_hat = self.v_hat;
        // Active piece chosen on the real part; the derivative is that of the active piece.
        if v_n.re() >= v_hat.re() {
            return NormalEval {
                antiderivative: self.antiderivative_plus(v_hat),
                impulse: T::zero(),
                impulse_derivative: T::zero(),
            };
        }
        let f = self.f0 - self.dt * self.stiffness * v_n;
        let damping = T::one() - self.dissipation * v_n;
        NormalEval {
            antiderivative: self.antiderivative_plus(v_n),
            impulse: self.dt * f * damping,
            impulse_derivative: -self.dt
                * (self.dt * self.stiffness * damping + self.dissipation * f),
        }
    }

    #[inline(always)]
    fn x0(&self) -> T {
        self.x0
    }

    /// Linear already: `(k, x0)`.
    #[inline(always)]
    fn linearized(&self) -> (T, T) {
        (self.stiffness, self.x0)
    }

    #[inline(always)]
    fn release_velocity(&self) -> T {
        self.v_hat
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::testing::{check_discrete_law, dissipative_velocities, DISSIPATIVE_CASES};
    use num_dual::Dual64;

    #[test]
    fn impulse_is_derivative_of_antiderivative_on_both_sides_of_v_hat() {
        for (x0, d) in DISSIPATIVE_CASES {
            let law = |v: Dual64| {
                HuntCrossley::new(
                    Dual64::from(1e7),
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
        let law = HuntCrossley::<f64>::new(1e7, 500.0, 1e-6, 1e-3);
        let v_n = -1e-4;
        let n = law.discrete(v_n).impulse;
        let expected = 1e-3 * law.force(1e-6 - 1e-3 * v_n, -v_n);
        assert!((n - expected).abs() < 1e-15);
    }
}
