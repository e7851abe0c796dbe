//! The normal laws of ICF Sec. IV beyond Hunt & Crossley, in scenes (`contact::law`): Hertz's
//! sphere rests at Hertz's penetration, the IPC barrier never lets a gap close, and the step
//! Jacobians of both agree three ways (IFT, the step in dual numbers, central differences).

use std::path::{Path, PathBuf};

use nalgebra::DVector;
use stiction::contact::law::BARRIER_FLOOR;
use stiction::contact::Approximation;
use stiction::derivatives::{gradient_check, Parameter};
use stiction::problem::{parse_problem, Problem};
use stiction::simulate::run;
use stiction::step::StepReport;

/// A shipped problem with its `[contact]` table replaced by `contact` and its approximation
/// and time step set.
fn with_contact(name: &str, contact: &str, approximation: Approximation, dt: f64) -> Problem {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("problems")
        .join(format!("{name}.toml"));
    let text = std::fs::read_to_string(&path).expect("shipped problem");
    let start = text.find("[contact]").expect("a [contact] table");
    let end = text[start..].find("\n[[").map_or(text.len(), |e| start + e);
    let text = format!("{}[contact]\n{contact}\n{}", &text[..start], &text[end..]);
    let mut p = parse_problem(&text, &path).unwrap_or_else(|e| panic!("{name}: {e}"));
    p.simulator.settings.approximation = approximation;
    p.simulator.settings.dt = dt;
    p
}

/// A sphere of radius R = 2.5 cm and 0.5 kg resting on the ground under Hertz's law sinks
/// `δ = (9F²/(16E*²R))^{1/3}` with `F = m g`: the discrete step's equilibrium is the law's.
#[test]
fn a_hertz_sphere_rests_at_hertz_penetration() {
    let (m, g, radius, modulus) = (0.5, 9.81, 0.025, 1e9);
    let text = format!(
        r#"
[simulation]
dt = 1e-3
duration = 1.0
gravity = [0.0, 0.0, -{g}]

[solver]
relative_tolerance = 1e-12

[contact]
dissipation = 50.0
relaxation_time = 1e-2

[[body]]
name = "sphere"
mass = {m}
joint = "free"
position = [0.0, 0.0, {radius}]

[[geometry]]
name = "sphere"
body = "sphere"
shape = "sphere"
radius = {radius}
contact = {{ normal_law = "hertz", elastic_modulus = {modulus:e} }}

[[geometry]]
name = "ground"
shape = "half-space"
"#
    );
    let force: f64 = m * g;
    let expected = (9.0 * force * force / (16.0 * modulus * modulus * radius)).cbrt();
    for approximation in Approximation::ALL {
        let mut p = parse_problem(&text, Path::new("hertz-rest.toml")).expect("problem");
        p.simulator.settings.approximation = approximation;
        let rec = run(&mut p.simulator, &p.initial_state, 1.0, |_, _| ()).expect("rollout");
        let last = rec.states.last().expect("states");
        let delta = radius - last.q[2];
        assert!(
            last.v.norm() < 1e-9,
            "{approximation}: still moving {}",
            last.v.norm()
        );
        assert!(
            (delta - expected).abs() <= 1e-6 * expected,
            "{approximation}: δ = {delta:e} m, Hertz {expected:e} m"
        );
    }
}

/// The deepest end-of-step penetration over every contact of every step (m; < 0 is a gap).
fn deepest(reports: &[StepReport]) -> f64 {
    reports
        .iter()
        .flat_map(|r| &r.contacts)
        .map(|c| c.penetration)
        .fold(f64::NEG_INFINITY, f64::max)
}

/// The barrier (κ, d̂ = 1 mm) never lets the gap close on the falling sphere (landing at
/// 0.7 m/s, sliding, rolling), nor in the first 0.3 s of the clutter, where boxes land at
/// 1.7 m/s: every contact's gap stays above the floor `d̂ · BARRIER_FLOOR`, where eq. (11)
/// holds exactly, and the sphere rests inside `(0, d̂)`.
#[test]
fn the_barrier_never_lets_a_gap_close() {
    let d_hat = 1e-3;
    let floor = d_hat * BARRIER_FLOOR;
    let barrier = format!(
        "friction = 0.5\nnormal_law = \"barrier\"\nstiffness = 1e7\nbarrier_distance = {d_hat}"
    );
    for approximation in [
        Approximation::Lagged,
        Approximation::RegularizedLagged,
        Approximation::Similar,
    ] {
        let mut p = with_contact("falling-sphere", &barrier, approximation, 2e-3);
        let rec = run(&mut p.simulator, &p.initial_state, 0.3, |_, _| ()).expect("rollout");
        let worst = deepest(&rec.reports);
        assert!(worst < -floor, "{approximation}: penetration {worst:e} m");
        let gap = rec.states.last().expect("states").q[2] - 0.025;
        assert!(
            gap > floor && gap < d_hat,
            "{approximation}: resting gap {gap:e} m"
        );
        let mut p = with_contact("clutter", &barrier, approximation, 2e-3);
        let rec = run(&mut p.simulator, &p.initial_state, 0.3, |_, _| ()).expect("rollout");
        assert!(rec.reports.last().expect("reports").contacts.len() >= 8);
        let worst = deepest(&rec.reports);
        assert!(
            worst < -floor,
            "clutter {approximation}: penetration {worst:e} m"
        );
    }
}

