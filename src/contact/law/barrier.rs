//! IPC's log barrier as a normal law (ICF Sec. IV-B, eqs. (11)-(12)).
//!
//! In the gap `g = −x` (m), the potential is `b(g) = −κ (d̂ − g)² ln(g/d̂)` for `0 < g < d̂`
//! and zero beyond `d̂` (eq. (11)), and the force is its slope,
//! `f_n = −b'(g) = κ (d̂ − g) [(d̂ − g)/g − 2 ln(g/d̂)]` (eq. (12) with the gap `g = −x`
//! written out; it grows without bound as `g → 0`). `∂f/∂x = b''(g) =
//! −2κ ln(g/d̂) + 2κ(d̂ − g)/g + κ(d̂ − g)(d̂ + g)/g² ≥ 0` and `∂f/∂ẋ = 0` for `κ > 0`, so the
//! discrete potential is convex (eq. (8)); the law is elastic (dissipation does not apply).
//!
//! Discretized as eq. (6) with the gap at the end of the step `g = −x0 + δt v_n`: the
//! potential is `−N(v_n) = b(g)`, the impulse `n = δt f_n(g)` and `n' = −δt² b''(g)`, all zero
//! for `v_n ≥ v̂ = (d̂ + x0)/δt` (b is C² at `d̂`). The convex step needs a potential defined
//! for every trial velocity of Newton's iterations, including those that would close the gap:
//! below `g_c = d̂ ·` [`BARRIER_FLOOR`] the potential continues as its second-order expansion at
//! `g_c` (convex, C²), where the force, already `≈ κ d̂/BARRIER_FLOOR`, keeps growing linearly.

use crate::contact::law::{NormalEval, NormalLaw};
use crate::scalar::{lit, Scalar};

/// The gap below which the barrier continues quadratically, as a fraction of `d̂`.
pub const BARRIER_FLOOR: f64 = 1e-3;

/// The barrier discretized at step `δt` from previous penetration `x0` (a gap `−x0`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Barrier<T: Scalar> {
    /// κ (N/m).
    pub stiffness: T,
    /// Activation gap d̂ (m).
    pub distance: T,
    /// Previous penetration `x0 = −φ0` (m).
    pub x0: T,
    /// Time step δt (s).
    pub dt: T,
    /// The velocity `v̂ = (d̂ + x0)/δt` above which the impulse vanishes (m/s).
    pub v_hat: T,
}

/// `b(g)`, `b'(g)` and `b''(g)` of eq. (11), continued quadratically below `g_c`.
struct BarrierValue<T> {
    value: T,
    slope: T,
    curvature: T,
}

impl<T: Scalar> Barrier<T> {
    /// The barrier of strength κ (N/m) acting below the gap `d̂` (m), at previous
    /// penetration `x0` (m) and step `dt` (s).
    pub fn new(stiffness: T, distance: T, x0: T, dt: T) -> Self {
        Barrier {
            stiffness,
            distance,
            x0,
            dt,
            v_hat: (distance + x0) / dt,
        }
    }

    /// `b`, `b'`, `b''` at gap `g < d̂`.
    fn at(&self, g: T) -> BarrierValue<T> {
        let g_c = self.distance * lit::<T>(BARRIER_FLOOR);
        if g.re() < g_c.re() {
            let c = self.exact(g_c);
            let dg = g - g_c;
            let half: T = lit(0.5);
            return BarrierValue {
                value: c.value + c.slope * dg + half * c.curvature * dg * dg,
                slope: c.slope + c.curvature * dg,
                curvature: c.curvature,
            };
        }
        self.exact(g)
    }

    /// Eq. (11) and its derivatives at `g_c ≤ g < d̂`.
    fn exact(&self, g: T) -> BarrierValue<T> {
        let (kappa, d_hat) = (self.stiffness, self.distance);
        let two: T = lit(2.0);
        let rest = d_hat - g;
        let log = (g / d_hat).ln();
        BarrierValue {
            value: -kappa * rest * rest * log,
            slope: two * kappa * rest * log - kappa * rest * rest / g,
            curvature: -two * kappa * log
                + two * kappa * rest / g
                + kappa * rest * (d_hat + g) / (g * g),
        }
    }
}

