//! ICF Sec. IX-A (Fig. 2): a box on a belt oscillating along x sticks and slips.
//!
//! Lagged keeps the box on the belt (`v_z = 0`) with the normal force equal to the weight, in
//! stick and in slip. Similar and SAP couple friction into the normal direction: the box
//! moves vertically while it slides and the force spikes at slip → stick.
//!
//! `cargo run --release --example conveyor_oscillating`

mod common;

use stiction::error::Result;
use stiction::problem::Problem;
use stiction::report::body_states;
use stiction::simulate::Recording;

/// The initial transient (the box starts at rest on a moving belt) is left out (s).
const SETTLED: f64 = 0.1;
/// A step slides when its largest slip speed exceeds this (m/s).
const SLIDING: f64 = 1e-3;

fn main() {
    common::table(
        "conveyor-oscillating",
        "max |v_z| sliding (m/s)  mean Σf_n (N)  max Σf_n (N)  m g (N)",
        row,
    );
}

/// The columns of one approximation's row.
fn row(problem: &Problem, rec: &Recording) -> Result<String> {
    let model = &problem.simulator.model;
    let (mass, g) = (model.bodies[0].inertia.mass, model.gravity.norm());
    let states = body_states(rec, model);
    let mut max_vz: f64 = 0.0;
    let mut normal = Vec::new();
    // Step k ends at states[k + 1].
    for (k, report) in rec
        .reports
        .iter()
        .enumerate()
        .filter(|(k, _)| rec.states[k + 1].t > SETTLED)
    {
        let slip = report.contacts.iter().map(|c| c.slip).fold(0.0, f64::max);
        if slip > SLIDING {
            max_vz = max_vz.max(states[k + 1][0].v_WB.z.abs());
        }
        normal.push(report.contacts.iter().map(|c| c.normal_force).sum::<f64>());
    }
    Ok(format!(
        "{:>23.3e}  {:>13.4}  {:>12.4}  {:>7.3}",
        max_vz,
        normal.iter().sum::<f64>() / normal.len() as f64,
        normal.iter().copied().fold(0.0, f64::max),
        mass * g
    ))
}
