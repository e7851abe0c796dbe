//! `stiction.load(path, **overrides)`: a problem file (`problems/*.toml`) or a robot model
//! (URDF `.urdf`, MJCF `.xml`) as `stiction simulate` reads it, with the command line's
//! overrides as keyword arguments.
//!
//! A robot model becomes what `stiction simulate ROBOT.urdf` runs: the robot on a ground
//! plane (the half-space z ≤ 0) unless `ground=False`, default step settings (δt = 1 ms,
//! lagged approximation), no actuators with control laws, 2 s.

use std::path::Path;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use stiction::contact::Approximation;
use stiction::control::Controller;
use stiction::error::{Error, Result};
use stiction::import::{load_model, Base, ImportOptions, PackagePath};
use stiction::math::Pose;
use stiction::nalgebra::Vector3;
use stiction::problem::{load_problem, Problem};
use stiction::scene::description::BodyMotion;
use stiction::solver::linalg::LinearSolver;
use stiction::step::{Simulator, State};

/// Simulated duration of a robot model file (s), as `stiction simulate ROBOT.urdf`.
pub const ROBOT_DURATION: f64 = 2.0;

/// The keyword arguments `load` accepts.
pub const OVERRIDES: &[&str] = &[
    "dt",
    "approximation",
    "linear_solver",
    "duration",
    "floating",
    "package_path",
    "position",
    "ground",
];

/// The overrides of a load, as the command line's flags.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// Time step δt (s) (`--dt`).
    pub dt: Option<f64>,
    /// Contact approximation (`--approximation`).
    pub approximation: Option<Approximation>,
    /// Linear solver of the Newton step (`--linear-solver`).
    pub linear_solver: Option<LinearSolver>,
    /// Duration (s) (`--duration`).
    pub duration: Option<f64>,
    /// Robot models: floating base (`--floating`).
    pub floating: Option<bool>,
    /// Robot models: NAME=DIR package folders (`--package-path`).
    pub package_path: Vec<String>,
    /// Robot models: the root's position (m) (`--position`).
    pub position: Option<[f64; 3]>,
    /// Robot models: a ground plane (default true; `--no-ground` is `false`).
    pub ground: Option<bool>,
}

fn parse_str<T: std::str::FromStr<Err = Error>>(
    py: Python<'_>,
    v: &Bound<'_, PyAny>,
    key: &str,
) -> PyResult<T> {
    let s: String = v
        .extract()
        .map_err(|_| PyTypeError::new_err(format!("{key} must be a string")))?;
    s.parse::<T>().map_err(|e| crate::errors::to_py(py, &e))
}

impl Overrides {
    /// Reads the keyword arguments of `load`.
    ///
    /// # Errors
    /// `TypeError` for an unknown keyword or a value of the wrong type; the library's error
    /// for a name it does not know (`approximation="foo"`).
    pub fn from_kwargs(py: Python<'_>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut o = Overrides::default();
        let Some(kwargs) = kwargs else {
            return Ok(o);
        };
        for (k, v) in kwargs.iter() {
            let key: String = k.extract()?;
            let number = |v: &Bound<'_, PyAny>| -> PyResult<f64> {
                v.extract::<f64>()
                    .map_err(|_| PyTypeError::new_err(format!("{key} must be a number")))
            };
            let flag = |v: &Bound<'_, PyAny>| -> PyResult<bool> {
                v.extract::<bool>()
                    .map_err(|_| PyTypeError::new_err(format!("{key} must be True or False")))
            };
            match key.as_str() {
                "dt" => o.dt = Some(number(&v)?),
                "duration" => o.duration = Some(number(&v)?),
                "approximation" => o.approximation = Some(parse_str(py, &v, &key)?),
                "linear_solver" => o.linear_solver = Some(parse_str(py, &v, &key)?),
                "floating" => o.floating = Some(flag(&v)?),
                "ground" => o.ground = Some(flag(&v)?),
                "package_path" => {
                    o.package_path = if let Ok(s) = v.extract::<String>() {
                        vec![s]
                    } else {
                        v.extract::<Vec<String>>().map_err(|_| {
                            PyTypeError::new_err(
                                "package_path must be a string NAME=DIR or a list of them",
                            )
                        })?
                    }
                }
                "position" => {
                    let p: Vec<f64> = v.extract().map_err(|_| {
                        PyTypeError::new_err("position must be three numbers (x, y, z) in m")
                    })?;
                    o.position = Some(p.try_into().map_err(|p: Vec<f64>| {
                        crate::errors::value_error(format!(
                            "position must be three numbers (x, y, z) in m, found {} numbers",
                            p.len()
                        ))
                    })?);
                }
                _ => {
                    return Err(PyTypeError::new_err(format!(
                        "load() got an unexpected keyword argument '{key}'; the overrides are {}",
                        OVERRIDES.join(", ")
                    )))
                }
            }
        }
        Ok(o)
    }

    fn robot_only(&self) -> Option<&'static str> {
        [
            (self.floating.is_some(), "floating"),
            (!self.package_path.is_empty(), "package_path"),
            (self.position.is_some(), "position"),
            (self.ground.is_some(), "ground"),
        ]
        .into_iter()
        .find_map(|(given, name)| given.then_some(name))
    }
}

