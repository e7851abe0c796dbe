//! Solver parameters with their nominal values.
//!
//! [`SolverParams::default`] holds the nominal values; each `with_*` method changes one and
//! checks its range, so code that starts from the default and chains setters keeps compiling
//! when a parameter is added:
//!
//! ```
//! use stiction::solver::linalg::LinearSolver;
//! use stiction::solver::SolverParams;
//! # fn main() -> stiction::error::Result<()> {
//! let params = SolverParams::default()
//!     .with_relative_tolerance(1e-8)?
//!     .with_max_iterations(50)?
//!     .with_linear_solver(LinearSolver::Dense)
//!     .with_factor_at_solution(true);
//! assert_eq!(params.max_iterations, 50);
//! assert!(SolverParams::default().with_alpha_max(0.0).is_err());
//! # Ok(())
//! # }
//! ```

use std::str::FromStr;

use crate::error::{Error, Result};
use crate::solver::linalg::LinearSolver;

/// The first iterate a simulator gives Newton in each step (issue 27, item 3). The solve
/// converges to the same minimizer from any start (the problem is strictly convex); the
/// predictor only changes how many iterations it takes, and the result within the tolerance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WarmStart {
    /// The velocities at the start of the step, `v0` (the default).
    #[default]
    Start,
    /// The free-motion velocities `v*` (the step without contact).
    Free,
    /// `v* + (v − v*)` of the previous step: the free motion plus the velocity change that
    /// the contacts and constraints made in the last step (MuJoCo's warm start from the last
    /// accelerations). Used when the step starts from the state the simulator's last step
    /// returned; otherwise, and in the first step, the step starts as [`WarmStart::Start`].
    PreviousChange,
    /// Whichever of [`WarmStart::Start`], [`WarmStart::Free`] and
    /// [`WarmStart::PreviousChange`] (when the step continues the last) has the least cost
    /// `ℓ`: one evaluation of the contacts per candidate
    /// ([`crate::solver::NewtonWorkspace::iterate_from_least_cost`]). On the clutter, the
    /// falling sphere and the arm pushing a sphere it takes 8-52 % fewer Newton iterations
    /// than [`WarmStart::Start`] and never more on average (docs/benchmarks.md, "Warm
    /// starts"); not the default, since it moves trajectories within the tolerance and one
    /// gradient check at a state of such a trajectory then misses its 1e-9 bound.
    LeastCost,
}

impl WarmStart {
    /// Every predictor, in the order documented.
    pub const ALL: [WarmStart; 4] = [
        WarmStart::Start,
        WarmStart::Free,
        WarmStart::PreviousChange,
        WarmStart::LeastCost,
    ];

    /// Its name in problem files: `start`, `free`, `previous-change` or `least-cost`.
    pub fn name(self) -> &'static str {
        match self {
            WarmStart::Start => "start",
            WarmStart::Free => "free",
            WarmStart::PreviousChange => "previous-change",
            WarmStart::LeastCost => "least-cost",
        }
    }
}

impl FromStr for WarmStart {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        WarmStart::ALL
            .into_iter()
            .find(|w| w.name() == s)
            .ok_or_else(|| {
                Error::invalid(
                    "warm_start",
                    s,
                    "expected start, free, previous-change or least-cost",
                )
            })
    }
}

