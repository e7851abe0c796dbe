//! [`SceneDescription`]: a whole scene as plain data, and [`SceneDescription::build`], the one
//! place where a description becomes a [`Simulator`], its [`Controller`] and the initial
//! [`State`].
//!
//! A description lists
//!
//! - bodies ([`BodyDescription`]), parents before their children: a body of the multibody tree
//!   with its spatial inertia, its joint to the parent (kind, placement `X_PJ`, damping) and
//!   its initial joint coordinates, or a body whose motion is prescribed;
//! - geometries ([`GeometryDescription`]), any number per body, each with its placement
//!   `X_BG`, shape, optional contact parameters and optional hydroelastic properties;
//! - actuators ([`ActuatorDescription`]): one joint velocity each, an effort limit and an
//!   optional control law;
//! - the step settings (δt, approximation, margin, solver, default contact parameters) and
//!   gravity.
//!
//! Every way into a scene produces one: the problem-file reader ([`crate::problem`]),
//! [`super::SceneBuilder`], and robot importers (URDF, MJCF). Each front-end checks what its
//! own input can get wrong, in its own words (a negative number at a line of a file, a shape
//! without a solid inertia); [`SceneDescription::build`] checks what only the whole scene can
//! show — names and the references between items, joint sizes, driven velocities — and
//! passes on what the model and simulator constructors refuse. It reports those as a
//! [`DescriptionError`] that names the item by its index, so that a file reader can point at
//! the item's line while code gets a plain [`Error`] through `?`.
//!
//! Generalized coordinates follow the model ([`crate::multibody`]): the bodies' joints in
//! order, a free joint's `q` as `[x, y, z, w, i, j, k]` (position of the body origin in the
//! parent frame, then the orientation quaternion) and its `v` as `[ω, v]` (angular, then
//! linear velocity of the body origin, parent frame).
#![allow(non_snake_case)]

use nalgebra::{DVector, Vector3};

use crate::contact::ContactParams;
use crate::control::{ActuatorControl, ControlLaw, Controller};
use crate::error::Error;
use crate::geometry::{Geometry, Shape};
use crate::hydroelastic::Hydroelastic;
use crate::math::{Pose, SpatialInertia};
use crate::multibody::model::BodyId;
use crate::multibody::{JointKind, JointSpec, MultibodyModel, PrescribedBody, PrescribedMotion};
use crate::scene::Scene;
use crate::step::{Simulator, State, StepSettings};

/// A scene as plain data: bodies, geometries, actuators, step settings and gravity. Build it
/// with [`SceneDescription::build`].
#[derive(Clone, Debug, PartialEq)]
pub struct SceneDescription {
    /// Gravity (m/s², world), default `[0, 0, −9.81]`.
    pub gravity: Vector3<f64>,
    /// δt, contact approximation, margin, solver parameters and the contact parameters of
    /// pairs whose geometries have none (default [`StepSettings::default`]).
    pub settings: StepSettings,
    /// Bodies, every parent before its children (names unique, not empty, not `world`).
    pub bodies: Vec<BodyDescription>,
    /// Collision geometries (names unique), any number per body.
    pub geometries: Vec<GeometryDescription>,
    /// Actuators, in the order of the control vector `u` (nu).
    pub actuators: Vec<ActuatorDescription>,
}

impl Default for SceneDescription {
    /// Gravity 9.81 m/s² along −z, the default step settings, nothing in the scene.
    fn default() -> Self {
        SceneDescription {
            gravity: Vector3::new(0.0, 0.0, -9.81),
            settings: StepSettings::default(),
            bodies: Vec::new(),
            geometries: Vec::new(),
            actuators: Vec::new(),
        }
    }
}

/// One body: its name and how it moves.
#[derive(Clone, Debug, PartialEq)]
pub struct BodyDescription {
    /// Unique name (not empty, not `world`), used by geometries, actuators and reports.
    pub name: String,
    /// A joint of the multibody tree, or prescribed motion.
    pub motion: BodyMotion,
}

