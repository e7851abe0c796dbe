//! serde structures of a problem file (see `problems/README.md`).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::problem::exact;

/// A whole problem file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProblemFile {
    /// One-line description shown by `stiction list`.
    #[serde(default)]
    pub description: String,
    /// Time stepping.
    pub simulation: SimulationSpec,
    /// Newton solver settings.
    #[serde(default)]
    pub solver: SolverSpec,
    /// Default contact parameters for pairs whose geometries give none.
    #[serde(default)]
    pub contact: ContactSpec,
    /// Bodies.
    #[serde(default, rename = "body")]
    pub bodies: Vec<BodySpec>,
    /// Geometries.
    #[serde(default, rename = "geometry")]
    pub geometries: Vec<GeometrySpec>,
    /// Actuators.
    #[serde(default, rename = "actuator")]
    pub actuators: Vec<ActuatorSpec>,
    /// Robot models (URDF or MJCF files) joining the scene.
    #[serde(default, rename = "model")]
    pub models: Vec<ModelSpec>,
    /// Couplers between one-coordinate joints.
    #[serde(default, rename = "coupler")]
    pub couplers: Vec<CouplerSpec>,
    /// Trajectory optimization task (`[optimize]`), kept as written: its meaning belongs to
    /// the optimizer, which reads it with [`super::parse_toml`].
    #[serde(default)]
    pub optimize: Option<toml::Value>,
    /// What `stiction simulate` writes besides the tables.
    #[serde(default)]
    pub output: OutputSpec,
    /// Settings of the geometrically implicit (`ncp`) stepper.
    #[serde(default)]
    pub ncp: NcpSpec,
}

/// `[output]`: files written by default; command-line flags add to them.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// PNG figures (as `--plot`).
    #[serde(default)]
    pub plot: bool,
    /// SVG figures (as `--svg`).
    #[serde(default)]
    pub svg: bool,
    /// `animation.gif` (as `--animate`).
    #[serde(default)]
    pub animate: bool,
    /// `xz` (default), `xy` or `yz` (as `--projection`).
    pub projection: Option<String>,
}

/// `[ncp]`: the geometrically implicit stepper (Xie & Chakraborty).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NcpSpec {
    /// Friction ellipsoid semi-axis e_t (default 1).
    pub e_t: Option<f64>,
    /// Friction ellipsoid semi-axis e_o (default 1).
    pub e_o: Option<f64>,
    /// Friction ellipsoid semi-axis e_r (m, default 0.01).
    pub e_r: Option<f64>,
    /// Tolerance on ‖Φ‖∞ (default 1e-10).
    pub tolerance: Option<f64>,
    /// Semismooth Newton iteration limit (default 100).
    pub max_iterations: Option<usize>,
    /// Applied impulses, `[[ncp.impulse]]`.
    #[serde(default, rename = "impulse")]
    pub impulses: Vec<ImpulseSpec>,
}

/// `[[ncp.impulse]]`: an impulse applied to a body once or periodically.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImpulseSpec {
    /// Body name.
    pub body: String,
    /// First application time (s).
    pub time: f64,
    /// Repeat period (s); once if absent.
    pub period: Option<f64>,
    /// End of a repeating impulse (s): applied at `time + k period < until`; forever if absent.
    pub until: Option<f64>,
    /// Linear impulse (N·s, world), default zero.
    #[serde(default, deserialize_with = "exact::option")]
    pub linear: Option<[f64; 3]>,
    /// Angular impulse (N·m·s, world), default zero.
    #[serde(default, deserialize_with = "exact::option")]
    pub angular: Option<[f64; 3]>,
}

/// `[simulation]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationSpec {
    /// Time step δt (s).
    pub dt: f64,
    /// Duration (s).
    pub duration: f64,
    /// `lagged` (default), `regularized-lagged`, `similar` or `sap`.
    #[serde(default)]
    pub approximation: Option<String>,
    /// `convex` (default) or `ncp`.
    #[serde(default)]
    pub stepper: Option<String>,
    /// Contact margin (m), default 0.01: pairs closer than this are candidate contacts.
    #[serde(default)]
    pub margin: Option<f64>,
    /// Which candidates apart enter SAP's and Similar's problems: `touching` (default),
    /// `approaching` or `all` ([`crate::step::Speculative`]).
    #[serde(default)]
    pub speculative: Option<String>,
    /// Gravity (m/s²), default [0, 0, −9.81].
    #[serde(default, deserialize_with = "exact::option")]
    pub gravity: Option<[f64; 3]>,
}

