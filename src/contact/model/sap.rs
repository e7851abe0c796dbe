//! SAP's contact potential (ICF eq. (19); Castro, Permenter, Han, arXiv 2110.10107).
//!
//! Per contact `R = diag(R_t, R_t, R_n)` with `R_n = 1/(δt k (δt + τ_d))` raised to the
//! near-rigid floor `β² w/(4π²)` (β = 1), `R_t = σ w`, `w` the contact's Delassus estimate,
//! and bias `v̂ = (0, 0, x0/(δt + τ_d))`. With `y = −R⁻¹(v_c − v̂)`, the impulse is the
//! projection `γ = P_F(y)` onto the friction cone in the R-norm and `ℓ = ½ γᵀRγ`.
//!
//! In scaled variables `ỹ = R^{½} y`, `γ̃ = R^{½} γ` the cone is `‖γ̃_t‖ ≤ μ̃ γ̃_n`,
//! `μ̃ = μ (R_t/R_n)^{½}`; with `y_r = ‖ỹ_t‖`, `t̂ = ỹ_t/y_r`:
//! - region I, stiction (`y_r ≤ μ̃ ỹ_n`): `γ̃ = ỹ`;
//! - region III, no contact (`μ̃ y_r ≤ −ỹ_n`): `γ̃ = 0`;
//! - region II, sliding: `γ̃_n = (ỹ_n + μ̃ y_r)/(1 + μ̃²)`, `γ̃_t = μ̃ γ̃_n t̂`.
//!
//! Hessian `G = R^{-½} (∂γ̃/∂ỹ) R^{-½}` with `∂γ̃/∂ỹ = I` (I), `0` (III) and in II
//! `f̂f̂ᵀ + (μ̃ γ̃_n / y_r) diag(I₂ − t̂t̂ᵀ, 0)`, `f̂ = (μ̃ t̂, 1)/(1 + μ̃²)^{½}`.
#![allow(non_snake_case)]

use nalgebra::{Matrix2, Matrix3, Vector2, Vector3};

use crate::contact::law::NormalLaw;
use crate::contact::params::ContactParams;
use crate::contact::potential::{ContactPotential, PotentialEval};
use crate::scalar::{lit, Scalar};

/// SAP's near-rigid parameter β (dimensionless), SAP paper Sec. V.
pub const NEAR_RIGID_BETA: f64 = 1.0;

/// One SAP contact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sap<T: Scalar> {
    /// Friction coefficient μ.
    pub mu: T,
    /// Tangential regularization `R_t = σ w` (s/kg).
    pub R_t: T,
    /// Normal regularization `R_n` (s/kg).
    pub R_n: T,
    /// Normal bias velocity `v̂_n = x0/(δt + τ_d)` (m/s).
    pub v_hat_n: T,
}

impl<T: Scalar> Sap<T> {
    /// SAP contact with the `normal` law (discretized at the contact's previous penetration
    /// and step), step `dt` (s) and Delassus estimate `w` (1/kg). SAP's compliance is linear:
    /// it takes the law's tangent at the start of the step ([`NormalLaw::linearized`], exact
    /// for Hunt & Crossley), `R_n = 1/(δt k̃ (δt + τ_d))` and `v̂_n = x̃0/(δt + τ_d)`. A law
    /// with no stiffness there (Hertz or the barrier apart) pushes with no force this step.
    pub fn new(normal: &impl NormalLaw<T>, params: &ContactParams<T>, dt: T, w: T) -> Self {
        let (stiffness, x0) = normal.linearized();
        let beta: T = lit(NEAR_RIGID_BETA);
        let near_rigid = beta * beta * w / (lit::<T>(4.0) * T::pi() * T::pi());
        let R_t = params.sigma * w;
        if stiffness.re() <= 0.0 {
            // Region III for every finite contact velocity: no impulse, cost or Hessian.
            return Sap {
                mu: params.mu,
                R_t,
                R_n: near_rigid,
                v_hat_n: lit(-f64::MAX),
            };
        }
        let t_relax = dt + params.relaxation_time;
        let compliant = T::one() / (dt * stiffness * t_relax);
        Sap {
            mu: params.mu,
            R_t,
            R_n: compliant.max(near_rigid),
            v_hat_n: x0 / t_relax,
        }
    }

