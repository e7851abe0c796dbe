//! Unknowns that belong to a record rather than to the scene: its initial velocities and its
//! clock offset (issue 24, item 4). Their residual Jacobian and adjoint gradient against
//! central differences; their estimates, with friction, from positions sampled off the
//! simulation grid, one set per record; multiple shooting from roll-pitch-yaw columns; and
//! the errors for names that do not fit the body.

#[path = "common/binary.rs"]
mod binary;

use std::path::PathBuf;

use nalgebra::DMatrix;
use stiction::identify::residuals::Need;
use stiction::identify::{
    identify, load_identification, IdentificationProblem, IdentifySettings, MeasuredTrajectory,
    ParamSpec, Shooting, Status, Unknown,
};
use stiction::problem::{load_problem, Problem};
use stiction::step::Simulator;

fn scene(name: &str) -> Problem {
    load_problem(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("problems")
            .join(format!("{name}.toml")),
    )
    .unwrap()
}

fn copy(sim: &Simulator) -> Simulator {
    Simulator::new(sim.model.clone(), sim.geometries().to_vec(), sim.settings).unwrap()
}

/// A record of the sliding box's position (`box.px`, `box.pz`) at the recorded times
/// `0, 7.3 ms, 14.6 ms, …` (off the 10 ms grid), values to be filled in.
fn blank_record(sim: &Simulator, name: &str, samples: usize) -> MeasuredTrajectory {
    let times: Vec<f64> = (0..samples).map(|k| 0.0073 * k as f64).collect();
    MeasuredTrajectory::new(
        name.into(),
        vec!["box.px".into(), "box.pz".into()],
        times,
        DMatrix::zeros(samples, 2),
        sim.settings.dt,
        Some(1e-4),
    )
    .unwrap()
}

/// The sliding box (1 kg, 10 ms steps) with friction, the initial velocity along x and the
/// clock offset unknown, on `records` blank records.
fn sliding_box_problem(records: usize) -> (Problem, IdentificationProblem) {
    let scene = scene("sliding-box");
    let sim = &scene.simulator;
    let parameters = ["friction", "velocity.x@box", "time_offset"]
        .iter()
        .map(|name| {
            ParamSpec::new(sim, name, None)
                .unwrap()
                .starting_from(&scene.initial_state)
        })
        .collect();
    let problem = IdentificationProblem::new(
        "sliding-box",
        copy(sim),
        scene.initial_state.clone(),
        parameters,
        (0..records)
            .map(|j| blank_record(sim, &format!("record-{j}"), 45))
            .collect(),
    )
    .unwrap();
    (scene, problem)
}

/// The problem's coordinates `s` at physical values θ.
fn coordinates(problem: &IdentificationProblem, theta: &[f64]) -> Vec<f64> {
    problem
        .parameters
        .iter()
        .zip(theta)
        .map(|(p, &v)| p.transform.to_coordinate(&p.name, v).unwrap())
        .collect()
}

/// `∂r/∂s` of the initial velocity and the clock offset from forward sensitivities agrees with
/// central differences of the residuals, and the adjoint gradient with `Jᵀ r`.
#[test]
fn record_unknowns_differentiate_like_their_finite_differences() {
    let (_, problem) = sliding_box_problem(1);
    let names: Vec<&str> = problem.parameters.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["friction", "velocity.x@box", "time_offset"]);
    // 13 ms of offset: the samples fall between grid points, none within 1e-6 s of one.
    let s = coordinates(&problem, &[0.45, 1.2, 0.013]);
    let exact = problem.evaluate(&s, Need::Jacobian).unwrap();
    let jacobian = exact.jacobian().unwrap();
    let r = exact.residuals();
    // Steps and tolerances: friction's column carries the Newton solves' tolerance, so its
    // best step is larger (3.6e-8 measured at 1e-5); the offset enters linearly between grid
    // points (1.5e-12 at 1e-5 s).
    for (p, h, tolerance) in [(0, 1e-5, 1e-6), (1, 1e-6, 1e-8), (2, 1e-5, 1e-10)] {
        let at = |delta: f64| {
            let mut s = s.clone();
            s[p] += delta;
            problem.evaluate(&s, Need::Residuals).unwrap().residuals()
        };
        let fd = (at(h) - at(-h)) / (2.0 * h);
        let error = (&fd - jacobian.column(p)).amax() / fd.amax();
        assert!(fd.amax() > 1.0, "{}: no sensitivity", names[p]);
        assert!(
            error < tolerance,
            "{}: relative error {error:.2e}",
            names[p]
        );
    }
    let gradient = problem
        .evaluate(&s, Need::Gradient)
        .unwrap()
        .gradient()
        .unwrap();
    let expected = jacobian.transpose() * r;
    let error = (&gradient - &expected).amax() / expected.amax();
    assert!(error < 1e-9, "adjoint gradient: relative error {error:.2e}");
}

