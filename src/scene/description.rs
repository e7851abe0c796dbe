//! [`SceneDescription`]: a whole scene as plain data, and [`SceneDescription::build`], the one
//! place where a description becomes a [`Simulator`], its [`Controller`] and the initial
//! [`State`].
//!
//! A description lists
//!
//! - bodies ([`BodyDescription`]), parents before their children: a body of the multibody tree
//!   with its spatial inertia, its joint to the parent (kind, placement `X_PJ`, damping,
//!   armature, spring, limits, friction loss) and its initial joint coordinates, or a body
//!   whose motion is prescribed;
//! - geometries ([`GeometryDescription`]), any number per body, each with its placement
//!   `X_BG`, shape, optional contact parameters, optional hydroelastic properties and an
//!   optional collision filter;
//! - actuators ([`ActuatorDescription`]): one joint velocity each, an effort limit and an
//!   optional control law, with a kind (effort or position servo), gear and control range;
//! - couplers ([`CouplerDescription`]) between one-coordinate joints;
//! - the step settings (δt, approximation, margin, solver, default contact parameters) and
//!   gravity;
//! - body pairs excluded from collision ([`SceneDescription::excluded_collisions`]: a
//!   robot's parent and child links) and per-geometry collision filters
//!   ([`CollisionFilter`]), applied by the collision query;
//! - joint limits ([`JointLimits`]), Coulomb joint friction ([`JointedBody::friction`]) and
//!   couplers between joints ([`CouplerDescription`]: URDF mimic joints, MJCF joint
//!   equalities), as the robot importers read them. [`SceneDescription::build`] puts them
//!   into the model ([`crate::multibody::constraints`]), and the step makes them rows of its
//!   convex problem (SAP constraints, [`crate::step::constraints`]). Joint velocity limits
//!   are data only (MuJoCo and Drake do not enforce them either);
//!   [`SceneDescription::constraints_not_in_step`] lists them, so that front-ends say so
//!   instead of dropping them silently.
//!
//! Every way into a scene produces one: the problem-file reader ([`crate::problem`]),
//! [`super::SceneBuilder`], and robot importers (URDF, MJCF). Each front-end checks what its
//! own input can get wrong, in its own words (a negative number at a line of a file, a shape
//! without a solid inertia); [`SceneDescription::build`] checks what only the whole scene can
//! show — names and the references between items, joint sizes, driven velocities — and
//! passes on what the model and simulator constructors refuse. It reports those as a
//! [`DescriptionError`] that names the item by its index, so that a file reader can point at
//! the item's line while code gets a plain [`crate::error::Error`] through `?`.
//!
//! Actuator gears and control ranges become the model's transmissions (the input clamped to
//! its range, times the gear), position servos implicit PD rows of the step. Armature and
//! joint springs are applied (the multibody model's mass matrix and free motion).
//!
//! Generalized coordinates follow the model ([`crate::multibody`]): the bodies' joints in
//! order, a free joint's `q` as `[x, y, z, w, i, j, k]` (position of the body origin in the
//! parent frame, then the orientation quaternion) and its `v` as `[ω, v]` (angular, then
//! linear velocity of the body origin, parent frame).
#![allow(non_snake_case)]

use nalgebra::{DVector, Vector3};

