//! ICF Sec. IX-C: Painlevé's paradox. A rod sliding at 10 m/s with μ = 2.3 > 4/3 jams into
//! the ground (`‖v_t‖` drops to ~0 for a fraction of a millisecond) and jumps.
//!
//! The normal force oscillates at the contact's natural frequency, rises sharply, and the
//! rod leaves the ground after the jam. No approximation may fail or produce NaN.
//!
//! `cargo run --release --example sliding_rod`

mod common;

use stiction::error::Result;
use stiction::problem::Problem;
use stiction::simulate::Recording;

/// Jammed: the slip speed of a loaded contact below this (m/s), the stiction tolerance.
const JAMMED: f64 = 1e-4;

fn main() {
    common::table(
        "sliding-rod",
        "jams at (ms)  leaves ground at (ms)  peak Σf_n (N)  max iterations",
        row,
    );
}

/// The columns of one approximation's row.
fn row(_problem: &Problem, rec: &Recording) -> Result<String> {
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
        "{:>12}  {:>21}  {:>13.1}  {:>14}",
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
