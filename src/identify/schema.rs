//! Identification problem files (`problems/identify/*.toml`, format in `problems/README.md`):
//! the scene (a simulation problem file), the parameters with their start values and
//! transforms, the measured trajectories and the solver.
//!
//! Relative paths (`scene`, `data[].file`) are relative to the identification file. Unknown
//! fields are errors; every error names the file and the field.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::budget;
use crate::error::{Error, Result};
use crate::identify::data::read_trajectory_csv;
use crate::identify::loss::Loss;
use crate::identify::observe::is_tree_body_column;
use crate::identify::params::{ParamSpec, Transform, Unknown};
use crate::identify::report::{IdentifySettings, Intervals, Method, Shooting};
use crate::identify::residuals::IdentificationProblem;
use crate::problem::locate::locate;
use crate::problem::{load_problem, TextLocation};
use crate::simulate::recording_bytes_per_step;

/// A whole identification file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdentificationSpec {
    /// One line shown in reports.
    #[serde(default)]
    pub description: String,
    /// The simulation problem file of the scene.
    pub scene: PathBuf,
    /// `levenberg-marquardt` (default) or `lbfgs`.
    pub method: Option<String>,
    /// Iteration limit (default 50 for Levenberg–Marquardt, 100 for L-BFGS).
    pub max_iterations: Option<usize>,
    /// Horizon continuation stages (default 3, see [`IdentifySettings::stages`]).
    pub stages: Option<usize>,
    /// Number of starts (default 4, see [`IdentifySettings::starts`]).
    pub starts: Option<usize>,
    /// Seed of the start points (default 0).
    pub seed: Option<u64>,
    /// Samples per multiple-shooting segment; 0 turns multiple shooting off (default: on for
    /// records of at least 1000 steps, about 20 segments per record).
    pub segment_samples: Option<usize>,
    /// `profile` (default) or `wald`.
    pub intervals: Option<String>,
    /// `squared` (default) or `huber`.
    pub loss: Option<String>,
    /// Huber threshold δ in units of σ (default 1.345).
    pub huber_threshold: Option<f64>,
    /// Default measured columns of every data file (default: all columns of tree bodies).
    pub columns: Option<Vec<String>>,
    /// Default noise level σ of every data file (default: unknown, estimated).
    pub noise: Option<f64>,
    /// Parameters to identify.
    #[serde(rename = "parameter")]
    pub parameters: Vec<ParameterSpec>,
    /// Measured trajectories.
    #[serde(default, rename = "data")]
    pub data: Vec<DataSpec>,
}

/// `[[parameter]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParameterSpec {
    /// A parameter name (`friction`, `stiffness@ground`, `mass@box`, …), a record's initial
    /// velocity (`velocity.x@box`, `angular_velocity.z@box`, `v0@link`) or its clock offset
    /// (`time_offset`); see [`crate::identify::Unknown`].
    pub name: String,
    /// Start value (default: the scene's value; 0 for the clock offset).
    pub initial: Option<f64>,
    /// `log` (default for scene parameters), `identity` (default for initial velocities and
    /// the clock offset) or `logistic` (with `lower` and `upper`).
    pub transform: Option<String>,
    /// Lower bound: of `logistic`, or the search bound of `log` and `identity`.
    pub lower: Option<f64>,
    /// Upper bound: of `logistic`, or the search bound of `log` and `identity`.
    pub upper: Option<f64>,
}

/// `[[data]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataSpec {
    /// A trajectory CSV as written by `stiction simulate`.
    pub file: PathBuf,
    /// Measured columns of this file (default: the top-level `columns`).
    pub columns: Option<Vec<String>>,
    /// Noise level σ of this file (default: the top-level `noise`).
    pub noise: Option<f64>,
}

/// A loaded identification file, ready to run.
#[derive(Debug)]
pub struct IdentificationFile {
    /// One-line description.
    pub description: String,
    /// The problem, with its data.
    pub problem: IdentificationProblem,
    /// Solver settings.
    pub settings: IdentifySettings,
}

