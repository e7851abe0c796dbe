//! Exact line search on the convex `φ(α) = ℓ(v + αΔv)` (ICF ext. Sec. X): safeguarded
//! Newton-Raphson on `φ'(α) = 0` with bracketing and bisection (Numerical Recipes' rtsafe).
//!
//! With `Δv_c,i = J_i Δv` precomputed, `φ'(α) = α ΔvᵀAΔv + Δvᵀ A(v − v*) − Σ γ_i·Δv_c,i` and
//! `φ''(α) = ΔvᵀAΔv + Σ Δv_c,iᵀ G_i Δv_c,i` cost O(nc) per evaluation (constraint rows add
//! their one-dimensional terms the same way). The slope at α = 0 is
//! the Newton iteration's `∇ℓ·Δv`, and the search starts at the Newton step α = 1: near a
//! solution (a resting contact, a warm start) that one evaluation of the contacts is the whole
//! search; `φ'(α_max)` is only evaluated when the minimum lies beyond α = 1. The contacts
//! evaluated at the last trial α are kept ([`Trial`]): when that α is the one returned, the
//! Newton iteration takes them as its next evaluation instead of evaluating them again.
#![allow(non_snake_case)]

use nalgebra::{Matrix3, Vector3};

use crate::contact::{ContactPool, ContactPotential, PoolVisitor};
use crate::solver::constraint::ConstraintRow;

/// The contacts evaluated at the last trial step length of a line search.
#[derive(Debug, Default)]
pub struct Trial {
    /// The step length α they were evaluated at (NaN before the first evaluation).
    pub alpha: f64,
    /// `Σ ℓ_i` at α (J).
    pub cost: f64,
    /// Contact velocities `v_c,i + α Δv_c,i` (m/s).
    pub v_c: Vec<Vector3<f64>>,
    /// Impulses γ_i (N·s).
    pub gamma: Vec<Vector3<f64>>,
    /// Hessians `G_i`.
    pub G: Vec<Matrix3<f64>>,
    /// Constraint rows at α: velocities, impulses and curvatures.
    pub row_v: Vec<f64>,
    /// Row impulses.
    pub row_gamma: Vec<f64>,
    /// Row curvatures.
    pub row_G: Vec<f64>,
}

/// The line-search function `φ` reduced to contact terms plus a quadratic.
pub struct LineSearchProblem<'a> {
    /// `ΔvᵀAΔv` (> 0).
    pub a2: f64,
    /// `Δvᵀ A (v − v*)`.
    pub a1: f64,
    /// Contact velocities at α = 0.
    pub v_c: &'a [Vector3<f64>],
    /// Contact velocity changes `J_i Δv`.
    pub dv_c: &'a [Vector3<f64>],
    /// The potentials.
    pub contacts: &'a ContactPool<f64>,
    /// The constraint rows, their velocities at α = 0 and their changes `c·Δv`.
    pub rows: &'a [ConstraintRow<f64>],
    /// Row velocities at α = 0.
    pub row_v: &'a [f64],
    /// Row velocity changes.
    pub row_dv: &'a [f64],
    /// The contacts at the last α evaluated (buffers of `nc` entries).
    pub trial: &'a mut Trial,
}

impl LineSearchProblem<'_> {
    /// `(φ'(α), φ''(α), s)` with `s` the sum of the magnitudes of the terms of `φ'`: `φ'` is
    /// only known to about `ε s` (round-off). Keeps the contacts at α in the [`Trial`].
    pub fn derivatives(&mut self, alpha: f64) -> (f64, f64, f64) {
        let quadratic = Sums {
            d1: alpha * self.a2 + self.a1,
            d2: self.a2,
            scale: (alpha * self.a2).abs() + self.a1.abs(),
            cost: 0.0,
        };
        let mut sums = self.contacts.visit(ContactTerms {
            alpha,
            v_c: self.v_c,
            dv_c: self.dv_c,
            trial: &mut *self.trial,
            sums: quadratic,
        });
        for (j, row) in self.rows.iter().enumerate() {
            let v = self.row_v[j] + self.row_dv[j] * alpha;
            let e = row.eval(v);
            let term = e.gamma * self.row_dv[j];
            sums.d1 -= term;
            sums.scale += term.abs();
            sums.d2 += e.G * self.row_dv[j] * self.row_dv[j];
            sums.cost += e.cost;
            self.trial.row_v[j] = v;
            self.trial.row_gamma[j] = e.gamma;
            self.trial.row_G[j] = e.G;
        }
        self.trial.alpha = alpha;
        self.trial.cost = sums.cost;
        (sums.d1, sums.d2, sums.scale)
    }
}

