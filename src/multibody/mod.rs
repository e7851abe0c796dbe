//! Rigid multibody systems in joint coordinates, generic over the scalar.
//!
//! A [`MultibodyModel`] is a forest of kinematic trees: body `i` hangs from its parent
//! (another body or the world) through joint `i` (fixed, revolute, prismatic, planar or
//! free). Generalized positions `q` (nq) and velocities `v` (nv) relate through
//! `q̇ = N(q) v` (ICF Sec. III). Dynamics follow Featherstone (RBDA): mass matrix by the
//! composite rigid body algorithm (CRBA, RBDA Sec. 6.2), bias forces `C(q,v)v − τ_g(q)` by
//! the recursive Newton-Euler algorithm (RNEA, RBDA Sec. 5.3), and the free-motion velocity
//! of DESIGN step 1: `A (v* − v0) = δt (B u − c(q0, v0) − D v0 + τ_s)`, `A = M(q0) + δt D`.
//! Joint armature (reflected rotor inertia) sits on the diagonal of `M`; joint springs add
//! the explicit effort `τ_s = −k (q0 − q_ref)`. `B u` is each actuator's clamped input times
//! its gear for effort actuators; position servos, joint limits, couplers and joint friction
//! are data here ([`constraints`]) and constraints of the step's convex problem.
//!
//! Bodies with prescribed motion ([`PrescribedBody`], a conveyor belt) carry geometry but no
//! degrees of freedom; their velocity enters contact velocities as a bias.
//!
//! Files: `joint.rs` (joint kinds and their kinematics), `model.rs` (the model and its
//! builder), `kinematics.rs` (poses, body velocities and Jacobians), `dynamics.rs` (CRBA,
//! RNEA, free motion, position update), `derivatives.rs` (analytic derivatives of RNEA in the
//! world frame), `prescribed.rs` (kinematic bodies), `constraints.rs` (limits, couplers,
//! joint friction and actuator transmissions, as data).

pub mod constraints;
pub(crate) mod derivatives;
pub mod dynamics;
pub mod joint;
pub mod kinematics;
pub mod model;
pub mod prescribed;

pub use constraints::{Coupler, JointFriction, JointLimit, Transmission, TransmissionKind};
pub use dynamics::{
    bias_forces, free_motion_velocity, integrate_positions, integrate_positions_into, mass_matrix,
    FreeMotion,
};
pub use joint::JointKind;
pub use kinematics::{forward_kinematics, MultibodyData};
pub use model::{Body, BodyId, Joint, JointSpec, JointSpring, MultibodyModel};
pub use prescribed::{PrescribedBody, PrescribedMotion};
