//! [`SceneBuilder`]: a scene from Rust values, one shape per body. It makes a
//! [`SceneDescription`] (the bodies' inertias from their shapes) and builds it, so it gets
//! the checks a problem file gets.

use nalgebra::Vector3;

use crate::contact::{Approximation, ContactParams};
use crate::control::ControlLaw;
use crate::error::{Error, Result};
use crate::geometry::Shape;
use crate::hydroelastic::Hydroelastic;
use crate::math::{Pose, SpatialInertia};
use crate::multibody::JointKind;
use crate::scene::description::{
    ActuatorDescription, ActuatorKind, BodyDescription, BodyMotion, GeometryDescription,
    JointedBody, SceneDescription,
};
use crate::scene::Scene;
use crate::step::StepSettings;

/// One rigid body with one collision shape, its joint, initial state and optional actuator.
///
/// The centre of mass is the shape's centre and the inertia the shape's solid inertia, so the
/// shape must be a sphere, box, capsule or cylinder.
#[derive(Clone, Debug, PartialEq)]
pub struct BodyDesc {
    name: String,
    mass: f64,
    shape: Shape,
    kind: JointKind,
    parent: Option<String>,
    position: [f64; 3],
    shape_offset: [f64; 3],
    velocity: [f64; 3],
    angular_velocity: [f64; 3],
    q0: f64,
    v0: f64,
    contact: Option<ContactParams<f64>>,
    hydroelastic: Option<Hydroelastic>,
    actuator: Option<(ControlLaw, f64)>,
}

impl BodyDesc {
    fn new(name: &str, mass: f64, shape: Shape, kind: JointKind) -> Self {
        BodyDesc {
            name: name.to_string(),
            mass,
            shape,
            kind,
            parent: None,
            position: [0.0; 3],
            shape_offset: [0.0; 3],
            velocity: [0.0; 3],
            angular_velocity: [0.0; 3],
            q0: 0.0,
            v0: 0.0,
            contact: None,
            hydroelastic: None,
            actuator: None,
        }
    }

    /// A free body (six degrees of freedom) of `mass` (kg).
    pub fn free(name: &str, mass: f64, shape: Shape) -> Self {
        Self::new(name, mass, shape, JointKind::Free)
    }

    /// A body turning about `axis` (unit vector in the parent frame) through its joint origin.
    pub fn revolute(name: &str, mass: f64, shape: Shape, axis: [f64; 3]) -> Self {
        let axis = Vector3::from(axis);
        Self::new(name, mass, shape, JointKind::Revolute { axis })
    }

    /// A body sliding along `axis` (unit vector in the parent frame) from its joint origin.
    pub fn prismatic(name: &str, mass: f64, shape: Shape, axis: [f64; 3]) -> Self {
        let axis = Vector3::from(axis);
        Self::new(name, mass, shape, JointKind::Prismatic { axis })
    }

    /// Free bodies: the initial position (m, world). Other joints: the joint origin in the
    /// parent frame (m).
    pub fn at(mut self, position: [f64; 3]) -> Self {
        self.position = position;
        self
    }

    /// Free bodies: the initial velocity of the body origin (m/s, world).
    pub fn velocity(mut self, velocity: [f64; 3]) -> Self {
        self.velocity = velocity;
        self
    }

    /// Free bodies: the initial angular velocity (rad/s, world).
    pub fn angular_velocity(mut self, angular_velocity: [f64; 3]) -> Self {
        self.angular_velocity = angular_velocity;
        self
    }

    /// Revolute and prismatic joints: initial coordinate (rad or m) and its rate.
    pub fn joint_state(mut self, q0: f64, v0: f64) -> Self {
        self.q0 = q0;
        self.v0 = v0;
        self
    }

    /// Hangs the body from `parent` (added before it) instead of the world.
    pub fn child_of(mut self, parent: &str) -> Self {
        self.parent = Some(parent.to_string());
        self
    }

    /// Places the shape, and with it the centre of mass, at `offset` in the body frame (m).
    pub fn shape_offset(mut self, offset: [f64; 3]) -> Self {
        self.shape_offset = offset;
        self
    }

    /// Gives the shape its own contact parameters (combined with others as in a problem file).
    pub fn contact(mut self, params: ContactParams<f64>) -> Self {
        self.contact = Some(params);
        self
    }

    /// Gives the shape hydroelastic properties (pressure-field contact with other
    /// hydroelastic geometries, [`crate::hydroelastic`]).
    pub fn hydroelastic(mut self, properties: Hydroelastic) -> Self {
        self.hydroelastic = Some(properties);
        self
    }

    /// Drives the joint's first velocity with `law`, clamped to `effort_limit` (N or N·m; use
    /// `f64::INFINITY` for none). PD laws need a revolute or prismatic joint.
    pub fn actuated(mut self, law: ControlLaw, effort_limit: f64) -> Self {
        self.actuator = Some((law, effort_limit));
        self
    }
}

/// Builds a [`Scene`] in code: settings, a ground, bodies; checked when [`SceneBuilder::build`]
/// is called.
#[derive(Clone, Debug, PartialEq)]
pub struct SceneBuilder {
    gravity: [f64; 3],
    settings: StepSettings,
    ground: bool,
    ground_hydroelastic: Option<Hydroelastic>,
    bodies: Vec<BodyDesc>,
}

