//! The Lagged model (ICF Sec. VI-B, eqs. (29)-(33)) and its regularized variant (eq. (44)).
//!
//! `ℓ(v_c) = −N(v_n) + μ γ_n0 ‖v_t‖_s` with the normal impulse lagged in friction:
//! `γ_n0 = δt f_n(x0, −v_n0)` from the previous step's normal velocity. Separable (eq. (31)):
//! `γ_n = n(v_n)`, `γ_t = −μ γ_n0 t̂_s`, Hessian `diag(μ γ_n0 P⊥(t̂_s)/(‖v_t‖_s + ε), −n'(v_n))`.
#![allow(non_snake_case)]

use nalgebra::{Matrix3, Vector2, Vector3};

use crate::contact::law::{HuntCrossley, NormalLaw};
use crate::contact::params::ContactParams;
use crate::contact::potential::{ContactPotential, PotentialEval};
use crate::math::soft_norm;
use crate::scalar::Scalar;

/// One Lagged contact with the normal law `L` (Hunt & Crossley unless the pair asks for
/// another, [`crate::contact::law`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lagged<T: Scalar, L = HuntCrossley<T>> {
    /// The discretized normal law.
    pub normal: L,
    /// Friction coefficient μ.
    pub mu: T,
    /// Lagged normal impulse `γ_n0 = δt f_n(x0, −v_n0)` (N·s), ICF eq. (29).
    pub gamma_n0: T,
    /// Soft-norm regularization ε (m/s): `v_s`, or eq. (44)'s `max(v_s, σ w μ γ_n0)`.
    pub eps: T,
}

impl<T: Scalar, L: NormalLaw<T>> Lagged<T, L> {
    /// Lagged contact with the `normal` law (discretized at the contact's previous penetration
    /// `x0`), previous normal velocity `v_n0` (m/s) and step `dt` (s); `ε = v_s`.
    pub fn new(normal: L, params: &ContactParams<T>, v_n0: T, dt: T) -> Self {
        let gamma_n0 = dt * normal.force(normal.x0(), -v_n0);
        Lagged {
            normal,
            mu: params.mu,
            gamma_n0,
            eps: params.stiction_tolerance,
        }
    }

    /// Regularized Lagged contact, ICF eq. (44): `ε = max(v_s, σ w μ γ_n0)` with `w` the
    /// contact's Delassus estimate (1/kg).
    pub fn regularized(normal: L, params: &ContactParams<T>, v_n0: T, dt: T, w: T) -> Self {
        let mut contact = Self::new(normal, params, v_n0, dt);
        contact.eps = contact
            .eps
            .max(params.sigma * w * contact.mu * contact.gamma_n0);
        contact
    }

    /// The same contact with the law `normal`.
    pub fn with_law<M>(&self, normal: M) -> Lagged<T, M> {
        Lagged {
            normal,
            mu: self.mu,
            gamma_n0: self.gamma_n0,
            eps: self.eps,
        }
    }
}

impl<T: Scalar, L: NormalLaw<T>> ContactPotential<T> for Lagged<T, L> {
    /// ICF eqs. (31), (33).
    #[inline(always)]
    fn eval(&self, v_c: &Vector3<T>) -> PotentialEval<T> {
        let n = self.normal.discrete(v_c.z);
        let s = soft_norm(&Vector2::new(v_c.x, v_c.y), self.eps);
        let mu_gn0 = self.mu * self.gamma_n0;
        let gt = -s.unit * mu_gn0;
        let Ht = s.hessian * mu_gn0;
        let z = T::zero();
        #[rustfmt::skip]
        let G = Matrix3::new(
            Ht[(0, 0)], Ht[(0, 1)], z,
            Ht[(1, 0)], Ht[(1, 1)], z,
            z, z, -n.impulse_derivative,
        );
        PotentialEval {
            cost: -n.antiderivative + mu_gn0 * s.value,
            gamma: Vector3::new(gt.x, gt.y, n.impulse),
            G,
        }
    }

    /// Friction lags a zero impulse (`γ_n0 = 0`, apart at the start of the step): the cost is
    /// the normal term alone, constant from the law's `v̂` on.
    fn open_above(&self) -> Option<T> {
        (self.gamma_n0.re() == 0.0).then(|| self.normal.release_velocity())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::testing::{check_potential, hunt_crossley};
    use crate::scalar::lit;

    #[test]
    fn lagged_impulse_is_minus_gradient_and_hessian_matches_hyperduals() {
        for &(x0, v_n0) in &[(1e-6, 0.0), (1e-5, -0.3), (-1e-4, -0.5), (2e-4, 0.01)] {
            check_potential!(x0, |p, dt| Lagged::new(
                hunt_crossley(&p.cast(), lit(x0), dt),
                &p.cast(),
                lit(v_n0),
                dt
            ));
        }
    }

    #[test]
    fn regularized_lagged_impulse_is_minus_gradient_and_hessian_matches_hyperduals() {
        check_potential!(1e-5, |p, dt| Lagged::regularized(
            hunt_crossley(&p.cast(), lit(1e-5), dt),
            &p.cast(),
            lit(-2.0),
            dt,
            lit(50.0)
        ));
    }

    #[test]
    fn regularized_tolerance_grows_with_the_lagged_impulse() {
        let p = ContactParams::<f64>::default();
        let law = hunt_crossley(&p, 1e-3, 1e-2);
        let soft = Lagged::regularized(law, &p, -2.0, 1e-2, 10.0);
        let plain = Lagged::new(law, &p, -2.0, 1e-2);
        let expected = p.sigma * 10.0 * p.mu * plain.gamma_n0;
        assert!(expected > p.stiction_tolerance);
        assert!((soft.eps - expected).abs() < 1e-15);
    }
}
