//! Criterion benches of the clutter (ICF Sec. X-A, `problems/clutter.toml`):
//!
//! - `clutter 3 s/MODEL`: the whole 3 s rollout (1500 steps of 2 ms) per contact model; the
//!   step time is the reported time / 1500;
//! - `newton solve/{dense,sparse}/N`: the whole Newton solve of the first step of a pile of N
//!   spheres and boxes (every neighbour a contact), the workspace (and the sparse symbolic
//!   analysis) kept across samples as across the steps of a simulation: the dense/sparse
//!   crossover;
//! - `batch of 4 clutter 0.5 s/{serial,rayon}`: four independent rollouts one after the other
//!   and with `run_batch`; rollouts/s = 4 / time.
//!
//! Run: `cargo bench --bench clutter` (figures in README "Scale").

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use nalgebra::DVector;

use stiction::contact::Approximation;
use stiction::problem::{load_problem, parse_problem, Problem};
use stiction::simulate::{run, run_batch, run_controlled, Rollout};
use stiction::solver::linalg::LinearSolver;
use stiction::solver::{ConvexProblem, NewtonWorkspace, SolverParams};

fn clutter(approximation: Approximation) -> Problem {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("problems/clutter.toml");
    let mut p = load_problem(&path).expect("clutter loads");
    p.simulator.settings.approximation = approximation;
    p
}

fn rollouts(c: &mut Criterion) {
    let mut group = c.benchmark_group("clutter 3 s");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(30));
    for approximation in Approximation::ALL {
        group.bench_function(approximation.name(), |b| {
            b.iter_batched(
                || clutter(approximation),
                |mut p| run(&mut p.simulator, &p.initial_state, p.duration, |_, _| ()).unwrap(),
                criterion::BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

/// A pile of `n` spheres and boxes (10 cm, 1 kg) in layers of a 4 × 3 grid with 5 mm gaps,
/// the bottom layer 0.1 mm into the ground, every neighbour within the contact margin: the
/// Newton problem of its first step (contacts couple each body to up to six neighbours).
fn pile(n: usize) -> (ConvexProblem<f64>, DVector<f64>) {
    let mut text = String::from(
        "[simulation]\ndt = 2e-3\nduration = 0.1\n\n[contact]\nfriction = 1.0\nstiffness = 1e7\n\n\
         [[geometry]]\nname = \"ground\"\nshape = \"half-space\"\n\n",
    );
    for i in 0..n {
        let (cell, layer) = (i % 12, i / 12);
        let (x, y, z) = (
            0.105 * (cell % 4) as f64,
            0.105 * (cell / 4) as f64,
            0.0499 + 0.105 * layer as f64,
        );
        text += &format!(
            "[[body]]\nname = \"b{i}\"\nmass = 1.0\nposition = [{x}, {y}, {z}]\nvelocity = [0.01, 0.0, -0.02]\n\n\
             [[geometry]]\nname = \"g{i}\"\nbody = \"b{i}\"\n{}\n",
            if (i + layer) % 2 == 0 {
                "shape = \"sphere\"\nradius = 0.05\n"
            } else {
                "shape = \"box\"\nsize = [0.1, 0.1, 0.1]\n"
            }
        );
    }
    let mut p = parse_problem(&text, Path::new("pile.toml")).expect("valid pile");
    let state = p.initial_state.clone();
    let problem = p
        .simulator
        .assemble(&state, &DVector::zeros(0))
        .expect("assembles")
        .problem;
    (problem, state.v)
}

fn crossover(c: &mut Criterion) {
    let mut group = c.benchmark_group("newton solve");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for n in [2, 4, 6, 8, 10, 12, 16, 24, 36, 48, 64] {
        let (problem, v0) = pile(n);
        for linear_solver in [LinearSolver::Dense, LinearSolver::Sparse] {
            let params = SolverParams::default().with_linear_solver(linear_solver);
            let mut workspace = NewtonWorkspace::default();
            group.bench_with_input(BenchmarkId::new(linear_solver.name(), n), &n, |b, _| {
                b.iter(|| {
                    workspace.prepare(&problem);
                    workspace.iterate(&problem, &v0, &params).expect("solves")
                })
            });
        }
    }
    group.finish();
}

fn batch(c: &mut Criterion) {
    let make = || -> Vec<Rollout> {
        Approximation::ALL
            .into_iter()
            .map(|a| {
                let p = clutter(a);
                Rollout {
                    simulator: p.simulator,
                    controller: p.controller,
                    initial: p.initial_state,
                    duration: 0.5,
                }
            })
            .collect()
    };
    let mut group = c.benchmark_group("batch of 4 clutter 0.5 s");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(15));
    group.bench_function("serial", |b| {
        b.iter_batched(
            make,
            |mut batch| {
                for r in &mut batch {
                    run_controlled(
                        &mut r.simulator,
                        &r.controller,
                        &r.initial,
                        r.duration,
                        |_, _| (),
                    )
                    .unwrap();
                }
            },
            criterion::BatchSize::PerIteration,
        )
    });
    group.bench_function("rayon", |b| {
        b.iter_batched(
            make,
            |mut batch| run_batch(&mut batch),
            criterion::BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, crossover, batch, rollouts);
criterion_main!(benches);
