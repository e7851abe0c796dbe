//! [`DescriptionError`]: what [`super::SceneDescription::build`] can find wrong with a scene
//! as a whole, naming the item by its index so that each front-end words it for its own
//! input; [`From`] words it for code, in terms of names.

use crate::error::Error;
use crate::multibody::JointKind;

/// What [`super::SceneDescription::build`] found wrong, naming the item by its index in the
/// description (and, for messages, by name). A front-end words it for its input (the problem
/// reader names the file's field and line); [`From`] gives the crate's [`Error`] with a
/// message in terms of names. The model's and the simulator's own errors are boxed, so that a
/// `Result` carrying this error stays small ([`Error`] holds solver statistics).
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
    /// `excluded_collisions[pair]` names a body the scene does not have.
    UnknownExcludedBody {
        /// Index of the pair.
        pair: usize,
        /// The name.
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
    /// The model refused `bodies[body]` ([`crate::multibody::MultibodyModel::add_body`]: mass, inertia, axis,
    /// damping; [`crate::multibody::MultibodyModel::add_prescribed`]).
    Body {
        /// Index of the body.
        body: usize,
        /// The model's error.
        source: Box<Error>,
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
    /// A PD law on a free or ball joint, which has no coordinate `q_i` with `q̇_i = v_i`.
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
    /// The model refused the actuator ([`crate::multibody::MultibodyModel::add_actuator`]).
    Actuator {
        /// Index of the actuator.
        actuator: usize,
        /// The model's error.
        source: Box<Error>,
    },
    /// The model refused coupler `coupler` (unknown bodies, joints that are not revolute or
    /// prismatic, a joint coupled to itself).
    Coupler {
        /// Index of the coupler.
        coupler: usize,
        /// The model's error.
        source: Box<Error>,
    },
    /// [`crate::step::Simulator::new`] refused the model, geometries or settings.
    Simulator {
        /// The simulator's error.
        source: Box<Error>,
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
            E::UnknownExcludedBody { body, .. } => Error::invalid(
                "excluded_collisions body",
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
            E::Body { source, .. }
            | E::Actuator { source, .. }
            | E::Coupler { source, .. }
            | E::Simulator { source } => *source,
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
                "PD laws need a revolute or prismatic joint; drive free and ball joints open-loop",
            ),
            E::EffortLimit { body, value, .. } => Error::invalid(
                &format!("body `{body}` effort limit"),
                value,
                "must be positive (N or N·m)",
            ),
        }
    }
}
