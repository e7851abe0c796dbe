//! Stage costs `ℓ_t(x_t, u_t)` and the terminal cost `ℓ_T(x_T)` with their derivatives in
//! the tangent space of the state (Crocoddyl's `calc` / `calcDiff`).
//!
//! The state `x = (q, v)` is perturbed as `x ⊕ δx = (q ⊕ δq, v + δv)`, `δx` (2nv) ordered
//! `[δq (nv, tangent), δv (nv)]` like the step Jacobians of [`crate::derivatives`]. Every term
//! returns `ℓ`, `ℓ_x = ∂ℓ/∂δx` (2nv), `ℓ_u` (nu), `ℓ_xx` (2nv × 2nv), `ℓ_ux` (nu × 2nv) and
//! `ℓ_uu` (nu × nu). Gradients are exact; Hessians of residual terms `½‖r(x)‖²_W` are the
//! Gauss–Newton `r_xᵀ W r_x`, the usual choice in iLQR (Tassa et al. 2012), exact when `r` is
//! linear in `δx` (joint coordinates other than quaternions, velocities, controls).
//!
//! Costs are summed over stages, not multiplied by δt. Built-in terms:
//! - [`ControlCost`]: `½ (u − u*)ᵀ R (u − u*)`;
//! - [`StateCost`]: `½ ‖q ⊖ q*‖²_{W_q} + ½ ‖v − v*‖²_{W_v}`;
//! - [`BodyPositionCost`]: `½ ‖p_WP(q) − p*‖²_W` for a point P of a body;
//! - [`BodyRelativeCost`]: `½ ‖p_WP(q) − p_WQ(q) − o‖²_W` for points P, Q of two bodies.
//!
//! Each has a [`Schedule`]: which stages it applies to (running, terminal, both) and a time
//! window (s) for the running stages, which gives per-stage weights as sums of terms. Users add
//! their own terms by implementing [`StageCost`]; [`check_cost_derivatives`] compares their
//! analytic derivatives with central differences.
#![allow(non_snake_case)]

use nalgebra::{DMatrix, DVector, Matrix3xX, Vector3};
use num_dual::Dual64;

use crate::multibody::kinematics::point_jacobian;
use crate::multibody::{forward_kinematics, MultibodyData, MultibodyModel};
use crate::step::State;

/// Where a cost is evaluated: the model, its kinematics at `x`, the state, the control.
#[derive(Debug)]
pub struct StagePoint<'a> {
    /// The model.
    pub model: &'a MultibodyModel<f64>,
    /// Kinematics at `x` (filled by [`forward_kinematics`]).
    pub data: &'a MultibodyData<f64>,
    /// The state; `x.t` (s) is the stage time.
    pub x: &'a State,
    /// The control (nu); zeros at the terminal stage.
    pub u: &'a DVector<f64>,
    /// Whether this is the terminal stage `T` (no control applied).
    pub terminal: bool,
}

/// Value and derivatives of a cost at one stage (Crocoddyl names).
#[derive(Clone, Debug, PartialEq)]
pub struct CostDerivatives {
    /// `ℓ`.
    pub l: f64,
    /// `∂ℓ/∂δx` (2nv).
    pub lx: DVector<f64>,
    /// `∂ℓ/∂u` (nu).
    pub lu: DVector<f64>,
    /// `∂²ℓ/∂δx²` (2nv × 2nv).
    pub lxx: DMatrix<f64>,
    /// `∂²ℓ/∂u∂δx` (nu × 2nv).
    pub lux: DMatrix<f64>,
    /// `∂²ℓ/∂u²` (nu × nu).
    pub luu: DMatrix<f64>,
}

impl CostDerivatives {
    /// All zeros for `nv` velocities and `nu` controls.
    pub fn zeros(nv: usize, nu: usize) -> Self {
        CostDerivatives {
            l: 0.0,
            lx: DVector::zeros(2 * nv),
            lu: DVector::zeros(nu),
            lxx: DMatrix::zeros(2 * nv, 2 * nv),
            lux: DMatrix::zeros(nu, 2 * nv),
            luu: DMatrix::zeros(nu, nu),
        }
    }
}