pub use crate::collision::CollisionFilter;
use crate::collision::Geometry;
use crate::contact::ContactParams;
use crate::control::{ActuatorControl, ControlLaw, Controller};
use crate::geometry::Shape;
use crate::hydroelastic::Hydroelastic;
use crate::math::{Pose, SpatialInertia};
use crate::multibody::model::BodyId;
use crate::multibody::{
    JointKind, JointSpec, JointSpring, MultibodyModel, PrescribedBody, PrescribedMotion,
    Transmission, TransmissionKind,
};
pub use crate::scene::error::DescriptionError;
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
    /// Couplers `q_follower = multiplier · q_leader + offset` between one-velocity joints
    /// (URDF mimic joints, MJCF joint equalities): holonomic rows of the step.
    pub couplers: Vec<CouplerDescription>,
    /// Pairs of bodies (by name) whose geometries must not touch each other: a robot's
    /// parent and child links, whose collision meshes overlap at the joint (MuJoCo excludes
    /// parent–child pairs, Drake adjacent bodies; MJCF `<contact><exclude>`). Each name is a
    /// body's or `world`.
    pub excluded_collisions: Vec<(String, String)>,
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
            couplers: Vec::new(),
            excluded_collisions: Vec::new(),
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
// Plain data made once per scene; boxing the jointed variant would only burden every
// front-end that writes one.
#[allow(clippy::large_enum_variant)]
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
    /// The joint's name in the model file it came from (a URDF `<joint name>`); `None` for
    /// joints that have no name of their own (they are known by their body's name).
    pub joint_name: Option<String>,
    /// Position, velocity and effort limits of a one-velocity joint; `None` for none. The
    /// position limits are unilateral rows of the step; the velocity limit is data only.
    pub limits: Option<JointLimits>,
    /// Coulomb (dry) friction per joint velocity (nv of the joint, or empty for none; N or
    /// N·m), the URDF `<dynamics friction>`: a friction row of the step per nonzero entry.
    pub friction: Vec<f64>,
    /// Reflected rotor inertia per joint velocity (nv of the joint; kg or kg·m²), added to the
    /// diagonal of the mass matrix.
    pub armature: Vec<f64>,
    /// A linear spring `τ = −k (q − q_ref)` on a revolute or prismatic joint; `None` for none.
    pub spring: Option<JointSpring<f64>>,
}

/// Limits of a one-velocity joint (revolute or prismatic), as URDF `<limit>` and MJCF
/// `range` state them. Units are the joint's: rad and rad/s and N·m for a revolute joint,
/// m and m/s and N for a prismatic one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointLimits {
    /// Lowest position (rad or m); `f64::NEG_INFINITY` for none.
    pub lower: f64,
    /// Highest position (rad or m, ≥ `lower`); `f64::INFINITY` for none.
    pub upper: f64,
    /// Largest speed |v| (rad/s or m/s, > 0); `f64::INFINITY` for none.
    pub velocity: f64,
    /// Largest effort |τ| (N·m or N, > 0); `f64::INFINITY` for none. An importer that makes
    /// actuators for the joint gives them this effort limit.
    pub effort: f64,
}

impl JointLimits {
    /// No limit at all.
    pub const NONE: JointLimits = JointLimits {
        lower: f64::NEG_INFINITY,
        upper: f64::INFINITY,
        velocity: f64::INFINITY,
        effort: f64::INFINITY,
    };

    /// Whether the position is bounded on either side.
    pub fn has_position_limit(&self) -> bool {
        self.lower.is_finite() || self.upper.is_finite()
    }
}

impl Default for JointLimits {
    /// No limit at all: [`JointLimits::NONE`].
    fn default() -> Self {
        JointLimits::NONE
    }
}

/// A coupler between two one-velocity joints: `q_follower = multiplier · q_leader + offset`
/// (a URDF mimic joint; Drake's coupler constraint, SAP Sec. V-B).
#[derive(Clone, Debug, PartialEq)]
pub struct CouplerDescription {
    /// The body whose joint follows.
    pub follower: String,
    /// The body whose joint leads.
    pub leader: String,
    /// Gear ratio (dimensionless for joints of one kind; m/rad or rad/m across kinds).
    pub multiplier: f64,
    /// Offset (rad or m, the follower's unit).
    pub offset: f64,
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
    /// Which other geometries it may touch ([`CollisionFilter`], MuJoCo's bit masks); `None`
    /// touches all.
    pub filter: Option<CollisionFilter>,
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
    /// What the actuator is: an effort source (the default) or a position servo.
    pub kind: ActuatorKind,
    /// Transmission ratio: the joint effort is `gear` times the actuator's force (MJCF
    /// `gear`), default 1.
    pub gear: f64,
    /// Range of the control input `u` (MJCF `ctrlrange`); `None` for unbounded.
    pub ctrl_range: Option<[f64; 2]>,
}

/// The kind of an actuator.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum ActuatorKind {
    /// The control input is an effort, times `gear`.
    #[default]
    Effort,
    /// A position servo, MJCF's `position` actuator: the force
    /// `kp (u − gear·q) − kv gear·v` with `u` the target, times `gear` on the joint, limited
    /// to the actuator's effort limit; an implicit PD row of the convex step
    /// ([`crate::step::constraints`]), stable at any gain and δt.
    Servo {
        /// Position gain (N/m or N·m/rad).
        kp: f64,
        /// Velocity gain (N·s/m or N·m·s/rad).
        kv: f64,
    },
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

