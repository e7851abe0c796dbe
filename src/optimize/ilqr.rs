//! Contact-implicit iLQR (Kurtz & Lin, IROS 2022; ICF ext. Sec. XII-D) on the step dynamics
//! `x_{t+1} = f(x_t, u_t)` of [`Simulator::step`].
//!
//! Each iteration:
//! 1. **Derivatives** along the current trajectory: `A_t = ∂x_{t+1}/∂x_t`,
//!    `B_t = ∂x_{t+1}/∂u_t` (tangent space) by the implicit function theorem
//!    ([`crate::derivatives::step_jacobians`]) or, for comparison, central differences
//!    ([`crate::derivatives::fd::step_jacobians_fd`]); stages are split over worker threads,
//!    each with its own copy of the simulator. Cost derivatives from [`super::cost`].
//! 2. **Backward pass** ([`super::riccati`]): gains `k_t`, `K_t` with Levenberg–Marquardt
//!    regularization `μ`. A non-positive-definite `Q_uu + μI` raises `μ` and restarts the pass.
//! 3. **Forward pass** with backtracking on the feedforward:
//!    `u_t = clamp(ū_t + α k_t + K_t (x_t ⊖ x̄_t))`, `x_{t+1} = f(x_t, u_t)` for
//!    `α = 1, ½, ¼, …`; a step is accepted when the cost decreases by at least
//!    [`IlqrParams::armijo`] times the expected decrease `−ΔJ(α)`. A failed simulation at a
//!    trial α counts as a rejected α. If no α is accepted, `μ` is raised and the iteration
//!    repeats from the same trajectory; the cost therefore decreases monotonically over
//!    accepted iterations. The trial α are rolled out in batches on the workers
//!    (`line_search`), with the one-by-one search's result.
//!
//! [`solve`] starts from controls; [`solve_from`] from a rolled-out trajectory with, optionally,
//! its derivatives and μ ([`IlqrStart`]), which is how MPC continues a run
//! ([`shifted_start`]).
//!
//! **Control bounds** are handled in the backward pass by the box-constrained QP of Tassa,
//! Mansard & Todorov (2014) (`super::boxqp`), and the forward pass clamps (a no-op for the
//! feedforward, which the QP keeps feasible; it bounds the feedback term).
//!
//! **Stopping** ([`Status`]): [`Status::ConvergedCost`] when a full step (α = 1) lowers `J`
//! by less than [`IlqrParams::cost_tolerance`] · J, or the backward pass expects less than that
//! from a full step (`−ΔJ(1)`), or the last [`IlqrParams::stall_iterations`] iterations
//! lowered it by less than that in all; [`Status::ConvergedGradient`] when the largest free `|Q_u|` is
//! below [`IlqrParams::gradient_tolerance`]; the iteration limit; or `μ` above its maximum with
//! no acceptable step. Small decreases of a shortened step (α < 1) do not stop the iteration:
//! through contact the local model is often poor far from the nominal. Failures to simulate the initial guess or to differentiate a step are
//! errors ([`Error::TrajectoryOptimization`]) carrying the iteration and cost.
#![allow(non_snake_case)]

use std::ops::ControlFlow;
use std::time::Instant;

use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;

use crate::derivatives::check::CHECK_TOLERANCE;
use crate::derivatives::fd::step_jacobians_fd;
use crate::derivatives::step_jacobians;
use crate::error::{Error, Result};
use crate::multibody::MultibodyData;
use crate::optimize::cost::CostDerivatives;
use crate::optimize::problem::{Trajectory, TrajectoryProblem};
use crate::optimize::riccati::{backward_pass, BackwardPass, StageModel};
use crate::step::{Simulator, State};

/// How the step Jacobians `A_t`, `B_t` are computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DerivativeMethod {
    /// Implicit function theorem on the solver's factor (default).
    #[default]
    Ift,
    /// Fourth-order central differences of the f64 step, with the perturbed steps solved to
    /// the gradient check's tolerance ([`CHECK_TOLERANCE`]).
    FiniteDifference,
}

