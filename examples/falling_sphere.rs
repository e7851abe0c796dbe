//! ICF Sec. IX-B: a steel sphere dropped with 2 m/s horizontal speed slides, then rolls.
//!
//! Once rolling (`v_x = ω_y r`), friction vanishes and the speed is 5/7 of the speed at
//! touchdown (a solid sphere's `I = 2/5 m r²`). SAP and Similar touch down earlier than
//! Lagged: they start pushing before the surfaces meet.
//!
//! `cargo run --release --example falling_sphere`

use std::path::Path;

use stiction::contact::Approximation;
use stiction::error::Result;
use stiction::geometry::Shape;
use stiction::problem::load_problem;
use stiction::report::body_states;
use stiction::simulate::run;

/// Rolling without slip: `|v_x − ω_y r|` below this (m/s).
const ROLLING_TOLERANCE: f64 = 1e-3;

fn main() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/falling-sphere.toml");
    println!("approximation       touchdown (s)  v_x there (m/s)  final v_x (m/s)  5/7 of it (m/s)  rolling from (s)");
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
    let radius = problem
        .simulator
        .geometries()
        .iter()
        .find_map(|g| match g.shape {
            Shape::Sphere { radius } => Some(radius),
            _ => None,
        })
        .expect("the problem has a sphere");
    let rec = run(
        &mut problem.simulator,
        &problem.initial_state,
        problem.duration,
        |_, _| {},
    )?;
    // World-frame states of the sphere, the only tree body: states[k] starts step k.
    let sphere: Vec<_> = body_states(&rec, &problem.simulator.model)
        .into_iter()
        .map(|row| row[0])
        .collect();
    let touchdown = rec
        .reports
        .iter()
        .position(|r| r.contacts.iter().any(|c| c.normal_force > 0.0))
        .expect("the sphere lands");
    let v_touchdown = sphere[touchdown].v_WB.x;
    let rolling = (touchdown..sphere.len())
        .find(|&k| (sphere[k].v_WB.x - sphere[k].w_WB.y * radius).abs() < ROLLING_TOLERANCE);
    Ok(format!(
        "{:<18}  {:>13.3}  {:>15.4}  {:>15.4}  {:>15.4}  {:>16}",
        approximation.name(),
        rec.states[touchdown + 1].t,
        v_touchdown,
        sphere.last().expect("states").v_WB.x,
        5.0 / 7.0 * v_touchdown,
        rolling.map_or("never".into(), |k| format!("{:.3}", rec.states[k].t))
    ))
}
