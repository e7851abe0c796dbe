//! System identification: estimate model parameters (μ, k, d, τ_d, v_s per geometry or for
//! the scene, masses, inertias, sizes) from measured trajectories (DESIGN "System
//! identification").
//!
//! Given trajectories `j` measured at samples `k` (times `t_k = n_k δt`) with noise level
//! `σ_j`, and the simulated measurement `h(x_{n_k}(θ))` from the scene's initial state,
//!
//! ```text
//! θ̂ = argmin_θ  Σ_{j,k,c} ρ( (h_c(x_{n_k}(θ)) − y_jkc) / σ_j ),   θ = g(s),             (1)
//! ```
//!
//! with `ρ` the squared or Huber loss (`loss`) and `g` a reparameterization that keeps
//! values positive or bounded ([`params`], e.g. `k = exp(s)`). Two solvers minimize (1) over
//! the unconstrained `s`:
//!
//! - Levenberg–Marquardt (`levenberg_marquardt`) on the residuals, with their Jacobian
//!   from forward sensitivities of the rollout (IFT step Jacobians, [`residuals`]);
//! - L-BFGS (argmin, `lbfgs`) on the scalar loss, with its gradient by the adjoint.
//!
//! At the estimate, the Gauss–Newton covariance `(JᵀJ)⁻¹` gives 95 % confidence intervals,
//! and a near-singular `JᵀJ` marks the parameters the data cannot determine (`covariance`);
//! their estimates are reported as not identifiable rather than as numbers.
//!
//! Files: `params.rs` (names, transforms), `data.rs` (CSV trajectories), `observe.rs` (the
//! measurement model `h`), `loss.rs`, `residuals.rs` (the problem, rollouts with
//! derivatives, rayon), `levenberg_marquardt.rs`, `lbfgs.rs`, `covariance.rs`, `schema.rs`
//! (identification problem files), `report.rs` (estimates and the run's record).

pub(crate) mod covariance;
pub mod data;
pub(crate) mod lbfgs;
pub(crate) mod levenberg_marquardt;
pub(crate) mod loss;
pub(crate) mod observe;
pub mod params;
pub mod report;
pub mod residuals;
pub(crate) mod schema;

pub use data::{read_trajectory_csv, MeasuredTrajectory};
pub use loss::Loss;
pub use params::{ParamSpec, Transform};
pub use report::{identify, IdentificationReport, IdentifySettings, Method, Status};
pub use residuals::IdentificationProblem;
pub use schema::{load_identification, IdentificationFile};