/// iLQR settings; `Default` holds the nominal values.
#[derive(Clone, Debug, PartialEq)]
pub struct IlqrParams {
    /// Iteration limit (default 100). Rejected iterations (μ raised) count.
    pub max_iterations: usize,
    /// Stop when a full step lowers `J`, or is expected to, by less than this fraction of `J`
    /// (default 1e-4).
    pub cost_tolerance: f64,
    /// Also stop when `J` fell by less than `cost_tolerance · J` over this many iterations
    /// (default 10): through contact, line searches can keep accepting tiny steps.
    pub stall_iterations: usize,
    /// Stop when `max_t ‖Q_u,t‖_∞` over free controls is below this (default 1e-6, cost
    /// units per N).
    pub gradient_tolerance: f64,
    /// Initial regularization μ (default 1e-6).
    pub mu_init: f64,
    /// μ below this is set to zero (default 1e-8).
    pub mu_min: f64,
    /// Largest μ before giving up with [`Status::NoFurtherDecrease`] (default 1e10).
    pub mu_max: f64,
    /// Factor by which μ grows after a failure and shrinks after a success (default 10).
    pub mu_factor: f64,
    /// Accept a step when `J_old − J_new ≥ armijo · (−ΔJ(α))` (default 1e-4).
    pub armijo: f64,
    /// Backtracking factor of the line search (default 0.5).
    pub backtrack: f64,
    /// Smallest α tried (default 1/1024).
    pub min_alpha: f64,
    /// Derivative method (default IFT).
    pub derivatives: DerivativeMethod,
    /// Worker threads for the derivatives (default: rayon's thread count).
    pub threads: usize,
}

impl Default for IlqrParams {
    fn default() -> Self {
        IlqrParams {
            max_iterations: 100,
            cost_tolerance: 1e-4,
            stall_iterations: 10,
            gradient_tolerance: 1e-6,
            mu_init: 1e-6,
            mu_min: 1e-8,
            mu_max: 1e10,
            mu_factor: 10.0,
            armijo: 1e-4,
            backtrack: 0.5,
            min_alpha: 1.0 / 1024.0,
            derivatives: DerivativeMethod::Ift,
            threads: rayon::current_num_threads(),
        }
    }
}

impl IlqrParams {
    /// These parameters with `max_iterations` set.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for zero.
    pub fn with_max_iterations(mut self, n: usize) -> Result<Self> {
        if n == 0 {
            return Err(Error::invalid("max_iterations", n, "need at least 1"));
        }
        self.max_iterations = n;
        Ok(self)
    }

    /// These parameters with `cost_tolerance` set.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] unless in `(0, 1)`.
    pub fn with_cost_tolerance(mut self, tol: f64) -> Result<Self> {
        if !(tol > 0.0 && tol < 1.0) {
            return Err(Error::invalid(
                "cost_tolerance",
                tol,
                "need 0 < tolerance < 1",
            ));
        }
        self.cost_tolerance = tol;
        Ok(self)
    }
}

/// Why iLQR stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The cost stopped decreasing: a full step, the expected decrease, or the decrease over
    /// the last `stall_iterations` iterations below the cost tolerance.
    ConvergedCost,
    /// The first-order optimality measure fell below the gradient tolerance.
    ConvergedGradient,
    /// The iteration limit was reached.
    MaxIterations,
    /// No step lowered the cost even at the largest regularization.
    NoFurtherDecrease,
    /// The observer asked to stop (Ctrl-C): the best trajectory so far is returned.
    Interrupted,
}

impl Status {
    /// Short kebab-case name (CLI, JSON).
    pub fn name(self) -> &'static str {
        match self {
            Status::ConvergedCost => "converged-cost",
            Status::ConvergedGradient => "converged-gradient",
            Status::MaxIterations => "max-iterations",
            Status::NoFurtherDecrease => "no-further-decrease",
            Status::Interrupted => "interrupted",
        }
    }

    /// Whether a convergence criterion was met.
    pub fn converged(self) -> bool {
        matches!(self, Status::ConvergedCost | Status::ConvergedGradient)
    }
}