/// A cost term. `calc_diff` adds the term's value and derivatives into `d` (so terms sum).
pub trait StageCost: Send + Sync + std::fmt::Debug {
    /// `ℓ(x, u)` at `p`.
    fn calc(&self, p: &StagePoint<'_>) -> f64;
    /// Adds `ℓ` and its derivatives at `p` into `d`.
    fn calc_diff(&self, p: &StagePoint<'_>, d: &mut CostDerivatives);
}

/// Which stages a term applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stages {
    /// Stages `0 … T−1` (with a control) inside the time window.
    Running,
    /// The terminal stage `T` only.
    Terminal,
    /// Both.
    All,
}

/// When a built-in term is active: the stages, and a time window `[from, to]` (s) for the
/// running stages.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Schedule {
    /// Stages.
    pub stages: Stages,
    /// Window start (s).
    pub from: f64,
    /// Window end (s), inclusive.
    pub to: f64,
}

/// Slack on window ends (s): stage times are sums of δt and carry round-off.
const TIME_SLACK: f64 = 1e-9;

impl Schedule {
    /// All stages at all times of `stages`.
    pub fn always(stages: Stages) -> Self {
        Schedule {
            stages,
            from: f64::NEG_INFINITY,
            to: f64::INFINITY,
        }
    }

    /// Whether the term applies at time `t` (s) on a terminal or running stage.
    pub fn active(&self, t: f64, terminal: bool) -> bool {
        match (self.stages, terminal) {
            (Stages::Terminal, false) | (Stages::Running, true) => false,
            (_, true) => true,
            _ => t >= self.from - TIME_SLACK && t <= self.to + TIME_SLACK,
        }
    }
}

/// `½ (u − u*)ᵀ R (u − u*)`, `R = diag(weight)` (1/N² or 1/(N·m)²), running stages only.
#[derive(Clone, Debug, PartialEq)]
pub struct ControlCost {
    /// `u*` (nu).
    pub target: DVector<f64>,
    /// Diagonal of `R` (nu).
    pub weight: DVector<f64>,
    /// Time window (its stages are forced to running).
    pub schedule: Schedule,
}

impl StageCost for ControlCost {
    fn calc(&self, p: &StagePoint<'_>) -> f64 {
        if p.terminal || !self.schedule.active(p.x.t, false) {
            return 0.0;
        }
        let e = p.u - &self.target;
        0.5 * e.component_mul(&self.weight).dot(&e)
    }

    fn calc_diff(&self, p: &StagePoint<'_>, d: &mut CostDerivatives) {
        if p.terminal || !self.schedule.active(p.x.t, false) {
            return;
        }
        let e = p.u - &self.target;
        let We = e.component_mul(&self.weight);
        d.l += 0.5 * We.dot(&e);
        d.lu += &We;
        for i in 0..e.len() {
            d.luu[(i, i)] += self.weight[i];
        }
    }
}

/// `½ ‖q ⊖ q*‖²_{W_q} + ½ ‖v − v*‖²_{W_v}` with diagonal weights (per tangent coordinate).
#[derive(Clone, Debug, PartialEq)]
pub struct StateCost {
    /// `q*` (nq).
    pub q_target: DVector<f64>,
    /// `v*` (nv).
    pub v_target: DVector<f64>,
    /// Diagonal of `W_q` (nv; 1/m² or 1/rad²).
    pub q_weight: DVector<f64>,
    /// Diagonal of `W_v` (nv; s²/m² or s²/rad²).
    pub v_weight: DVector<f64>,
    /// Stages and window.
    pub schedule: Schedule,
}

/// `D = ∂(q ⊕ δ ⊖ q*)/∂δ` at `δ = 0` (nv × nv): identity except for the rotation blocks of
/// free and ball joints, computed with dual numbers through
/// [`crate::multibody::JointKind::retract`] and [`crate::multibody::JointKind::difference`].
pub fn difference_jacobian(
    model: &MultibodyModel<f64>,
    q: &DVector<f64>,
    q_target: &DVector<f64>,
) -> DMatrix<f64> {
    let nv = model.nv();
    let mut D = DMatrix::identity(nv, nv);
    for j in model
        .joints
        .iter()
        .filter(|j| j.kind.quaternion_start().is_some())
    {
        let (nqj, nvj) = (j.kind.nq(), j.kind.nv());
        let qj = q.rows(j.q_start, nqj).map(Dual64::from);
        let q_star = q_target.rows(j.q_start, nqj).map(Dual64::from);
        for k in 0..nvj {
            let delta = DVector::from_fn(nvj, |i, _| {
                if i == k {
                    Dual64::new(0.0, 1.0)
                } else {
                    Dual64::from(0.0)
                }
            });
            let moved = DVector::from_vec(j.kind.retract(qj.rows(0, nqj), delta.rows(0, nvj)));
            let diff = j.kind.difference(moved.rows(0, nqj), q_star.rows(0, nqj));
            for (i, e) in diff.iter().enumerate() {
                D[(j.v_start + i, j.v_start + k)] = e.eps;
            }
        }
    }
    D
}

