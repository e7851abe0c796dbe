//! Single shooting with L-BFGS (argmin 0.11 on `Vec<f64>`): the baseline iLQR is compared to.
//!
//! The decision variables are the controls, reparameterized so that L-BFGS stays
//! unconstrained: `u_t,i = c_i + r_i tanh(z_t,i)` for a bounded coordinate (centre `c`, half
//! width `r`), `u_t,i = z_t,i` for an unbounded one. The cost is that of
//! [`TrajectoryProblem`], and its gradient is the adjoint of the rollout
//! ([`crate::derivatives::rollout`]): with `λ_T = ℓ_T,x`,
//! `λ_t = A_tᵀ λ_{t+1} + ℓ_t,x`, `∂J/∂u_t = ℓ_t,u + B_tᵀ λ_{t+1}`, then the chain rule through
//! the reparameterization. A rollout that fails to simulate has infinite cost (the line search
//! backs off).
#![allow(non_snake_case)]

use std::cell::RefCell;
use std::time::Instant;

use argmin::core::{CostFunction, Executor, Gradient, State as _};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use nalgebra::DVector;

use crate::derivatives::rollout::rollout_jacobians;
use crate::error::{Error, Result};
use crate::multibody::MultibodyData;
use crate::optimize::ilqr::clone_simulator;
use crate::optimize::problem::{Trajectory, TrajectoryProblem};
use crate::step::Simulator;

/// Single-shooting settings.
#[derive(Clone, Debug, PartialEq)]
pub struct ShootingParams {
    /// L-BFGS iteration limit (default 200).
    pub max_iterations: u64,
    /// L-BFGS memory (default 10).
    pub memory: usize,
    /// Gradient-norm tolerance (default 1e-6).
    pub gradient_tolerance: f64,
    /// Relative cost-change tolerance (default 1e-6).
    pub cost_tolerance: f64,
}

impl Default for ShootingParams {
    fn default() -> Self {
        ShootingParams {
            max_iterations: 200,
            memory: 10,
            gradient_tolerance: 1e-6,
            cost_tolerance: 1e-6,
        }
    }
}

/// Result of [`solve_shooting`].
#[derive(Clone, Debug)]
pub struct ShootingReport {
    /// The best trajectory found.
    pub trajectory: Trajectory,
    /// Cost of the initial guess.
    pub initial_cost: f64,
    /// L-BFGS iterations.
    pub iterations: u64,
    /// Cost and gradient evaluations (rollouts, adjoint rollouts).
    pub evaluations: (u64, u64),
    /// argmin's termination reason, as text.
    pub termination: String,
    /// Wall time (s).
    pub wall_s: f64,
}

/// The control map `u(z)` per coordinate: `(centre, half width)` when bounded.
struct ControlMap {
    bounded: Vec<Option<(f64, f64)>>,
    nu: usize,
}

impl ControlMap {
    fn new(problem: &TrajectoryProblem, nu: usize) -> Self {
        let bounded = (0..nu)
            .map(|i| {
                problem.bounds.as_ref().and_then(|b| {
                    let (lo, hi) = (b.lower[i], b.upper[i]);
                    (lo.is_finite() && hi.is_finite() && hi > lo)
                        .then_some((0.5 * (lo + hi), 0.5 * (hi - lo)))
                })
            })
            .collect();
        ControlMap { bounded, nu }
    }

    fn controls(&self, z: &[f64]) -> Vec<DVector<f64>> {
        z.chunks(self.nu)
            .map(|zt| {
                DVector::from_fn(self.nu, |i, _| match self.bounded[i] {
                    Some((c, r)) => c + r * zt[i].tanh(),
                    None => zt[i],
                })
            })
            .collect()
    }

    /// `z` for controls `u` (clamped strictly inside the bounds).
    fn parameters(&self, u: &[DVector<f64>]) -> Vec<f64> {
        u.iter()
            .flat_map(|ut| {
                (0..self.nu).map(move |i| match self.bounded[i] {
                    Some((c, r)) => ((ut[i] - c) / r).clamp(-0.999_999, 0.999_999).atanh(),
                    None => ut[i],
                })
            })
            .collect()
    }

    /// `du/dz` per coordinate.
    fn derivative(&self, z: &[f64]) -> Vec<f64> {
        z.iter()
            .enumerate()
            .map(|(k, zk)| match self.bounded[k % self.nu] {
                Some((_, r)) => r * (1.0 - zk.tanh().powi(2)),
                None => 1.0,
            })
            .collect()
    }
}

