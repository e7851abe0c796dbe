//! Rollout derivatives from step Jacobians `A_t = ∂x_{t+1}/∂x_t`, `B_t = ∂x_{t+1}/∂u_t`,
//! `P_t = ∂x_{t+1}/∂θ` (tangent space): forward chaining `S_{t+1} = A_t S_t + [0 | B_t | P_t]`
//! and reverse (adjoint) accumulation for a scalar loss `L = Σ_t ℓ_t(x_t)`:
//! `λ_T = ∂ℓ_T/∂x_T`, `λ_t = A_tᵀ λ_{t+1} + ∂ℓ_t/∂x_t`, `∂L/∂u_t = B_tᵀ λ_{t+1}`,
//! `∂L/∂θ = Σ_t P_tᵀ λ_{t+1}`, `∂L/∂x_0 = λ_0`.
#![allow(non_snake_case)]

use nalgebra::{DMatrix, DVector};

use crate::derivatives::ift::step_jacobians;
use crate::derivatives::parameters::Parameter;
use crate::derivatives::StepJacobians;
use crate::error::{Error, Result};
use crate::step::{Simulator, State};

/// The states and step Jacobians of a rollout.
#[derive(Clone, Debug)]
pub struct RolloutJacobians {
    /// States `x_0 … x_T` (T + 1).
    pub states: Vec<State>,
    /// Jacobians of each step (T).
    pub steps: Vec<StepJacobians>,
}

/// Gradient of a scalar loss over a rollout.
#[derive(Clone, Debug)]
pub struct RolloutGradient {
    /// `∂L/∂x_0` (2nv, tangent).
    pub initial_state: DVector<f64>,
    /// `∂L/∂u_t` for every step (nu each).
    pub controls: Vec<DVector<f64>>,
    /// `∂L/∂θ` (np).
    pub parameters: DVector<f64>,
}

/// Rolls out `controls.len()` steps from `x0` and keeps every step's Jacobians (IFT).
///
/// # Errors
/// Any step failure.
pub fn rollout_jacobians(
    sim: &mut Simulator,
    x0: &State,
    controls: &[DVector<f64>],
    params: &[Parameter],
) -> Result<RolloutJacobians> {
    let mut states = vec![x0.clone()];
    let mut steps = Vec::with_capacity(controls.len());
    for u in controls {
        let j = step_jacobians(sim, states.last().expect("invariant: x0 pushed"), u, params)?;
        states.push(j.next.clone());
        steps.push(j);
    }
    Ok(RolloutJacobians { states, steps })
}

impl RolloutJacobians {
    /// Forward chaining: `(∂x_T/∂x_0, ∂x_T/∂θ)` (2nv × 2nv, 2nv × np).
    pub fn forward_sensitivity(&self) -> (DMatrix<f64>, DMatrix<f64>) {
        let n = self.states[0].v.len() * 2;
        let np = self.steps.first().map_or(0, |s| s.parameters.ncols());
        let mut dx = DMatrix::identity(n, n);
        let mut dtheta = DMatrix::zeros(n, np);
        for s in &self.steps {
            dtheta = &s.state * dtheta + &s.parameters;
            dx = &s.state * dx;
        }
        (dx, dtheta)
    }

    /// Adjoint gradient of `L = Σ_t ℓ_t(x_t)` given `dl_dx[t] = ∂ℓ_t/∂x_t` (2nv, tangent) for
    /// `t = 0 … T`.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] unless there is one loss gradient per state.
    pub fn adjoint_gradient(&self, dl_dx: &[DVector<f64>]) -> Result<RolloutGradient> {
        if dl_dx.len() != self.states.len() {
            return Err(Error::DimensionMismatch {
                what: "loss gradients (one per state)".into(),
                expected: self.states.len(),
                found: dl_dx.len(),
            });
        }
        let np = self.steps.first().map_or(0, |s| s.parameters.ncols());
        let mut lambda = dl_dx[self.steps.len()].clone();
        let mut controls = vec![DVector::zeros(0); self.steps.len()];
        let mut parameters = DVector::zeros(np);
        for (t, s) in self.steps.iter().enumerate().rev() {
            controls[t] = s.control.transpose() * &lambda;
            parameters += s.parameters.transpose() * &lambda;
            lambda = s.state.transpose() * &lambda + &dl_dx[t];
        }
        Ok(RolloutGradient {
            initial_state: lambda,
            controls,
            parameters,
        })
    }
}
