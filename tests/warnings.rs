//! Warnings for suspicious physics (issue 25 item 5): counted, never fatal, on the scenes the
//! issue found silently wrong — a sphere started 7.5 cm inside the ground, a box with a
//! near-zero rotational inertia, a falling sphere at δt = 1 s — and none on the shipped scene
//! they are made from.

#[path = "common/binary.rs"]
mod binary;

use std::path::Path;

use binary::{problem, scratch, stderr, stiction};
use stiction::problem::parse_problem;
use stiction::scene::Scene;
use stiction::simulate::Recording;
use stiction::step::{Warning, WarningKind};

fn shipped_text(name: &str) -> String {
    std::fs::read_to_string(problem(name)).expect("a shipped problem")
}

/// `text` with `from` replaced once by `to`, asserting that `from` is there.
fn edited(text: &str, from: &str, to: &str) -> String {
    assert!(
        text.contains(from),
        "test setup: `{from}` not in the problem"
    );
    text.replacen(from, to, 1)
}

fn run(text: &str, duration: f64) -> Recording {
    let p = parse_problem(text, Path::new("edited.toml")).expect("a valid problem");
    let mut scene = Scene::new(p.simulator, p.controller, p.initial_state);
    scene.run_for(duration).expect("the run completes")
}

fn of_kind(recording: &Recording, kind: WarningKind) -> Vec<(usize, &Warning)> {
    recording
        .reports
        .iter()
        .enumerate()
        .flat_map(|(k, r)| r.warnings.iter().map(move |w| (k, w)))
        .filter(|(_, w)| w.kind == kind)
        .collect()
}

/// The bouncing ball (0.1 kg, r = 2 cm) made stiff and undamped (k = 1e7 N/m, d = 0, δt =
/// 0.1 ms) and started with its centre 1 cm below the ground, 3 cm deep: the first step sees
/// the overlap (more than half its radius) and throws the ball out at
/// `δt k x0 / (m + δt² k)` = 150 m/s, which the next step reports as a speed.
#[test]
fn a_sphere_started_inside_the_ground_is_a_deep_penetration_then_a_speed() {
    let mut text = shipped_text("bouncing-sphere");
    for (from, to) in [
        (
            "position = [0.0, 0.0, 0.05]",
            "position = [0.0, 0.0, -0.01]",
        ),
        ("dt = 1e-3", "dt = 1e-4"),
        ("stiffness = 1e4", "stiffness = 1e7"),
        ("dissipation = 0.5", "dissipation = 0.0"),
    ] {
        text = edited(&text, from, to);
    }
    let recording = run(&text, 1e-3);
    let deep = of_kind(&recording, WarningKind::DeepPenetration);
    let (step, first) = deep[0];
    assert_eq!(step, 0);
    assert_eq!(first.subject, "`ground` and `ball`");
    assert!((first.value - 0.03).abs() < 1e-12, "{first}");
    assert_eq!(first.limit, 0.01);
    let speed = of_kind(&recording, WarningKind::Speed);
    assert!(!speed.is_empty(), "no speed warning");
    assert_eq!(
        speed[0].0, 1,
        "reported with the velocity the first step produced"
    );
    assert!(speed[0].1.value > 100.0, "{}", speed[0].1);
    assert!(of_kind(&recording, WarningKind::IllConditionedInertia).is_empty());
}

/// The sliding box with principal moments 1e-12 kg·m² (its solid inertia is 1e-3): reported
/// once, with the first step, naming the body.
#[test]
fn a_box_with_a_vanishing_inertia_is_reported_once() {
    let text = shipped_text("sliding-box");
    let body = "[[body]]\nname = \"box\"\n";
    let text = edited(
        &text,
        body,
        &format!("{body}inertia = [1e-12, 1e-12, 1e-12]\n"),
    );
    let recording = run(&text, 0.02);
    let inertia = of_kind(&recording, WarningKind::IllConditionedInertia);
    assert_eq!(inertia.len(), 1);
    assert_eq!(inertia[0].0, 0);
    assert_eq!(inertia[0].1.subject, "body `box`");
    assert_eq!(inertia[0].1.value, 1e-12);
}

/// The shipped falling sphere and sliding box run without a warning.
#[test]
fn shipped_scenes_have_no_warnings() {
    for name in ["falling-sphere", "sliding-box"] {
        let recording = run(&shipped_text(name), 0.3);
        let all: Vec<_> = recording.reports.iter().flat_map(|r| &r.warnings).collect();
        assert!(all.is_empty(), "{name}: {all:?}");
    }
}

/// `stiction simulate falling-sphere --dt 1 --duration 5` (the 9.75 m tunnel): every
/// step moves the sphere farther than its 5 cm size; `stats.csv` counts the warnings of each
/// step, `run.json` counts them by kind with the first message, and the summary says so.
#[test]
fn the_command_line_counts_warnings_in_stats_csv_run_json_and_the_summary() {
    let dir = scratch("warnings-cli");
    let out = dir.join("run");
    let o = stiction(
        &dir,
        &[
            "simulate",
            "falling-sphere",
            "--dt",
            "1.0",
            "--duration",
            "5",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = String::from_utf8_lossy(&o.stdout);
    assert!(summary.contains("tunnelling ×5"), "{summary}");
    let stats = std::fs::read_to_string(out.join("stats.csv")).unwrap();
    let header: Vec<&str> = stats.lines().next().unwrap().split(',').collect();
    let column = header.iter().position(|&c| c == "warnings").unwrap();
    let counts: Vec<usize> = stats
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(column).unwrap().parse().unwrap())
        .collect();
    assert_eq!(counts.len(), 5);
    assert!(counts.iter().all(|&c| c >= 1), "{counts:?}");
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    let tunnelling = &record["warnings"]["tunnelling"];
    assert_eq!(tunnelling["count"], 5);
    assert_eq!(tunnelling["first_t"], 1.0);
    assert!(tunnelling["first"]
        .as_str()
        .unwrap()
        .contains("body `sphere` moves"));
    let total: u64 = record["warnings"]
        .as_object()
        .unwrap()
        .values()
        .map(|k| k["count"].as_u64().unwrap())
        .sum();
    assert_eq!(total as usize, counts.iter().sum::<usize>());
}
