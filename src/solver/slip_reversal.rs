//! Newton's friction curvature at a slip reversal ([`SolverParams::reversal_secant`]).
//!
//! A sliding contact's friction `μ γ_n0 ‖v_t‖_s` (Lagged, ICF eq. (31); Similar's alike) has
//! almost no curvature along its slip, `μ γ_n0 ε²/‖v_t‖_s³`, against `μ γ_n0/‖v_t‖_s` across
//! it. Newton's quadratic model of it is linear along the slip, so where the other forces
//! would hold the contact in stick, the Newton step carries its slip through zero and on; the
//! exact line search then stops at the stick point, a small step length that every other
//! contact of the island takes too. A pile needs one Newton iteration per such reversal.
//!
//! For a contact whose slip the last Newton direction reversed (`v_t · (v_t + Δv_t) < 0`),
//! the next Hessian takes the secant curvature `‖γ_t‖/‖v_t‖` along the slip, when the exact
//! one is below [`SLIDING`] of it: the curvature of the quadratic that touches the norm at
//! `v_t` from above and is least at stick, so the contact's own model stops at stick instead
//! of passing it. Only for that iteration: a contact that goes on sliding gets Newton's exact
//! curvature again, and quadratic convergence near the solution is kept (the secant on every
//! sliding contact converges linearly: docs/benchmarks.md, "Slip reversals").
//!
//! [`SolverParams::reversal_secant`]: crate::solver::SolverParams::reversal_secant
#![allow(non_snake_case)]

use nalgebra::{Matrix3, Vector2, Vector3};

/// The exact curvature along the slip, relative to the secant one, below which a contact
/// slides (`ε²/(‖v_t‖² + ε²)` for Lagged: slips above ten times its regularization ε).
pub const SLIDING: f64 = 0.01;

/// Whether the Newton direction's full step reverses the contact's slip:
/// `v_t · (v_t + Δv_t) < 0` for its tangential velocity `v_t` and change `Δv_t` (m/s).
#[inline]
pub fn reverses(v_c: &Vector3<f64>, dv_c: &Vector3<f64>) -> bool {
    let v_t = Vector2::new(v_c.x, v_c.y);
    let dv_t = Vector2::new(dv_c.x, dv_c.y);
    v_t.dot(&(v_t + dv_t)) < 0.0
}

/// Raises the curvature of `G` along the slip `t̂ = v_t/‖v_t‖` to the secant `‖γ_t‖/‖v_t‖`
/// when the contact slides ([`SLIDING`]), and says whether it did; `G` unchanged otherwise.
/// Keeps `G` symmetric positive semi-definite (a rank-one positive addition).
#[inline]
pub fn raise_to_secant(v_c: &Vector3<f64>, gamma: &Vector3<f64>, G: &mut Matrix3<f64>) -> bool {
    let v_t = Vector2::new(v_c.x, v_c.y);
    let slip = v_t.norm();
    if slip == 0.0 {
        return false;
    }
    let secant = Vector2::new(gamma.x, gamma.y).norm() / slip;
    let t = v_t / slip;
    let mut G_t = G.fixed_view_mut::<2, 2>(0, 0);
    let along = t.dot(&(G_t.clone_owned() * t));
    let sliding = along < SLIDING * secant;
    if sliding {
        G_t += t * t.transpose() * (secant - along);
    }
    sliding
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::testing::hunt_crossley;
    use crate::contact::{ContactParams, ContactPotential, Lagged};

    fn lagged() -> Lagged<f64> {
        let p = ContactParams::<f64>::default();
        Lagged::new(hunt_crossley(&p, 1e-4, 1e-3), &p, -0.1, 1e-3)
    }

    /// A Lagged contact sliding at 100 ε: the raised curvature along the slip is the secant
    /// `μ γ_n0/‖v_t‖_s` (that of the direction across, unchanged), so the tangential block is
    /// isotropic; the normal row and column are untouched.
    #[test]
    fn a_sliding_lagged_contact_gets_the_secant_along_its_slip() {
        let c = lagged();
        let v_c = Vector3::new(3.0, -4.0, 0.0) * (20.0 * c.eps);
        let e = c.eval(&v_c);
        let mut G = e.G;
        assert!(raise_to_secant(&v_c, &e.gamma, &mut G));
        let root = (v_c.xy().norm_squared() + c.eps * c.eps).sqrt();
        let secant = c.mu * c.gamma_n0 / root;
        let t = v_c.xy().normalize();
        let n = Vector2::new(-t.y, t.x);
        let G_t = G.fixed_view::<2, 2>(0, 0).clone_owned();
        assert!((t.dot(&(G_t * t)) - secant).abs() <= 1e-12 * secant);
        assert!((n.dot(&(G_t * n)) - secant).abs() <= 1e-12 * secant);
        assert!(t.dot(&(G_t * n)).abs() <= 1e-12 * secant);
        assert_eq!(G.row(2), e.G.row(2));
        assert_eq!(G.column(2), e.G.column(2));
    }

    /// In stick (slip below ten times ε) the exact curvature is kept.
    #[test]
    fn a_sticking_contact_keeps_its_exact_curvature() {
        let c = lagged();
        for v_c in [
            Vector3::new(2.0 * c.eps, 0.0, 0.0),
            Vector3::zeros(),
            Vector3::new(0.0, 0.0, -0.3),
        ] {
            let e = c.eval(&v_c);
            let mut G = e.G;
            assert!(!raise_to_secant(&v_c, &e.gamma, &mut G), "{v_c:?}");
            assert_eq!(G, e.G, "{v_c:?}");
        }
    }

    #[test]
    fn reversal_is_a_full_step_past_stick() {
        let v = Vector3::new(1.0, 1.0, 5.0);
        assert!(reverses(&v, &Vector3::new(-3.0, -1.0, 0.0)));
        assert!(!reverses(&v, &Vector3::new(-0.9, -0.9, -9.0)));
        assert!(!reverses(&v, &Vector3::new(2.0, -1.0, 0.0)));
        assert!(!reverses(&Vector3::zeros(), &v));
    }
}
