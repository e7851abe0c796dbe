//! The identification objective: simulated against measured trajectories, with derivatives
//! through the rollout.
//!
//! For trajectory `j` with samples `k` at times `t_k + τ_j = (n_k + α_k) δt` (`τ_j` the
//! record's clock offset, 0 unless estimated; `0 ≤ α_k < 1`: a sample between steps is the
//! linear interpolation `ŷ_k = (1 − α_k) h(x_{n_k}) + α_k h(x_{n_k+1})` of the two states
//! around it) and columns `c`, the whitened residual is `r_jkc = (ŷ_kc(θ) − y_jkc)/σ_j`
//! (`super::observe` for `h`, σ_j the noise level, 1 when unknown; for angle columns the
//! difference is taken modulo 2π, in `(−π, π]`), robustified to `r̃` by the [`Loss`].
//! Derivatives below interpolate alike. With `θ = g(s)` ([`super::params`]):
//!
//! 1. Jacobian (Gauss–Newton): forward sensitivities `S_{t+1} = A_t S_t + P_t` with
//!    `A_t = ∂x_{t+1}/∂x_t` and `P_t = ∂x_{t+1}/∂θ` the IFT step Jacobians, from `S_0` = 0
//!    but for the unit vector `e_{v_i}` in the column of an estimated initial velocity
//!    `v_0[i]`; then `∂r̃_jkc/∂s = (dr̃/dr)/σ_j · ∂h_c/∂x · S_{n_k} · diag g′(s)`, and in the
//!    column of the offset `∂ŷ_k/∂τ = (h(x_{n_k+1}) − h(x_{n_k}))/δt`, the slope of the
//!    interpolation.
//! 2. Gradient (L-BFGS) of `L = ½ ‖r̃‖²` by the adjoint of the rollout
//!    ([`RolloutJacobians::adjoint_gradient`]) with per-state loss gradients
//!    `∂ℓ_t/∂x_t = Σ_c r̃_c (dr̃/dr)_c / σ · ∂h_c/∂x` at sampled steps, zero elsewhere; an
//!    initial velocity's component is the adjoint's `∂L/∂v_0[i]`, the offset's
//!    `Σ r̃ (dr̃/dr)/σ · ∂ŷ/∂τ`.
//!
//! Trajectories are independent given θ: each is simulated on its own copy of the scene, in
//! parallel with rayon when [`IdentificationProblem::parallel`] is set. Results are gathered
//! in trajectory order and reduced serially, so parallel and serial evaluations are
//! bit-identical.
#![allow(non_snake_case)]

use std::f64::consts::TAU;

use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;

use crate::derivatives::ift::Chunk;
use crate::derivatives::rollout::{rollout_jacobians, RolloutJacobians};
use crate::derivatives::{Parameter, StepJacobians};
use crate::error::{Error, Result};
use crate::identify::data::{grid_position, MeasuredTrajectory};
use crate::identify::loss::Loss;
use crate::identify::observe::{MeasurementModel, QuaternionSigns};
use crate::identify::params::{ParamSpec, Unknown};
use crate::multibody::{forward_kinematics, MultibodyData, MultibodyModel};
use crate::step::{Simulator, State};

/// What an evaluation computes besides the residuals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// Residuals only (forward rollouts).
    Residuals,
    /// Residuals and their Jacobian with respect to `s` (forward sensitivities).
    Jacobian,
    /// Residuals and the gradient of `½‖r̃‖²` with respect to `s` (adjoint).
    Gradient,
}

/// One trajectory evaluated at a parameter point.
#[derive(Clone, Debug, PartialEq)]
pub struct TrajectoryEvaluation {
    /// Simulated values of the measured columns at the sample times (ns × nc).
    pub simulated: DMatrix<f64>,
    /// Robustified whitened residuals `r̃` (ns·nc, sample-major: `k·nc + c`).
    pub residuals: DVector<f64>,
    /// `∂r̃/∂s` (ns·nc × np), with [`Need::Jacobian`].
    pub jacobian: Option<DMatrix<f64>>,
    /// `∂(½‖r̃‖²)/∂s` (np), with [`Need::Gradient`].
    pub gradient: Option<DVector<f64>>,
}

