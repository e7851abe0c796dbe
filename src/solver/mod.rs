//! The convex contact problem and its Newton solver (ICF eq. (2); ICF ext. Sec. X).
//!
//! `v = argmin ℓ(v) = ½‖v − v*‖²_A + Σ_i ℓ_i(J_i v + b_i)`: strictly convex, unique.
//! Its optimality condition is momentum balance `A(v − v*) = Σ J_iᵀ γ_i` (ICF eq. (1)).
//!
//! Newton iterations solve `H Δv = −∇ℓ`, `H = A + Σ J_iᵀ G_i J_i`, then an exact line search
//! on the convex `α ↦ ℓ(v + αΔv)` (safeguarded Newton-Raphson with bracketing and
//! bisection). Convergence follows SAP: with `D = diag(A)^{-1/2}`, stop when
//! `‖D ∇ℓ‖ ≤ ε_a + ε_r max(‖D p‖, ‖D Jᵀγ‖)`, or when the cost stops decreasing at round-off.
//! SAP takes the momentum `p = A v`; we take the momentum change of the step
//! `p = A (v − v0)`, so the tolerance does not loosen with a body's speed (a rod sliding at
//! 10 m/s would otherwise skip gravity's `m g δt` at small δt) and is Galilean invariant.
//! Failure to converge, a non-finite value or an indefinite Hessian is an error carrying the
//! statistics.
//!
//! Joint limits, couplers, servos and joint friction are one-dimensional rows beside the
//! contacts (`constraint.rs`), with `H` gaining `G cᵀc` per row.
//!
//! Files: `problem.rs` (the problem and its residual, generic), `jacobians.rs` (the contact
//! Jacobians by their nonzero columns), `constraint.rs`, `params.rs`, `stats.rs`,
//! `newton.rs` (the f64 entry point), `workspace.rs` (the Newton loop on clique blocks and its
//! reusable data: the layout of a problem and the iteration data; `workspace/islands.rs`, the
//! problem split into independent contact islands, solved apart in parallel), `factor.rs` (the factor of
//! `H` handed to the derivatives, with its generation), `line_search.rs`, `slip_reversal.rs` (Newton's friction curvature where a
//! direction reversed a contact's slip), `linalg/` (the
//! factorization seam: dense or supernodal).

pub mod constraint;
pub(crate) mod factor;
pub mod jacobians;
pub mod linalg;
pub(crate) mod line_search;
pub(crate) mod newton;
pub mod params;
pub mod problem;
pub(crate) mod slip_reversal;
pub mod stats;
pub(crate) mod workspace;

pub use constraint::{ConstraintKind, ConstraintRow, RowEval};
pub use factor::{FactorGeneration, NewtonFactor, NewtonFactorRef};
pub use jacobians::ContactJacobians;
pub use newton::{solve, ConvexSolution};
pub use params::{SolverParams, WarmStart};
pub use problem::{ConvexProblem, ProblemEval};
pub use stats::{ConvergenceCriterion, SolverStats};
pub use workspace::{NewtonWorkspace, HESSIAN_SHIFTS};
