//! Rollouts: step a [`Simulator`] over a duration and record what happened; batches of
//! independent rollouts in parallel ([`run_batch`], rayon), bit-identical to running them one
//! after the other.
//!
//! The number of steps is checked before anything is allocated ([`recording_steps`], through
//! [`crate::budget`]). A rollout that fails or is stopped keeps what it computed
//! ([`run_steps`] returns a [`PartialRun`]); its error says at which step and time it failed
//! ([`Error::Step`]).

use std::ops::ControlFlow;

use rayon::prelude::*;

use crate::budget;
use crate::control::Controller;
use crate::error::{Error, Result};
use crate::step::{Simulator, State, StepReport};

/// A recorded rollout: `states[0]` is the initial state, `states[k+1]` follows step `k`
/// described by `reports[k]`.
#[derive(Clone, Debug, Default)]
pub struct Recording {
    /// States at t = 0, δt, 2δt, … (steps + 1).
    pub states: Vec<State>,
    /// One report per step (steps).
    pub reports: Vec<StepReport>,
}

/// Memory a [`Recording`] keeps per step (bytes) for a model of `nq` coordinates and `nv`
/// velocities: one state and one step report, without the step's contacts (a lower bound).
pub fn recording_bytes_per_step(nq: usize, nv: usize) -> usize {
    std::mem::size_of::<State>() + 8 * (nq + nv) + std::mem::size_of::<StepReport>()
}

/// Number of steps of `sim`'s δt in `duration` (s, rounded to nearest), checked by
/// [`budget::steps`] for the recording of `sim`'s model; `field` names what set the duration
/// in errors.
///
/// # Errors
/// [`crate::error::Error::TooLarge`] when the recording would exceed
/// [`budget::MEMORY_CAP`]; [`crate::error::Error::InvalidParameter`] for a negative or
/// non-finite duration.
pub fn recording_steps(sim: &Simulator, field: &str, duration: f64) -> Result<usize> {
    budget::steps(
        field,
        duration,
        sim.settings.dt,
        recording_bytes_per_step(sim.model.nq(), sim.model.nv()),
    )
}

/// How a rollout ended.
#[derive(Debug)]
pub enum RunEnd {
    /// Every planned step was taken.
    Complete,
    /// The caller's `on_step` asked to stop (an interrupt).
    Interrupted,
    /// A step failed: its error, as [`Error::Step`] (index, time, and the step's own error
    /// with its solver statistics).
    Failed(Error),
}

/// A rollout that may have stopped early: every completed step is in `recording`.
#[derive(Debug)]
pub struct PartialRun {
    /// The states and reports of the steps completed (at least the initial state).
    pub recording: Recording,
    /// Steps planned.
    pub steps_planned: usize,
    /// How it ended.
    pub end: RunEnd,
}

/// Runs `sim` from `initial` for `duration` (s) without actuation, calling `on_step` after
/// every step (for progress reporting).
///
/// # Errors
/// [`budget::steps`]' errors for a duration whose recording would not fit in memory; the first
/// step error as [`Error::Step`] (its index and time, around the step's own error with the
/// solver statistics).
pub fn run(
    sim: &mut Simulator,
    initial: &State,
    duration: f64,
    on_step: impl FnMut(&State, &StepReport),
) -> Result<Recording> {
    run_controlled(sim, &Controller::default(), initial, duration, on_step)
}

/// Runs `sim` from `initial` for `duration` (s) with the efforts of `controller`, evaluated at
/// the start of every step, calling `on_step` after every step.
///
/// # Errors
/// As [`run`].
pub fn run_controlled(
    sim: &mut Simulator,
    controller: &Controller,
    initial: &State,
    duration: f64,
    mut on_step: impl FnMut(&State, &StepReport),
) -> Result<Recording> {
    let steps = recording_steps(sim, "duration", duration)?;
    let run = run_steps(sim, controller, initial, steps, |_, state, report| {
        on_step(state, report);
        ControlFlow::Continue(())
    });
    match run.end {
        RunEnd::Failed(e) => Err(e),
        RunEnd::Complete | RunEnd::Interrupted => Ok(run.recording),
    }
}

