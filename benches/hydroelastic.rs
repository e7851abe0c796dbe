//! Cost of pressure-field contact (issue 8): the contact-surface computation and a full step,
//! point vs hydroelastic, on the resting ball and the pressed box.
//!
//! Each scene is prepared outside the timed closures by running its problem file forward to a
//! resting (or pressed) state; then, from that same state:
//! - `surface`: the contact polygons of the pair as the step computes them, without vertex
//!   lists ([`stiction::hydroelastic::surface::for_each_polygon`]);
//! - `step.hydroelastic`: one forward step with pressure-field contact, repeated from the same
//!   state as a resting body's steps are, so the elements near the ground are those of the
//!   last step ([`stiction::hydroelastic::coherence`]);
//! - `step.hydroelastic.turning` (the ball at R/10): steps alternately from the state and
//!   from the ball settled (for 1 s) from a start turned by 0.3 rad, so every step meets the
//!   plane elsewhere in the mesh and traverses its BVH anew;
//! - `step.point`: one forward step of the same scene with the hydroelastic properties removed
//!   (point contact: one contact for the ball, the box's corners for the box).
//!
//! Scenes: `compliant-ball-rest` at the problem's resolution hint R/10 and at R/4, R/2 and R
//! (the ball remeshed at each hint),
//! `box-tilt-press` at t = 0.5 s.
//!
//! Times are the CPU time of the benchmarking thread ([`ThreadTime`],
//! `CLOCK_THREAD_CPUTIME_ID`), not wall time, so that the ratios within a row hold on a machine
//! shared with other jobs. Everything benchmarked runs on the calling thread (one pair: the
//! narrow phase is not parallel).
//!
//! Run with `cargo bench --bench hydroelastic`; the README's "Pressure-field contact cost"
//! table comes from it.
#![allow(non_snake_case)]

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, Criterion};

#[path = "common/thread_time.rs"]
mod thread_time;
use nalgebra::{DVector, Quaternion, UnitQuaternion, Vector3};
use thread_time::ThreadTime;

use stiction::hydroelastic::surface::for_each_polygon;
use stiction::hydroelastic::{Hydroelastic, Placed};
use stiction::multibody::{forward_kinematics, MultibodyData};
use stiction::problem::{load_problem, Problem};
use stiction::simulate::run_controlled;
use stiction::step::{geometry_poses, State};

struct Scene {
    name: &'static str,
    problem: Problem,
    state: State,
    pair: (usize, usize),
}

fn prepare(name: &'static str, file: &str, until: f64, hint: Option<f64>) -> Scene {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("problems")
        .join(format!("{file}.toml"));
    let mut problem = load_problem(&path).expect("problem loads");
    if let Some(h) = hint {
        let sim = &mut problem.simulator;
        let i = sim
            .geometries()
            .iter()
            .position(|g| matches!(g.hydroelastic, Some(Hydroelastic::Compliant { .. })))
            .expect("a compliant geometry");
        let mut g = sim.geometries()[i].clone();
        if let Some(Hydroelastic::Compliant {
            resolution_hint, ..
        }) = g.hydroelastic.as_mut()
        {
            *resolution_hint = h;
        }
        sim.replace_geometry(i, g).expect("remeshed");
    }
    let rec = run_controlled(
        &mut problem.simulator,
        &problem.controller,
        &problem.initial_state,
        until,
        |_, _| {},
    )
    .expect("rollout");
    let state = rec.states.last().expect("states").clone();
    let pair = rec
        .reports
        .last()
        .and_then(|r| r.patches.first())
        .map(|p| p.geometries)
        .expect("a patch");
    Scene {
        name,
        problem,
        state,
        pair,
    }
}

