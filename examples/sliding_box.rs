//! Castro 2020 note: a box sliding at `v0` decelerates at `μ g` and stops at `t = v0 / (μ g)`
//! (0.2039 s for 1 m/s and μ = 0.5), its normal force equal to its weight while it slides.
//!
//! `cargo run --release --example sliding_box`

use std::path::Path;

use stiction::contact::Approximation;
use stiction::error::Result;
use stiction::problem::load_problem;
use stiction::report::body_states;
use stiction::simulate::run;

/// Stopped: horizontal speed below this (m/s).
const STOPPED: f64 = 1e-3;

fn main() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/sliding-box.toml");
    println!("approximation       stops at (s)  v0/(μg) (s)  mean Σf_n while sliding (N)  m g (N)");
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
    let model = &problem.simulator.model;
    let (mass, g) = (model.bodies[0].inertia.mass, model.gravity.norm());
    let mu = problem.simulator.settings.contact.mu;
    let rec = run(
        &mut problem.simulator,
        &problem.initial_state,
        problem.duration,
        |_, _| {},
    )?;
    let speed: Vec<f64> = body_states(&rec, &problem.simulator.model)
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
        "{:<18}  {:>12}  {:>11.4}  {:>27.4}  {:>7.3}",
        approximation.name(),
        stop.map_or("never".into(), |k| format!("{:.4}", rec.states[k].t)),
        speed[0] / (mu * g),
        mean_normal,
        mass * g
    ))
}