/// Statistics of one iteration.
#[derive(Clone, Debug, PartialEq)]
pub struct IterationStats {
    /// Iteration number (from 1).
    pub iteration: usize,
    /// Cost after the iteration (the previous cost if rejected).
    pub cost: f64,
    /// Accepted step size α (0 if rejected).
    pub alpha: f64,
    /// Regularization μ used by the backward pass.
    pub mu: f64,
    /// Expected change `ΔJ(α)` at the accepted α (or α = 1 if rejected).
    pub expected_change: f64,
    /// `max_t ‖Q_u,t‖_∞` over free controls.
    pub gradient_norm: f64,
    /// Whether the step was accepted.
    pub accepted: bool,
    /// Wall time of the forward passes (s).
    pub rollout_s: f64,
    /// Wall time of the step and cost derivatives (s).
    pub derivatives_s: f64,
    /// Wall time of the backward passes (s), including restarts after raising μ.
    pub backward_s: f64,
}

/// Result of [`solve`].
#[derive(Clone, Debug)]
pub struct IlqrReport {
    /// The optimized trajectory.
    pub trajectory: Trajectory,
    /// Feedback gains `K_t` (nu × 2nv) of the last backward pass (empty if none succeeded).
    pub gains: Vec<DMatrix<f64>>,
    /// Cost of the initial guess.
    pub initial_cost: f64,
    /// Why it stopped.
    pub status: Status,
    /// One entry per iteration.
    pub iterations: Vec<IterationStats>,
    /// Total wall time (s), initial rollout included.
    pub wall_s: f64,
    /// The regularization μ the next iteration would start from.
    pub mu: f64,
    /// The derivatives along `trajectory`, if the last iteration computed them (it was
    /// rejected or ended the run): a warm start ([`IlqrStart`]) can reuse them.
    pub linearization: Option<Linearization>,
}

/// Step and cost derivatives along a trajectory ([`linearize`]): one model per running stage
/// and the terminal cost's derivatives.
pub type Linearization = (Vec<StageModel>, CostDerivatives);

/// Where [`solve_from`] starts: a trajectory rolled out from the problem's `x_0` with its
/// cost, optionally its derivatives, and the regularization μ. MPC carries one from a
/// re-solve to the next (the shifted solution, as in Diehl's real-time iteration).
#[derive(Clone, Debug)]
pub struct IlqrStart {
    /// The nominal trajectory (T + 1 states from `x_0`, T controls within the bounds).
    pub trajectory: Trajectory,
    /// Its derivatives, or `None` to compute them in the first iteration.
    pub linearization: Option<Linearization>,
    /// The first iteration's μ.
    pub mu: f64,
}

impl IlqrStart {
    /// The start from the controls `initial` (T × nu), rolled out from `problem.x0`, with
    /// no derivatives and regularization `mu`.
    ///
    /// # Errors
    /// Size mismatches; [`Error::TrajectoryOptimization`] when `initial` cannot be simulated.
    pub fn rollout(
        sim: &mut Simulator,
        problem: &TrajectoryProblem,
        initial: &[DVector<f64>],
        mu: f64,
    ) -> Result<Self> {
        problem.check(sim, initial)?;
        let trajectory = problem.rollout(sim, initial).map_err(|e| {
            fail(
                format!("the initial guess cannot be simulated: {e}"),
                0,
                f64::NAN,
            )
        })?;
        Ok(IlqrStart {
            trajectory,
            linearization: None,
            mu,
        })
    }
}

impl IlqrReport {
    /// Sum of the rollout, derivative and backward-pass times (s).
    pub fn time_split(&self) -> (f64, f64, f64) {
        self.iterations.iter().fold((0.0, 0.0, 0.0), |a, s| {
            (a.0 + s.rollout_s, a.1 + s.derivatives_s, a.2 + s.backward_s)
        })
    }
}

/// A fresh simulator with the same model, geometry, excluded body pairs and settings.
///
/// # Errors
/// None in practice (the geometry was valid for `sim`).
pub fn clone_simulator(sim: &Simulator) -> Result<Simulator> {
    let mut copy = Simulator::new(sim.model.clone(), sim.geometries().to_vec(), sim.settings)?;
    for &(a, b) in sim.collision().excluded() {
        copy.exclude_collisions(a, b);
    }
    Ok(copy)
}

