//! Shared by the integration tests: the shipped problem files.

use std::path::PathBuf;

use stiction::contact::Approximation;
use stiction::problem::{load_problem, Problem};

/// Loads `problems/NAME.toml` with the given approximation and time step (s).
pub fn problem(name: &str, approximation: Approximation, dt: f64) -> Problem {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("problems")
        .join(format!("{name}.toml"));
    let mut p = load_problem(&path).expect("shipped problem loads");
    p.simulator.settings.approximation = approximation;
    p.simulator.settings.dt = dt;
    p
}
