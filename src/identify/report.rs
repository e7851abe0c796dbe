//! Running an identification and what it reports: the status with its reason, estimates with
//! 95 % intervals and identifiability, the goodness of fit, the starts, the residual of each
//! trajectory, the iteration history and the fit itself.

#![allow(non_snake_case)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use nalgebra::{DMatrix, DVector};

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::identify::covariance::{chi2_test, gauss_newton_covariance, Covariance, Z95};
use crate::identify::lbfgs::{lbfgs, LbfgsSettings};
use crate::identify::levenberg_marquardt::{
    levenberg_marquardt, projected_gradient, Iteration, LeastSquares, LmSettings, Termination,
};
use crate::identify::profile::{profile_interval, HALF_CHI2_1_95};
use crate::identify::residuals::{IdentificationProblem, Need};
use crate::identify::shooting::{default_segment_samples, segmented};
use crate::simulate::recording_bytes_per_step;

/// Which optimizer minimizes the loss.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Method {
    /// Levenberg–Marquardt with forward sensitivities (default).
    #[default]
    LevenbergMarquardt,
    /// argmin's L-BFGS with adjoint gradients.
    Lbfgs,
}

impl Method {
    /// The name in files and on the command line: `levenberg-marquardt` or `lbfgs`.
    pub fn name(&self) -> &'static str {
        match self {
            Method::LevenbergMarquardt => "levenberg-marquardt",
            Method::Lbfgs => "lbfgs",
        }
    }
}

/// How the 95 % intervals are computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Intervals {
    /// Profile likelihood (default; `identify::profile`): follows the loss where it
    /// is not quadratic and leaves an end open where the data do not bound the parameter.
    #[default]
    Profile,
    /// Gauss–Newton (Wald) intervals `g(ŝ ± 1.96 σ_s)` only: cheaper, symmetric in `s`.
    Wald,
}

/// Multiple shooting (`crate::identify::shooting`) before the single-shooting fit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Shooting {
    /// On for records of at least [`AUTO_SHOOTING_STEPS`] steps whose measured columns
    /// determine the state; off otherwise (default).
    #[default]
    Auto,
    /// Off: single shooting (with horizon continuation) only.
    Off,
    /// On, with segments of this many samples.
    Segments(usize),
}

/// Records of at least this many steps get multiple shooting under [`Shooting::Auto`]: long
/// enough for stick-slip or impacts to make single shooting's loss rugged (the Painlevé rod
/// has 5000; the shipped bouncing-ball, sliding and tumbling boxes 40-170).
pub const AUTO_SHOOTING_STEPS: usize = 1000;

/// Settings of [`identify`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IdentifySettings {
    /// The optimizer.
    pub method: Method,
    /// Horizon continuation: the fit runs in this many stages on the first `T/2^(n−1)`,
    /// `T/2^(n−2)`, …, `T` steps of the data, each started from the previous estimate
    /// (default 3; 1 fits the whole record at once). Bounces and tumbles make the loss of a
    /// long record non-convex in (k, d, μ): a wrong stiffness shifts every later impact. A
    /// short prefix has a wide basin; its estimate starts the longer fits inside theirs.
    pub stages: usize,
    /// Number of starts (default 4): the given initial values, then `starts − 1` points drawn
    /// log-uniformly (uniformly for a parameter whose bounds are not both positive) within
    /// each parameter's search bounds ([`crate::identify::ParamSpec::search_bounds`]). An
    /// unbounded `identity` parameter keeps its initial value in every start.
    pub starts: usize,
    /// Seed of the start points: the same seed gives the same starts, and the same result
    /// whatever the number of threads.
    pub seed: u64,
    /// Multiple shooting before the single-shooting fit.
    pub shooting: Shooting,
    /// How the intervals are computed.
    pub intervals: Intervals,
    /// Levenberg–Marquardt settings.
    pub lm: LmSettings,
    /// L-BFGS settings.
    pub lbfgs: LbfgsSettings,
}