/// The simulators of the derivative workers: `params.threads` copies of `sim` (at least one).
/// With [`DerivativeMethod::FiniteDifference`] their solver runs to the gradient check's
/// tolerance: differences of solves converged only to ε_r carry that error divided by the
/// step (as in [`crate::derivatives::gradient_check`]).
///
/// # Errors
/// None in practice (the geometry was valid for `sim`).
pub fn make_workers(sim: &Simulator, params: &IlqrParams) -> Result<Vec<Simulator>> {
    let mut workers = (0..params.threads.max(1))
        .map(|_| clone_simulator(sim))
        .collect::<Result<Vec<_>>>()?;
    if params.derivatives == DerivativeMethod::FiniteDifference {
        for w in &mut workers {
            let s = &mut w.settings.solver;
            s.relative_tolerance = CHECK_TOLERANCE;
            s.absolute_tolerance = 0.0;
            s.cost_tolerance = 0.0;
        }
    }
    Ok(workers)
}

/// The model of the running stage `(x, u)`: step Jacobians by `method` and cost derivatives.
///
/// # Errors
/// The step's Jacobians failing.
pub fn linearize_stage(
    sim: &mut Simulator,
    data: &mut MultibodyData<f64>,
    problem: &TrajectoryProblem,
    x: &State,
    u: &DVector<f64>,
    method: DerivativeMethod,
) -> Result<StageModel> {
    let j = match method {
        DerivativeMethod::Ift => step_jacobians(sim, x, u, &[])?,
        DerivativeMethod::FiniteDifference => step_jacobians_fd(sim, x, u, &[])?,
    };
    let cost = problem.cost.calc_diff(&sim.model, data, x, u, false);
    Ok(StageModel {
        fx: j.state,
        fu: j.control,
        cost,
    })
}

/// The terminal cost's derivatives at the last state of `states`.
fn linearize_terminal(
    sim: &Simulator,
    problem: &TrajectoryProblem,
    states: &[State],
) -> CostDerivatives {
    let mut data = MultibodyData::new(&sim.model);
    let zero = DVector::zeros(sim.model.nu());
    let last = states.last().expect("invariant: a trajectory has x_0");
    problem
        .cost
        .calc_diff(&sim.model, &mut data, last, &zero, true)
}

/// Linearizes every stage of `traj` (step Jacobians by `method`, cost derivatives) and the
/// terminal cost, splitting the stages over `workers` (one simulator each, at least one).
///
/// # Errors
/// The first step whose Jacobians fail.
pub fn linearize(
    workers: &mut [Simulator],
    problem: &TrajectoryProblem,
    traj: &Trajectory,
    method: DerivativeMethod,
) -> Result<Linearization> {
    let T = traj.controls.len();
    let chunk = T.div_ceil(workers.len().max(1)).max(1);
    let parts: Vec<Result<Vec<StageModel>>> = workers
        .par_iter_mut()
        .enumerate()
        .map(|(w, sim)| {
            let mut data = MultibodyData::new(&sim.model);
            (w * chunk..((w + 1) * chunk).min(T))
                .map(|t| {
                    let (x, u) = (&traj.states[t], &traj.controls[t]);
                    linearize_stage(sim, &mut data, problem, x, u, method)
                })
                .collect()
        })
        .collect();
    let mut stages = Vec::with_capacity(T);
    for p in parts {
        stages.extend(p?);
    }
    let terminal = linearize_terminal(&workers[0], problem, &traj.states);
    Ok((stages, terminal))
}

/// The warm start of the problem that follows `report`'s by one closed-loop step from
/// `report.trajectory.states[1]`, for `problem` (its `x_0` that state, its `num_steps` one
/// less than `report`'s, or the same): the solution's tail, extended by one step with its
/// last control when the horizon does not shrink, with the tail of the derivatives if
/// `report` has them (the extension's stage derivatives on `workers[0]`), and `report`'s μ.
/// By Bellman's principle the tail is the new problem's solution as far as the old one was
/// solved, so nothing is simulated again but the extension. `None` if `problem.x0` is not
/// that state bit for bit, the horizons do not fit, or the extension fails to simulate or
/// to differentiate (then roll out the shifted controls instead).
pub fn shifted_start(
    sim: &mut Simulator,
    workers: &mut [Simulator],
    problem: &TrajectoryProblem,
    report: &IlqrReport,
    method: DerivativeMethod,
) -> Option<IlqrStart> {
    let old = &report.trajectory;
    let T = old.controls.len();
    let T_new = problem.num_steps;
    if T == 0 || old.states.get(1) != Some(&problem.x0) || !(T_new + 1 == T || T_new == T) {
        return None;
    }
    let mut states = old.states[1..].to_vec();
    let mut controls = old.controls[1..].to_vec();
    let mut reports = old.reports[1..].to_vec();
    let mut stages = report
        .linearization
        .as_ref()
        .map(|(stages, _)| stages[1..].to_vec());
    let mut data = MultibodyData::new(&sim.model);
    if T_new == T {
        let x = states
            .last()
            .expect("invariant: a trajectory has x_0")
            .clone();
        let u = old.controls.last().expect("invariant: T ≥ 1").clone();
        let (next, step_report) = sim.step(&x, &u).ok()?;
        if let Some(stages) = &mut stages {
            let worker = workers.first_mut()?;
            stages.push(linearize_stage(worker, &mut data, problem, &x, &u, method).ok()?);
        }
        states.push(next);
        controls.push(u);
        reports.push(step_report);
    }
    let cost = problem.total_cost(sim, &mut data, &states, &controls);
    let linearization = stages.map(|stages| {
        let terminal = linearize_terminal(sim, problem, &states);
        (stages, terminal)
    });
    cost.is_finite().then_some(IlqrStart {
        trajectory: Trajectory {
            states,
            controls,
            reports,
            cost,
        },
        linearization,
        mu: report.mu,
    })
}