/// Parameters of the Newton solver (`#[non_exhaustive]`: made from the default and the
/// `with_*` methods, see the module doc).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct SolverParams {
    /// Relative tolerance ε_r of SAP's optimality criterion (nominal 1e-5).
    pub relative_tolerance: f64,
    /// Absolute tolerance ε_a (N·s scaled by `diag(A)^{-1/2}`, nominal 1e-14).
    pub absolute_tolerance: f64,
    /// Relative cost-stagnation tolerance: stop when `ℓ_prev − ℓ ≤ tol · max(|ℓ|, |ℓ_prev|)`
    /// (nominal 0: only once a Newton step no longer decreases the cost at all in floating
    /// point). A nominal 1e-15 stopped stiff clutters early: at k = 1e12 N/m 84 % of the steps
    /// stopped on it with residuals 1e5× the tolerance, leaving 0.45 mm penetrations where
    /// `f/k` is 1e-9 m; at 0 the steady penetration is 9e-11 m and the mean iterations drop
    /// from 30 to 18.
    pub cost_tolerance: f64,
    /// Newton iterations before giving up with an error (nominal 100).
    pub max_iterations: usize,
    /// Line-search iterations before giving up with an error (nominal 100).
    pub max_line_search_iterations: usize,
    /// Largest step length α tried by the line search (nominal 1.5, as Drake's SAP).
    pub alpha_max: f64,
    /// On convergence, factor `H` at the returned `v` (it is already evaluated there), so
    /// that the implicit-function-theorem gradients reuse a current factor. Off by default:
    /// the forward simulation does not need it.
    pub factor_at_solution: bool,
    /// Estimate the condition number of the last factored `H` for the statistics
    /// ([`crate::solver::SolverStats::condition`]; on by default). The derivative path turns it
    /// off: it reads no statistics, and the estimate's triangular solves cost more than a
    /// factorization on small systems (about 2 µs at nv = 13).
    pub condition_estimate: bool,
    /// Dense or sparse factorization of the Newton Hessian (default automatic by size).
    pub linear_solver: LinearSolver,
    /// The first iterate of each step's solve (read by [`crate::step::Simulator::step`];
    /// [`crate::solver::solve`] takes its guess as an argument).
    pub warm_start: WarmStart,
    /// Solve each contact island of a step (bodies linked by contacts and constraint rows;
    /// a Lagged contact apart that stays open links nothing, its cost being constant there)
    /// as its own Newton problem, in parallel, and bodies in free flight without Newton
    /// (read by [`crate::step::Simulator::solve`] and [`crate::step::Simulator::step`];
    /// `solver/workspace/islands.rs`). On by default: the result agrees with the whole
    /// problem's within the tolerance and a step takes the iterations of its hardest island
    /// (on the 40-body clutter's stiffness sweep, 15-50 % less CPU for every approximation);
    /// only Similar at k ≥ 1e13, past round-off, takes more iterations than the whole problem
    /// (docs/benchmarks.md, "Contact islands").
    pub islands: bool,
    /// Where the last Newton direction reversed a sliding contact's slip, give the next
    /// Hessian the secant curvature along that slip instead of the exact, nearly zero one
    /// (`solver/slip_reversal.rs`). On by default: the same optimality test is met, with
    /// fewer iterations where contacts come to stick (on the 40-body clutter with Lagged at
    /// k = 1e7 N/m 17 % fewer per step, at 160 bodies 25 %; docs/benchmarks.md,
    /// "Slip reversals").
    pub reversal_secant: bool,
}

impl Default for SolverParams {
    fn default() -> Self {
        SolverParams {
            relative_tolerance: 1e-5,
            absolute_tolerance: 1e-14,
            cost_tolerance: 0.0,
            max_iterations: 100,
            max_line_search_iterations: 100,
            alpha_max: 1.5,
            factor_at_solution: false,
            condition_estimate: true,
            linear_solver: LinearSolver::Auto,
            warm_start: WarmStart::Start,
            islands: true,
            reversal_secant: true,
        }
    }
}

impl SolverParams {
    /// Sets ε_r.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] unless `0 < tol < 1`.
    pub fn with_relative_tolerance(mut self, tol: f64) -> Result<Self> {
        if !(tol > 0.0 && tol < 1.0) {
            return Err(Error::invalid(
                "relative_tolerance",
                tol,
                "must be in (0, 1)",
            ));
        }
        self.relative_tolerance = tol;
        Ok(self)
    }

    /// Sets the Newton iteration limit.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for zero.
    pub fn with_max_iterations(mut self, n: usize) -> Result<Self> {
        if n == 0 {
            return Err(Error::invalid("max_iterations", n, "must be at least 1"));
        }
        self.max_iterations = n;
        Ok(self)
    }

    /// Sets ε_a (N·s scaled by `diag(A)^{-1/2}`).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] unless `tol ≥ 0` and finite.
    pub fn with_absolute_tolerance(mut self, tol: f64) -> Result<Self> {
        if !(tol >= 0.0 && tol.is_finite()) {
            return Err(Error::invalid(
                "absolute_tolerance",
                tol,
                "must be non-negative and finite",
            ));
        }
        self.absolute_tolerance = tol;
        Ok(self)
    }

    /// Sets the relative cost-stagnation tolerance.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] unless `0 ≤ tol < 1`.
    pub fn with_cost_tolerance(mut self, tol: f64) -> Result<Self> {
        if !(0.0..1.0).contains(&tol) {
            return Err(Error::invalid("cost_tolerance", tol, "must be in [0, 1)"));
        }
        self.cost_tolerance = tol;
        Ok(self)
    }