/// How a body moves.
#[derive(Clone, Debug, PartialEq)]
pub enum BodyMotion {
    /// A body of the multibody tree, moved by the dynamics through its joint.
    Jointed(JointedBody),
    /// A kinematic body that follows `motion` from `initial_pose` whatever the contacts do
    /// (a conveyor belt, a moving wall); it has no coordinates in `q`.
    Prescribed {
        /// Pose `X_WB` at t = 0.
        initial_pose: Pose<f64>,
        /// The motion from there.
        motion: PrescribedMotion,
    },
}

/// A body of the multibody tree with its joint and initial joint state.
#[derive(Clone, Debug, PartialEq)]
pub struct JointedBody {
    /// Mass (kg), centre of mass (m, body frame) and rotational inertia about the centre of
    /// mass (kg·m², body axes).
    pub inertia: SpatialInertia<f64>,
    /// Joint kind, with its axis (unit vector, joint frame) for revolute and prismatic joints.
    pub joint: JointKind,
    /// The parent body's name; `None` for the world.
    pub parent: Option<String>,
    /// Placement of the joint frame J in the parent frame P (m).
    pub X_PJ: Pose<f64>,
    /// Viscous damping per joint velocity (nv of the joint; N·s/m or N·m·s/rad).
    pub damping: Vec<f64>,
    /// Initial joint coordinates (nq of the joint; see the module doc for a free joint).
    pub q0: Vec<f64>,
    /// Initial joint velocities (nv of the joint).
    pub v0: Vec<f64>,
}

/// A collision geometry rigidly attached to a body.
#[derive(Clone, Debug, PartialEq)]
pub struct GeometryDescription {
    /// Unique name, used in contact reports.
    pub name: String,
    /// The body it is attached to: a body's name, or `world`.
    pub body: String,
    /// Placement of the geometry frame G in the body frame B (m).
    pub X_BG: Pose<f64>,
    /// The shape, in the geometry frame.
    pub shape: Shape,
    /// Its own contact parameters, combined with the other geometry's in a pair; `None` takes
    /// the scene's default ([`StepSettings::contact`]).
    pub contact: Option<ContactParams<f64>>,
    /// Hydroelastic properties: pressure-field contact with other hydroelastic geometries;
    /// `None` for point contact.
    pub hydroelastic: Option<Hydroelastic>,
}

/// An actuator: a force or torque on one joint velocity.
#[derive(Clone, Debug, PartialEq)]
pub struct ActuatorDescription {
    /// Name in reports; `None` names it after its body, with `[dof]` appended on joints of
    /// several velocities.
    pub name: Option<String>,
    /// The body whose joint it drives.
    pub body: String,
    /// Which of the joint's velocities (below the joint's nv).
    pub dof: usize,
    /// Effort limit (N or N·m, > 0); `f64::INFINITY` for none.
    pub effort_limit: f64,
    /// The control law; `None` leaves the effort to the caller (an optimizer), zero otherwise.
    pub control: Option<ControlLaw>,
}

/// A built scene: what [`SceneDescription::build`] returns.
#[derive(Debug)]
pub struct BuiltScene {
    /// Model, geometries and step settings.
    pub simulator: Simulator,
    /// The control laws of the actuators that have one, in actuator order.
    pub controller: Controller,
    /// Effort limit of every actuator (nu; N or N·m, infinite when unset), indexed like `u`.
    pub effort_limits: Vec<f64>,
    /// The initial state: t = 0, `q` (nq) and `v` (nv) from the bodies' `q0` and `v0`.
    pub initial_state: State,
}

impl From<BuiltScene> for Scene {
    fn from(built: BuiltScene) -> Self {
        Scene::new(built.simulator, built.controller, built.initial_state)
    }
}