impl StageCost for StateCost {
    fn calc(&self, p: &StagePoint<'_>) -> f64 {
        if !self.schedule.active(p.x.t, p.terminal) {
            return 0.0;
        }
        let eq = p.model.difference(&p.x.q, &self.q_target);
        let ev = &p.x.v - &self.v_target;
        0.5 * (eq.component_mul(&self.q_weight).dot(&eq)
            + ev.component_mul(&self.v_weight).dot(&ev))
    }

    fn calc_diff(&self, p: &StagePoint<'_>, d: &mut CostDerivatives) {
        if !self.schedule.active(p.x.t, p.terminal) {
            return;
        }
        let nv = p.model.nv();
        let eq = p.model.difference(&p.x.q, &self.q_target);
        let ev = &p.x.v - &self.v_target;
        let D = difference_jacobian(p.model, &p.x.q, &self.q_target);
        let WqD = DMatrix::from_diagonal(&self.q_weight) * &D;
        d.l += 0.5
            * (eq.component_mul(&self.q_weight).dot(&eq)
                + ev.component_mul(&self.v_weight).dot(&ev));
        let mut lq = d.lx.rows_mut(0, nv);
        lq += D.transpose() * eq.component_mul(&self.q_weight);
        let mut lv = d.lx.rows_mut(nv, nv);
        lv += ev.component_mul(&self.v_weight);
        let mut lqq = d.lxx.view_mut((0, 0), (nv, nv));
        lqq += D.transpose() * WqD;
        for i in 0..nv {
            d.lxx[(nv + i, nv + i)] += self.v_weight[i];
        }
    }
}

/// World position `p_WP` (m) of point P (body frame, m) of `body`, and its Jacobian
/// `∂p_WP/∂δq` (3 × nv): the point Jacobian, since `q ⊕ δ` moves joints by the velocity `δ`
/// over unit time.
fn point_and_jacobian(
    data: &MultibodyData<f64>,
    body: usize,
    p_BP: &Vector3<f64>,
) -> (Vector3<f64>, Matrix3xX<f64>) {
    let X = &data.X_WB[body];
    let p_WP = X.R * p_BP + X.p;
    (p_WP, point_jacobian(data, body, &p_WP))
}

/// Adds `½ eᵀ W e` with `e = r`, `∂e/∂δq = J` (Gauss–Newton Hessian) into `d`.
fn add_position_residual(
    d: &mut CostDerivatives,
    e: &Vector3<f64>,
    J: &Matrix3xX<f64>,
    weight: &Vector3<f64>,
) {
    let nv = J.ncols();
    let We = e.component_mul(weight);
    d.l += 0.5 * We.dot(e);
    let WJ = Matrix3xX::from_fn(nv, |i, j| weight[i] * J[(i, j)]);
    let mut lq = d.lx.rows_mut(0, nv);
    lq += J.transpose() * We;
    let mut lqq = d.lxx.view_mut((0, 0), (nv, nv));
    lqq += J.transpose() * WJ;
}

/// `½ ‖p_WP(q) − p*‖²_W` for point P of a body, `W = diag(weight)` (1/m²).
#[derive(Clone, Debug, PartialEq)]
pub struct BodyPositionCost {
    /// Body index in `model.bodies`.
    pub body: usize,
    /// Point P in the body frame (m).
    pub p_BP: Vector3<f64>,
    /// Target `p*`, world (m).
    pub target: Vector3<f64>,
    /// Diagonal of `W` (1/m²); a zero ignores that axis.
    pub weight: Vector3<f64>,
    /// Stages and window.
    pub schedule: Schedule,
}

