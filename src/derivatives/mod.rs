//! Derivatives of a step (ICF ext. Sec. X-B; DESIGN "Derivatives").
//!
//! At the converged velocities the momentum residual `r(v; θ) = A(θ)(v − v*(θ)) −
//! J(θ)ᵀγ(J(θ)v + b; θ)` vanishes, so by the implicit function theorem
//! `∂v/∂θ = −H⁻¹ ∂r/∂θ` with `H = ∂r/∂v` the Newton Hessian, already factored by the solver.
//! For the state and control directions `∂r/∂θ` is analytic, in f64 ([`analytic`]: RNEA
//! derivatives for the dynamics, the world-twist chain rule for the contacts); for named
//! parameters it comes from one evaluation of `r` with dual numbers seeded on θ, in chunks of
//! [`ift::CHUNK`] directions (chunked forward mode), `v` held fixed. The dual evaluation of all
//! directions ([`ift::residual_jacobian`]) is the reference the analytic columns are tested
//! against. The positions follow from
//! `q' = q0 ⊕ δt N(q0) v`, differentiated in the tangent space (`q ⊕ δ` is
//! [`crate::multibody::MultibodyModel::retract`]).
//!
//! θ = [δq0 (nv, tangent), δv0 (nv), δu (nu), named parameters ([`Parameter`])]; the outputs
//! are x' = [δq' (nv, tangent), v' (nv)].
//!
//! Two references check the IFT path: the whole step, Newton iterations included, run in dual
//! numbers ([`direct`]), and central finite differences ([`fd`]); [`check`] compares them.
//!
//! Pressure-field polygons are clipped again in duals with the topology the f64 step decided;
//! a direction along which that topology changes at first order (element faces on
//! equal-pressure planes) is differentiated on either side of the tie instead (`topology`).
//!
//! Files: `parameters.rs` (named parameters, the scene lifted into `T`), `lifted.rs` (a step
//! assembled in `T` with seeded directions), `analytic.rs` and `contact_terms.rs` (the state
//! and control columns of `∂r/∂θ` in f64), `topology.rs` (directions whose polygons change
//! topology), `ift.rs`, `direct.rs`, `fd.rs`, `check.rs`.

pub mod analytic;
pub mod check;
pub(crate) mod contact_terms;
pub mod direct;
pub mod fd;
pub mod ift;
pub mod lifted;
pub mod parameters;
pub mod rollout;
pub(crate) mod topology;

pub use check::{gradient_check, GradientCheck};
pub use ift::step_jacobians;
pub use parameters::Parameter;

use nalgebra::DMatrix;

use crate::step::State;

/// Jacobians of one step `x' = f(x, u; θ)` in the tangent space.
#[derive(Clone, Debug)]
pub struct StepJacobians {
    /// `∂x'/∂x` (2nv × 2nv): rows `[δq', δv']`, columns `[δq0, δv0]`.
    pub state: DMatrix<f64>,
    /// `∂x'/∂u` (2nv × nu).
    pub control: DMatrix<f64>,
    /// `∂x'/∂θ` (2nv × np), one column per named parameter.
    pub parameters: DMatrix<f64>,
    /// Names of the parameter columns.
    pub parameter_names: Vec<String>,
    /// The state after the step.
    pub next: State,
}

impl StepJacobians {
    /// Splits a full Jacobian (2nv × (2nv + nu + np)) into its blocks.
    fn from_full(
        full: DMatrix<f64>,
        nv: usize,
        nu: usize,
        parameter_names: Vec<String>,
        next: State,
    ) -> Self {
        let np = parameter_names.len();
        StepJacobians {
            state: full.columns(0, 2 * nv).into_owned(),
            control: full.columns(2 * nv, nu).into_owned(),
            parameters: full.columns(2 * nv + nu, np).into_owned(),
            parameter_names,
            next,
        }
    }

    /// The full Jacobian `[∂x'/∂x, ∂x'/∂u, ∂x'/∂θ]`.
    pub fn full(&self) -> DMatrix<f64> {
        let (r, n) = (
            self.state.nrows(),
            self.state.ncols() + self.control.ncols() + self.parameters.ncols(),
        );
        let mut out = DMatrix::zeros(r, n);
        out.columns_mut(0, self.state.ncols())
            .copy_from(&self.state);
        out.columns_mut(self.state.ncols(), self.control.ncols())
            .copy_from(&self.control);
        out.columns_mut(
            self.state.ncols() + self.control.ncols(),
            self.parameters.ncols(),
        )
        .copy_from(&self.parameters);
        out
    }
}
