//! Profile-likelihood confidence intervals (Venzon & Moolgavkar, "A method for computing
//! profile-likelihood-based confidence intervals", Appl. Statist. 37, 1988; their use to tell
//! identifiable from unidentifiable parameters: Raue et al., Bioinformatics 25, 2009).
//!
//! For parameter `i`, the profile is the loss minimized over the other coordinates with `s_i`
//! held at `c`,
//!
//! ```text
//! PL_i(c) = min_{s : s_i = c} L(s),                                                      (1)
//! ```
//!
//! and the 95 % interval is `{c : PL_i(c) − L(ŝ) ≤ Δ}` with `Δ = ½ χ²₁(0.95) · v`
//! (`½ · 3.841`; `v` the noise variance factor: 1 with σ given, `σ̂²` with σ estimated, and
//! the reduced χ² when the fit is flagged as a mismatch). Each end is found by walking away
//! from `ŝ_i` in doubling steps (the first the Wald half-width, where there is one) until the
//! profile crosses `Δ`, then regula falsi (Illinois) on `PL_i(c) − L(ŝ) − Δ`. An end where the
//! profile stays below `Δ` up to the search bound is open (`None`): the data bound the
//! parameter from one side only, or not at all, within those bounds. Unlike the Gauss–Newton
//! interval, the profile follows the loss where it is not quadratic: a friction coefficient
//! above the value at which a rolling sphere stops slipping changes nothing, and its profile
//! stays flat to the upper bound.
//!
//! With one parameter, (1) is the loss itself; with more, each point is a bounded
//! Levenberg–Marquardt fit of the others, started from the previous point's.
#![allow(non_snake_case)]

use std::sync::atomic::{AtomicBool, Ordering};

use nalgebra::{DMatrix, DVector};

use crate::error::Result;
use crate::identify::levenberg_marquardt::{levenberg_marquardt, LeastSquares, LmSettings};

/// `½ χ²₁(0.95)`.
pub const HALF_CHI2_1_95: f64 = 0.5 * 3.841_458_820_694_124;

/// Profile points per end before giving up on a crossing (doubling steps and refinement).
const MAX_POINTS: usize = 40;

/// Relative precision of an end on the threshold: `|PL − L̂ − Δ| ≤ 0.02 Δ`.
const THRESHOLD_PRECISION: f64 = 0.02;

/// `problem` with coordinate `fixed` held at `value`: the others are free.
struct Fixed<'a, P: LeastSquares> {
    problem: &'a P,
    fixed: usize,
    value: f64,
}

impl<P: LeastSquares> Fixed<'_, P> {
    fn full(&self, free: &[f64]) -> Vec<f64> {
        let mut s = free.to_vec();
        s.insert(self.fixed, self.value);
        s
    }
}

impl<P: LeastSquares> LeastSquares for Fixed<'_, P> {
    fn residuals(&self, s: &[f64]) -> Result<DVector<f64>> {
        self.problem.residuals(&self.full(s))
    }

    fn residuals_and_jacobian(&self, s: &[f64]) -> Result<(DVector<f64>, DMatrix<f64>)> {
        let (r, J) = self.problem.residuals_and_jacobian(&self.full(s))?;
        Ok((r, J.remove_column(self.fixed)))
    }
}

/// One end of the walk: the profile at `c` minus `L̂`, and the other coordinates there.
struct Point {
    c: f64,
    excess: f64,
    others: Vec<f64>,
}

/// The profile (1) at `c` minus `cost_hat`, starting the other coordinates at `others`;
/// `+∞` where the rollout fails.
#[allow(clippy::too_many_arguments)]
fn profile_at<P: LeastSquares>(
    problem: &P,
    i: usize,
    c: f64,
    others: &[f64],
    bounds: &[(f64, f64)],
    cost_hat: f64,
    lm: &LmSettings,
    stop: &AtomicBool,
) -> Point {
    let fixed = Fixed {
        problem,
        fixed: i,
        value: c,
    };
    let (excess, others) = if others.is_empty() {
        let cost = problem
            .residuals(&[c])
            .map_or(f64::INFINITY, |r| 0.5 * r.norm_squared());
        (cost, Vec::new())
    } else {
        let mut free_bounds = bounds.to_vec();
        free_bounds.remove(i);
        match levenberg_marquardt(&fixed, others, &free_bounds, lm, stop) {
            Ok(out) => {
                let cost = out.history.last().map_or(f64::INFINITY, |h| h.cost);
                (cost, out.s)
            }
            Err(_) => (f64::INFINITY, others.to_vec()),
        }
    };
    let excess = if excess.is_finite() {
        excess - cost_hat
    } else {
        f64::INFINITY
    };
    Point { c, excess, others }
}