/// What [`SceneDescription::build`] found wrong, naming the item by its index in the
/// description (and, for messages, by name). A front-end words it for its input (the problem
/// reader names the file's field and line); [`From`] gives the crate's [`Error`] with a
/// message in terms of names.
#[non_exhaustive]
#[derive(Debug)]
pub enum DescriptionError {
    /// `geometries[geometry].body` names no body of the description.
    UnknownGeometryBody {
        /// Index of the geometry.
        geometry: usize,
        /// Its name.
        name: String,
        /// The body it names.
        body: String,
    },
    /// `bodies[body].name` is empty, `world`, or the name of an earlier body.
    BodyName {
        /// Index of the body.
        body: usize,
        /// The name.
        name: String,
    },
    /// `bodies[body]`'s parent is not a jointed body listed before it.
    UnknownParent {
        /// Index of the body.
        body: usize,
        /// Its name.
        name: String,
        /// The parent it names.
        parent: String,
    },
    /// The model refused `bodies[body]` ([`MultibodyModel::add_body`]: mass, inertia, axis,
    /// damping; [`MultibodyModel::add_prescribed`]).
    Body {
        /// Index of the body.
        body: usize,
        /// The model's error.
        source: Error,
    },
    /// `q0` or `v0` of `bodies[body]` does not have its joint's size.
    InitialStateSize {
        /// Index of the body.
        body: usize,
        /// Its name.
        name: String,
        /// `q0` or `v0`.
        vector: &'static str,
        /// The joint's nq or nv.
        expected: usize,
        /// The given length.
        found: usize,
    },
    /// An initial coordinate or velocity is not finite.
    InitialState {
        /// The first non-finite value.
        value: f64,
    },
    /// `geometries[geometry].name` is the name of an earlier geometry.
    GeometryName {
        /// Index of the geometry.
        geometry: usize,
        /// The name.
        name: String,
    },
    /// A half-space is attached to a body of the tree (it may only sit on the world or on a
    /// prescribed body).
    HalfSpaceOnMovingBody {
        /// Index of the geometry.
        geometry: usize,
        /// Its name.
        name: String,
        /// The body it is attached to.
        body: String,
    },
    /// `actuators[actuator].body` names no jointed body.
    UnknownActuatorBody {
        /// Index of the actuator.
        actuator: usize,
        /// The body it names.
        body: String,
    },
    /// `actuators[actuator].dof` is not below its joint's nv.
    DofOutOfRange {
        /// Index of the actuator.
        actuator: usize,
        /// Its body.
        body: String,
        /// The given index.
        dof: usize,
        /// The joint's nv.
        nv: usize,
        /// The joint's kind.
        joint: JointKind,
    },
    /// Another actuator already drives the same joint velocity.
    AlreadyDriven {
        /// Index of the actuator.
        actuator: usize,
        /// Its body.
        body: String,
        /// The joint velocity index.
        dof: usize,
    },
    /// A PD law on a free joint, which has no coordinate `q_i` with `q̇_i = v_i`.
    PdOnFreeJoint {
        /// Index of the actuator.
        actuator: usize,
        /// Its body.
        body: String,
    },
    /// An effort limit that is not positive (NaN, zero or negative).
    EffortLimit {
        /// Index of the actuator.
        actuator: usize,
        /// Its body.
        body: String,
        /// The limit.
        value: f64,
    },
    /// The model refused the actuator ([`MultibodyModel::add_actuator`]).
    Actuator {
        /// Index of the actuator.
        actuator: usize,
        /// The model's error.
        source: Error,
    },
    /// [`Simulator::new`] refused the model, geometries or settings.
    Simulator {
        /// The simulator's error.
        source: Error,
    },
}

impl From<DescriptionError> for Error {
    /// The error in terms of names (what [`super::SceneBuilder`] reports); the model's and
    /// the simulator's own errors pass through unchanged.
    fn from(e: DescriptionError) -> Self {
        use DescriptionError as E;
        match e {
            E::UnknownGeometryBody { name, body, .. } => Error::invalid(
                &format!("geometry `{name}` body"),
                format!("`{body}`"),
                "the name of a body of the scene, or `world`",
            ),
            E::BodyName { name, .. } => Error::invalid(
                "body.name",
                name,
                "names must be unique, not empty and not `world`",
            ),
            E::UnknownParent { name, parent, .. } => Error::invalid(
                &format!("body `{name}` parent"),
                parent,
                "add the parent body first",
            ),
            E::Body { source, .. } | E::Actuator { source, .. } | E::Simulator { source } => source,
            E::InitialStateSize {
                name,
                vector,
                expected,
                found,
                ..
            } => Error::DimensionMismatch {
                what: format!("{vector} of body `{name}`"),
                expected,
                found,
            },
            E::InitialState { value } => Error::invalid(
                "initial state",
                value,
                "positions and velocities must be finite",
            ),
            E::GeometryName { name, .. } => {
                Error::invalid("geometry.name", name, "geometry names must be unique")
            }
            E::HalfSpaceOnMovingBody { name, body, .. } => Error::invalid(
                &format!("geometry `{name}` shape"),
                format!("a half-space on moving body `{body}`"),
                "a half-space must be on the world or on a prescribed body",
            ),
            E::UnknownActuatorBody { actuator, body } => Error::invalid(
                &format!("actuator {actuator} body"),
                format!("`{body}`"),
                "the name of a body with a joint (not `world` or a prescribed body)",
            ),
            E::DofOutOfRange {
                body,
                dof,
                nv,
                joint,
                ..
            } => Error::invalid(
                &format!("body `{body}` actuator dof"),
                dof,
                &format!("a velocity index below {nv} for a {} joint", joint.name()),
            ),
            E::AlreadyDriven { body, dof, .. } => Error::invalid(
                &format!("body `{body}` actuator dof"),
                dof,
                "another actuator already drives this joint velocity",
            ),
            E::PdOnFreeJoint { body, .. } => Error::invalid(
                &format!("body `{body}` actuator"),
                "PD",
                "PD laws need a revolute or prismatic joint; drive free bodies open-loop",
            ),
            E::EffortLimit { body, value, .. } => Error::invalid(
                &format!("body `{body}` effort limit"),
                value,
                "must be positive (N or N·m)",
            ),
        }
    }
}

