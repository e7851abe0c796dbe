//! ICF Sec. IX-C: Painlevé's paradox. A rod sliding at 10 m/s with μ = 2.3 > 4/3 jams into
//! the ground (`‖v_t‖` drops to ~0 for a fraction of a millisecond) and jumps.
//!
//! The normal force oscillates at the contact's natural frequency, rises sharply, and the
//! rod leaves the ground after the jam. No approximation may fail or produce NaN.
//!
//! `cargo run --release --example sliding_rod`

use std::path::Path;

use stiction::contact::Approximation;
use stiction::error::Result;
use stiction::problem::load_problem;
use stiction::simulate::run;

/// Jammed: the slip speed of a loaded contact below this (m/s), the stiction tolerance.
const JAMMED: f64 = 1e-4;

fn main() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/sliding-rod.toml");
    println!(
        "approximation       jams at (ms)  leaves ground at (ms)  peak Σf_n (N)  max iterations"
    );
    for approximation in Approximation::ALL {
        match row(&path, approximation) {
            Ok(line) => println!("{line}"),
            Err(e) => println!("{:<18}  failed: {e}", approximation.name()),
        }
    }
}

/// The table row of one approximation.
fn row(path: &Path, approximation: Approximation) -> Result<String> {
    let mut problem = load_problem(path)?;
    problem.simulator.settings.approximation = approximation;
    let rec = run(
        &mut problem.simulator,
        &problem.initial_state,
        problem.duration,
        |_, _| {},
    )?;
    let normal: Vec<f64> = rec
        .reports
        .iter()
        .map(|r| r.contacts.iter().map(|c| c.normal_force).sum())
        .collect();
    let jam = rec.reports.iter().position(|r| {
        r.contacts
            .iter()
            .any(|c| c.normal_force > 0.0 && c.slip < JAMMED)
    });
    let lift_off = jam.and_then(|j| (j..normal.len()).find(|&k| normal[k] == 0.0));
    // Step k ends at states[k + 1].
    let at = |k: Option<usize>| {
        k.map_or("never".into(), |k| {
            format!("{:.3}", 1e3 * rec.states[k + 1].t)
        })
    };
    Ok(format!(
        "{:<18}  {:>12}  {:>21}  {:>13.1}  {:>14}",
        approximation.name(),
        at(jam),
        at(lift_off),
        normal.iter().copied().fold(0.0, f64::max),
        rec.reports
            .iter()
            .map(|r| r.stats.iterations)
            .max()
            .unwrap_or(0)
    ))
}
