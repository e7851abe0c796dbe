//! Criterion benches of the clutter (ICF Sec. X-A, `problems/clutter.toml`):
//!
//! - `clutter 3 s/MODEL`: the whole 3 s rollout (1500 steps of 2 ms) per contact model; the
//!   step time is the reported time / 1500;
//! - `factor+solve/{dense,sparse}/N`: one numeric factorization and one solve of a pile-like
//!   Newton Hessian of N free bodies (6 × 6 cliques, each coupled to three others), the
//!   symbolic analysis reused as in the Newton loop: the dense/sparse crossover;
//! - `batch of 4 clutter 0.5 s/{serial,rayon}`: four independent rollouts one after the other
//!   and with `run_batch`; rollouts/s = 4 / time.
//!
//! Run: `cargo bench --bench clutter` (figures in README "Scale").
#![allow(non_snake_case)]

use std::path::PathBuf;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use nalgebra::DMatrix;

use stiction::contact::Approximation;
use stiction::problem::{load_problem, Problem};
use stiction::simulate::{run, run_batch, run_controlled, Rollout};
use stiction::solver::linalg::{
    BlockHessian, BlockPattern, DenseCholesky, SparseCholesky, SpdSolver,
};

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

/// A pile-like Hessian: `n` cliques of 6, clique `i` coupled to `i + 1`, `i + 7` and `i + 13`
/// (neighbours in a pile), random values, diagonally dominant.
fn pile_hessian(n: usize) -> BlockHessian {
    let mut pairs: Vec<(usize, usize)> = (0..n)
        .flat_map(|i| [1, 7, 13].into_iter().map(move |d| (i, i + d)))
        .filter(|&(_, j)| j < n)
        .collect();
    pairs.sort_unstable();
    let pattern = BlockPattern {
        cliques: (0..n).map(|c| (6 * c..6 * c + 6).collect()).collect(),
        pairs,
    };
    let mut H = BlockHessian::zeros(pattern);
    let mut s = 1u64;
    let mut rnd = move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
    };
    for block in &mut H.off_diagonal {
        block.iter_mut().for_each(|x| *x = rnd());
    }
    for block in &mut H.diagonal {
        let B = DMatrix::from_fn(6, 6, |_, _| rnd());
        *block = &B * B.transpose() + DMatrix::identity(6, 6) * 20.0;
    }
    H
}

fn crossover(c: &mut Criterion) {
    let mut group = c.benchmark_group("factor+solve");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for n in [2, 4, 6, 8, 10, 12, 16, 24, 40, 64] {
        let H = pile_hessian(n);
        let rhs = nalgebra::DVector::from_fn(6 * n, |i, _| (i as f64).sin());
        let mut dense = DenseCholesky::default();
        group.bench_with_input(BenchmarkId::new("dense", n), &H, |b, H| {
            b.iter(|| {
                dense.factor(H).unwrap();
                let mut x = rhs.clone();
                dense.solve_in_place(&mut x);
                x
            })
        });
        let mut sparse = SparseCholesky::default();
        group.bench_with_input(BenchmarkId::new("sparse", n), &H, |b, H| {
            b.iter(|| {
                sparse.factor(H).unwrap();
                let mut x = rhs.clone();
                sparse.solve_in_place(&mut x);
                x
            })
        });
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
