//! Levenberg–Marquardt on `min_s ½ ‖r(s)‖²` (Madsen, Nielsen & Tingleff, "Methods for
//! non-linear least squares problems", 2004, Algorithm 3.16, with Marquardt's scaling).
//!
//! At `s` with residuals `r`, Jacobian `J`, `A = JᵀJ` and `g = Jᵀr`, the step solves
//!
//! ```text
//! (A + λ D) δ = −g,   D = diag(A) (floored at 1e-12·max diag(A)),        (1)
//! ```
//!
//! and is accepted when the gain ratio `ϱ = (L(s) − L(s+δ)) / (½ δᵀ(λDδ − g))` is positive,
//! the denominator being the decrease predicted by the Gauss–Newton model. Then
//! `λ ← λ · max(1/3, 1 − (2ϱ − 1)³)`, `ν ← 2`; otherwise `λ ← λν`, `ν ← 2ν`. λ → 0 is
//! Gauss–Newton, large λ a short scaled gradient step. A trial point where the rollout fails
//! (a step that does not converge at extreme parameters) is rejected like a cost increase.
//!
//! **Bounds.** The search stays in a box `l ≤ s ≤ u` by projection (the trial point is
//! clipped to the box, Kanzow, Yamashita & Fukushima, J. Comput. Appl. Math. 172, 2004):
//! coordinates at a bound whose gradient points out of the box are held fixed for the step,
//! and the gain ratio uses the Gauss–Newton prediction `−(gᵀδ + ½ δᵀAδ)` of the clipped step.
//!
//! Stops when the projected gradient `‖P(g)‖_∞ ≤ ε_g`, when `‖δ‖ ≤ ε_s (‖s‖ + ε_s)`, when an
//! accepted step lowers the cost by less than `ε_L L`, or after `max_iterations` Jacobians.
//! None of these alone is convergence: the caller checks first-order optimality at the end
//! (`super::report`).
#![allow(non_snake_case)]

use std::sync::atomic::{AtomicBool, Ordering};

use nalgebra::{DMatrix, DVector};

use crate::error::{Error, Result};

/// A least-squares problem `r(s)` with its Jacobian.
pub trait LeastSquares {
    /// `r(s)` (m).
    ///
    /// # Errors
    /// When `r` cannot be evaluated at `s`.
    fn residuals(&self, s: &[f64]) -> Result<DVector<f64>>;
    /// `(r(s), ∂r/∂s)` (m, m × n).
    ///
    /// # Errors
    /// When `r` cannot be evaluated at `s`.
    fn residuals_and_jacobian(&self, s: &[f64]) -> Result<(DVector<f64>, DMatrix<f64>)>;
}

/// Settings of [`levenberg_marquardt`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LmSettings {
    /// Maximum number of iterations (Jacobian evaluations after the first), default 50.
    pub max_iterations: usize,
    /// ε_g on `‖Jᵀr‖_∞`, default 1e-10.
    pub gradient_tolerance: f64,
    /// ε_s on the relative step, default 1e-9.
    pub step_tolerance: f64,
    /// ε_L on the relative cost decrease of an accepted step, default 1e-12.
    pub cost_tolerance: f64,
    /// Initial λ (dimensionless: `D` carries the scale of `A`), default 1e-3.
    pub initial_damping: f64,
}

impl Default for LmSettings {
    fn default() -> Self {
        LmSettings {
            max_iterations: 50,
            gradient_tolerance: 1e-10,
            step_tolerance: 1e-9,
            cost_tolerance: 1e-12,
            initial_damping: 1e-3,
        }
    }
}

/// Why an optimizer stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Termination {
    /// The gradient is below its tolerance.
    Gradient,
    /// The step is below its tolerance.
    Step,
    /// The cost no longer decreases.
    Cost,
    /// The solver's own convergence test (argmin's L-BFGS: gradient or cost change).
    Converged,
    /// The iteration limit was reached first.
    MaxIterations,
    /// No step could be taken: every trial point's rollout failed or overflowed, up to the
    /// largest representable damping.
    Failed,
    /// The caller's stop flag was raised (an interrupt); the last accepted iterate stands.
    Interrupted,
}

/// One iteration of an optimizer.
#[derive(Clone, Debug, PartialEq)]
pub struct Iteration {
    /// Iteration number (0: the initial point).
    pub iteration: usize,
    /// Cost `L = ½ ‖r‖²` at the iterate.
    pub cost: f64,
    /// `‖∇L‖_∞` at the iterate (w.r.t. `s`).
    pub gradient_norm: f64,
    /// Damping λ used to reach it (LM; 0 for others).
    pub damping: f64,
    /// The iterate `s` (n).
    pub s: Vec<f64>,
    /// Last step of the data the cost covers (horizon continuation; 0 until set).
    pub horizon: usize,
}

