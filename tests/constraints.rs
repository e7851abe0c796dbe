//! Joint limits, couplers, position servos, actuator transmissions and joint friction as rows
//! of the convex step (SAP Sec. V), on a three-link arm the project writes itself
//! (`tests/common/limited_arm.urdf`: limits on the shoulder and the elbow, the wrist mimics
//! the elbow). Each test asserts the physics at rest — the rows' efforts balance gravity, the
//! limits and couplers hold, a servo's offset is its gravity load over its gain — and the
//! derivatives through the rows agree three ways.

use std::path::PathBuf;

use nalgebra::DVector;
use stiction::derivatives::gradient_check;
use stiction::import::{load_model, ImportOptions};
use stiction::multibody::{bias_forces, forward_kinematics, MultibodyData};
use stiction::scene::description::{
    ActuatorDescription, ActuatorKind, BodyMotion, SceneDescription,
};
use stiction::solver::ConstraintKind;
use stiction::step::{Simulator, State, StepReport};

/// Standard gravity of the imported model (m/s²).
const G: f64 = 9.81;

/// The arm at rest at q = 0, its wrist at 0.1 rad, where the coupler puts it.
fn arm() -> SceneDescription {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/common/limited_arm.urdf");
    let mut d = load_model(&path, &ImportOptions::default())
        .expect("the test arm loads")
        .description;
    let BodyMotion::Jointed(wrist) = &mut d.bodies[2].motion else {
        panic!("the hand is jointed")
    };
    wrist.q0 = vec![0.1];
    d
}

fn servo(body: &str, kp: f64, kv: f64, force_limit: f64) -> ActuatorDescription {
    ActuatorDescription {
        name: None,
        body: body.into(),
        dof: 0,
        effort_limit: force_limit,
        control: None,
        kind: ActuatorKind::Servo { kp, kv },
        gear: 1.0,
        ctrl_range: None,
    }
}

/// Runs `d` for `seconds` with the constant input `u`; the simulator, the last state and the
/// last step's report.
fn run(d: &SceneDescription, seconds: f64, u: &[f64]) -> (Simulator, State, StepReport) {
    let built = d.build().expect("the scene builds");
    let mut sim = built.simulator;
    let mut state = built.initial_state;
    let u = DVector::from_column_slice(u);
    let steps = (seconds / sim.settings.dt).round() as usize;
    let mut report = None;
    for _ in 0..steps {
        let (next, r) = sim.step(&state, &u).expect("a step");
        assert!(next.q.iter().chain(next.v.iter()).all(|x| x.is_finite()));
        state = next;
        report = Some(r);
    }
    (sim, state, report.expect("at least one step"))
}

/// The generalized effort `Σ_j c_jᵀ γ_j/δt` of the rows of `report` (N·m).
fn row_efforts(sim: &Simulator, report: &StepReport) -> DVector<f64> {
    let model = &sim.model;
    let mut tau = DVector::zeros(model.nv());
    for r in &report.constraints {
        let effort = r.effort;
        match r.kind {
            ConstraintKind::LowerLimit(k) | ConstraintKind::Friction(k) => tau[k] += effort,
            ConstraintKind::UpperLimit(k) => tau[k] -= effort,
            ConstraintKind::Servo(j) => tau[model.actuators[j]] += effort,
            ConstraintKind::Coupler(i) => {
                let c = &model.couplers[i];
                tau[c.follower.1] += effort;
                tau[c.leader.1] -= c.multiplier * effort;
            }
        }
    }
    tau
}

/// The gravity (bias) effort at rest in `state` (N·m).
fn gravity_effort(sim: &Simulator, state: &State) -> DVector<f64> {
    let mut data = MultibodyData::new(&sim.model);
    let rest = DVector::zeros(sim.model.nv());
    forward_kinematics(&sim.model, &mut data, &state.q, &rest);
    bias_forces(&sim.model, &data, &rest)
}

