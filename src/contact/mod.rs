//! Contact models as convex potentials (ICF Secs. IV-VI).
//!
//! Each contact `i` contributes a convex potential `ℓ_i(v_c)` of its contact velocity
//! `v_c = (v_t, v_n)` (contact frame C, z along the normal, `v_n > 0` separating), with
//! impulse `γ_i = −∂ℓ_i/∂v_c` (ICF eq. (3)) and 3×3 Hessian `G_i = ∂²ℓ_i/∂v_c²`.
//!
//! - [`normal_law`]: the compliant normal law `f_n(x, ẋ)` (eq. (5)); Hunt & Crossley
//!   (eq. (13)) with the discrete impulse (eq. (6)) and its antiderivative in the stable
//!   `f0` form (eqs. (15)-(16)).
//! - [`lagged`]: Lagged model (eqs. (29)-(33)) and its regularized variant (eq. (44)).
//! - [`similar`]: Similar model (eqs. (34)-(40)).
//! - [`sap`]: SAP's regularized cone projection (eq. (19); Castro et al., arXiv 2110.10107).
//! - [`params`]: per-pair parameters μ, k, d, τ_d, v_s with defaults and combination rules.
//! - [`potential`]: the [`ContactPotential`] trait and the per-approximation pools.
//! - [`point`]: contact frame, Jacobian `J_i`, bias `b_i` and parameters of one contact.
//! - [`inverse_dynamics`]: SAP's analytic inverse dynamics, an independent check.
//!
//! Regularized friction uses the soft norm `‖v_t‖_s` of ICF Appendix A ([`crate::math::soft`]).

pub mod inverse_dynamics;
pub mod lagged;
pub mod normal_law;
pub mod params;
pub mod point;
pub mod potential;
pub mod sap;
pub mod similar;

pub use lagged::Lagged;
pub use normal_law::{HuntCrossley, NormalEval, NormalLaw};
pub use params::{Approximation, ContactParams};
pub use point::{contact_frame, ContactFeature, ContactPoint};
pub use potential::{ContactPool, ContactPotential, PotentialEval};
pub use sap::Sap;
pub use similar::Similar;

#[cfg(test)]
pub(crate) mod testing;
