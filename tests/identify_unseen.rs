//! Identification on data the fitted model did not make (issue 24): trajectories simulated with
//! another contact approximation and a 10× finer time step, positions only, with Gaussian
//! noise of known σ, fitted with the Lagged model at the scene's own step. Checked: the χ² test
//! flags the mismatch; where the model is right, the intervals cover the truth; a friction
//! coefficient the data bound from below only comes back one-sided and not identifiable; the
//! Painlevé rod comes back from any start in [0.5, 10].
//!
//! The 100-draw coverage runs and the rod are `#[ignore]`d (minutes in release); `.ci/run`
//! runs them: `cargo test --release --test identify_unseen -- --ignored`.

use std::path::{Path, PathBuf};

use nalgebra::DMatrix;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use stiction::identify::residuals::Need;
use stiction::identify::{
    identify, IdentificationProblem, IdentificationReport, IdentifySettings, MeasuredTrajectory,
    ParamSpec, Status,
};
use stiction::problem::{load_problem, parse_problem, Problem};
use stiction::simulate::run;

/// Standard normal samples by Box–Muller from a seeded generator.
fn gaussian(rng: &mut StdRng) -> f64 {
    let (u1, u2): (f64, f64) = (rng.random::<f64>().max(f64::MIN_POSITIVE), rng.random());
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

/// A scene file's text with its time step and approximation replaced.
fn variant(text: &str, dt: f64, approximation: &str) -> Problem {
    let text = text
        .lines()
        .map(|l| {
            if l.starts_with("dt =") {
                format!("dt = {dt:e}")
            } else if l.starts_with("approximation =") {
                format!("approximation = \"{approximation}\"")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    parse_problem(&text, Path::new("variant.toml")).expect("scene variant parses")
}

/// Position columns `BODY.px, py, pz` (and the orientation `qw … qz` with `orientation`) of the
/// one free body of `problem`, simulated and sampled every `every` steps, with Gaussian noise
/// σ from `seed` on every value; the times are those of the fine steps.
fn measure(
    problem: &mut Problem,
    body: &str,
    orientation: bool,
    every: usize,
    sigma: f64,
    seed: u64,
) -> (Vec<String>, Vec<f64>, DMatrix<f64>) {
    let recording = run(
        &mut problem.simulator,
        &problem.initial_state,
        problem.duration,
        |_, _| {},
    )
    .expect("the scene simulates");
    let mut columns: Vec<String> = ["px", "py", "pz"]
        .iter()
        .map(|c| format!("{body}.{c}"))
        .collect();
    if orientation {
        columns.extend(
            ["qw", "qx", "qy", "qz"]
                .iter()
                .map(|c| format!("{body}.{c}")),
        );
    }
    let rows: Vec<usize> = (0..recording.states.len()).step_by(every).collect();
    let mut rng = StdRng::seed_from_u64(seed);
    let values = DMatrix::from_fn(rows.len(), columns.len(), |k, c| {
        recording.states[rows[k]].q[c]
    })
    .map(|y| y + sigma * gaussian(&mut rng));
    let dt = problem.simulator.settings.dt;
    let times = rows.iter().map(|&k| k as f64 * dt).collect();
    (columns, times, values)
}

/// An identification problem on the Lagged scene `text` at its own step, with data
/// `(columns, times, values)` of noise σ and parameters `(name, initial)`.
fn problem_on(
    text: &str,
    data: (Vec<String>, Vec<f64>, DMatrix<f64>),
    sigma: f64,
    parameters: &[(&str, f64)],
) -> IdentificationProblem {
    let scene = parse_problem(text, Path::new("scene.toml")).unwrap();
    let dt = scene.simulator.settings.dt;
    let (columns, times, values) = data;
    let measured = MeasuredTrajectory::new(
        PathBuf::from("generated"),
        columns,
        times,
        values,
        dt,
        Some(sigma),
    )
    .unwrap();
    let parameters = parameters
        .iter()
        .map(|(name, initial)| ParamSpec::new(&scene.simulator, name, Some(*initial)).unwrap())
        .collect();
    IdentificationProblem::new(
        "generated",
        scene.simulator,
        scene.initial_state,
        parameters,
        vec![measured],
    )
    .unwrap()
}

fn sliding_box() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/sliding-box.toml");
    std::fs::read_to_string(path).unwrap()
}

/// Sliding box data (true μ = 0.5): `approximation` at `dt_factor`× the scene's step,
/// positions every 10 ms.
fn box_data(
    approximation: &str,
    fine: usize,
    sigma: f64,
    seed: u64,
) -> (Vec<String>, Vec<f64>, DMatrix<f64>) {
    let text = sliding_box();
    let mut scene = variant(&text, 1e-2 / fine as f64, approximation);
    measure(&mut scene, "box", false, fine, sigma, seed)
}

fn box_fit(data: (Vec<String>, Vec<f64>, DMatrix<f64>), sigma: f64) -> IdentificationReport {
    let problem = problem_on(&sliding_box(), data, sigma, &[("friction", 0.75)]);
    identify(&problem, &IdentifySettings::default()).unwrap()
}

/// Samples between steps (every 13 ms on the 10 ms grid of the sliding box, positions only)
/// are linear interpolations of the two states around them, and so are their derivatives:
/// the residual Jacobian (forward sensitivities) matches central differences of the
/// residuals, and the adjoint gradient matches `Jᵀ r`.
#[test]
fn samples_between_steps_are_interpolated_with_consistent_derivatives() {
    let sigma = 1e-3;
    let mut fine = variant(&sliding_box(), 1e-3, "sap");
    let data = measure(&mut fine, "box", false, 13, sigma, 5);
    let problem = problem_on(&sliding_box(), data, sigma, &[("friction", 0.6)]);
    let m = &problem.trajectories[0];
    assert!(
        m.fractions.iter().filter(|&&a| a > 0.0).count() >= 2,
        "{:?}",
        m.fractions
    );
    let s = [0.6_f64.ln()];
    let with_jacobian = problem.evaluate(&s, Need::Jacobian).unwrap();
    let jac = with_jacobian.jacobian().unwrap();
    let r = with_jacobian.residuals();
    let h = 1e-6;
    let plus = problem
        .evaluate(&[s[0] + h], Need::Residuals)
        .unwrap()
        .residuals();
    let minus = problem
        .evaluate(&[s[0] - h], Need::Residuals)
        .unwrap()
        .residuals();
    let fd = (plus - minus) / (2.0 * h);
    // Central differences: truncation O(h²) and round-off ~1e-16 |r| / h.
    let scale = jac.amax().max(1.0);
    let error = (jac.column(0) - &fd).amax();
    assert!(error <= 1e-5 * scale, "{error} against {scale}");
    let gradient = problem
        .evaluate(&s, Need::Gradient)
        .unwrap()
        .gradient()
        .unwrap();
    let jtr = jac.transpose() * &r;
    assert!(
        (gradient[0] - jtr[0]).abs() <= 1e-9 * jtr[0].abs().max(1.0),
        "{gradient} vs {jtr}"
    );
}

/// SAP at a tenth of the step makes the box slide 4.4 mm further than Lagged at the scene's
/// step (implicit Euler's position lag `v δt / 2`); with σ = 0.1 mm the χ² test flags the
/// mismatch, and the interval is widened by √(χ²/ν).
#[test]
fn sap_data_at_a_finer_step_fitted_with_lagged_is_flagged() {
    let sigma = 1e-4;
    let report = box_fit(box_data("sap", 10, sigma, 1), sigma);
    let g = &report.goodness;
    assert!(g.flagged && g.reduced_chi2 > g.range.1, "{g:?}");
    assert_eq!(g.variance_factor, g.reduced_chi2);
}

/// Data from the fitted model with σ = 1 mm: the χ² test passes, the fit converges, the best
/// basin holds three of the four starts, and the profile interval holds μ = 0.5.
#[test]
fn data_from_the_fitted_model_passes_the_chi2_test() {
    let sigma = 1e-3;
    let report = box_fit(box_data("lagged", 1, sigma, 2), sigma);
    let g = &report.goodness;
    assert!(!g.flagged, "{g:?}");
    assert_eq!(report.status, Status::Converged, "{}", report.status_reason);
    // The start drawn at μ ≈ 4 stops on the plateau where the box hardly slides.
    assert_eq!(report.best_basin, 3);
    let (Some(lo), Some(hi)) = report.estimates[0].ci95 else {
        panic!("open interval {:?}", report.estimates[0].ci95)
    };
    assert!(lo < 0.5 && 0.5 < hi, "[{lo}, {hi}]");
}

/// A ball thrown at the ground (2 m/s forward, 2 m/s down) lands and rolls at once: any μ
/// above the value that stops the slip within the impact gives the same trajectory, to well
/// within σ = 1 mm. Data from Similar at a tenth of the step with true μ = 2, fitted from 0.5
/// (search bounds [0.05, 5]): μ comes back bounded below only, not identifiable, the
/// interval's upper end open and its lower end between the start and the truth (measured
/// 1.55).
#[test]
fn a_rolling_ball_bounds_friction_from_below_only() {
    const BALL: &str = r#"
[simulation]
dt = 1e-3
duration = 0.4
approximation = "lagged"
[contact]
friction = 2.0
stiffness = 1e5
dissipation = 10.0
[[body]]
name = "ball"
mass = 1.0
joint = "free"
position = [0.0, 0.0, 0.12]
velocity = [2.0, 0.0, -2.0]
[[geometry]]
name = "ball"
body = "ball"
shape = "sphere"
radius = 0.1
[[geometry]]
name = "ground"
shape = "half-space"
"#;
    let sigma = 1e-3;
    let mut truth = variant(BALL, 1e-4, "similar");
    let data = measure(&mut truth, "ball", false, 10, sigma, 3);
    let problem = problem_on(BALL, data, sigma, &[("friction", 0.5)]);
    let report = identify(&problem, &IdentifySettings::default()).unwrap();
    let e = &report.estimates[0];
    assert!(!e.identifiable && e.estimate.is_none(), "{e:?}");
    let (Some(lo), None) = e.ci95 else {
        panic!("expected [lo, open): {:?}", e.ci95)
    };
    assert!(lo > 0.5 && lo < 2.0, "lower end {lo}");
}

/// Coverage over 100 noise draws where the model is right (data from the fitted model,
/// positions only, σ = 1 mm): the 95 % profile interval holds μ = 0.5 in 90-99 draws. Where
/// it is wrong (SAP at a tenth of the step, σ = 0.1 mm), the χ² test flags every draw.
#[test]
#[ignore]
fn coverage_over_100_draws_and_mismatch_flagged_in_every_draw() {
    const DRAWS: u64 = 100;
    let sigma = 1e-3;
    let mut hits = 0;
    for seed in 0..DRAWS {
        let report = box_fit(box_data("lagged", 1, sigma, 1000 + seed), sigma);
        if let (Some(lo), Some(hi)) = report.estimates[0].ci95 {
            hits += usize::from(lo <= 0.5 && 0.5 <= hi);
        }
    }
    println!("sliding box, model right: {hits}/{DRAWS} intervals hold μ = 0.5");
    assert!((90..=99).contains(&hits), "coverage {hits}/{DRAWS}");
    let sigma = 1e-4;
    for seed in 0..DRAWS {
        let report = box_fit(box_data("sap", 10, sigma, 2000 + seed), sigma);
        let g = &report.goodness;
        assert!(
            g.flagged && g.reduced_chi2 > g.range.1,
            "draw {seed}: {g:?}"
        );
    }
}

/// The Painlevé rod (`problems/sliding-rod.toml`, true μ = 2.3): positions and orientations
/// every 0.1 ms with σ = 0.1 mm, from SAP at a tenth of the step. From starts across
/// [0.5, 10] (the issue's 1.5 and 2.0 among them) the fit comes back to within 2 % of 2.3
/// (SAP's rod slides a little further: the fit settles at 2.279), and the χ² test flags the
/// mismatch of the two models.
#[test]
#[ignore]
fn painleve_rod_from_any_start_in_half_to_ten() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/sliding-rod.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let sigma = 1e-4;
    let mut truth = variant(&text, 1e-6, "sap");
    let data = measure(&mut truth, "rod", true, 100, sigma, 4);
    for start in [0.5, 1.5, 2.0, 5.0, 10.0] {
        let problem = problem_on(&text, data.clone(), sigma, &[("friction", start)]);
        let report = identify(&problem, &IdentifySettings::default()).unwrap();
        let mu = report.estimates[0].final_value;
        println!(
            "rod from {start}: μ = {mu} ({}), {} of {} starts in the best basin",
            report.status.name(),
            report.best_basin,
            report.starts.len()
        );
        assert!((mu - 2.3).abs() <= 0.02 * 2.3, "from {start}: μ = {mu}");
        assert!(report.goodness.flagged, "{:?}", report.goodness);
    }
    // The scene file itself loads: the test's scene is the shipped one.
    load_problem(&path).unwrap();
}
