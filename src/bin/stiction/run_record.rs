//! `run.json`: the last file written into every output folder, so that a complete folder is
//! told apart from a partial one (a run that failed, was interrupted, or was killed before it
//! could write this file).
//!
//! ```json
//! {"status": "complete", "steps_planned": 1000, "steps_completed": 1000, "t": 1.0,
//!  "error": null,
//!  "solver_stats": {"iterations_mean": 2.1, "iterations_max": 6, "line_search_iterations": 2400,
//!                   "failed_solve": null},
//!  "command": "stiction simulate falling-sphere", "version": "0.1.0", "warnings": {}}
//! ```
//!
//! - `status`: `complete`, `interrupted` (SIGINT) or `failed`;
//! - `steps_planned`, `steps_completed`: time steps of the rollout (`simulate`, and the
//!   closed loop of `mpc`); for `sweep`: rollouts, one per stiffness; for `optimize`: iLQR
//!   iterations, the limit and those done; for `identify`: the iterations done (in both);
//! - `t`: simulated time reached (s; `null` where no single time applies: `sweep`, `identify`);
//! - `error`: the error message, `null` unless `failed`;
//! - `solver_stats`: Newton (or semismooth Newton) iterations per step over the completed steps
//!   (`iterations_mean`, `iterations_max`, `line_search_iterations` summed), and `failed_solve`:
//!   the statistics of the solve that failed (`iterations`, `line_search_iterations`,
//!   `residual`, `tolerance`, `contacts`, and for the convex solver `cost`,
//!   `last_step_length`, `line_search_failed`), else `null`;
//!   `simulate` adds `hessian_shifted_steps`, the steps whose Newton Hessian needed a diagonal
//!   shift to be factored (see `stats.csv`'s `hessian_shift`);
//! - `command`: the command line; `version`: stiction's version;
//! - `warnings` (`simulate`, convex stepper): per kind of suspicious physics seen
//!   (`deep_penetration`, `tunnelling`, `speed`, `ill_conditioned_inertia`; see
//!   `stiction::step::warnings`) its `count`, the time `first_t` (s) of the step of its first
//!   occurrence and that occurrence's message `first`; `{}` when none.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use stiction::error::{Error, Result};
use stiction::step::WarningTally;

/// File name of the run record.
pub const RUN_JSON: &str = "run.json";

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Everything planned was done.
    Complete,
    /// Stopped by SIGINT (Ctrl-C).
    Interrupted,
    /// Stopped by an error.
    Failed,
}

impl Status {
    fn name(self) -> &'static str {
        match self {
            Status::Complete => "complete",
            Status::Interrupted => "interrupted",
            Status::Failed => "failed",
        }
    }
}

/// What `run.json` records (the command line and the version are added when it is written).
#[derive(Debug)]
pub struct RunRecord {
    /// How the run ended.
    pub status: Status,
    /// Steps (or rollouts, iterations) planned.
    pub steps_planned: usize,
    /// Steps (or rollouts, iterations) completed.
    pub steps_completed: usize,
    /// Simulated time reached (s), where one applies.
    pub t: Option<f64>,
    /// The error, for a failed run.
    pub error: Option<String>,
    /// Solver statistics ([`solver_stats`]).
    pub solver_stats: Value,
    /// Warnings counted by kind ([`warnings`]).
    pub warnings: Value,
}

impl RunRecord {
    /// A run that ended as `status` (with `error` when failed).
    pub fn new(status: Status, error: Option<&Error>) -> Self {
        RunRecord {
            status,
            steps_planned: 0,
            steps_completed: 0,
            t: None,
            error: error
                .filter(|_| status == Status::Failed)
                .map(ToString::to_string),
            solver_stats: solver_stats(std::iter::empty(), error),
            warnings: json!({}),
        }
    }

    /// Writes `dir/run.json` (replacing it) and returns its path.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
    pub fn write(&self, dir: &Path) -> Result<PathBuf> {
        let command: Vec<String> = std::iter::once("stiction".to_string())
            .chain(std::env::args().skip(1))
            .collect();
        let value = json!({
            "status": self.status.name(),
            "steps_planned": self.steps_planned,
            "steps_completed": self.steps_completed,
            "t": self.t.filter(|t| t.is_finite()),
            "error": self.error,
            "solver_stats": self.solver_stats,
            "command": command.join(" "),
            "version": env!("CARGO_PKG_VERSION"),
            "warnings": self.warnings,
        });
        let path = dir.join(RUN_JSON);
        let text = serde_json::to_string_pretty(&value).expect("invariant: plain JSON values");
        std::fs::write(&path, text + "\n").map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        Ok(path)
    }
}

/// Per-step solver effort of one completed step: (iterations, line-search iterations).
pub type StepEffort = (usize, usize);

/// `solver_stats` of `run.json` from the effort of every completed step and the error that
/// stopped the run, if any (its failed solve's statistics).
pub fn solver_stats(steps: impl Iterator<Item = StepEffort>, error: Option<&Error>) -> Value {
    let (mut n, mut sum, mut max, mut ls) = (0usize, 0usize, 0usize, 0usize);
    for (iterations, line_search) in steps {
        n += 1;
        sum += iterations;
        max = max.max(iterations);
        ls += line_search;
    }
    json!({
        "iterations_mean": (n > 0).then(|| sum as f64 / n as f64),
        "iterations_max": (n > 0).then_some(max),
        "line_search_iterations": ls,
        "failed_solve": error.and_then(failed_solve),
    })
}

/// `warnings` of `run.json`: per kind that occurred, its count, first time and message.
pub fn warnings(tally: &WarningTally) -> Value {
    let kinds = tally.iter().map(|(kind, count, t, first)| {
        (
            kind.name().to_string(),
            json!({"count": count, "first_t": finite(t), "first": first}),
        )
    });
    Value::Object(kinds.collect())
}

/// The statistics of the solve that `error` reports, as JSON.
fn failed_solve(error: &Error) -> Option<Value> {
    if let Some(s) = error.solver_stats() {
        return Some(json!({
            "iterations": s.iterations,
            "line_search_iterations": s.line_search_iterations,
            "residual": finite(s.residual),
            "tolerance": finite(s.tolerance),
            "contacts": s.contacts,
            "cost": finite(s.cost),
            "last_step_length": s.last_step_length,
            "line_search_failed": s.line_search_failed,
        }));
    }
    match error.root() {
        Error::NcpNotConverged { stats: s } => Some(json!({
            "iterations": s.iterations,
            "line_search_iterations": s.line_search_iterations,
            "residual": finite(s.residual),
            "tolerance": finite(s.tolerance),
            "contacts": s.contacts,
        })),
        _ => None,
    }
}

/// `x`, or `null` when it is not finite (JSON has no NaN).
fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}
