//! Reports of a rollout: world-frame body states, CSV tables and figures.
//!
//! A [`Recording`] holds generalized states `(q, v)` (nq, nv) at `t = 0, δt, 2δt, …` and one
//! [`StepReport`](crate::step::StepReport) per step. This module turns them into what a person
//! reads:
//!
//! - [`body_states`]: for every body and every recorded state, the pose `X_WB` and the
//!   velocities `(ω_WB, v_WBo)` in the world frame, from forward kinematics for tree bodies
//!   and from the prescribed motion for prescribed bodies;
//! - [`csv`]: `trajectory.csv`, `contacts.csv` and `stats.csv`;
//! - `plot`: PNG (and SVG) figures of contact velocities, contact forces, positions,
//!   velocities and solver cost, after ICF Figs. 2, 5 and 14;
//! - `animate`: an animated GIF of the scene in a chosen projection, with contact forces;
//! - [`replay`]: a 3-D replay that opens in a web browser (three.js), with contact forces,
//!   pressure-field patches and an optimizer's targets.
//!
//! Bodies are always listed tree bodies first (`model.bodies`, in order), then prescribed
//! bodies (`model.prescribed`, in order); [`body_names`] gives that order.
//!
//! Files: `csv.rs` (the three tables), `projection.rs` (the view plane of figures and
//! animations, [`Projection`]), `plot.rs` (the figures), `animate.rs` (the GIF),
//! `fit.rs` (the files of an identification run: measured vs simulated, iteration history,
//! from plain data the caller takes from its identification report),
//! `optimization.rs` (the figures of a trajectory optimization), `replay.rs` (the 3-D replay's
//! recording files and page; no dependency beyond `serde_json`). plotters is used in `plot.rs`,
//! `animate.rs`, `fit.rs` and `optimization.rs` only, and these four are compiled with the
//! `plot` feature (on by default); `csv.rs`, `projection.rs`, `replay.rs` and [`body_states`]
//! always are.
#![allow(non_snake_case)]

#[cfg(feature = "plot")]
pub mod animate;
pub mod csv;
#[cfg(feature = "plot")]
pub mod fit;
#[cfg(feature = "plot")]
pub mod optimization;
#[cfg(feature = "plot")]
pub mod plot;
pub(crate) mod projection;
pub mod replay;

pub use projection::Projection;

use nalgebra::{UnitQuaternion, Vector3};

use crate::multibody::kinematics::body_velocity_world;
use crate::multibody::{forward_kinematics, MultibodyData, MultibodyModel};
use crate::simulate::Recording;
use crate::step::State;

/// Pose and velocity of one body at one instant, world frame W.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyState {
    /// Position `p_WBo` of the body frame origin (m).
    pub p_WB: Vector3<f64>,
    /// Orientation `R_WB` as a unit quaternion. Along a trajectory its sign is kept continuous
    /// (`q` and `−q` are the same rotation): each quaternion has a non-negative dot product with
    /// the one before it, and the first has `w ≥ 0`.
    pub q_WB: UnitQuaternion<f64>,
    /// Velocity `v_WBo` of the body frame origin (m/s).
    pub v_WB: Vector3<f64>,
    /// Angular velocity `ω_WB` (rad/s).
    pub w_WB: Vector3<f64>,
}

/// Names of all bodies: tree bodies first, then prescribed bodies (nb + n_prescribed).
pub fn body_names(model: &MultibodyModel<f64>) -> Vec<&str> {
    model
        .bodies
        .iter()
        .map(|b| b.name.as_str())
        .chain(model.prescribed.iter().map(|b| b.name.as_str()))
        .collect()
}

/// World-frame states of every body at every recorded state: `out[k][b]` is body `b` (in the
/// order of [`body_names`]) at `recording.states[k]` (steps + 1 rows of nb + n_prescribed).
pub fn body_states(recording: &Recording, model: &MultibodyModel<f64>) -> Vec<Vec<BodyState>> {
    let mut tracker = BodyStateTracker::new(model);
    recording
        .states
        .iter()
        .map(|state| tracker.next(model, state))
        .collect()
}

/// [`body_states`] one state at a time, for tables written while a rollout runs: keeps the
/// kinematics data and the previous quaternions that make the signs continuous.
#[derive(Debug)]
pub struct BodyStateTracker {
    data: MultibodyData<f64>,
    previous: Vec<UnitQuaternion<f64>>,
}

impl BodyStateTracker {
    /// A tracker before the first state of a trajectory of `model`.
    pub fn new(model: &MultibodyModel<f64>) -> Self {
        let num_bodies = model.bodies.len() + model.prescribed.len();
        BodyStateTracker {
            data: MultibodyData::new(model),
            // The identity as the "previous" quaternion makes the first row's w non-negative.
            previous: vec![UnitQuaternion::identity(); num_bodies],
        }
    }

    /// The world-frame states of every body of `model` (the tracker's; in the order of
    /// [`body_names`]) at `state`, the next state of the trajectory.
    pub fn next(&mut self, model: &MultibodyModel<f64>, state: &State) -> Vec<BodyState> {
        forward_kinematics(model, &mut self.data, &state.q, &state.v);
        let data = &self.data;
        let tree = (0..model.bodies.len()).map(|i| {
            let (w_WB, v_WB) = body_velocity_world(data, i);
            (data.X_WB[i], w_WB, v_WB)
        });
        let prescribed = model.prescribed.iter().map(|b| {
            let (w_WB, v_WB) = b.velocity(state.t);
            (b.pose(state.t), w_WB, v_WB)
        });
        tree.chain(prescribed)
            .zip(self.previous.iter_mut())
            .map(|((X_WB, w_WB, v_WB), previous)| {
                let mut q_WB = UnitQuaternion::from_matrix(&X_WB.R);
                if q_WB.coords.dot(&previous.coords) < 0.0 {
                    q_WB = UnitQuaternion::new_unchecked(-q_WB.into_inner());
                }
                *previous = q_WB;
                BodyState {
                    p_WB: X_WB.p,
                    q_WB,
                    v_WB,
                    w_WB,
                }
            })
            .collect()
    }
}

/// The 90th percentile of the norms of all contact forces of the rollout (point contacts and
/// patch totals, N); 0 without contacts: the force drawn one reference length long, in the
/// GIF (`animate`) and the 3-D replay (`replay`) alike.
pub(crate) fn reference_force(recording: &Recording) -> f64 {
    reference_force_of(recording.reports.iter().flat_map(|r| {
        r.contacts
            .iter()
            .filter(|c| c.polygon.is_none())
            .map(|c| c.force.norm())
            .chain(r.patches.iter().map(|p| p.force.norm()))
    }))
}

/// The 90th percentile of the positive `norms` (N); 0 without any.
pub(crate) fn reference_force_of(norms: impl Iterator<Item = f64>) -> f64 {
    let mut forces: Vec<f64> = norms.filter(|f| *f > 0.0).collect();
    if forces.is_empty() {
        return 0.0;
    }
    forces.sort_by(f64::total_cmp);
    forces[(forces.len() - 1) * 9 / 10]
}
