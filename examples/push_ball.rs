//! Contact-implicit iLQR on `problems/push-ball.toml`: a 3-joint arm pushes a ball to a target
//! with no contact schedule. Prints the iterations and the ball's final distance to its target.
//!
//! `cargo run --release --example push_ball`

use std::path::Path;

use stiction::optimize::{optimization, solve};
use stiction::problem::load_problem;

fn main() -> stiction::error::Result<()> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/push-ball.toml");
    let mut problem = load_problem(&path)?;
    let opt = optimization(&problem)?;
    let report = solve(
        &mut problem.simulator,
        &opt.problem,
        &opt.initial_controls,
        &opt.params,
    )?;
    for s in &report.iterations {
        println!(
            "iter {:3}  cost {:12.6}  alpha {:8.5}  mu {:8.1e}  |Qu| {:8.2e}  {}",
            s.iteration,
            s.cost,
            s.alpha,
            s.mu,
            s.gradient_norm,
            if s.accepted { "accepted" } else { "rejected" }
        );
    }
    let outcome = opt
        .task
        .evaluate(&problem.simulator.model, &report.trajectory.states);
    let (rollout, derivatives, backward) = report.time_split();
    println!(
        "status {}: cost {:.6} -> {:.6}, ball error {:.4} m ({}), {:.2} s (rollout {:.2}, derivatives {:.2}, backward {:.3})",
        report.status.name(),
        report.initial_cost,
        report.trajectory.cost,
        outcome.error,
        if outcome.achieved { "achieved" } else { "not achieved" },
        report.wall_s,
        rollout,
        derivatives,
        backward
    );
    Ok(())
}
