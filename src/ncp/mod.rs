//! The geometrically implicit complementarity stepper for line and surface contact
//! (Xie & Chakraborty, *Rigid Body Dynamic Simulation with Line and Surface Contact*, the
//! seed `shared/seeds/004_…`, "XC" below; built on Chakraborty, Berard, Akella & Trinkle,
//! *A geometrically implicit time-stepping method for multibody systems with intermittent
//! contact*, IJRR 2014).
//!
//! A second time stepper beside the convex one ([`crate::step`]). Bodies are intersections of
//! convex inequalities; each step solves one mixed nonlinear complementarity problem (MNCP,
//! XC Sec. IV-B) in
//!
//! - the end-of-step velocities `ν⁺` (Newton–Euler with impulses, XC eq. (7)) and, through the
//!   quaternion kinematic map (XC eq. (8)), the end-of-step poses;
//! - the closest points `a1, a2` and their KKT multipliers (XC eqs. (13)-(16)); in contact
//!   `a1 = a2` is the equivalent contact point (ECP) of a point, line or surface contact, and
//!   the count of positive multipliers of F is its number of active facets;
//! - the normal impulse with non-penetration at the end of the step (XC eq. (17));
//! - the friction impulses and torsional moment by maximum power dissipation over an
//!   ellipsoidal limit surface (XC eqs. (6), (9)).
//!
//! In place of PATH, the complementarity pairs are reformulated with the Fischer–Burmeister
//! function and the square system is solved by semismooth Newton with a line search, warm
//! started from the previous step; a smoothing continuation is the fallback when that fails.
//!
//! Files:
//! - `inequalities.rs`: [`ConvexInequalities`], value and gradient in world coordinates;
//! - `ecp.rs`: closest-point/ECP conditions, contact frame;
//! - `friction.rs`: [`FrictionEllipsoid`], maximum dissipation conditions;
//! - `fischer_burmeister.rs`: φ_FB and its generalized gradient;
//! - `problem.rs`: [`MixedComplementarityProblem`], unknown layout, residual, Jacobian;
//! - `newton.rs`: [`semismooth_newton`], [`smoothing_continuation`], [`NcpSolverParams`],
//!   [`NcpStats`];
//! - `step.rs`: [`NcpSimulator`], [`NcpStepReport`], [`run`].

pub(crate) mod ecp;
pub(crate) mod fischer_burmeister;
pub(crate) mod friction;
pub(crate) mod inequalities;
pub(crate) mod newton;
pub(crate) mod problem;
pub mod step;

pub use friction::FrictionEllipsoid;
pub use inequalities::ConvexInequalities;
pub use newton::{
    scaled_levenberg_marquardt, semismooth_newton, smoothing_continuation, NcpSolverParams,
    NcpStats,
};
pub use problem::MixedComplementarityProblem;
pub use step::{
    recording_steps, run, run_steps, AppliedImpulse, NcpContactResult, NcpPartialRun, NcpRecording,
    NcpSettings, NcpSimulator, NcpStepReport,
};
