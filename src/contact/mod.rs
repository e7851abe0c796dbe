//! Contact models as convex potentials (ICF Secs. IV-VI).
//!
//! Each contact `i` contributes a convex potential `ℓ_i(v_c)` of its contact velocity
//! `v_c = (v_t, v_n)` (contact frame C, z along the normal, `v_n > 0` separating), with
//! impulse `γ_i = −∂ℓ_i/∂v_c` (ICF eq. (3)) and 3×3 Hessian `G_i = ∂²ℓ_i/∂v_c²`.
//!
//! - [`law`]: the compliant normal laws `f_n(x, ẋ)` (eq. (5)) with their discrete impulse
//!   (eq. (6)) and antiderivative: Hunt & Crossley (eqs. (13)-(16)), Hertz, the IPC barrier
//!   (eqs. (11)-(12)), each checked for convexity (eq. (8)).
//! - [`model`]: the models and the one factory from a contact's parameters to its potential,
//!   used by the forward step and the derivatives, with the per-step pools: Lagged
//!   (eqs. (29)-(33)) and its regularized variant (eq. (44)), Similar (eqs. (34)-(40)), SAP's
//!   regularized cone projection (eq. (19); Castro et al., arXiv 2110.10107).
//! - [`params`]: per-pair parameters μ, k, d, τ_d, v_s with defaults and combination rules.
//! - [`potential`]: the [`ContactPotential`] trait.
//! - [`inverse_dynamics`]: SAP's analytic inverse dynamics, an independent check.
//!
//! Regularized friction uses the soft norm `‖v_t‖_s` of ICF Appendix A ([`crate::math::soft`]).

pub mod inverse_dynamics;
pub mod law;
pub mod model;
pub mod params;
pub(crate) mod potential;

pub use law::{
    Barrier, Hertz, HuntCrossley, Law, LawParameters, NormalEval, NormalLaw, NormalLawKind,
};
pub use model::{
    potential, Approximation, ContactPool, ContactState, Lagged, PoolVisitor, Potential, Sap,
    Similar,
};
pub use params::ContactParams;
pub use potential::{ContactPotential, PotentialEval};

#[cfg(test)]
pub(crate) mod testing;
