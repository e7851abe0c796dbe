//! Scaffolding shared by the per-approximation table examples (`falling_sphere`,
//! `conveyor_oscillating`, `sliding_rod`, `sliding_box`, `conveyor_constant`).
//!
//! Each of them runs one shipped problem, `problems/<case>.toml`, once for every contact
//! approximation and prints one table row per run. [`table`] does the loading, running and
//! printing; an example supplies only its columns. Included with `mod common;` (cargo builds
//! no example from a subdirectory's `mod.rs`).

use std::path::Path;

use stiction::contact::Approximation;
use stiction::error::Result;
use stiction::problem::{load_problem, Problem};
use stiction::simulate::{run, Recording};

/// Width of the first column, the approximation's name.
const NAME_WIDTH: usize = 18;

/// Prints a table of `problems/<case>.toml` with one row per [`Approximation`].
///
/// The first column, the approximation's name, is printed here: `header` and the strings
/// returned by `row` are the remaining columns. For every approximation the problem is loaded
/// afresh, its `settings.approximation` set, and it is run for its duration; `row` then
/// receives the problem after the run (model, geometry, settings) and the recording. A
/// failure to load, run or evaluate the row prints `failed: <error>` in place of the columns.
pub fn table(case: &str, header: &str, row: impl Fn(&Problem, &Recording) -> Result<String>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("problems/{case}.toml"));
    println!("{:<NAME_WIDTH$}  {header}", "approximation");
    for approximation in Approximation::ALL {
        let name = approximation.name();
        match simulate(&path, approximation).and_then(|(problem, rec)| row(&problem, &rec)) {
            Ok(columns) => println!("{name:<NAME_WIDTH$}  {columns}"),
            Err(e) => println!("{name:<NAME_WIDTH$}  failed: {e}"),
        }
    }
}

/// Loads the problem at `path`, sets its approximation and runs it for its duration.
fn simulate(path: &Path, approximation: Approximation) -> Result<(Problem, Recording)> {
    let mut problem = load_problem(path)?;
    problem.simulator.settings.approximation = approximation;
    let rec = run(
        &mut problem.simulator,
        &problem.initial_state,
        problem.duration,
        |_, _| {},
    )?;
    Ok((problem, rec))
}
