//! What a trajectory must achieve, checked after optimizing: positions of body points at given
//! times, each within a tolerance (m). The task error is the largest distance.
#![allow(non_snake_case)]

use nalgebra::Vector3;

use crate::multibody::{forward_kinematics, MultibodyData, MultibodyModel};
use crate::step::State;

/// One check: point P of `body` at time `time` within `tolerance` of `target` on the selected
/// axes.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskCheck {
    /// Body index in `model.bodies`.
    pub body: usize,
    /// P in the body frame (m).
    pub p_BP: Vector3<f64>,
    /// Target, world (m).
    pub target: Vector3<f64>,
    /// Axes compared (1 compares, 0 ignores), world.
    pub axes: Vector3<f64>,
    /// Time of the check (s); the state nearest to it is used.
    pub time: f64,
    /// Largest distance that achieves the check (m).
    pub tolerance: f64,
}

/// A task: all checks must hold.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Task {
    /// The checks.
    pub checks: Vec<TaskCheck>,
}

/// Outcome of a task on a trajectory.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskOutcome {
    /// Distance per check (m).
    pub errors: Vec<f64>,
    /// The largest distance (m; 0 without checks).
    pub error: f64,
    /// Whether every check is within its tolerance.
    pub achieved: bool,
}

impl Task {
    /// Evaluates the checks on `states` (times `states[k].t`).
    pub fn evaluate(&self, model: &MultibodyModel<f64>, states: &[State]) -> TaskOutcome {
        let mut data = MultibodyData::new(model);
        let errors: Vec<f64> = self
            .checks
            .iter()
            .map(|c| {
                let x = states
                    .iter()
                    .min_by(|a, b| (a.t - c.time).abs().total_cmp(&(b.t - c.time).abs()))
                    .expect("invariant: a trajectory has x_0");
                forward_kinematics(model, &mut data, &x.q, &x.v);
                let X = &data.X_WB[c.body];
                (X.R * c.p_BP + X.p - c.target)
                    .component_mul(&c.axes)
                    .norm()
            })
            .collect();
        let achieved = errors
            .iter()
            .zip(&self.checks)
            .all(|(e, c)| *e <= c.tolerance);
        TaskOutcome {
            error: errors.iter().copied().fold(0.0, f64::max),
            errors,
            achieved,
        }
    }
}