impl SceneDescription {
    /// The simulator, controller, effort limits and initial state of this scene.
    ///
    /// Checks, in this order: every geometry's body exists; per body, its name, its parent
    /// (listed before it), what [`MultibodyModel::add_body`] or
    /// [`MultibodyModel::add_prescribed`] checks, and the sizes of `q0` and `v0`; per
    /// geometry, a unique name and a half-space only on the world or a prescribed body; per
    /// actuator, its body, `dof`, a velocity no other actuator drives, no PD law on a free
    /// joint and a positive effort limit; finite initial state; then what [`Simulator::new`]
    /// checks (settings, shapes, contact parameters).
    ///
    /// # Errors
    /// The first [`DescriptionError`] found.
    pub fn build(&self) -> Result<BuiltScene, DescriptionError> {
        use DescriptionError as E;
        // Geometries name their bodies by name; report a wrong one before anything else.
        for (i, g) in self.geometries.iter().enumerate() {
            if g.body != "world" && !self.bodies.iter().any(|b| b.name == g.body) {
                return Err(E::UnknownGeometryBody {
                    geometry: i,
                    name: g.name.clone(),
                    body: g.body.clone(),
                });
            }
        }

        let mut model = MultibodyModel::new(self.gravity);
        let (mut q, mut v) = (Vec::new(), Vec::new());
        for (i, b) in self.bodies.iter().enumerate() {
            if b.name.is_empty() || b.name == "world" || model.find(&b.name).is_some() {
                return Err(E::BodyName {
                    body: i,
                    name: b.name.clone(),
                });
            }
            let body = match &b.motion {
                BodyMotion::Prescribed {
                    initial_pose,
                    motion,
                } => {
                    model
                        .add_prescribed(PrescribedBody {
                            name: b.name.clone(),
                            initial_pose: *initial_pose,
                            motion: motion.clone(),
                        })
                        .map_err(|source| E::Body { body: i, source })?;
                    continue;
                }
                BodyMotion::Jointed(body) => body,
            };
            let parent = match &body.parent {
                None => None,
                Some(p) => Some(model.body_index(p).ok_or_else(|| E::UnknownParent {
                    body: i,
                    name: b.name.clone(),
                    parent: p.clone(),
                })?),
            };
            let index = model
                .add_body(
                    &b.name,
                    body.inertia,
                    JointSpec {
                        kind: body.joint,
                        parent,
                        X_PJ: body.X_PJ,
                        damping: body.damping.clone(),
                    },
                )
                .map_err(|source| E::Body { body: i, source })?;
            let kind = model.joints[index].kind;
            for (vector, values, n, out) in [
                ("q0", &body.q0, kind.nq(), &mut q),
                ("v0", &body.v0, kind.nv(), &mut v),
            ] {
                if values.len() != n {
                    return Err(E::InitialStateSize {
                        body: i,
                        name: b.name.clone(),
                        vector,
                        expected: n,
                        found: values.len(),
                    });
                }
                out.extend_from_slice(values);
            }
        }

        let mut geometries = Vec::with_capacity(self.geometries.len());
        for (i, g) in self.geometries.iter().enumerate() {
            if self.geometries[..i].iter().any(|x| x.name == g.name) {
                return Err(E::GeometryName {
                    geometry: i,
                    name: g.name.clone(),
                });
            }
            let body = model.find(&g.body).ok_or_else(|| E::UnknownGeometryBody {
                geometry: i,
                name: g.name.clone(),
                body: g.body.clone(),
            })?;
            if g.shape == Shape::HalfSpace && matches!(body, BodyId::Body(_)) {
                return Err(E::HalfSpaceOnMovingBody {
                    geometry: i,
                    name: g.name.clone(),
                    body: g.body.clone(),
                });
            }
            geometries.push(Geometry {
                name: g.name.clone(),
                body,
                X_BG: g.X_BG,
                shape: g.shape.clone(),
                contact: g.contact,
                hydroelastic: g.hydroelastic,
            });
        }

        let (controller, effort_limits) = self.actuate(&mut model)?;
        if let Some(x) = q.iter().chain(&v).find(|x| !x.is_finite()) {
            return Err(E::InitialState { value: *x });
        }
        let simulator = Simulator::new(model, geometries, self.settings)
            .map_err(|source| E::Simulator { source })?;
        Ok(BuiltScene {
            simulator,
            controller,
            effort_limits,
            initial_state: State {
                t: 0.0,
                q: DVector::from_vec(q),
                v: DVector::from_vec(v),
            },
        })
    }

