//! Multiple shooting: the measured trajectories cut into short segments, each restarted from
//! the state measured at its first sample (Bock & Plitt, "A multiple shooting algorithm for
//! direct solution of optimal control problems", IFAC 1984; for parameter estimation Bock,
//! "Recent advances in parameter identification techniques for ODE", 1983, and the
//! re-initialised variant of Voss, Timmer & Kurths, Int. J. Bifurcation Chaos 14, 2004).
//!
//! One rollout over a whole record makes the loss of a stick-slip or chaotic trajectory
//! rugged in the parameters: a wrong μ jams the Painlevé rod at another time and every later
//! sample is off by the whole jump. A segment of a few samples only sees the local dynamics,
//! so its loss is close to quadratic over a wide range. With segment `i` covering samples
//! `k_i … k_{i+1}` and started at `x̂(t_{k_i})`, the loss is
//!
//! ```text
//! L_MS(θ) = ½ Σ_i Σ_{k_i < k ≤ k_{i+1}} ‖(h(x_i(t_k; θ, x̂(t_{k_i}))) − y_k)/σ‖²,           (1)
//! ```
//!
//! continuity being asked of the residual at the segment's last sample, which is also the
//! next segment's start (continuity by re-initialisation rather than by free node states).
//!
//! **The measured state** `x̂(t_k)` is the `x` that reproduces the sample: Gauss–Newton on
//! `h(x) = ŷ_k` in the tangent coordinates of the step Jacobians, from the previous node's
//! state (the scene's initial state for a record starting at t = 0). Where a body's
//! velocities are not measured, `ŷ_k` takes them from the measured positions and orientation
//! quaternions or roll-pitch-yaw angles (`ω_W = 2 vec(q̇ ⊗ q*)`) by the slope of a least-squares line through the
//! `2w + 1` samples around `k` (the Savitzky–Golay derivative filter, Anal. Chem. 36, 1964;
//! `w` = a fifth of the segment, at least 1, the window clipped at the record's ends): noise
//! σ on positions sampled every Δt gives velocity noise `σ / (Δt √(Σ j²))`, 0.095 m/s for
//! σ = 0.1 mm, Δt = 0.1 ms and w = 5, where a central difference gives 0.7 m/s. When the measured columns do not
//! determine the state (a singular `∂h/∂x`: a body whose position is not measured), multiple
//! shooting is not available for that data ([`segmented`] says why).
//!
//! The multiple-shooting estimate is biased by the noise of `x̂` (errors in variables); it
//! serves to reach the right basin, and the reported fit is the single-shooting fit started
//! from it (`super::report`).
#![allow(non_snake_case)]

use std::f64::consts::TAU;

use nalgebra::{DMatrix, DVector, Quaternion, UnitQuaternion};

use crate::error::{Error, Result};
use crate::identify::data::{grid_position, MeasuredTrajectory};
use crate::identify::observe::{quaternion_of, MeasurementModel, Observation, Quantity};
use crate::identify::residuals::IdentificationProblem;
use crate::multibody::{forward_kinematics, MultibodyData, MultibodyModel};
use crate::step::State;

/// Smallest eigenvalue of `HᵀH` scaled to unit diagonal below which the measured columns do
/// not determine the state.
const DETERMINED: f64 = 1e-10;

/// Gauss–Newton iterations for a measured state; a rigid body's pose converges in 3-4.
const STATE_ITERATIONS: usize = 30;

/// Samples per segment chosen by [`default_segment_samples`]: about this many segments per
/// record.
pub const DEFAULT_SEGMENTS: usize = 20;

/// Segments of about [`DEFAULT_SEGMENTS`] per record, at least 2 samples each.
pub fn default_segment_samples(problem: &IdentificationProblem) -> usize {
    let longest = problem
        .trajectories
        .iter()
        .map(MeasuredTrajectory::num_samples)
        .max()
        .unwrap_or(0);
    (longest / DEFAULT_SEGMENTS).max(2)
}

