//! What a user of the library needs, in one import: `use stiction::prelude::*;`.
//!
//! It brings the types and entry points of the README's examples:
//!
//! - a problem file: [`load_problem`] → [`Problem`], [`Scene::from`] it, [`write_tables`] for
//!   the CSV tables of a [`Recording`];
//! - a scene in code: [`SceneBuilder`], [`BodyDesc`], [`Shape`], [`ControlLaw`],
//!   [`Hydroelastic`], and [`BodyState`] read back from a [`Scene`];
//! - the step itself: [`MultibodyModel`] ([`JointSpec`], [`JointKind`], [`BodyId`],
//!   [`SpatialInertia`], [`Pose`]), [`Geometry`], [`Simulator`], [`State`], [`StepSettings`],
//!   [`StepReport`], [`Approximation`], [`ContactParams`], [`SolverParams`];
//! - derivatives: [`step_jacobians`], [`gradient_check`] ([`GradientCheck`]) over named
//!   [`Parameter`]s;
//! - trajectory optimization and identification from their files: [`optimize_file`]
//!   ([`OptimizeRun`]), [`load_identification`] and [`identify`] ([`IdentificationReport`]);
//! - [`Error`] and [`Result`] (whose error type defaults to [`Error`]).
//!
//! Vectors and matrices are nalgebra's, re-exported as [`crate::nalgebra`] so that a user's
//! nalgebra is the crate's. Everything else stays under its module (`stiction::solver`,
//! `stiction::derivatives::rollout`, …).
//!
//! ```
//! use stiction::prelude::*;
//! # fn main() -> Result<()> {
//! let mut scene = SceneBuilder::new()
//!     .dt(1e-3)
//!     .ground()
//!     .body(BodyDesc::free("ball", 0.5, Shape::Sphere { radius: 0.05 }).at([0.0, 0.0, 0.06]))
//!     .build()?;
//! let recording: Recording = scene.run_for(0.2)?;
//! let report: &StepReport = recording.reports.last().expect("200 steps");
//! // At rest on the ground, the contact carries the ball's weight m g (N).
//! let normal_force: f64 = report.contacts.iter().map(|c| c.normal_force).sum();
//! assert!((normal_force - 0.5 * 9.81).abs() < 1e-3 * 0.5 * 9.81);
//! # Ok(())
//! # }
//! ```

pub use crate::collision::Geometry;
pub use crate::contact::{Approximation, ContactParams};
pub use crate::control::ControlLaw;
pub use crate::derivatives::{gradient_check, step_jacobians, GradientCheck, Parameter};
pub use crate::error::{Error, Result};
pub use crate::geometry::Shape;
pub use crate::hydroelastic::Hydroelastic;
pub use crate::identify::{identify, load_identification, IdentificationReport};
pub use crate::math::{Pose, SpatialInertia};
pub use crate::multibody::{BodyId, JointKind, JointSpec, MultibodyModel};
pub use crate::optimize::{optimize_file, OptimizeRun};
pub use crate::problem::{load_problem, Problem};
pub use crate::report::csv::write_tables;
pub use crate::report::BodyState;
pub use crate::scene::{BodyDesc, Scene, SceneBuilder};
pub use crate::simulate::Recording;
pub use crate::solver::SolverParams;
pub use crate::step::{Simulator, State, StepReport, StepSettings};
