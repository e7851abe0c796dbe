//! Actuation: the generalized forces `u` (nu) applied at each step, from open-loop sequences or
//! PD laws with effort limits.
//!
//! Actuator `j` drives velocity coordinate `model.actuators[j]` (column `j` of `B`, nv × nu;
//! see [`MultibodyModel::add_actuator`](crate::multibody::MultibodyModel::add_actuator)). At
//! the start of each step, from the state `(t, q0, v0)`, each actuator's law gives
//!
//! - open loop: `u_j = s(t)`, the sequence `(t_k, u_k)` interpolated linearly or held
//!   (zero-order hold), and held at its first and last values outside `[t_0, t_last]`;
//! - PD: `u_j = k_p (q_ref − q_i) + k_d (v_ref − v_i)` on the joint coordinate `q_i` that goes
//!   with velocity `v_i` (revolute, prismatic and planar joints, where `q̇ = v`), towards a
//!   fixed target or one that moves by a sinusoid ([`Sinusoid`]: `q_ref(t) = q̄ + A sin(2πft + φ)`,
//!   `v_ref(t) = v̄ + 2πf A cos(2πft + φ)`; two of them at a quarter period apart on two
//!   perpendicular slides trace a circle);
//! - scheduled PD: the same law with the targets `q_ref`, `v_ref` and a limit of phase `k`
//!   from its start `t_k` until `t_{k+1}` (a motor's operating phases: ICF ext. Sec. XII-C
//!   loads the BarrettHand's clutch at one effort limit and drives it back at another),
//!
//! then clamps it to `[−u_max, u_max]` (and to the phase's limit). The PD law is explicit: it uses the state at the start
//! of the step. It is stable when `k_d δt` is small against the joint's effective inertia and
//! `k_p δt² ≪ k_d δt`; for stiffer gains, reduce δt.

use nalgebra::DVector;

use crate::step::State;

/// How an open-loop sequence is read between its samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Interpolation {
    /// Straight lines between samples (default).
    #[default]
    Linear,
    /// Each sample holds until the next one (zero-order hold).
    Hold,
}

/// The law of one actuator.
#[derive(Clone, Debug, PartialEq)]
pub enum ControlLaw {
    /// A prescribed effort sequence.
    OpenLoop {
        /// Sample times (s), strictly increasing, at least one.
        times: Vec<f64>,
        /// Efforts at those times (N or N·m), as many as `times`.
        values: Vec<f64>,
        /// Reading between samples.
        interpolation: Interpolation,
    },
    /// A PD law towards a fixed target, or a target moving by a sinusoid.
    Pd {
        /// Proportional gain `k_p` (N/m or N·m/rad), ≥ 0.
        kp: f64,
        /// Derivative gain `k_d` (N·s/m or N·m·s/rad), ≥ 0.
        kd: f64,
        /// Target coordinate `q_ref` (m or rad).
        position: f64,
        /// Target velocity `v_ref` (m/s or rad/s).
        velocity: f64,
        /// A sinusoid added to the target (`None`: the target is fixed).
        sinusoid: Option<Sinusoid>,
    },
    /// A PD law whose targets and effort limit switch at given times: phase `k` holds from
    /// `times[k]` until `times[k + 1]`, the first phase also before `times[0]`.
    PdSchedule {
        /// Proportional gain `k_p` (N/m or N·m/rad), ≥ 0.
        kp: f64,
        /// Derivative gain `k_d` (N·s/m or N·m·s/rad), ≥ 0.
        kd: f64,
        /// Start of each phase (s), strictly increasing, at least one.
        times: Vec<f64>,
        /// Target coordinate of each phase (m or rad), as many as `times`.
        positions: Vec<f64>,
        /// Target velocity of each phase (m/s or rad/s), as many as `times`.
        velocities: Vec<f64>,
        /// Effort limit of each phase (N or N·m, > 0; infinite for the actuator's own), as
        /// many as `times`.
        effort_limits: Vec<f64>,
    },
}

/// A sinusoidal motion `A sin(2πft + φ)` of a PD law's target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sinusoid {
    /// Amplitude `A` (m or rad).
    pub amplitude: f64,
    /// Frequency `f` (Hz).
    pub frequency: f64,
    /// Phase `φ` (rad).
    pub phase: f64,
}

impl Sinusoid {
    /// Displacement `A sin(2πft + φ)` and its rate `2πf A cos(2πft + φ)` at `t` (s).
    pub fn at(&self, t: f64) -> (f64, f64) {
        let w = 2.0 * std::f64::consts::PI * self.frequency;
        let arg = w * t + self.phase;
        (self.amplitude * arg.sin(), self.amplitude * w * arg.cos())
    }
}

