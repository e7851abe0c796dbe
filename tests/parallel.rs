//! rayon where it pays (narrow phase over candidate pairs, batches of rollouts) gives results
//! bit-identical to the serial run.

use std::path::PathBuf;

use nalgebra::Vector3;

use stiction::collision::{find_contacts, CollisionScene, Geometry, PARALLEL_MIN_PAIRS};
use stiction::contact::Approximation;
use stiction::geometry::Shape;
use stiction::math::Pose;
use stiction::multibody::model::BodyId;
use stiction::problem::load_problem;
use stiction::simulate::{run_batch, run_controlled, Rollout};

fn in_pool<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool")
        .install(f)
}

/// 64 spheres (5 cm radius) on a 4 × 4 × 4 grid 9.5 mm closer than touching, and a ground:
/// far more candidate pairs than the parallel threshold.
fn packed_spheres() -> (CollisionScene, Vec<Pose<f64>>) {
    let mut geometries = vec![Geometry::new(
        "ground",
        BodyId::World,
        Pose::identity(),
        Shape::HalfSpace,
    )];
    let mut poses = vec![Pose::identity()];
    for i in 0..64 {
        geometries.push(Geometry::new(
            format!("s{i}"),
            BodyId::Body(i),
            Pose::identity(),
            Shape::Sphere { radius: 0.05 },
        ));
        let (x, y, z) = ((i % 4) as f64, ((i / 4) % 4) as f64, (i / 16) as f64);
        let wobble = 1e-3 * (i as f64 * 0.7).sin();
        poses.push(Pose::translation(
            Vector3::new(x, y, z) * 0.0905 + Vector3::new(wobble, -wobble, 0.049),
        ));
    }
    (CollisionScene::new(geometries).expect("valid"), poses)
}

#[test]
fn narrow_phase_is_the_same_on_one_thread_and_on_four() {
    let (scene, poses) = packed_spheres();
    let serial = in_pool(1, || find_contacts(&scene, &poses, 0.01).unwrap());
    let parallel = in_pool(4, || find_contacts(&scene, &poses, 0.01).unwrap());
    // Neighbours along the grid axes, and the bottom layer on the ground.
    assert!(serial.len() >= 3 * 48 + 16, "{} contacts", serial.len());
    assert!(serial.len() > PARALLEL_MIN_PAIRS);
    assert_eq!(serial, parallel);
}

#[test]
fn a_batch_of_rollouts_is_bit_identical_to_running_them_in_turn() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("problems/clutter.toml");
    let make = |approximation| {
        let mut p = load_problem(&path).expect("clutter loads");
        p.simulator.settings.approximation = approximation;
        Rollout {
            simulator: p.simulator,
            controller: p.controller,
            initial: p.initial_state,
            duration: 0.24,
        }
    };
    let models = [
        Approximation::Lagged,
        Approximation::Sap,
        Approximation::Similar,
    ];
    let mut batch: Vec<Rollout> = models.iter().map(|&a| make(a)).collect();
    let parallel = in_pool(3, || run_batch(&mut batch));
    for (&a, recording) in models.iter().zip(parallel) {
        let recording = recording.expect("rollout");
        let mut r = make(a);
        let serial = run_controlled(
            &mut r.simulator,
            &r.controller,
            &r.initial,
            r.duration,
            |_, _| (),
        )
        .expect("rollout");
        assert_eq!(recording.states, serial.states, "{a}");
        assert_eq!(recording.reports, serial.reports, "{a}");
        let contacts = serial.reports.last().unwrap().contacts.len();
        assert!(contacts > 0, "{a}: the bottom layer has landed");
    }
}

/// Regression: `clone_simulator` (the copies that iLQR's derivative workers, identification's
/// staged horizons and the Python batch step) rebuilt the geometry but dropped the body pairs
/// excluded from collision, so a copy of a robot let its adjacent links touch.
#[test]
fn a_copied_simulator_keeps_its_excluded_pairs() {
    let mut problem =
        load_problem(&PathBuf::from("problems/falling-sphere.toml")).expect("problem");
    let sim = &mut problem.simulator;
    let sphere = BodyId::Body(0);
    sim.exclude_collisions(BodyId::World, sphere);
    let mut copy = stiction::optimize::ilqr::clone_simulator(sim).expect("copy");
    assert_eq!(copy.collision().excluded(), &[(BodyId::World, sphere)]);
    // With the ground excluded the sphere falls through it, in the copy as in the original.
    let u = nalgebra::DVector::zeros(0);
    let (mut a, mut b) = (problem.initial_state.clone(), problem.initial_state.clone());
    for _ in 0..100 {
        a = problem.simulator.step(&a, &u).expect("step").0;
        b = copy.step(&b, &u).expect("step").0;
    }
    assert_eq!(a.q, b.q);
    assert!(
        a.q[2] < -0.1,
        "the sphere fell through the excluded ground: z = {}",
        a.q[2]
    );
}