impl SceneDescription {
    /// Adds the ground plane a robot stands on: the half-space z ≤ 0 on the world, called
    /// `ground`, with the scene's default contact parameters. Adds nothing and returns false
    /// when a geometry is already called `ground`.
    pub fn add_ground(&mut self) -> bool {
        if self.geometries.iter().any(|g| g.name == "ground") {
            return false;
        }
        self.geometries.push(GeometryDescription {
            name: "ground".into(),
            body: "world".into(),
            X_BG: Pose::identity(),
            shape: Shape::HalfSpace,
            contact: None,
            hydroelastic: None,
            filter: None,
        });
        true
    }

    /// What [`SceneDescription::build`] leaves out of the step (joint velocity limits), with
    /// counts and the first names; empty when the step models the whole description.
    /// Front-ends print it so that nothing the model file states is dropped silently.
    pub fn constraints_not_in_step(&self) -> Vec<String> {
        let velocity: Vec<&str> = self
            .bodies
            .iter()
            .filter(|b| match &b.motion {
                BodyMotion::Jointed(j) => j.limits.is_some_and(|l| l.velocity.is_finite()),
                BodyMotion::Prescribed { .. } => false,
            })
            .map(|b| b.name.as_str())
            .collect();
        if velocity.is_empty() {
            return Vec::new();
        }
        let shown: Vec<&str> = velocity.iter().take(3).copied().collect();
        let more = if velocity.len() > 3 { ", …" } else { "" };
        vec![format!(
            "{} joint velocity limits ({}{more})",
            velocity.len(),
            shown.join(", ")
        )]
    }

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
    /// Joint position limits, Coulomb joint friction, couplers and actuator transmissions go
    /// into the model (what [`MultibodyModel::add_limit`], [`MultibodyModel::add_friction`],
    /// [`MultibodyModel::add_coupler`] and [`MultibodyModel::set_transmission`] refuse is
    /// reported); joint velocity limits are left out
    /// ([`SceneDescription::constraints_not_in_step`]).
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