    /// SAP's effective stiction tolerance `R_t μ γ_n` (m/s) at `v_c` (ICF eq. (42)).
    pub fn stiction_tolerance(&self, v_c: &Vector3<T>) -> T {
        self.R_t * self.mu * self.eval(v_c).gamma.z
    }
}

impl<T: Scalar> ContactPotential<T> for Sap<T> {
    #[inline(always)]
    fn eval(&self, v_c: &Vector3<T>) -> PotentialEval<T> {
        let sqrt_Rt = self.R_t.sqrt();
        let sqrt_Rn = self.R_n.sqrt();
        let y_t = -Vector2::new(v_c.x, v_c.y) / sqrt_Rt;
        let y_n = -(v_c.z - self.v_hat_n) / sqrt_Rn;
        let mu_t = self.mu * sqrt_Rt / sqrt_Rn;
        let y_r_re = Vector2::new(y_t.x.re(), y_t.y.re()).norm();
        let (yn_re, mu_re) = (y_n.re(), mu_t.re());
        // Region chosen on the real part; the derivative is that of the active region.
        let (g_t, g_n, dgamma) = if y_r_re <= mu_re * yn_re {
            (y_t, y_n, Matrix3::identity())
        } else if mu_re * y_r_re <= -yn_re {
            (Vector2::zeros(), T::zero(), Matrix3::zeros())
        } else {
            // Region II has y_r > 0 strictly, so the norm's derivative is finite.
            let y_r = y_t.norm();
            let t_hat = y_t / y_r;
            let one_mu2 = T::one() + mu_t * mu_t;
            let g_n = (y_n + mu_t * y_r) / one_mu2;
            let f_hat = Vector3::new(mu_t * t_hat.x, mu_t * t_hat.y, T::one()) / one_mu2.sqrt();
            let mut d = f_hat * f_hat.transpose();
            let curvature = (Matrix2::identity() - t_hat * t_hat.transpose()) * (mu_t * g_n / y_r);
            let mut block = d.fixed_view_mut::<2, 2>(0, 0);
            block += curvature;
            (t_hat * (mu_t * g_n), g_n, d)
        };
        let inv_sqrt_R = Vector3::new(T::one() / sqrt_Rt, T::one() / sqrt_Rt, T::one() / sqrt_Rn);
        let half: T = lit(0.5);
        PotentialEval {
            cost: half * (g_t.norm_squared() + g_n * g_n),
            gamma: Vector3::new(g_t.x, g_t.y, g_n).component_mul(&inv_sqrt_R),
            G: Matrix3::from_diagonal(&inv_sqrt_R) * dgamma * Matrix3::from_diagonal(&inv_sqrt_R),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::testing::{check_potential, hunt_crossley};

    #[test]
    fn sap_impulse_is_minus_gradient_and_hessian_matches_hyperduals() {
        for &(x0, w) in &[(1e-6, 2.0), (2e-4, 0.5), (-1e-4, 10.0), (0.0, 1.0)] {
            check_potential!(x0, |p, dt| Sap::new(
                &hunt_crossley(&p.cast(), lit(x0), dt),
                &p.cast(),
                dt,
                lit(w)
            ));
        }
    }

    #[test]
    fn impulse_lies_in_the_friction_cone() {
        let p = ContactParams::<f64> {
            mu: 0.7,
            ..Default::default()
        };
        let c = Sap::new(&hunt_crossley(&p, 1e-4, 1e-3), &p, 1e-3, 1.0);
        for &(vt, vn) in &[(0.1, -0.2), (-3.0, 0.01), (1e-9, -1.0), (0.5, 0.5)] {
            let g = c.eval(&Vector3::new(vt, 0.3 * vt, vn)).gamma;
            assert!(g.z >= 0.0);
            assert!(g.xy().norm() <= p.mu * g.z * (1.0 + 1e-12));
        }
    }

    #[test]
    fn near_rigid_floor_caps_stiffness() {
        let p = ContactParams::<f64> {
            stiffness: 1e15,
            ..Default::default()
        };
        let c = Sap::new(&hunt_crossley(&p, 0.0, 1e-3), &p, 1e-3, 2.0);
        assert!((c.R_n - 2.0 / (4.0 * std::f64::consts::PI.powi(2))).abs() < 1e-15);
    }
}
