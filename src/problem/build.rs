//! Problem file → model, geometries, settings and initial state, with errors that name the
//! file, the field, what was expected and what was found.
#![allow(non_snake_case)]

use std::path::{Path, PathBuf};

use nalgebra::{DVector, Matrix3, Quaternion, Rotation3, UnitQuaternion, Vector3};

use crate::contact::{Approximation, ContactParams};
use crate::control::Controller;
use crate::error::{Error, Result};
use crate::geometry::{Geometry, Shape};
use crate::hydroelastic::Hydroelastic;
use crate::math::{Pose, SpatialInertia};
use crate::multibody::model::BodyId;
use crate::multibody::{JointKind, JointSpec, MultibodyModel, PrescribedBody, PrescribedMotion};
use crate::ncp::{AppliedImpulse, FrictionEllipsoid, NcpSettings, NcpSimulator, NcpSolverParams};
use crate::problem::locate::{locate, TextLocation};
use crate::problem::schema::{
    BodySpec, ContactSpec, GeometrySpec, HydroelasticSpec, MotionSpec, NcpSpec, ProblemFile,
};
use crate::report::projection::Projection;
use crate::solver::SolverParams;
use crate::step::{Simulator, State, StepSettings, DEFAULT_MARGIN};

/// The files a problem asks `stiction simulate` to write besides the CSV tables (`[output]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutputSettings {
    /// PNG figures.
    pub plot: bool,
    /// SVG figures.
    pub svg: bool,
    /// `animation.gif`.
    pub animate: bool,
    /// The animation's view plane.
    pub projection: Projection,
}

/// A loaded problem: a simulator, its initial state and how long to run.
#[derive(Debug)]
pub struct Problem {
    /// Name (the file stem, e.g. `falling-sphere`).
    pub name: String,
    /// One-line description.
    pub description: String,
    /// The file it came from.
    pub path: PathBuf,
    /// The file's text, to locate fields in errors found after loading (e.g. `[optimize]`).
    pub source: String,
    /// The simulator (model, geometry, step settings).
    pub simulator: Simulator,
    /// The control laws of the actuators that have one (empty without `[[actuator]]`).
    pub controller: Controller,
    /// Effort limit of each actuator (N or N·m; infinite when unset), indexed like `u`.
    pub effort_limits: Vec<f64>,
    /// Initial state at t = 0.
    pub initial_state: State,
    /// Duration (s).
    pub duration: f64,
    /// The `[optimize]` table, unresolved (see [`crate::optimize::schema`]).
    pub optimize: Option<crate::optimize::schema::OptimizeSpec>,
    /// Files to write besides the tables.
    pub output: OutputSettings,
    /// The time stepper the file selects (`[simulation] stepper`).
    pub stepper: Stepper,
    /// Settings of the geometrically implicit stepper (`[ncp]`); its δt is the simulator's.
    pub ncp: NcpSettings,
}

/// Which time stepper runs a problem.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stepper {
    /// The convex compliant-contact stepper ([`crate::step::Simulator`]).
    #[default]
    Convex,
    /// The geometrically implicit complementarity stepper ([`crate::ncp::NcpSimulator`]).
    Ncp,
}

impl Stepper {
    /// Both steppers.
    pub const ALL: [Stepper; 2] = [Stepper::Convex, Stepper::Ncp];

    /// The name used in files and on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Stepper::Convex => "convex",
            Stepper::Ncp => "ncp",
        }
    }
}

impl std::str::FromStr for Stepper {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Stepper::ALL
            .into_iter()
            .find(|x| x.name() == s)
            .ok_or_else(|| Error::invalid("stepper", s, "expected `convex` or `ncp`"))
    }
}

impl std::fmt::Display for Stepper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Problem {
    /// The geometrically implicit stepper of this scene, with the simulator's current δt.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when the scene does not fit the stepper (non-free bodies,
    /// unsupported shapes; see [`NcpSimulator::new`]).
    pub fn ncp_simulator(&self) -> Result<NcpSimulator> {
        let settings = NcpSettings {
            dt: self.simulator.settings.dt,
            ..self.ncp.clone()
        };
        NcpSimulator::new(
            &self.simulator.model,
            self.simulator.geometries(),
            &self.simulator.pair_parameters(),
            settings,
        )
    }
}