impl StageCost for BodyPositionCost {
    fn calc(&self, p: &StagePoint<'_>) -> f64 {
        if !self.schedule.active(p.x.t, p.terminal) {
            return 0.0;
        }
        let X = &p.data.X_WB[self.body];
        let e = X.R * self.p_BP + X.p - self.target;
        0.5 * e.component_mul(&self.weight).dot(&e)
    }

    fn calc_diff(&self, p: &StagePoint<'_>, d: &mut CostDerivatives) {
        if !self.schedule.active(p.x.t, p.terminal) {
            return;
        }
        let (p_WP, J) = point_and_jacobian(p.data, self.body, &self.p_BP);
        add_position_residual(d, &(p_WP - self.target), &J, &self.weight);
    }
}

/// `½ ‖p_WP − p_WQ − o‖²_W` for point P of body A and point Q of body B (keeps a pusher near
/// an object without saying when or where they touch).
#[derive(Clone, Debug, PartialEq)]
pub struct BodyRelativeCost {
    /// Body A (index in `model.bodies`).
    pub body_a: usize,
    /// P in A's frame (m).
    pub p_AP: Vector3<f64>,
    /// Body B.
    pub body_b: usize,
    /// Q in B's frame (m).
    pub p_BQ: Vector3<f64>,
    /// Offset `o`, world (m).
    pub offset: Vector3<f64>,
    /// Diagonal of `W` (1/m²).
    pub weight: Vector3<f64>,
    /// Stages and window.
    pub schedule: Schedule,
}

impl StageCost for BodyRelativeCost {
    fn calc(&self, p: &StagePoint<'_>) -> f64 {
        if !self.schedule.active(p.x.t, p.terminal) {
            return 0.0;
        }
        let (A, B) = (&p.data.X_WB[self.body_a], &p.data.X_WB[self.body_b]);
        let e = A.R * self.p_AP + A.p - (B.R * self.p_BQ + B.p) - self.offset;
        0.5 * e.component_mul(&self.weight).dot(&e)
    }

    fn calc_diff(&self, p: &StagePoint<'_>, d: &mut CostDerivatives) {
        if !self.schedule.active(p.x.t, p.terminal) {
            return;
        }
        let (pa, Ja) = point_and_jacobian(p.data, self.body_a, &self.p_AP);
        let (pb, Jb) = point_and_jacobian(p.data, self.body_b, &self.p_BQ);
        add_position_residual(d, &(pa - pb - self.offset), &(Ja - Jb), &self.weight);
    }
}

/// The sum of cost terms of a trajectory problem.
#[derive(Debug, Default)]
pub struct CostModel {
    /// The terms.
    pub terms: Vec<Box<dyn StageCost>>,
}

impl CostModel {
    /// `Σ ℓ` at `(x, u)`; computes the kinematics into `data`.
    pub fn calc(
        &self,
        model: &MultibodyModel<f64>,
        data: &mut MultibodyData<f64>,
        x: &State,
        u: &DVector<f64>,
        terminal: bool,
    ) -> f64 {
        forward_kinematics(model, data, &x.q, &x.v);
        let p = StagePoint {
            model,
            data,
            x,
            u,
            terminal,
        };
        self.terms.iter().map(|c| c.calc(&p)).sum()
    }

    /// `Σ ℓ` and derivatives at `(x, u)`; computes the kinematics into `data`.
    pub fn calc_diff(
        &self,
        model: &MultibodyModel<f64>,
        data: &mut MultibodyData<f64>,
        x: &State,
        u: &DVector<f64>,
        terminal: bool,
    ) -> CostDerivatives {
        forward_kinematics(model, data, &x.q, &x.v);
        let p = StagePoint {
            model,
            data,
            x,
            u,
            terminal,
        };
        let mut d = CostDerivatives::zeros(model.nv(), model.nu());
        for c in &self.terms {
            c.calc_diff(&p, &mut d);
        }
        d
    }
}

