//! ICF Sec. IX-B: a steel sphere dropped with 2 m/s horizontal speed slides, then rolls.
//!
//! Once rolling (`v_x = ω_y r`), friction vanishes and the speed is 5/7 of the speed at
//! touchdown (a solid sphere's `I = 2/5 m r²`). At the default settings SAP and Similar bounce
//! while they slide; with `simulation.speculative = "all"` they touch down earlier than Lagged
//! instead, pushing before the surfaces meet (docs/contact-models.md).
//!
//! `cargo run --release --example falling_sphere`

mod common;

use stiction::error::Result;
use stiction::geometry::Shape;
use stiction::problem::Problem;
use stiction::report::body_states;
use stiction::simulate::Recording;

/// Rolling without slip: `|v_x − ω_y r|` below this (m/s).
const ROLLING_TOLERANCE: f64 = 1e-3;

fn main() {
    common::table(
        "falling-sphere",
        "touchdown (s)  v_x there (m/s)  final v_x (m/s)  5/7 of it (m/s)  rolling from (s)",
        row,
    );
}

/// The columns of one approximation's row.
fn row(problem: &Problem, rec: &Recording) -> Result<String> {
    let radius = problem
        .simulator
        .geometries()
        .iter()
        .find_map(|g| match g.shape {
            Shape::Sphere { radius } => Some(radius),
            _ => None,
        })
        .expect("the problem has a sphere");
    // World-frame states of the sphere, the only tree body: states[k] starts step k.
    let sphere: Vec<_> = body_states(rec, &problem.simulator.model)
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
        "{:>13.3}  {:>15.4}  {:>15.4}  {:>15.4}  {:>16}",
        rec.states[touchdown + 1].t,
        v_touchdown,
        sphere.last().expect("states").v_WB.x,
        5.0 / 7.0 * v_touchdown,
        rolling.map_or("never".into(), |k| format!("{:.3}", rec.states[k].t))
    ))
}
