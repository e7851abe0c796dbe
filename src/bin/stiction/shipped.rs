//! The problems shipped in `problems/`, compiled into the binary so that `stiction list`, the
//! demo and `stiction simulate NAME` work from any folder.

use std::path::{Path, PathBuf};

use stiction::error::Result;
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
    ("hopper", include_str!("../../../problems/hopper.toml")),
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
pub fn load(path: &Path) -> Result<Problem> {
    match path.to_str().filter(|_| !path.exists()).and_then(shipped) {
        Some(problem) => problem,
        None => load_problem(path),
    }
}