/// Running sums of `φ'`, `φ''`, the magnitudes of `φ'`'s terms and the contacts' cost.
#[derive(Clone, Copy)]
struct Sums {
    d1: f64,
    d2: f64,
    scale: f64,
    cost: f64,
}

/// The contacts' terms of `φ'` and `φ''` at α added to `sums` in the contacts' order, the
/// contacts at α kept in `trial`: one loop per kind of potential ([`PoolVisitor`]), so that
/// each evaluation inlines, over zipped slices.
struct ContactTerms<'a> {
    alpha: f64,
    v_c: &'a [Vector3<f64>],
    dv_c: &'a [Vector3<f64>],
    trial: &'a mut Trial,
    sums: Sums,
}

impl PoolVisitor<f64> for ContactTerms<'_> {
    type Output = Sums;

    #[inline(always)]
    fn visit<P: ContactPotential<f64>>(self, potentials: &[P]) -> Sums {
        let mut s = self.sums;
        let trial = self
            .trial
            .v_c
            .iter_mut()
            .zip(self.trial.gamma.iter_mut())
            .zip(self.trial.G.iter_mut());
        let contacts = potentials.iter().zip(self.v_c).zip(self.dv_c);
        for (((potential, v_c), dv_c), ((trial_v_c, trial_gamma), trial_G)) in contacts.zip(trial) {
            let v_c = v_c + dv_c * self.alpha;
            let e = potential.eval(&v_c);
            let term = e.gamma.dot(dv_c);
            s.d1 -= term;
            s.scale += term.abs();
            s.d2 += dv_c.dot(&(e.G * dv_c));
            s.cost += e.cost;
            *trial_v_c = v_c;
            *trial_gamma = e.gamma;
            *trial_G = e.G;
        }
        s
    }
}

/// Relative tolerance on `|φ'(α)|` against `|φ'(0)|`.
const SLOPE_TOLERANCE: f64 = 1e-12;
/// Relative change of α below which the iteration has reached round-off.
const STEP_TOLERANCE: f64 = 1e-13;
/// `φ'` below this multiple of its terms' magnitude is zero to round-off.
const ROUND_OFF: f64 = 64.0 * f64::EPSILON;

/// Finds the minimizer of `φ` in `(0, alpha_max]` given the slope `d0 = φ'(0) = ∇ℓ(v)·Δv`.
/// Returns `(α, iterations)`, or `None` if `max_iterations` were not enough.
pub fn exact_line_search(
    p: &mut LineSearchProblem<'_>,
    d0: f64,
    alpha_max: f64,
    max_iterations: usize,
) -> Option<(f64, usize)> {
    p.trial.alpha = f64::NAN;
    if d0 >= 0.0 {
        // Not a descent direction at round-off level: nothing to gain.
        return Some((0.0, 0));
    }
    let (mut lo, mut hi) = (0.0, alpha_max);
    let mut alpha = 1.0_f64.min(alpha_max);
    // Sizes of the last two steps: Newton must at least halve the step before last, or we
    // bisect (Numerical Recipes' rtsafe), which stops Newton bouncing between bracket ends.
    let (mut step, mut step_old) = (hi - lo, hi - lo);
    for it in 1..=max_iterations {
        let (d1, d2, scale) = p.derivatives(alpha);
        if d1.abs() <= (SLOPE_TOLERANCE * d0.abs()).max(ROUND_OFF * scale) {
            return Some((alpha, it));
        }
        if d1 < 0.0 {
            lo = alpha;
            // The minimum lies beyond the first trial: it is α_max if φ is still decreasing
            // there (φ is convex), else inside the bracket [α, α_max].
            if it == 1 && alpha < alpha_max && p.derivatives(alpha_max).0 <= 0.0 {
                return Some((alpha_max, it));
            }
        } else {
            hi = alpha;
        }
        if hi - lo <= f64::EPSILON * hi {
            return Some((alpha, it));
        }
        let newton = alpha - d1 / d2;
        let newton_ok =
            d2 > 0.0 && newton > lo && newton < hi && (2.0 * d1).abs() <= (step_old * d2).abs();
        step_old = step;
        let next = if newton_ok { newton } else { 0.5 * (lo + hi) };
        step = (next - alpha).abs();
        // Newton has converged to round-off: φ' cannot get smaller through cancellation.
        if step <= STEP_TOLERANCE * alpha {
            return Some((next, it));
        }
        alpha = next;
    }
    None
}
