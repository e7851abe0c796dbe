//! What the `stiction` binary does when things go wrong (issue 25): inputs that would panic
//! or abort are refused with an error naming the field or flag and the memory they would
//! need; a failure or Ctrl-C keeps every completed step on disk with a `run.json` that says
//! how the run ended; batches write the runs that succeeded and name the ones that failed;
//! step errors say at which step and time they happened. Each reproducer of the issue is a
//! test here, on short runs of small scenes.

#[path = "common/binary.rs"]
mod binary;

use std::path::Path;
use std::process::Output;

use binary::{command, problem, scratch, stderr, stiction};
use std::time::{Duration, Instant};

use stiction::error::Error;
use stiction::problem::parse_problem;
use stiction::scene::Scene;

fn shipped_text(name: &str) -> String {
    std::fs::read_to_string(problem(name)).expect("a shipped problem")
}

/// Asserts exit code 1 (an error, not a panic's 101 nor an abort's 134) and an error line on
/// stderr that contains every one of `parts`.
fn assert_error(o: &Output, parts: &[&str]) {
    let text = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(text.starts_with("error: "), "{text}");
    for part in parts {
        assert!(text.contains(part), "`{part}` not in: {text}");
    }
}

fn run_json(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("run.json"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join("run.json").display()));
    serde_json::from_str(&text).expect("run.json is JSON")
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .count()
}

/// A falling sphere whose contact stiffness overflows the solver (k = 1e300 N/m): it lands
/// at step 35 (t = 0.07 s) and its Newton cost is no longer finite there.
fn overflowing_sphere() -> String {
    let text = shipped_text("falling-sphere");
    let bad = text.replacen("stiffness = 1e7", "stiffness = 1e300", 1);
    assert_ne!(
        bad, text,
        "test setup: falling-sphere.toml has `stiffness = 1e7`"
    );
    bad
}

#[test]
fn step_counts_that_would_not_fit_in_memory_are_refused_naming_the_flag() {
    let dir = scratch("steps");
    let fs = problem("falling-sphere");
    let out = stiction(
        &dir,
        &["simulate", &fs, "--dt", "1e-300", "--duration", "1"],
    );
    assert_error(
        &out,
        &[
            "`--dt`: 1 s at δt = 1e-300 s: 1e300 steps",
            "the cap is 8.59 GB",
        ],
    );
    let out = stiction(&dir, &["simulate", &fs, "--duration", "1e300"]);
    assert_error(
        &out,
        &["`--duration`: 1e300 s at δt = 0.002 s: 5e302 steps"],
    );
    // 1e12 steps: terabytes, said so before anything is allocated.
    let out = stiction(&dir, &["simulate", &fs, "--dt", "1e-12", "--duration", "1"]);
    assert_error(&out, &["1e12 steps of", " TB; the cap is 8.59 GB"]);
    // The ncp stepper.
    let out = stiction(
        &dir,
        &["simulate", &problem("cube-slide"), "--duration", "1e300"],
    );
    assert_error(&out, &["`--duration`: 1e300 s at δt = 0.01 s: 1e302 steps"]);
    // A problem file: located at the field.
    let text = shipped_text("falling-sphere").replacen("duration = 0.3", "duration = 1e308", 1);
    std::fs::write(dir.join("long.toml"), text).unwrap();
    let out = stiction(&dir, &["simulate", "long.toml"]);
    assert_error(
        &out,
        &["long.toml:5:12: field `simulation.duration`", "inf steps"],
    );
    assert!(
        !dir.join("out").exists(),
        "a folder was made for a refused run"
    );
}

#[test]
fn optimization_horizons_and_identification_data_are_bounded() {
    let dir = scratch("horizons");
    let push_ball = shipped_text("push-ball");
    let huge = push_ball.replacen(
        "[optimize]\nhorizon = 0.5",
        "[optimize]\nhorizon = 1e308",
        1,
    );
    assert_ne!(
        huge, push_ball,
        "test setup: push-ball.toml's [optimize] horizon"
    );
    std::fs::write(dir.join("horizon.toml"), huge).unwrap();
    for cmd in ["optimize", "mpc"] {
        let out = stiction(&dir, &[cmd, "horizon.toml"]);
        assert_error(&out, &["field `optimize.horizon`", "inf steps"]);
    }
    let mpc = push_ball.replacen(
        "[optimize.mpc]\nhorizon = 0.5",
        "[optimize.mpc]\nhorizon = 1e9",
        1,
    );
    assert_ne!(
        mpc, push_ball,
        "test setup: push-ball.toml's [optimize.mpc] horizon"
    );
    std::fs::write(dir.join("mpc.toml"), mpc).unwrap();
    let out = stiction(&dir, &["mpc", "mpc.toml"]);
    assert_error(&out, &["field `optimize.mpc.horizon`", "1e11 steps", "TB"]);
    assert!(
        !dir.join("out").exists(),
        "a folder was made for a refused run"
    );

    // Measured data whose last sample is at t = 1e6 s: 1e8 steps of δt = 10 ms.
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/identify/data/sliding-box.csv");
    let text = std::fs::read_to_string(data).unwrap();
    let mut rows: Vec<&str> = text.lines().take(3).collect();
    rows.push("1000000,0.1,0,0.05,1,0,0,0,0,0,0,0,0,0");
    std::fs::write(dir.join("far.csv"), rows.join("\n")).unwrap();
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/identify/identify-friction.toml");
    let out = stiction(
        &dir,
        &["identify", &file.display().to_string(), "--data", "far.csv"],
    );
    assert_error(
        &out,
        &[
            "far.csv: the rollout to the last sample does not fit in memory",
            "1e8 steps",
        ],
    );
}

