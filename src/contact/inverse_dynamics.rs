//! SAP's analytic inverse dynamics (Castro 2020 note; DESIGN "Regularized dual form"): given
#![allow(non_snake_case)]
//! a contact velocity, the impulse of the regularized cone QP `min_{γ∈F} ½γᵀ(W+R)γ + rᵀγ`
//! follows in closed form, `γ = P_F(y)`, `y = −R⁻¹(v_c − v̂)`, written here in the original
//! (unscaled) variables as an independent check of the solver:
//! - stiction, when `‖ỹ_t‖ ≤ μ̃ ỹ_n` (`ỹ = R^{½} y`): `γ = y`;
//! - separation, when `μ̃ ‖ỹ_t‖ ≤ −ỹ_n`: `γ = 0`;
//! - sliding: `γ_n = (y_n + μ (R_t/R_n) ‖y_t‖)/(1 + μ̃²)`, `γ_t = μ γ_n y_t/‖y_t‖`.

use nalgebra::Vector3;

use crate::contact::Sap;

/// Impulse (N·s) of a SAP contact at contact velocity `v_c` (m/s), by the closed-form
/// projection in original variables.
pub fn sap_impulse(contact: &Sap<f64>, v_c: &Vector3<f64>) -> Vector3<f64> {
    let (R_t, R_n, mu) = (contact.R_t, contact.R_n, contact.mu);
    let y_t = -v_c.xy() / R_t;
    let y_n = -(v_c.z - contact.v_hat_n) / R_n;
    let mu_tilde2 = mu * mu * R_t / R_n;
    let y_t_norm = y_t.norm();
    // ‖ỹ_t‖ = √R_t ‖y_t‖, ỹ_n = √R_n y_n.
    let (yr_s, yn_s, mu_s) = (R_t.sqrt() * y_t_norm, R_n.sqrt() * y_n, mu_tilde2.sqrt());
    if yr_s <= mu_s * yn_s {
        Vector3::new(y_t.x, y_t.y, y_n)
    } else if mu_s * yr_s <= -yn_s {
        Vector3::zeros()
    } else {
        let g_n = (y_n + mu * (R_t / R_n) * y_t_norm) / (1.0 + mu_tilde2);
        let g_t = y_t * (mu * g_n / y_t_norm);
        Vector3::new(g_t.x, g_t.y, g_n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::testing::hunt_crossley;
    use crate::contact::{ContactParams, ContactPotential};

    #[test]
    fn closed_form_matches_scaled_projection() {
        let p = ContactParams::<f64> {
            mu: 0.8,
            ..Default::default()
        };
        let c = Sap::new(&hunt_crossley(&p, 2e-5, 1e-3), &p, 1e-3, 3.0);
        for &(a, b, n) in &[
            (0.1, 0.0, -0.3),
            (1e-6, -1e-6, -0.01),
            (2.0, 1.0, 0.05),
            (0.0, 0.0, -1.0),
            (0.01, 0.02, 1.0),
        ] {
            let v = Vector3::new(a, b, n);
            let g = sap_impulse(&c, &v);
            assert!((g - c.eval(&v).gamma).norm() <= 1e-12 * (1.0 + g.norm()));
        }
    }
}
