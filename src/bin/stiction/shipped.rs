//! The problems shipped in `problems/`, compiled into the binary so that `stiction list`, the
//! demo and `stiction simulate NAME` work from any folder.

use std::path::{Path, PathBuf};

use stiction::error::{Error, Result};
use stiction::problem::{load_problem, parse_problem, Problem};

/// (name, TOML text) of every shipped problem, alphabetically.
pub const SHIPPED: &[(&str, &str)] = &[
    (
        "arm-push-sphere",
        include_str!("../../../problems/arm-push-sphere.toml"),
    ),
    (
        "bouncing-sphere",
        include_str!("../../../problems/bouncing-sphere.toml"),
    ),
    (
        "box-pivot",
        include_str!("../../../problems/box-pivot.toml"),
    ),
    (
        "box-tilt-press",
        include_str!("../../../problems/box-tilt-press.toml"),
    ),
    (
        "cam-cleat",
        include_str!("../../../problems/cam-cleat.toml"),
    ),
    ("clutter", include_str!("../../../problems/clutter.toml")),
    (
        "compliant-ball-rest",
        include_str!("../../../problems/compliant-ball-rest.toml"),
    ),
    (
        "compliant-compliant",
        include_str!("../../../problems/compliant-compliant.toml"),
    ),
    (
        "conveyor-constant",
        include_str!("../../../problems/conveyor-constant.toml"),
    ),
    (
        "conveyor-oscillating",
        include_str!("../../../problems/conveyor-oscillating.toml"),
    ),
    (
        "cube-slide",
        include_str!("../../../problems/cube-slide.toml"),
    ),
    (
        "cube-topple",
        include_str!("../../../problems/cube-topple.toml"),
    ),
    (
        "cylinder-roll",
        include_str!("../../../problems/cylinder-roll.toml"),
    ),
    (
        "falling-sphere",
        include_str!("../../../problems/falling-sphere.toml"),
    ),
    (
        "geared-finger",
        include_str!("../../../problems/geared-finger.toml"),
    ),
    (
        "grasp-stress",
        include_str!("../../../problems/grasp-stress.toml"),
    ),
    ("hopper", include_str!("../../../problems/hopper.toml")),
    (
        "panda-push-ball",
        include_str!("../../../problems/panda-push-ball.toml"),
    ),
    (
        "panda-push-box",
        include_str!("../../../problems/panda-push-box.toml"),
    ),
    (
        "pencil-scrub",
        include_str!("../../../problems/pencil-scrub.toml"),
    ),
    (
        "point-vs-hydroelastic",
        include_str!("../../../problems/point-vs-hydroelastic.toml"),
    ),
    (
        "push-ball",
        include_str!("../../../problems/push-ball.toml"),
    ),
    (
        "sliding-box",
        include_str!("../../../problems/sliding-box.toml"),
    ),
    (
        "sliding-rod",
        include_str!("../../../problems/sliding-rod.toml"),
    ),
    (
        "tumbling-box",
        include_str!("../../../problems/tumbling-box.toml"),
    ),
    (
        "xie-cylinder-manipulation",
        include_str!("../../../problems/xie-cylinder-manipulation.toml"),
    ),
];

/// The shipped problem `name`, named `problems/NAME.toml` in errors.
pub fn shipped(name: &str) -> Option<Result<Problem>> {
    SHIPPED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, text)| parse_problem(text, &PathBuf::from(format!("problems/{n}.toml"))))
}

/// The problem in file `path`; if there is no such file and `path` is the name of a shipped
/// problem (`falling-sphere`), that problem.
///
/// # Errors
/// A missing file that is no shipped name either is an error that suggests the closest
/// shipped name and points to `stiction list`; otherwise [`load_problem`]'s errors.
pub fn load(path: &Path) -> Result<Problem> {
    if path.exists() {
        return load_problem(path);
    }
    match path.to_str().and_then(shipped) {
        Some(problem) => problem,
        None => Err(not_found(path)),
    }
}

/// The folder of the shipped identification problems, in the source checkout this binary was
/// built from (their measured data are CSV files beside them, so they are not compiled in).
fn identification_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/identify")
}

/// The names of the shipped identification problems (`identify-all`, …), alphabetically;
/// none when the checkout is gone.
fn identification_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(identification_dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let path = e.path();
            (path.extension()? == "toml").then(|| path.file_stem()?.to_str().map(str::to_string))?
        })
        .collect();
    names.sort();
    names
}

/// The identification file `path`; if there is no such file and `path` is the name of a
/// shipped identification problem (`identify-all`), that problem's file in the checkout.
///
/// # Errors
/// A missing file that is no shipped name either, with the closest shipped identification
/// name when there is a close one.
pub fn identification(path: &Path) -> Result<PathBuf> {
    if path.exists() {
        return Ok(path.to_path_buf());
    }
    if let Some(name) = path.to_str() {
        let shipped = identification_dir().join(format!("{name}.toml"));
        if !name.contains(['/', '\\']) && shipped.exists() {
            return Ok(shipped);
        }
    }
    let names = identification_names();
    Err(missing(
        path,
        names.iter().map(String::as_str),
        "`stiction list --dir problems/identify` in the source checkout lists them",
    ))
}

/// The error for `path`, neither a file nor a shipped problem: the closest shipped name (by
/// the file stem's edit distance, when it is close) and where the names are listed.
pub fn not_found(path: &Path) -> Error {
    missing(
        path,
        SHIPPED.iter().map(|(name, _)| *name),
        "`stiction list` shows the shipped problems",
    )
}

/// `path` is missing: the closest of `names` to its stem when it is close, and `listed`, where
/// the names are listed.
fn missing<'a>(path: &Path, names: impl Iterator<Item = &'a str>, listed: &str) -> Error {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let closest = names
        .map(|name| (strsim::damerau_levenshtein(&stem, name), name))
        .min();
    let suggestion = match closest {
        Some((distance, name)) if distance <= name.len() / 3 + 1 => {
            format!("did you mean `{name}`? ")
        }
        _ => String::new(),
    };
    Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("no such file, nor a shipped problem of that name; {suggestion}({listed})"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A misspelt name suggests the shipped one; a name far from every shipped one does not.
    #[test]
    fn a_misspelt_name_suggests_the_shipped_problem() {
        let e = load(Path::new("falling-sphre")).unwrap_err().to_string();
        assert!(e.contains("did you mean `falling-sphere`?"), "{e}");
        assert!(
            e.contains("`stiction list` shows the shipped problems"),
            "{e}"
        );
        let e = load(Path::new("problems/clutterr.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean `clutter`?"), "{e}");
        let e = load(Path::new("quadruped-on-ice")).unwrap_err().to_string();
        assert!(!e.contains("did you mean"), "{e}");
    }

    /// `stiction identify identify-all` finds the shipped file in the checkout; a misspelt
    /// identification name suggests the right one.
    #[test]
    fn identification_problems_are_found_by_name() {
        let path = identification(Path::new("identify-all")).unwrap();
        assert_eq!(path, identification_dir().join("identify-all.toml"));
        assert!(identification_names().contains(&"identify-friction".to_string()));
        let e = identification(Path::new("identify-frction"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean `identify-friction`?"), "{e}");
    }
}
