//! Castro 2020 note: a box sliding at `v0` decelerates at `μ g` and stops at `t = v0 / (μ g)`
//! (0.2039 s for 1 m/s and μ = 0.5), its normal force equal to its weight while it slides.
//!
//! `cargo run --release --example sliding_box`

mod common;

use stiction::error::Result;
use stiction::problem::Problem;
use stiction::report::body_states;
use stiction::simulate::Recording;

/// Stopped: horizontal speed below this (m/s).
const STOPPED: f64 = 1e-3;

fn main() {
    common::table(
        "sliding-box",
        "stops at (s)  v0/(μg) (s)  mean Σf_n while sliding (N)  m g (N)",
        row,
    );
}

/// The columns of one approximation's row.
fn row(problem: &Problem, rec: &Recording) -> Result<String> {
    let model = &problem.simulator.model;
    let (mass, g) = (model.bodies[0].inertia.mass, model.gravity.norm());
    let mu = problem.simulator.settings.contact.mu;
    let speed: Vec<f64> = body_states(rec, model)
        .iter()
        .map(|row| row[0].v_WB.xy().norm())
        .collect();
    // states[k + 1] ends step k.
    let stop = (1..speed.len()).find(|&k| speed[k] < STOPPED);
    let sliding = &rec.reports[..stop.map_or(rec.reports.len(), |k| k - 1)];
    let mean_normal = sliding
        .iter()
        .map(|r| r.contacts.iter().map(|c| c.normal_force).sum::<f64>())
        .sum::<f64>()
        / sliding.len().max(1) as f64;
    Ok(format!(
        "{:>12}  {:>11.4}  {:>27.4}  {:>7.3}",
        stop.map_or("never".into(), |k| format!("{:.4}", rec.states[k].t)),
        speed[0] / (mu * g),
        mean_normal,
        mass * g
    ))
}
