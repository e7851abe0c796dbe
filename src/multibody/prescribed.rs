//! Bodies whose motion is a given function of time (a conveyor belt).
//!
//! A prescribed body translates from its initial pose `X_W0` by a displacement `d(t)`; its
//! velocity `ḋ(t)` enters every contact it takes part in through the bias `b` of
//! `v_c = J v + b` (ICF Sec. III).

use nalgebra::{Matrix3, Vector3};

use crate::math::Pose;

/// How a prescribed body moves: a translation `d(t)` (m) of its initial pose.
#[derive(Clone, Debug, PartialEq)]
pub enum PrescribedMotion {
    /// `d(t) = velocity · t`.
    ConstantVelocity {
        /// Velocity, world frame (m/s).
        velocity: Vector3<f64>,
    },
    /// `d(t) = amplitude · sin(2π f t + phase) · direction`.
    Sinusoid {
        /// Unit direction, world frame.
        direction: Vector3<f64>,
        /// Amplitude (m).
        amplitude: f64,
        /// Frequency `f` (Hz).
        frequency: f64,
        /// Phase (rad).
        phase: f64,
    },
}

impl PrescribedMotion {
    /// Displacement `d(t)` (m) and velocity `ḋ(t)` (m/s), world frame.
    pub fn displacement_velocity(&self, t: f64) -> (Vector3<f64>, Vector3<f64>) {
        match self {
            PrescribedMotion::ConstantVelocity { velocity } => (velocity * t, *velocity),
            PrescribedMotion::Sinusoid {
                direction,
                amplitude,
                frequency,
                phase,
            } => {
                let w = 2.0 * std::f64::consts::PI * frequency;
                let arg = w * t + phase;
                (
                    direction * (*amplitude * arg.sin()),
                    direction * (*amplitude * w * arg.cos()),
                )
            }
        }
    }
}

/// A body with prescribed (kinematic) motion: it pushes but is not pushed.
#[derive(Clone, Debug, PartialEq)]
pub struct PrescribedBody {
    /// Unique name.
    pub name: String,
    /// Pose at `t = 0`, world frame.
    pub initial_pose: Pose<f64>,
    /// The motion.
    pub motion: PrescribedMotion,
}

impl PrescribedBody {
    /// Pose `X_WB(t)`.
    pub fn pose(&self, t: f64) -> Pose<f64> {
        let (d, _) = self.motion.displacement_velocity(t);
        Pose {
            R: self.initial_pose.R,
            p: self.initial_pose.p + d,
        }
    }

    /// Angular (always zero: prescribed bodies translate) and linear velocity at `t`, world
    /// frame (rad/s, m/s).
    pub fn velocity(&self, t: f64) -> (Vector3<f64>, Vector3<f64>) {
        (Vector3::zeros(), self.motion.displacement_velocity(t).1)
    }

    /// Rotation `R_WB` (constant).
    pub fn rotation(&self) -> Matrix3<f64> {
        self.initial_pose.R
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sinusoid_velocity_is_derivative_of_displacement() {
        let m = PrescribedMotion::Sinusoid {
            direction: Vector3::x(),
            amplitude: 0.2,
            frequency: 1.0,
            phase: 0.0,
        };
        let (t, h) = (0.37, 1e-6);
        let fd = (m.displacement_velocity(t + h).0 - m.displacement_velocity(t - h).0) / (2.0 * h);
        assert!((fd - m.displacement_velocity(t).1).norm() < 1e-8);
    }
}