/// The tangent difference `x ⊖ x̄` (2nv).
fn state_difference(sim: &Simulator, x: &State, x_bar: &State) -> DVector<f64> {
    let nv = sim.model.nv();
    let mut d = DVector::zeros(2 * nv);
    d.rows_mut(0, nv)
        .copy_from(&sim.model.difference(&x.q, &x_bar.q));
    d.rows_mut(nv, nv).copy_from(&(&x.v - &x_bar.v));
    d
}

/// Forward pass with step `alpha`: the closed-loop rollout about `traj`. `None` if a step
/// fails (the trial α is rejected).
pub fn forward_pass(
    sim: &mut Simulator,
    problem: &TrajectoryProblem,
    traj: &Trajectory,
    bp: &BackwardPass,
    alpha: f64,
) -> Option<Trajectory> {
    let T = traj.controls.len();
    let mut states = Vec::with_capacity(T + 1);
    let mut controls = Vec::with_capacity(T);
    let mut reports = Vec::with_capacity(T);
    states.push(problem.x0.clone());
    for t in 0..T {
        let x = states.last().expect("invariant: x_0 pushed");
        let dx = state_difference(sim, x, &traj.states[t]);
        let mut u = &traj.controls[t] + &bp.k[t] * alpha + &bp.K[t] * dx;
        if let Some(b) = &problem.bounds {
            u = b.clamp(&u);
        }
        let (next, report) = sim.step(x, &u).ok()?;
        states.push(next);
        controls.push(u);
        reports.push(report);
    }
    let mut data = MultibodyData::new(&sim.model);
    let cost = problem.total_cost(sim, &mut data, &states, &controls);
    cost.is_finite().then_some(Trajectory {
        states,
        controls,
        reports,
        cost,
    })
}

/// The backtracking line search: the first α of `1, β, β², … ≥ α_min` whose forward pass
/// lowers the cost by at least `armijo · (−ΔJ(α))`, with that pass, α and `ΔJ(α)`; `None` if
/// none does. With IFT derivatives the trial α run on the workers (copies of `sim`) in
/// batches of one per worker (rayon), each batch scanned in order, so the accepted α is that
/// of the one-by-one search, whatever the number of workers, and a rejected search of `n`
/// trials (11 at the defaults) costs `⌈n / workers⌉` rollouts of wall time on free cores; the
/// trials after the accepted α in its batch are wasted. FD workers solve to the gradient
/// check's tolerance, so with FD the trials run one by one on `sim`.
fn line_search(
    sim: &mut Simulator,
    workers: &mut [Simulator],
    problem: &TrajectoryProblem,
    traj: &Trajectory,
    bp: &BackwardPass,
    params: &IlqrParams,
) -> Option<(Trajectory, f64, f64)> {
    let alphas: Vec<f64> = std::iter::successors(Some(1.0), |a| Some(a * params.backtrack))
        .take_while(|&a| a >= params.min_alpha)
        .collect();
    let acceptable = |candidate: &Trajectory, expected: f64| {
        let decrease = traj.cost - candidate.cost;
        decrease > 0.0 && decrease >= params.armijo * (-expected).max(0.0)
    };
    let batch = match params.derivatives {
        DerivativeMethod::Ift => workers.len().max(1),
        DerivativeMethod::FiniteDifference => 1,
    };
    for chunk in alphas.chunks(batch) {
        let candidates: Vec<Option<Trajectory>> = match params.derivatives {
            DerivativeMethod::Ift => workers
                .par_iter_mut()
                .zip(chunk.par_iter())
                .map(|(w, &alpha)| forward_pass(w, problem, traj, bp, alpha))
                .collect(),
            DerivativeMethod::FiniteDifference => {
                vec![forward_pass(sim, problem, traj, bp, chunk[0])]
            }
        };
        for (&alpha, candidate) in chunk.iter().zip(candidates) {
            let expected = bp.expected_change(alpha);
            if let Some(candidate) = candidate.filter(|c| acceptable(c, expected)) {
                return Some((candidate, alpha, expected));
            }
        }
    }
    None
}