impl TrajectoryEvaluation {
    /// `½ ‖r̃‖²` of this trajectory.
    pub fn cost(&self) -> f64 {
        0.5 * self.residuals.norm_squared()
    }
}

/// All trajectories evaluated at one parameter point.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// One per trajectory, in order.
    pub trajectories: Vec<TrajectoryEvaluation>,
}

impl Evaluation {
    /// `L = ½ ‖r̃‖²` summed over trajectories in order.
    pub fn cost(&self) -> f64 {
        self.trajectories
            .iter()
            .map(TrajectoryEvaluation::cost)
            .sum()
    }

    /// All residuals stacked in trajectory order (m).
    pub fn residuals(&self) -> DVector<f64> {
        let parts: Vec<&[f64]> = self
            .trajectories
            .iter()
            .map(|t| t.residuals.as_slice())
            .collect();
        DVector::from_vec(parts.concat())
    }

    /// All Jacobians stacked in trajectory order (m × np), if computed.
    pub fn jacobian(&self) -> Option<DMatrix<f64>> {
        let blocks = self
            .trajectories
            .iter()
            .map(|t| t.jacobian.as_ref())
            .collect::<Option<Vec<_>>>()?;
        let np = blocks.first().map_or(0, |b| b.ncols());
        let m = blocks.iter().map(|b| b.nrows()).sum();
        let mut J = DMatrix::zeros(m, np);
        let mut row = 0;
        for b in blocks {
            J.rows_mut(row, b.nrows()).copy_from(b);
            row += b.nrows();
        }
        Some(J)
    }

    /// The gradient summed in trajectory order (np), if computed.
    pub fn gradient(&self) -> Option<DVector<f64>> {
        let mut parts = self.trajectories.iter().map(|t| t.gradient.as_ref());
        let first = parts.next()??.clone();
        parts.try_fold(first, |acc, g| Some(acc + g?))
    }
}

/// A system identification problem: a scene, the parameters to estimate and the measured
/// trajectories, all starting from the scene's initial state with no actuation.
#[derive(Debug)]
pub struct IdentificationProblem {
    /// Name (the identification file's stem, for reports).
    pub name: String,
    /// The scene; its step settings (δt, approximation) are used for every rollout and its
    /// values of the identified parameters are replaced at each evaluation.
    pub simulator: Simulator,
    /// Initial state of every trajectory (t = 0).
    pub initial_state: State,
    /// The parameters (np).
    pub parameters: Vec<ParamSpec>,
    /// The measured trajectories.
    pub trajectories: Vec<MeasuredTrajectory>,
    /// Loss on the whitened residuals.
    pub loss: Loss,
    /// Evaluate the trajectories in parallel (rayon); results are bit-identical to serial.
    pub parallel: bool,
}

impl IdentificationProblem {
    /// Assembles a problem and checks that every measured column names a quantity of a tree
    /// body of the scene and that every trajectory sits on the grid of the scene's δt.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] with no parameters or no trajectories, or for a column that
    /// names no tree body; [`Error::DataFile`] for a trajectory whose step indices do not
    /// match its times at the scene's δt (made for another time step), or whose samples span
    /// no time (an empty time range).
    pub fn new(
        name: &str,
        simulator: Simulator,
        initial_state: State,
        parameters: Vec<ParamSpec>,
        trajectories: Vec<MeasuredTrajectory>,
    ) -> Result<Self> {
        if parameters.is_empty() {
            return Err(Error::invalid(
                "parameters",
                0,
                "give at least one parameter to identify",
            ));
        }
        if trajectories.is_empty() {
            return Err(Error::invalid(
                "trajectories",
                0,
                "give at least one measured trajectory",
            ));
        }
        for m in &trajectories {
            measurement_model(&simulator, m)?;
            if m.last_step() == 0 {
                return Err(Error::DataFile {
                    path: m.source.clone(),
                    message: format!(
                        "the samples span no time (the last is at t = {}, the start): nothing to compare a simulation with",
                        m.times.last().copied().unwrap_or(0.0)
                    ),
                });
            }
        }
        let records = trajectories
            .iter()
            .enumerate()
            .map(|(j, m)| m.record.unwrap_or(j) + 1)
            .max()
            .unwrap_or(0);
        let parameters = per_record(parameters, records)?;
        Ok(IdentificationProblem {
            name: name.to_string(),
            simulator,
            initial_state,
            parameters,
            trajectories,
            loss: Loss::Squared,
            parallel: true,
        })
    }

