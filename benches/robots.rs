//! CRBA and RNEA on example-robot-data's Franka Panda with its hand (nv = 9), against
//! Pinocchio's `crba` and `rnea` timed by `scripts/robots/pinocchio_bench.py` on the same
//! configurations (issue 22, item 7).
//!
//! Entries, each at 20 random configurations within the joint limits (fixed seed), cycled:
//! - `panda/crba`: the poses at `q` ([`stiction::multibody::kinematics::update_poses`]) then
//!   the mass matrix `M(q)` ([`stiction::multibody::dynamics::mass_matrix`]), as Pinocchio's
//!   `crba` runs its own forward pass over the poses;
//! - `panda/rnea`: poses and velocities at `(q, v)`
//!   ([`stiction::multibody::kinematics::update_velocities`]) then the bias forces
//!   `bias(q, v)` ([`stiction::multibody::dynamics::bias_forces`]), Pinocchio's
//!   `rnea(q, v, 0)`.
//!
//! Times are the CPU time of the benchmarking thread ([`ThreadTime`]). The Panda comes from
//! the robots venv (`scripts/robots/setup.sh`; `STICTION_ROBOTS_VENV`, default `.venv-robots`);
//! without it the bench says so and times nothing.
//!
//! Run `cargo bench --bench robots` and, in the same session,
//! `.venv-robots/bin/python scripts/robots/pinocchio_bench.py PANDA_URDF`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::measurement::WallTime;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use nalgebra::DVector;
use rand::{rngs::StdRng, Rng, SeedableRng};

#[path = "common/thread_time.rs"]
mod thread_time;
use thread_time::ThreadTime;

use stiction::import::{load_model, ImportOptions};
use stiction::multibody::dynamics::{bias_forces, mass_matrix};
use stiction::multibody::kinematics::{update_poses, update_velocities, MultibodyData};
use stiction::scene::BodyMotion;

/// The Panda URDF in the robots venv, if it is installed.
fn panda() -> Option<PathBuf> {
    let venv = std::env::var_os("STICTION_ROBOTS_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv-robots"));
    let lib = std::fs::read_dir(venv.join("lib")).ok()?;
    lib.filter_map(|e| e.ok())
        .map(|e| {
            e.path().join(
                "site-packages/cmeel.prefix/share/example-robot-data/robots/panda_description/urdf/panda.urdf",
            )
        })
        .find(|p| p.exists())
}

fn bench(c: &mut Criterion<ThreadTime>) {
    let Some(urdf) = panda() else {
        eprintln!("robots bench: no Panda (run scripts/robots/setup.sh); nothing timed");
        return;
    };
    let description = load_model(&urdf, &ImportOptions::default())
        .expect("the Panda loads")
        .description;
    let limits: Vec<(f64, f64)> = description
        .bodies
        .iter()
        .filter_map(|b| match &b.motion {
            BodyMotion::Jointed(j) if j.joint.nv() == 1 => Some(
                j.limits
                    .map_or((-1.0, 1.0), |l| (l.lower.max(-3.0), l.upper.min(3.0))),
            ),
            _ => None,
        })
        .collect();
    let built = description.build().expect("the Panda builds");
    let model = built.simulator.model;
    assert_eq!(limits.len(), model.nv(), "one-velocity joints only");
    let mut rng = StdRng::seed_from_u64(22);
    let states: Vec<(DVector<f64>, DVector<f64>)> = (0..20)
        .map(|_| {
            let q = DVector::from_iterator(
                limits.len(),
                limits.iter().map(|&(lo, hi)| rng.random_range(lo..=hi)),
            );
            let v = DVector::from_iterator(
                limits.len(),
                (0..limits.len()).map(|_| rng.random_range(-1.0..=1.0)),
            );
            (q, v)
        })
        .collect();
    let mut data = MultibodyData::new(&model);
    let mut group = c.benchmark_group("panda");
    group
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    let mut k = 0;
    group.bench_function("crba", |b| {
        b.iter(|| {
            let (q, _) = &states[k % states.len()];
            k += 1;
            update_poses(&model, &mut data, black_box(q));
            black_box(mass_matrix(&model, &data))
        })
    });
    group.bench_function("rnea", |b| {
        b.iter(|| {
            let (q, v) = &states[k % states.len()];
            k += 1;
            update_poses(&model, &mut data, black_box(q));
            update_velocities(&model, &mut data, black_box(v));
            black_box(bias_forces(&model, &data, v))
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(ThreadTime(WallTime));
    targets = bench
}
criterion_main!(benches);