/// Runs `steps` steps of `sim` from `initial` with the efforts of `controller`, calling
/// `on_step` with the simulator, the new state and the step's report after every step;
/// `on_step` returning [`ControlFlow::Break`] stops the rollout
/// ([`RunEnd::Interrupted`]). A failing step ends it too ([`RunEnd::Failed`]); either way the
/// steps completed are kept. `steps` should come from [`recording_steps`], which checks that
/// the recording fits in memory.
pub fn run_steps(
    sim: &mut Simulator,
    controller: &Controller,
    initial: &State,
    steps: usize,
    mut on_step: impl FnMut(&Simulator, &State, &StepReport) -> ControlFlow<()>,
) -> PartialRun {
    let nu = sim.model.nu();
    let mut rec = Recording {
        states: Vec::with_capacity(steps + 1),
        reports: Vec::with_capacity(steps),
    };
    rec.states.push(initial.clone());
    let mut end = RunEnd::Complete;
    for k in 0..steps {
        let state = rec.states.last().expect("invariant: initial state pushed");
        let u = controller.effort(state, nu);
        let (next, report) = match sim.step(state, &u) {
            Ok(step) => step,
            Err(e) => {
                end = RunEnd::Failed(e.at_step(k, state.t));
                break;
            }
        };
        let flow = on_step(sim, &next, &report);
        rec.states.push(next);
        rec.reports.push(report);
        if flow.is_break() {
            if k + 1 < steps {
                end = RunEnd::Interrupted;
            }
            break;
        }
    }
    PartialRun {
        recording: rec,
        steps_planned: steps,
        end,
    }
}

/// One independent rollout of a batch: a simulator with its controller, initial state and
/// duration (s).
#[derive(Debug)]
pub struct Rollout {
    /// The simulator (each rollout owns its own: the solver data inside is mutable).
    pub simulator: Simulator,
    /// The actuators' control laws.
    pub controller: Controller,
    /// Initial state.
    pub initial: State,
    /// Simulated duration (s).
    pub duration: f64,
}

/// Runs every rollout of `batch`, in parallel over rayon's threads, and returns their
/// recordings in order. Each rollout is computed exactly as [`run_controlled`] computes it
/// alone (the solver's factorizations are sequential), so the results are bit-identical to a
/// serial loop.
pub fn run_batch(batch: &mut [Rollout]) -> Vec<Result<Recording>> {
    batch
        .par_iter_mut()
        .map(|r| {
            run_controlled(
                &mut r.simulator,
                &r.controller,
                &r.initial,
                r.duration,
                |_, _| (),
            )
        })
        .collect()
}

/// Mean steady penetration (m) over the steps that end at `t ≥ t_from` (s): the mean of the
/// end-of-step penetration over every contact that pushes (normal force > 0) in those steps,
/// as ICF Sec. X-A measures it over the last 1.25 s of the clutter (Fig. 17). `None` without
/// such contacts.
pub fn mean_penetration(recording: &Recording, t_from: f64) -> Option<f64> {
    let (sum, count) = recording
        .reports
        .iter()
        .zip(&recording.states[1..])
        .filter(|(_, end)| end.t >= t_from)
        .flat_map(|(report, _)| report.contacts.iter())
        .filter(|c| c.normal_force > 0.0)
        .fold((0.0, 0usize), |(s, n), c| (s + c.penetration, n + 1));
    (count > 0).then(|| sum / count as f64)
}

/// What a stiffness sweep reports for one stiffness (ICF Sec. X-A, Figs. 17-18).
#[derive(Clone, Debug, PartialEq)]
pub struct SweepRow {
    /// Contact stiffness k (N/m).
    pub stiffness: f64,
    /// [`mean_penetration`] over the steady window (m).
    pub mean_penetration: Option<f64>,
    /// Newton iterations per step, mean over the whole rollout.
    pub mean_iterations: f64,
    /// Newton iterations of the hardest step.
    pub max_iterations: usize,
    /// Mean of log10 of the condition estimate over the steps that factored (a geometric
    /// mean).
    pub mean_log10_condition: Option<f64>,
    /// Steps simulated.
    pub steps: usize,
}

impl SweepRow {
    /// The row of a rollout at stiffness `k` (N/m), penetration averaged over `t ≥ t_from` (s).
    pub fn new(stiffness: f64, recording: &Recording, t_from: f64) -> Self {
        let steps = recording.reports.len();
        let iterations = recording.reports.iter().map(|r| r.stats.iterations);
        let logs: Vec<f64> = recording
            .reports
            .iter()
            .filter_map(|r| r.stats.condition.map(f64::log10))
            .collect();
        SweepRow {
            stiffness,
            mean_penetration: mean_penetration(recording, t_from),
            mean_iterations: iterations.clone().sum::<usize>() as f64 / steps.max(1) as f64,
            max_iterations: iterations.max().unwrap_or(0),
            mean_log10_condition: (!logs.is_empty())
                .then(|| logs.iter().sum::<f64>() / logs.len() as f64),
            steps,
        }
    }
}