#[test]
fn scene_run_for_refuses_a_duration_that_would_not_fit() {
    let mut p = parse_problem(
        &shipped_text("falling-sphere"),
        Path::new("falling-sphere.toml"),
    )
    .expect("the shipped problem");
    let mut scene = Scene::new(p.simulator, p.controller, p.initial_state.clone());
    match scene.run_for(1e300) {
        Err(Error::TooLarge { field, .. }) => assert_eq!(field, "duration"),
        other => panic!("expected TooLarge, got {other:?}"),
    }
    assert_eq!(scene.state().t, 0.0, "the scene did not move");
    p = parse_problem(&overflowing_sphere(), Path::new("overflow.toml")).unwrap();
    let mut scene = Scene::new(p.simulator, p.controller, p.initial_state);
    match scene.run_for(0.3) {
        Err(Error::Step { step, t, source }) => {
            assert_eq!(step, 35);
            assert!((t - 0.07).abs() < 1e-12, "t = {t}");
            // Issue 25 item 3: the error names the body where the solve is furthest from
            // optimality and what it touched, around the solver's error and statistics.
            match *source {
                Error::Near {
                    ref body,
                    ref contacts,
                    ref source,
                } => {
                    assert_eq!(
                        (body.as_str(), contacts.as_slice()),
                        ("sphere", &["ground".to_string()][..])
                    );
                    assert!(
                        matches!(**source, Error::NonFinite { ref stats, .. } if stats.contacts == 1 && stats.worst_velocity.is_some()),
                        "{source:?}"
                    );
                }
                ref other => panic!("expected the error near the sphere, got {other:?}"),
            }
        }
        other => panic!("expected a step error, got {other:?}"),
    }
}