/// Two records of the box launched at different, unmeasured speeds, their clocks started
/// 23.7 ms and 41.2 ms after the launch, positions only, sampled every 7.3 ms: friction, both
/// speeds and both offsets come back from starts at the scene's values (1 m/s, no offset).
#[test]
fn launch_speeds_and_clock_offsets_come_back_with_friction() {
    let (_, mut problem) = sliding_box_problem(2);
    let names: Vec<&str> = problem.parameters.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "friction",
            "velocity.x@box[0]",
            "velocity.x@box[1]",
            "time_offset[0]",
            "time_offset[1]"
        ]
    );
    let truth = [0.5, 1.3, 0.8, 0.0237, 0.0412];
    let made = problem
        .evaluate(&coordinates(&problem, &truth), Need::Residuals)
        .unwrap();
    for (record, evaluation) in problem.trajectories.iter_mut().zip(made.trajectories) {
        record.values = evaluation.simulated;
    }
    // The 0.8 m/s launch stops after 0.16 s, inside the record; 1.3 m/s after 0.27 s.
    let settings = IdentifySettings {
        starts: 1,
        ..IdentifySettings::default()
    };
    let report = identify(&problem, &settings).unwrap();
    assert_eq!(report.status, Status::Converged, "{}", report.status_reason);
    for (e, truth) in report.estimates.iter().zip(truth) {
        let estimate = e.estimate.unwrap();
        assert!(
            (estimate - truth).abs() <= 1e-4 * truth.abs(),
            "{} = {estimate}, true {truth}",
            e.name
        );
        let (Some(lo), Some(hi)) = e.ci95 else {
            panic!("{}: open interval", e.name)
        };
        assert!(lo <= truth && truth <= hi, "{}: [{lo}, {hi}]", e.name);
    }
}

/// Multiple shooting restarts each segment from the measured state; with the orientation
/// measured as roll, pitch and yaw (and no velocities) the angular velocity is estimated from
/// the angles' slopes, so the tumbling box can be cut into segments and μ still comes back.
#[test]
fn multiple_shooting_runs_on_roll_pitch_yaw_columns() {
    use nalgebra::{Quaternion, UnitQuaternion};
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("problems/identify/identify-all.toml");
    let file = load_identification(&path, None).unwrap();
    let original = &file.problem.trajectories[0];
    let column = |name: &str| {
        original
            .columns
            .iter()
            .position(|c| c == &format!("box.{name}"))
            .unwrap()
    };
    let ns = original.times.len();
    let values = DMatrix::from_fn(ns, 6, |k, c| {
        let v = &original.values;
        if c < 3 {
            return v[(k, column(["px", "py", "pz"][c]))];
        }
        let q = UnitQuaternion::from_quaternion(Quaternion::new(
            v[(k, column("qw"))],
            v[(k, column("qx"))],
            v[(k, column("qy"))],
            v[(k, column("qz"))],
        ));
        let (roll, pitch, yaw) = q.euler_angles();
        [roll, pitch, yaw][c - 3]
    });
    let sim = &file.problem.simulator;
    let record = MeasuredTrajectory::new(
        "tumbling-box-rpy".into(),
        ["px", "py", "pz", "roll", "pitch", "yaw"]
            .map(|c| format!("box.{c}"))
            .to_vec(),
        original.times.clone(),
        values,
        sim.settings.dt,
        None,
    )
    .unwrap();
    let problem = IdentificationProblem::new(
        "rpy-shooting",
        copy(sim),
        file.problem.initial_state.clone(),
        vec![ParamSpec::new(sim, "friction", Some(0.6)).unwrap()],
        vec![record],
    )
    .unwrap();
    let settings = IdentifySettings {
        shooting: Shooting::Segments(10),
        ..file.settings
    };
    let report = identify(&problem, &settings).unwrap();
    assert!(
        report.shooting.0.is_some(),
        "multiple shooting: {}",
        report.shooting.1
    );
    assert_eq!(report.status, Status::Converged, "{}", report.status_reason);
    let mu = report.estimates[0].estimate.unwrap();
    assert!((mu - 0.4).abs() < 0.01 * 0.4, "μ = {mu}");
}

