//! Rollouts: step a [`Simulator`] over a duration and record what happened.

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