    /// Steps of the longest trajectory.
    pub fn num_steps(&self) -> usize {
        self.trajectories
            .iter()
            .map(MeasuredTrajectory::last_step)
            .max()
            .unwrap_or(0)
    }

    /// This problem with the samples after step `max_step` left out (a shorter horizon).
    ///
    /// # Errors
    /// As [`Simulator::new`], which cannot fail for a scene that was valid.
    pub fn with_horizon(&self, max_step: usize) -> Result<Self> {
        Ok(IdentificationProblem {
            name: self.name.clone(),
            simulator: copy_scene(&self.simulator)?,
            initial_state: self.initial_state.clone(),
            parameters: self.parameters.clone(),
            trajectories: self
                .trajectories
                .iter()
                .map(|t| t.up_to_step(max_step))
                .collect(),
            loss: self.loss,
            parallel: self.parallel,
        })
    }

    /// Number of parameters.
    pub fn num_parameters(&self) -> usize {
        self.parameters.len()
    }

    /// The initial coordinates `s₀` (np).
    pub fn initial_coordinates(&self) -> Vec<f64> {
        self.parameters
            .iter()
            .map(ParamSpec::initial_coordinate)
            .collect()
    }

    /// The physical values `θ = g(s)` (np).
    pub fn values(&self, s: &[f64]) -> Vec<f64> {
        self.parameters
            .iter()
            .zip(s)
            .map(|(p, &s)| p.transform.to_value(s))
            .collect()
    }

    /// A fresh copy of the scene with the parameters set to `θ = g(s)`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if a value makes the scene invalid.
    pub fn simulator_at(&self, s: &[f64]) -> Result<Simulator> {
        let mut sim = copy_scene(&self.simulator)?;
        for (p, theta) in self.parameters.iter().zip(self.values(s)) {
            if let Unknown::Scene(parameter) = p.unknown {
                parameter.set(&mut sim, theta)?;
            }
        }
        Ok(sim)
    }

    /// Evaluates every trajectory at `s` (np).
    ///
    /// # Errors
    /// The first failure in trajectory order: an invalid parameter value or a failed step.
    pub fn evaluate(&self, s: &[f64], need: Need) -> Result<Evaluation> {
        let one = |j: usize| self.evaluate_trajectory(j, s, need);
        let results: Vec<Result<TrajectoryEvaluation>> = if self.parallel {
            (0..self.trajectories.len())
                .into_par_iter()
                .map(one)
                .collect()
        } else {
            (0..self.trajectories.len()).map(one).collect()
        };
        Ok(Evaluation {
            trajectories: results.into_iter().collect::<Result<_>>()?,
        })
    }