/// Runs iLQR from the controls `initial` (T × nu; warm start: a previous solution, shifted).
///
/// # Errors
/// Size mismatches; [`Error::TrajectoryOptimization`] when the initial guess cannot be
/// simulated, a step cannot be differentiated, or its cost is not finite.
pub fn solve(
    sim: &mut Simulator,
    problem: &TrajectoryProblem,
    initial: &[DVector<f64>],
    params: &IlqrParams,
) -> Result<IlqrReport> {
    solve_observed(sim, problem, initial, params, &mut |_| {
        ControlFlow::Continue(())
    })
}

/// [`solve`], calling `observe` with the statistics of each iteration as it ends (for progress
/// displays and logs); `observe` returning [`ControlFlow::Break`] stops the iterations with
/// [`Status::Interrupted`] and the best trajectory so far.
///
/// # Errors
/// As [`solve`].
pub fn solve_observed(
    sim: &mut Simulator,
    problem: &TrajectoryProblem,
    initial: &[DVector<f64>],
    params: &IlqrParams,
    observe: &mut dyn FnMut(&IterationStats) -> ControlFlow<()>,
) -> Result<IlqrReport> {
    let start = Instant::now();
    let warm = IlqrStart::rollout(sim, problem, initial, params.mu_init)?;
    let mut workers = make_workers(sim, params)?;
    let mut report = solve_from(sim, &mut workers, problem, warm, params, observe)?;
    report.wall_s = start.elapsed().as_secs_f64();
    Ok(report)
}

/// An optimization failure at `iteration` with the cost so far.
fn fail(reason: String, iteration: usize, cost: f64) -> Error {
    Error::TrajectoryOptimization {
        reason,
        iteration,
        cost,
    }
}