    /// Sets the line-search iteration limit.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for zero.
    pub fn with_max_line_search_iterations(mut self, n: usize) -> Result<Self> {
        if n == 0 {
            return Err(Error::invalid(
                "max_line_search_iterations",
                n,
                "must be at least 1",
            ));
        }
        self.max_line_search_iterations = n;
        Ok(self)
    }

    /// Sets the largest step length α of the line search.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] unless `alpha_max > 0` and finite.
    pub fn with_alpha_max(mut self, alpha_max: f64) -> Result<Self> {
        if !(alpha_max > 0.0 && alpha_max.is_finite()) {
            return Err(Error::invalid(
                "alpha_max",
                alpha_max,
                "must be positive and finite",
            ));
        }
        self.alpha_max = alpha_max;
        Ok(self)
    }

    /// Factors `H` at the returned `v` on convergence (see [`SolverParams::factor_at_solution`]).
    pub fn with_factor_at_solution(mut self, on: bool) -> Self {
        self.factor_at_solution = on;
        self
    }

    /// Estimates the condition number of the last factor (see
    /// [`SolverParams::condition_estimate`]).
    pub fn with_condition_estimate(mut self, on: bool) -> Self {
        self.condition_estimate = on;
        self
    }

    /// Sets the factorization of the Newton Hessian.
    pub fn with_linear_solver(mut self, linear_solver: LinearSolver) -> Self {
        self.linear_solver = linear_solver;
        self
    }

    /// Sets the first iterate of each step's solve (see [`WarmStart`]).
    pub fn with_warm_start(mut self, warm_start: WarmStart) -> Self {
        self.warm_start = warm_start;
        self
    }

    /// Solves contact islands apart or the whole problem as one (see
    /// [`SolverParams::islands`]).
    pub fn with_islands(mut self, on: bool) -> Self {
        self.islands = on;
        self
    }

    /// Gives Newton the secant friction curvature at slip reversals or not (see
    /// [`SolverParams::reversal_secant`]).
    pub fn with_reversal_secant(mut self, on: bool) -> Self {
        self.reversal_secant = on;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setters_change_one_field_and_refuse_out_of_range_values() -> Result<()> {
        let nominal = SolverParams::default();
        let changed = nominal
            .with_relative_tolerance(1e-9)?
            .with_absolute_tolerance(0.0)?
            .with_cost_tolerance(1e-12)?
            .with_max_iterations(7)?
            .with_max_line_search_iterations(9)?
            .with_alpha_max(1.0)?
            .with_factor_at_solution(true)
            .with_condition_estimate(false)
            .with_linear_solver(LinearSolver::Sparse)
            .with_warm_start(WarmStart::Free)
            .with_islands(false)
            .with_reversal_secant(false);
        let expected = SolverParams {
            relative_tolerance: 1e-9,
            absolute_tolerance: 0.0,
            cost_tolerance: 1e-12,
            max_iterations: 7,
            max_line_search_iterations: 9,
            alpha_max: 1.0,
            factor_at_solution: true,
            condition_estimate: false,
            linear_solver: LinearSolver::Sparse,
            warm_start: WarmStart::Free,
            islands: false,
            reversal_secant: false,
        };
        assert_eq!(changed, expected);
        assert!(nominal.with_relative_tolerance(1.0).is_err());
        assert!(nominal.with_relative_tolerance(f64::NAN).is_err());
        assert!(nominal.with_absolute_tolerance(-1e-14).is_err());
        assert!(nominal.with_absolute_tolerance(f64::INFINITY).is_err());
        assert!(nominal.with_cost_tolerance(1.0).is_err());
        assert!(nominal.with_cost_tolerance(f64::NAN).is_err());
        assert!(nominal.with_max_iterations(0).is_err());
        assert!(nominal.with_max_line_search_iterations(0).is_err());
        assert!(nominal.with_alpha_max(-1.5).is_err());
        assert!(nominal.with_alpha_max(f64::INFINITY).is_err());
        for w in WarmStart::ALL {
            assert_eq!(w.name().parse::<WarmStart>()?, w);
        }
        assert!("previous".parse::<WarmStart>().is_err());
        Ok(())
    }
}
