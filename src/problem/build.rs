//! Problem file → [`SceneDescription`] → simulator, controller and initial state, with errors
//! that name the file, the field, what was expected and what was found.
//!
//! The reader checks every value where the file gives it and turns the file into a scene
//! description; [`SceneDescription::build`] checks the scene as a whole (names, parents,
//! actuated velocities) and builds it, and its errors are reported here at the field they
//! concern.
#![allow(non_snake_case)]

use std::path::{Path, PathBuf};

use nalgebra::{Matrix3, Rotation3, Vector3};

use crate::contact::{Approximation, ContactParams, NormalLawKind};
use crate::control::Controller;
use crate::error::{Error, Result};
use crate::import::package::PACKAGE_PATH_VARIABLE;
use crate::import::{load_model, Base, ImportOptions, PackagePath};
use crate::math::Pose;
use crate::multibody::MultibodyModel;
use crate::ncp::{AppliedImpulse, FrictionEllipsoid, NcpSettings, NcpSimulator, NcpSolverParams};
use crate::problem::locate::{locate, TextLocation};
use crate::problem::schema::{ContactSpec, ModelSpec, NcpSpec, ProblemFile};
use crate::report::Projection;
use crate::scene::description::{BodyMotion, SceneDescription};
use crate::scene::Scene;
use crate::solver::SolverParams;
use crate::step::{Simulator, Speculative, State, StepSettings, DEFAULT_MARGIN};

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
    /// The `[optimize]` table as written (`None` without one). The reader leaves its meaning
    /// to the optimizer, which parses [`Problem::source`] with [`parse_toml`] for located
    /// errors.
    pub optimize: Option<toml::Value>,
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

impl From<Problem> for Scene {
    /// The problem's simulator and controller at its initial state.
    fn from(problem: Problem) -> Self {
        Scene::new(problem.simulator, problem.controller, problem.initial_state)
    }
}

impl Problem {
    /// Runs the problem from its initial state for its duration under its control laws (what
    /// `stiction simulate` steps, without writing tables).
    ///
    /// # Errors
    /// As [`crate::simulate::run_controlled`]: a recording too large for the memory cap, the
    /// first step error.
    pub fn run(&mut self) -> Result<crate::simulate::Recording> {
        crate::simulate::run_controlled(
            &mut self.simulator,
            &self.controller,
            &self.initial_state,
            self.duration,
            |_, _| {},
        )
    }

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

    /// Sets every contact's stiffness to `k` (N/m): the default for pairs whose geometries
    /// give none and each geometry's own, as ICF's stiffness studies do (Sec. X-A, Figs.
    /// 17-18; `stiction sweep`).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for the complementarity stepper (its contacts are rigid)
    /// and for a `k` the contact laws reject (not positive and finite); the problem is
    /// unchanged then.
    pub fn set_contact_stiffness(&mut self, k: f64) -> Result<()> {
        if self.stepper != Stepper::Convex {
            return Err(Error::invalid(
                "stepper",
                self.stepper,
                "only the convex stepper's contacts have a stiffness (the ncp stepper's are rigid)",
            ));
        }
        let mut settings = self.simulator.settings;
        settings.contact.stiffness = k;
        settings.validate()?;
        let own: Vec<_> = self
            .simulator
            .geometries()
            .iter()
            .enumerate()
            .filter(|(_, g)| g.contact.is_some())
            .map(|(i, g)| {
                let mut g = g.clone();
                if let Some(c) = &mut g.contact {
                    c.stiffness = k;
                    c.validate()?;
                }
                Ok((i, g))
            })
            .collect::<Result<_>>()?;
        self.simulator.settings = settings;
        for (i, g) in own {
            self.simulator.replace_geometry(i, g)?;
        }
        Ok(())
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
    let file: ProblemFile = parse_toml(text, path)?;
    Builder { path, text }.build(file)
}

/// Deserializes TOML `text` (the file `path`) into `T`, with errors in the form of
/// [`load_problem`]'s (file, line and column, dotted field, expected, found). Modules above the
/// reader parse their own tables of a problem file with it: `T` names the tables it reads and
/// ignores the others (the optimizer's `[optimize]`).
///
/// # Errors
/// [`Error::ProblemFile`] for malformed TOML, unknown fields of `T`, wrong types and missing
/// fields.
pub fn parse_toml<T: serde::de::DeserializeOwned>(text: &str, path: &Path) -> Result<T> {
    let de = toml::Deserializer::new(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path_to_field = e.path().to_string();
        let inner = e.into_inner();
        let (field, expected, found) = describe(&path_to_field, inner.message());
        let location = inner
            .span()
            .map(|s| TextLocation::of_offset(text, s.start))
            .or_else(|| locate(text, &field))
            .or(Some(TextLocation { line: 1, column: 1 }));
        err(path, location, &field, &expected, &found)
    })
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
    pub(super) path: &'a Path,
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

