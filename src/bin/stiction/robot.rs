//! Robot model files on the command line: the options `stiction simulate ROBOT.urdf` and
//! `stiction inspect` share, and a robot as a [`Problem`] (the robot, a ground plane, the
//! default step settings, [`DEFAULT_DURATION`]).

use std::path::{Path, PathBuf};

use clap::Args;
use nalgebra::Vector3;

use stiction::error::{Error, Result};
use stiction::import::{load_model, Base, ImportOptions, ImportedModel, PackagePath};
use stiction::math::Pose;
use stiction::ncp::NcpSettings;
use stiction::problem::{OutputSettings, Problem, Stepper};

/// Simulated duration of a robot model file (s).
pub const DEFAULT_DURATION: f64 = 2.0;

/// How a robot model file becomes a scene.
#[derive(Args, Clone, Debug, Default)]
pub struct RobotArgs {
    /// Robot models: put the root link on a free joint (a floating base) instead of welding
    /// it to the world.
    #[arg(long)]
    pub floating: bool,
    /// Folder of a package that `package://NAME/…` mesh paths name: NAME=DIR, repeatable;
    /// searched before the entries of STICTION_PACKAGE_PATH (`:`-separated NAME=DIR or
    /// folders holding packages) and the model file's ancestors called NAME.
    #[arg(long = "package-path", value_name = "NAME=DIR")]
    pub package_path: Vec<String>,
    /// Robot models: the root link's position in the world (m), default 0,0,0 (a floating
    /// robot starts there, a fixed one is welded there).
    #[arg(
        long,
        value_name = "X,Y,Z",
        value_delimiter = ',',
        allow_negative_numbers = true
    )]
    pub position: Option<Vec<f64>>,
    /// URDF models: each collision mesh as its convex parts (V-HACD) instead of its convex
    /// hull, for non-convex links.
    #[arg(long)]
    pub convex_decomposition: bool,
}

impl RobotArgs {
    /// The import options these flags ask for.
    pub fn options(&self) -> Result<ImportOptions> {
        let mut package_path = PackagePath::default();
        for entry in &self.package_path {
            package_path
                .push_named(entry)
                .map_err(|reason| Error::invalid("--package-path", entry, &reason))?;
        }
        let pose = match self.position.as_deref() {
            None => Pose::identity(),
            Some(&[x, y, z]) if [x, y, z].iter().all(|c| c.is_finite()) => {
                Pose::translation(Vector3::new(x, y, z))
            }
            Some(other) => {
                return Err(Error::invalid(
                    "--position",
                    format!("{other:?}"),
                    "expected three finite numbers X,Y,Z (m)",
                ))
            }
        };
        Ok(ImportOptions {
            pose,
            base: if self.floating {
                Base::Floating
            } else {
                Base::Fixed
            },
            package_path: package_path.with_env(),
            convex_decomposition: self.convex_decomposition,
            ..ImportOptions::default()
        })
    }

    /// The model at `path`, its notes printed on stderr unless `quiet`.
    pub fn load(&self, path: &Path, quiet: bool) -> Result<ImportedModel> {
        let model = load_model(path, &self.options()?)?;
        if !quiet {
            for note in &model.notes {
                eprintln!("note: {note}");
            }
            let pending = model.description.constraints_not_in_step();
            if !pending.is_empty() {
                eprintln!(
                    "note: read but not modelled by the step: {}",
                    pending.join("; ")
                );
            }
        }
        Ok(model)
    }
}

/// Whether `path` names a robot model file (`.urdf`, `.xml`) rather than a problem file.
pub fn is_model(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("urdf") || e.eq_ignore_ascii_case("xml"))
}

/// The robot at `path` as a problem: on a ground plane (the half-space z ≤ 0) unless
/// `no_ground`, default step settings (δt = 1 ms, lagged approximation), no actuators,
/// [`DEFAULT_DURATION`].
pub fn robot_problem(
    path: &Path,
    args: &RobotArgs,
    no_ground: bool,
    quiet: bool,
) -> Result<Problem> {
    let mut description = args.load(path, quiet)?.description;
    if !no_ground && !description.add_ground() {
        return Err(Error::invalid(
            "--no-ground",
            path.display(),
            "the model has a geometry called `ground`; add --no-ground or rename it",
        ));
    }
    let built = description.build().map_err(|e| Error::ModelFile {
        path: path.to_path_buf(),
        line: None,
        element: "(model)".into(),
        message: Error::from(e).to_string(),
    })?;
    let name = path
        .file_stem()
        .map_or_else(|| "robot".into(), |s| s.to_string_lossy().into_owned());
    Ok(Problem {
        name,
        description: format!("robot model {}", path.display()),
        path: PathBuf::from(path),
        source: String::new(),
        simulator: built.simulator,
        controller: built.controller,
        effort_limits: built.effort_limits,
        initial_state: built.initial_state,
        duration: DEFAULT_DURATION,
        optimize: None,
        output: OutputSettings::default(),
        stepper: Stepper::Convex,
        ncp: NcpSettings::default(),
    })
}