/// `[solver]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolverSpec {
    /// Relative tolerance ε_r (default 1e-5).
    pub relative_tolerance: Option<f64>,
    /// Newton iteration limit (default 100).
    pub max_iterations: Option<usize>,
    /// Factorization of the Newton Hessian: `auto` (default), `dense` or `sparse`.
    pub linear_solver: Option<String>,
    /// First Newton iterate of each step: `start` (default), `free` or `previous-change`.
    pub warm_start: Option<String>,
    /// Solve each contact island apart, in parallel (default true).
    pub islands: Option<bool>,
    /// Secant friction curvature where a Newton direction reversed a contact's slip
    /// (default true; [`crate::solver::SolverParams::reversal_secant`]).
    pub reversal_secant: Option<bool>,
    /// Estimate the Newton Hessian's condition number for `stats.csv` (default true).
    pub condition_estimate: Option<bool>,
}

/// Contact parameters; every field optional.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContactSpec {
    /// μ.
    pub friction: Option<f64>,
    /// k (N/m).
    pub stiffness: Option<f64>,
    /// d (s/m).
    pub dissipation: Option<f64>,
    /// τ_d (s).
    pub relaxation_time: Option<f64>,
    /// v_s (m/s).
    pub stiction_tolerance: Option<f64>,
    /// σ.
    pub sigma: Option<f64>,
    /// `hunt-crossley` (default), `hertz` or `barrier`.
    pub normal_law: Option<String>,
    /// Hertz's effective modulus E* (Pa).
    pub elastic_modulus: Option<f64>,
    /// Hertz's radius of curvature R (m); a sphere's or capsule's own radius by default.
    pub hertz_radius: Option<f64>,
    /// The barrier's activation gap d̂ (m).
    pub barrier_distance: Option<f64>,
}

/// Prescribed motion of a body.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum MotionSpec {
    /// Constant velocity (m/s, world).
    ConstantVelocity {
        /// Velocity.
        #[serde(deserialize_with = "exact::array")]
        velocity: [f64; 3],
    },
    /// `amplitude · sin(2π frequency t + phase) · direction`.
    Sinusoid {
        /// Direction (normalized on load).
        #[serde(deserialize_with = "exact::array")]
        direction: [f64; 3],
        /// Amplitude (m).
        amplitude: f64,
        /// Frequency (Hz).
        frequency: f64,
        /// Phase (rad).
        #[serde(default)]
        phase: f64,
    },
}

/// `[[model]]`: a robot model file joining the scene, its bodies after the file's own.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// The URDF (`.urdf`) or MJCF (`.xml`) file, relative to the problem file's folder, or
    /// `package://NAME/PATH` in an installed package (found through `STICTION_PACKAGE_PATH`).
    pub file: String,
    /// `fixed` (default) or `floating`: how a URDF's root link joins the world.
    pub base: Option<String>,
    /// Position of a URDF's root link in the world (m), default the origin.
    #[serde(default, deserialize_with = "exact::option")]
    pub position: Option<[f64; 3]>,
    /// Orientation of a URDF's root link, roll-pitch-yaw (degrees), default none.
    #[serde(default, deserialize_with = "exact::option")]
    pub rpy_deg: Option<[f64; 3]>,
    /// Prefixed to the names of a URDF's bodies, joints and geometries, default none.
    pub prefix: Option<String>,
    /// A URDF's collision meshes as their convex parts (V-HACD) instead of their convex
    /// hulls, default false.
    pub convex_decomposition: Option<bool>,
    /// Initial coordinates of revolute and prismatic joints by joint name (with the prefix),
    /// rad or m; the others start at zero.
    #[serde(default)]
    pub q0: BTreeMap<String, f64>,
    /// How to install the package a `package://` file comes from, quoted when it is not found.
    pub install: Option<String>,
    /// Pressure-field properties for every collision geometry of the model (rigid without
    /// `modulus`, as a geometry's `hydroelastic`), default none: point contact.
    pub hydroelastic: Option<HydroelasticSpec>,
    /// A URDF link: only the sub-tree from it down is imported, default the file's root.
    pub root: Option<String>,
    /// A body of the problem file the (fixed) root link is welded to, default the world.
    pub parent: Option<String>,
}