/// Outcome of an identification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The optimizer's step or gradient criteria hold and so does first-order optimality: the
    /// projected gradient predicts a Gauss–Newton decrease below [`OPTIMALITY`] times the
    /// noise variance factor (or a step below 1e-6 in every coordinate).
    Converged,
    /// The optimizer stopped (step or cost criterion) where first-order optimality does not
    /// hold.
    Stalled,
    /// The iteration limit came first; the estimates are the last iterate.
    MaxIterations,
    /// No step could be taken from some iterate: every trial rollout failed.
    Failed,
    /// The caller's stop flag (Ctrl-C on the command line) ended the fit early: the estimates
    /// are the best start's last iterate and the intervals are Gauss–Newton (Wald) ones.
    Interrupted,
}

impl Status {
    /// `converged`, `stalled`, `max-iterations`, `failed` or `interrupted`.
    pub fn name(&self) -> &'static str {
        match self {
            Status::Converged => "converged",
            Status::Stalled => "stalled",
            Status::MaxIterations => "max-iterations",
            Status::Failed => "failed",
            Status::Interrupted => "interrupted",
        }
    }
}

/// First-order optimality: the Gauss–Newton decrease `½ P(g)ᵀ A⁻¹ P(g)` still on offer at a
/// converged estimate, relative to the noise variance factor (a decrease of 1e-3 moves the
/// estimate by about 0.045 standard deviations).
pub const OPTIMALITY: f64 = 1e-3;

/// Two starts reached the same basin when their final losses differ by less than
/// `BASIN_TOLERANCE · max(L_best, noise variance factor)`: a hundredth of the loss change
/// that a 95 % profile interval spans is much larger than this.
pub const BASIN_TOLERANCE: f64 = 1e-3;

/// One start of a multi-start fit.
#[derive(Clone, Debug, PartialEq)]
pub struct StartOutcome {
    /// The start values θ₀ (np).
    pub initial: Vec<f64>,
    /// The values θ at its final iterate (np).
    pub estimate: Vec<f64>,
    /// The values θ the multiple-shooting stage reached (np), when it ran.
    pub shooting_estimate: Option<Vec<f64>>,
    /// Its loss `L` at the final iterate (`None`: the start failed, see `error`).
    pub cost: Option<f64>,
    /// The error that ended the start, if it failed.
    pub error: Option<String>,
}

/// The estimate of one parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// The parameter's name.
    pub name: String,
    /// Initial value θ₀.
    pub initial: f64,
    /// The estimate θ̂, `None` if not identifiable (the final iterate is then arbitrary along
    /// a direction the data does not see).
    pub estimate: Option<f64>,
    /// The final iterate, identifiable or not.
    pub final_value: f64,
    /// Standard deviation of θ̂ by the delta method, `g′(ŝ) σ_s` (widened with the
    /// covariance when the χ² test flags a mismatch).
    pub std_dev: Option<f64>,
    /// 95 % confidence interval `[lower, upper]`: by profile likelihood, or
    /// `[g(ŝ − 1.96 σ_s), g(ŝ + 1.96 σ_s)]` with [`Intervals::Wald`]; an end is `None` where
    /// the data do not bound the parameter on that side within its search bounds.
    pub ci95: (Option<f64>, Option<f64>),
    /// Whether the data determine the parameter: a non-singular Gauss–Newton matrix along it,
    /// a bounded relative uncertainty, and (with profile intervals) both ends closed.
    pub identifiable: bool,
}

/// The fit of one trajectory at the estimate.
#[derive(Clone, Debug, PartialEq)]
pub struct TrajectoryFit {
    /// Where the data came from.
    pub source: PathBuf,
    /// Measured columns (nc).
    pub columns: Vec<String>,
    /// Sample times (ns, s).
    pub times: Vec<f64>,
    /// Measured values (ns × nc).
    pub measured: DMatrix<f64>,
    /// Simulated values at the estimate (ns × nc).
    pub simulated: DMatrix<f64>,
    /// `½ ‖r̃‖²` of this trajectory at the estimate.
    pub cost: f64,
    /// RMS of the unwhitened residuals `ŷ − y` per column (nc, in each column's unit).
    pub rms: Vec<f64>,
}