impl ControlLaw {
    /// A PD law towards the coordinate `position` (m or rad) at rest.
    pub fn pd(kp: f64, kd: f64, position: f64) -> Self {
        ControlLaw::Pd {
            kp,
            kd,
            position,
            velocity: 0.0,
            sinusoid: None,
        }
    }
}

/// One actuator's law and limit.
#[derive(Clone, Debug, PartialEq)]
pub struct ActuatorControl {
    /// Name shown in reports (the file's `name`, or `BODY` / `BODY[dof]`).
    pub name: String,
    /// Index `j` of the actuator (column of `B`, entry of `u`).
    pub actuator: usize,
    /// Velocity coordinate `i` it drives (`model.actuators[j]`).
    pub v_index: usize,
    /// Position coordinate that goes with it; `Some` for PD laws.
    pub q_index: Option<usize>,
    /// Effort limit `u_max` (N or N·m), > 0; `f64::INFINITY` for none.
    pub effort_limit: f64,
    /// The law.
    pub law: ControlLaw,
}

/// The laws of all actuators; actuators it does not list get `u_j = 0`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Controller {
    /// One entry per controlled actuator.
    pub actuators: Vec<ActuatorControl>,
}

impl Controller {
    /// The efforts `u` (nu) at `state`, clamped to each actuator's limit.
    ///
    /// # Panics
    /// If an actuator index is `≥ nu`, or a coordinate index is outside `state` (a controller
    /// built for another model).
    #[track_caller]
    pub fn effort(&self, state: &State, nu: usize) -> DVector<f64> {
        let mut u = DVector::zeros(nu);
        for a in &self.actuators {
            let mut limit = a.effort_limit;
            // u = k_p (q_ref − q) + k_d (v_ref − v) on the actuator's joint.
            let pd = |kp: f64, kd: f64, q_ref: f64, v_ref: f64| {
                let q = a.q_index.map_or(0.0, |i| state.q[i]);
                kp * (q_ref - q) + kd * (v_ref - state.v[a.v_index])
            };
            let raw = match &a.law {
                ControlLaw::OpenLoop {
                    times,
                    values,
                    interpolation,
                } => sample(times, values, *interpolation, state.t),
                ControlLaw::Pd {
                    kp,
                    kd,
                    position,
                    velocity,
                    sinusoid,
                } => {
                    let (dq, dv) = sinusoid.map_or((0.0, 0.0), |s| s.at(state.t));
                    pd(*kp, *kd, position + dq, velocity + dv)
                }
                ControlLaw::PdSchedule {
                    kp,
                    kd,
                    times,
                    positions,
                    velocities,
                    effort_limits,
                } => {
                    // The phase that started last at or before t (the first before it).
                    let k = times.partition_point(|&tk| tk <= state.t).saturating_sub(1);
                    limit = limit.min(effort_limits[k]);
                    pd(*kp, *kd, positions[k], velocities[k])
                }
            };
            u[a.actuator] = raw.clamp(-limit, limit);
        }
        u
    }
}