/// `[[body]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodySpec {
    /// Unique name.
    pub name: String,
    /// Mass (kg); required unless `prescribed`.
    pub mass: Option<f64>,
    /// Principal moments about the centre of mass (kg·m²); default: the solid inertia of the
    /// body's first geometry.
    #[serde(default, deserialize_with = "exact::option")]
    pub inertia: Option<[f64; 3]>,
    /// Centre of mass in the body frame (m), default origin.
    #[serde(default, deserialize_with = "exact::option")]
    pub com: Option<[f64; 3]>,
    /// `free` (default), `planar`, `revolute`, `prismatic` or `fixed`.
    pub joint: Option<String>,
    /// Parent body name (default `world`).
    pub parent: Option<String>,
    /// Joint axis (revolute, prismatic), joint frame.
    #[serde(default, deserialize_with = "exact::option")]
    pub axis: Option<[f64; 3]>,
    /// Joint frame position in the parent frame (m).
    #[serde(default, deserialize_with = "exact::option")]
    pub origin: Option<[f64; 3]>,
    /// Joint frame orientation in the parent frame, roll-pitch-yaw (degrees).
    #[serde(default, deserialize_with = "exact::option")]
    pub origin_rpy_deg: Option<[f64; 3]>,
    /// Joint damping per velocity.
    pub damping: Option<Vec<f64>>,
    /// Free / prescribed: initial position (m).
    #[serde(default, deserialize_with = "exact::option")]
    pub position: Option<[f64; 3]>,
    /// Free / prescribed: initial orientation as a quaternion `[w, x, y, z]`.
    #[serde(default, deserialize_with = "exact::option")]
    pub quaternion: Option<[f64; 4]>,
    /// Free / prescribed: initial orientation as roll-pitch-yaw (degrees).
    #[serde(default, deserialize_with = "exact::option")]
    pub rpy_deg: Option<[f64; 3]>,
    /// Free: initial velocity of the body origin (m/s, parent frame).
    #[serde(default, deserialize_with = "exact::option")]
    pub velocity: Option<[f64; 3]>,
    /// Free: initial angular velocity (rad/s, parent frame).
    #[serde(default, deserialize_with = "exact::option")]
    pub angular_velocity: Option<[f64; 3]>,
    /// Other joints: initial coordinates.
    pub q0: Option<Vec<f64>>,
    /// Other joints: initial velocities.
    pub v0: Option<Vec<f64>>,
    /// Prescribed motion: the body is kinematic.
    pub prescribed: Option<MotionSpec>,
}

/// `[[geometry]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeometrySpec {
    /// Unique name.
    pub name: String,
    /// Body name (default `world`).
    pub body: Option<String>,
    /// `sphere`, `box`, `capsule`, `cylinder`, `ellipsoid`, `half-space`, `convex-mesh`,
    /// `mesh` (a static triangle mesh on `world`, read from `file`).
    pub shape: String,
    /// Sphere, capsule, cylinder radius (m).
    pub radius: Option<f64>,
    /// Box side lengths, ellipsoid diameters (m).
    #[serde(default, deserialize_with = "exact::option")]
    pub size: Option<[f64; 3]>,
    /// Capsule core length / cylinder length (m).
    pub length: Option<f64>,
    /// Convex mesh vertices (m).
    #[serde(default, deserialize_with = "exact::option_list")]
    pub vertices: Option<Vec<[f64; 3]>>,
    /// Shape `mesh`: the STL or OBJ file, relative to the problem file's folder.
    pub file: Option<String>,
    /// Shape `mesh`: scale per axis of the file's coordinates (default `[1, 1, 1]`).
    #[serde(default, deserialize_with = "exact::option")]
    pub scale: Option<[f64; 3]>,
    /// Shape `mesh`: depth (m) of the prism below each triangle (default 0.05).
    pub depth: Option<f64>,
    /// Position in the body frame (m).
    #[serde(default, deserialize_with = "exact::option")]
    pub position: Option<[f64; 3]>,
    /// Orientation in the body frame, roll-pitch-yaw (degrees).
    #[serde(default, deserialize_with = "exact::option")]
    pub rpy_deg: Option<[f64; 3]>,
    /// Contact parameters of this geometry.
    pub contact: Option<ContactSpec>,
    /// Hydroelastic properties: compliant with `modulus`, rigid without.
    pub hydroelastic: Option<HydroelasticSpec>,
}