/// Result of [`levenberg_marquardt`].
#[derive(Clone, Debug)]
pub struct LmOutcome {
    /// The final iterate (n).
    pub s: Vec<f64>,
    /// Why it stopped.
    pub termination: Termination,
    /// Accepted iterates, the initial point first.
    pub history: Vec<Iteration>,
}

/// Minimizes `½ ‖r(s)‖²` from `s0` within the box `bounds` (one `(lower, upper)` per
/// coordinate, `±∞` where unbounded; see the module docs).
///
/// `stop` is polled before every iteration: once raised, the fit ends at the last accepted
/// iterate with [`Termination::Interrupted`].
///
/// # Errors
/// Whatever `problem` returns at the initial point, and a non-finite cost there; failures at
/// trial points only reject the step.
pub fn levenberg_marquardt(
    problem: &impl LeastSquares,
    s0: &[f64],
    bounds: &[(f64, f64)],
    settings: &LmSettings,
    stop: &AtomicBool,
) -> Result<LmOutcome> {
    let mut s = DVector::from_column_slice(s0);
    let (mut r, mut J) = problem.residuals_and_jacobian(s.as_slice())?;
    let mut cost = 0.5 * r.norm_squared();
    if !cost.is_finite() {
        return Err(Error::invalid(
            "loss at the start",
            cost,
            "must be finite: a measured value or a simulated one overflows the squared residual",
        ));
    }
    if J.iter().any(|x| !x.is_finite()) {
        return Err(Error::invalid(
            "residual Jacobian at the start",
            "non-finite entries",
            "the rollout's sensitivities overflow at the initial parameters: start closer, or check the scene's contact settings",
        ));
    }
    let mut g = J.transpose() * &r;
    let record = |iteration, cost, g: &DVector<f64>, damping, s: &DVector<f64>| Iteration {
        iteration,
        cost,
        gradient_norm: projected_gradient(g, s.as_slice(), bounds).amax(),
        damping,
        s: s.as_slice().to_vec(),
        horizon: 0,
    };
    let mut history = vec![record(0, cost, &g, 0.0, &s)];
    let mut A = J.transpose() * &J;
    let mut lambda = settings.initial_damping;
    let mut nu = 2.0;
    let mut termination = Termination::MaxIterations;
    'outer: for iteration in 1..=settings.max_iterations {
        if stop.load(Ordering::Relaxed) {
            termination = Termination::Interrupted;
            break;
        }
        let pg = projected_gradient(&g, s.as_slice(), bounds);
        if pg.amax() <= settings.gradient_tolerance {
            termination = Termination::Gradient;
            break;
        }
        // Coordinates held at a bound the gradient pushes against take no step.
        let free: Vec<bool> = pg
            .iter()
            .zip(g.iter())
            .map(|(p, g)| *p != 0.0 || *g == 0.0)
            .collect();
        loop {
            let delta = damped_step(&A, &g, lambda, &free)?;
            let trial = DVector::from_fn(s.len(), |i, _| {
                (s[i] + delta[i]).clamp(bounds[i].0, bounds[i].1)
            });
            let step = &trial - &s;
            if step.norm() <= settings.step_tolerance * (s.norm() + settings.step_tolerance) {
                termination = Termination::Step;
                break 'outer;
            }
            // Decrease predicted by the Gauss–Newton model for the (projected) step.
            let predicted = -(g.dot(&step) + 0.5 * step.dot(&(&A * &step)));
            let evaluated = problem
                .residuals(trial.as_slice())
                .ok()
                .filter(|r| r.norm_squared().is_finite());
            let trial_cost = evaluated
                .as_ref()
                .map_or(f64::INFINITY, |r| 0.5 * r.norm_squared());
            let gain = (cost - trial_cost) / predicted;
            let accepted = (trial_cost.is_finite() && gain > 0.0 && predicted > 0.0)
                .then(|| problem.residuals_and_jacobian(trial.as_slice()).ok())
                .flatten()
                .filter(|(_, J)| J.iter().all(|x| x.is_finite()));
            if let Some((r_new, J_new)) = accepted {
                s = trial;
                (r, J) = (r_new, J_new);
                let new_cost = 0.5 * r.norm_squared();
                let decrease = cost - new_cost;
                cost = new_cost;
                g = J.transpose() * &r;
                A = J.transpose() * &J;
                lambda *= (1.0 - (2.0 * gain - 1.0).powi(3)).max(1.0 / 3.0);
                nu = 2.0;
                history.push(record(iteration, cost, &g, lambda, &s));
                if decrease <= settings.cost_tolerance * cost {
                    termination = Termination::Cost;
                    break 'outer;
                }
                break;
            }
            lambda *= nu;
            nu *= 2.0;
            if !lambda.is_finite() {
                termination = Termination::Failed;
                break 'outer;
            }
        }
    }
    Ok(LmOutcome {
        s: s.as_slice().to_vec(),
        termination,
        history,
    })
}

