//! `[[actuator]]` tables → the scene description's actuators ([`ActuatorDescription`]) with
//! their control laws; the actuated velocities are resolved when the description is built.

use crate::control::{ControlLaw, Interpolation, Sinusoid};
use crate::error::Result;
use crate::problem::build::{count_values, Builder};
use crate::problem::schema::{ActuatorSpec, ControlSpec};
use crate::scene::description::{ActuatorDescription, ActuatorKind};

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
                for (name, gain) in [("kp", kp), ("kd", kd)] {
                    if !(*gain >= 0.0 && gain.is_finite()) {
                        return Err(self.err(
                            &format!("{field}.{name}"),
                            "a finite gain ≥ 0",
                            gain,
                        ));
                    }
                }
                let sinusoid = match sinusoid {
                    None => None,
                    Some(s) => {
                        let field = format!("{field}.sinusoid");
                        Some(Sinusoid {
                            amplitude: self.finite(&format!("{field}.amplitude"), s.amplitude)?,
                            frequency: self
                                .positive(&format!("{field}.frequency"), s.frequency)?,
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
        })
    }
}