/// Analytic against central-difference derivatives of one cost term at one point.
#[derive(Clone, Debug, PartialEq)]
pub struct CostCheck {
    /// `|ℓ_analytic − ℓ|`, the value reported by `calc_diff` against `calc`.
    pub value_error: f64,
    /// `max_i |ℓ_x,i − FD_i| / max(1, ‖ℓ_x‖_∞)`.
    pub lx_error: f64,
    /// The same for `ℓ_u`.
    pub lu_error: f64,
    /// `[ℓ_xx ℓ_uxᵀ; ℓ_ux ℓ_uu]` against central differences of the analytic gradient,
    /// relative to `max(1, max |entry|)`. Gauss–Newton terms differ by design (second-order
    /// kinematics); exact terms agree to round-off.
    pub hessian_error: f64,
}

/// Step (tangent units) of the central differences in [`check_cost_derivatives`].
pub const COST_FD_STEP: f64 = 1e-6;

/// Checks `cost`'s analytic derivatives at `(x, u)` against central differences (step
/// [`COST_FD_STEP`]) in the tangent space: `ℓ(x ⊕ ±h e_i)` for the gradient, the analytic
/// gradient at `±h` for the Hessian.
pub fn check_cost_derivatives(
    cost: &dyn StageCost,
    model: &MultibodyModel<f64>,
    x: &State,
    u: &DVector<f64>,
    terminal: bool,
) -> CostCheck {
    let (nv, nu) = (model.nv(), model.nu());
    let mut data = MultibodyData::new(model);
    let eval = |data: &mut MultibodyData<f64>, x: &State, u: &DVector<f64>| {
        forward_kinematics(model, data, &x.q, &x.v);
        let p = StagePoint {
            model,
            data,
            x,
            u,
            terminal,
        };
        let mut d = CostDerivatives::zeros(nv, nu);
        cost.calc_diff(&p, &mut d);
        (cost.calc(&p), d)
    };
    let (l, d0) = eval(&mut data, x, u);
    let n = 2 * nv + nu;
    let perturb = |k: usize, h: f64| -> (State, DVector<f64>) {
        let mut xs = x.clone();
        let mut us = u.clone();
        if k < nv {
            let delta = DVector::from_fn(nv, |i, _| if i == k { h } else { 0.0 });
            xs.q = model.retract(&x.q, &delta);
        } else if k < 2 * nv {
            xs.v[k - nv] += h;
        } else {
            us[k - 2 * nv] += h;
        }
        (xs, us)
    };
    let grad = |d: &CostDerivatives| {
        let mut g = DVector::zeros(n);
        g.rows_mut(0, 2 * nv).copy_from(&d.lx);
        g.rows_mut(2 * nv, nu).copy_from(&d.lu);
        g
    };
    let hess = |d: &CostDerivatives| {
        let mut H = DMatrix::zeros(n, n);
        H.view_mut((0, 0), (2 * nv, 2 * nv)).copy_from(&d.lxx);
        H.view_mut((2 * nv, 0), (nu, 2 * nv)).copy_from(&d.lux);
        H.view_mut((0, 2 * nv), (2 * nv, nu))
            .copy_from(&d.lux.transpose());
        H.view_mut((2 * nv, 2 * nv), (nu, nu)).copy_from(&d.luu);
        H
    };
    let g0 = grad(&d0);
    let mut g_fd = DVector::zeros(n);
    let mut H_fd = DMatrix::zeros(n, n);
    let h = COST_FD_STEP;
    for k in 0..n {
        let (xp, up) = perturb(k, h);
        let (xm, um) = perturb(k, -h);
        let (lp, dp) = eval(&mut data, &xp, &up);
        let (lm, dm) = eval(&mut data, &xm, &um);
        g_fd[k] = (lp - lm) / (2.0 * h);
        H_fd.set_column(k, &((grad(&dp) - grad(&dm)) / (2.0 * h)));
    }
    let rel = |a: &DVector<f64>, b: &DVector<f64>| (a - b).amax() / a.amax().max(1.0);
    let H0 = hess(&d0);
    CostCheck {
        value_error: (d0.l - l).abs(),
        lx_error: rel(
            &g0.rows(0, 2 * nv).into_owned(),
            &g_fd.rows(0, 2 * nv).into_owned(),
        ),
        lu_error: rel(
            &g0.rows(2 * nv, nu).into_owned(),
            &g_fd.rows(2 * nv, nu).into_owned(),
        ),
        hessian_error: (&H0 - &H_fd).amax() / H0.amax().max(1.0),
    }
}