/// [`solve_observed`] from a rolled-out trajectory ([`IlqrStart`]: a warm start that may
/// carry its derivatives and μ), with the derivative workers `workers` ([`make_workers`],
/// kept between calls by MPC).
///
/// # Errors
/// As [`solve`]; [`Error::DimensionMismatch`] when the start's trajectory or derivatives do
/// not have the problem's T stages; [`Error::InvalidParameter`] when its first state is not
/// `problem.x0` or there are no workers.
pub fn solve_from(
    sim: &mut Simulator,
    workers: &mut [Simulator],
    problem: &TrajectoryProblem,
    warm: IlqrStart,
    params: &IlqrParams,
    observe: &mut dyn FnMut(&IterationStats) -> ControlFlow<()>,
) -> Result<IlqrReport> {
    let start = Instant::now();
    let IlqrStart {
        trajectory: mut traj,
        mut linearization,
        mut mu,
    } = warm;
    problem.check(sim, &traj.controls)?;
    let stages = linearization
        .as_ref()
        .map_or(problem.num_steps, |l| l.0.len());
    for (what, found) in [
        ("start states (T + 1)", traj.states.len()),
        ("start derivatives (T + 1)", stages + 1),
    ] {
        if found != problem.num_steps + 1 {
            return Err(Error::DimensionMismatch {
                what: what.into(),
                expected: problem.num_steps + 1,
                found,
            });
        }
    }
    if traj.states[0] != problem.x0 {
        return Err(Error::invalid(
            "start trajectory",
            traj.states[0].t,
            "must start at the problem's x_0",
        ));
    }
    if !traj.cost.is_finite() {
        return Err(fail("the initial cost is not finite".into(), 0, traj.cost));
    }
    if workers.is_empty() {
        return Err(Error::invalid("workers", 0, "need at least one simulator"));
    }
    let initial_cost = traj.cost;
    let mut iterations = Vec::new();
    let mut gains = Vec::new();
    let mut status = Status::MaxIterations;
    for iteration in 1..=params.max_iterations {
        let t0 = Instant::now();
        if linearization.is_none() {
            linearization = Some(
                linearize(workers, problem, &traj, params.derivatives).map_err(|e| {
                    fail(
                        format!("step derivatives failed: {e}"),
                        iteration - 1,
                        traj.cost,
                    )
                })?,
            );
        }
        let (stages, terminal) = linearization.as_ref().expect("invariant: set above");
        let derivatives_s = t0.elapsed().as_secs_f64();

        // Backward pass, raising μ until every Q_uu + μI is positive definite.
        let t1 = Instant::now();
        let bp = loop {
            match backward_pass(
                stages,
                terminal,
                &traj.controls,
                problem.bounds.as_ref(),
                mu,
            ) {
                Ok(bp) => break Some(bp),
                Err(_) if mu * params.mu_factor <= params.mu_max => {
                    mu = (mu * params.mu_factor).max(params.mu_init);
                }
                Err(_) => break None,
            }
        };
        let backward_s = t1.elapsed().as_secs_f64();
        let Some(bp) = bp else {
            status = Status::NoFurtherDecrease;
            break;
        };
        gains.clone_from(&bp.K);
        let scale = traj.cost.abs().max(f64::MIN_POSITIVE);
        let gradient_small = bp.gradient_norm < params.gradient_tolerance;
        let model_flat = -bp.expected_change(1.0) < params.cost_tolerance * scale;
        // This iteration as rejected and without a forward pass; updated below if it has one.
        let mut stats = IterationStats {
            iteration,
            cost: traj.cost,
            alpha: 0.0,
            mu,
            expected_change: bp.expected_change(1.0),
            gradient_norm: bp.gradient_norm,
            accepted: false,
            rollout_s: 0.0,
            derivatives_s,
            backward_s,
        };
        if gradient_small || model_flat {
            // Converged: this iteration ends the run whatever the observer says.
            let _ = observe(&stats);
            iterations.push(stats);
            status = if gradient_small {
                Status::ConvergedGradient
            } else {
                Status::ConvergedCost
            };
            break;
        }

        // Forward pass with backtracking on the feedforward.
        let t2 = Instant::now();
        let accepted = line_search(sim, workers, problem, &traj, &bp, params);
        stats.rollout_s = t2.elapsed().as_secs_f64();
        match accepted {
            Some((candidate, alpha, expected)) => {
                let relative = (traj.cost - candidate.cost) / scale;
                traj = candidate;
                linearization = None;
                stats.cost = traj.cost;
                stats.alpha = alpha;
                stats.expected_change = expected;
                stats.accepted = true;
                let flow = observe(&stats);
                iterations.push(stats);
                if flow.is_break() {
                    status = Status::Interrupted;
                    break;
                }
                mu /= params.mu_factor;
                if mu < params.mu_min {
                    mu = 0.0;
                }
                let stalled = iteration > params.stall_iterations
                    && iterations
                        .iter()
                        .rev()
                        .nth(params.stall_iterations)
                        .is_some_and(|s: &IterationStats| {
                            s.cost - traj.cost < params.cost_tolerance * scale
                        });
                if (relative < params.cost_tolerance && alpha == 1.0) || stalled {
                    status = Status::ConvergedCost;
                    break;
                }
            }
            None => {
                let flow = observe(&stats);
                iterations.push(stats);
                if flow.is_break() {
                    status = Status::Interrupted;
                    break;
                }
                if mu >= params.mu_max {
                    status = Status::NoFurtherDecrease;
                    break;
                }
                mu = (mu * params.mu_factor)
                    .max(params.mu_init)
                    .min(params.mu_max);
            }
        }
    }
    Ok(IlqrReport {
        trajectory: traj,
        gains,
        initial_cost,
        status,
        iterations,
        wall_s: start.elapsed().as_secs_f64(),
        mu,
        linearization,
    })
}