/// The ball's `state` (a free joint: position, then the quaternion `w, x, y, z`) turned by
/// `angle` (rad) about its body x axis, its velocities the same in the world: the same sphere,
/// meeting the ground elsewhere in its mesh.
fn turned_ball(state: &State, angle: f64) -> State {
    let mut turned = state.clone();
    let q = &state.q;
    let orientation = UnitQuaternion::from_quaternion(Quaternion::new(q[3], q[4], q[5], q[6]));
    let turn = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), angle);
    let now = orientation * turn;
    turned.q[3] = now.w;
    turned.q[4] = now.i;
    turned.q[5] = now.j;
    turned.q[6] = now.k;
    // The body-frame angular velocity ω_B' = R_turnᵀ ω_B keeps ω in the world.
    let omega = turn.inverse() * Vector3::new(state.v[0], state.v[1], state.v[2]);
    turned.v[0] = omega.x;
    turned.v[1] = omega.y;
    turned.v[2] = omega.z;
    turned
}

fn bench(c: &mut Criterion<ThreadTime>) {
    let scenes = [
        prepare("ball-rest-h-R10", "compliant-ball-rest", 0.5, None),
        prepare("ball-rest-h-R4", "compliant-ball-rest", 0.5, Some(0.0125)),
        prepare("ball-rest-h-R2", "compliant-ball-rest", 0.5, Some(0.025)),
        prepare("ball-rest-h-R", "compliant-ball-rest", 0.5, Some(0.05)),
        prepare("box-tilt-press", "box-tilt-press", 0.5, None),
    ];
    for mut scene in scenes {
        let sim = &mut scene.problem.simulator;
        let u = scene
            .problem
            .controller
            .effort(&scene.state, sim.model.nu());
        let mut group = c.benchmark_group(scene.name);
        group.measurement_time(Duration::from_secs(3));
        let report = sim.step(&scene.state, &u).expect("step").1;
        println!(
            "{}: {} polygons, {} Newton iterations, {} line-search iterations",
            scene.name,
            report.patches[0].polygons,
            report.stats.iterations,
            report.stats.line_search_iterations
        );
        {
            let mut data = MultibodyData::new(&sim.model);
            forward_kinematics(&sim.model, &mut data, &scene.state.q, &scene.state.v);
            let X_WG = geometry_poses(&sim.model, &data, sim.geometries(), scene.state.t);
            let collision = sim.collision();
            let side = |i: usize| Placed {
                geometry: collision.hydro(i).expect("hydroelastic"),
                X_WG: X_WG[i],
                modulus: sim.geometries()[i]
                    .hydroelastic
                    .and_then(|h| h.modulus())
                    .unwrap_or(0.0),
            };
            let (a, b) = (side(scene.pair.0), side(scene.pair.1));
            group.bench_function("surface", |bench| {
                bench.iter(|| {
                    for_each_polygon(black_box(&a), black_box(&b), false, |p| {
                        black_box(p);
                    })
                    .expect("surface")
                })
            });
        }
        group.bench_function("step.hydroelastic", |b| {
            b.iter(|| black_box(sim.step(black_box(&scene.state), &u).expect("step")))
        });
        if scene.name == "ball-rest-h-R10" {
            // The same ball settled from a turned start: every step meets the plane elsewhere
            // in the mesh, so no step reuses the last one's elements near the plane.
            let start = turned_ball(&scene.problem.initial_state, 0.3);
            let rec = run_controlled(sim, &scene.problem.controller, &start, 1.0, |_, _| {})
                .expect("rollout");
            let states = [
                scene.state.clone(),
                rec.states.last().expect("states").clone(),
            ];
            let turned = sim.step(&states[1], &u).expect("step").1;
            println!(
                "{} turned: {} polygons, {} Newton iterations",
                scene.name, turned.patches[0].polygons, turned.stats.iterations
            );
            let mut k = 0;
            group.bench_function("step.hydroelastic.turning", |b| {
                b.iter(|| {
                    k = 1 - k;
                    black_box(sim.step(black_box(&states[k]), &u).expect("step"))
                })
            });
        }
        for i in 0..sim.geometries().len() {
            let mut g = sim.geometries()[i].clone();
            g.hydroelastic = None;
            sim.replace_geometry(i, g).expect("point contact");
        }
        let point: DVector<f64> = u.clone();
        group.bench_function("step.point", |b| {
            b.iter(|| black_box(sim.step(black_box(&scene.state), &point).expect("step")))
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(ThreadTime(WallTime));
    targets = bench
}
criterion_main!(benches);
