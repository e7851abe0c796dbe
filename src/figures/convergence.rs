//! Convergence studies (ICF Figs. 3, 6 and 12), the clutter's solver cost against δt
//! (ICF Fig. 16), its steady penetration and solver cost against stiffness (ICF Figs. 17-18),
//! and its cost and effective stiction tolerance per step against time (ICF ext. Figs. 15-16).
//!
//! The error of a run at step δt against a reference is ICF Sec. IX's
//! `e_q(δt) = (1/T ∫₀ᵀ ‖q_δt(t) − q_ref(t)‖² dt)^{1/2}`, with `q` the positions of the bodies'
//! origins (m), sampled every `sample` seconds (the largest step) and averaged over the samples.
//! The reference is Lagged at a step ten times below the smallest studied (the paper's rule;
//! Lagged is the consistent model). Slopes are least-squares fits of `log e_q` against
//! `log δt`.

use rayon::prelude::*;

use super::point_contact::damp;
use super::{curve, number, simulate, Curve, Loader, Number, PaperFigure, Quality, MODELS};
use crate::contact::Approximation;
use crate::error::Result;
use crate::problem::Problem;
use crate::report::body_states;
use crate::report::plot::LinePanel;

/// Least-squares slope of `log y` against `log x`.
pub fn log_log_slope(x: &[f64], y: &[f64]) -> f64 {
    let (lx, ly): (Vec<f64>, Vec<f64>) = x.iter().zip(y).map(|(a, b)| (a.ln(), b.ln())).unzip();
    let n = lx.len() as f64;
    let (mx, my) = (lx.iter().sum::<f64>() / n, ly.iter().sum::<f64>() / n);
    lx.iter()
        .zip(&ly)
        .map(|(a, b)| (a - mx) * (b - my))
        .sum::<f64>()
        / lx.iter().map(|a| (a - mx).powi(2)).sum::<f64>()
}

/// A convergence study: the case, the steps, the reference step and the sampling period (s).
struct Study {
    case: &'static str,
    steps: Vec<f64>,
    reference: f64,
    sample: f64,
    edit: fn(&mut Problem),
}

/// The bodies' origins (m) every `sample` seconds of `case` run at `dt` with `approximation`.
fn positions(
    load: Loader<'_>,
    study: &Study,
    approximation: Approximation,
    dt: f64,
) -> Result<Vec<Vec<[f64; 3]>>> {
    let (problem, rec) = simulate(load, study.case, approximation, dt, None, study.edit)?;
    let every = (study.sample / dt).round().max(1.0) as usize;
    Ok(body_states(&rec, &problem.simulator.model)
        .iter()
        .step_by(every)
        .map(|row| row.iter().map(|b| b.p_WB.into()).collect())
        .collect())
}

/// `e_q` of `a` against `reference`, over the samples both have.
fn rms_error(a: &[Vec<[f64; 3]>], reference: &[Vec<[f64; 3]>]) -> f64 {
    let n = a.len().min(reference.len());
    let sum: f64 = a[..n]
        .iter()
        .zip(reference)
        .map(|(x, y)| {
            x.iter()
                .zip(y)
                .map(|(p, q)| (0..3).map(|k| (p[k] - q[k]).powi(2)).sum::<f64>())
                .sum::<f64>()
        })
        .sum();
    (sum / n.max(1) as f64).sqrt()
}

