//! Running an identification and what it reports: estimates with 95 % intervals, the
//! residual of each trajectory, the iteration history and the fit itself.

#![allow(non_snake_case)]

use std::path::PathBuf;
use std::time::Instant;

use nalgebra::{DMatrix, DVector};

use crate::error::Result;
use crate::identify::covariance::{gauss_newton_covariance, Covariance, Z95};
use crate::identify::lbfgs::{lbfgs, LbfgsSettings};
use crate::identify::levenberg_marquardt::{
    levenberg_marquardt, Iteration, LeastSquares, LmSettings, Termination,
};
use crate::identify::residuals::{IdentificationProblem, Need};
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
    /// Levenberg–Marquardt settings.
    pub lm: LmSettings,
    /// L-BFGS settings.
    pub lbfgs: LbfgsSettings,
}

/// Outcome of an identification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The optimizer met a convergence test and every parameter is identifiable.
    Converged(Termination),
    /// The iteration limit came first; the estimates are the last iterate.
    MaxIterations,
    /// Some parameter is not identifiable from the data (near-singular `JᵀJ`).
    NotIdentifiable,
}

impl Status {
    /// `converged`, `max-iterations` or `not-identifiable`.
    pub fn name(&self) -> &'static str {
        match self {
            Status::Converged(_) => "converged",
            Status::MaxIterations => "max-iterations",
            Status::NotIdentifiable => "not-identifiable",
        }
    }
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
    /// Standard deviation of θ̂ by the delta method, `g′(ŝ) σ_s`.
    pub std_dev: Option<f64>,
    /// 95 % confidence interval `[g(ŝ − 1.96 σ_s), g(ŝ + 1.96 σ_s)]`.
    pub ci95: Option<(f64, f64)>,
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

/// Everything an identification run reports.
#[derive(Clone, Debug)]
pub struct IdentificationReport {
    /// The problem's name.
    pub problem: String,
    /// The optimizer.
    pub method: Method,
    /// Outcome.
    pub status: Status,
    /// Iterations of the optimizer over all stages (accepted LM steps; L-BFGS iterations).
    pub iterations: usize,
    /// Wall time of the whole run (s).
    pub wall_s: f64,
    /// One per parameter, in the problem's order.
    pub estimates: Vec<Estimate>,
    /// Loss `L` at the estimate.
    pub cost: f64,
    /// Iterates, the initial point first.
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

/// Identifies the parameters of `problem` (module docs of [`crate::identify`]).
///
/// # Errors
/// [`crate::error::Error::TooLarge`] when a rollout to the last sample would not fit in
/// memory; a failed rollout at the initial point or at the estimate, and argmin failures.
pub fn identify(
    problem: &IdentificationProblem,
    settings: &IdentifySettings,
) -> Result<IdentificationReport> {
    let start = Instant::now();
    let mut s = problem.initial_coordinates();
    let mut history: Vec<Iteration> = Vec::new();
    let mut termination = Termination::MaxIterations;
    let mut iterations = 0;
    let stages = settings.stages.max(1);
    let steps = problem.num_steps();
    let (nq, nv) = (problem.simulator.model.nq(), problem.simulator.model.nv());
    crate::budget::allocation(
        "data",
        &format!("a rollout to the last sample: {steps} steps"),
        steps as f64,
        recording_bytes_per_step(nq, nv) + 8 * 4 * nv * nv,
        "sample a shorter stretch of the trajectory, or take a larger time step",
    )?;
    for stage in 0..stages {
        let horizon = steps.div_ceil(1 << (stages - 1 - stage));
        let staged = problem.with_horizon(horizon)?;
        let (s_stage, t, h) = match settings.method {
            Method::LevenbergMarquardt => {
                let out = levenberg_marquardt(&staged, &s, &settings.lm)?;
                (out.s, out.termination, out.history)
            }
            Method::Lbfgs => {
                let out = lbfgs(&staged, &s, &settings.lbfgs)?;
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
    }
    let at_estimate = problem.evaluate(&s, Need::Jacobian)?;
    let J = at_estimate
        .jacobian()
        .expect("invariant: Need::Jacobian computes Jacobians");
    let r = at_estimate.residuals();
    let noise_known = problem.trajectories.iter().all(|t| t.noise.is_some());
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
    let covariance = gauss_newton_covariance(&r, &J, noise_known, &relative_scale);
    let estimates = problem
        .parameters
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let value = p.transform.to_value(s[i]);
            let sd = covariance.std_dev(i);
            Estimate {
                name: p.name.clone(),
                initial: p.initial,
                estimate: sd.map(|_| value),
                final_value: value,
                std_dev: sd.map(|sd| p.transform.derivative(s[i]) * sd),
                ci95: sd.map(|sd| {
                    (
                        p.transform.to_value(s[i] - Z95 * sd),
                        p.transform.to_value(s[i] + Z95 * sd),
                    )
                }),
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
    let status = if covariance.identifiable.iter().any(|i| !i) {
        Status::NotIdentifiable
    } else if termination == Termination::MaxIterations {
        Status::MaxIterations
    } else {
        Status::Converged(termination)
    };
    Ok(IdentificationReport {
        problem: problem.name.clone(),
        method: settings.method,
        status,
        iterations,
        wall_s: start.elapsed().as_secs_f64(),
        estimates,
        cost: at_estimate.cost(),
        history,
        covariance,
        fits,
    })
}
