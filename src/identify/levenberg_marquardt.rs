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
//! Stops when `‖g‖_∞ ≤ ε_g`, when `‖δ‖ ≤ ε_s (‖s‖ + ε_s)`, when an accepted step lowers the
//! cost by less than `ε_L L`, or after `max_iterations` Jacobians (not a failure: the status
//! says so).
#![allow(non_snake_case)]

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

/// Minimizes `½ ‖r(s)‖²` from `s0` (see the module docs).
///
/// # Errors
/// Whatever `problem` returns at the initial point; failures at trial points only reject the
/// step.
pub fn levenberg_marquardt(
    problem: &impl LeastSquares,
    s0: &[f64],
    settings: &LmSettings,
) -> Result<LmOutcome> {
    let mut s = DVector::from_column_slice(s0);
    let (mut r, mut J) = problem.residuals_and_jacobian(s.as_slice())?;
    let mut cost = 0.5 * r.norm_squared();
    let mut g = J.transpose() * &r;
    let record = |iteration, cost, g: &DVector<f64>, damping, s: &DVector<f64>| Iteration {
        iteration,
        cost,
        gradient_norm: g.amax(),
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
        if g.amax() <= settings.gradient_tolerance {
            termination = Termination::Gradient;
            break;
        }
        loop {
            let delta = damped_step(&A, &g, lambda)?;
            if delta.norm() <= settings.step_tolerance * (s.norm() + settings.step_tolerance) {
                termination = Termination::Step;
                break 'outer;
            }
            let trial = &s + &delta;
            let trial_cost = problem
                .residuals(trial.as_slice())
                .map_or(f64::INFINITY, |r| 0.5 * r.norm_squared());
            let D = damping_diagonal(&A);
            let predicted = 0.5 * delta.dot(&(D.component_mul(&delta) * lambda - &g));
            let gain = (cost - trial_cost) / predicted;
            if trial_cost.is_finite() && gain > 0.0 {
                s = trial;
                (r, J) = problem.residuals_and_jacobian(s.as_slice())?;
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
        }
    }
    Ok(LmOutcome {
        s: s.as_slice().to_vec(),
        termination,
        history,
    })
}

/// Marquardt's scaling `D = diag(A)`, floored at `1e-12 · max diag(A)` so that a parameter
/// the data does not see still gets a damped, finite step.
fn damping_diagonal(A: &DMatrix<f64>) -> DVector<f64> {
    let floor = 1e-12 * A.diagonal().max().max(f64::MIN_POSITIVE);
    A.diagonal().map(|a| a.max(floor))
}

/// Solves eq. (1) by Cholesky.
///
/// # Errors
/// [`Error::NotPositiveDefinite`] only if `A` holds non-finite entries: with λ > 0 and the
/// floor on `D` the matrix is positive definite otherwise.
fn damped_step(A: &DMatrix<f64>, g: &DVector<f64>, lambda: f64) -> Result<DVector<f64>> {
    let D = damping_diagonal(A);
    let mut M = A.clone();
    for i in 0..M.nrows() {
        M[(i, i)] += lambda * D[i];
    }
    let chol = M
        .cholesky()
        .ok_or(Error::NotPositiveDefinite { index: 0 })?;
    Ok(-chol.solve(g))
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
        let out = levenberg_marquardt(&Exponential, &[10.0, 1.0], &LmSettings::default()).unwrap();
        assert!(
            (out.s[0] - 2.0).abs() < 1e-9 && (out.s[1] + 0.7).abs() < 1e-9,
            "{:?}",
            out.s
        );
        assert_ne!(out.termination, Termination::MaxIterations);
        let costs: Vec<f64> = out.history.iter().map(|h| h.cost).collect();
        assert!(
            costs.windows(2).all(|w| w[1] < w[0]),
            "accepted steps lower the cost"
        );
    }
}
