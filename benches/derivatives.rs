//! Cost of the step Jacobians `∂x'/∂x`, `∂x'/∂u` relative to a forward step (issue 3).
//!
//! For each scene, one state in sliding contact is prepared outside the timed closures by
//! running the problem file forward with [`stiction::simulate::run`]; then four entries time,
//! from that same state:
//! - `step`: one forward step ([`Simulator::step`]);
//! - `ift`: the step Jacobians by the implicit function theorem on the solver's factor
//!   ([`stiction::derivatives::step_jacobians`]), no named parameters;
//! - `direct`: the same Jacobians by Newton iterations in dual numbers
//!   ([`stiction::derivatives::direct::step_jacobians_direct`]);
//! - `fd`: the same Jacobians by fourth-order central differences
//!   ([`stiction::derivatives::fd::step_jacobians_fd`]): four perturbed steps per column, 2nv
//!   columns.
//!
//! The IFT and direct entries include their own nominal solve, as a caller pays it. More entries
//! split the IFT entry into its parts: `ift.nominal_step` (the f64 solve in the simulator's
//! workspace, asked to factor `H` at the solution, and that factor looked up),
//! `ift.jacobian_given_factor` (everything after it: `∂r/∂θ`, `H⁻¹ ∂r/∂θ` and the positions),
//! `ift.residual_jacobian` (the analytic `∂r/∂θ` of [`stiction::derivatives::analytic`]) and
//! `ift.position_jacobian` (`∂q'/∂θ` from `∂v/∂θ`); `duals.residual_jacobian` is the dual
//! reference for `∂r/∂θ` (the step re-assembled in chunked duals, ⌈2nv/8⌉ chunks), which the
//! IFT path used before.
//!
//! Scenes, every shipped problem of the convex (point-contact) stepper, each in contact:
//! - `falling-sphere` at t = 0.08 s: the sphere slides on the ground (nv = 6, one contact);
//! - `sliding-box` at t = 0.05 s: the box slides on the ground (nv = 6);
//! - `conveyor-constant` at t = 0.1 s: the box on the moving belt (nv = 1, prismatic);
//! - `conveyor-oscillating` at t = 0.5 s: the box on the oscillating belt (nv = 6);
//! - `sliding-rod` at t = 2 ms: the rod slides on one end (nv = 6, δt = 1e-5 s);
//! - `arm-push-sphere` at t = 0.2 s: the hand pushes the sphere (nv = 13, hand–sphere and
//!   sphere–ground contacts).
//!
//! Times are the CPU time of the benchmarking thread ([`ThreadTime`],
//! `CLOCK_THREAD_CPUTIME_ID`), not wall time: on a machine shared with other jobs, wall time
//! also counts the time the thread waits for a core, which varies from entry to entry and
//! distorts the ratios between them. Everything benchmarked runs on the calling thread.
//!
//! Run with `cargo bench --bench derivatives`; the README's "Derivative cost" table comes from
//! it.

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, Criterion};

#[path = "common/thread_time.rs"]
mod thread_time;
use nalgebra::DVector;
use thread_time::ThreadTime;

use stiction::derivatives::analytic::state_residual_jacobian;
use stiction::derivatives::direct::step_jacobians_direct;
use stiction::derivatives::fd::step_jacobians_fd;
use stiction::derivatives::ift::{
    jacobians_given_factor, nominal_step, position_jacobian, residual_jacobian, workspace_factor,
};
use stiction::derivatives::lifted::Directions;
use stiction::derivatives::step_jacobians;
use stiction::problem::load_problem;
use stiction::simulate::run;
use stiction::solver::linalg::SpdSolver;
use stiction::step::{Simulator, State};

/// A scene: its problem file and when to take the benchmarked state.
struct Scene {
    /// File stem in `problems/`.
    name: &'static str,
    /// Time of the benchmarked state (s).
    t: f64,
    /// Bodies that must be in contact in that state, by name (A, B in either order).
    touching: &'static [(&'static str, &'static str)],
}