impl<T: Scalar> NormalLaw<T> for Barrier<T> {
    fn force(&self, x: T, _xdot: T) -> T {
        let g = -x;
        if g.re() >= self.distance.re() {
            return T::zero();
        }
        -self.at(g).slope
    }

    #[inline(always)]
    fn discrete(&self, v_n: T) -> NormalEval<T> {
        // Active piece chosen on the real part; the derivative is that of the active piece.
        if v_n.re() >= self.v_hat.re() {
            return NormalEval {
                antiderivative: T::zero(),
                impulse: T::zero(),
                impulse_derivative: T::zero(),
            };
        }
        let b = self.at(-self.x0 + self.dt * v_n);
        NormalEval {
            antiderivative: -b.value,
            impulse: -self.dt * b.slope,
            impulse_derivative: -self.dt * self.dt * b.curvature,
        }
    }

    #[inline(always)]
    fn x0(&self) -> T {
        self.x0
    }

    /// The tangent at the gap `−x0`: `k̃ = b''`, `x̃0 = −b'/b''`; no stiffness beyond `d̂`.
    fn linearized(&self) -> (T, T) {
        let g = -self.x0;
        if g.re() >= self.distance.re() {
            return (T::zero(), T::zero());
        }
        let b = self.at(g);
        (b.curvature, -b.slope / b.curvature)
    }

    #[inline(always)]
    fn release_velocity(&self) -> T {
        self.v_hat
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::testing::{check_discrete_law, check_models_with_law};
    use crate::contact::{ContactParams, NormalLawKind};
    use num_dual::Dual64;

    const D_HAT: f64 = 1e-3;

    fn barrier(p: &ContactParams<f64>) -> ContactParams<f64> {
        ContactParams {
            law: NormalLawKind::Barrier,
            barrier_distance: D_HAT,
            ..*p
        }
    }

    #[test]
    fn force_is_the_slope_of_eq_11_and_grows_without_bound() {
        let law = Barrier::<f64>::new(1e4, D_HAT, 0.0, 1e-3);
        let energy = |g: f64| -1e4 * (D_HAT - g).powi(2) * (g / D_HAT).ln();
        for &g in &[5e-4, 1e-4, 1e-5, 2e-6] {
            let h = 1e-4 * g;
            let slope = (energy(g + h) - energy(g - h)) / (2.0 * h);
            assert!(
                (law.force(-g, 0.0) + slope).abs() < 1e-6 * slope.abs(),
                "g {g}"
            );
        }
        assert_eq!(law.force(-D_HAT, 0.0), 0.0);
        assert_eq!(law.force(-2.0 * D_HAT, 0.0), 0.0);
        // ≈ κ d̂²/g as g → 0, continued linearly below g_c.
        let f = |g: f64| law.force(-g, 0.0);
        assert!(f(1e-5) > 0.9 * 1e4 * D_HAT * D_HAT / 1e-5);
        assert!(f(1e-7) > f(1e-6) && f(0.0) > f(1e-7) && f(1e-5) > 0.0);
    }

    #[test]
    fn impulse_is_derivative_of_antiderivative() {
        for &x0 in &[-5e-4_f64, -2e-6, -1e-9, 1e-5] {
            let law = |v: Dual64| {
                Barrier::new(
                    Dual64::from(1e4),
                    Dual64::from(D_HAT),
                    Dual64::from(x0),
                    Dual64::from(1e-3),
                )
                .discrete(v)
            };
            check_discrete_law(
                law,
                (0..81).map(|i| -0.4 + 0.01 * i as f64),
                1e-8,
                &format!("x0 {x0}"),
            );
        }
    }

    #[test]
    fn lagged_similar_and_sap_with_the_barrier_are_convex_with_exact_impulses() {
        for &x0 in &[-9e-4, -2e-4, -1e-5, -1e-7, 5e-6] {
            check_models_with_law!(x0, barrier);
        }
    }
}