#[test]
fn sweep_lists_and_pressure_field_meshes_are_bounded() {
    let dir = scratch("lists");
    let out = stiction(
        &dir,
        &[
            "sweep",
            &problem("falling-sphere"),
            "--stiffness",
            "1:1e300:1.000001",
        ],
    );
    assert_error(
        &out,
        &["`--stiffness`: 6.91e8 rollouts are too many; the cap is 10000 rollouts"],
    );
    // Elandt's pencil scrub with a finger 16 m long at its 4 mm mesh resolution.
    let text = shipped_text("pencil-scrub");
    let long = text.replacen("size = [0.02, 0.01, 0.02]", "size = [16.0, 0.01, 0.02]", 1);
    assert_ne!(long, text, "test setup: pencil-scrub.toml's finger size");
    std::fs::create_dir(dir.join("problems")).unwrap();
    std::fs::write(dir.join("problems/long-finger.toml"), long).unwrap();
    let start = Instant::now();
    let out = stiction(&dir, &["simulate", "problems/long-finger.toml"]);
    assert_error(
        &out,
        &[
            "field `geometry[1].hydroelastic.resolution_hint`",
            "about 1.92e8 triangles",
            "MESH_TRIANGLE_CAP",
        ],
    );
    // `list --dir` reports it as a file that does not load, at once.
    let out = stiction(&dir, &["list", "--dir", "problems"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("does not load"));
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_sweep_keeps_the_rows_of_the_stiffnesses_that_ran() {
    let dir = scratch("sweep");
    let args = [
        "sweep",
        &problem("falling-sphere"),
        "--stiffness",
        "1e5,1e300,1e6",
        "--duration",
        "0.1",
        "--settle",
        "0.05",
        "--out",
        "sw",
        "--quiet",
    ];
    let out = stiction(&dir, &args);
    assert_error(
        &out,
        &[
            "1 of 3 runs failed: stiffness 1e300 N/m: step 35 (from t = 0.07",
            "non-finite value in Newton iteration",
        ],
    );
    let sweep = std::fs::read_to_string(dir.join("sw/sweep.csv")).unwrap();
    let stiffness: Vec<&str> = sweep
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(stiffness, ["1e5", "1e6"]);
    assert!(sweep.lines().skip(1).all(|l| l.ends_with(",50")), "{sweep}");
    let record = run_json(&dir.join("sw"));
    assert_eq!(record["status"], "failed");
    assert_eq!(
        (
            record["steps_planned"].as_u64(),
            record["steps_completed"].as_u64()
        ),
        (Some(3), Some(2))
    );
    assert_eq!(record["solver_stats"]["failed_solve"]["contacts"], 1);
}

#[test]
fn several_files_write_every_run_that_succeeded_and_name_each_failure() {
    let dir = scratch("batch");
    let bad_dt = shipped_text("falling-sphere").replacen("dt = 2e-3", "dt = -1", 1);
    std::fs::write(dir.join("bad-dt.toml"), bad_dt).unwrap();
    std::fs::write(dir.join("overflow.toml"), overflowing_sphere()).unwrap();
    let out = stiction(
        &dir,
        &[
            "simulate",
            "bad-dt.toml",
            "overflow.toml",
            &problem("bouncing-sphere"),
            "--duration",
            "0.1",
            "--quiet",
        ],
    );
    assert_error(
        &out,
        &[
            "2 of 3 runs failed: ",
            "bad-dt.toml: bad-dt.toml:4:6: field `simulation.dt`",
            "overflow.toml: step 35 (from t = 0.07",
            "(the steps before it are in out/overflow/1)",
        ],
    );
    let bouncing = dir.join("out/bouncing-sphere/1");
    assert_eq!(run_json(&bouncing)["status"], "complete");
    assert_eq!(lines(&bouncing.join("trajectory.csv")), 2 + 100);
    // The failed run keeps its 35 steps: a header, the initial state and one row per step.
    let overflow = dir.join("out/overflow/1");
    let record = run_json(&overflow);
    assert_eq!(record["status"], "failed");
    assert_eq!(record["steps_completed"], 35);
    assert_eq!(lines(&overflow.join("trajectory.csv")), 2 + 35);
    assert_eq!(lines(&overflow.join("stats.csv")), 1 + 35);
    assert!(!dir.join("out/bad-dt").exists());
}

#[test]
fn run_json_says_how_a_run_ended_and_is_written_last() {
    let dir = scratch("record");
    let out = stiction(
        &dir,
        &[
            "simulate",
            &problem("falling-sphere"),
            "--duration",
            "0.1",
            "--out",
            "ok",
            "--quiet",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let record = run_json(&dir.join("ok"));
    let keys: Vec<&str> = record
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "status",
            "steps_planned",
            "steps_completed",
            "t",
            "error",
            "solver_stats",
            "command",
            "version",
            "warnings"
        ]
    );
    assert_eq!(record["status"], "complete");
    assert_eq!(
        (
            record["steps_planned"].as_u64(),
            record["steps_completed"].as_u64()
        ),
        (Some(50), Some(50))
    );
    assert!((record["t"].as_f64().unwrap() - 0.1).abs() < 1e-12);
    assert!(record["error"].is_null());
    assert!(record["solver_stats"]["iterations_max"].as_u64().unwrap() >= 1);
    assert!(record["command"]
        .as_str()
        .unwrap()
        .starts_with("stiction simulate "));
    assert_eq!(record["version"], env!("CARGO_PKG_VERSION"));
    let written = |name: &str| {
        std::fs::metadata(dir.join("ok").join(name))
            .unwrap()
            .modified()
            .unwrap()
    };
    assert!(written("run.json") >= written("trajectory.csv"));

    // A run that fails at step 35 records where, with the failed solve's statistics.
    std::fs::write(dir.join("overflow.toml"), overflowing_sphere()).unwrap();
    let out = stiction(
        &dir,
        &["simulate", "overflow.toml", "--out", "failed", "--plot"],
    );
    assert_error(&out, &["step 35 (from t = 0.07", "non-finite value"]);
    let failed = dir.join("failed");
    let record = run_json(&failed);
    assert_eq!(record["status"], "failed");
    assert_eq!(
        (
            record["steps_planned"].as_u64(),
            record["steps_completed"].as_u64()
        ),
        (Some(150), Some(35))
    );
    assert!(record["error"]
        .as_str()
        .unwrap()
        .starts_with("step 35 (from t = 0.07"));
    assert_eq!(record["solver_stats"]["failed_solve"]["contacts"], 1);
    assert_eq!(lines(&failed.join("trajectory.csv")), 2 + 35);
    // The figures are drawn from the steps that exist.
    assert!(failed.join("positions.png").exists());
}

#[test]
fn ctrl_c_stops_a_simulation_keeping_every_completed_step() {
    let dir = scratch("sigint");
    // 500 000 steps: far more than the test waits for.
    let mut child = command(
        &dir,
        &[
            "simulate",
            &problem("falling-sphere"),
            "--duration",
            "1000",
            "--out",
            "long",
            "--quiet",
        ],
    )
    .spawn()
    .expect("the binary starts");
    let trajectory = dir.join("long/trajectory.csv");
    let start = Instant::now();
    // Rows reach the disk at least every second while the run goes on.
    while std::fs::read_to_string(&trajectory).map_or(0, |t| t.lines().count()) < 3 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no rows written while running"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = child.id() as libc::pid_t;
    // SAFETY: sends SIGINT to the child this test started and still owns.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let status = child.wait().expect("the binary ends");
    assert_eq!(status.code(), Some(130));
    let record = run_json(&dir.join("long"));
    assert_eq!(record["status"], "interrupted");
    assert_eq!(record["steps_planned"], 500_000);
    let completed = record["steps_completed"].as_u64().unwrap() as usize;
    assert!(completed > 0 && completed < 500_000, "{completed}");
    assert_eq!(lines(&trajectory), 2 + completed);
    assert_eq!(lines(&dir.join("long/stats.csv")), 1 + completed);
    let t = record["t"].as_f64().unwrap();
    assert!((t - 2e-3 * completed as f64).abs() < 1e-6 * t, "t = {t}");
}

#[test]
fn an_output_folder_that_cannot_be_written_is_refused_before_the_run() {
    let dir = scratch("unwritable");
    // A folder under a regular file cannot be made, whoever runs the test (root ignores
    // permission bits).
    std::fs::write(dir.join("file"), "").unwrap();
    let out = stiction(
        &dir,
        &["optimize", &problem("push-ball"), "--out", "file/out"],
    );
    assert_error(&out, &["file/out"]);
    let ro = dir.join("ro");
    std::fs::create_dir(&ro).unwrap();
    let mut permissions = std::fs::metadata(&ro).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o555);
    std::fs::set_permissions(&ro, permissions).unwrap();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        let start = Instant::now();
        let out = stiction(&dir, &["optimize", &problem("push-ball"), "--out", "ro"]);
        assert_error(
            &out,
            &["ro: the output folder is not writable", "nothing was run"],
        );
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "refused only after the run"
        );
    }
}

