//! L-BFGS (argmin 0.11, More–Thuente line search, on `Vec<f64>`) on the scalar loss
//! `L(s) = ½ ‖r̃(s)‖²`, with the gradient from the adjoint of each rollout
//! ([`Need::Gradient`]): one backward pass per trajectory instead of np forward sensitivities.
//!
//! The loss is divided by `‖∇L(s₀)‖_∞` so that the first step (along the steepest descent
//! direction, unit inverse-Hessian guess) moves `s` by at most about 1, a factor e on a
//! log-parameterized value. A point where a rollout fails costs `+∞` for the line search.
//! This is the only file besides `optimize/` that implements argmin's traits.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use argmin::core::observers::{Observe, ObserverMode};
use argmin::core::{CostFunction, Executor, Gradient, IterState, State, TerminationReason, KV};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;

use crate::error::{Error, Result};
use crate::identify::levenberg_marquardt::{Iteration, Termination};
use crate::identify::residuals::{IdentificationProblem, Need};

/// Settings of [`lbfgs`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LbfgsSettings {
    /// Maximum number of iterations, default 100.
    pub max_iterations: u64,
    /// History length m, default 7.
    pub memory: usize,
    /// Tolerance on `‖∇L‖` of the scaled loss, default 1e-8.
    pub gradient_tolerance: f64,
    /// Tolerance on the change of the scaled loss between iterations, default 1e-14.
    pub cost_tolerance: f64,
}

impl Default for LbfgsSettings {
    fn default() -> Self {
        LbfgsSettings {
            max_iterations: 100,
            memory: 7,
            gradient_tolerance: 1e-8,
            cost_tolerance: 1e-14,
        }
    }
}

/// Result of [`lbfgs`].
#[derive(Clone, Debug)]
pub struct LbfgsOutcome {
    /// The best iterate (np).
    pub s: Vec<f64>,
    /// Why it stopped.
    pub termination: Termination,
    /// Iterates, the initial point first (costs unscaled).
    pub history: Vec<Iteration>,
}

/// The scaled loss for argmin.
struct ScaledLoss<'a> {
    problem: &'a IdentificationProblem,
    scale: f64,
    /// The caller's stop flag: once raised, every evaluation fails, which ends argmin's run.
    stop: &'a AtomicBool,
}

impl ScaledLoss<'_> {
    fn check_stop(&self) -> std::result::Result<(), argmin::core::Error> {
        if self.stop.load(Ordering::Relaxed) {
            Err(argmin::core::Error::msg("interrupted"))
        } else {
            Ok(())
        }
    }
}

impl CostFunction for ScaledLoss<'_> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, s: &Vec<f64>) -> std::result::Result<f64, argmin::core::Error> {
        self.check_stop()?;
        Ok(self
            .problem
            .evaluate(s, Need::Residuals)
            .map_or(f64::INFINITY, |e| e.cost() / self.scale))
    }
}

impl Gradient for ScaledLoss<'_> {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;
    fn gradient(&self, s: &Vec<f64>) -> std::result::Result<Vec<f64>, argmin::core::Error> {
        self.check_stop()?;
        let g = self
            .problem
            .evaluate(s, Need::Gradient)
            .map_err(argmin::core::Error::new)?
            .gradient()
            .expect("invariant: Need::Gradient computes gradients");
        Ok(g.iter().map(|x| x / self.scale).collect())
    }
}

/// Records every iterate (shared with the caller: argmin takes ownership of observers).
struct Recorder {
    history: Arc<Mutex<Vec<Iteration>>>,
    scale: f64,
}

type LbfgsState = IterState<Vec<f64>, Vec<f64>, (), (), (), f64>;

impl Observe<LbfgsState> for Recorder {
    fn observe_iter(
        &mut self,
        state: &LbfgsState,
        _kv: &KV,
    ) -> std::result::Result<(), argmin::core::Error> {
        let s = state.get_param().cloned().unwrap_or_default();
        let gradient_norm = state.get_gradient().map_or(f64::NAN, |g| {
            g.iter().fold(0.0, |m: f64, x| m.max(x.abs())) * self.scale
        });
        let mut history = self
            .history
            .lock()
            .map_err(|_| argmin::core::Error::msg("iteration history lock poisoned"))?;
        // Numbered from the history: argmin reports the count before its increment.
        let iteration = history.len();
        history.push(Iteration {
            iteration,
            cost: state.get_cost() * self.scale,
            gradient_norm,
            damping: 0.0,
            s,
            horizon: 0,
        });
        Ok(())
    }
}

/// Minimizes `½ ‖r̃(s)‖²` of `problem` by L-BFGS from `s0` (np). Once `stop` is raised the
/// run ends at the last recorded iterate with [`Termination::Interrupted`].
///
/// # Errors
/// A failed evaluation at the initial point, a failed gradient, or an argmin failure (a line
/// search that cannot find a decrease), as [`Error::InvalidParameter`] with argmin's message.
pub fn lbfgs(
    problem: &IdentificationProblem,
    s0: &[f64],
    settings: &LbfgsSettings,
    stop: &AtomicBool,
) -> Result<LbfgsOutcome> {
    let s0 = s0.to_vec();
    let first = problem.evaluate(&s0, Need::Gradient)?;
    let g0 = first
        .gradient()
        .expect("invariant: Need::Gradient computes gradients");
    let scale = g0.amax().max(f64::MIN_POSITIVE);
    let history = Arc::new(Mutex::new(vec![Iteration {
        iteration: 0,
        cost: first.cost(),
        gradient_norm: g0.amax(),
        damping: 0.0,
        s: s0.clone(),
        horizon: 0,
    }]));
    let argmin_error = |e: argmin::core::Error| Error::invalid("L-BFGS", "", &e.to_string());
    let solver = LBFGS::new(MoreThuenteLineSearch::new(), settings.memory)
        .with_tolerance_grad(settings.gradient_tolerance)
        .and_then(|s| s.with_tolerance_cost(settings.cost_tolerance))
        .map_err(argmin_error)?;
    let recorder = Recorder {
        history: Arc::clone(&history),
        scale,
    };
    let run = Executor::new(
        ScaledLoss {
            problem,
            scale,
            stop,
        },
        solver,
    )
    .configure(|state| state.param(s0).max_iters(settings.max_iterations))
    .add_observer(recorder, ObserverMode::Always)
    .run();
    let history = history
        .lock()
        .map_err(|_| Error::invalid("L-BFGS", "", "iteration history lock poisoned"))?
        .clone();
    let (s, termination) = match run {
        Err(_) if stop.load(Ordering::Relaxed) => {
            let last = history
                .last()
                .ok_or_else(|| Error::invalid("L-BFGS", "", "no iterate recorded"))?;
            (last.s.clone(), Termination::Interrupted)
        }
        Err(e) => return Err(argmin_error(e)),
        Ok(result) => {
            let state = result.state();
            let s = state
                .get_best_param()
                .cloned()
                .ok_or_else(|| Error::invalid("L-BFGS", "", "no iterate returned"))?;
            let termination = match state.get_termination_reason() {
                Some(TerminationReason::MaxItersReached) | None => Termination::MaxIterations,
                _ => Termination::Converged,
            };
            (s, termination)
        }
    };
    Ok(LbfgsOutcome {
        s,
        termination,
        history,
    })
}
