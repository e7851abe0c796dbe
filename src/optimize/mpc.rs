//! Receding-horizon control (MPC) with iLQR: at every step `k` of the closed loop, re-solve
//! the problem over the next `H` steps from the simulated current state `x_k`, warm-started
//! with the previous solution shifted by one step (its last control repeated), apply the first
//! control `u_0`, and step the simulator. Cost windows are in absolute time, so each re-solve
//! sees the part of the schedule under its horizon; terminal terms apply at each horizon's end.
//! The first solve runs to convergence (the iLQR iteration limit); later ones run at most
//! [`MpcSettings::iterations`] iterations. With [`MpcSettings::shrink`] the horizon ends at the
//! end of the loop (`min(H, steps − k)` steps), so a task with a fixed final time keeps its
//! terminal cost at that time (shrinking-horizon MPC).
//!
//! When `x_k` is the state the previous solution predicted (bit for bit, as when the plant is
//! the model), the re-solve continues that iLQR run, as in Diehl's real-time iteration
//! ([`shifted_start`]): it starts from the solution's tail (only the step that extends a
//! receding horizon is simulated), reuses the tail of its derivatives if its last iteration
//! computed them (a rejected step or convergence), and keeps its regularization μ, so a step
//! the line search rejected is not tried again at the same μ. Otherwise it rolls out the
//! shifted controls from `x_k` and starts from `μ_init`. The derivative workers are made once
//! for the loop.

use std::ops::ControlFlow;
use std::time::Instant;

use nalgebra::DVector;

use crate::error::Result;
use crate::optimize::ilqr::{
    make_workers, shifted_start, solve_from, IlqrParams, IlqrReport, IlqrStart, Status,
};
use crate::optimize::problem::TrajectoryProblem;
use crate::step::{Simulator, State, StepReport};

/// Receding-horizon settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MpcSettings {
    /// Steps per re-solve, `H` (≥ 1).
    pub horizon: usize,
    /// iLQR iterations per re-solve after the first (≥ 1).
    pub iterations: usize,
    /// Closed-loop steps.
    pub steps: usize,
    /// Shrink the horizon to end with the loop.
    pub shrink: bool,
}

impl MpcSettings {
    /// Settings with `horizon` and `iterations` raised to at least 1.
    pub fn new(horizon: usize, iterations: usize, steps: usize, shrink: bool) -> Self {
        MpcSettings {
            horizon: horizon.max(1),
            iterations: iterations.max(1),
            steps,
            shrink,
        }
    }
}

/// One re-solve of the loop.
#[derive(Clone, Debug, PartialEq)]
pub struct MpcSolve {
    /// Time of the state solved from (s).
    pub t: f64,
    /// iLQR iterations.
    pub iterations: usize,
    /// Optimized cost of the horizon.
    pub cost: f64,
    /// iLQR status.
    pub status: Status,
    /// Wall time (s), the preparation of its start included.
    pub wall_s: f64,
}

/// The closed-loop result.
#[derive(Clone, Debug)]
pub struct MpcReport {
    /// Closed-loop states (steps + 1).
    pub states: Vec<State>,
    /// Applied controls (steps).
    pub controls: Vec<DVector<f64>>,
    /// Step reports (steps).
    pub reports: Vec<StepReport>,
    /// One entry per re-solve.
    pub solves: Vec<MpcSolve>,
    /// Total wall time (s).
    pub wall_s: f64,
}

/// Runs the loop from `problem.x0` with the initial guess `guess` (controls; its first `H`
/// are used, padded with its last). `problem.x0` and `problem.num_steps` are restored after.
///
/// # Errors
/// Failures of a re-solve or of a closed-loop step.
pub fn run_mpc(
    sim: &mut Simulator,
    problem: &mut TrajectoryProblem,
    guess: &[DVector<f64>],
    settings: &MpcSettings,
    params: &IlqrParams,
) -> Result<MpcReport> {
    run_mpc_observed(sim, problem, guess, settings, params, &mut |_| {
        ControlFlow::Continue(())
    })
}

/// [`run_mpc`], calling `observe` with each re-solve's record after its closed-loop step;
/// `observe` returning [`ControlFlow::Break`] ends the closed loop there (Ctrl-C), with the
/// steps taken so far in the report.
///
/// # Errors
/// As [`run_mpc`].
pub fn run_mpc_observed(
    sim: &mut Simulator,
    problem: &mut TrajectoryProblem,
    guess: &[DVector<f64>],
    settings: &MpcSettings,
    params: &IlqrParams,
    observe: &mut dyn FnMut(&MpcSolve) -> ControlFlow<()>,
) -> Result<MpcReport> {
    let start = Instant::now();
    let (x0, num_steps) = (problem.x0.clone(), problem.num_steps);
    let nu = sim.model.nu();
    let last = guess.last().cloned().unwrap_or_else(|| DVector::zeros(nu));
    let mut warm: Vec<DVector<f64>> = (0..settings.horizon)
        .map(|k| guess.get(k).cloned().unwrap_or_else(|| last.clone()))
        .collect();
    let follow_up = IlqrParams {
        max_iterations: settings.iterations,
        ..params.clone()
    };
    let mut states = vec![x0.clone()];
    let (mut controls, mut reports, mut solves) = (Vec::new(), Vec::new(), Vec::new());
    let mut workers = make_workers(sim, params)?;
    let mut previous: Option<IlqrReport> = None;
    let result = (|| -> Result<()> {
        for k in 0..settings.steps {
            let t0 = Instant::now();
            let x = states.last().expect("invariant: x_0 pushed").clone();
            problem.x0 = x.clone();
            problem.num_steps = if settings.shrink {
                settings.horizon.min(settings.steps - k)
            } else {
                settings.horizon
            };
            warm.truncate(problem.num_steps);
            let p = if k == 0 { params } else { &follow_up };
            let shifted = previous
                .as_ref()
                .and_then(|r| shifted_start(sim, &mut workers, problem, r, params.derivatives));
            let start = match shifted {
                Some(start) => start,
                None => IlqrStart::rollout(sim, problem, &warm, params.mu_init)?,
            };
            let report = solve_from(sim, &mut workers, problem, start, p, &mut |_| {
                ControlFlow::Continue(())
            })?;
            solves.push(MpcSolve {
                t: x.t,
                iterations: report.iterations.len(),
                cost: report.trajectory.cost,
                status: report.status,
                wall_s: t0.elapsed().as_secs_f64(),
            });
            let u = report.trajectory.controls[0].clone();
            let (next, step_report) = sim.step(&x, &u).map_err(|e| e.at_step(k, x.t))?;
            warm = report.trajectory.controls[1..].to_vec();
            warm.push(
                report
                    .trajectory
                    .controls
                    .last()
                    .expect("invariant: horizon ≥ 1")
                    .clone(),
            );
            states.push(next);
            controls.push(u);
            reports.push(step_report);
            previous = Some(report);
            if observe(solves.last().expect("invariant: pushed above")).is_break() {
                break;
            }
        }
        Ok(())
    })();
    problem.x0 = x0;
    problem.num_steps = num_steps;
    result?;
    Ok(MpcReport {
        states,
        controls,
        reports,
        solves,
        wall_s: start.elapsed().as_secs_f64(),
    })
}