/// The errors of every model of [`MODELS`] at every step of `study`: one curve of
/// `(log10 δt, log10 e_q)` per model, the slope and error numbers, keys prefixed by `prefix`.
fn study_curves(
    load: Loader<'_>,
    study: &Study,
    prefix: &str,
    paper: fn(Approximation) -> &'static str,
) -> Result<(Vec<Curve>, Vec<Number>)> {
    let reference = positions(load, study, Approximation::Lagged, study.reference)?;
    let runs: Vec<(Approximation, f64)> = MODELS
        .iter()
        .flat_map(|&a| study.steps.iter().map(move |&dt| (a, dt)))
        .collect();
    let errors: Vec<f64> = runs
        .par_iter()
        .map(|&(a, dt)| positions(load, study, a, dt).map(|p| rms_error(&p, &reference)))
        .collect::<Result<_>>()?;
    let mut curves = Vec::new();
    let mut numbers = Vec::new();
    for (i, &a) in MODELS.iter().enumerate() {
        let e = &errors[i * study.steps.len()..(i + 1) * study.steps.len()];
        curves.push(curve(
            a,
            study
                .steps
                .iter()
                .zip(e)
                .map(|(dt, e)| (dt.log10(), e.log10()))
                .collect(),
        ));
        numbers.push(number(
            format!("{prefix}{a}.slope"),
            format!("{prefix}{a}: slope of log e_q against log δt"),
            paper(a),
            log_log_slope(&study.steps, e),
            "1",
        ));
        for (dt, e) in study.steps.iter().zip(e) {
            numbers.push(number(
                format!("{prefix}{a}.error.dt{dt:e}"),
                format!("{prefix}{a}: e_q at δt = {dt}"),
                "—",
                *e,
                "m",
            ));
        }
    }
    // The paper's dashed first-order line, through Lagged's error at the largest step.
    let largest = *study
        .steps
        .iter()
        .fold(&0.0, |a, b| if b > a { b } else { a });
    let anchor = MODELS
        .iter()
        .position(|&a| a == Approximation::Lagged)
        .and_then(|i| {
            study
                .steps
                .iter()
                .position(|&dt| dt == largest)
                .map(|j| errors[i * study.steps.len() + j])
        })
        .unwrap_or(f64::NAN);
    curves.push(Curve {
        name: format!("{prefix}first order"),
        points: study
            .steps
            .iter()
            .map(|dt| (dt.log10(), (anchor * dt / largest).log10()))
            .collect(),
    });
    for c in &mut curves[..MODELS.len()] {
        c.name = format!("{prefix}{}", c.name);
    }
    Ok((curves, numbers))
}