/// An error at `field` of the file `path`, located in its `text` (empty when unread).
fn err(
    path: &Path,
    text: &str,
    field: &str,
    expected: &str,
    found: impl std::fmt::Display,
) -> Error {
    Error::ProblemFile {
        path: path.to_path_buf(),
        location: locate(text, field),
        field: field.to_string(),
        expected: expected.to_string(),
        found: found.to_string(),
    }
}

/// Loads the identification file `path`; `data`, when given, replaces the file's data files
/// (each read with the top-level `columns` and `noise`).
///
/// # Errors
/// [`Error::ProblemFile`] naming the file and field for malformed TOML, unknown fields and
/// invalid values (and the scene's own errors); [`Error::DataFile`] for unreadable or
/// inconsistent data.
pub fn load_identification(path: &Path, data: Option<&[PathBuf]>) -> Result<IdentificationFile> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        err(
            path,
            "",
            "(file)",
            "a readable UTF-8 identification file",
            e,
        )
    })?;
    let spec: IdentificationSpec = serde_path_to_error::deserialize(toml::Deserializer::new(&text))
        .map_err(|e| {
            let field = e.path().to_string();
            let inner = e.into_inner();
            let mut error = err(
                path,
                &text,
                &field,
                "a field of problems/README.md \"Identification problems\"",
                inner.message().trim(),
            );
            if let (Error::ProblemFile { location, .. }, Some(span)) = (&mut error, inner.span()) {
                *location = Some(TextLocation::of_offset(&text, span.start));
            }
            error
        })?;
    let base = path.parent().unwrap_or(Path::new(""));
    let scene = load_problem(&base.join(&spec.scene))?;
    let sim = &scene.simulator;

    let parameters =
        spec.parameters
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let field = |f: &str| format!("parameter[{i}].{f}");
                // Initial velocities and the clock offset may be zero or negative.
                let default = match Unknown::parse(sim, &p.name) {
                    Ok(u) if u.per_record() => "identity",
                    _ => "log",
                };
                let (transform, search) = match (p.transform.as_deref().unwrap_or(default), p.lower, p.upper) {
                    ("log", None, None) => (Transform::Log, None),
                    ("log", Some(lower), Some(upper)) => (Transform::Log, Some((lower, upper))),
                    ("identity", None, None) => (Transform::Identity, None),
                    ("identity", Some(lower), Some(upper)) => (Transform::Identity, Some((lower, upper))),
                    ("logistic", Some(lower), Some(upper)) => (Transform::Logistic { lower, upper }, None),
                    (t, ..) => return Err(err(
                        path,
                        &text,
                        &field("transform"),
                        "`log` or `identity` with both or neither of `lower` and `upper`, or `logistic` with both",
                        format!("`{t}` with lower = {:?}, upper = {:?}", p.lower, p.upper),
                    )),
                };
                let spec = ParamSpec::new(sim, &p.name, p.initial)
                    .map(|s| match p.initial {
                        Some(_) => s,
                        None => s.starting_from(&scene.initial_state),
                    })
                    .and_then(|s| s.with_transform(transform))
                    .map_err(|e| {
                        err(
                            path,
                            &text,
                            &field("name"),
                            "a valid parameter and start value",
                            e,
                        )
                    })?;
                match search {
                    Some((lower, upper)) => spec.with_bounds(lower, upper).map_err(|e| {
                        err(
                            path,
                            &text,
                            &field("lower"),
                            "finite bounds lower < upper that include the initial value",
                            e,
                        )
                    }),
                    None => Ok(spec),
                }
            })
            .collect::<Result<Vec<_>>>()?;
    // One parameter listed twice would get two contradictory estimates of one value.
    for (j, p) in spec.parameters.iter().enumerate() {
        if let Some(i) = spec.parameters[..j].iter().position(|q| q.name == p.name) {
            return Err(err(
                path,
                &text,
                &format!("parameter[{j}].name"),
                &format!(
                    "a parameter not listed before (parameter[{i}] is `{}`)",
                    p.name
                ),
                format!("`{}` again", p.name),
            ));
        }
    }

    let dt = sim.settings.dt;
    let entries: Vec<(PathBuf, Option<Vec<String>>, Option<f64>)> = match data {
        Some(files) => files
            .iter()
            .map(|f| (f.clone(), spec.columns.clone(), spec.noise))
            .collect(),
        None => spec
            .data
            .iter()
            .map(|d| {
                (
                    base.join(&d.file),
                    d.columns.clone().or_else(|| spec.columns.clone()),
                    d.noise.or(spec.noise),
                )
            })
            .collect(),
    };
    if entries.is_empty() {
        return Err(err(
            path,
            &text,
            "data",
            "at least one `[[data]]` file (or data files on the command line)",
            "none",
        ));
    }
    // A rollout to the last sample keeps a state, a step report and the state Jacobian
    // (2nv × 2nv) per step.
    let (nq, nv) = (sim.model.nq(), sim.model.nv());
    let per_step = recording_bytes_per_step(nq, nv) + 8 * 4 * nv * nv;
    let trajectories = entries
        .into_iter()
        .map(|(file, columns, noise)| {
            let all = read_trajectory_csv(&file, dt, noise)?;
            let t_last = all.times.last().copied().unwrap_or(0.0);
            budget::steps("the last sample's t", t_last, dt, per_step).map_err(|e| {
                Error::DataFile {
                    path: file.clone(),
                    message: format!("the rollout to the last sample does not fit in memory: {e}"),
                }
            })?;
            let columns = columns.unwrap_or_else(|| {
                all.columns
                    .iter()
                    .filter(|c| is_tree_body_column(&sim.model, c))
                    .cloned()
                    .collect()
            });
            all.select(&columns)
        })
        .collect::<Result<Vec<_>>>()?;

    let method = match spec.method.as_deref() {
        None | Some("levenberg-marquardt") => Method::LevenbergMarquardt,
        Some("lbfgs") => Method::Lbfgs,
        Some(m) => {
            return Err(err(
                path,
                &text,
                "method",
                "`levenberg-marquardt` or `lbfgs`",
                format!("`{m}`"),
            ))
        }
    };
    let loss = match (spec.loss.as_deref(), spec.huber_threshold) {
        (None | Some("squared"), None) => Loss::Squared,
        (Some("huber"), threshold) => {
            let threshold = threshold.unwrap_or(1.345);
            if !(threshold > 0.0 && threshold.is_finite()) {
                return Err(err(
                    path,
                    &text,
                    "huber_threshold",
                    "a positive number",
                    threshold,
                ));
            }
            Loss::Huber { threshold }
        }
        (l, t) => {
            return Err(err(
                path,
                &text,
                "loss",
                "`squared`, or `huber` with an optional `huber_threshold`",
                format!("{l:?} with huber_threshold = {t:?}"),
            ))
        }
    };
    let mut settings = IdentifySettings {
        method,
        ..IdentifySettings::default()
    };
    if let Some(n) = spec.stages {
        if n == 0 {
            return Err(err(path, &text, "stages", "a number of stages ≥ 1", n));
        }
        settings.stages = n;
    }
    if let Some(n) = spec.starts {
        if n == 0 {
            return Err(err(path, &text, "starts", "a number of starts ≥ 1", n));
        }
        settings.starts = n;
    }
    if let Some(seed) = spec.seed {
        settings.seed = seed;
    }
    match spec.segment_samples {
        None => {}
        Some(0) => settings.shooting = Shooting::Off,
        Some(1) => {
            return Err(err(
                path,
                &text,
                "segment_samples",
                "0 (off) or at least 2 samples per segment",
                1,
            ))
        }
        Some(n) => settings.shooting = Shooting::Segments(n),
    }
    settings.intervals = match spec.intervals.as_deref() {
        None | Some("profile") => Intervals::Profile,
        Some("wald") => Intervals::Wald,
        Some(other) => {
            return Err(err(
                path,
                &text,
                "intervals",
                "`profile` or `wald`",
                format!("`{other}`"),
            ))
        }
    };
    if let Some(n) = spec.max_iterations {
        settings.lm.max_iterations = n;
        settings.lbfgs.max_iterations = n as u64;
    }
    let name = path.file_stem().map_or_else(
        || "identification".into(),
        |s| s.to_string_lossy().into_owned(),
    );
    let mut problem = IdentificationProblem::new(
        &name,
        scene.simulator,
        scene.initial_state,
        parameters,
        trajectories,
    )?;
    problem.loss = loss;
    Ok(IdentificationFile {
        description: spec.description,
        problem,
        settings,
    })
}
