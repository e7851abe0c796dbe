//! The backward Riccati pass of iLQR (Li & Todorov 2004; Tassa, Erez & Todorov 2012,
//! eqs. (5)-(11); control limits as in Tassa, Mansard & Todorov 2014).
//!
//! With `V_x`, `V_xx` the value function's derivatives at stage `t+1` (starting from the
//! terminal cost), the Q-function's expansion at stage `t` is
//!
//! ```text
//! Q_x  = ℓ_x + Aᵀ V_x          Q_u  = ℓ_u + Bᵀ V_x
//! Q_xx = ℓ_xx + Aᵀ V_xx A      Q_ux = ℓ_ux + Bᵀ V_xx A      Q_uu = ℓ_uu + Bᵀ V_xx B
//! ```
//!
//! (Gauss–Newton: the dynamics' second derivatives are dropped). The step
//! `δu = k + K δx` minimizes it with Levenberg–Marquardt regularization `Q̃_uu = Q_uu + μI`
//! under the box `u_lo − ū ≤ δu ≤ u_hi − ū` (`super::boxqp`); without bounds
//! `k = −Q̃_uu⁻¹ Q_u`, `K = −Q̃_uu⁻¹ Q_ux`. The value update uses the unregularized `Q_uu`
//! (Tassa 2012 eq. (11)):
//!
//! ```text
//! V_x  = Q_x + Kᵀ Q_uu k + Kᵀ Q_u + Q_uxᵀ k
//! V_xx = Q_xx + Kᵀ Q_uu K + Kᵀ Q_ux + Q_uxᵀ K
//! ```
//!
//! and the expected cost change of a step scaled by α is `ΔJ(α) = α Σ kᵀQ_u + ½α² Σ kᵀQ_uu k`.
#![allow(non_snake_case)]

use nalgebra::{DMatrix, DVector};

use crate::optimize::boxqp::solve_box_qp;
use crate::optimize::cost::CostDerivatives;
use crate::optimize::problem::ControlBounds;

/// Linearization and quadratic cost of one running stage.
#[derive(Clone, Debug)]
pub struct StageModel {
    /// `A_t = ∂x_{t+1}/∂x_t` (2nv × 2nv, tangent).
    pub fx: DMatrix<f64>,
    /// `B_t = ∂x_{t+1}/∂u_t` (2nv × nu).
    pub fu: DMatrix<f64>,
    /// Cost derivatives at `(x_t, u_t)`.
    pub cost: CostDerivatives,
}

/// Result of a successful backward pass.
#[derive(Clone, Debug)]
pub struct BackwardPass {
    /// Feedforward steps `k_t` (nu each).
    pub k: Vec<DVector<f64>>,
    /// Feedback gains `K_t` (nu × 2nv each).
    pub K: Vec<DMatrix<f64>>,
    /// `Σ kᵀ Q_u` (linear term of the expected change).
    pub dV1: f64,
    /// `½ Σ kᵀ Q_uu k` (quadratic term).
    pub dV2: f64,
    /// `max_t ‖Q_u,t‖_∞` over free controls: the first-order optimality measure.
    pub gradient_norm: f64,
}

impl BackwardPass {
    /// Expected cost change `ΔJ(α)` of the step scaled by `alpha`.
    pub fn expected_change(&self, alpha: f64) -> f64 {
        alpha * self.dV1 + alpha * alpha * self.dV2
    }
}