/// Reads and builds the problem in `path`.
///
/// # Errors
/// [`Error::ProblemFile`] naming the file, the line and column, the field, what was expected
/// and what was found, for unreadable files, non-UTF-8 bytes, malformed TOML, unknown fields,
/// wrong types and invalid values.
pub fn load_problem(path: &Path) -> Result<Problem> {
    let bytes = std::fs::read(path).map_err(|e| {
        err(
            path,
            None,
            "(file)",
            "a readable problem file",
            &e.to_string(),
        )
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let location = TextLocation::of_offset(&String::from_utf8_lossy(valid), valid.len());
        err(
            path,
            Some(location),
            "(file)",
            "UTF-8 TOML text",
            "bytes that are not UTF-8",
        )
    })?;
    parse_problem(&text, path)
}

/// Builds a problem from TOML `text`; `path` names it in errors and gives its name.
///
/// # Errors
/// As [`load_problem`].
pub fn parse_problem(text: &str, path: &Path) -> Result<Problem> {
    let de = toml::Deserializer::new(text);
    let file: ProblemFile = serde_path_to_error::deserialize(de).map_err(|e| {
        let path_to_field = e.path().to_string();
        let inner = e.into_inner();
        let (field, expected, found) = describe(&path_to_field, inner.message());
        let location = inner
            .span()
            .map(|s| TextLocation::of_offset(text, s.start))
            .or_else(|| locate(text, &field))
            .or(Some(TextLocation { line: 1, column: 1 }));
        err(path, location, &field, &expected, &found)
    })?;
    Builder { path, text }.build(file)
}

/// Field, expectation and finding of a serde/TOML `message` about `path_to_field` (`.` for
/// the document), in the words of problems/README.md rather than of Rust types.
fn describe(path_to_field: &str, message: &str) -> (String, String, String) {
    let message = message.trim();
    let within = |name: &str| match path_to_field {
        "" | "." => name.to_string(),
        parent => format!("{parent}.{name}"),
    };
    if let Some(name) = message
        .strip_prefix("missing field `")
        .and_then(|m| m.strip_suffix('`'))
    {
        let expected = if name == "simulation" {
            "a [simulation] table with `dt` and `duration` (required, see problems/README.md)"
                .to_string()
        } else {
            format!("a value for `{name}` (required, see problems/README.md)")
        };
        return (within(name), expected, "nothing".into());
    }
    if let Some((found, expected)) = message.split_once("\nexpected ") {
        return (
            "(syntax)".into(),
            format!("TOML syntax: {expected}"),
            found.into(),
        );
    }
    let field = match path_to_field {
        "" | "." => "(syntax)".to_string(),
        f => f.to_string(),
    };
    match message.split_once(", expected ") {
        Some((found, expected)) => {
            let found = found
                .trim_start_matches("invalid type: ")
                .trim_start_matches("invalid value: ");
            let found = match (found, found.strip_prefix("invalid length ")) {
                (_, Some(n)) => format!("an array of length {n}"),
                ("sequence", _) => "an array".to_string(),
                ("map", _) => "a table".to_string(),
                (other, _) => other.to_string(),
            };
            let expected = match expected {
                "f64" => "a number",
                "usize" => "an integer ≥ 0",
                other => other,
            };
            (field, expected.to_string(), found)
        }
        None => (field, "valid TOML syntax".into(), message.to_string()),
    }
}

/// `1 value`, `2 values`.
pub(super) fn count_values(n: usize) -> String {
    if n == 1 {
        "1 value".into()
    } else {
        format!("{n} values")
    }
}