fn effort_of(report: &StepReport, kind: ConstraintKind) -> f64 {
    report
        .constraints
        .iter()
        .find(|r| r.kind == kind)
        .map(|r| r.effort)
        .unwrap_or_else(|| panic!("no row {kind:?} in {:?}", report.constraints))
}

/// Released at q = 0, the arm falls onto the upper limits of its shoulder (0.5 rad) and
/// elbow (1 rad) and rests there; the wrist follows the elbow through the coupler. At rest the
/// rows' efforts are the gravity effort, component by component, and a limit's effort is the
/// gravity torque about its joint: m g (horizontal lever) of what hangs beyond it.
#[test]
fn limits_and_coupler_hold_the_arm_against_gravity() {
    let (sim, state, report) = run(&arm(), 3.0, &[]);
    let (q, v) = (&state.q, &state.v);
    assert!(v.amax() < 1e-7, "not at rest: v = {v}");
    // Near-rigid rows: the limits and the coupler hold to micro-radians.
    assert!(
        (q[0] - 0.5).abs() < 1e-5 && (q[1] - 1.0).abs() < 1e-5,
        "q = {q}"
    );
    assert!((q[2] - (-0.5 * q[1] + 0.1)).abs() < 1e-6, "q = {q}");
    let tau = row_efforts(&sim, &report);
    let bias = gravity_effort(&sim, &state);
    assert!(
        (&tau - &bias).amax() <= 1e-6 * bias.amax(),
        "row efforts {tau} against gravity {bias}"
    );
    // The shoulder's limit carries the moment of the whole arm about the shoulder, the
    // elbow's that of the forearm and the hand.
    let (a1, a12, a123) = (q[0], q[0] + q[1], q[0] + q[1] + q[2]);
    let forearm = 0.5 * G * 0.2 * a12.cos() + 0.2 * G * (0.4 * a12.cos() + 0.05 * a123.cos());
    let elbow = effort_of(&report, ConstraintKind::UpperLimit(1));
    let coupler = effort_of(&report, ConstraintKind::Coupler(0));
    // The coupler holds the hand's own moment about the wrist (the gravity effort on the
    // wrist is minus that moment); through ρ = −0.5 it takes half of it off the elbow.
    assert!(
        (coupler + 0.2 * G * 0.05 * a123.cos()).abs() < 1e-6,
        "{coupler}"
    );
    assert!(
        (elbow - forearm - 0.5 * coupler).abs() < 1e-6,
        "{elbow} vs {forearm}"
    );
    let shoulder = effort_of(&report, ConstraintKind::UpperLimit(0));
    let whole = 1.0 * G * 0.3 * a1.cos()
        + 0.5 * G * (0.6 * a1.cos() + 0.2 * a12.cos())
        + 0.2 * G * (0.6 * a1.cos() + 0.4 * a12.cos() + 0.05 * a123.cos());
    assert!(
        (shoulder - whole).abs() < 1e-6 * whole,
        "{shoulder} vs {whole}"
    );
    // The lower limits are slack.
    assert_eq!(effort_of(&report, ConstraintKind::LowerLimit(0)), 0.0);
}

