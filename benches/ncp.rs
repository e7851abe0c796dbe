//! Criterion bench of one geometrically implicit (ncp) step on cube-slide (surface contact,
//! sliding) and cube-topple (the corner phase, point contact): each sample clones the
//! simulator with its warm start at the step being timed and takes one step.

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion};

use stiction::ncp::NcpSimulator;
use stiction::problem::load_problem;
use stiction::step::State;

/// The simulator and state after `warm_steps` steps of `problems/NAME.toml`.
fn scene(name: &str, warm_steps: usize) -> (NcpSimulator, State) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("problems")
        .join(format!("{name}.toml"));
    let p = load_problem(&path).expect("shipped problem loads");
    let mut sim = p.ncp_simulator().expect("ncp scene");
    let mut state = p.initial_state.clone();
    for _ in 0..warm_steps {
        state = sim.step(&state).expect("step").0;
    }
    (sim, state)
}

fn ncp_step(c: &mut Criterion) {
    for (name, warm) in [("cube-slide", 10), ("cube-topple", 3)] {
        let (sim, state) = scene(name, warm);
        c.bench_function(&format!("ncp step {name}"), |b| {
            b.iter_batched(
                || sim.clone(),
                |mut sim| sim.step(&state).expect("step"),
                criterion::BatchSize::SmallInput,
            )
        });
    }
}

criterion_group!(benches, ncp_step);
criterion_main!(benches);