/// The goodness of fit at the estimate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GoodnessOfFit {
    /// Whether σ was given for every record (the χ² test needs it).
    pub noise_known: bool,
    /// `χ²/ν`: with σ given, of the whitened residuals; with σ estimated, 1 by construction.
    pub reduced_chi2: f64,
    /// Degrees of freedom `ν = m − np`.
    pub dof: usize,
    /// The central 99.9 % range of `χ²/ν` for a right model (σ given).
    pub range: (f64, f64),
    /// `χ²/ν` outside `range` (σ given): model mismatch when above, σ overstated when below.
    pub flagged: bool,
    /// The factor on the covariance and on the profile threshold: 1 with σ given and the fit
    /// consistent, `χ²/ν` when it is flagged too large (widened intervals), `σ̂²` with σ
    /// estimated.
    pub variance_factor: f64,
}

/// Everything an identification run reports.
#[derive(Clone, Debug)]
pub struct IdentificationReport {
    /// The problem's name.
    pub problem: String,
    /// The optimizer.
    pub method: Method,
    /// Outcome.
    pub status: Status,
    /// Why: which criterion stopped the best start and how first-order optimality came out.
    pub status_reason: String,
    /// Iterations of the optimizer over all stages of the best start, multiple shooting
    /// included (accepted LM steps; L-BFGS iterations).
    pub iterations: usize,
    /// Wall time of the whole run (s).
    pub wall_s: f64,
    /// One per parameter, in the problem's order.
    pub estimates: Vec<Estimate>,
    /// Loss `L` at the estimate.
    pub cost: f64,
    /// `‖P(∇L)‖_∞` at the estimate (coordinates `s`, gradient projected on the bounds).
    pub gradient_norm: f64,
    /// The χ² test and the interval widening.
    pub goodness: GoodnessOfFit,
    /// Every start, in order (the given start first).
    pub starts: Vec<StartOutcome>,
    /// Index of the best start.
    pub best_start: usize,
    /// How many starts reached the best loss within [`BASIN_TOLERANCE`], or the best estimate
    /// within its 95 % Wald half-width (at least 1e-4 in `s`) in every identifiable parameter.
    pub best_basin: usize,
    /// Segments per record of the multiple-shooting stage, `None` when it did not run; with
    /// the reason when [`Shooting::Auto`] left it off or it was not available.
    pub shooting: (Option<usize>, String),
    /// Iterates of the best start, the initial point first.
    pub history: Vec<Iteration>,
    /// Covariance in the coordinates `s`.
    pub covariance: Covariance,
    /// One per trajectory, in order.
    pub fits: Vec<TrajectoryFit>,
}

impl Default for IdentifySettings {
    fn default() -> Self {
        IdentifySettings {
            method: Method::default(),
            stages: 3,
            starts: 4,
            seed: 0,
            shooting: Shooting::default(),
            intervals: Intervals::default(),
            lm: LmSettings::default(),
            lbfgs: LbfgsSettings::default(),
        }
    }
}

impl LeastSquares for IdentificationProblem {
    fn residuals(&self, s: &[f64]) -> Result<DVector<f64>> {
        Ok(self.evaluate(s, Need::Residuals)?.residuals())
    }

    fn residuals_and_jacobian(&self, s: &[f64]) -> Result<(DVector<f64>, DMatrix<f64>)> {
        let e = self.evaluate(s, Need::Jacobian)?;
        let J = e
            .jacobian()
            .expect("invariant: Need::Jacobian computes Jacobians");
        Ok((e.residuals(), J))
    }
}

/// SplitMix64 (Steele, Lea & Flood, OOPSLA 2014): a tiny generator whose sequence is fixed by
/// its definition, so a seed gives the same starts on every platform and crate version.
struct SplitMix64(u64);

