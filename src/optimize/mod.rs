//! Contact-implicit trajectory optimization (Kurtz & Lin, IROS 2022; ICF ext. Sec. XII-D;
//! DESIGN "Trajectory optimization").
//!
//! The problem (`problem`): given `x_0`, choose controls `u_0 … u_{T−1}` within box bounds to
//! minimize `J = Σ_{t<T} ℓ_t(x_t, u_t) + ℓ_T(x_T)` where `x_{t+1} = f(x_t, u_t)` is one step of
//! the simulator: contact is whatever the convex step produces, with no contact schedule.
//!
//! - [`cost`]: stage and terminal costs with tangent-space derivatives; user terms through
//!   [`cost::StageCost`], checked by [`cost::check_cost_derivatives`].
//! - [`riccati`] and `boxqp`: the backward pass with Levenberg–Marquardt regularization and
//!   the control-limited QP (Tassa et al. 2012, 2014).
//! - [`ilqr`]: the solver: derivatives `A_t`, `B_t` by the implicit function theorem,
//!   backward pass, backtracking line search on the feedforward, [`ilqr::Status`], per-iteration
//!   statistics with the wall time split into rollout, derivatives and backward pass.
//! - [`mpc`]: receding-horizon re-solves from the simulated state with warm starts.
//! - `shooting`: the single-shooting L-BFGS baseline (argmin) on the adjoint gradient.
//! - `task`: task checks (body points at times, within tolerances) and the task error.
//! - `schema`: the `[optimize]` table of problem files.
//! - [`output`]: CSV tables and the JSON summary of a solve (the CLI's files).
//! - `run`: a problem file loaded, optimized and its task evaluated.

pub(crate) mod boxqp;
pub mod cost;
pub mod ilqr;
pub mod mpc;
pub mod output;
pub(crate) mod problem;
pub mod riccati;
pub(crate) mod run;
pub(crate) mod schema;
pub(crate) mod shooting;
pub(crate) mod task;

pub use cost::{check_cost_derivatives, CostDerivatives, CostModel, StageCost, StagePoint};
pub use ilqr::{solve, solve_observed, DerivativeMethod, IlqrParams, IlqrReport, Status};
pub use mpc::{run_mpc, run_mpc_observed, MpcReport, MpcSettings, MpcSolve};
pub use problem::{ControlBounds, Trajectory, TrajectoryProblem};
pub use run::{optimize_file, optimize_problem, OptimizeRun};
pub use schema::{optimization, Optimization};
pub use shooting::{solve_shooting, ShootingParams, ShootingReport};
pub use task::{Task, TaskOutcome};
