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
//! **Global search.** Every parameter has search bounds (given, or a decade either side of a
//! positive start). The fit runs from several starts drawn log-uniformly within them
//! (multi-start, in parallel with rayon, deterministic given a seed), and on long records each
//! start first fits by multiple shooting (`shooting`: segments restarted from the measured
//! state, Bock 1983) to reach the right basin, then by single shooting with horizon
//! continuation. The best final loss wins; the report counts the starts that reached it.
//!
//! **Honest status and intervals** (`report`). `converged` needs first-order optimality at
//! the estimate (the Gauss–Newton decrease still on offer from the bound-projected gradient is
//! negligible against the noise), not just a small step. With σ given, the reduced χ² is
//! tested against the chi-square distribution and a mismatch is flagged, with the covariance
//! scaled by it (`covariance`). The 95 % intervals are profile-likelihood intervals
//! (`profile`, Venzon & Moolgavkar 1988), open at an end where the data do not bound the
//! parameter; a near-singular `JᵀJ` or an open end marks a parameter not identifiable, with
//! the singular directions reported.
//!
//! Files: `params.rs` (names, transforms, bounds), `data.rs` (CSV trajectories), `observe.rs`
//! (the measurement model `h`), `loss.rs`, `residuals.rs` (the problem, rollouts with
//! derivatives, rayon), `levenberg_marquardt.rs` (bounded), `lbfgs.rs`, `shooting.rs`
//! (multiple shooting), `covariance.rs` (covariance, χ² test), `profile.rs` (profile
//! likelihood), `schema.rs` (identification problem files), `report.rs` (the run: starts,
//! status, estimates).

pub(crate) mod covariance;
pub mod data;
pub(crate) mod lbfgs;
pub(crate) mod levenberg_marquardt;
pub(crate) mod loss;
pub(crate) mod observe;
pub mod params;
pub(crate) mod profile;
pub mod report;
pub mod residuals;
pub(crate) mod schema;
pub(crate) mod shooting;

pub use data::{read_trajectory_csv, MeasuredTrajectory};
pub use loss::Loss;
pub use params::{ParamSpec, Transform, Unknown};
pub use report::{
    identify, identify_until, IdentificationReport, IdentifySettings, Intervals, Method, Shooting,
    Status,
};
pub use residuals::IdentificationProblem;
pub use schema::{load_identification, IdentificationFile};
