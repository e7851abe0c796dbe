//! The library API beyond the README (whose examples run as doctests, `cargo test --doc`):
//! scenes made with `SceneBuilder` (PD laws, effort limits) and from a problem file, stepped
//! one step at a time or for a duration.

use stiction::geometry::Shape;

/// A pendulum (0.3 kg at 0.15 m below a horizontal axis) under a PD law towards 0.3 rad.
fn pendulum(effort_limit: f64) -> stiction::error::Result<stiction::scene::Scene> {
    use stiction::control::ControlLaw;
    use stiction::scene::{BodyDesc, SceneBuilder};
    let bob = Shape::Sphere { radius: 0.02 };
    let body = BodyDesc::revolute("pendulum", 0.3, bob, [0.0, 1.0, 0.0])
        .at([0.0, 0.0, 1.0])
        .shape_offset([0.0, 0.0, -0.15])
        .actuated(ControlLaw::pd(40.0, 1.0, 0.3), effort_limit);
    SceneBuilder::new().dt(1e-3).body(body).build()
}

#[test]
fn builder_scene_pd_settles_where_the_gains_balance_gravity() -> stiction::error::Result<()> {
    let mut scene = pendulum(f64::INFINITY)?;
    scene.run_for(3.0)?;
    // Equilibrium: kp (0.3 − θ) = m g l sin θ. The bob's own inertia adds nothing to it.
    let (kp, mgl) = (40.0, 0.3 * 9.81 * 0.15);
    let theta = scene.state().q[0];
    assert!(
        (kp * (0.3 - theta) - mgl * theta.sin()).abs() < 1e-6,
        "θ = {theta}"
    );
    assert!(scene.state().v[0].abs() < 1e-6);
    Ok(())
}

#[test]
fn builder_scene_effort_limit_caps_the_torque() -> stiction::error::Result<()> {
    // 0.05 N·m cannot hold 0.3 rad against gravity. The saturated motor is a constant torque
    // (its damping term is cut off too), so the pendulum swings without loss about the angle
    // where m g l sin θ = 0.05, from 0 to twice that.
    let mut scene = pendulum(0.05)?;
    let recording = scene.run_for(3.0)?;
    let expected = (0.05 / (0.3 * 9.81 * 0.15_f64)).asin();
    let theta: Vec<f64> = recording.states.iter().map(|s| s.q[0]).collect();
    let max = theta.iter().copied().fold(f64::MIN, f64::max);
    assert!(
        (max - 2.0 * expected).abs() < 1e-2 * expected,
        "max θ = {max}, centre {expected}"
    );
    for state in &recording.states {
        let u = scene.controller.effort(state, 1)[0];
        assert!(u.abs() <= 0.05, "u = {u} at t = {}", state.t);
    }
    Ok(())
}

#[test]
fn scene_steps_match_run_for_and_bodies_read_back() -> stiction::error::Result<()> {
    use stiction::scene::Scene;
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/falling-sphere.toml");
    let mut stepped = Scene::from(stiction::problem::load_problem(&path)?);
    let mut run = Scene::from(stiction::problem::load_problem(&path)?);
    for _ in 0..50 {
        stepped.step()?;
    }
    let recording = run.run_for(50.0 * 2e-3)?;
    assert_eq!(recording.states.len(), 51);
    assert_eq!(stepped.state(), run.state());
    let sphere = run.body("sphere").expect("sphere");
    assert_eq!(sphere.p_WB.x, run.state().q[0]);
    assert!(run.body("ground").is_none(), "geometries are not bodies");
    Ok(())
}

/// `[solver] condition_estimate = false` skips the estimate (`stats.csv`'s `condition` column
/// stays empty) and leaves the step as it was, bit for bit; by default every step that
/// iterated reports an estimate above 1.
#[test]
fn condition_estimate_can_be_turned_off_without_changing_the_step() -> stiction::error::Result<()> {
    use stiction::problem::{load_problem, parse_problem};
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/clutter.toml");
    let text = std::fs::read_to_string(&path).expect("problems/clutter.toml");
    assert!(
        text.contains("[solver]\n"),
        "clutter.toml has a [solver] table"
    );
    let off = text.replacen("[solver]\n", "[solver]\ncondition_estimate = false\n", 1);
    let mut with = load_problem(&path)?;
    let mut without = parse_problem(&off, &path)?;
    assert!(!without.simulator.settings.solver.condition_estimate);
    let (mut x, mut y) = (with.initial_state.clone(), without.initial_state.clone());
    let u = nalgebra::DVector::zeros(with.simulator.model.nu());
    let mut iterated = 0;
    for _ in 0..150 {
        let (next_x, report_x) = with.simulator.step(&x, &u)?;
        let (next_y, report_y) = without.simulator.step(&y, &u)?;
        assert_eq!(next_x, next_y);
        assert_eq!(report_y.stats.condition, None);
        if report_x.stats.iterations > 0 {
            iterated += 1;
            assert!(report_x.stats.condition.is_some_and(|c| c >= 1.0));
        }
        (x, y) = (next_x, next_y);
    }
    assert!(
        iterated > 10,
        "the clutter's first 0.3 s iterate: {iterated} steps"
    );
    Ok(())
}