/// The gradient `g` with the components that push against an active bound set to zero: a
/// coordinate at its lower bound with `g_i > 0` (descent would lower it further) or at its
/// upper bound with `g_i < 0`. Its norm is the first-order optimality measure of a box-
/// constrained problem (Conn, Gould & Toint, "Trust-region methods", 2000, Sec. 12.1).
pub fn projected_gradient(g: &DVector<f64>, s: &[f64], bounds: &[(f64, f64)]) -> DVector<f64> {
    DVector::from_fn(g.len(), |i, _| {
        let (lower, upper) = bounds[i];
        if (s[i] <= lower && g[i] > 0.0) || (s[i] >= upper && g[i] < 0.0) {
            0.0
        } else {
            g[i]
        }
    })
}

/// Marquardt's scaling `D = diag(A)`, floored at `1e-12 · max diag(A)` so that a parameter
/// the data does not see still gets a damped, finite step.
fn damping_diagonal(A: &DMatrix<f64>) -> DVector<f64> {
    let floor = 1e-12 * A.diagonal().max().max(f64::MIN_POSITIVE);
    A.diagonal().map(|a| a.max(floor))
}

/// Solves eq. (1) by Cholesky on the `free` coordinates (the others take no step).
///
/// # Errors
/// [`Error::NotPositiveDefinite`] only if `A` holds non-finite entries: with λ > 0 and the
/// floor on `D` the matrix is positive definite otherwise.
fn damped_step(
    A: &DMatrix<f64>,
    g: &DVector<f64>,
    lambda: f64,
    free: &[bool],
) -> Result<DVector<f64>> {
    let D = damping_diagonal(A);
    let index: Vec<usize> = (0..g.len()).filter(|&i| free[i]).collect();
    let mut M = DMatrix::from_fn(index.len(), index.len(), |a, b| A[(index[a], index[b])]);
    for (a, &i) in index.iter().enumerate() {
        M[(a, a)] += lambda * D[i];
    }
    let rhs = DVector::from_fn(index.len(), |a, _| g[index[a]]);
    let chol = M
        .cholesky()
        .ok_or(Error::NotPositiveDefinite { index: 0 })?;
    let reduced = -chol.solve(&rhs);
    let mut delta = DVector::zeros(g.len());
    for (a, &i) in index.iter().enumerate() {
        delta[i] = reduced[a];
    }
    Ok(delta)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `y = a exp(b t)` sampled at 10 points; the exact fit is (a, b) = (2, −0.7).
    struct Exponential;

    const T: [f64; 10] = [0.0, 0.3, 0.6, 0.9, 1.2, 1.5, 1.8, 2.1, 2.4, 2.7];

    impl LeastSquares for Exponential {
        fn residuals(&self, s: &[f64]) -> Result<DVector<f64>> {
            Ok(DVector::from_fn(T.len(), |i, _| {
                s[0] * (s[1] * T[i]).exp() - 2.0 * (-0.7 * T[i]).exp()
            }))
        }
        fn residuals_and_jacobian(&self, s: &[f64]) -> Result<(DVector<f64>, DMatrix<f64>)> {
            let J = DMatrix::from_fn(T.len(), 2, |i, j| {
                let e = (s[1] * T[i]).exp();
                if j == 0 {
                    e
                } else {
                    s[0] * T[i] * e
                }
            });
            Ok((self.residuals(s)?, J))
        }
    }

    #[test]
    fn fits_an_exponential_from_far_away() {
        let out = levenberg_marquardt(
            &Exponential,
            &[10.0, 1.0],
            &[(f64::NEG_INFINITY, f64::INFINITY); 2],
            &LmSettings::default(),
            &AtomicBool::new(false),
        )
        .unwrap();
        assert!(
            (out.s[0] - 2.0).abs() < 1e-9 && (out.s[1] + 0.7).abs() < 1e-9,
            "{:?}",
            out.s
        );
        assert_ne!(out.termination, Termination::MaxIterations);
    }

    #[test]
    fn a_raised_stop_flag_ends_the_fit_at_the_start() {
        let out = levenberg_marquardt(
            &Exponential,
            &[10.0, 1.0],
            &[(f64::NEG_INFINITY, f64::INFINITY); 2],
            &LmSettings::default(),
            &AtomicBool::new(true),
        )
        .unwrap();
        assert_eq!(out.termination, Termination::Interrupted);
        assert_eq!(out.s, [10.0, 1.0]);
        assert_eq!(out.history.len(), 1);
        let costs: Vec<f64> = out.history.iter().map(|h| h.cost).collect();
        assert!(
            costs.windows(2).all(|w| w[1] < w[0]),
            "accepted steps lower the cost"
        );
    }
}
