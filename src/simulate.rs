//! Rollouts: step a [`Simulator`] over a duration and record what happened; batches of
//! independent rollouts in parallel ([`run_batch`], rayon), bit-identical to running them one
//! after the other.

use rayon::prelude::*;

use crate::control::Controller;
use crate::error::Result;
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

/// Number of steps of size `dt` in `duration` (rounded to nearest).
pub fn num_steps(duration: f64, dt: f64) -> usize {
    (duration / dt).round() as usize
}

/// Runs `sim` from `initial` for `duration` (s) without actuation, calling `on_step` after
/// every step (for progress reporting).
///
/// # Errors
/// The first step error, unchanged (it carries the solver statistics).
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
/// The first step error, unchanged (it carries the solver statistics).
pub fn run_controlled(
    sim: &mut Simulator,
    controller: &Controller,
    initial: &State,
    duration: f64,
    mut on_step: impl FnMut(&State, &StepReport),
) -> Result<Recording> {
    let steps = num_steps(duration, sim.settings.dt);
    let nu = sim.model.nu();
    let mut rec = Recording {
        states: Vec::with_capacity(steps + 1),
        reports: Vec::with_capacity(steps),
    };
    rec.states.push(initial.clone());
    for _ in 0..steps {
        let state = rec.states.last().expect("invariant: initial state pushed");
        let u = controller.effort(state, nu);
        let (next, report) = sim.step(state, &u)?;
        on_step(&next, &report);
        rec.states.push(next);
        rec.reports.push(report);
    }
    Ok(rec)
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