struct Shooting<'a> {
    sim: RefCell<Simulator>,
    problem: &'a TrajectoryProblem,
    map: ControlMap,
}

impl CostFunction for Shooting<'_> {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, z: &Self::Param) -> std::result::Result<f64, argmin::core::Error> {
        let controls = self.map.controls(z);
        let mut sim = self.sim.borrow_mut();
        Ok(match self.problem.rollout(&mut sim, &controls) {
            Ok(t) if t.cost.is_finite() => t.cost,
            _ => f64::INFINITY,
        })
    }
}

impl Gradient for Shooting<'_> {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;

    fn gradient(&self, z: &Self::Param) -> std::result::Result<Vec<f64>, argmin::core::Error> {
        let controls = self.map.controls(z);
        let mut sim = self.sim.borrow_mut();
        let roll = rollout_jacobians(&mut sim, &self.problem.x0, &controls, &[])?;
        let model = &sim.model;
        let mut data = MultibodyData::new(model);
        let zero = DVector::zeros(model.nu());
        let T = controls.len();
        let mut lu = Vec::with_capacity(T);
        let mut lx = Vec::with_capacity(T + 1);
        for (x, u) in roll.states.iter().zip(&controls) {
            let d = self.problem.cost.calc_diff(model, &mut data, x, u, false);
            lx.push(d.lx);
            lu.push(d.lu);
        }
        let terminal = roll.states.last().expect("invariant: x_0 in a rollout");
        lx.push(
            self.problem
                .cost
                .calc_diff(model, &mut data, terminal, &zero, true)
                .lx,
        );
        let g = roll.adjoint_gradient(&lx)?;
        let du_dz = self.map.derivative(z);
        Ok(g.controls
            .iter()
            .zip(&lu)
            .flat_map(|(gt, lt)| (gt + lt).iter().copied().collect::<Vec<_>>())
            .zip(du_dz)
            .map(|(g, d)| g * d)
            .collect())
    }
}

/// Minimizes the problem's cost by single shooting with L-BFGS (More–Thuente line search)
/// from the controls `initial`.
///
/// # Errors
/// Size mismatches; [`Error::TrajectoryOptimization`] when the initial guess cannot be
/// simulated or argmin fails.
pub fn solve_shooting(
    sim: &mut Simulator,
    problem: &TrajectoryProblem,
    initial: &[DVector<f64>],
    params: &ShootingParams,
) -> Result<ShootingReport> {
    let start = Instant::now();
    problem.check(sim, initial)?;
    let fail = |reason: String, iteration: u64, cost: f64| Error::TrajectoryOptimization {
        reason,
        iteration: iteration as usize,
        cost,
    };
    let initial_traj = problem.rollout(sim, initial).map_err(|e| {
        fail(
            format!("the initial guess cannot be simulated: {e}"),
            0,
            f64::NAN,
        )
    })?;
    let map = ControlMap::new(problem, sim.model.nu());
    let z0 = map.parameters(initial);
    let solver = LBFGS::new(MoreThuenteLineSearch::new(), params.memory)
        .with_tolerance_grad(params.gradient_tolerance)
        .and_then(|s| s.with_tolerance_cost(params.cost_tolerance))
        .map_err(|e| fail(format!("L-BFGS settings: {e}"), 0, initial_traj.cost))?;
    // argmin's line search may keep the problem, so it gets its own simulator.
    let shooting = Shooting {
        sim: RefCell::new(clone_simulator(sim)?),
        problem,
        map: ControlMap::new(problem, sim.model.nu()),
    };
    let result = Executor::new(shooting, solver)
        .configure(|s| s.param(z0).max_iters(params.max_iterations))
        .run()
        .map_err(|e| fail(format!("L-BFGS failed: {e}"), 0, initial_traj.cost))?;
    let state = result.state();
    let z = state.get_best_param().cloned().ok_or_else(|| {
        fail(
            "L-BFGS returned no parameters".into(),
            state.get_iter(),
            initial_traj.cost,
        )
    })?;
    let counts = state.get_func_counts();
    let evaluations = (
        counts.get("cost_count").copied().unwrap_or(0),
        counts.get("gradient_count").copied().unwrap_or(0),
    );
    let iterations = state.get_iter();
    let termination = state.get_termination_status().to_string();
    let trajectory = problem.rollout(sim, &map.controls(&z))?;
    Ok(ShootingReport {
        trajectory,
        initial_cost: initial_traj.cost,
        iterations,
        evaluations,
        termination,
        wall_s: start.elapsed().as_secs_f64(),
    })
}