    pub(super) fn vec3(&self, field: &str, a: [f64; 3]) -> Result<Vector3<f64>> {
        for (i, x) in a.iter().enumerate() {
            self.finite(&format!("{field}[{i}]"), *x)?;
        }
        Ok(Vector3::from(a))
    }

    pub(super) fn unit(&self, field: &str, a: [f64; 3]) -> Result<Vector3<f64>> {
        let v = self.vec3(field, a)?;
        if v.norm() < 1e-12 {
            return Err(self.err(field, "a non-zero direction", format!("{a:?}")));
        }
        Ok(v.normalize())
    }

    pub(super) fn rpy(&self, field: &str, a: Option<[f64; 3]>) -> Result<Matrix3<f64>> {
        Ok(match a {
            None => Matrix3::identity(),
            Some(a) => {
                let r = self.vec3(field, a)?.map(f64::to_radians);
                *Rotation3::from_euler_angles(r.x, r.y, r.z).matrix()
            }
        })
    }

    pub(super) fn contact(
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
        if let Some(name) = &spec.normal_law {
            p.law = name.parse().map_err(|_| {
                self.err(
                    &format!("{field}.normal_law"),
                    "one of hunt-crossley, hertz, barrier",
                    format!("`{name}`"),
                )
            })?;
        }
        let law = p.law;
        let only_for = |name: &str, value: Option<f64>, wanted: NormalLawKind| -> Result<()> {
            match value {
                Some(x) if law != wanted => Err(self.err(
                    &format!("{field}.{name}"),
                    &format!("`{name}` only with normal_law = \"{wanted}\""),
                    x,
                )),
                _ => Ok(()),
            }
        };
        only_for(
            "elastic_modulus",
            spec.elastic_modulus,
            NormalLawKind::Hertz,
        )?;
        only_for("hertz_radius", spec.hertz_radius, NormalLawKind::Hertz)?;
        only_for(
            "barrier_distance",
            spec.barrier_distance,
            NormalLawKind::Barrier,
        )?;
        if law == NormalLawKind::Hertz {
            if let Some(k) = spec.stiffness {
                return Err(self.err(
                    &format!("{field}.stiffness"),
                    "`elastic_modulus` (Pa) for normal_law = \"hertz\"",
                    k,
                ));
            }
            if spec.normal_law.is_some() && spec.elastic_modulus.is_none() {
                return Err(self.err(
                    &format!("{field}.elastic_modulus"),
                    "the effective modulus E* (Pa) for normal_law = \"hertz\"",
                    "nothing",
                ));
            }
            set(
                "elastic_modulus",
                &mut p.stiffness,
                spec.elastic_modulus,
                true,
            )?;
            set("hertz_radius", &mut p.hertz_radius, spec.hertz_radius, true)?;
        }
        set(
            "barrier_distance",
            &mut p.barrier_distance,
            spec.barrier_distance,
            true,
        )?;
        Ok(p)
    }