/// Checks IFT against the direct dual path (1e-9) and central differences (1e-6) at every
/// `every`-th state of a rollout from `from` to `to` (s) with a contact.
fn check_three_ways(p: &mut Problem, names: &[&str], from: f64, to: f64, every: usize) {
    let label = format!("{} {}", p.name, p.simulator.settings.approximation);
    let params: Vec<Parameter> = names
        .iter()
        .map(|n| Parameter::parse(&p.simulator, n).expect("parameter parses"))
        .collect();
    let u = DVector::zeros(p.simulator.model.nu());
    let rec = run(&mut p.simulator, &p.initial_state, to, |_, _| ()).expect("rollout");
    let dt = p.simulator.settings.dt;
    let mut checked = 0;
    for (k, state) in rec.states.iter().enumerate() {
        if state.t < from - 0.5 * dt || k % every != 0 {
            continue;
        }
        let (_, report) = p.simulator.step(state, &u).expect("step");
        if report.contacts.iter().all(|c| c.normal_force == 0.0) {
            continue;
        }
        let c = gradient_check(&mut p.simulator, state, &u, &params)
            .unwrap_or_else(|e| panic!("{label} t = {}: {e}", state.t));
        checked += 1;
        for b in &c.blocks {
            let at = format!("{label} t = {:.4}: {}", state.t, b.name);
            assert!(
                b.ift_vs_direct <= 1e-9,
                "{at}: IFT vs direct {:.2e}",
                b.ift_vs_direct
            );
            assert!(b.ift_vs_fd <= 1e-6, "{at}: IFT vs FD {:.2e}", b.ift_vs_fd);
        }
    }
    assert!(checked >= 3, "{label}: {checked} steps checked");
}

#[test]
fn hertz_gradients_agree_three_ways() {
    let hertz = "friction = 0.5\nnormal_law = \"hertz\"\nelastic_modulus = 2e9\n\
                 dissipation = 20.0\nrelaxation_time = 1e-3";
    let hertz_sphere = format!("{hertz}\nhertz_radius = 0.025");
    for approximation in Approximation::ALL {
        let mut p = with_contact("falling-sphere", &hertz_sphere, approximation, 2e-3);
        check_three_ways(
            &mut p,
            &["friction", "stiffness", "mass@sphere"],
            0.04,
            0.2,
            7,
        );
    }
    let hertz_box = format!("{hertz}\nhertz_radius = 0.01");
    for approximation in Approximation::ALL {
        let mut p = with_contact("sliding-box", &hertz_box, approximation, 1e-2);
        check_three_ways(&mut p, &["friction", "stiffness", "mass@box"], 0.05, 0.4, 3);
    }
}

#[test]
fn barrier_gradients_agree_three_ways() {
    let barrier = "friction = 0.5\nnormal_law = \"barrier\"\nstiffness = 1e6\n\
                   barrier_distance = 1e-3";
    for approximation in [Approximation::Lagged, Approximation::Similar] {
        let mut p = with_contact("falling-sphere", barrier, approximation, 2e-3);
        check_three_ways(
            &mut p,
            &["friction", "stiffness", "mass@sphere"],
            0.04,
            0.2,
            7,
        );
        let mut p = with_contact("sliding-box", barrier, approximation, 1e-2);
        check_three_ways(&mut p, &["friction", "stiffness", "mass@box"], 0.05, 0.4, 3);
    }
}

/// A law whose parameters would make the step non-convex is refused when the problem loads,
/// with the reason.
#[test]
fn non_convex_laws_are_refused_with_the_reason() {
    let negative = "normal_law = \"hertz\"\nelastic_modulus = 1e9\ndissipation = -5.0";
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("problems/falling-sphere.toml");
    let text = std::fs::read_to_string(&path).expect("shipped problem");
    let start = text.find("[contact]").expect("[contact]");
    let end = start + text[start..].find("\n[[").expect("bodies");
    let bad = format!("{}[contact]\n{negative}\n{}", &text[..start], &text[end..]);
    let e = parse_problem(&bad, &path).expect_err("refused").to_string();
    assert!(e.contains("dissipation"), "{e}");
    let flat = "normal_law = \"hertz\"\nelastic_modulus = 1e9";
    let bad = format!("{}[contact]\n{flat}\n{}", &text[..start], &text[end..]);
    let e = parse_problem(&bad, &path).expect_err("refused").to_string();
    assert!(e.contains("radius"), "{e}");
}