const SCENES: [Scene; 6] = [
    Scene {
        name: "falling-sphere",
        t: 0.08,
        touching: &[("world", "sphere")],
    },
    Scene {
        name: "sliding-box",
        t: 0.05,
        touching: &[("world", "box")],
    },
    Scene {
        name: "conveyor-constant",
        t: 0.1,
        touching: &[("belt", "box")],
    },
    Scene {
        name: "conveyor-oscillating",
        t: 0.5,
        touching: &[("belt", "box")],
    },
    Scene {
        name: "sliding-rod",
        t: 0.002,
        touching: &[("world", "rod")],
    },
    Scene {
        name: "arm-push-sphere",
        t: 0.2,
        touching: &[("hand", "sphere"), ("world", "sphere")],
    },
];

/// Loads `scene`, runs it to `scene.t` and checks the contacts it promises are active there.
fn prepare(scene: &Scene) -> (Simulator, State, DVector<f64>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("problems")
        .join(format!("{}.toml", scene.name));
    let problem = load_problem(&path).expect("problem file loads");
    let mut sim = problem.simulator;
    let recording = run(&mut sim, &problem.initial_state, scene.t, |_, _| {})
        .expect("rollout to the benchmarked state");
    let state = recording.states.last().expect("initial state").clone();
    let u = DVector::zeros(sim.model.nu());
    let (_, report) = sim
        .step(&state, &u)
        .expect("step from the benchmarked state");
    for (a, b) in scene.touching {
        assert!(
            report.contacts.iter().any(|c| {
                let (x, y) = (sim.model.name_of(c.body_a), sim.model.name_of(c.body_b));
                (x, y) == (*a, *b) || (y, x) == (*a, *b)
            }),
            "{}: no {a}–{b} contact at t = {}",
            scene.name,
            state.t
        );
    }
    (sim, state, u)
}

fn derivatives(c: &mut Criterion<ThreadTime>) {
    for scene in &SCENES {
        let (mut sim, state, u) = prepare(scene);
        let mut group = c.benchmark_group(scene.name);
        group
            .sample_size(20)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3));
        group.bench_function("step", |b| {
            b.iter(|| black_box(sim.step(black_box(&state), &u).expect("step")))
        });
        group.bench_function("ift", |b| {
            b.iter(|| black_box(step_jacobians(&mut sim, black_box(&state), &u, &[]).expect("ift")))
        });
        group.bench_function("direct", |b| {
            b.iter(|| {
                black_box(
                    step_jacobians_direct(&mut sim, black_box(&state), &u, &[]).expect("direct"),
                )
            })
        });
        group.bench_function("fd", |b| {
            b.iter(|| {
                black_box(step_jacobians_fd(&mut sim, black_box(&state), &u, &[]).expect("fd"))
            })
        });
        let dirs = Directions {
            nv: sim.model.nv(),
            nu: sim.model.nu(),
            np: 0,
        };
        group.bench_function("ift.nominal_step", |b| {
            b.iter(|| {
                let nominal = nominal_step(&mut sim, black_box(&state), &u).expect("nominal step");
                black_box(workspace_factor(&sim, &nominal).is_some())
            })
        });
        let nominal = nominal_step(&mut sim, &state, &u).expect("nominal step");
        let factor = workspace_factor(&sim, &nominal).expect("factor at the solution");
        group.bench_function("ift.jacobian_given_factor", |b| {
            b.iter(|| {
                black_box(
                    jacobians_given_factor(&sim, black_box(&nominal), factor, &[])
                        .expect("jacobians"),
                )
            })
        });
        group.bench_function("ift.residual_jacobian", |b| {
            b.iter(|| black_box(state_residual_jacobian(&sim, black_box(&nominal)).expect("dr")))
        });
        group.bench_function("duals.residual_jacobian", |b| {
            b.iter(|| {
                black_box(residual_jacobian(&sim, black_box(&nominal), &[], dirs).expect("dr"))
            })
        });
        let mut dv = -state_residual_jacobian(&sim, &nominal).expect("dr");
        factor.cholesky.solve_many_in_place(&mut dv);
        group.bench_function("ift.position_jacobian", |b| {
            b.iter(|| black_box(position_jacobian(&sim, black_box(&nominal), &dv, dirs)))
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(ThreadTime(WallTime));
    targets = derivatives
}
criterion_main!(benches);
