//! iLQR cost on `push-ball` and `hopper` (issue 5): one iteration split into its parts, and
//! whole solves to convergence, with step Jacobians by the implicit function theorem (`ift`)
//! and by fourth-order central differences (`fd`).
//!
//! Per problem, the parts are timed about the trajectory of the initial guess after 5 iLQR
//! iterations (so there is contact):
//! - `rollout`: one forward pass at α = 1 (T steps and the cost);
//! - `derivatives.ift` / `derivatives.fd`: `A_t`, `B_t` and the cost derivatives of all T stages,
//!   split over the default worker threads (2 here); FD solves its perturbed steps to the
//!   gradient check's tolerance, as iLQR does;
//! - `backward`: one Riccati pass (with the box QP of the control bounds);
//! - `solve.ift` / `solve.fd`: iLQR from the initial guess until it stops (the problem file's
//!   settings); the iteration counts are printed once before timing.
//!
//! Run with `cargo bench --bench ilqr`; the README's "Trajectory optimization" table comes from
//! it.

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};

use stiction::optimize::ilqr::{forward_pass, linearize, make_workers};
use stiction::optimize::riccati::backward_pass;
use stiction::optimize::{optimization, solve, DerivativeMethod, IlqrParams};
use stiction::problem::load_problem;

fn ilqr(c: &mut Criterion) {
    for name in ["push-ball", "hopper"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("problems")
            .join(format!("{name}.toml"));
        let mut problem = load_problem(&path).expect("problem loads");
        let opt = optimization(&problem).expect("[optimize] resolves");
        let sim = &mut problem.simulator;
        let warm = IlqrParams {
            max_iterations: 5,
            ..opt.params.clone()
        };
        let traj = solve(sim, &opt.problem, &opt.initial_controls, &warm)
            .expect("5 iterations")
            .trajectory;
        let mut workers = make_workers(sim, &opt.params).expect("simulator copies");
        let mut fd_workers = make_workers(
            sim,
            &IlqrParams {
                derivatives: DerivativeMethod::FiniteDifference,
                ..opt.params.clone()
            },
        )
        .expect("simulator copies");
        let (stages, terminal) =
            linearize(&mut workers, &opt.problem, &traj, DerivativeMethod::Ift).expect("ift");
        let bp = backward_pass(
            &stages,
            &terminal,
            &traj.controls,
            opt.problem.bounds.as_ref(),
            1e-6,
        )
        .expect("backward pass");
        for method in [DerivativeMethod::Ift, DerivativeMethod::FiniteDifference] {
            let params = IlqrParams {
                derivatives: method,
                ..opt.params.clone()
            };
            let r = solve(sim, &opt.problem, &opt.initial_controls, &params).expect("solve");
            let (rollout, derivatives, backward) = r.time_split();
            let outcome = opt.task.evaluate(&sim.model, &r.trajectory.states);
            println!(
                "{name} {method:?}: {} after {} iterations, {:.2} s (rollout {rollout:.2}, derivatives {derivatives:.2}, backward {backward:.3}), task error {:.4} m",
                r.status.name(),
                r.iterations.len(),
                r.wall_s,
                outcome.error
            );
        }

        let mut group = c.benchmark_group(name);
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3));
        group.bench_function("rollout", |b| {
            b.iter(|| black_box(forward_pass(sim, &opt.problem, &traj, &bp, 1.0)))
        });
        group.bench_function("derivatives.ift", |b| {
            b.iter(|| {
                black_box(
                    linearize(&mut workers, &opt.problem, &traj, DerivativeMethod::Ift)
                        .expect("ift"),
                )
            })
        });
        group.bench_function("derivatives.fd", |b| {
            b.iter(|| {
                black_box(
                    linearize(
                        &mut fd_workers,
                        &opt.problem,
                        &traj,
                        DerivativeMethod::FiniteDifference,
                    )
                    .expect("fd"),
                )
            })
        });
        group.bench_function("backward", |b| {
            b.iter(|| {
                black_box(backward_pass(
                    &stages,
                    &terminal,
                    &traj.controls,
                    opt.problem.bounds.as_ref(),
                    1e-6,
                ))
            })
        });
        group.measurement_time(Duration::from_secs(10));
        for (label, method) in [
            ("solve.ift", DerivativeMethod::Ift),
            ("solve.fd", DerivativeMethod::FiniteDifference),
        ] {
            let params = IlqrParams {
                derivatives: method,
                ..opt.params.clone()
            };
            group.bench_function(label, |b| {
                b.iter(|| {
                    black_box(
                        solve(sim, &opt.problem, &opt.initial_controls, &params).expect("solve"),
                    )
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, ilqr);
criterion_main!(benches);