/// The sequence `(times, values)` read at `t`; held constant outside its time span.
fn sample(times: &[f64], values: &[f64], interpolation: Interpolation, t: f64) -> f64 {
    // Index of the last sample at or before t (0 before the first).
    let k = times.partition_point(|&tk| tk <= t).saturating_sub(1);
    match (interpolation, times.get(k + 1)) {
        (Interpolation::Linear, Some(&t1)) if t >= times[k] => {
            let s = (t - times[k]) / (t1 - times[k]);
            values[k] + s * (values[k + 1] - values[k])
        }
        _ => values.get(k).copied().unwrap_or(0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(t: f64, q: f64, v: f64) -> State {
        State {
            t,
            q: DVector::from_element(1, q),
            v: DVector::from_element(1, v),
        }
    }

    fn open_loop(interpolation: Interpolation) -> Controller {
        Controller {
            actuators: vec![ActuatorControl {
                name: "a".into(),
                actuator: 0,
                v_index: 0,
                q_index: None,
                effort_limit: 5.0,
                law: ControlLaw::OpenLoop {
                    times: vec![0.0, 1.0, 2.0],
                    values: vec![0.0, 2.0, 10.0],
                    interpolation,
                },
            }],
        }
    }

    #[test]
    fn open_loop_interpolates_holds_and_clamps() {
        let linear = open_loop(Interpolation::Linear);
        let hold = open_loop(Interpolation::Hold);
        let at = |c: &Controller, t| c.effort(&state(t, 0.0, 0.0), 1)[0];
        assert_eq!(at(&linear, -1.0), 0.0);
        assert_eq!(at(&linear, 0.5), 1.0);
        assert_eq!(at(&hold, 0.5), 0.0);
        assert_eq!(at(&hold, 1.5), 2.0);
        // 2 + 0.5·8 = 6, clamped to the limit 5.
        assert_eq!(at(&linear, 1.5), 5.0);
        assert_eq!(at(&linear, 3.0), 5.0);
    }

    #[test]
    fn pd_pulls_towards_the_target_within_the_limit() {
        let pd = Controller {
            actuators: vec![ActuatorControl {
                name: "a".into(),
                actuator: 0,
                v_index: 0,
                q_index: Some(0),
                effort_limit: 3.0,
                law: ControlLaw::Pd {
                    kp: 10.0,
                    kd: 1.0,
                    position: 0.5,
                    velocity: 0.0,
                    sinusoid: None,
                },
            }],
        };
        assert_eq!(pd.effort(&state(0.0, 0.25, 0.5), 1)[0], 2.0);
        assert_eq!(pd.effort(&state(0.0, 0.0, 0.0), 1)[0], 3.0);
        assert_eq!(pd.effort(&state(0.0, 1.0, 0.0), 1)[0], -3.0);
    }

    /// Two slides whose targets are sinusoids a quarter period apart: the targets trace a
    /// circle of radius A at speed 2πfA, and the law pushes towards the moving target.
    #[test]
    fn a_sinusoidal_target_moves_the_pd_law() {
        let s = Sinusoid {
            amplitude: 0.03,
            frequency: 2.0,
            phase: std::f64::consts::FRAC_PI_2,
        };
        let c = Sinusoid { phase: 0.0, ..s };
        let w = 2.0 * std::f64::consts::PI * 2.0;
        for t in [0.0, 0.1, 0.37] {
            let ((x, vx), (y, vy)) = (s.at(t), c.at(t));
            assert!(((x * x + y * y).sqrt() - 0.03).abs() < 1e-15);
            assert!(((vx * vx + vy * vy).sqrt() - 0.03 * w).abs() < 1e-14);
            // The rate is the derivative of the displacement.
            let h = 1e-6;
            assert!(((s.at(t + h).0 - s.at(t - h).0) / (2.0 * h) - vx).abs() < 1e-8);
        }
        let pd = Controller {
            actuators: vec![ActuatorControl {
                name: "a".into(),
                actuator: 0,
                v_index: 0,
                q_index: Some(0),
                effort_limit: f64::INFINITY,
                law: ControlLaw::Pd {
                    kp: 100.0,
                    kd: 10.0,
                    position: 0.01,
                    velocity: 0.0,
                    sinusoid: Some(s),
                },
            }],
        };
        // At t = 0 the target is 0.01 + 0.03 at rest: 100·(0.04 − 0.02) + 10·(0 − 0.5).
        assert!((pd.effort(&state(0.0, 0.02, 0.5), 1)[0] - (2.0 - 5.0)).abs() < 1e-12);
        // A quarter period later it is 0.01 moving at −2πf·0.03.
        let u = pd.effort(&state(0.125, 0.01, 0.0), 1)[0];
        assert!((u - 10.0 * (-w * 0.03)).abs() < 1e-9, "{u}");
    }

    #[test]
    fn scheduled_pd_switches_targets_and_limits_at_phase_starts() {
        let motor = Controller {
            actuators: vec![ActuatorControl {
                name: "motor".into(),
                actuator: 0,
                v_index: 0,
                q_index: Some(0),
                effort_limit: 0.0066,
                law: ControlLaw::PdSchedule {
                    kp: 0.0,
                    kd: 1e-4,
                    times: vec![0.0, 0.2],
                    positions: vec![0.0, 0.0],
                    velocities: vec![200.0, -200.0],
                    effort_limits: vec![0.006, f64::INFINITY],
                },
            }],
        };
        let at = |t, v| motor.effort(&state(t, 0.0, v), 1)[0];
        // Loading: 1e-4 · 200 = 0.02, clamped to the phase's 0.006 (before t0 too).
        assert_eq!(at(-1.0, 0.0), 0.006);
        assert_eq!(at(0.1, 0.0), 0.006);
        // Near the target the law is linear: 1e-4 · (200 − 190) = 1e-3.
        assert!((at(0.1, 190.0) - 1e-3).abs() < 1e-15);
        // Driving, from t = 0.2 on: towards −200 rad/s within the actuator's own 0.0066.
        assert_eq!(at(0.2, 0.0), -0.0066);
        assert!((at(0.3, -150.0) + 0.005).abs() < 1e-15);
    }
}