/// Names that do not fit the body's joint, or that do not exist, are refused with the reason.
#[test]
fn record_unknowns_that_do_not_fit_are_refused() {
    let sim = &scene("sliding-box").simulator;
    let arm = &scene("push-ball").simulator;
    for (sim, name, reason) in [
        (sim, "v0@box", "velocity.x|y|z@BODY"),
        (sim, "velocity.q@box", "x, y or z"),
        (sim, "velocity.x@crate", "no body named `crate`"),
        (arm, "velocity.x@link1", "v0@BODY or v0.i@BODY"),
        (arm, "v0.1@link1", "(1 velocity)"),
    ] {
        let error = ParamSpec::new(sim, name, None).unwrap_err().to_string();
        assert!(error.contains(reason), "{name}: {error}");
    }
    let link = arm.model.body_index("link2").unwrap();
    let v0 = ParamSpec::new(arm, "v0@link2", None).unwrap();
    assert_eq!(
        v0.unknown,
        Unknown::InitialVelocity {
            dof: arm.model.joints[link].v_start,
            record: None
        }
    );
    // One unknown listed twice under two spellings of one record.
    let (scene, problem) = sliding_box_problem(1);
    let twice = IdentificationProblem::new(
        "twice",
        copy(&scene.simulator),
        scene.initial_state.clone(),
        vec![
            ParamSpec::new(&scene.simulator, "time_offset", None).unwrap(),
            problem.parameters[2].clone(),
        ],
        problem.trajectories.clone(),
    );
    let error = twice.unwrap_err().to_string();
    assert!(error.contains("listed once"), "{error}");
}

/// The same unknowns from an identification file, run as a user would (`stiction identify
/// FILE --json`): `time_offset` and `velocity.x@box` take the `identity` transform and start
/// at the scene's values (0 s, 1 m/s) without being told.
#[test]
fn an_identification_file_estimates_the_launch_and_the_clock_offset() {
    let (_, problem) = sliding_box_problem(1);
    let truth = [0.5, 1.25, 0.031];
    let made = problem
        .evaluate(&coordinates(&problem, &truth), Need::Residuals)
        .unwrap();
    let record = &problem.trajectories[0];
    let dir = binary::scratch("launch");
    let mut csv = String::from("t,box.px,box.pz\n");
    for (k, t) in record.times.iter().enumerate() {
        let y = &made.trajectories[0].simulated;
        csv += &format!("{t},{},{}\n", y[(k, 0)], y[(k, 1)]);
    }
    std::fs::write(dir.join("launch.csv"), csv).unwrap();
    let scene = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("problems/sliding-box.toml");
    let toml = format!(
        r#"scene = "{}"
starts = 1
noise = 1e-4

[[parameter]]
name = "friction"
initial = 0.7

[[parameter]]
name = "velocity.x@box"

[[parameter]]
name = "time_offset"
lower = -0.05
upper = 0.05

[[data]]
file = "launch.csv"
"#,
        scene.display()
    );
    let path = dir.join("launch.toml");
    std::fs::write(&path, toml).unwrap();
    let file = load_identification(&path, None).unwrap();
    let starts: Vec<(f64, stiction::identify::Transform)> = file
        .problem
        .parameters
        .iter()
        .map(|p| (p.initial, p.transform))
        .collect();
    use stiction::identify::Transform::{Identity, Log};
    assert_eq!(starts, [(0.7, Log), (1.0, Identity), (0.0, Identity)]);
    let output = binary::stiction(&dir, &["identify", "launch.toml", "--json", "--out", "fit"]);
    assert!(output.status.success(), "{}", binary::stderr(&output));
    let json: serde_json::Value = serde_json::from_str(&binary::stdout(&output)).unwrap();
    assert_eq!(json["status"], "converged", "{json}");
    let estimates = json["parameters"].as_array().unwrap();
    for (e, truth) in estimates.iter().zip(truth) {
        let estimate = e["estimate"].as_f64().unwrap();
        assert!(
            (estimate - truth).abs() <= 1e-4 * truth,
            "{} = {estimate}, true {truth}",
            e["name"]
        );
    }
    assert_eq!(estimates[2]["name"], "time_offset");
}