/// The 95 % profile interval of coordinate `i` in `s` at the estimate `s_hat` with loss
/// `cost_hat`: `(lower, upper)`, `None` for an end the profile does not cross within
/// `bounds[i]`. `threshold` is `Δ`; `first_step` the initial distance from `ŝ_i` (the Wald
/// half-width, or a default). Once `stop` is raised the profile fits end early and the
/// interval is meaningless: the caller discards it.
#[allow(clippy::too_many_arguments)]
pub fn profile_interval<P: LeastSquares>(
    problem: &P,
    i: usize,
    s_hat: &[f64],
    cost_hat: f64,
    bounds: &[(f64, f64)],
    threshold: f64,
    first_step: f64,
    lm: &LmSettings,
    stop: &AtomicBool,
) -> (Option<f64>, Option<f64>) {
    let mut others = s_hat.to_vec();
    others.remove(i);
    let end = |direction: f64| -> Option<f64> {
        let bound = if direction < 0.0 {
            bounds[i].0
        } else {
            bounds[i].1
        };
        let mut inside = Point {
            c: s_hat[i],
            excess: 0.0,
            others: others.clone(),
        };
        let mut step = first_step;
        let mut points = 0;
        // Walk out until the profile exceeds Δ or the bound is reached.
        let mut outside = loop {
            if points >= MAX_POINTS || stop.load(Ordering::Relaxed) {
                return None;
            }
            let c = s_hat[i] + direction * step;
            let at_bound = (direction < 0.0 && c <= bound) || (direction > 0.0 && c >= bound);
            let c = if at_bound { bound } else { c };
            let p = profile_at(problem, i, c, &inside.others, bounds, cost_hat, lm, stop);
            points += 1;
            if p.excess > threshold {
                break p;
            }
            if at_bound || !c.is_finite() {
                return None;
            }
            inside = p;
            step *= 2.0;
        };
        // Illinois regula falsi on excess − Δ between `inside` (below) and `outside` (above);
        // bisection while `outside` is a failed rollout.
        let mut side = 0;
        let (mut f_in, mut f_out) = (inside.excess - threshold, outside.excess - threshold);
        while points < MAX_POINTS && !stop.load(Ordering::Relaxed) {
            let c = if f_out.is_finite() {
                inside.c + (outside.c - inside.c) * f_in / (f_in - f_out)
            } else {
                0.5 * (inside.c + outside.c)
            };
            let p = profile_at(problem, i, c, &inside.others, bounds, cost_hat, lm, stop);
            points += 1;
            let f = p.excess - threshold;
            if f.abs() <= THRESHOLD_PRECISION * threshold
                || (outside.c - inside.c).abs() <= 1e-9 * (1.0 + c.abs())
            {
                return Some(c);
            }
            if f < 0.0 {
                inside = p;
                f_in = f;
                if side == -1 {
                    f_out *= 0.5;
                }
                side = -1;
            } else {
                outside = p;
                f_out = f;
                if side == 1 {
                    f_in *= 0.5;
                }
                side = 1;
            }
        }
        Some(0.5 * (inside.c + outside.c))
    };
    (end(-1.0), end(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `r = (s₀ − 1, 10 (s₁ − s₀²))`: at the minimum (1, 1) the profile of `s₀` is
    /// `½ (c − 1)²` exactly (s₁ = c² makes the second residual vanish), so its ends are
    /// `1 ± √(2Δ)`.
    struct Banana;

    impl LeastSquares for Banana {
        fn residuals(&self, s: &[f64]) -> Result<DVector<f64>> {
            Ok(DVector::from_vec(vec![
                s[0] - 1.0,
                10.0 * (s[1] - s[0] * s[0]),
            ]))
        }
        fn residuals_and_jacobian(&self, s: &[f64]) -> Result<(DVector<f64>, DMatrix<f64>)> {
            let J = DMatrix::from_row_slice(2, 2, &[1.0, 0.0, -20.0 * s[0], 10.0]);
            Ok((self.residuals(s)?, J))
        }
    }

    #[test]
    fn profile_ends_where_the_loss_rises_by_the_threshold() {
        let bounds = [(-10.0, 10.0); 2];
        let (lo, hi) = profile_interval(
            &Banana,
            0,
            &[1.0, 1.0],
            0.0,
            &bounds,
            HALF_CHI2_1_95,
            0.1,
            &LmSettings::default(),
            &AtomicBool::new(false),
        );
        let half = (2.0 * HALF_CHI2_1_95).sqrt();
        // |PL − Δ| ≤ 0.02 Δ at an end where PL = ½ (c − 1)²: |c − c*| ≤ 0.01 c*.
        assert!((lo.unwrap() - (1.0 - half)).abs() < 0.01 * half, "{lo:?}");
        assert!((hi.unwrap() - (1.0 + half)).abs() < 0.01 * half, "{hi:?}");
    }

    /// A loss flat beyond 0 (`r = min(s, 0)`, like μ above the value that stops the slip)
    /// has an open upper end.
    struct FlatAbove;

    impl LeastSquares for FlatAbove {
        fn residuals(&self, s: &[f64]) -> Result<DVector<f64>> {
            Ok(DVector::from_vec(vec![s[0].min(0.0)]))
        }
        fn residuals_and_jacobian(&self, s: &[f64]) -> Result<(DVector<f64>, DMatrix<f64>)> {
            let d = if s[0] < 0.0 { 1.0 } else { 0.0 };
            Ok((self.residuals(s)?, DMatrix::from_element(1, 1, d)))
        }
    }

    #[test]
    fn a_loss_flat_on_one_side_gives_a_one_sided_interval() {
        let (lo, hi) = profile_interval(
            &FlatAbove,
            0,
            &[0.5],
            0.0,
            &[(-5.0, 5.0)],
            HALF_CHI2_1_95,
            0.1,
            &LmSettings::default(),
            &AtomicBool::new(false),
        );
        let half = (2.0 * HALF_CHI2_1_95).sqrt();
        assert!((lo.unwrap() + half).abs() < 0.01 * half, "{lo:?}");
        assert_eq!(hi, None);
    }
}