fn err(
    path: &Path,
    location: Option<TextLocation>,
    field: &str,
    expected: &str,
    found: &str,
) -> Error {
    Error::ProblemFile {
        path: path.to_path_buf(),
        location,
        field: field.to_string(),
        expected: expected.to_string(),
        found: found.to_string(),
    }
}

/// Turns the deserialized file into a problem; `text` is kept to locate fields in errors.
pub(super) struct Builder<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Builder<'_> {
    /// An error at `field` (a dotted path), located in the text.
    pub(super) fn err(&self, field: &str, expected: &str, found: impl std::fmt::Display) -> Error {
        let location = locate(self.text, field);
        err(self.path, location, field, expected, &found.to_string())
    }

    pub(super) fn finite(&self, field: &str, x: f64) -> Result<f64> {
        if x.is_finite() {
            Ok(x)
        } else {
            Err(self.err(field, "a finite number", x))
        }
    }

    pub(super) fn positive(&self, field: &str, x: f64) -> Result<f64> {
        if x > 0.0 && x.is_finite() {
            Ok(x)
        } else {
            Err(self.err(field, "a positive finite number", x))
        }
    }

    fn vec3(&self, field: &str, a: [f64; 3]) -> Result<Vector3<f64>> {
        for (i, x) in a.iter().enumerate() {
            self.finite(&format!("{field}[{i}]"), *x)?;
        }
        Ok(Vector3::from(a))
    }

    fn unit(&self, field: &str, a: [f64; 3]) -> Result<Vector3<f64>> {
        let v = self.vec3(field, a)?;
        if v.norm() < 1e-12 {
            return Err(self.err(field, "a non-zero direction", format!("{a:?}")));
        }
        Ok(v.normalize())
    }

    fn rpy(&self, field: &str, a: Option<[f64; 3]>) -> Result<Matrix3<f64>> {
        Ok(match a {
            None => Matrix3::identity(),
            Some(a) => {
                let r = self.vec3(field, a)?.map(f64::to_radians);
                *Rotation3::from_euler_angles(r.x, r.y, r.z).matrix()
            }
        })
    }

    fn contact(
        &self,
        field: &str,
        base: &ContactParams<f64>,
        spec: &ContactSpec,
    ) -> Result<ContactParams<f64>> {
        let mut p = *base;
        let set = |name: &str,
                   slot: &mut f64,
                   value: Option<f64>,
                   strictly_positive: bool|
         -> Result<()> {
            if let Some(x) = value {
                let ok = x.is_finite() && if strictly_positive { x > 0.0 } else { x >= 0.0 };
                if !ok {
                    let expected = if strictly_positive {
                        "a positive finite number"
                    } else {
                        "a finite number ≥ 0"
                    };
                    return Err(self.err(&format!("{field}.{name}"), expected, x));
                }
                *slot = x;
            }
            Ok(())
        };
        set("friction", &mut p.mu, spec.friction, false)?;
        set("stiffness", &mut p.stiffness, spec.stiffness, true)?;
        set("dissipation", &mut p.dissipation, spec.dissipation, false)?;
        set(
            "relaxation_time",
            &mut p.relaxation_time,
            spec.relaxation_time,
            false,
        )?;
        set(
            "stiction_tolerance",
            &mut p.stiction_tolerance,
            spec.stiction_tolerance,
            true,
        )?;
        set("sigma", &mut p.sigma, spec.sigma, true)?;
        Ok(p)
    }

    fn shape(&self, field: &str, g: &GeometrySpec) -> Result<Shape> {
        let need = |name: &str, x: Option<f64>| -> Result<f64> {
            let x = x.ok_or_else(|| {
                self.err(
                    &format!("{field}.{name}"),
                    &format!("`{name}` for shape `{}`", g.shape),
                    "nothing",
                )
            })?;
            self.positive(&format!("{field}.{name}"), x)
        };
        Ok(match g.shape.as_str() {
            "sphere" => Shape::Sphere {
                radius: need("radius", g.radius)?,
            },
            "box" => {
                let s = g.size.ok_or_else(|| {
                    self.err(
                        &format!("{field}.size"),
                        "`size = [x, y, z]` for shape `box`",
                        "nothing",
                    )
                })?;
                for (i, x) in s.iter().enumerate() {
                    self.positive(&format!("{field}.size[{i}]"), *x)?;
                }
                Shape::Box {
                    half_extents: Vector3::from(s) * 0.5,
                }
            }
            "ellipsoid" => {
                let s = g.size.ok_or_else(|| {
                    self.err(
                        &format!("{field}.size"),
                        "`size = [x, y, z]` (diameters) for shape `ellipsoid`",
                        "nothing",
                    )
                })?;
                for (i, x) in s.iter().enumerate() {
                    self.positive(&format!("{field}.size[{i}]"), *x)?;
                }
                Shape::Ellipsoid {
                    semi_axes: Vector3::from(s) * 0.5,
                }
            }
            "capsule" => Shape::Capsule {
                radius: need("radius", g.radius)?,
                half_length: 0.5 * need("length", g.length)?,
            },
            "cylinder" => Shape::Cylinder {
                radius: need("radius", g.radius)?,
                half_length: 0.5 * need("length", g.length)?,
            },
            "half-space" => Shape::HalfSpace,
            "convex-mesh" => {
                let v = g.vertices.as_ref().ok_or_else(|| {
                    self.err(
                        &format!("{field}.vertices"),
                        "`vertices` for shape `convex-mesh`",
                        "nothing",
                    )
                })?;
                let vertices = v
                    .iter()
                    .enumerate()
                    .map(|(i, p)| self.vec3(&format!("{field}.vertices[{i}]"), *p))
                    .collect::<Result<Vec<_>>>()?;
                let shape = Shape::ConvexMesh { vertices };
                shape.validate().map_err(|e| {
                    self.err(
                        &format!("{field}.vertices"),
                        "at least 4 non-coplanar vertices",
                        e,
                    )
                })?;
                shape
            }
            other => {
                return Err(self.err(
                    &format!("{field}.shape"),
                    "one of sphere, box, capsule, cylinder, ellipsoid, half-space, convex-mesh",
                    format!("`{other}`"),
                ))
            }
        })
    }

    fn joint_kind(&self, field: &str, b: &BodySpec) -> Result<JointKind> {
        let axis = || -> Result<Vector3<f64>> {
            let a = b.axis.ok_or_else(|| {
                self.err(
                    &format!("{field}.axis"),
                    "an `axis` for this joint",
                    "nothing",
                )
            })?;
            self.unit(&format!("{field}.axis"), a)
        };
        Ok(match b.joint.as_deref().unwrap_or("free") {
            "free" => JointKind::Free,
            "planar" => JointKind::Planar,
            "fixed" => JointKind::Fixed,
            "revolute" => JointKind::Revolute { axis: axis()? },
            "prismatic" => JointKind::Prismatic { axis: axis()? },
            other => {
                return Err(self.err(
                    &format!("{field}.joint"),
                    "one of free, planar, revolute, prismatic, fixed",
                    format!("`{other}`"),
                ))
            }
        })
    }

    fn orientation(&self, field: &str, b: &BodySpec) -> Result<UnitQuaternion<f64>> {
        match (b.quaternion, b.rpy_deg) {
            (Some(_), Some(_)) => Err(self.err(field, "either `quaternion` or `rpy_deg`", "both")),
            (Some(q), None) => {
                for (i, x) in q.iter().enumerate() {
                    self.finite(&format!("{field}.quaternion[{i}]"), *x)?;
                }
                let quat = Quaternion::new(q[0], q[1], q[2], q[3]);
                if quat.norm() < 1e-12 {
                    return Err(self.err(
                        &format!("{field}.quaternion"),
                        "a non-zero quaternion [w, x, y, z]",
                        format!("{q:?}"),
                    ));
                }
                Ok(UnitQuaternion::from_quaternion(quat))
            }
            (None, rpy) => Ok(UnitQuaternion::from_matrix(
                &self.rpy(&format!("{field}.rpy_deg"), rpy)?,
            )),
        }
    }

    fn build(&self, file: ProblemFile) -> Result<Problem> {
        let sim = &file.simulation;
        let dt = self.positive("simulation.dt", sim.dt)?;
        let duration = self.positive("simulation.duration", sim.duration)?;
        let approximation = match &sim.approximation {
            None => Approximation::default(),
            Some(s) => s.parse().map_err(|_| {
                self.err(
                    "simulation.approximation",
                    "one of lagged, regularized-lagged, similar, sap",
                    format!("`{s}`"),
                )
            })?,
        };
        let stepper = match &sim.stepper {
            None => Stepper::default(),
            Some(s) => s.parse().map_err(|_| {
                self.err("simulation.stepper", "one of convex, ncp", format!("`{s}`"))
            })?,
        };
        let margin = match sim.margin {
            None => DEFAULT_MARGIN,
            Some(m) if m >= 0.0 && m.is_finite() => m,
            Some(m) => return Err(self.err("simulation.margin", "a finite number ≥ 0 (m)", m)),
        };
        let gravity = self.vec3(
            "simulation.gravity",
            sim.gravity.unwrap_or([0.0, 0.0, -9.81]),
        )?;
        let mut solver = SolverParams::default();
        if let Some(r) = file.solver.relative_tolerance {
            solver = solver
                .with_relative_tolerance(r)
                .map_err(|_| self.err("solver.relative_tolerance", "a number in (0, 1)", r))?;
        }
        if let Some(n) = file.solver.max_iterations {
            solver = solver
                .with_max_iterations(n)
                .map_err(|_| self.err("solver.max_iterations", "an integer ≥ 1", n))?;
        }
        if let Some(name) = &file.solver.linear_solver {
            solver.linear_solver = name.parse().map_err(|_| {
                self.err(
                    "solver.linear_solver",
                    "`auto`, `dense` or `sparse`",
                    format!("`{name}`"),
                )
            })?;
        }
        let default_contact = self.contact("contact", &ContactParams::default(), &file.contact)?;

        // Shapes first: a body's default inertia is that of its first geometry.
        let shapes = file
            .geometries
            .iter()
            .enumerate()
            .map(|(i, g)| self.shape(&format!("geometry[{i}]"), g))
            .collect::<Result<Vec<_>>>()?;

        // Unknown body names in geometries are reported before anything depends on them.
        for (i, g) in file.geometries.iter().enumerate() {
            let name = g.body.as_deref().unwrap_or("world");
            if name != "world" && !file.bodies.iter().any(|b| b.name == name) {
                return Err(self.err(
                    &format!("geometry[{i}].body"),
                    "the name of a body, or `world`",
                    format!("`{name}`"),
                ));
            }
        }

        let mut model = MultibodyModel::new(gravity);
        let mut q0 = Vec::new();
        let mut v0 = Vec::new();
        for (i, b) in file.bodies.iter().enumerate() {
            let field = format!("body[{i}]");
            if b.name.is_empty() || b.name == "world" || model.find(&b.name).is_some() {
                return Err(self.err(
                    &format!("{field}.name"),
                    "a unique name other than `world`",
                    format!("`{}`", b.name),
                ));
            }
            let position =
                self.vec3(&format!("{field}.position"), b.position.unwrap_or([0.0; 3]))?;
            let orientation = self.orientation(&field, b)?;
            if let Some(m) = &b.prescribed {
                let motion = match m {
                    MotionSpec::ConstantVelocity { velocity } => {
                        PrescribedMotion::ConstantVelocity {
                            velocity: self
                                .vec3(&format!("{field}.prescribed.velocity"), *velocity)?,
                        }
                    }
                    MotionSpec::Sinusoid {
                        direction,
                        amplitude,
                        frequency,
                        phase,
                    } => PrescribedMotion::Sinusoid {
                        direction: self
                            .unit(&format!("{field}.prescribed.direction"), *direction)?,
                        amplitude: self
                            .finite(&format!("{field}.prescribed.amplitude"), *amplitude)?,
                        frequency: self
                            .finite(&format!("{field}.prescribed.frequency"), *frequency)?,
                        phase: self.finite(&format!("{field}.prescribed.phase"), *phase)?,
                    },
                };
                model
                    .add_prescribed(PrescribedBody {
                        name: b.name.clone(),
                        initial_pose: Pose {
                            R: *orientation.to_rotation_matrix().matrix(),
                            p: position,
                        },
                        motion,
                    })
                    .map_err(|e| self.err(&field, "a valid prescribed body", e))?;
                continue;
            }
            let mass = self.positive(
                &format!("{field}.mass"),
                b.mass.ok_or_else(|| {
                    self.err(
                        &format!("{field}.mass"),
                        "a mass (kg) for a body without `prescribed` motion",
                        "nothing",
                    )
                })?,
            )?;
            let inertia_com = match b.inertia {
                Some(I) => {
                    for (k, x) in I.iter().enumerate() {
                        self.positive(&format!("{field}.inertia[{k}]"), *x)?;
                    }
                    Matrix3::from_diagonal(&Vector3::from(I))
                }
                None => file
                    .geometries
                    .iter()
                    .zip(&shapes)
                    .find(|(g, _)| g.body.as_deref() == Some(b.name.as_str()))
                    .and_then(|(_, s)| s.solid_inertia(mass))
                    .ok_or_else(|| self.err(&format!("{field}.inertia"), "principal moments [Ixx, Iyy, Izz] (kg·m²), or a sphere/box/capsule/cylinder geometry to derive them from", "nothing"))?,
            };
            let com = self.vec3(&format!("{field}.com"), b.com.unwrap_or([0.0; 3]))?;
            let kind = self.joint_kind(&field, b)?;
            let parent = match b.parent.as_deref() {
                None | Some("world") => None,
                Some(p) => Some(model.body_index(p).ok_or_else(|| {
                    self.err(
                        &format!("{field}.parent"),
                        "the name of a body listed before this one, or `world`",
                        format!("`{p}`"),
                    )
                })?),
            };
            let X_PJ = Pose {
                R: self.rpy(&format!("{field}.origin_rpy_deg"), b.origin_rpy_deg)?,
                p: self.vec3(&format!("{field}.origin"), b.origin.unwrap_or([0.0; 3]))?,
            };
            let damping = match &b.damping {
                None => vec![0.0; kind.nv()],
                Some(d) => {
                    if d.len() != kind.nv() {
                        return Err(self.err(
                            &format!("{field}.damping"),
                            &format!("{} for a {} joint", count_values(kind.nv()), kind.name()),
                            count_values(d.len()),
                        ));
                    }
                    for (k, x) in d.iter().enumerate() {
                        if !(*x >= 0.0 && x.is_finite()) {
                            return Err(self.err(
                                &format!("{field}.damping[{k}]"),
                                "a finite number ≥ 0",
                                x,
                            ));
                        }
                    }
                    d.clone()
                }
            };
            model
                .add_body(
                    &b.name,
                    SpatialInertia {
                        mass,
                        com,
                        inertia_com,
                    },
                    JointSpec {
                        kind,
                        parent,
                        X_PJ,
                        damping,
                    },
                )
                .map_err(|e| self.err(&format!("{field}.inertia"), "a valid rigid body", e))?;
            // Initial state.
            if kind == JointKind::Free {
                let w = self.vec3(
                    &format!("{field}.angular_velocity"),
                    b.angular_velocity.unwrap_or([0.0; 3]),
                )?;
                let v = self.vec3(&format!("{field}.velocity"), b.velocity.unwrap_or([0.0; 3]))?;
                q0.extend([
                    position.x,
                    position.y,
                    position.z,
                    orientation.w,
                    orientation.i,
                    orientation.j,
                    orientation.k,
                ]);
                v0.extend([w.x, w.y, w.z, v.x, v.y, v.z]);
                if b.q0.is_some() || b.v0.is_some() {
                    return Err(self.err(
                        &format!("{field}.q0"),
                        "position/quaternion/velocity/angular_velocity for a free joint",
                        "q0/v0",
                    ));
                }
            } else {
                for (name, given, n, out) in [
                    ("q0", &b.q0, kind.nq(), &mut q0),
                    ("v0", &b.v0, kind.nv(), &mut v0),
                ] {
                    let values = given.clone().unwrap_or_else(|| vec![0.0; n]);
                    if values.len() != n {
                        return Err(self.err(
                            &format!("{field}.{name}"),
                            &format!("{} for a {} joint", count_values(n), kind.name()),
                            count_values(values.len()),
                        ));
                    }
                    for (k, x) in values.iter().enumerate() {
                        self.finite(&format!("{field}.{name}[{k}]"), *x)?;
                    }
                    out.extend(values);
                }
                if b.velocity.is_some() || b.angular_velocity.is_some() || b.position.is_some() {
                    return Err(self.err(
                        &format!("{field}.velocity"),
                        "q0/v0 for a non-free joint",
                        "position/velocity/angular_velocity",
                    ));
                }
            }
        }

        let mut geometries = Vec::new();
        for (i, (g, shape)) in file.geometries.iter().zip(shapes).enumerate() {
            let field = format!("geometry[{i}]");
            if geometries.iter().any(|x: &Geometry| x.name == g.name) {
                return Err(self.err(
                    &format!("{field}.name"),
                    "a unique geometry name",
                    format!("`{}`", g.name),
                ));
            }
            let body_name = g.body.as_deref().unwrap_or("world");
            let body = model.find(body_name).ok_or_else(|| {
                self.err(
                    &format!("{field}.body"),
                    "the name of a body, or `world`",
                    format!("`{body_name}`"),
                )
            })?;
            if shape == Shape::HalfSpace && matches!(body, BodyId::Body(_)) {
                return Err(self.err(
                    &format!("{field}.shape"),
                    "a half-space on `world` or a prescribed body",
                    format!("a half-space on moving body `{body_name}`"),
                ));
            }
            let contact = match &g.contact {
                None => None,
                Some(c) => Some(self.contact(&format!("{field}.contact"), &default_contact, c)?),
            };
            let hydroelastic = match &g.hydroelastic {
                None => None,
                Some(h) => Some(self.hydroelastic(&format!("{field}.hydroelastic"), &shape, h)?),
            };
            geometries.push(Geometry {
                name: g.name.clone(),
                body,
                X_BG: Pose {
                    R: self.rpy(&format!("{field}.rpy_deg"), g.rpy_deg)?,
                    p: self.vec3(&format!("{field}.position"), g.position.unwrap_or([0.0; 3]))?,
                },
                shape,
                contact,
                hydroelastic,
            });
        }
        let settings = StepSettings {
            dt,
            approximation,
            margin,
            solver,
            contact: default_contact,
        };
        let (controller, effort_limits) = self.actuators(&file.actuators, &mut model)?;
        let output = OutputSettings {
            plot: file.output.plot,
            svg: file.output.svg,
            animate: file.output.animate,
            projection: match file.output.projection.as_deref() {
                None => Projection::default(),
                Some(name) => name.parse().map_err(|_| {
                    self.err(
                        "output.projection",
                        "one of xz, xy, yz",
                        format!("`{name}`"),
                    )
                })?,
            },
        };
        let ncp = self.ncp(&file.ncp, &model, dt)?;
        let simulator = Simulator::new(model, geometries, settings)
            .map_err(|e| self.err("(model)", "a valid model", e))?;
        let problem = Problem {
            name: self
                .path
                .file_stem()
                .map_or_else(|| "problem".into(), |s| s.to_string_lossy().into_owned()),
            description: file.description,
            path: self.path.to_path_buf(),
            source: self.text.to_string(),
            simulator,
            controller,
            effort_limits,
            initial_state: State {
                t: 0.0,
                q: DVector::from_vec(q0),
                v: DVector::from_vec(v0),
            },
            duration,
            output,
            optimize: file.optimize,
            stepper,
            ncp,
        };
        if stepper == Stepper::Ncp {
            problem.ncp_simulator().map_err(|e| {
                self.err(
                    "(model)",
                    "a scene the ncp stepper supports: free bodies with box, cylinder or sphere geometry, half-spaces on the world",
                    e,
                )
            })?;
        }
        Ok(problem)
    }

    fn hydroelastic(
        &self,
        field: &str,
        shape: &Shape,
        spec: &HydroelasticSpec,
    ) -> Result<Hydroelastic> {
        let half_space = *shape == Shape::HalfSpace;
        let resolution_hint = match (spec.resolution_hint, half_space) {
            (Some(h), _) => self.positive(&format!("{field}.resolution_hint"), h)?,
            // A plane or a layer has no mesh; the hint is not used.
            (None, true) => 1.0,
            (None, false) => {
                return Err(self.err(
                    &format!("{field}.resolution_hint"),
                    "a mesh edge length (m) for a meshed shape",
                    "none",
                ))
            }
        };
        let thickness = match (spec.thickness, half_space && spec.modulus.is_some()) {
            (Some(h), true) => Some(self.positive(&format!("{field}.thickness"), h)?),
            (None, false) => None,
            (None, true) => {
                return Err(self.err(
                    &format!("{field}.thickness"),
                    "the layer thickness (m) of a compliant half-space",
                    "none",
                ))
            }
            (Some(h), false) => {
                return Err(self.err(
                    &format!("{field}.thickness"),
                    "no thickness: only a compliant half-space (with `modulus`) has a layer",
                    h,
                ))
            }
        };
        Ok(match spec.modulus {
            None => Hydroelastic::Rigid { resolution_hint },
            Some(e) => Hydroelastic::Compliant {
                modulus: self.positive(&format!("{field}.modulus"), e)?,
                resolution_hint,
                thickness,
            },
        })
    }

    fn ncp(&self, spec: &NcpSpec, model: &MultibodyModel<f64>, dt: f64) -> Result<NcpSettings> {
        let mut limit_surface = FrictionEllipsoid::default();
        for (name, slot, value) in [
            ("e_t", &mut limit_surface.e_t, spec.e_t),
            ("e_o", &mut limit_surface.e_o, spec.e_o),
            ("e_r", &mut limit_surface.e_r, spec.e_r),
        ] {
            if let Some(x) = value {
                *slot = self.positive(&format!("ncp.{name}"), x)?;
            }
        }
        let mut solver = NcpSolverParams::default();
        if let Some(t) = spec.tolerance {
            solver = solver
                .with_tolerance(t)
                .map_err(|_| self.err("ncp.tolerance", "a number in (0, 1)", t))?;
        }
        if let Some(n) = spec.max_iterations {
            solver = solver
                .with_max_iterations(n)
                .map_err(|_| self.err("ncp.max_iterations", "an integer ≥ 1", n))?;
        }
        let mut impulses = Vec::with_capacity(spec.impulses.len());
        for (i, imp) in spec.impulses.iter().enumerate() {
            let field = format!("ncp.impulse[{i}]");
            let body = model.body_index(&imp.body).ok_or_else(|| {
                self.err(
                    &format!("{field}.body"),
                    "the name of a free body",
                    format!("`{}`", imp.body),
                )
            })?;
            let start = self.finite(&format!("{field}.time"), imp.time)?;
            let period = match imp.period {
                None => None,
                Some(p) => Some(self.positive(&format!("{field}.period"), p)?),
            };
            impulses.push(AppliedImpulse {
                body,
                start,
                period,
                angular: self.vec3(&format!("{field}.angular"), imp.angular.unwrap_or([0.0; 3]))?,
                linear: self.vec3(&format!("{field}.linear"), imp.linear.unwrap_or([0.0; 3]))?,
            });
        }
        Ok(NcpSettings {
            dt,
            limit_surface,
            solver,
            impulses,
        })
    }
}