    /// Evaluates trajectory `j` at `s`.
    ///
    /// # Errors
    /// As [`IdentificationProblem::evaluate`].
    pub fn evaluate_trajectory(
        &self,
        j: usize,
        s: &[f64],
        need: Need,
    ) -> Result<TrajectoryEvaluation> {
        let measured = &self.trajectories[j];
        let measurement = &measurement_model(&self.simulator, measured)?;
        let mut sim = self.simulator_at(s)?;
        let theta = self.values(s);
        // The unknowns that act on this trajectory: the scene's parameters always; the
        // record's initial velocities and clock offset when it starts from the scene's initial
        // state (a multiple-shooting segment starts from a measured state at a measured time).
        let record = measured.record.unwrap_or(j);
        let from_scene_start = measured.initial_state.is_none();
        let mut scene: Vec<(usize, Parameter)> = Vec::new();
        let mut velocities: Vec<(usize, usize)> = Vec::new();
        let mut offset = None;
        for (p, spec) in self.parameters.iter().enumerate() {
            match spec.unknown {
                Unknown::Scene(parameter) => scene.push((p, parameter)),
                Unknown::InitialVelocity { dof, record: r }
                    if r == Some(record) && from_scene_start =>
                {
                    velocities.push((p, dof));
                }
                Unknown::TimeOffset { record: r } if r == Some(record) && from_scene_start => {
                    offset = Some(p);
                }
                _ => {}
            }
        }
        let mut x0 = measured
            .initial_state
            .clone()
            .unwrap_or_else(|| self.initial_state.clone());
        for &(p, dof) in &velocities {
            x0.v[dof] = theta[p];
        }
        let dt = sim.settings.dt;
        // Where each sample falls on the simulation's grid: (n_k, α_k) with
        // t_k + τ = (n_k + α_k) δt, and whether it moves with τ (there is an offset and the
        // sample is not before the start: one at t_k + τ < 0 is compared with x_0).
        let grid: Vec<(usize, f64, bool)> = match offset {
            Some(p) => measured
                .times
                .iter()
                .map(|&t| {
                    let (n, alpha) = grid_position(t + theta[p], 0.0, dt);
                    (n, alpha, t + theta[p] >= 0.0)
                })
                .collect(),
            None => measured
                .steps
                .iter()
                .zip(&measured.fractions)
                .map(|(&n, &alpha)| (n, alpha, false))
                .collect(),
        };
        // With a clock offset every sample needs the state after it for the slope dŷ/dτ.
        let steps = match offset {
            Some(_) => grid.iter().map(|g| g.0 + 1).max().unwrap_or(0),
            None => measured.last_step(),
        };
        let scene_parameters: Vec<Parameter> = scene.iter().map(|&(_, p)| p).collect();
        let rollout = match need {
            Need::Residuals => Rollout::States(simulate(&mut sim, &x0, steps)?),
            Need::Jacobian | Need::Gradient => {
                let u = DVector::zeros(sim.model.nu());
                Rollout::Jacobians(rollout_jacobians(
                    &mut sim,
                    &x0,
                    &vec![u; steps],
                    &scene_parameters,
                )?)
            }
        };
        let states = match &rollout {
            Rollout::States(states) => states,
            Rollout::Jacobians(r) => &r.states,
        };
        let model = &sim.model;
        let model_dual: MultibodyModel<Chunk> = model.cast();
        let (nv, np, nc) = (model.nv(), self.parameters.len(), measured.columns.len());
        let sigma = measured.noise.unwrap_or(1.0);
        let dtheta_ds: Vec<f64> = self
            .parameters
            .iter()
            .zip(s)
            .map(|(p, &s)| p.transform.derivative(s))
            .collect();

        let ns = measured.num_samples();
        // The samples each state contributes to, with their weights and side: sample k at
        // t_k + τ = (n_k + α_k) δt is (1 − α_k) h(x_{n_k}) + α_k h(x_{n_k + 1}), and its slope
        // in τ is (h(x_{n_k + 1}) − h(x_{n_k}))/δt.
        let mut weights: Vec<Vec<(usize, f64, f64)>> = vec![Vec::new(); states.len()];
        for (k, &(n, alpha, _)) in grid.iter().enumerate() {
            weights[n].push((k, 1.0 - alpha, -1.0));
            if alpha > 0.0 || offset.is_some() {
                weights[n + 1].push((k, alpha, 1.0));
            }
        }
        let mut data = MultibodyData::new(model);
        let mut signs = QuaternionSigns::new(model.bodies.len());
        let mut simulated = DMatrix::<f64>::zeros(ns, nc);
        let mut slope = DMatrix::<f64>::zeros(ns, nc);
        let angles: Vec<bool> = measurement
            .observations
            .iter()
            .map(|o| o.is_angle())
            .collect();
        let mut anchors = DMatrix::<Option<f64>>::from_element(ns, nc, None);
        // ∂ŷ_k/∂θ (nc × np per sample) with the Jacobian; the contributions (t, w, ∂h/∂x)
        // of each sample with the gradient.
        let mut dy_dtheta =
            vec![DMatrix::zeros(nc, np); if need == Need::Jacobian { ns } else { 0 }];
        let mut parts: Vec<Vec<(usize, f64, DMatrix<f64>)>> =
            vec![Vec::new(); if need == Need::Gradient { ns } else { 0 }];
        // S_t = ∂x_t/∂θ (2nv × np): the initial state depends on the initial velocities only.
        let mut S = DMatrix::zeros(2 * nv, np);
        for &(p, dof) in &velocities {
            S[(nv + dof, p)] = 1.0;
        }
        for (t, state) in states.iter().enumerate() {
            if t > 0 {
                if let (Need::Jacobian, Rollout::Jacobians(r)) = (need, &rollout) {
                    let StepJacobians {
                        state: A,
                        parameters: P,
                        ..
                    } = &r.steps[t - 1];
                    let mut next = A * &S;
                    for (i, &(p, _)) in scene.iter().enumerate() {
                        let mut column = next.column_mut(p);
                        column += P.column(i);
                    }
                    S = next;
                }
            }
            forward_kinematics(model, &mut data, &state.q, &state.v);
            signs.update(&data);
            if weights[t].is_empty() {
                continue;
            }
            let (y, H) = match need {
                Need::Residuals => (measurement.values(&data, &signs.signs), None),
                _ => {
                    let (y, H) = measurement.values_and_jacobian(&model_dual, state, &signs.signs);
                    (y, Some(H))
                }
            };
            for &(k, w, side) in &weights[t] {
                for c in 0..nc {
                    // An angle interpolated between two states is taken on the branch of the
                    // first (they differ by far less than π within a step).
                    let value = match anchors[(k, c)] {
                        Some(a) if angles[c] => y[c] + TAU * ((a - y[c]) / TAU).round(),
                        _ => y[c],
                    };
                    anchors[(k, c)].get_or_insert(value);
                    simulated[(k, c)] += w * value;
                    if grid[k].2 {
                        slope[(k, c)] += side * value / dt;
                    }
                }
                if w == 0.0 {
                    continue;
                }
                match (&H, need) {
                    (Some(H), Need::Jacobian) => dy_dtheta[k] += H * &S * w,
                    (Some(H), Need::Gradient) => parts[k].push((t, w, H.clone())),
                    _ => {}
                }
            }
        }
        if let Some(p) = offset {
            for (k, dy) in dy_dtheta.iter_mut().enumerate() {
                dy.set_column(p, &slope.row(k).transpose());
            }
        }
        let mut residuals = DVector::zeros(ns * nc);
        let mut jacobian = (need == Need::Jacobian).then(|| DMatrix::zeros(residuals.len(), np));
        let mut dl_dx = vec![DVector::zeros(2 * nv); states.len()];
        let mut dl_dtau = 0.0;
        for k in 0..ns {
            for c in 0..nc {
                if angles[c] {
                    // Angles are compared modulo 2π: the simulated one is reported on the
                    // branch nearest the measured one.
                    let turns = ((simulated[(k, c)] - measured.values[(k, c)]) / TAU).round();
                    simulated[(k, c)] -= TAU * turns;
                }
                let difference = simulated[(k, c)] - measured.values[(k, c)];
                let (r, dr) = self.loss.robustify(difference / sigma);
                let row = k * nc + c;
                residuals[row] = r;
                if let Some(J) = jacobian.as_mut() {
                    for p in 0..np {
                        J[(row, p)] = dy_dtheta[k][(c, p)] * (dr / sigma) * dtheta_ds[p];
                    }
                }
                if need == Need::Gradient {
                    for (t, w, H) in &parts[k] {
                        dl_dx[*t] += H.row(c).transpose() * (w * r * dr / sigma);
                    }
                    if offset.is_some() {
                        dl_dtau += r * dr / sigma * slope[(k, c)];
                    }
                }
            }
        }
        let gradient = match (&rollout, need) {
            (Rollout::Jacobians(r), Need::Gradient) => {
                let adjoint = r.adjoint_gradient(&dl_dx)?;
                let mut g = DVector::zeros(np);
                for (i, &(p, _)) in scene.iter().enumerate() {
                    g[p] = adjoint.parameters[i];
                }
                for &(p, dof) in &velocities {
                    g[p] = adjoint.initial_state[nv + dof];
                }
                if let Some(p) = offset {
                    g[p] = dl_dtau;
                }
                Some(g.component_mul(&DVector::from_column_slice(&dtheta_ds)))
            }
            _ => None,
        };
        Ok(TrajectoryEvaluation {
            simulated,
            residuals,
            jacobian,
            gradient,
        })
    }
}