        if !self.gravity.iter().all(|g| g.is_finite()) {
            return Err(E::Simulator {
                source: Box::new(crate::error::Error::invalid(
                    "gravity",
                    format!("{:?}", self.gravity.as_slice()),
                    "finite components (m/s²)",
                )),
            });
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
                        .map_err(|e| E::Body {
                            body: i,
                            source: Box::new(e),
                        })?;
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
                        armature: body.armature.clone(),
                        spring: body.spring,
                    },
                )
                .map_err(|e| E::Body {
                    body: i,
                    source: Box::new(e),
                })?;
            let in_model = |e| E::Body {
                body: i,
                source: Box::new(e),
            };
            if let Some(l) = body.limits.filter(JointLimits::has_position_limit) {
                model.add_limit(index, l.lower, l.upper).map_err(in_model)?;
            }
            let v_start = model.joints[index].v_start;
            for (m, &f) in body.friction.iter().enumerate() {
                if f != 0.0 {
                    model.add_friction(v_start + m, f).map_err(in_model)?;
                }
            }
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
                filter: g.filter,
                mesh: None,
            });
        }

        for (i, c) in self.couplers.iter().enumerate() {
            let coupler = |e| E::Coupler {
                coupler: i,
                source: Box::new(e),
            };
            let body = |name: &str| {
                model.body_index(name).ok_or_else(|| {
                    coupler(crate::error::Error::invalid(
                        "coupler body",
                        format!("`{name}`"),
                        "the name of a jointed body of the scene",
                    ))
                })
            };
            let (follower, leader) = (body(&c.follower)?, body(&c.leader)?);
            model
                .add_coupler(follower, leader, c.multiplier, c.offset)
                .map_err(coupler)?;
        }
        let (controller, effort_limits) = self.actuate(&mut model)?;
        if let Some(x) = q.iter().chain(&v).find(|x| !x.is_finite()) {
            return Err(E::InitialState { value: *x });
        }
        let excluded = self.excluded_bodies(&model)?;
        let mut simulator =
            Simulator::new(model, geometries, self.settings).map_err(|e| E::Simulator {
                source: Box::new(e),
            })?;
        for (a, b) in excluded {
            simulator.exclude_collisions(a, b);
        }
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

    /// The bodies of [`SceneDescription::excluded_collisions`], by name.
    fn excluded_bodies(
        &self,
        model: &MultibodyModel<f64>,
    ) -> Result<Vec<(BodyId, BodyId)>, DescriptionError> {
        let body = |pair: usize, name: &str| {
            model
                .find(name)
                .ok_or_else(|| DescriptionError::UnknownExcludedBody {
                    pair,
                    body: name.to_string(),
                })
        };
        self.excluded_collisions
            .iter()
            .enumerate()
            .map(|(i, (a, b))| Ok((body(i, a)?, body(i, b)?)))
            .collect()
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
            if let Some(ControlLaw::PdSchedule {
                times,
                positions,
                velocities,
                effort_limits,
                ..
            }) = &a.control
            {
                let n = times.len();
                let consistent = n > 0
                    && [positions.len(), velocities.len(), effort_limits.len()] == [n; 3]
                    && times.windows(2).all(|w| w[0] < w[1])
                    && effort_limits.iter().all(|&l| l > 0.0);
                if !consistent {
                    return Err(E::Actuator {
                        actuator: i,
                        source: Box::new(crate::error::Error::invalid(
                            "scheduled PD law",
                            format!("{n} times"),
                            "increasing phase times, at least one, with one position, velocity and positive effort limit each",
                        )),
                    });
                }
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
                (
                    Some(ControlLaw::Pd { .. } | ControlLaw::PdSchedule { .. }),
                    JointKind::Free | JointKind::Ball,
                ) => {
                    return Err(E::PdOnFreeJoint {
                        actuator: i,
                        body: a.body.clone(),
                    })
                }
                (Some(ControlLaw::Pd { .. } | ControlLaw::PdSchedule { .. }), _) => {
                    Some(joint.q_start + a.dof)
                }
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
            let refused = |e| E::Actuator {
                actuator: i,
                source: Box::new(e),
            };
            let actuator = model.add_actuator(v_index).map_err(refused)?;
            let (kind, effort_limit) = match a.kind {
                ActuatorKind::Effort => (TransmissionKind::Effort, a.effort_limit),
                // A servo's input is a target position, not an effort: its force limit
                // bounds the implicit PD impulse instead.
                ActuatorKind::Servo { kp, kv } => (
                    TransmissionKind::Servo {
                        kp,
                        kv,
                        force_limit: a.effort_limit,
                    },
                    f64::INFINITY,
                ),
            };
            let ctrl_range = a.ctrl_range.unwrap_or([f64::NEG_INFINITY, f64::INFINITY]);
            model
                .set_transmission(
                    actuator,
                    Transmission {
                        ctrl_range,
                        gear: a.gear,
                        kind,
                    },
                )
                .map_err(refused)?;
            driven.push(v_index);
            effort_limits.push(effort_limit);
            if let Some(law) = &a.control {
                controller.actuators.push(ActuatorControl {
                    name,
                    actuator,
                    v_index,
                    q_index,
                    effort_limit,
                    law: law.clone(),
                });
            }
        }
        Ok((controller, effort_limits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{BodyDesc, SceneBuilder};

    /// Standard gravity used by [`SceneDescription::default`] (m/s²).
    const G: f64 = 9.81;

    /// A free ball 1 m above the world, moving, and a pendulum hanging from a pivot at 2 m,
    /// driven by a PD law; a ground plane.
    fn ball_and_pendulum() -> SceneDescription {
        let sphere = Shape::Sphere { radius: 0.1 };
        let ball = BodyDescription {
            name: "ball".into(),
            motion: BodyMotion::Jointed(JointedBody {
                inertia: SpatialInertia {
                    mass: 2.0,
                    com: Vector3::zeros(),
                    inertia_com: sphere.solid_inertia(2.0).expect("a sphere's inertia"),
                },
                joint: JointKind::Free,
                parent: None,
                X_PJ: Pose::identity(),
                damping: vec![0.0; 6],
                q0: vec![0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0],
                v0: vec![0.0, 0.0, 0.0, 0.5, 0.0, 0.0],
                joint_name: None,
                limits: None,
                armature: vec![0.0; 6],
                spring: None,
                friction: Vec::new(),
            }),
        };
        let arm = BodyDescription {
            name: "arm".into(),
            motion: BodyMotion::Jointed(JointedBody {
                inertia: SpatialInertia {
                    mass: 0.5,
                    com: Vector3::new(0.0, 0.0, -0.3),
                    inertia_com: sphere.solid_inertia(0.5).expect("a sphere's inertia"),
                },
                joint: JointKind::Revolute { axis: Vector3::y() },
                parent: None,
                X_PJ: Pose::translation(Vector3::new(3.0, 0.0, 2.0)),
                damping: vec![0.1],
                q0: vec![0.3],
                v0: vec![-1.0],
                joint_name: None,
                limits: None,
                armature: vec![0.0],
                spring: None,
                friction: Vec::new(),
            }),
        };
        let geometry = |name: &str, body: &str, shape: Shape| GeometryDescription {
            name: name.into(),
            body: body.into(),
            X_BG: Pose::identity(),
            shape,
            contact: None,
            hydroelastic: None,
            filter: None,
        };
        SceneDescription {
            bodies: vec![ball, arm],
            geometries: vec![
                geometry("ground", "world", Shape::HalfSpace),
                geometry("ball", "ball", sphere.clone()),
                GeometryDescription {
                    X_BG: Pose::translation(Vector3::new(0.0, 0.0, -0.3)),
                    ..geometry("bob", "arm", sphere.clone())
                },
                geometry("hub", "arm", sphere),
            ],
            actuators: vec![ActuatorDescription {
                name: None,
                body: "arm".into(),
                dof: 0,
                effort_limit: f64::INFINITY,
                control: Some(ControlLaw::pd(10.0, 1.0, 0.5)),
                kind: ActuatorKind::Effort,
                gear: 1.0,
                ctrl_range: None,
            }],
            ..SceneDescription::default()
        }
    }

    /// Excluded body pairs and collision filters reach the collision scene; an excluded pair
    /// naming no body is refused.
    #[test]
    fn excluded_pairs_and_filters_reach_the_collision_scene() {
        let mut d = ball_and_pendulum();
        let built = d.build().expect("valid");
        let scene = built.simulator.collision();
        // ground 0, ball 1, bob 2 and hub 3 (both on the arm).
        assert!(scene.may_touch(1, 2) && scene.may_touch(0, 1) && !scene.may_touch(2, 3));
        d.excluded_collisions.push(("arm".into(), "ball".into()));
        d.geometries[0].filter = Some(CollisionFilter {
            contype: 1,
            conaffinity: 0,
        });
        d.geometries[1].filter = Some(CollisionFilter {
            contype: 1,
            conaffinity: 0,
        });
        let built = d.build().expect("valid");
        let scene = built.simulator.collision();
        assert!(!scene.may_touch(1, 2) && !scene.may_touch(1, 3));
        assert!(!scene.may_touch(0, 1), "filters that admit neither side");
        assert!(scene.may_touch(0, 2), "the bob has no filter");
        d.excluded_collisions.push(("arm".into(), "leg".into()));
        assert!(matches!(
            d.build(),
            Err(DescriptionError::UnknownExcludedBody { pair: 1, .. })
        ));
    }

    #[test]
    fn a_description_builds_its_model_geometries_actuators_and_state() {
        let built = ball_and_pendulum().build().expect("a valid description");
        let model = &built.simulator.model;
        assert_eq!((model.nq(), model.nv(), model.nu()), (8, 7, 1));
        // q = [ball position, ball quaternion, arm angle], v = [ω, v of the ball, arm rate].
        assert_eq!(
            built.initial_state.q.as_slice(),
            &[0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.3]
        );
        assert_eq!(
            built.initial_state.v.as_slice(),
            &[0.0, 0.0, 0.0, 0.5, 0.0, 0.0, -1.0]
        );
        // Two geometries on the arm, one on the ball, the ground on the world.
        let bodies: Vec<BodyId> = built
            .simulator
            .geometries()
            .iter()
            .map(|g| g.body)
            .collect();
        assert_eq!(
            bodies,
            [
                BodyId::World,
                BodyId::Body(0),
                BodyId::Body(1),
                BodyId::Body(1)
            ]
        );
        // The PD law reads the arm's angle q[7] and drives its rate v[6]; it is named after
        // its body (a joint of one velocity).
        let pd = &built.controller.actuators[0];
        assert_eq!((pd.q_index, pd.v_index), (Some(7), 6));
        assert_eq!(pd.name, "arm");
        assert_eq!(built.effort_limits, [f64::INFINITY]);
    }

    #[test]
    fn a_built_ball_falls_freely_one_step() {
        // 0.9 m from the ground: no contact, so v⁺ = v − g δt and the ball's horizontal
        // velocity is unchanged.
        let mut built = ball_and_pendulum().build().expect("a valid description");
        let dt = built.simulator.settings.dt;
        let u = built
            .controller
            .effort(&built.initial_state, built.simulator.model.nu());
        let (next, report) = built
            .simulator
            .step(&built.initial_state, &u)
            .expect("a step");
        assert!(report.contacts.is_empty());
        assert!((next.v[5] + G * dt).abs() < 1e-12, "v_z = {}", next.v[5]);
        assert!((next.v[3] - 0.5).abs() < 1e-12, "v_x = {}", next.v[3]);
    }

    /// A change that breaks a valid description.
    type Edit = Box<dyn Fn(&mut SceneDescription)>;

    /// The joint data of body `i` of a test description.
    fn jointed(d: &mut SceneDescription, i: usize) -> &mut JointedBody {
        match &mut d.bodies[i].motion {
            BodyMotion::Jointed(b) => b,
            BodyMotion::Prescribed { .. } => unreachable!("test bodies are jointed"),
        }
    }

    #[test]
    fn errors_name_the_item_at_fault() {
        use DescriptionError as E;
        let cases: Vec<(&str, Edit)> = vec![
            (
                "unknown geometry body",
                Box::new(|d| d.geometries[2].body = "leg".into()),
            ),
            (
                "duplicate body",
                Box::new(|d| d.bodies.push(d.bodies[0].clone())),
            ),
            (
                "world body",
                Box::new(|d| {
                    d.bodies[0].name = "world".into();
                    d.geometries[1].body = "world".into();
                }),
            ),
            (
                "parent after child",
                Box::new(|d| jointed(d, 0).parent = Some("arm".into())),
            ),
            ("bad mass", Box::new(|d| jointed(d, 1).inertia.mass = -1.0)),
            ("short q0", Box::new(|d| jointed(d, 1).q0.clear())),
            (
                "duplicate geometry",
                Box::new(|d| d.geometries[3].name = "bob".into()),
            ),
            (
                "moving half-space",
                Box::new(|d| d.geometries[3].shape = Shape::HalfSpace),
            ),
            (
                "unknown actuator body",
                Box::new(|d| d.actuators[0].body = "leg".into()),
            ),
            ("dof out of range", Box::new(|d| d.actuators[0].dof = 1)),
            (
                "driven twice",
                Box::new(|d| {
                    let twin = ActuatorDescription {
                        control: None,
                        ..d.actuators[0].clone()
                    };
                    d.actuators.push(twin);
                }),
            ),
            (
                "pd on free joint",
                Box::new(|d| d.actuators[0].body = "ball".into()),
            ),
            (
                "zero effort limit",
                Box::new(|d| d.actuators[0].effort_limit = 0.0),
            ),
            (
                "non-finite state",
                Box::new(|d| jointed(d, 0).v0[2] = f64::NAN),
            ),
            ("bad settings", Box::new(|d| d.settings.dt = -1.0)),
        ];
        for (name, edit) in cases {
            let mut d = ball_and_pendulum();
            edit(&mut d);
            let e = d.build().expect_err(name);
            let ok = match (name, &e) {
                (
                    "unknown geometry body",
                    E::UnknownGeometryBody {
                        geometry: 2, body, ..
                    },
                ) => body == "leg",
                ("duplicate body", E::BodyName { body: 2, .. }) => true,
                ("world body", E::BodyName { body: 0, .. }) => true,
                (
                    "parent after child",
                    E::UnknownParent {
                        body: 0, parent, ..
                    },
                ) => parent == "arm",
                ("bad mass", E::Body { body: 1, .. }) => true,
                (
                    "short q0",
                    E::InitialStateSize {
                        body: 1,
                        vector,
                        expected,
                        found,
                        ..
                    },
                ) => (*vector, *expected, *found) == ("q0", 1, 0),
                ("duplicate geometry", E::GeometryName { geometry: 3, .. }) => true,
                (
                    "moving half-space",
                    E::HalfSpaceOnMovingBody {
                        geometry: 3, body, ..
                    },
                ) => body == "arm",
                ("unknown actuator body", E::UnknownActuatorBody { actuator: 0, .. }) => true,
                (
                    "dof out of range",
                    E::DofOutOfRange {
                        actuator: 0,
                        dof: 1,
                        nv: 1,
                        ..
                    },
                ) => true,
                (
                    "driven twice",
                    E::AlreadyDriven {
                        actuator: 1,
                        dof: 0,
                        ..
                    },
                ) => true,
                ("pd on free joint", E::PdOnFreeJoint { actuator: 0, .. }) => true,
                (
                    "zero effort limit",
                    E::EffortLimit {
                        actuator: 0, value, ..
                    },
                ) => *value == 0.0,
                ("non-finite state", E::InitialState { value }) => value.is_nan(),
                ("bad settings", E::Simulator { .. }) => true,
                _ => false,
            };
            assert!(ok, "{name}: {e:?}");
        }
    }

    #[test]
    fn non_finite_gravity_is_refused() {
        let e = SceneBuilder::new()
            .gravity([0.0, f64::NAN, -9.81])
            .body(BodyDesc::free("ball", 1.0, Shape::Sphere { radius: 0.1 }))
            .build()
            .expect_err("NaN gravity");
        assert!(
            e.to_string().contains("gravity") && e.to_string().contains("finite"),
            "{e}"
        );
    }

    #[test]
    fn the_builder_words_description_errors_with_body_names() {
        let free_pd = BodyDesc::free("ball", 1.0, Shape::Sphere { radius: 0.1 })
            .actuated(ControlLaw::pd(1.0, 0.1, 0.0), 1.0);
        let e = SceneBuilder::new()
            .body(free_pd)
            .build()
            .expect_err("PD on a free body");
        assert_eq!(
            e.to_string(),
            "invalid parameter `body `ball` actuator` = PD: PD laws need a revolute or \
             prismatic joint; drive free and ball joints open-loop"
        );
        let orphan = BodyDesc::revolute("arm", 1.0, Shape::Sphere { radius: 0.1 }, [0.0, 1.0, 0.0])
            .child_of("torso");
        let e = SceneBuilder::new()
            .body(orphan)
            .build()
            .expect_err("unknown parent");
        assert_eq!(
            e.to_string(),
            "invalid parameter `body `arm` parent` = torso: add the parent body first"
        );
    }

    #[test]
    fn a_problem_file_and_the_builder_make_the_same_rollout() {
        // The same scene two ways: both become a description, so 200 steps (the ball drops
        // 0.01 m, lands and settles) agree to the bit.
        let text = r#"
            [simulation]
            dt = 1e-3
            duration = 0.2
            [[body]]
            name = "ball"
            mass = 0.5
            position = [0.0, 0.0, 0.06]
            velocity = [0.2, 0.0, 0.0]
            [[geometry]]
            name = "ground"
            shape = "half-space"
            [[geometry]]
            name = "ball"
            body = "ball"
            shape = "sphere"
            radius = 0.05
        "#;
        let problem = crate::problem::parse_problem(text, std::path::Path::new("ball.toml"))
            .expect("a valid file");
        let mut from_file = Scene::from(problem);
        let ball = BodyDesc::free("ball", 0.5, Shape::Sphere { radius: 0.05 })
            .at([0.0, 0.0, 0.06])
            .velocity([0.2, 0.0, 0.0]);
        let mut from_code = SceneBuilder::new()
            .dt(1e-3)
            .ground()
            .body(ball)
            .build()
            .expect("a valid scene");
        let a = from_file.run_for(0.2).expect("rollout");
        let b = from_code.run_for(0.2).expect("rollout");
        assert_eq!(a.states, b.states);
        // It landed: resting on the ground within the solver tolerance's penetration.
        let z = from_code.state().q[2];
        assert!((z - 0.05).abs() < 1e-3, "z = {z}");
    }
}