/// `problem` with every record cut into segments of `samples` samples (the last one shorter),
/// each restarted from the state measured at its first sample.
///
/// # Errors
/// [`Error::InvalidParameter`] when the measured columns of a record do not determine the
/// state at a node (naming the record and time), or a record has fewer than 3 samples.
pub fn segmented(problem: &IdentificationProblem, samples: usize) -> Result<IdentificationProblem> {
    let samples = samples.max(2);
    let model = &problem.simulator.model;
    let dt = problem.simulator.settings.dt;
    let mut segments = Vec::new();
    for (j, m) in problem.trajectories.iter().enumerate() {
        if m.num_samples() < 3 {
            return Err(Error::invalid(
                "multiple shooting",
                m.source.display(),
                "a record needs at least 3 samples to be cut into segments",
            ));
        }
        let targets = state_targets(model, m, (samples / 5).max(1))?;
        let x_start = m.initial_state.as_ref().unwrap_or(&problem.initial_state);
        let mut guess = x_start.clone();
        let last = m.num_samples() - 1;
        let mut k0 = 0;
        while k0 < last {
            let k1 = (k0 + samples).min(last);
            let t0 = m.times[k0];
            let from_start = k0 == 0 && m.steps[0] == 0 && m.fractions[0] == 0.0;
            let x0 = if from_start {
                x_start.clone()
            } else {
                let x = measured_state(model, &targets, k0, &guess).ok_or_else(|| {
                    Error::invalid(
                        "multiple shooting",
                        format!("{} at t = {t0}", m.source.display()),
                        "the measured columns do not determine the state (measure every body's position and orientation)",
                    )
                })?;
                State { t: t0, ..x }
            };
            guess = x0.clone();
            let rows: Vec<usize> = (k0 + 1..=k1).collect();
            let times: Vec<f64> = rows.iter().map(|&k| m.times[k]).collect();
            let (steps, fractions) = times.iter().map(|&t| grid_position(t, t0, dt)).unzip();
            segments.push(MeasuredTrajectory {
                source: m.source.clone(),
                columns: m.columns.clone(),
                times,
                steps,
                fractions,
                values: m.values.select_rows(&rows),
                noise: m.noise,
                // The first segment keeps the record's own start, so that the record's
                // initial velocities and clock offset, when estimated, act on it.
                initial_state: if from_start {
                    m.initial_state.clone()
                } else {
                    Some(x0)
                },
                record: Some(m.record.unwrap_or(j)),
            });
            k0 = k1;
        }
    }
    let mut segmented = IdentificationProblem::new(
        &problem.name,
        crate::optimize::ilqr::clone_simulator(&problem.simulator)?,
        problem.initial_state.clone(),
        problem.parameters.clone(),
        segments,
    )?;
    segmented.loss = problem.loss;
    segmented.parallel = problem.parallel;
    Ok(segmented)
}

/// What the measured state must reproduce at every sample of a record: the measured columns
/// and, for bodies whose velocities are not measured, their finite-difference estimates.
struct StateTargets {
    measurement: MeasurementModel,
    /// ns × ny.
    values: DMatrix<f64>,
}

/// The slope at sample `k` of the least-squares line through `f(j)` at the samples `j` of the
/// window `k − w … k + w` clipped to `0 … ns − 1`, against the times `t`.
fn slope(t: &[f64], k: usize, w: usize, f: impl Fn(usize) -> f64) -> f64 {
    let (a, b) = (k.saturating_sub(w), (k + w).min(t.len() - 1));
    let n = (b - a + 1) as f64;
    let t_mean = (a..=b).map(|j| t[j]).sum::<f64>() / n;
    let f_mean = (a..=b).map(&f).sum::<f64>() / n;
    let (mut num, mut den) = (0.0, 0.0);
    for (j, tj) in t.iter().enumerate().take(b + 1).skip(a) {
        num += (tj - t_mean) * (f(j) - f_mean);
        den += (tj - t_mean).powi(2);
    }
    num / den
}

/// The columns measuring a body's orientation.
enum Orientation {
    /// `qw, qx, qy, qz`.
    Quaternion(Vec<usize>),
    /// Roll, pitch, yaw (`R = R_z(yaw) R_y(pitch) R_x(roll)`, nalgebra's Euler angles).
    Rpy(Vec<usize>),
}

