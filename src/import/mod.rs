//! Robot importers: model files written for other tools become a
//! [`SceneDescription`], the plain data every front-end of the
//! crate produces (see [`crate::scene::description`]), ready for
//! [`SceneDescription::build`] or to join other bodies
//! in one scene.
//!
//! - URDF ([`urdf`], ROS's Unified Robot Description Format, <http://wiki.ros.org/urdf/XML>):
//!   links with inertials, joints (revolute, continuous, prismatic, fixed, floating, planar)
//!   with origin, axis, limits, dynamics and mimic, collision geometry (box, cylinder,
//!   sphere, capsule, mesh). Visuals and materials do not change the dynamics and are not
//!   read.
//! - MJCF ([`mjcf`], MuJoCo's XML format): body trees, joints, geoms, defaults, includes,
//!   compiler settings, inertia from geoms, joint equalities and actuators, as MuJoCo's
//!   compiler reads them (the joints in MuJoCo's order, `q` equal to MuJoCo's `qpos`).
//!
//! Supporting files: [`package`] resolves `package://NAME/…`, `file://…` and relative mesh
//! paths with a ROS-style search path; [`mesh`] reads STL (binary and ASCII) and OBJ meshes
//! and makes each collision mesh its convex hull.
//!
//! What an importer produces: bodies named after the file's links (with an optional
//! prefix), parents before children in the file's depth-first order, so that the joints'
//! coordinates in `q` and `v` follow that order; one geometry per collision element; joint
//! damping as the model's viscous damping; joint limits, Coulomb friction and couplers on
//! the description, which the step enforces as constraint rows
//! ([`crate::step::constraints`]); no
//! actuators for URDF (the joints are unactuated until a problem file or code adds them),
//! MJCF's own actuators. Errors name the file, the line, the element and what was expected
//! ([`Error::ModelFile`] for URDF, [`Error::ProblemFile`] for MJCF).

pub mod mesh;
pub mod mjcf;
pub mod package;
pub mod urdf;

use std::path::Path;

use crate::error::{Error, Result};
use crate::math::Pose;
use crate::scene::SceneDescription;

pub use package::PackagePath;

/// How the robot's root link joins the world.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Base {
    /// Welded to the world at [`ImportOptions::pose`] (an arm on a table). The default.
    #[default]
    Fixed,
    /// On a free joint to the world, starting at [`ImportOptions::pose`] (a legged robot, a
    /// thrown object): `q` gains the root's position and orientation quaternion, `v` its
    /// angular and linear velocity (see [`crate::scene::description`]).
    Floating,
}

/// Options of an import.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportOptions {
    /// Fixed (default) or floating base.
    pub base: Base,
    /// Pose `X_WR` of the root link in the world at `q0` (m), default the identity.
    pub pose: Pose<f64>,
    /// Prefixed to every body, joint and geometry name (default empty), so that two copies
    /// of a robot can share a scene.
    pub prefix: String,
    /// Where `package://NAME/…` paths are looked for (default empty: only the model file's
    /// own ancestors; [`PackagePath::from_env`] adds `STICTION_PACKAGE_PATH`).
    pub package_path: PackagePath,
    /// A URDF's collision meshes as their convex parts ([`mesh::convex_decomposition`],
    /// one geometry `NAME#k` each) instead of their convex hulls (default false). MJCF mesh
    /// geoms stay hulls, as MuJoCo collides with them.
    pub convex_decomposition: bool,
    /// A URDF link from which to import: only it and the links below it become bodies and
    /// geometries (a gripper out of an arm's file), default `None`, the file's root. The
    /// link then takes the root's place: [`ImportOptions::pose`] places it, on the base
    /// chosen by [`ImportOptions::base`].
    pub root: Option<String>,
    /// The body of the scene that a fixed base is welded to (by a fixed joint at
    /// [`ImportOptions::pose`] in that body's frame), default `None`, the world. The body is
    /// not in the file: it comes before the model in the scene (a slide that carries a
    /// gripper). The root then always keeps its own body, which needs a mass.
    pub parent: Option<String>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            base: Base::Fixed,
            pose: Pose::identity(),
            prefix: String::new(),
            package_path: PackagePath::default(),
            convex_decomposition: false,
            root: None,
            parent: None,
        }
    }
}

/// An imported model: its scene description and what the importer wants the user to know
/// (a DAE mesh replaced by an STL beside it, elements skipped because they do not change the
/// dynamics), one line each.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportedModel {
    /// The robot's bodies, geometries, limits and couplers; default step settings and
    /// gravity; no ground.
    pub description: SceneDescription,
    /// Notes for the user, one line each.
    pub notes: Vec<String>,
}

/// Reads the robot model at `path`, choosing the importer by the file's extension: `.urdf`
/// (URDF) or `.xml` (MJCF).
///
/// # Errors
/// [`Error::ModelFile`] for an unknown extension, a file that cannot be read, or anything
/// its importer refuses (with the line and element).
pub fn load_model(path: &Path, options: &ImportOptions) -> Result<ImportedModel> {
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("urdf") => urdf::read_urdf(path, options),
        Some("xml") => {
            let defaults = ImportOptions::default();
            if (options.base, options.pose, options.prefix.as_str())
                != (defaults.base, defaults.pose, defaults.prefix.as_str())
                || options.root.is_some()
                || options.parent.is_some()
            {
                return Err(model_error(
                    path,
                    None,
                    "(file)",
                    "an MJCF file places its own bodies: the base, pose, prefix, root and parent options apply to URDF files",
                ));
            }
            let model = mjcf::load(path)?;
            Ok(ImportedModel {
                description: model.description,
                notes: model.report.summary().into_iter().collect(),
            })
        }
        _ => Err(model_error(
            path,
            None,
            "(file)",
            "expected a robot model: a `.urdf` (URDF) or `.xml` (MJCF) file",
        )),
    }
}

/// Shorthand for [`Error::ModelFile`].
pub(crate) fn model_error(
    path: &Path,
    line: Option<usize>,
    element: &str,
    message: impl Into<String>,
) -> Error {
    Error::ModelFile {
        path: path.to_path_buf(),
        line,
        element: element.to_string(),
        message: message.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_model_dispatches_on_the_extension() {
        let options = ImportOptions::default();
        let e = load_model(Path::new("/nonexistent/robot.xml"), &options).expect_err("no file");
        assert!(e.to_string().contains("/nonexistent/robot.xml"), "{e}");
        let floating = ImportOptions {
            base: Base::Floating,
            ..ImportOptions::default()
        };
        let e = load_model(Path::new("robot.xml"), &floating).expect_err("options");
        assert!(e.to_string().contains("apply to URDF files"), "{e}");
        let e = load_model(Path::new("robot.sdf"), &options).expect_err("not a model");
        assert!(e.to_string().contains("expected a robot model"), "{e}");
        let e =
            load_model(Path::new("/nonexistent/robot.urdf"), &options).expect_err("no such file");
        assert!(
            e.to_string()
                .starts_with("/nonexistent/robot.urdf: (file): cannot read"),
            "{e}"
        );
    }
}