/// `parameters` with every per-record unknown not yet assigned to a record replaced by one per
/// record: the name unchanged with one record, else suffixed `[j]` for record `j` (data order,
/// from 0).
///
/// # Errors
/// [`Error::InvalidParameter`] for a record index beyond the `records` or one unknown listed
/// twice.
fn per_record(parameters: Vec<ParamSpec>, records: usize) -> Result<Vec<ParamSpec>> {
    let mut expanded: Vec<ParamSpec> = Vec::new();
    for p in parameters {
        match p.unknown.record() {
            Some(r) if r >= records => {
                return Err(Error::invalid(
                    &p.name,
                    r,
                    &format!("a record index below {records}"),
                ))
            }
            None if p.unknown.per_record() && records == 1 => expanded.push(ParamSpec {
                unknown: p.unknown.for_record(0),
                ..p
            }),
            None if p.unknown.per_record() => expanded.extend((0..records).map(|r| ParamSpec {
                name: format!("{}[{r}]", p.name),
                unknown: p.unknown.for_record(r),
                ..p.clone()
            })),
            _ => expanded.push(p),
        }
    }
    for (j, p) in expanded.iter().enumerate() {
        if let Some(q) = expanded[..j].iter().find(|q| q.unknown == p.unknown) {
            return Err(Error::invalid(
                &p.name,
                &q.name,
                "each unknown may be listed once",
            ));
        }
    }
    Ok(expanded)
}