/// Servos on the shoulder and the elbow hold targets inside the limits. At rest each servo's
/// effort is the gravity effort on its joint, and its offset from the target is that load
/// over its gain (a PD servo's steady-state error).
#[test]
fn servos_hold_their_targets_with_the_steady_state_error_of_their_gain() {
    let mut d = arm();
    let kp = 2000.0;
    d.actuators = vec![
        servo("upper", kp, 50.0, f64::INFINITY),
        servo("fore", kp, 20.0, f64::INFINITY),
    ];
    let target = [0.2, -0.4];
    let (sim, state, report) = run(&d, 3.0, &target);
    assert!(state.v.amax() < 1e-7, "not at rest: v = {}", state.v);
    let bias = gravity_effort(&sim, &state);
    let tau = row_efforts(&sim, &report);
    assert!(
        (&tau - &bias).amax() <= 1e-6 * bias.amax(),
        "{tau} vs {bias}"
    );
    for (j, k) in [(0, 0), (1, 1)] {
        let servo = effort_of(&report, ConstraintKind::Servo(j));
        let offset = target[j] - state.q[k];
        assert!(
            (kp * offset - servo).abs() <= 1e-9 * servo.abs() + 1e-9,
            "servo {j}: kp·offset {} vs effort {servo}",
            kp * offset
        );
    }
    let shoulder = effort_of(&report, ConstraintKind::Servo(0));
    assert!(
        (shoulder - bias[0]).abs() < 1e-6 * bias[0].abs(),
        "{shoulder} vs {}",
        bias[0]
    );
}

/// An implicit servo is stable at any gain: kp = 1e9 N·m/rad on a link of 0.03 kg·m² at
/// δt = 10 ms (kp δt²/I ≈ 3e6, where an explicit PD diverges beyond 4) reaches its target to
/// within its tiny steady-state error and rests.
#[test]
fn a_stiff_servo_is_stable_at_a_large_step() {
    let mut d = arm();
    d.settings.dt = 1e-2;
    // The default relative tolerance (1e-5 of the momentum) leaves an effort error of that
    // order; the balance below is asserted to 1e-6.
    d.settings.solver = d
        .settings
        .solver
        .with_relative_tolerance(1e-10)
        .expect("a valid tolerance")
        .with_cost_tolerance(0.0)
        .expect("a valid tolerance");
    let kp = 1e9;
    d.actuators = vec![
        servo("upper", kp, 1e3, f64::INFINITY),
        servo("fore", kp, 1e3, f64::INFINITY),
    ];
    let (sim, state, report) = run(&d, 2.0, &[0.3, -0.2]);
    assert!(state.v.amax() < 1e-6, "v = {}", state.v);
    let bias = gravity_effort(&sim, &state);
    assert!(
        (state.q[0] - (0.3 - bias[0] / kp)).abs() < 1e-9,
        "q = {}",
        state.q
    );
    // At rest but for the servo's own damping effort kv·v on what motion is left.
    let effort = effort_of(&report, ConstraintKind::Servo(0));
    let damping = 1e3 * state.v.amax();
    assert!(
        (effort - bias[0]).abs() < 1e-6 * bias[0].abs() + damping,
        "{effort} vs {}",
        bias[0]
    );
}

/// A servo whose force limit is below its gravity load gives way: the arm ends on its limits
/// and the servo pushes back with exactly its force limit.
#[test]
fn a_servo_at_its_force_limit_gives_way() {
    let mut d = arm();
    d.actuators = vec![servo("upper", 500.0, 20.0, 1.5)];
    let (_, state, report) = run(&d, 3.0, &[0.0]);
    assert!((state.q[0] - 0.5).abs() < 1e-5, "q = {}", state.q);
    let effort = effort_of(&report, ConstraintKind::Servo(0));
    assert!((effort + 1.5).abs() < 1e-12, "{effort}");
}

/// Coulomb friction on the shoulder and the elbow above their gravity load holds the arm where
/// it was released (stiction), each friction row carrying the gravity effort on its joint; a
/// friction below the load lets it move, the row at its bound.
#[test]
fn joint_friction_sticks_below_its_limit_and_slides_at_it() {
    let mut d = arm();
    let set_friction = |d: &mut SceneDescription, f: f64| {
        for b in &mut d.bodies[..2] {
            if let BodyMotion::Jointed(j) = &mut b.motion {
                j.friction = vec![f];
            }
        }
    };
    set_friction(&mut d, 20.0);
    let (sim, state, report) = run(&d, 0.5, &[]);
    assert!(state.q.rows(0, 2).amax() < 1e-4, "q = {}", state.q);
    let bias = gravity_effort(&sim, &state);
    let friction = effort_of(&report, ConstraintKind::Friction(0));
    assert!(
        (friction - bias[0]).abs() < 1e-6 * bias[0].abs(),
        "{friction} vs {}",
        bias[0]
    );
    set_friction(&mut d, 0.5);
    let (_, state, report) = run(&d, 0.05, &[]);
    assert!(state.v[0] > 0.1, "v = {}", state.v);
    assert!((effort_of(&report, ConstraintKind::Friction(0)) + 0.5).abs() < 1e-12);
}

