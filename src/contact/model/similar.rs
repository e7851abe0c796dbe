//! The Similar model (ICF Sec. VI-C, eqs. (34)-(40)).
//!
//! With `z = v_n − μ ‖v_t‖_s` (eq. (34)), `ℓ(v_c) = −N(z)` (eq. (39)), `γ = n(z) ∇z` with
//! `∇z = (−μ t̂_s, 1)`, and Hessian (eq. (40)) by the chain rule
//! `G = −n'(z) ∇z ∇zᵀ − n(z) ∇²z`, `∇²z = −μ P⊥(t̂_s)/(‖v_t‖_s + ε)` in the tangential block;
//! both terms are positive semi-definite.
#![allow(non_snake_case)]

use nalgebra::{Vector2, Vector3};

use crate::contact::law::{HuntCrossley, NormalLaw};
use crate::contact::params::ContactParams;
use crate::contact::potential::{ContactPotential, PotentialEval};
use crate::math::soft_norm;
use crate::scalar::Scalar;

/// One Similar contact with the normal law `L` (Hunt & Crossley unless the pair asks for
/// another, [`crate::contact::law`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Similar<T: Scalar, L = HuntCrossley<T>> {
    /// The discretized normal law.
    pub normal: L,
    /// Friction coefficient μ.
    pub mu: T,
    /// Soft-norm regularization ε = v_s (m/s).
    pub eps: T,
}

impl<T: Scalar, L: NormalLaw<T>> Similar<T, L> {
    /// Similar contact with the `normal` law (discretized at the contact's previous
    /// penetration and step).
    pub fn new(normal: L, params: &ContactParams<T>) -> Self {
        Similar {
            normal,
            mu: params.mu,
            eps: params.stiction_tolerance,
        }
    }

    /// The same contact with the law `normal`.
    pub fn with_law<M>(&self, normal: M) -> Similar<T, M> {
        Similar {
            normal,
            mu: self.mu,
            eps: self.eps,
        }
    }
}

impl<T: Scalar, L: NormalLaw<T>> ContactPotential<T> for Similar<T, L> {
    /// ICF eqs. (34)-(40).
    #[inline(always)]
    fn eval(&self, v_c: &Vector3<T>) -> PotentialEval<T> {
        let s = soft_norm(&Vector2::new(v_c.x, v_c.y), self.eps);
        let z = v_c.z - self.mu * s.value;
        let n = self.normal.discrete(z);
        let grad_z = Vector3::new(-self.mu * s.unit.x, -self.mu * s.unit.y, T::one());
        let mut G = grad_z * grad_z.transpose() * (-n.impulse_derivative);
        let curvature = s.hessian * (self.mu * n.impulse);
        let mut block = G.fixed_view_mut::<2, 2>(0, 0);
        block += curvature;
        PotentialEval {
            cost: -n.antiderivative,
            gamma: grad_z * n.impulse,
            G,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::testing::{check_potential, hunt_crossley};
    use crate::scalar::lit;

    #[test]
    fn similar_impulse_is_minus_gradient_and_hessian_matches_hyperduals() {
        for &x0 in &[1e-6, 2e-4, -1e-4, 0.0] {
            check_potential!(x0, |p, dt| Similar::new(
                hunt_crossley(&p.cast(), lit(x0), dt),
                &p.cast()
            ));
        }
    }

    /// Sliding at speed ‖v_t‖ ≫ v_s, the Similar impulse vanishes at `v_n = x0/δt + μ‖v_t‖`:
    /// the gliding offset `μ δt ‖v_t‖` of ICF Sec. VII-A.
    #[test]
    fn similar_glides_at_mu_dt_slip() {
        let p = ContactParams::<f64> {
            mu: 0.5,
            dissipation: 0.0,
            ..Default::default()
        };
        let dt = 1e-3;
        let c = Similar::new(hunt_crossley(&p, 0.0, dt), &p);
        let slip = 0.1;
        let v_n_edge = p.mu * (slip - 0.0) + 0.0;
        let inside = c.eval(&Vector3::new(slip, 0.0, v_n_edge * 0.99));
        let outside = c.eval(&Vector3::new(slip, 0.0, v_n_edge * 1.01));
        assert!(inside.gamma.z > 0.0);
        assert_eq!(outside.gamma.z, 0.0);
    }
}