/// A convergence figure of one or more studies, one panel each.
fn convergence_figure(
    load: Loader<'_>,
    (name, title): (&'static str, String),
    studies: &[(&'static str, &str, Study)],
    paper: fn(Approximation) -> &'static str,
    notes: Vec<String>,
) -> Result<PaperFigure> {
    let mut panels = Vec::new();
    let mut numbers = Vec::new();
    for (y_label, prefix, study) in studies {
        let (curves, n) = study_curves(load, study, prefix, paper)?;
        panels.push(LinePanel { y_label, curves });
        numbers.extend(n);
    }
    Ok(PaperFigure {
        name,
        title,
        x_label: "log10 δt (s)",
        panels,
        equal_aspect: false,
        numbers,
        notes,
    })
}

/// ICF Sec. IX-A, Fig. 3: the conveyor's convergence.
pub(super) fn conveyor(load: Loader<'_>, _quality: Quality) -> Result<PaperFigure> {
    let study = Study {
        case: "conveyor-oscillating",
        steps: vec![2e-3, 1e-2, 5e-2],
        reference: 2e-4,
        sample: 5e-2,
        edit: super::belt_from_rest,
    };
    convergence_figure(
        load,
        (
            "conveyor-convergence",
            "ICF Fig. 3: oscillating conveyor, e_q against δt (Lagged reference at δt = 2e-4)"
                .into(),
        ),
        &[("log10 e_q (m)", "", study)],
        |a| match a {
            Approximation::Sap => "plateaus at the smallest step (τ_d μ ‖v_t‖ does not vanish)",
            _ => "first order (slope 1); Similar's errors above Lagged's",
        },
        vec![],
    )
}

/// ICF Sec. IX-B, Fig. 6: the sphere's convergence.
pub(super) fn sphere(load: Loader<'_>, _quality: Quality) -> Result<PaperFigure> {
    let study = Study {
        case: "falling-sphere",
        steps: vec![4e-4, 2e-3, 1e-2],
        reference: 4e-5,
        sample: 1e-2,
        edit: |_| {},
    };
    convergence_figure(
        load,
        (
            "sphere-convergence",
            "ICF Fig. 6: falling sphere, e_q against δt (Lagged reference at δt = 4e-5)".into(),
        ),
        &[("log10 e_q (m)", "", study)],
        |a| match a {
            Approximation::Sap => "first order down to a constant error (τ_d μ ‖v_t‖)",
            _ => "first order (slope 1)",
        },
        vec![],
    )
}

/// ICF Sec. IX-C, Fig. 12: the rod's convergence without and with dissipation.
pub(super) fn rod(load: Loader<'_>, quality: Quality) -> Result<PaperFigure> {
    let (steps, reference) = match quality {
        Quality::Quick => (vec![6.4e-4, 1.6e-4, 4e-5], 4e-6),
        Quality::Full => (vec![6.4e-4, 1.6e-4, 4e-5, 1e-5], 1e-6),
    };
    let study = |edit: fn(&mut Problem)| Study {
        case: "sliding-rod",
        steps: steps.clone(),
        reference,
        sample: 6.4e-4,
        edit,
    };
    convergence_figure(
        load,
        (
            "rod-convergence",
            format!("ICF Fig. 12: sliding rod, e_q against δt (Lagged reference at δt = {reference})"),
        ),
        &[
            ("log10 e_q (m), no dissipation", "", study(|_| {})),
            ("log10 e_q (m), d = 0.2, τ_d = 4e-6", "damped.", study(damp)),
        ],
        |a| match a {
            Approximation::Lagged => "largest errors at large δt (misses the impact above ≈ 1e-3 s); first order at the smallest steps",
            _ => "SAP and Similar \"pretty much indistinguishable\"",
        },
        vec![format!(
            "The paper's reference is δt = 1e-7 s; ours is δt = {reference} s, ten times below the smallest step studied."
        )],
    )
}

/// The paper's solver: each step one Newton problem (no contact islands) with Newton's exact
/// Hessian at every iteration (no secant at slip reversals, `solver/slip_reversal.rs`). The
/// clutter figures count its iterations and the condition of its Hessian.
fn papers_solver(problem: &mut Problem) {
    problem.simulator.settings.solver.islands = false;
    problem.simulator.settings.solver.reversal_secant = false;
}

/// ICF Sec. X-A, Fig. 16: the clutter's mean Newton iterations and condition estimate per step
/// against δt, for the four approximations.
pub(super) fn clutter_iterations(load: Loader<'_>, quality: Quality) -> Result<PaperFigure> {
    let (steps, duration) = match quality {
        Quality::Quick => (vec![4e-3, 2e-3, 1e-3], Some(0.3)),
        Quality::Full => (vec![1e-2, 5e-3, 2e-3, 1e-3, 5e-4], None),
    };
    let runs: Vec<(Approximation, f64)> = Approximation::ALL
        .iter()
        .flat_map(|&a| steps.iter().map(move |&dt| (a, dt)))
        .collect();
    let means: Vec<(f64, f64)> = runs
        .par_iter()
        .map(|&(a, dt)| {
            let (_, rec) = simulate(load, "clutter", a, dt, duration, papers_solver)?;
            let n = rec.reports.len().max(1) as f64;
            let iterations = rec
                .reports
                .iter()
                .map(|r| r.stats.iterations as f64)
                .sum::<f64>()
                / n;
            let conditions: Vec<f64> = rec
                .reports
                .iter()
                .filter_map(|r| r.stats.condition)
                .map(f64::log10)
                .collect();
            let condition = conditions.iter().sum::<f64>() / conditions.len().max(1) as f64;
            Ok((iterations, condition))
        })
        .collect::<Result<_>>()?;
    let mut iterations = Vec::new();
    let mut condition = Vec::new();
    let mut numbers = Vec::new();
    for (i, &a) in Approximation::ALL.iter().enumerate() {
        let m = &means[i * steps.len()..(i + 1) * steps.len()];
        iterations.push(curve(
            a,
            steps
                .iter()
                .zip(m)
                .map(|(dt, m)| (dt.log10(), m.0))
                .collect(),
        ));
        condition.push(curve(
            a,
            steps
                .iter()
                .zip(m)
                .map(|(dt, m)| (dt.log10(), m.1))
                .collect(),
        ));
        let paper = match a {
            Approximation::Sap => "about constant in δt",
            Approximation::RegularizedLagged => {
                "fewer than Lagged at large δt, the same at small δt"
            }
            _ => "fewer as δt decreases (G_t ∝ γ_n ∝ δt)",
        };
        for (dt, m) in steps.iter().zip(m) {
            numbers.push(number(
                format!("{a}.iterations.dt{dt:e}"),
                format!("{a}: mean Newton iterations per step at δt = {dt}"),
                paper,
                m.0,
                "1",
            ));
            numbers.push(number(
                format!("{a}.log10_condition.dt{dt:e}"),
                format!("{a}: mean log10 condition estimate at δt = {dt}"),
                "SAP about constant; Lagged and Similar improve as δt decreases",
                m.1,
                "1",
            ));
        }
    }
    let horizon = duration.map_or("3 s".to_string(), |d| format!("the first {d} s"));
    Ok(PaperFigure {
        name: "clutter-iterations",
        title: format!("ICF Fig. 16: clutter, solver cost against δt over {horizon}"),
        x_label: "log10 δt (s)",
        panels: cost_panels(iterations, condition).into(),
        equal_aspect: false,
        numbers,
        notes: match quality {
            Quality::Quick => vec![
                "Quick: the first 0.3 s only (the falling and first impacts), three steps.".into(),
            ],
            Quality::Full => vec![],
        },
    })
}

/// The panels of the clutter's mean solver cost per step (ICF Figs. 16 and 18): Newton
/// iterations and log10 condition estimate, one curve per approximation.
fn cost_panels(iterations: Vec<Curve>, condition: Vec<Curve>) -> [LinePanel; 2] {
    [
        LinePanel {
            y_label: "mean Newton iterations per step",
            curves: iterations,
        },
        LinePanel {
            y_label: "mean log10 κ₁(H)",
            curves: condition,
        },
    ]
}

/// Mean of `values` (NaN when empty).
fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 {
        f64::NAN
    } else {
        sum / n as f64
    }
}

/// The clutter's time step for the per-step histories of ICF ext. Sec. XII-A (Figs. 15-16;
/// the conference paper's Figs. 14-15 state δt = 2 ms); the quick version takes 10 ms, the
/// largest step of the paper's Fig. 17.
fn clutter_history_dt(quality: Quality) -> f64 {
    match quality {
        Quality::Quick => 1e-2,
        Quality::Full => 2e-3,
    }
}

/// The clutter's transient of impacts `[0, 0.6)` s and its settled phase `[2, 3]` s.
const CLUTTER_PHASES: [(&str, std::ops::Range<f64>); 2] =
    [("transient", 0.0..0.6), ("settled", 2.0..f64::INFINITY)];

/// The clutter for 3 s under each of `approximations` at `dt`, in parallel.
fn clutter_runs(
    load: Loader<'_>,
    approximations: &[Approximation],
    dt: f64,
) -> Result<Vec<(Approximation, crate::simulate::Recording)>> {
    approximations
        .par_iter()
        .map(|&a| simulate(load, "clutter", a, dt, Some(3.0), papers_solver).map(|(_, r)| (a, r)))
        .collect()
}

/// ICF ext. Sec. XII-A, Fig. 15: the clutter's Newton iterations and log10 condition estimate
/// per step against time, for the four approximations at δt = 2 ms. The paper's reading: in
/// the initial transient of impacts, Lagged and Similar need more iterations and are worse
/// conditioned than SAP (their stiction tolerance is fixed, SAP's grows with the impulse), the
/// reverse once the objects settle; the regularized Lagged tolerance (ICF eq. (26)) reduces
/// Lagged's iterations and condition in the transient.
pub(super) fn clutter_conditioning(load: Loader<'_>, quality: Quality) -> Result<PaperFigure> {
    let dt = clutter_history_dt(quality);
    let duration = 3.0;
    let runs = clutter_runs(load, &Approximation::ALL, dt)?;
    let mut iterations = Vec::new();
    let mut condition = Vec::new();
    let mut numbers = Vec::new();
    for (a, rec) in &runs {
        let steps: Vec<(f64, &crate::solver::SolverStats)> = rec
            .reports
            .iter()
            .zip(&rec.states[1..])
            .map(|(r, s)| (s.t, &r.stats))
            .collect();
        iterations.push(curve(
            *a,
            steps
                .iter()
                .map(|(t, s)| (*t, s.iterations as f64))
                .collect(),
        ));
        condition.push(curve(
            *a,
            steps
                .iter()
                .filter_map(|(t, s)| s.condition.map(|c| (*t, c.log10())))
                .collect(),
        ));
        for (phase, range) in CLUTTER_PHASES {
            let inside = || steps.iter().filter(|(t, _)| range.contains(t));
            numbers.push(number(
                format!("{a}.{phase}.iterations"),
                format!(
                    "{a}: mean Newton iterations, {phase} (t in [{}, {}) s)",
                    range.start,
                    range.end.min(duration)
                ),
                match (*a, phase) {
                    (Approximation::Sap, "transient") => "fewer than Lagged and Similar",
                    (Approximation::Sap, _) => "more than Lagged and Similar",
                    (Approximation::RegularizedLagged, "transient") => "fewer than Lagged",
                    (_, "transient") => "more than SAP",
                    _ => "fewer than SAP",
                },
                mean(inside().map(|(_, s)| s.iterations as f64)),
                "1",
            ));
            numbers.push(number(
                format!("{a}.{phase}.log10_condition"),
                format!("{a}: mean log10 condition estimate, {phase}"),
                match (*a, phase) {
                    (Approximation::Sap, "transient") => "lower than Lagged and Similar",
                    (Approximation::Sap, _) => "higher than Lagged and Similar",
                    (Approximation::RegularizedLagged, "transient") => "lower than Lagged",
                    (_, "transient") => "higher than SAP",
                    _ => "lower than SAP",
                },
                mean(inside().filter_map(|(_, s)| s.condition).map(f64::log10)),
                "1",
            ));
        }
    }
    Ok(PaperFigure {
        name: "clutter-conditioning",
        title: format!("ICF ext. Fig. 15: clutter, solver cost per step against time, δt = {dt} s"),
        x_label: "t (s)",
        panels: vec![
            LinePanel {
                y_label: "Newton iterations",
                curves: iterations,
            },
            LinePanel {
                y_label: "log10 κ₁(H)",
                curves: condition,
            },
        ],
        equal_aspect: false,
        numbers,
        notes: match quality {
            Quality::Quick => vec!["Quick: δt = 10 ms (the paper's is 2 ms).".into()],
            Quality::Full => vec![],
        },
    })
}

/// Mean of the effective stiction tolerance (m/s, ICF eq. (42)) over the contacts that push in
/// a step; NaN for a step without one.
fn mean_stiction_tolerance(report: &crate::step::StepReport) -> f64 {
    mean(
        report
            .contacts
            .iter()
            .filter(|c| c.normal_force > 0.0)
            .map(|c| c.stiction_tolerance),
    )
}

/// ICF ext. Sec. XII-A, Fig. 16 (the conference paper's Fig. 15): the effective stiction
/// tolerance against time in the clutter at δt = 2 ms. Lagged's (and Similar's) is the fixed
/// `v_s`; SAP's is `σ w μ γ_n` (ICF eq. (42)) and the regularized Lagged's
/// `max(v_s, σ w μ γ_n0)` (eq. (44)), both growing with the normal impulse: looser than `v_s`
/// in the transient of impacts, and SAP's far tighter once the objects rest.
pub(super) fn clutter_stiction_tolerance(
    load: Loader<'_>,
    quality: Quality,
) -> Result<PaperFigure> {
    let dt = clutter_history_dt(quality);
    let models = [
        Approximation::Lagged,
        Approximation::RegularizedLagged,
        Approximation::Sap,
    ];
    let runs = clutter_runs(load, &models, dt)?;
    let mut curves = Vec::new();
    let mut numbers = Vec::new();
    for (a, rec) in &runs {
        let history: Vec<(f64, f64)> = rec
            .reports
            .iter()
            .zip(&rec.states[1..])
            .map(|(r, s)| (s.t, mean_stiction_tolerance(r)))
            .filter(|(_, v)| v.is_finite())
            .collect();
        curves.push(curve(
            *a,
            history.iter().map(|&(t, v)| (t, v.log10())).collect(),
        ));
        for (phase, range) in CLUTTER_PHASES {
            numbers.push(number(
                format!("{a}.{phase}.log10_stiction_tolerance"),
                format!("{a}: mean over steps of log10 of the contacts' mean effective stiction tolerance (m/s), {phase}"),
                match (*a, phase) {
                    (Approximation::Lagged, _) => "v_s = 1e-4 m/s (−4)",
                    (_, "transient") => "above v_s: looser during impacts",
                    (Approximation::Sap, _) => "below v_s: tighter than needed once resting",
                    _ => "v_s (the bound of eq. (44))",
                },
                mean(history.iter().filter(|(t, _)| range.contains(t)).map(|(_, v)| v.log10())),
                "1",
            ));
        }
    }
    Ok(PaperFigure {
        name: "clutter-stiction-tolerance",
        title: format!(
            "ICF ext. Fig. 16: clutter, effective stiction tolerance against time, δt = {dt} s"
        ),
        x_label: "t (s)",
        panels: vec![LinePanel {
            y_label: "log10 mean v_s (m/s)",
            curves,
        }],
        equal_aspect: false,
        numbers,
        notes: match quality {
            Quality::Quick => vec!["Quick: δt = 10 ms (the paper's is 2 ms).".into()],
            Quality::Full => vec![],
        },
    })
}

/// The contact stiffnesses (N/m) of the clutter's stiffness study: eight orders of magnitude
/// up to five above steel's Hertz estimate of 1e7 N/m, as ICF Figs. 17-18.
fn clutter_stiffnesses(quality: Quality) -> Vec<f64> {
    match quality {
        Quality::Quick => vec![1e5, 1e7, 1e9],
        Quality::Full => (4..=12).map(|e| 10f64.powi(e)).collect(),
    }
}

/// The steady window of ICF Fig. 17: the last 1.25 s of the clutter's 3 s.
const CLUTTER_STEADY_WINDOW: f64 = 1.25;

/// Steel's stiffness by Hertz theory for the clutter's 10 cm spheres (N/m, ICF Sec. X-A).
const STEEL_STIFFNESS: f64 = 1e7;

/// ICF Figs. 17-18 (ext. Figs. 18-19): the clutter at contact stiffnesses from 1e4 to 1e12
/// N/m, each step solved by the paper's solver: the mean penetration over the last 1.25 s, when the objects
/// rest in a pile (Fig. 17), and the mean Newton iterations and log10 condition estimate per
/// step (Fig. 18). The paper's reading: compliance approximates rigid contact, with tenths of
/// microns of penetration at steel's stiffness; the solver stays robust up to 1e12 N/m; and
/// the iterations change by at most 20 % up to steel's stiffness.
pub(super) fn clutter_stiffness(load: Loader<'_>, quality: Quality) -> Result<PaperFigure> {
    let dt = clutter_history_dt(quality);
    let duration = 3.0;
    let stiffnesses = clutter_stiffnesses(quality);
    let runs: Vec<(Approximation, f64)> = Approximation::ALL
        .iter()
        .flat_map(|&a| stiffnesses.iter().map(move |&k| (a, k)))
        .collect();
    let rows: Vec<crate::simulate::SweepRow> = runs
        .par_iter()
        .map(|&(a, k)| {
            let mut error = None;
            let (_, rec) = simulate(load, "clutter", a, dt, Some(duration), |p| {
                papers_solver(p);
                error = p.set_contact_stiffness(k).err();
            })?;
            match error {
                Some(e) => Err(e),
                None => Ok(crate::simulate::SweepRow::new(
                    k,
                    &rec,
                    duration - CLUTTER_STEADY_WINDOW,
                )),
            }
        })
        .collect::<Result<_>>()?;
    let mut penetration = Vec::new();
    let mut iterations = Vec::new();
    let mut condition = Vec::new();
    let mut numbers = Vec::new();
    for (i, &a) in Approximation::ALL.iter().enumerate() {
        let rows = &rows[i * stiffnesses.len()..(i + 1) * stiffnesses.len()];
        // A negative mean is a gap (Similar and SAP act across it): no logarithm, and the
        // curve breaks there (NaN).
        let pushing: Vec<(f64, f64)> = rows
            .iter()
            .filter_map(|r| {
                r.mean_penetration
                    .filter(|&p| p > 0.0)
                    .map(|p| (r.stiffness, p))
            })
            .collect();
        penetration.push(curve(
            a,
            rows.iter()
                .map(|r| {
                    let p = r.mean_penetration.filter(|&p| p > 0.0);
                    (r.stiffness.log10(), p.map_or(f64::NAN, f64::log10))
                })
                .collect(),
        ));
        iterations.push(curve(
            a,
            rows.iter()
                .map(|r| (r.stiffness.log10(), r.mean_iterations))
                .collect(),
        ));
        condition.push(curve(
            a,
            rows.iter()
                .filter_map(|r| r.mean_log10_condition.map(|c| (r.stiffness.log10(), c)))
                .collect(),
        ));
        for r in rows {
            let k = r.stiffness;
            numbers.push(number(
                format!("{a}.penetration.k{k:e}"),
                format!("{a}: mean steady penetration (negative: a gap) at k = {k:e} N/m"),
                if k == STEEL_STIFFNESS {
                    "tenths of microns at steel's stiffness"
                } else {
                    "falls as k grows"
                },
                r.mean_penetration.unwrap_or(f64::NAN),
                "m",
            ));
            numbers.push(number(
                format!("{a}.iterations.k{k:e}"),
                format!("{a}: mean Newton iterations per step at k = {k:e} N/m"),
                "grow with k: within 20 % up to steel's stiffness",
                r.mean_iterations,
                "1",
            ));
            numbers.push(number(
                format!("{a}.log10_condition.k{k:e}"),
                format!("{a}: mean log10 condition estimate at k = {k:e} N/m"),
                "grows with k",
                r.mean_log10_condition.unwrap_or(f64::NAN),
                "1",
            ));
        }
        let up_to_steel: Vec<f64> = rows
            .iter()
            .filter(|r| r.stiffness <= STEEL_STIFFNESS)
            .map(|r| r.mean_iterations)
            .collect();
        numbers.push(number(
            format!("{a}.iterations_spread_to_steel"),
            format!(
                "{a}: largest over smallest mean iterations per step for k from {:e} to 1e7 N/m",
                stiffnesses[0]
            ),
            "within 20 % (at most 1.2)",
            up_to_steel.iter().copied().fold(0.0, f64::max)
                / up_to_steel.iter().copied().fold(f64::INFINITY, f64::min),
            "1",
        ));
        let (k, p): (Vec<f64>, Vec<f64>) =
            pushing.iter().filter(|(k, _)| *k <= 1e9).copied().unzip();
        numbers.push(number(
            format!("{a}.penetration_slope"),
            format!(
                "{a}: slope of log penetration against log k, k from {:e} to 1e9 N/m where it pushes",
                stiffnesses[0]
            ),
            "not stated; a compliant contact at rest carries its load at x = F/k (slope −1)",
            if k.len() >= 2 {
                log_log_slope(&k, &p)
            } else {
                f64::NAN
            },
            "1",
        ));
    }
    Ok(PaperFigure {
        name: "clutter-stiffness",
        title: format!(
            "ICF Figs. 17-18: clutter, steady penetration and solver cost against stiffness, δt = {dt} s"
        ),
        x_label: "log10 k (N/m)",
        panels: std::iter::once(LinePanel {
            y_label: "log10 mean steady penetration (m)",
            curves: penetration,
        })
        .chain(cost_panels(iterations, condition))
        .collect(),
        equal_aspect: false,
        numbers,
        notes: vec![
            "A mean gap (negative penetration: Similar and SAP act across the gap) breaks the penetration curve; its value is in the numbers.".into(),
            match quality {
                Quality::Quick => "Quick: δt = 10 ms, k = 1e5, 1e7, 1e9 N/m.".into(),
                Quality::Full => "δt = 2 ms, the step of the paper's other clutter figures (ICF Figs. 14-15); the paper does not state the step of Figs. 17-18.".into(),
            },
        ],
    })
}
