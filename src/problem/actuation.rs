//! `[[actuator]]` tables → the scene description's actuators ([`ActuatorDescription`]) with
//! their control laws; the actuated velocities are resolved when the description is built.
//! `[[coupler]]` tables → its couplers ([`CouplerDescription`]); their bodies and joints are
//! checked when the description is built.

use crate::control::{ControlLaw, Interpolation, Sinusoid};
use crate::error::Result;
use crate::problem::build::{count_values, Builder};
use crate::problem::schema::{ActuatorSpec, ControlSpec, CouplerSpec};
use crate::scene::description::{ActuatorDescription, ActuatorKind, CouplerDescription};

impl Builder<'_> {
    /// One actuator per spec, in order (so `u_j` is `actuator[j]`), with its effort limit (N
    /// or N·m, infinite when unset) and its checked law, if any.
    pub(super) fn actuators(&self, specs: &[ActuatorSpec]) -> Result<Vec<ActuatorDescription>> {
        specs
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let field = format!("actuator[{i}]");
                let effort_limit = match spec.effort_limit {
                    None => f64::INFINITY,
                    Some(x) => self.positive(&format!("{field}.effort_limit"), x)?,
                };
                let control = match &spec.control {
                    None => None,
                    Some(law) => Some(self.law(&format!("{field}.control"), law)?),
                };
                Ok(ActuatorDescription {
                    name: spec.name.clone(),
                    body: spec.body.clone(),
                    dof: spec.dof,
                    effort_limit,
                    control,
                    kind: ActuatorKind::Effort,
                    gear: 1.0,
                    ctrl_range: None,
                })
            })
            .collect()
    }

    /// One coupler per spec, in order, with finite ratio and offset.
    pub(super) fn couplers(&self, specs: &[CouplerSpec]) -> Result<Vec<CouplerDescription>> {
        specs
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                Ok(CouplerDescription {
                    follower: spec.follower.clone(),
                    leader: spec.leader.clone(),
                    multiplier: self
                        .finite(&format!("coupler[{i}].multiplier"), spec.multiplier)?,
                    offset: self.finite(&format!("coupler[{i}].offset"), spec.offset)?,
                })
            })
            .collect()
    }

    /// A validated control law.
    fn law(&self, field: &str, spec: &ControlSpec) -> Result<ControlLaw> {
        Ok(match spec {
            ControlSpec::OpenLoop {
                times,
                values,
                interpolation,
            } => {
                if times.is_empty() || times.len() != values.len() {
                    return Err(self.err(
                        &format!("{field}.values"),
                        &format!("one value per time ({} times, at least 1)", times.len()),
                        count_values(values.len()),
                    ));
                }
                self.increasing_times(field, times)?;
                for (k, u) in values.iter().enumerate() {
                    self.finite(&format!("{field}.values[{k}]"), *u)?;
                }
                let interpolation = match interpolation.as_deref() {
                    None | Some("linear") => Interpolation::Linear,
                    Some("hold") => Interpolation::Hold,
                    Some(other) => {
                        return Err(self.err(
                            &format!("{field}.interpolation"),
                            "`linear` or `hold`",
                            format!("`{other}`"),
                        ))
                    }
                };
                ControlLaw::OpenLoop {
                    times: times.clone(),
                    values: values.clone(),
                    interpolation,
                }
            }
            ControlSpec::Pd {
                kp,
                kd,
                position,
                velocity,
                sinusoid,
            } => {
                self.gains(field, *kp, *kd)?;
                let sinusoid = match sinusoid {
                    None => None,
                    Some(s) => {
                        let field = format!("{field}.sinusoid");
                        Some(Sinusoid {
                            amplitude: self.finite(&format!("{field}.amplitude"), s.amplitude)?,
                            frequency: self.positive(&format!("{field}.frequency"), s.frequency)?,
                            phase: self.finite(&format!("{field}.phase"), s.phase)?,
                        })
                    }
                };
                ControlLaw::Pd {
                    kp: *kp,
                    kd: *kd,
                    position: self.finite(&format!("{field}.position"), *position)?,
                    velocity: self.finite(&format!("{field}.velocity"), *velocity)?,
                    sinusoid,
                }
            }
            ControlSpec::PdSchedule {
                kp,
                kd,
                times,
                positions,
                velocities,
                effort_limits,
            } => {
                self.gains(field, *kp, *kd)?;
                self.increasing_times(field, times)?;
                let n = times.len();
                let per_phase = |name: &str, values: &Option<Vec<f64>>, default: f64| {
                    let Some(values) = values else {
                        return Ok(vec![default; n]);
                    };
                    if values.len() != n {
                        return Err(self.err(
                            &format!("{field}.{name}"),
                            &format!("one value per phase ({n} times)"),
                            count_values(values.len()),
                        ));
                    }
                    values
                        .iter()
                        .enumerate()
                        .map(|(k, x)| self.finite(&format!("{field}.{name}[{k}]"), *x))
                        .collect::<Result<Vec<f64>>>()
                };
                let effort_limits = per_phase("effort_limits", effort_limits, f64::INFINITY)?;
                if effort_limits != vec![f64::INFINITY; n] {
                    for (k, x) in effort_limits.iter().enumerate() {
                        self.positive(&format!("{field}.effort_limits[{k}]"), *x)?;
                    }
                }
                ControlLaw::PdSchedule {
                    kp: *kp,
                    kd: *kd,
                    times: times.clone(),
                    positions: per_phase("positions", positions, 0.0)?,
                    velocities: per_phase("velocities", velocities, 0.0)?,
                    effort_limits,
                }
            }
        })
    }

    /// PD gains: finite and ≥ 0.
    fn gains(&self, field: &str, kp: f64, kd: f64) -> Result<()> {
        for (name, gain) in [("kp", kp), ("kd", kd)] {
            if !(gain >= 0.0 && gain.is_finite()) {
                return Err(self.err(&format!("{field}.{name}"), "a finite gain ≥ 0", gain));
            }
        }
        Ok(())
    }

    /// Sample or phase times: at least one, finite, strictly increasing.
    fn increasing_times(&self, field: &str, times: &[f64]) -> Result<()> {
        if times.is_empty() {
            return Err(self.err(&format!("{field}.times"), "at least one time", "none"));
        }
        for (k, t) in times.iter().enumerate() {
            let t = self.finite(&format!("{field}.times[{k}]"), *t)?;
            if k > 0 && t <= times[k - 1] {
                return Err(self.err(
                    &format!("{field}.times[{k}]"),
                    &format!(
                        "a time after {} s (times strictly increasing)",
                        times[k - 1]
                    ),
                    t,
                ));
            }
        }
        Ok(())
    }
}