    /// The scene description of `[[model]]` entry `field`, read by [`crate::import`] with the
    /// package path of `STICTION_PACKAGE_PATH`, which also finds a `package://` file; its
    /// joints start at the entry's `q0`.
    fn model(&self, field: &str, m: &ModelSpec) -> Result<SceneDescription> {
        let base = match m.base.as_deref() {
            None | Some("fixed") => Base::Fixed,
            Some("floating") => Base::Floating,
            Some(other) => {
                return Err(self.err(
                    &format!("{field}.base"),
                    "`fixed` or `floating`",
                    format!("`{other}`"),
                ))
            }
        };
        let pose = Pose {
            R: self.rpy(&format!("{field}.rpy_deg"), m.rpy_deg)?,
            p: self.vec3(&format!("{field}.position"), m.position.unwrap_or([0.0; 3]))?,
        };
        let options = ImportOptions {
            base,
            pose,
            prefix: m.prefix.clone().unwrap_or_default(),
            package_path: PackagePath::from_env(),
            convex_decomposition: m.convex_decomposition.unwrap_or(false),
            root: m.root.clone(),
            parent: m.parent.clone().filter(|p| p != "world"),
        };
        let file = if m.file.starts_with("package://") {
            options
                .package_path
                .resolve(&m.file, self.path)
                .map_err(|reason| {
                    let install = m.install.as_deref().map_or(String::new(), |command| {
                        format!(": install it with `{command}`")
                    });
                    let package = m.file["package://".len()..].split('/').next();
                    self.err(
                        &format!("{field}.file"),
                        &format!(
                            "an installed model file{install}, then give the package's folder \
                             as {PACKAGE_PATH_VARIABLE}={}=DIR",
                            package.unwrap_or("NAME")
                        ),
                        reason,
                    )
                })?
        } else {
            self.path.parent().unwrap_or(Path::new(".")).join(&m.file)
        };
        let mut description = load_model(&file, &options)?.description;
        if let Some(spec) = &m.hydroelastic {
            let field = format!("{field}.hydroelastic");
            for g in &mut description.geometries {
                g.hydroelastic = Some(self.hydroelastic(&field, &g.shape, spec)?);
            }
        }
        for (name, &q0) in &m.q0 {
            let field = format!("{field}.q0.{name}");
            let joint = description
                .bodies
                .iter_mut()
                .find_map(|b| match &mut b.motion {
                    BodyMotion::Jointed(j) if j.joint_name.as_deref() == Some(name.as_str()) => {
                        Some(j)
                    }
                    _ => None,
                });
            match joint {
                Some(j) if j.q0.len() == 1 => j.q0[0] = self.finite(&field, q0)?,
                Some(j) => {
                    return Err(self.err(
                        &field,
                        "a revolute or prismatic joint",
                        format!("a {} joint", j.joint.name()),
                    ))
                }
                None => return Err(self.err(&field, "the name of a joint of the model", name)),
            }
        }
        Ok(description)
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
        let speculative = match &sim.speculative {
            None => Speculative::default(),
            Some(s) => s.parse().map_err(|_| {
                self.err(
                    "simulation.speculative",
                    "one of touching, approaching, all",
                    format!("`{s}`"),
                )
            })?,
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
        if let Some(name) = &file.solver.warm_start {
            solver.warm_start = name.parse().map_err(|_| {
                self.err(
                    "solver.warm_start",
                    "`start`, `free` or `previous-change`",
                    format!("`{name}`"),
                )
            })?;
        }
        if let Some(on) = file.solver.islands {
            solver = solver.with_islands(on);
        }
        if let Some(on) = file.solver.reversal_secant {
            solver = solver.with_reversal_secant(on);
        }
        if let Some(on) = file.solver.condition_estimate {
            solver = solver.with_condition_estimate(on);
        }
        let default_contact = self.contact("contact", &ContactParams::default(), &file.contact)?;

        // Shapes first: a body's default inertia is that of its first geometry. A static
        // mesh is many shapes; the others are one.
        let shapes = file
            .geometries
            .iter()
            .enumerate()
            .map(|(i, g)| self.shapes(&format!("geometry[{i}]"), g))
            .collect::<Result<Vec<_>>>()?;

        // A model hangs from a body of the file's own tree (bodies of the tree come before the
        // model's; prescribed bodies are not in the tree).
        for (i, m) in file.models.iter().enumerate() {
            let Some(parent) = m.parent.as_ref().filter(|p| *p != "world") else {
                continue;
            };
            let body = file.bodies.iter().find(|b| &b.name == parent);
            if body.is_none_or(|b| b.prescribed.is_some()) {
                return Err(self.err(
                    &format!("model[{i}].parent"),
                    "`world` or the name of a `[[body]]` of the file with a joint (not a prescribed body)",
                    format!("`{parent}`"),
                ));
            }
        }
        let models = file
            .models
            .iter()
            .enumerate()
            .map(|(i, m)| self.model(&format!("model[{i}]"), m))
            .collect::<Result<Vec<_>>>()?;
        let model_body = |name: &str| {
            models
                .iter()
                .any(|m| m.bodies.iter().any(|b| b.name == name))
        };

        // Unknown body names in geometries are reported before the default inertias, which
        // look the geometries up by body name (the description's build checks them again).
        for (i, g) in file.geometries.iter().enumerate() {
            let name = g.body.as_deref().unwrap_or("world");
            if name != "world" && !file.bodies.iter().any(|b| b.name == name) && !model_body(name) {
                return Err(self.err(
                    &format!("geometry[{i}].body"),
                    "the name of a body, or `world`",
                    format!("`{name}`"),
                ));
            }
        }

        let bodies = file
            .bodies
            .iter()
            .enumerate()
            .map(|(i, b)| self.body(&format!("body[{i}]"), b, &file.geometries, &shapes))
            .collect::<Result<Vec<_>>>()?;
        let mut geometries = Vec::new();
        for (i, (g, shapes)) in file.geometries.iter().zip(shapes).enumerate() {
            let pieces = shapes.len();
            for (k, shape) in shapes.into_iter().enumerate() {
                let mut geometry =
                    self.geometry(&format!("geometry[{i}]"), g, shape, &default_contact)?;
                if g.shape == "mesh" && pieces > 1 {
                    geometry.name = format!("{}#{k}", g.name);
                }
                geometries.push(geometry);
            }
        }
        let actuators = self.actuators(&file.actuators)?;
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
        let mut description = SceneDescription {
            gravity,
            settings: StepSettings {
                dt,
                approximation,
                margin,
                speculative,
                solver,
                contact: default_contact,
            },
            bodies,
            geometries,
            actuators,
            couplers: self.couplers(&file.couplers)?,
            excluded_collisions: Vec::new(),
        };
        // The models' bodies, geometries and actuators follow the file's own (so do their
        // coordinates in q and v and their controls in u); the file's settings rule.
        for m in models {
            description.bodies.extend(m.bodies);
            description.geometries.extend(m.geometries);
            description.actuators.extend(m.actuators);
            description.couplers.extend(m.couplers);
            description
                .excluded_collisions
                .extend(m.excluded_collisions);
        }
        let scene = description
            .build()
            .map_err(|e| self.description_error(e, &file))?;
        crate::simulate::recording_steps(&scene.simulator, "simulation.duration", duration)
            .map_err(|e| {
                self.err(
                    "simulation.duration",
                    "a duration whose recording fits in memory",
                    e,
                )
            })?;
        let ncp = self.ncp(&file.ncp, &scene.simulator.model, dt)?;
        let problem = Problem {
            name: self
                .path
                .file_stem()
                .map_or_else(|| "problem".into(), |s| s.to_string_lossy().into_owned()),
            description: file.description,
            path: self.path.to_path_buf(),
            source: self.text.to_string(),
            simulator: scene.simulator,
            controller: scene.controller,
            effort_limits: scene.effort_limits,
            initial_state: scene.initial_state,
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
            let until = match imp.until {
                None => None,
                Some(u) if period.is_some() && u > start && u.is_finite() => Some(u),
                Some(u) => {
                    return Err(self.err(
                        &format!("{field}.until"),
                        "a finite time after `time` (s), with a `period`",
                        u,
                    ))
                }
            };
            impulses.push(AppliedImpulse {
                body,
                start,
                period,
                until,
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