impl SplitMix64 {
    /// A uniform sample in [0, 1) (53 random bits).
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The start points in `s` (settings docs): the initial values, then draws within bounds.
fn start_points(problem: &IdentificationProblem, settings: &IdentifySettings) -> Vec<Vec<f64>> {
    let mut rng = SplitMix64(settings.seed);
    let first = problem.initial_coordinates();
    let mut starts = vec![first.clone()];
    for _ in 1..settings.starts.max(1) {
        starts.push(
            problem
                .parameters
                .iter()
                .zip(&first)
                .map(|(p, &s0)| {
                    let u = rng.uniform();
                    let theta = match p.search_bounds() {
                        Some((lo, hi)) if lo > 0.0 => (lo.ln() + u * (hi / lo).ln()).exp(),
                        Some((lo, hi)) => lo + u * (hi - lo),
                        None => return s0,
                    };
                    // Open logistic bounds: stay strictly inside.
                    p.transform.to_coordinate(&p.name, theta).unwrap_or(s0)
                })
                .collect(),
        );
    }
    starts
}

/// One local fit from `s0`: horizon continuation stages on `problem`.
struct LocalFit {
    s: Vec<f64>,
    /// The multiple-shooting estimate that started the single-shooting fit.
    shooting_estimate: Option<Vec<f64>>,
    termination: Termination,
    history: Vec<Iteration>,
    iterations: usize,
}

fn local_fit(
    problem: &IdentificationProblem,
    s0: &[f64],
    stages: usize,
    settings: &IdentifySettings,
    stop: &AtomicBool,
) -> Result<LocalFit> {
    let bounds = coordinate_bounds(problem);
    let mut s = s0.to_vec();
    let mut history: Vec<Iteration> = Vec::new();
    let mut termination = Termination::MaxIterations;
    let mut iterations = 0;
    let stages = stages.max(1);
    let steps = problem.num_steps();
    for stage in 0..stages {
        let horizon = steps.div_ceil(1 << (stages - 1 - stage));
        let staged;
        let on = if stages == 1 {
            problem
        } else {
            staged = problem.with_horizon(horizon)?;
            &staged
        };
        let (s_stage, t, h) = match settings.method {
            Method::LevenbergMarquardt => {
                let out = levenberg_marquardt(on, &s, &bounds, &settings.lm, stop)?;
                (out.s, out.termination, out.history)
            }
            Method::Lbfgs => {
                let out = lbfgs(on, &s, &settings.lbfgs, stop)?;
                (out.s, out.termination, out.history)
            }
        };
        // Iterations are numbered across stages; each stage's initial point is the previous
        // stage's last iterate, recorded again with the longer horizon's cost.
        let offset = history.last().map_or(0, |h| h.iteration);
        let accepted = h.len() - 1;
        history.extend(h.into_iter().map(|mut it| {
            it.iteration += offset;
            it.horizon = horizon;
            it
        }));
        iterations += accepted;
        s = s_stage;
        termination = t;
        if t == Termination::Interrupted {
            break;
        }
    }
    Ok(LocalFit {
        s,
        shooting_estimate: None,
        termination,
        history,
        iterations,
    })
}

/// The search bounds of every parameter in `s`.
fn coordinate_bounds(problem: &IdentificationProblem) -> Vec<(f64, f64)> {
    problem
        .parameters
        .iter()
        .map(crate::identify::ParamSpec::coordinate_bounds)
        .collect()
}

/// Whether multiple shooting runs, with segments of how many samples, or why not.
fn shooting_plan(
    problem: &IdentificationProblem,
    settings: &IdentifySettings,
) -> (Option<IdentificationProblem>, (Option<usize>, String)) {
    let samples = match settings.shooting {
        Shooting::Off => return (None, (None, "off".into())),
        Shooting::Auto if problem.num_steps() < AUTO_SHOOTING_STEPS => {
            return (
                None,
                (
                    None,
                    format!("off: records shorter than {AUTO_SHOOTING_STEPS} steps (auto)"),
                ),
            )
        }
        Shooting::Auto => default_segment_samples(problem),
        Shooting::Segments(n) => n,
    };
    match segmented(problem, samples) {
        Ok(p) => {
            let count = p.trajectories.len() / problem.trajectories.len().max(1);
            (
                Some(p),
                (
                    Some(count),
                    format!("{count} segments of {samples} samples per record"),
                ),
            )
        }
        Err(e) => (None, (None, format!("not available: {e}"))),
    }
}

/// Identifies the parameters of `problem` (module docs of [`crate::identify`]): multi-start,
/// each start by multiple shooting (when on) and then single shooting with horizon
/// continuation; at the best estimate the χ² test, the covariance, the intervals and the
/// status.
///
/// # Errors
/// [`crate::error::Error::TooLarge`] when a rollout to the last sample would not fit in
/// memory; a failed rollout or a non-finite loss at the initial point when every start
/// fails; a failed rollout at the estimate; argmin failures.
pub fn identify(
    problem: &IdentificationProblem,
    settings: &IdentifySettings,
) -> Result<IdentificationReport> {
    identify_until(problem, settings, &AtomicBool::new(false))
}

/// [`identify`], polling `stop` between optimizer iterations and profile points: once it is
/// raised (e.g. by a Ctrl-C handler) every start ends at its last accepted iterate, the
/// profiles are abandoned, and the report of what exists comes back with
/// [`Status::Interrupted`] and Gauss–Newton (Wald) intervals.
///
/// # Errors
/// As [`identify`].
pub fn identify_until(
    problem: &IdentificationProblem,
    settings: &IdentifySettings,
    stop: &AtomicBool,
) -> Result<IdentificationReport> {
    let start = Instant::now();
    let steps = problem.num_steps();
    let (nq, nv) = (problem.simulator.model.nq(), problem.simulator.model.nv());
    crate::budget::allocation(
        "data",
        &format!("a rollout to the last sample: {steps} steps"),
        steps as f64,
        recording_bytes_per_step(nq, nv) + 8 * 4 * nv * nv,
        "sample a shorter stretch of the trajectory, or take a larger time step",
    )?;
    let bounds = coordinate_bounds(problem);
    let (multiple, shooting) = shooting_plan(problem, settings);
    let points = start_points(problem, settings);
    // Starts run in parallel; each is deterministic and they are gathered in order, so the
    // result does not depend on the number of threads.
    let fits: Vec<Result<LocalFit>> = points
        .par_iter()
        .map(|s0| {
            if stop.load(Ordering::Relaxed) {
                return Err(Error::Interrupted {
                    steps_completed: 0,
                    t: 0.0,
                });
            }
            let (s1, shot) = match &multiple {
                Some(ms) => {
                    let f = local_fit(ms, s0, 1, settings, stop)?;
                    (f.s.clone(), Some(f))
                }
                None => (s0.clone(), None),
            };
            let mut fit = local_fit(problem, &s1, settings.stages, settings, stop)?;
            if let Some(shot) = shot {
                fit.iterations += shot.iterations;
                fit.shooting_estimate = Some(shot.s);
            }
            Ok(fit)
        })
        .collect();
    let mut outcomes = Vec::with_capacity(fits.len());
    let mut best: Option<(usize, f64)> = None;
    let mut first_error = None;
    for (k, (fit, s0)) in fits.iter().zip(&points).enumerate() {
        match fit {
            Ok(f) => {
                let cost = f.history.last().map_or(f64::INFINITY, |h| h.cost);
                if cost.is_finite() && best.is_none_or(|(_, c)| cost < c) {
                    best = Some((k, cost));
                }
                outcomes.push(StartOutcome {
                    initial: problem.values(s0),
                    estimate: problem.values(&f.s),
                    shooting_estimate: f.shooting_estimate.as_ref().map(|s| problem.values(s)),
                    cost: cost.is_finite().then_some(cost),
                    error: None,
                });
            }
            Err(e) => {
                outcomes.push(StartOutcome {
                    initial: problem.values(s0),
                    estimate: problem.values(s0),
                    shooting_estimate: None,
                    cost: None,
                    error: Some(e.to_string()),
                });
            }
        }
    }
    let fits_s: Vec<Option<Vec<f64>>> = fits
        .iter()
        .map(|f| f.as_ref().ok().map(|f| f.s.clone()))
        .collect();
    let Some((best_start, _)) = best else {
        for f in fits {
            if let Err(e) = f {
                first_error.get_or_insert(e);
            }
        }
        return Err(first_error.unwrap_or_else(|| {
            Error::invalid("identification", "", "no start reached a finite loss")
        }));
    };
    let fit = fits
        .into_iter()
        .nth(best_start)
        .and_then(Result::ok)
        .ok_or_else(|| Error::invalid("identification", best_start, "the best start has no fit"))?;
    let s = fit.s.clone();

    let at_estimate = problem.evaluate(&s, Need::Jacobian)?;
    let J = at_estimate
        .jacobian()
        .expect("invariant: Need::Jacobian computes Jacobians");
    let r = at_estimate.residuals();
    let cost = at_estimate.cost();
    if !cost.is_finite() || J.iter().any(|x| !x.is_finite()) {
        return Err(Error::invalid(
            "loss at the estimate",
            cost,
            "must be finite with a finite Jacobian",
        ));
    }
    let noise_known = problem.trajectories.iter().all(|t| t.noise.is_some());
    let np = problem.num_parameters();
    let dof = r.len().saturating_sub(np);
    let test = chi2_test(r.norm_squared(), dof);
    let relative_scale: Vec<f64> = problem
        .parameters
        .iter()
        .zip(&s)
        .map(|(p, &s)| {
            // A value at exactly zero (identity transform) has no relative scale to check.
            let value = p.transform.to_value(s).abs();
            if value > 0.0 {
                p.transform.derivative(s) / value
            } else {
                0.0
            }
        })
        .collect();
    let mut covariance = gauss_newton_covariance(&r, &J, noise_known, &relative_scale);
    let widen = noise_known && test.too_large();
    if widen {
        covariance.matrix *= test.reduced;
        covariance.noise_variance = test.reduced;
    }
    let goodness = GoodnessOfFit {
        noise_known,
        reduced_chi2: if noise_known { test.reduced } else { 1.0 },
        dof: test.dof,
        range: test.range,
        flagged: noise_known && test.flagged(),
        variance_factor: covariance.noise_variance,
    };

    // First-order optimality (Status docs).
    let g = J.transpose() * &r;
    let pg = projected_gradient(&g, &s, &bounds);
    let A = J.transpose() * &J;
    let free: Vec<usize> = (0..np).filter(|&i| pg[i] != 0.0 || g[i] == 0.0).collect();
    let gn_step = {
        let mut M = DMatrix::from_fn(free.len(), free.len(), |a, b| A[(free[a], free[b])]);
        let scale = M.diagonal().max().max(f64::MIN_POSITIVE);
        for a in 0..free.len() {
            M[(a, a)] += 1e-12 * scale;
        }
        let rhs = DVector::from_fn(free.len(), |a, _| pg[free[a]]);
        M.cholesky().map(|c| c.solve(&rhs))
    };
    let (offered, step_max) = gn_step.map_or((f64::INFINITY, f64::INFINITY), |d| {
        let rhs = DVector::from_fn(free.len(), |a, _| pg[free[a]]);
        (0.5 * rhs.dot(&d), d.amax())
    });
    let optimal = offered <= OPTIMALITY * covariance.noise_variance || step_max <= 1e-6;
    let reason_optimality = format!(
        "projected gradient {:.3e}; a Gauss-Newton step of {step_max:.1e} (in log or raw coordinates) would lower the loss by {offered:.3e}, {:.2e} of the noise variance factor {:.3e} (optimal below {OPTIMALITY:.0e}, or a step below 1e-6)",
        pg.amax(),
        offered / covariance.noise_variance,
        covariance.noise_variance
    );
    let (mut status, stop_reason) = match fit.termination {
        _ if stop.load(Ordering::Relaxed) => (
            Status::Interrupted,
            "interrupted before every start finished",
        ),
        Termination::Failed => (Status::Failed, "every trial step's rollout failed"),
        Termination::MaxIterations => (Status::MaxIterations, "iteration limit reached"),
        t if optimal => (
            Status::Converged,
            match t {
                Termination::Gradient => "gradient criterion",
                Termination::Step => "step criterion",
                Termination::Cost => "cost criterion",
                _ => "the optimizer's convergence test",
            },
        ),
        _ => (
            Status::Stalled,
            "the optimizer stopped short of first-order optimality",
        ),
    };
    let mut status_reason = format!("{stop_reason}; {reason_optimality}");

    // Best basin: starts whose final loss matches the best one, or whose estimate does (a
    // loss near zero, from noise-free data, leaves no loss scale to compare with).
    let tolerance = BASIN_TOLERANCE * cost.max(covariance.noise_variance);
    let best_cost = outcomes[best_start].cost.unwrap_or(cost);
    let best_basin = fits_s
        .iter()
        .zip(&outcomes)
        .filter(|(s_k, o)| {
            let same_cost = o.cost.is_some_and(|c| c - best_cost <= tolerance);
            let same_point = s_k.as_ref().is_some_and(|s_k| {
                // Parameters the data do not determine may end anywhere.
                s_k.iter().zip(&s).enumerate().all(|(i, (a, b))| {
                    !covariance.identifiable[i]
                        || (a - b).abs()
                            <= covariance.std_dev(i).map_or(0.0, |sd| Z95 * sd).max(1e-4)
                })
            });
            same_cost || same_point
        })
        .count();

    let threshold = HALF_CHI2_1_95 * covariance.noise_variance;
    let wald = || -> Vec<(Option<f64>, Option<f64>)> {
        (0..np)
            .map(|i| {
                covariance.std_dev(i).map_or((None, None), |sd| {
                    (
                        Some((s[i] - Z95 * sd).max(bounds[i].0)),
                        Some((s[i] + Z95 * sd).min(bounds[i].1)),
                    )
                })
            })
            .collect()
    };
    let mut intervals = match settings.intervals {
        Intervals::Profile if status != Status::Interrupted => {
            let profile_lm = LmSettings {
                max_iterations: 20,
                ..settings.lm
            };
            (0..np)
                .into_par_iter()
                .map(|i| {
                    let first = covariance
                        .std_dev(i)
                        .map_or(0.1, |sd| (Z95 * sd).clamp(1e-6, 0.5));
                    profile_interval(
                        problem,
                        i,
                        &s,
                        cost,
                        &bounds,
                        threshold,
                        first,
                        &profile_lm,
                        stop,
                    )
                })
                .collect()
        }
        _ => wald(),
    };
    if status != Status::Interrupted && stop.load(Ordering::Relaxed) {
        // The profiles were cut short: their ends mean nothing.
        intervals = wald();
        status = Status::Interrupted;
        status_reason = format!("interrupted while profiling the intervals; {status_reason}");
    }
    let estimates = problem
        .parameters
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let value = p.transform.to_value(s[i]);
            let sd = covariance.std_dev(i);
            let (lo, hi) = intervals[i];
            let identifiable = covariance.identifiable[i] && lo.is_some() && hi.is_some();
            Estimate {
                name: p.name.clone(),
                initial: p.initial,
                estimate: identifiable.then_some(value),
                final_value: value,
                std_dev: sd.map(|sd| p.transform.derivative(s[i]) * sd),
                ci95: (
                    lo.map(|c| p.transform.to_value(c)),
                    hi.map(|c| p.transform.to_value(c)),
                ),
                identifiable,
            }
        })
        .collect();
    let fits = problem
        .trajectories
        .iter()
        .zip(&at_estimate.trajectories)
        .map(|(m, e)| {
            let diff = &e.simulated - &m.values;
            TrajectoryFit {
                source: m.source.clone(),
                columns: m.columns.clone(),
                times: m.times.clone(),
                measured: m.values.clone(),
                simulated: e.simulated.clone(),
                cost: e.cost(),
                rms: diff
                    .column_iter()
                    .map(|c| (c.norm_squared() / c.len() as f64).sqrt())
                    .collect(),
            }
        })
        .collect();
    Ok(IdentificationReport {
        problem: problem.name.clone(),
        method: settings.method,
        status,
        status_reason,
        iterations: fit.iterations,
        wall_s: start.elapsed().as_secs_f64(),
        estimates,
        cost,
        gradient_norm: pg.amax(),
        goodness,
        starts: outcomes,
        best_start,
        best_basin,
        shooting,
        history: fit.history,
        covariance,
        fits,
    })
}
