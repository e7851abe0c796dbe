//! Convergence study of ICF Fig. 3: conveyor-oscillating, error in the box position
//! `e_q(δt) = (1/T ∫ ‖q_δt − q_ref‖² dt)^{1/2}` against a Lagged reference at δt = 2e-4 (ten
//! times below the smallest step), for every approximation, with the log-log slope.
//! Step sizes run in parallel (rayon). Run with
//! `cargo run --release --example convergence`.

use std::path::PathBuf;

use rayon::prelude::*;
use stiction::contact::Approximation;
use stiction::problem::load_problem;
use stiction::simulate::run;

/// Samples are compared every 50 ms, the largest step.
const SAMPLE: f64 = 5e-2;

fn box_positions(approximation: Approximation, dt: f64) -> Vec<[f64; 3]> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("problems/conveyor-oscillating.toml");
    let mut p = load_problem(&path).expect("shipped problem loads");
    p.simulator.settings.approximation = approximation;
    p.simulator.settings.dt = dt;
    let rec =
        run(&mut p.simulator, &p.initial_state, p.duration, |_, _| {}).expect("simulation runs");
    let every = (SAMPLE / dt).round() as usize;
    rec.states
        .iter()
        .step_by(every)
        .map(|s| [s.q[0], s.q[1], s.q[2]])
        .collect()
}

fn rms_error(a: &[[f64; 3]], b: &[[f64; 3]]) -> f64 {
    let n = a.len().min(b.len());
    let sum: f64 = (0..n)
        .map(|i| (0..3).map(|k| (a[i][k] - b[i][k]).powi(2)).sum::<f64>())
        .sum();
    (sum / n as f64).sqrt()
}

fn slope(x: &[f64], y: &[f64]) -> f64 {
    let (lx, ly): (Vec<f64>, Vec<f64>) = x.iter().zip(y).map(|(a, b)| (a.ln(), b.ln())).unzip();
    let n = lx.len() as f64;
    let (mx, my) = (lx.iter().sum::<f64>() / n, ly.iter().sum::<f64>() / n);
    lx.iter()
        .zip(&ly)
        .map(|(a, b)| (a - mx) * (b - my))
        .sum::<f64>()
        / lx.iter().map(|a| (a - mx).powi(2)).sum::<f64>()
}

fn main() {
    let steps = [2e-3, 1e-2, 5e-2];
    let reference = box_positions(Approximation::Lagged, 2e-4);
    println!("conveyor-oscillating: RMS box position error (m) vs Lagged at δt = 2e-4");
    println!(
        "{:<20}{:>12}{:>12}{:>12}{:>10}",
        "approximation", "δt=2e-3", "δt=1e-2", "δt=5e-2", "slope"
    );
    for approximation in Approximation::ALL {
        let errors: Vec<f64> = steps
            .par_iter()
            .map(|&dt| rms_error(&box_positions(approximation, dt), &reference))
            .collect();
        println!(
            "{:<20}{:>12.3e}{:>12.3e}{:>12.3e}{:>10.2}",
            approximation.name(),
            errors[0],
            errors[1],
            errors[2],
            slope(&steps, &errors)
        );
    }
}