#[test]
fn ctrl_c_stops_an_identification_keeping_the_best_iterate() {
    let dir = scratch("sigint-identify");
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems");
    // The shipped μ, k, d fit with 400 starts: minutes of work, far more than the test waits.
    let text = std::fs::read_to_string(shipped.join("identify/identify-all.toml"))
        .unwrap()
        .replace(
            "scene = \"../tumbling-box.toml\"",
            &format!(
                "scene = \"{}\"\nstarts = 400",
                shipped.join("tumbling-box.toml").display()
            ),
        )
        .replace(
            "file = \"data/tumbling-box.csv\"",
            &format!(
                "file = \"{}\"",
                shipped.join("identify/data/tumbling-box.csv").display()
            ),
        );
    std::fs::write(dir.join("many-starts.toml"), text).unwrap();
    let mut child = command(
        &dir,
        &["identify", "many-starts.toml", "--out", "fit", "--quiet"],
    )
    .spawn()
    .expect("the binary starts");
    // The output folder exists just before the handler is installed and the fit starts.
    let start = Instant::now();
    while !dir.join("fit").exists() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no output folder"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(1500));
    let pid = child.id() as libc::pid_t;
    // SAFETY: sends SIGINT to the child this test started and still owns.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let status = child.wait().expect("the binary ends");
    assert_eq!(status.code(), Some(130));
    assert_eq!(run_json(&dir.join("fit"))["status"], "interrupted");
    let estimates: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("fit/estimates.json")).unwrap())
            .unwrap();
    assert_eq!(estimates["status"], "interrupted");
    assert_eq!(estimates["starts"], 400);
    // The starts that never ran say so; the best iterate so far is written with its fit.
    let costs = estimates["start_costs"].as_array().unwrap();
    assert!(costs.iter().any(|c| c.is_null()), "every start ran");
    for p in estimates["parameters"].as_array().unwrap() {
        assert!(p["final"].as_f64().unwrap().is_finite(), "{p}");
    }
    assert!(lines(&dir.join("fit/fit-tumbling-box.csv")) > 2);
    assert!(lines(&dir.join("fit/history.csv")) >= 2);
}