/// The measured columns plus velocity columns estimated over windows of `2w + 1` samples
/// (module docs).
///
/// # Errors
/// As [`MeasurementModel::new`].
fn state_targets(
    model: &MultibodyModel<f64>,
    m: &MeasuredTrajectory,
    w: usize,
) -> Result<StateTargets> {
    let measured = MeasurementModel::new(model, &m.columns)?;
    let mut observations = measured.observations.clone();
    let mut extra: Vec<DVector<f64>> = Vec::new();
    let find = |body: usize, q: Quantity| {
        measured
            .observations
            .iter()
            .position(|o| o.body == body && o.quantity == q)
    };
    let ns = m.num_samples();
    for body in 0..model.bodies.len() {
        let has = |q: fn(usize) -> Quantity, n: usize| (0..n).all(|i| find(body, q(i)).is_some());
        let position: Option<Vec<usize>> =
            (0..3).map(|i| find(body, Quantity::Position(i))).collect();
        if let (Some(p), false) = (&position, has(Quantity::Velocity, 3)) {
            for (i, &c) in p.iter().enumerate() {
                observations.push(Observation {
                    body,
                    quantity: Quantity::Velocity(i),
                });
                extra.push(DVector::from_fn(ns, |k, _| {
                    slope(&m.times, k, w, |j| m.values[(j, c)])
                }));
            }
        }
        let quaternion: Option<Vec<usize>> = (0..4)
            .map(|i| find(body, Quantity::Orientation(i)))
            .collect();
        let rpy: Option<Vec<usize>> = (0..3).map(|i| find(body, Quantity::Rpy(i))).collect();
        let orientation = match (quaternion, rpy) {
            (Some(o), _) => Some(Orientation::Quaternion(o)),
            (None, Some(a)) => Some(Orientation::Rpy(a)),
            (None, None) => None,
        };
        if let (Some(o), false) = (&orientation, has(Quantity::AngularVelocity, 3)) {
            let quat = |k: usize| match o {
                Orientation::Quaternion(o) => Quaternion::new(
                    m.values[(k, o[0])],
                    m.values[(k, o[1])],
                    m.values[(k, o[2])],
                    m.values[(k, o[3])],
                ),
                Orientation::Rpy(a) => UnitQuaternion::from_euler_angles(
                    m.values[(k, a[0])],
                    m.values[(k, a[1])],
                    m.values[(k, a[2])],
                )
                .into_inner(),
            };
            // Each quaternion of the window on the side of the centre's (q and −q are one
            // rotation).
            let aligned = |k: usize, j: usize| {
                let (qk, qj) = (quat(k), quat(j));
                if qk.coords.dot(&qj.coords) < 0.0 {
                    -qj
                } else {
                    qj
                }
            };
            let omega: Vec<[f64; 3]> = (0..ns)
                .map(|k| {
                    let dq = Quaternion::new(
                        slope(&m.times, k, w, |j| aligned(k, j).w),
                        slope(&m.times, k, w, |j| aligned(k, j).i),
                        slope(&m.times, k, w, |j| aligned(k, j).j),
                        slope(&m.times, k, w, |j| aligned(k, j).k),
                    );
                    let omega = (dq * quat(k).conjugate()) * 2.0;
                    [omega.i, omega.j, omega.k]
                })
                .collect();
            for i in [0, 1, 2] {
                observations.push(Observation {
                    body,
                    quantity: Quantity::AngularVelocity(i),
                });
                extra.push(DVector::from_fn(ns, |k, _| omega[k][i]));
            }
        }
    }
    let nc = m.columns.len();
    let values = DMatrix::from_fn(ns, observations.len(), |k, c| {
        if c < nc {
            m.values[(k, c)]
        } else {
            extra[c - nc][k]
        }
    });
    Ok(StateTargets {
        measurement: MeasurementModel { observations },
        values,
    })
}

/// The state reproducing sample `k` of `targets`, by Gauss–Newton from `guess`; `None` when
/// the targets do not determine it or the iteration does not settle.
fn measured_state(
    model: &MultibodyModel<f64>,
    targets: &StateTargets,
    k: usize,
    guess: &State,
) -> Option<State> {
    let nv = model.nv();
    let model_dual = model.cast();
    let mut data = MultibodyData::new(model);
    let y = targets.values.row(k).transpose();
    let mut x = guess.clone();
    let mut last_step = f64::INFINITY;
    for _ in 0..STATE_ITERATIONS {
        forward_kinematics(model, &mut data, &x.q, &x.v);
        // Quaternion signs: the simulated rotation's sign that agrees with the measured one.
        let signs: Vec<f64> = (0..model.bodies.len())
            .map(|b| {
                let q = quaternion_of(&data.X_WB[b].R);
                let measured: f64 = targets
                    .measurement
                    .observations
                    .iter()
                    .zip(y.iter())
                    .filter_map(|(o, v)| match o.quantity {
                        Quantity::Orientation(i) if o.body == b => Some(q[i] * v),
                        _ => None,
                    })
                    .sum();
                if measured < 0.0 {
                    -1.0
                } else {
                    1.0
                }
            })
            .collect();
        let (h, H) = targets
            .measurement
            .values_and_jacobian(&model_dual, &x, &signs);
        let A = H.transpose() * &H;
        let d = A
            .diagonal()
            .map(|a| if a > 0.0 { 1.0 / a.sqrt() } else { 0.0 });
        let scaled = DMatrix::from_fn(2 * nv, 2 * nv, |i, j| A[(i, j)] * d[i] * d[j]);
        if d.iter().any(|&x| x == 0.0) || scaled.symmetric_eigen().eigenvalues.min() < DETERMINED {
            return None;
        }
        // Angles are compared modulo 2π, as in the residuals.
        let difference = DVector::from_fn(y.len(), |c, _| {
            let d = y[c] - h[c];
            if targets.measurement.observations[c].is_angle() {
                d - TAU * (d / TAU).round()
            } else {
                d
            }
        });
        let delta = A.cholesky()?.solve(&(H.transpose() * difference));
        x.q = model.retract(&x.q, &delta.rows(0, nv).into_owned());
        x.v += delta.rows(nv, nv);
        last_step = delta.amax() / (1.0 + x.q.amax() + x.v.amax());
        if last_step <= 1e-13 {
            break;
        }
    }
    (last_step <= 1e-8).then_some(x)
}
