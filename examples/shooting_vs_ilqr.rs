//! The single-shooting L-BFGS baseline (argmin, adjoint gradient) against iLQR on the same
//! problems, from the same initial guess: iterations, final cost, task error and wall time.
//!
//! `cargo run --release --example shooting_vs_ilqr`

use std::path::Path;

use stiction::optimize::{optimization, solve, solve_shooting, ShootingParams};
use stiction::problem::load_problem;

fn main() -> stiction::error::Result<()> {
    println!(
        "| problem | method | iterations | initial cost | final cost | task error (m) | wall (s) |"
    );
    println!("|---|---|---|---|---|---|---|");
    for name in ["push-ball", "hopper", "box-pivot"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("problems")
            .join(format!("{name}.toml"));
        let mut problem = load_problem(&path)?;
        let opt = optimization(&problem)?;
        let sim = &mut problem.simulator;
        let ilqr = solve(sim, &opt.problem, &opt.initial_controls, &opt.params)?;
        let e = opt.task.evaluate(&sim.model, &ilqr.trajectory.states).error;
        println!(
            "| {name} | iLQR ({}) | {} | {:.4} | {:.4} | {:.4} | {:.2} |",
            ilqr.status.name(),
            ilqr.iterations.len(),
            ilqr.initial_cost,
            ilqr.trajectory.cost,
            e,
            ilqr.wall_s
        );
        let shooting = solve_shooting(
            sim,
            &opt.problem,
            &opt.initial_controls,
            &ShootingParams::default(),
        )?;
        let e = opt
            .task
            .evaluate(&sim.model, &shooting.trajectory.states)
            .error;
        println!(
            "| {name} | L-BFGS shooting ({}) | {} | {:.4} | {:.4} | {:.4} | {:.2} |",
            shooting.termination,
            shooting.iterations,
            shooting.initial_cost,
            shooting.trajectory.cost,
            e,
            shooting.wall_s
        );
    }
    Ok(())
}
