//! Computing the papers' figures from a test, shared by `tests/figures.rs`,
//! `tests/geared_finger.rs`, `tests/grasp_stress.rs` and `tests/panda_push_ball.rs`: the
//! checkout's problem files (with example-robot-data on the package path for the robot
//! figures), a figure at a quality, and its numbers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use stiction::error::Result;
use stiction::figures::{figure, Loader, PaperFigure, Quality};
use stiction::problem::{load_problem, Problem};

/// Loads `problems/NAME.toml` of the checkout.
pub fn load(name: &str) -> Result<Problem> {
    load_problem(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("problems")
            .join(format!("{name}.toml")),
    )
}

/// example-robot-data's folder in the venv of `scripts/robots/setup.sh`
/// (`STICTION_ROBOTS_VENV`, default `.venv-robots`).
pub fn package_dir() -> PathBuf {
    let venv = std::env::var_os("STICTION_ROBOTS_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv-robots"));
    let lib = venv.join("lib");
    std::fs::read_dir(&lib)
        .unwrap_or_else(|e| {
            panic!(
                "no robot venv at {}: run scripts/robots/setup.sh ({e})",
                venv.display()
            )
        })
        .filter_map(|e| e.ok())
        .map(|e| {
            e.path()
                .join("site-packages/cmeel.prefix/share/example-robot-data")
        })
        .find(|p| p.is_dir())
        .unwrap_or_else(|| panic!("example-robot-data is not installed in {}", lib.display()))
}

/// Loads `problems/NAME.toml` of the checkout with example-robot-data on the package path.
pub fn load_with_robots(name: &str) -> Result<Problem> {
    std::env::set_var(
        "STICTION_PACKAGE_PATH",
        format!("example-robot-data={}", package_dir().display()),
    );
    load(name)
}

/// Figure `name` at `quality`, its problems read by `loader`.
pub fn made_with(loader: Loader<'_>, name: &str, quality: Quality) -> PaperFigure {
    let spec = figure(name).expect("a listed figure");
    (spec.compute)(loader, quality).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The quick version of figure `name`.
pub fn quick(name: &str) -> PaperFigure {
    made_with(&load, name, Quality::Quick)
}

/// The full version of figure `name` (the paper's set-up).
pub fn full(name: &str) -> PaperFigure {
    made_with(&load, name, Quality::Full)
}

/// The number `key` of `fig`.
pub fn n(fig: &PaperFigure, key: &str) -> f64 {
    fig.number(key)
        .unwrap_or_else(|e| panic!("{}: {e}", fig.name))
}