impl Default for SceneBuilder {
    fn default() -> Self {
        SceneBuilder {
            gravity: [0.0, 0.0, -9.81],
            settings: StepSettings::default(),
            ground: false,
            ground_hydroelastic: None,
            bodies: Vec::new(),
        }
    }
}

impl SceneBuilder {
    /// Gravity 9.81 m/s² along −z, the default [`StepSettings`] (δt = 1e-3 s, Lagged), no
    /// bodies.
    pub fn new() -> Self {
        Self::default()
    }

    /// Time step δt (s).
    pub fn dt(mut self, dt: f64) -> Self {
        self.settings.dt = dt;
        self
    }

    /// Contact approximation.
    pub fn approximation(mut self, approximation: Approximation) -> Self {
        self.settings.approximation = approximation;
        self
    }

    /// Contact parameters of pairs whose shapes have none of their own.
    pub fn contact(mut self, params: ContactParams<f64>) -> Self {
        self.settings.contact = params;
        self
    }

    /// Gravity (m/s², world).
    pub fn gravity(mut self, gravity: [f64; 3]) -> Self {
        self.gravity = gravity;
        self
    }

    /// All step settings at once (δt, approximation, margin, solver, contact).
    pub fn settings(mut self, settings: StepSettings) -> Self {
        self.settings = settings;
        self
    }

    /// Adds the ground: the half-space z ≤ 0 of the world, named `ground`.
    pub fn ground(mut self) -> Self {
        self.ground = true;
        self
    }

    /// Adds the ground with hydroelastic properties: a rigid plane, or a compliant layer.
    pub fn hydroelastic_ground(mut self, properties: Hydroelastic) -> Self {
        self.ground = true;
        self.ground_hydroelastic = Some(properties);
        self
    }

    /// Adds a body (parents before their children).
    pub fn body(mut self, body: BodyDesc) -> Self {
        self.bodies.push(body);
        self
    }

    /// The scene at its initial state.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for invalid settings, a non-finite initial state, a shape
    /// without a solid inertia, an unknown parent, a duplicate name, a PD law on a free body,
    /// a non-positive effort limit, or a mass, inertia or axis that
    /// [`crate::multibody::MultibodyModel::add_body`] rejects (the checks of
    /// [`SceneDescription::build`], worded with the bodies' names).
    pub fn build(self) -> Result<Scene> {
        Ok(self.description()?.build()?.into())
    }

    /// The scene as a [`SceneDescription`]: the ground (if any) first, then each body with
    /// one geometry (its shape, named after it) and its actuator.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a shape without a solid inertia; everything else is
    /// checked by [`SceneDescription::build`].
    pub fn description(self) -> Result<SceneDescription> {
        let mut geometries = Vec::new();
        if self.ground {
            geometries.push(GeometryDescription {
                name: "ground".into(),
                body: "world".into(),
                X_BG: Pose::identity(),
                shape: Shape::HalfSpace,
                contact: None,
                hydroelastic: self.ground_hydroelastic,
                filter: None,
            });
        }
        let mut bodies = Vec::with_capacity(self.bodies.len());
        let mut actuators = Vec::new();
        for b in self.bodies {
            let inertia_com = b.shape.solid_inertia(b.mass).ok_or_else(|| {
                Error::invalid(
                    &format!("body `{}` shape", b.name),
                    format!("{:?}", b.shape),
                    "a sphere, box, capsule or cylinder, whose solid inertia the body takes",
                )
            })?;
            let free = b.kind == JointKind::Free;
            let offset = Vector3::from(b.shape_offset);
            let (q0, v0) = if free {
                let [x, y, z] = b.position;
                let [wx, wy, wz] = b.angular_velocity;
                let [vx, vy, vz] = b.velocity;
                (
                    vec![x, y, z, 1.0, 0.0, 0.0, 0.0],
                    vec![wx, wy, wz, vx, vy, vz],
                )
            } else {
                (vec![b.q0], vec![b.v0])
            };
            bodies.push(BodyDescription {
                name: b.name.clone(),
                motion: BodyMotion::Jointed(JointedBody {
                    inertia: SpatialInertia {
                        mass: b.mass,
                        com: offset,
                        inertia_com,
                    },
                    joint: b.kind,
                    parent: b.parent,
                    X_PJ: if free {
                        Pose::identity()
                    } else {
                        Pose::translation(Vector3::from(b.position))
                    },
                    damping: vec![0.0; b.kind.nv()],
                    q0,
                    v0,
                    joint_name: None,
                    limits: None,
                    armature: vec![0.0; b.kind.nv()],
                    spring: None,
                    friction: Vec::new(),
                }),
            });
            geometries.push(GeometryDescription {
                name: b.name.clone(),
                body: b.name.clone(),
                X_BG: Pose::translation(offset),
                shape: b.shape,
                contact: b.contact,
                hydroelastic: b.hydroelastic,
                filter: None,
            });
            if let Some((law, effort_limit)) = b.actuator {
                actuators.push(ActuatorDescription {
                    name: Some(b.name.clone()),
                    body: b.name,
                    dof: 0,
                    effort_limit,
                    control: Some(law),
                    kind: ActuatorKind::Effort,
                    gear: 1.0,
                    ctrl_range: None,
                });
            }
        }
        Ok(SceneDescription {
            gravity: Vector3::from(self.gravity),
            settings: self.settings,
            bodies,
            geometries,
            actuators,
            couplers: Vec::new(),
            excluded_collisions: Vec::new(),
        })
    }
}