/// Runs the backward pass with regularization `mu` about the controls `u` (T). Returns
/// `Err(t)` with the stage whose regularized `Q_uu` (its free block under bounds) is not
/// positive definite.
pub fn backward_pass(
    stages: &[StageModel],
    terminal: &CostDerivatives,
    u: &[DVector<f64>],
    bounds: Option<&ControlBounds>,
    mu: f64,
) -> Result<BackwardPass, usize> {
    let T = stages.len();
    let mut Vx = terminal.lx.clone();
    let mut Vxx = terminal.lxx.clone();
    let mut k = vec![DVector::zeros(0); T];
    let mut K = vec![DMatrix::zeros(0, 0); T];
    let (mut dV1, mut dV2, mut gradient_norm) = (0.0, 0.0, 0.0_f64);
    for t in (0..T).rev() {
        let s = &stages[t];
        let (fx, fu, c) = (&s.fx, &s.fu, &s.cost);
        let nu = fu.ncols();
        let Vxx_fx = &Vxx * fx;
        let Qx = &c.lx + fx.transpose() * &Vx;
        let Qu = &c.lu + fu.transpose() * &Vx;
        let Qxx = &c.lxx + fx.transpose() * &Vxx_fx;
        let Qux = &c.lux + fu.transpose() * &Vxx_fx;
        let Quu = &c.luu + fu.transpose() * &Vxx * fu;
        let Quu_reg = &Quu + DMatrix::identity(nu, nu) * mu;
        let (kt, Kt) = match bounds {
            None => {
                let chol = Quu_reg.cholesky().ok_or(t)?;
                gradient_norm = gradient_norm.max(Qu.amax());
                (-chol.solve(&Qu), -chol.solve(&Qux))
            }
            Some(b) => {
                let lo = &b.lower - &u[t];
                let hi = &b.upper - &u[t];
                let warm = if t + 1 < T {
                    k[t + 1].clone()
                } else {
                    DVector::zeros(nu)
                };
                let qp = solve_box_qp(&Quu_reg, &Qu, &lo, &hi, &warm).ok_or(t)?;
                let mut Kt = DMatrix::zeros(nu, Qux.ncols());
                if let Some(factor) = &qp.factor {
                    let idx: Vec<usize> = (0..nu).filter(|&i| qp.free[i]).collect();
                    let Qux_f = DMatrix::from_fn(idx.len(), Qux.ncols(), |i, j| Qux[(idx[i], j)]);
                    let K_f = -factor.solve(&Qux_f);
                    for (r, &i) in idx.iter().enumerate() {
                        Kt.set_row(i, &K_f.row(r));
                    }
                    for &i in &idx {
                        gradient_norm = gradient_norm.max(Qu[i].abs());
                    }
                }
                (qp.x, Kt)
            }
        };
        dV1 += kt.dot(&Qu);
        dV2 += 0.5 * kt.dot(&(&Quu * &kt));
        let Kt_Quu = Kt.transpose() * &Quu;
        Vx = &Qx + &Kt_Quu * &kt + Kt.transpose() * &Qu + Qux.transpose() * &kt;
        Vxx = &Qxx + &Kt_Quu * &Kt + Kt.transpose() * &Qux + Qux.transpose() * &Kt;
        Vxx = (&Vxx + Vxx.transpose()) * 0.5;
        k[t] = kt;
        K[t] = Kt;
    }
    Ok(BackwardPass {
        k,
        K,
        dV1,
        dV2,
        gradient_norm,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    /// A double integrator `x = (p, v)`, `p' = p + δt v'`, `v' = v + δt u`, with quadratic
    /// costs: one Riccati pass from zero controls must give the exact LQR optimum, i.e. a
    /// step that makes the expected change equal the true change of the quadratic cost.
    #[test]
    fn lqr_step_is_exact_on_a_linear_quadratic_problem() {
        let dt = 0.1;
        let fx = DMatrix::from_row_slice(2, 2, &[1.0, dt, 0.0, 1.0]);
        let fu = DMatrix::from_row_slice(2, 1, &[dt * dt, dt]);
        let T = 20;
        let r = 1e-2;
        let x0 = DVector::from_vec(vec![1.0, 0.0]);
        let cost_at = |x: &DVector<f64>, u: Option<&DVector<f64>>| {
            let mut d = CostDerivatives::zeros(1, 1);
            match u {
                Some(u) => {
                    d.l = 0.5 * r * u[0] * u[0];
                    d.lu[0] = r * u[0];
                    d.luu[(0, 0)] = r;
                }
                None => {
                    d.l = 0.5 * x.dot(x) * 10.0;
                    d.lx = x * 10.0;
                    d.lxx = DMatrix::identity(2, 2) * 10.0;
                }
            }
            d
        };
        let simulate = |u: &[DVector<f64>]| {
            let mut x = x0.clone();
            let mut J = 0.0;
            for ut in u {
                J += cost_at(&x, Some(ut)).l;
                x = &fx * &x + &fu * ut;
            }
            (J + cost_at(&x, None).l, x)
        };
        let u0 = vec![DVector::zeros(1); T];
        let mut xs = vec![x0.clone()];
        for ut in &u0 {
            let x = &fx * xs.last().unwrap() + &fu * ut;
            xs.push(x);
        }
        let stages: Vec<StageModel> = (0..T)
            .map(|t| StageModel {
                fx: fx.clone(),
                fu: fu.clone(),
                cost: cost_at(&xs[t], Some(&u0[t])),
            })
            .collect();
        let bp = backward_pass(&stages, &cost_at(&xs[T], None), &u0, None, 0.0).unwrap();
        // Closed loop with δx from the nominal rollout.
        let mut x = x0.clone();
        let mut u = Vec::new();
        for ((k, K), x_bar) in bp.k.iter().zip(&bp.K).zip(&xs) {
            let ut = k + K * (&x - x_bar);
            x = &fx * &x + &fu * &ut;
            u.push(ut);
        }
        let (J0, _) = simulate(&u0);
        let (J1, _) = simulate(&u);
        assert_relative_eq!(J1 - J0, bp.expected_change(1.0), epsilon = 1e-12);
        assert!(J1 < 0.5 * J0);
    }
}