    /// Declares the actuators on `model` in order (so `u_j` is `actuators[j]`); returns the
    /// laws of those that have one and every actuator's effort limit.
    fn actuate(
        &self,
        model: &mut MultibodyModel<f64>,
    ) -> Result<(Controller, Vec<f64>), DescriptionError> {
        use DescriptionError as E;
        let mut controller = Controller::default();
        let mut driven: Vec<usize> = Vec::with_capacity(self.actuators.len());
        let mut effort_limits = Vec::with_capacity(self.actuators.len());
        for (i, a) in self.actuators.iter().enumerate() {
            let body = model
                .body_index(&a.body)
                .ok_or_else(|| E::UnknownActuatorBody {
                    actuator: i,
                    body: a.body.clone(),
                })?;
            let joint = &model.joints[body];
            let nv = joint.kind.nv();
            if a.dof >= nv {
                return Err(E::DofOutOfRange {
                    actuator: i,
                    body: a.body.clone(),
                    dof: a.dof,
                    nv,
                    joint: joint.kind,
                });
            }
            let v_index = joint.v_start + a.dof;
            if driven.contains(&v_index) {
                return Err(E::AlreadyDriven {
                    actuator: i,
                    body: a.body.clone(),
                    dof: a.dof,
                });
            }
            // PD laws need the coordinate q_i with q̇_i = v_i, which free joints lack.
            let q_index = match (&a.control, joint.kind) {
                (Some(ControlLaw::Pd { .. }), JointKind::Free) => {
                    return Err(E::PdOnFreeJoint {
                        actuator: i,
                        body: a.body.clone(),
                    })
                }
                (Some(ControlLaw::Pd { .. }), _) => Some(joint.q_start + a.dof),
                _ => None,
            };
            if a.effort_limit.is_nan() || a.effort_limit <= 0.0 {
                return Err(E::EffortLimit {
                    actuator: i,
                    body: a.body.clone(),
                    value: a.effort_limit,
                });
            }
            let name = a.name.clone().unwrap_or_else(|| {
                if nv == 1 {
                    a.body.clone()
                } else {
                    format!("{}[{}]", a.body, a.dof)
                }
            });
            let actuator = model.add_actuator(v_index).map_err(|source| E::Actuator {
                actuator: i,
                source,
            })?;
            driven.push(v_index);
            effort_limits.push(a.effort_limit);
            if let Some(law) = &a.control {
                controller.actuators.push(ActuatorControl {
                    name,
                    actuator,
                    v_index,
                    q_index,
                    effort_limit: a.effort_limit,
                    law: law.clone(),
                });
            }
        }
        Ok((controller, effort_limits))
    }
}