/// A fresh simulator of the same scene.
fn copy_scene(sim: &Simulator) -> Result<Simulator> {
    crate::optimize::ilqr::clone_simulator(sim)
}

/// The measurement model of `m` in the scene of `sim`, after checking that its step indices
/// match its times at the scene's δt.
///
/// # Errors
/// [`Error::DataFile`] naming the data for a column that names no tree body, or data placed on
/// the grid of another time step.
fn measurement_model(sim: &Simulator, m: &MeasuredTrajectory) -> Result<MeasurementModel> {
    let dt = sim.settings.dt;
    let bad = |message: String| Error::DataFile {
        path: m.source.clone(),
        message,
    };
    let t0 = m.initial_state.as_ref().map_or(0.0, |x| x.t);
    for (k, ((&t, &n), &alpha)) in m.times.iter().zip(&m.steps).zip(&m.fractions).enumerate() {
        let (n_here, alpha_here) = grid_position(t, t0, dt);
        if n_here != n || (alpha_here - alpha).abs() > 1e-6 {
            return Err(bad(format!(
                "sample {k} at t = {t} is not at step {n} + {alpha} of δt = {dt} s: the data was placed on another time grid"
            )));
        }
    }
    MeasurementModel::new(&sim.model, &m.columns).map_err(|e| bad(e.to_string()))
}

/// A rollout: states only, or states with step Jacobians.
enum Rollout {
    States(Vec<State>),
    Jacobians(RolloutJacobians),
}

/// States `x_0 … x_steps` from `x0` without actuation.
fn simulate(sim: &mut Simulator, x0: &State, steps: usize) -> Result<Vec<State>> {
    let u = DVector::zeros(sim.model.nu());
    let mut states = Vec::with_capacity(steps + 1);
    states.push(x0.clone());
    for k in 0..steps {
        let x = states.last().expect("invariant: x0 pushed");
        let next = sim.step(x, &u).map_err(|e| e.at_step(k, x.t))?.0;
        states.push(next);
    }
    Ok(states)
}