/// `hydroelastic = { … }` of a geometry: pressure-field contact with other hydroelastic
/// geometries.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HydroelasticSpec {
    /// Hydroelastic modulus E (Pa): compliant when given, rigid otherwise.
    pub modulus: Option<f64>,
    /// Mesh edge length (m); required except for half-spaces.
    pub resolution_hint: Option<f64>,
    /// Layer thickness (m) of a compliant half-space.
    pub thickness: Option<f64>,
}

/// `[[coupler]]`: the holonomic constraint `q_follower = multiplier · q_leader + offset`
/// between the joints of two bodies (revolute or prismatic), as a URDF mimic joint.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CouplerSpec {
    /// The body whose joint follows.
    pub follower: String,
    /// The body whose joint leads.
    pub leader: String,
    /// Ratio (1 for joints of one kind; m/rad or rad/m across kinds).
    pub multiplier: f64,
    /// Offset (rad or m, the follower's unit), default 0.
    #[serde(default)]
    pub offset: f64,
}

/// `[[actuator]]`: a force or torque on one joint velocity.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActuatorSpec {
    /// Name in reports (default: the body's name, with `[dof]` for multi-velocity joints).
    pub name: Option<String>,
    /// The body whose joint is driven.
    pub body: String,
    /// Which of the joint's velocities (default 0).
    #[serde(default)]
    pub dof: usize,
    /// Effort limit (N or N·m), > 0; default none.
    pub effort_limit: Option<f64>,
    /// The control law; none leaves the effort to `stiction optimize` (zero in `simulate`).
    pub control: Option<ControlSpec>,
}

/// `control = { type = … }` of an actuator.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ControlSpec {
    /// A prescribed effort sequence.
    OpenLoop {
        /// Sample times (s), strictly increasing.
        times: Vec<f64>,
        /// Efforts at those times (N or N·m).
        values: Vec<f64>,
        /// `linear` (default) or `hold`.
        #[serde(default)]
        interpolation: Option<String>,
    },
    /// `u = kp (position − q) + kd (velocity − v)`.
    Pd {
        /// Proportional gain (N/m or N·m/rad).
        kp: f64,
        /// Derivative gain (N·s/m or N·m·s/rad).
        kd: f64,
        /// Target coordinate (m or rad).
        position: f64,
        /// Target velocity (m/s or rad/s), default 0.
        #[serde(default)]
        velocity: f64,
        /// A sinusoid added to the target, default none.
        sinusoid: Option<SinusoidSpec>,
    },
    /// The PD law with targets and limits that switch at given times (held until the next).
    PdSchedule {
        /// Proportional gain (N/m or N·m/rad).
        kp: f64,
        /// Derivative gain (N·s/m or N·m·s/rad).
        kd: f64,
        /// Start of each phase (s), strictly increasing.
        times: Vec<f64>,
        /// Target coordinate of each phase (m or rad), default zeros.
        positions: Option<Vec<f64>>,
        /// Target velocity of each phase (m/s or rad/s), default zeros.
        velocities: Option<Vec<f64>>,
        /// Effort limit of each phase (N or N·m, > 0), default the actuator's.
        effort_limits: Option<Vec<f64>>,
    },
}

/// `sinusoid = { amplitude, frequency, phase }` of a PD law: its target moves by
/// `amplitude · sin(2π frequency t + phase)`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SinusoidSpec {
    /// Amplitude (m or rad).
    pub amplitude: f64,
    /// Frequency (Hz).
    pub frequency: f64,
    /// Phase (rad), default 0.
    #[serde(default)]
    pub phase: f64,
}