/// A motor's input is clamped to its control range and multiplied by its gear: with gear 2
/// and range [−1, 1], inputs 5 and 1 give the same step, the one of a direct motor at 2.
#[test]
fn gear_and_control_range_shape_a_motor_input() {
    let motor = |gear: f64, ctrl_range: Option<[f64; 2]>| {
        let mut d = arm();
        d.actuators = vec![ActuatorDescription {
            kind: ActuatorKind::Effort,
            gear,
            ctrl_range,
            ..servo("upper", 0.0, 0.0, f64::INFINITY)
        }];
        d.build().expect("builds")
    };
    let step = |mut built: stiction::scene::description::BuiltScene, u: f64| {
        built
            .simulator
            .step(&built.initial_state, &DVector::from_element(1, u))
            .expect("a step")
            .0
            .v
    };
    let geared = step(motor(2.0, Some([-1.0, 1.0])), 5.0);
    assert_eq!(geared, step(motor(2.0, Some([-1.0, 1.0])), 1.0));
    let direct = step(motor(1.0, None), 2.0);
    assert!((&geared - &direct).amax() < 1e-15, "{geared} vs {direct}");
    assert!((&geared - step(motor(1.0, None), 0.0)).amax() > 1e-4);
}

/// The step Jacobians from `state` with input `u` by the IFT agree with the direct dual path
/// to 1e-9 and with central differences to 1e-6, block by block.
fn agree_three_ways(sim: &mut Simulator, state: &State, u: &DVector<f64>) {
    let check = gradient_check(sim, state, u, &[]).expect("the check runs");
    for b in &check.blocks {
        assert!(
            b.ift_vs_direct <= 1e-9,
            "{}: IFT vs direct {:.2e}",
            b.name,
            b.ift_vs_direct
        );
        assert!(
            b.ift_vs_fd <= 1e-6,
            "{}: IFT vs FD {:.2e}",
            b.name,
            b.ift_vs_fd
        );
    }
}

/// IFT step Jacobians through active rows agree with the direct dual path and central
/// differences: the arm at rest on its shoulder limit, the elbow servo pushing it onto its
/// own limit (limit and servo rows both active on one joint), the wrist coupled; then the
/// arm moving inside its limits, the servo tracking.
#[test]
fn gradients_through_limits_coupler_and_servos_agree_three_ways() {
    let mut d = arm();
    d.actuators = vec![servo("fore", 300.0, 10.0, f64::INFINITY)];
    let (mut sim, state, report) = run(&d, 1.0, &[1.4]);
    for kind in [
        ConstraintKind::UpperLimit(0),
        ConstraintKind::UpperLimit(1),
        ConstraintKind::Servo(0),
    ] {
        assert!(effort_of(&report, kind).abs() > 0.1, "{kind:?} inactive");
    }
    let u = DVector::from_element(1, 1.4);
    agree_three_ways(&mut sim, &state, &u);
    // Moving, the servo tracking inside the limits: rows inside their sets, R of the
    // near-rigid coupler changing with the configuration.
    let moving = State {
        t: 0.0,
        q: DVector::from_column_slice(&[0.1, 0.3, -0.05]),
        v: DVector::from_column_slice(&[0.5, -0.8, 0.4]),
    };
    agree_three_ways(&mut sim, &moving, &DVector::from_element(1, 0.2));
}
