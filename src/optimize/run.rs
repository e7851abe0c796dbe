//! Optimizing a problem file end to end: load, resolve `[optimize]`, solve with iLQR, evaluate
//! the task. Shared by the CLI, the examples and the tests.

use std::ops::ControlFlow;
use std::path::Path;

use crate::error::Result;
use crate::optimize::ilqr::{solve_observed, IlqrReport, IterationStats};
use crate::optimize::schema::{optimization, Optimization};
use crate::optimize::task::TaskOutcome;
use crate::problem::{load_problem, Problem};

/// A solved problem file.
#[derive(Debug)]
pub struct OptimizeRun {
    /// The loaded problem (its simulator was used for the solve).
    pub problem: Problem,
    /// The resolved optimization.
    pub optimization: Optimization,
    /// The iLQR result.
    pub report: IlqrReport,
    /// The task evaluated on the optimized trajectory.
    pub outcome: TaskOutcome,
}

/// Loads `path`, lets `adjust` change the optimization (horizon, parameters), solves it with
/// iLQR from its initial guess and evaluates the task.
///
/// # Errors
/// Problem-file errors, and iLQR failures.
pub fn optimize_file(path: &Path, adjust: impl FnOnce(&mut Optimization)) -> Result<OptimizeRun> {
    optimize_problem(load_problem(path)?, adjust, &mut |_| {
        ControlFlow::Continue(())
    })
}

/// [`optimize_file`] on a loaded problem, calling `observe` after each iLQR iteration
/// ([`ControlFlow::Break`] stops it, [`crate::optimize::Status::Interrupted`]).
///
/// # Errors
/// An invalid `[optimize]` table, and iLQR failures.
pub fn optimize_problem(
    mut problem: Problem,
    adjust: impl FnOnce(&mut Optimization),
    observe: &mut dyn FnMut(&IterationStats) -> ControlFlow<()>,
) -> Result<OptimizeRun> {
    let mut optimization = optimization(&problem)?;
    adjust(&mut optimization);
    let report = solve_observed(
        &mut problem.simulator,
        &optimization.problem,
        &optimization.initial_controls,
        &optimization.params,
        observe,
    )?;
    let outcome = optimization
        .task
        .evaluate(&problem.simulator.model, &report.trajectory.states);
    Ok(OptimizeRun {
        problem,
        optimization,
        report,
        outcome,
    })
}

impl OptimizeRun {
    /// One line per iteration and a summary line, for examples and logs.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for s in &self.report.iterations {
            out += &format!(
                "iter {:3}  cost {:12.6}  alpha {:8.5}  mu {:8.1e}  |Qu| {:8.2e}  {}\n",
                s.iteration,
                s.cost,
                s.alpha,
                s.mu,
                s.gradient_norm,
                if s.accepted { "accepted" } else { "rejected" }
            );
        }
        let (rollout, derivatives, backward) = self.report.time_split();
        out += &format!(
            "{}: {} after {} iterations, cost {:.6} -> {:.6}, task error {:.4} m ({}), {:.2} s wall (rollout {:.2} s, derivatives {:.2} s, backward pass {:.3} s)",
            self.problem.name,
            self.report.status.name(),
            self.report.iterations.len(),
            self.report.initial_cost,
            self.report.trajectory.cost,
            self.outcome.error,
            if self.outcome.achieved { "achieved" } else { "not achieved" },
            self.report.wall_s,
            rollout,
            derivatives,
            backward
        );
        out
    }
}
