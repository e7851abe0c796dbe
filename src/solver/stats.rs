//! Per-solve statistics.

use std::fmt;

/// Which criterion stopped a successful solve.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ConvergenceCriterion {
    /// Not converged (only seen inside errors).
    #[default]
    None,
    /// SAP's optimality criterion on `‖D ∇ℓ‖`.
    Optimality,
    /// The cost stopped decreasing at round-off level.
    CostStagnation,
}

impl fmt::Display for ConvergenceCriterion {
    /// The name in `stats.csv`: `none`, `optimality` or `stagnation`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ConvergenceCriterion::None => "none",
            ConvergenceCriterion::Optimality => "optimality",
            ConvergenceCriterion::CostStagnation => "stagnation",
        })
    }
}

/// Statistics of one convex solve.
///
/// A solve split into contact islands ([`crate::solver::NewtonWorkspace::prepare_islands`])
/// reports its critical path: `iterations`, `line_search_iterations` and `last_step_length`
/// are those of the island that took most Newton iterations, `residual` and `tolerance` the
/// root sums of squares of the islands', `condition` the largest island's, `hessian_shift`
/// the largest; `islands` and `total_iterations` say how many islands there were and how
/// many iterations they took together.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SolverStats {
    /// Newton iterations performed (the most any island took).
    pub iterations: usize,
    /// Line-search iterations summed over Newton iterations (of the island that took most
    /// Newton iterations).
    pub line_search_iterations: usize,
    /// Final scaled gradient norm `‖D ∇ℓ‖`.
    pub residual: f64,
    /// The right-hand side of the optimality criterion at the end.
    pub tolerance: f64,
    /// Number of contacts `nc`.
    pub contacts: usize,
    /// Final cost ℓ.
    pub cost: f64,
    /// What stopped the iterations.
    pub criterion: ConvergenceCriterion,
    /// Estimate of the 1-norm condition number `κ₁(H)` of the last factored Newton Hessian
    /// ([`crate::solver::linalg::condition_estimate`]); `None` when Newton took no step or
    /// [`crate::solver::SolverParams::condition_estimate`] is off.
    pub condition: Option<f64>,
    /// Step length α of the last line search that succeeded; `None` before the first.
    pub last_step_length: Option<f64>,
    /// The largest relative diagonal shift δ the Newton Hessian needed to be factored
    /// (`H + δ diag(H)`, [`crate::solver::HESSIAN_SHIFTS`]); 0 when every factorization
    /// succeeded unshifted. A shifted factor at the solution makes the implicit-function
    /// gradients approximate to about δ relative.
    pub hessian_shift: f64,
    /// For a failed solve: the velocity index with the largest scaled gradient component
    /// `|D_i ∇ℓ_i|`, where the iterate is furthest from optimality (the step names its body
    /// in the error, [`crate::error::Error::Near`]); `None` for a solve that succeeded.
    pub worst_velocity: Option<usize>,
    /// Whether the solve stopped because the line search found no decrease of ℓ along the
    /// Newton direction (in errors only; otherwise the iteration limit stopped it).
    pub line_search_failed: bool,
    /// Independent Newton problems the solve ran: 1 for the whole problem, the number of
    /// contact islands that needed Newton for a split solve (0 when every body was in free
    /// flight).
    pub islands: usize,
    /// Newton iterations summed over the islands (`iterations` for one problem).
    pub total_iterations: usize,
}

impl fmt::Display for SolverStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} iterations, {} line-search iterations, residual {:.3e} (tolerance {:.3e}), {} contacts, cost {:.6e}",
            self.iterations, self.line_search_iterations, self.residual, self.tolerance, self.contacts, self.cost
        )?;
        if self.islands > 1 {
            write!(
                f,
                ", {} islands ({} iterations in all)",
                self.islands, self.total_iterations
            )?;
        }
        if let Some(alpha) = self.last_step_length {
            write!(f, ", last step length α = {alpha:.3e}")?;
        }
        if self.hessian_shift > 0.0 {
            write!(
                f,
                ", Hessian shifted by {:.0e} diag(H) to factor",
                self.hessian_shift
            )?;
        }
        if self.line_search_failed {
            write!(
                f,
                "; the line search found no decrease along the Newton direction"
            )?;
        }
        Ok(())
    }
}