/// The parts of a problem that a Simulator runs (taken out of a [`Problem`] by name, so that
/// fields the library adds to it need nothing here).
#[derive(Debug)]
pub struct Runnable {
    /// Name (the file stem).
    pub name: String,
    /// The simulator (model, geometry, step settings).
    pub simulator: Simulator,
    /// The control laws of the actuators that have one.
    pub controller: Controller,
    /// Initial state at t = 0.
    pub initial_state: State,
    /// Duration (s).
    pub duration: f64,
}

/// A loaded problem with the names of its joints.
#[derive(Debug)]
pub struct Loaded {
    /// The problem (simulator, controller, initial state, duration).
    pub problem: Runnable,
    /// One name per joint of the model (a joint without a name of its own is known by its
    /// body's name).
    pub joint_names: Vec<String>,
}

/// Whether `path` names a robot model file (`.urdf`, `.xml`) rather than a problem file.
pub fn is_model(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("urdf") || e.eq_ignore_ascii_case("xml"))
}

/// Loads `path` with `overrides` applied, as `stiction simulate` does.
///
/// # Errors
/// The reader's located errors, and invalid overrides.
pub fn load(path: &Path, overrides: &Overrides) -> Result<Loaded> {
    let mut loaded = if is_model(path) {
        robot(path, overrides)?
    } else {
        if let Some(name) = overrides.robot_only() {
            return Err(Error::invalid(
                name,
                path.display(),
                "applies to robot model files (.urdf, .xml) only",
            ));
        }
        let Problem {
            name,
            simulator,
            controller,
            initial_state,
            duration,
            ..
        } = load_problem(path)?;
        let joint_names = simulator
            .model
            .bodies
            .iter()
            .map(|b| b.name.clone())
            .collect();
        Loaded {
            problem: Runnable {
                name,
                simulator,
                controller,
                initial_state,
                duration,
            },
            joint_names,
        }
    };
    let settings = &mut loaded.problem.simulator.settings;
    if let Some(a) = overrides.approximation {
        settings.approximation = a;
    }
    if let Some(dt) = overrides.dt {
        settings.dt = dt;
    }
    if let Some(l) = overrides.linear_solver {
        settings.solver.linear_solver = l;
    }
    settings.validate()?;
    if let Some(d) = overrides.duration {
        if !(d > 0.0 && d.is_finite()) {
            return Err(Error::invalid(
                "duration",
                d,
                "the simulated duration must be positive and finite (s)",
            ));
        }
        loaded.problem.duration = d;
    }
    Ok(loaded)
}

/// The robot at `path` as `stiction simulate ROBOT.urdf` makes it a problem.
fn robot(path: &Path, overrides: &Overrides) -> Result<Loaded> {
    let mut package_path = PackagePath::default();
    for entry in &overrides.package_path {
        package_path
            .push_named(entry)
            .map_err(|reason| Error::invalid("package_path", entry, &reason))?;
    }
    let pose = match overrides.position {
        None => Pose::identity(),
        Some([x, y, z]) if [x, y, z].iter().all(|c| c.is_finite()) => {
            Pose::translation(Vector3::new(x, y, z))
        }
        Some(p) => {
            return Err(Error::invalid(
                "position",
                format!("{p:?}"),
                "expected three finite numbers (m)",
            ))
        }
    };
    let options = ImportOptions {
        pose,
        base: if overrides.floating == Some(true) {
            Base::Floating
        } else {
            Base::Fixed
        },
        package_path: package_path.with_env(),
        ..ImportOptions::default()
    };
    let mut description = load_model(path, &options)?.description;
    if overrides.ground != Some(false) && !description.add_ground() {
        return Err(Error::invalid(
            "ground",
            path.display(),
            "the model has a geometry called `ground`; load it with ground=False or rename it",
        ));
    }
    let built = description.build().map_err(|e| Error::ModelFile {
        path: path.to_path_buf(),
        line: None,
        element: "(model)".into(),
        message: Error::from(e).to_string(),
    })?;
    let model = &built.simulator.model;
    let mut joint_names: Vec<String> = model.bodies.iter().map(|b| b.name.clone()).collect();
    for body in &description.bodies {
        if let (BodyMotion::Jointed(j), Some(i)) = (&body.motion, model.body_index(&body.name)) {
            if let Some(name) = &j.joint_name {
                joint_names[i] = name.clone();
            }
        }
    }
    let name = path
        .file_stem()
        .map_or_else(|| "robot".into(), |s| s.to_string_lossy().into_owned());
    Ok(Loaded {
        problem: Runnable {
            name,
            simulator: built.simulator,
            controller: built.controller,
            initial_state: built.initial_state,
            duration: ROBOT_DURATION,
        },
        joint_names,
    })
}
