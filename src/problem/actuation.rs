//! `[[actuator]]` tables → actuators on the model and their [`Controller`].

use crate::control::{ActuatorControl, ControlLaw, Controller, Interpolation};
use crate::error::Result;
use crate::multibody::{JointKind, MultibodyModel};
use crate::problem::build::{count_values, Builder};
use crate::problem::schema::{ActuatorSpec, ControlSpec};

impl Builder<'_> {
    /// Declares one actuator per spec on `model` (in order, so `u_j` is `actuator[j]`) and
    /// returns the laws of those that have one, with every actuator's effort limit (N or N·m,
    /// infinite when unset).
    pub(super) fn actuators(
        &self,
        specs: &[ActuatorSpec],
        model: &mut MultibodyModel<f64>,
    ) -> Result<(Controller, Vec<f64>)> {
        let mut actuators: Vec<ActuatorControl> = Vec::with_capacity(specs.len());
        let mut driven: Vec<usize> = Vec::with_capacity(specs.len());
        let mut effort_limits = Vec::with_capacity(specs.len());
        for (i, spec) in specs.iter().enumerate() {
            let field = format!("actuator[{i}]");
            let body = model.body_index(&spec.body).ok_or_else(|| {
                self.err(
                    &format!("{field}.body"),
                    "the name of a body with a joint (not `world` or a prescribed body)",
                    format!("`{}`", spec.body),
                )
            })?;
            let joint = &model.joints[body];
            let nv = joint.kind.nv();
            if spec.dof >= nv {
                return Err(self.err(
                    &format!("{field}.dof"),
                    &format!(
                        "a velocity index below {nv} for the {} joint of `{}`",
                        joint.kind.name(),
                        spec.body
                    ),
                    spec.dof,
                ));
            }
            let v_index = joint.v_start + spec.dof;
            if driven.contains(&v_index) {
                return Err(self.err(
                    &format!("{field}.dof"),
                    "a joint velocity no other actuator drives",
                    format!("velocity {} of `{}`, already driven", spec.dof, spec.body),
                ));
            }
            // PD laws need the coordinate q_i with q̇_i = v_i, which free joints lack.
            let q_index = match (&spec.control, joint.kind) {
                (Some(ControlSpec::Pd { .. }), JointKind::Free) => {
                    return Err(self.err(
                        &format!("{field}.control"),
                        "an open-loop law for a free joint (PD needs a revolute, prismatic or planar joint)",
                        "a PD law",
                    ))
                }
                (Some(ControlSpec::Pd { .. }), _) => Some(joint.q_start + spec.dof),
                _ => None,
            };
            let effort_limit = match spec.effort_limit {
                None => f64::INFINITY,
                Some(x) => self.positive(&format!("{field}.effort_limit"), x)?,
            };
            let name = spec.name.clone().unwrap_or_else(|| {
                if nv == 1 {
                    spec.body.clone()
                } else {
                    format!("{}[{}]", spec.body, spec.dof)
                }
            });
            let actuator = model
                .add_actuator(v_index)
                .map_err(|e| self.err(&format!("{field}.dof"), "an actuated velocity", e))?;
            driven.push(v_index);
            effort_limits.push(effort_limit);
            if let Some(control) = &spec.control {
                actuators.push(ActuatorControl {
                    name,
                    actuator,
                    v_index,
                    q_index,
                    effort_limit,
                    law: self.law(&format!("{field}.control"), control)?,
                });
            }
        }
        Ok((Controller { actuators }, effort_limits))
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
                ControlLaw::Pd {
                    kp: *kp,
                    kd: *kd,
                    position: self.finite(&format!("{field}.position"), *position)?,
                    velocity: self.finite(&format!("{field}.velocity"), *velocity)?,
                }
            }
        })
    }
}
