//! ICF ext. Sec. XII-B (Figs. 20-22): the grasp stress test. A Franka hand holds a bronze rod
//! and follows a horizontal circle of radius 3 cm at frequency f
//! (`problems/grasp-stress.toml`: example-robot-data's hand on two PD slides whose targets are
//! `R cos 2πft` and `R sin 2πft`, the rod hanging between the fingertips, point contact).
//! At low f the rod stays; near its compound-pendulum frequency (1.62 Hz for this rod) it
//! rocks, slides and falls.
//!
//! Failure: the rod has failed when its centre of mass is more than [`DROP`] below where it
//! started (the hand moves horizontally only, so this is a drop relative to the hand: the
//! rod has slid down through the fingers or left them; rocking alone raises the centre).
//! The time to failure `t_f` is the end of the first step where that holds; a rod that holds
//! for the whole run gets `t_f` = the run's duration (the figures draw it there and say so).
//!
//! Figures, from one study per process and quality (every run in parallel with rayon):
//! - `grasp-time-to-failure` (Fig. 21): `t_f` against f for the reference, Lagged at
//!   δt = 0.2 ms, without dissipation (d = 0) and with the file's Hunt & Crossley d;
//! - `grasp-errors` (Fig. 22): the relative error `(t_f − t_f,ref)/t_f,ref` of Lagged and
//!   Similar against δt, without (left panel of the paper, top here) and with dissipation,
//!   averaged over the frequencies where the reference fails;
//! - `grasp-refinement`: `t_f` at one frequency (1.7 Hz) at δt = 0.4, 0.2, 0.1 and 0.05 ms,
//!   the refinement that validates the reference.

use std::f64::consts::PI;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rayon::prelude::*;

use super::{number, Loader, Number, PaperFigure, Quality};
use crate::contact::Approximation;
use crate::control::ControlLaw;
use crate::error::{Error, Result};
use crate::multibody::JointKind;
use crate::problem::Problem;

/// The shipped problem.
const CASE: &str = "grasp-stress";
/// The rod's body.
const ROD: &str = "rod";
/// The slides carrying the hand, x then y.
const SLIDES: [&str; 2] = ["slide_x", "slide_y"];
/// Failure: the rod's centre of mass this far (m) below its start.
pub const DROP: f64 = 0.02;
/// The rod's pendulum frequency (Hz) about the grip point, from the file's numbers:
/// `ω² = g d / (L²/12 + r²/4 + d²)` with L = 0.15 m, r = 0.01 m, d = 0.06575 m.
const PENDULUM_HZ: f64 = 1.620;
/// The reference's time step (s), the paper's.
const REFERENCE_DT: f64 = 2e-4;

/// What the paper reports.
const PAPER_HOLD: &str = "stable below 1.4 Hz; t_f falls rapidly near the rod's pendulum frequency";
const PAPER_DISSIPATION: &str = "dissipation increases t_f by up to 10 %";
const PAPER_SIMILAR: &str = "at 0.2 ms and d = 0, Lagged and Similar differ by less than 0.5 %";
const PAPER_LARGE_DT: &str = "errors up to 50 % at large δt; without dissipation both underpredict t_f (truncation); Similar's is less negative";

/// The settings of one study.
#[derive(Clone, Debug, PartialEq)]
struct Plan {
    /// Frequencies (Hz).
    frequencies: Vec<f64>,
    /// Simulated duration (s): `t_f` is capped there.
    duration: f64,
    /// The reference's δt (s).
    reference_dt: f64,
    /// The larger steps of Fig. 22 (s).
    error_dts: Vec<f64>,
    /// The refinement's frequency (Hz) and steps (s).
    refinement: (f64, Vec<f64>),
}

impl Plan {
    fn new(quality: Quality) -> Self {
        match quality {
            Quality::Full => Plan {
                frequencies: vec![
                    0.8, 1.0, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2.0, 2.2, 2.5, 3.0,
                ],
                duration: 10.0,
                reference_dt: REFERENCE_DT,
                error_dts: vec![5e-4, 1e-3, 2e-3, 5e-3, 1e-2],
                refinement: (1.7, vec![4e-4, 2e-4, 1e-4, 5e-5]),
            },
            Quality::Quick => Plan {
                frequencies: vec![1.0, 1.7, 2.5],
                duration: 4.0,
                reference_dt: 1e-3,
                error_dts: vec![5e-3],
                refinement: (1.7, vec![2e-3, 1e-3, 5e-4]),
            },
        }
    }
}

/// One run of the grasp.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Case {
    frequency: f64,
    approximation: Approximation,
    dt: f64,
    /// With the file's Hunt & Crossley dissipation (else d = 0).
    dissipation: bool,
}

/// What a run measured.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Outcome {
    case: Case,
    /// Time to failure (s); the duration when the rod held.
    t_f: f64,
    /// Whether the rod fell within the duration.
    failed: bool,
    /// Largest distance (m) of the hand from the circle's target, after the first period.
    tracking: f64,
    /// Wall time (s).
    wall: f64,
}

/// One study: every run of the three figures.
#[derive(Debug)]
struct Study {
    plan: Plan,
    outcomes: Vec<Outcome>,
    /// The circle's radius (m) read from the file.
    radius: f64,
    /// Wall time of the whole study (s).
    wall: f64,
}

impl Study {
    fn get(&self, case: Case) -> Result<&Outcome> {
        self.outcomes
            .iter()
            .find(|o| o.case == case)
            .ok_or_else(|| Error::invalid("grasp run", format!("{case:?}"), "not in the study"))
    }
}

/// Studies made in this process, per quality.
static STUDIES: Mutex<Vec<(Quality, Arc<Study>)>> = Mutex::new(Vec::new());

/// The study of `quality`, made now or earlier in this process. The lock is held while a
/// study is made, so that figures asked for at once from several threads (parallel tests)
/// share one study instead of each making its own.
fn study(load: Loader<'_>, quality: Quality) -> Result<Arc<Study>> {
    let mut studies = STUDIES
        .lock()
        .map_err(|_| Error::invalid("grasp study", CASE, "a thread panicked while making it"))?;
    if let Some((_, s)) = studies.iter().find(|(q, _)| *q == quality) {
        return Ok(s.clone());
    }
    let made = Arc::new(make_study(load, quality)?);
    studies.push((quality, made.clone()));
    Ok(made)
}

/// Runs every case of the plan of `quality`.
fn make_study(load: Loader<'_>, quality: Quality) -> Result<Study> {
    let plan = Plan::new(quality);
    let mut cases = Vec::new();
    let mut add = |case: Case| {
        if !cases.contains(&case) {
            cases.push(case);
        }
    };
    for &frequency in &plan.frequencies {
        for dissipation in [false, true] {
            let at = |approximation, dt| Case {
                frequency,
                approximation,
                dt,
                dissipation,
            };
            add(at(Approximation::Lagged, plan.reference_dt));
            add(at(Approximation::Similar, plan.reference_dt));
            for &dt in &plan.error_dts {
                add(at(Approximation::Lagged, dt));
                add(at(Approximation::Similar, dt));
            }
        }
    }
    let (f_ref, dts) = &plan.refinement;
    for &dt in dts {
        for dissipation in [false, true] {
            add(Case {
                frequency: *f_ref,
                approximation: Approximation::Lagged,
                dt,
                dissipation,
            });
        }
    }
    // The finest steps first, so that the longest runs do not end the study alone.
    cases.sort_by(|a, b| a.dt.total_cmp(&b.dt));
    let start = Instant::now();
    let outcomes = cases
        .par_iter()
        .map(|case| run(load, *case, plan.duration))
        .collect::<Result<Vec<_>>>()?;
    let radius = circle(&load(CASE)?)?.0;
    Ok(Study {
        plan,
        outcomes,
        radius,
        wall: start.elapsed().as_secs_f64(),
    })
}

/// The circle's radius R (m) and the slides' PD laws (actuator indices), from the file: the
/// two PD laws whose targets are sinusoids.
fn circle(problem: &Problem) -> Result<(f64, Vec<usize>)> {
    let mut radius = None;
    let mut laws = Vec::new();
    for (k, a) in problem.controller.actuators.iter().enumerate() {
        if let ControlLaw::Pd {
            sinusoid: Some(s), ..
        } = &a.law
        {
            radius = Some(s.amplitude);
            laws.push(k);
        }
    }
    match (radius, laws.len()) {
        (Some(r), 2) => Ok((r, laws)),
        _ => Err(Error::invalid(
            "problem",
            CASE,
            "expected two slides with sinusoidal PD targets (the circle)",
        )),
    }
}

/// Index of body `name`'s joint.
fn body(problem: &Problem, name: &str) -> Result<usize> {
    problem
        .simulator
        .model
        .body_index(name)
        .ok_or_else(|| Error::invalid("problem", CASE, &format!("no body `{name}`")))
}

/// Runs `case` for `duration` (s) or until the rod falls.
fn run(load: Loader<'_>, case: Case, duration: f64) -> Result<Outcome> {
    let started = Instant::now();
    let mut problem = load(CASE)?;
    let (radius, laws) = circle(&problem)?;
    for k in laws {
        if let ControlLaw::Pd {
            sinusoid: Some(s), ..
        } = &mut problem.controller.actuators[k].law
        {
            s.frequency = case.frequency;
        }
    }
    let settings = &mut problem.simulator.settings;
    settings.dt = case.dt;
    settings.approximation = case.approximation;
    if !case.dissipation {
        settings.contact.dissipation = 0.0;
    }
    // Hand, slides and rod start together at the circle's speed 2πfR along y.
    let speed = 2.0 * PI * case.frequency * radius;
    let model = &problem.simulator.model;
    let [sx, sy] = [body(&problem, SLIDES[0])?, body(&problem, SLIDES[1])?];
    let rod = body(&problem, ROD)?;
    if model.joints[rod].kind != JointKind::Free {
        return Err(Error::invalid(
            "problem",
            CASE,
            "the rod must be a free body",
        ));
    }
    let (qx, qy) = (model.joints[sx].q_start, model.joints[sy].q_start);
    let rod_q = model.joints[rod].q_start;
    let mut state = problem.initial_state.clone();
    state.v[model.joints[sy].v_start] = speed;
    // A free joint's velocities are (ω, v), world frame.
    state.v[model.joints[rod].v_start + 4] = speed;
    let z0 = state.q[rod_q + 2];
    let nu = model.nu();
    let steps = (duration / case.dt).round() as usize;
    let w = 2.0 * PI * case.frequency;
    let mut tracking: f64 = 0.0;
    let mut failed_at = None;
    for _ in 0..steps {
        let u = problem.controller.effort(&state, nu);
        state = problem.simulator.step(&state, &u)?.0;
        if state.t * case.frequency > 1.0 {
            let (x, y) = (state.q[qx], state.q[qy]);
            let (cx, cy) = (radius * (w * state.t).cos(), radius * (w * state.t).sin());
            tracking = tracking.max((x - cx).hypot(y - cy));
        }
        if state.q[rod_q + 2] < z0 - DROP {
            failed_at = Some(state.t);
            break;
        }
    }
    Ok(Outcome {
        case,
        t_f: failed_at.unwrap_or(duration),
        failed: failed_at.is_some(),
        tracking,
        wall: started.elapsed().as_secs_f64(),
    })
}

/// The reference case (Lagged at the plan's reference δt) at `frequency`.
fn reference(plan: &Plan, frequency: f64, dissipation: bool) -> Case {
    Case {
        frequency,
        approximation: Approximation::Lagged,
        dt: plan.reference_dt,
        dissipation,
    }
}

/// Tag of a dissipation setting in keys.
fn tag(dissipation: bool) -> &'static str {
    if dissipation {
        "d"
    } else {
        "d0"
    }
}

/// ICF ext. Sec. XII-B, Fig. 21: time to failure against frequency, without and with
/// dissipation (Lagged, the reference δt).
pub(super) fn time_to_failure(load: Loader<'_>, quality: Quality) -> Result<PaperFigure> {
    let s = study(load, quality)?;
    let plan = &s.plan;
    let mut curves = Vec::new();
    let mut numbers = vec![number(
        "pendulum.frequency".into(),
        "the rod's compound-pendulum frequency about the grip point".into(),
        "near 1.4-2 Hz (Fig. 21)",
        PENDULUM_HZ,
        "Hz",
    )];
    let mut tracking: f64 = 0.0;
    for dissipation in [false, true] {
        let mut points = Vec::new();
        let mut highest_held = f64::NAN;
        for &f in &plan.frequencies {
            let o = s.get(reference(plan, f, dissipation))?;
            tracking = tracking.max(o.tracking);
            points.push((f, o.t_f));
            if !o.failed && (highest_held.is_nan() || highest_held <= f) {
                highest_held = f;
            }
            numbers.push(number(
                format!("t_f.{}.{f}", tag(dissipation)),
                format!(
                    "t_f at {f} Hz, {} (capped at {} s: {})",
                    if dissipation {
                        "with dissipation"
                    } else {
                        "d = 0"
                    },
                    plan.duration,
                    if o.failed { "fell" } else { "held" }
                ),
                PAPER_HOLD,
                o.t_f,
                "s",
            ));
        }
        numbers.push(number(
            format!("held.{}", tag(dissipation)),
            "highest frequency of the grid at which the rod held for the whole run".into(),
            PAPER_HOLD,
            highest_held,
            "Hz",
        ));
        curves.push(super::Curve {
            name: if dissipation {
                "Lagged, d from the file".into()
            } else {
                "Lagged, d = 0".into()
            },
            points,
        });
    }
    // Dissipation's effect where both fail.
    let gains: Vec<f64> = plan
        .frequencies
        .iter()
        .filter_map(|&f| {
            let a = s.get(reference(plan, f, false)).ok()?;
            let b = s.get(reference(plan, f, true)).ok()?;
            (a.failed && b.failed).then(|| (b.t_f - a.t_f) / a.t_f)
        })
        .collect();
    let (lo, hi) = gains
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &g| {
            (a.min(g), b.max(g))
        });
    numbers.push(number(
        "dissipation.min_gain".into(),
        "least relative change of t_f with dissipation, over frequencies where both fail".into(),
        PAPER_DISSIPATION,
        lo,
        "1",
    ));
    numbers.push(number(
        "dissipation.max_gain".into(),
        "largest relative change of t_f with dissipation".into(),
        PAPER_DISSIPATION,
        hi,
        "1",
    ));
    numbers.push(number(
        "tracking".into(),
        format!(
            "largest distance of the hand from the target circle (R = {} m), over the reference runs",
            s.radius
        ),
        "the hand follows the circle exactly",
        tracking,
        "m",
    ));
    numbers.push(number(
        "wall".into(),
        "wall time of the whole study (all three figures' runs)".into(),
        "not reported",
        s.wall,
        "s",
    ));
    Ok(PaperFigure {
        name: "grasp-time-to-failure",
        title: format!(
            "ICF ext. Sec. XII-B, Fig. 21: time to failure, Lagged δt = {} ms (capped at {} s)",
            plan.reference_dt * 1e3,
            plan.duration
        ),
        x_label: "frequency f (Hz)",
        panels: vec![super::LinePanel {
            y_label: "time to failure t_f (s)",
            curves,
        }],
        equal_aspect: false,
        numbers,
        notes: vec![format!(
            "failure: the rod's centre {DROP} m below its start; a rod that holds is drawn at the duration"
        )],
    })
}

/// ICF ext. Sec. XII-B, Fig. 22: relative error of `t_f` against the reference for Lagged and
/// Similar at each δt, without (top) and with dissipation (bottom), averaged over the
/// frequencies where the reference fails.
pub(super) fn errors(load: Loader<'_>, quality: Quality) -> Result<PaperFigure> {
    let s = study(load, quality)?;
    let plan = &s.plan;
    let mut dts = vec![plan.reference_dt];
    dts.extend(&plan.error_dts);
    let mut panels = Vec::new();
    let mut numbers = Vec::new();
    for dissipation in [false, true] {
        let failing: Vec<f64> = plan
            .frequencies
            .iter()
            .copied()
            .filter(|&f| {
                s.get(reference(plan, f, dissipation))
                    .is_ok_and(|o| o.failed)
            })
            .collect();
        let mut curves = Vec::new();
        for approximation in [Approximation::Lagged, Approximation::Similar] {
            let mut points = Vec::new();
            for &dt in &dts {
                let mut errors = Vec::new();
                for &f in &failing {
                    let r = s.get(reference(plan, f, dissipation))?;
                    let o = s.get(Case {
                        frequency: f,
                        approximation,
                        dt,
                        dissipation,
                    })?;
                    errors.push((o.t_f - r.t_f) / r.t_f);
                }
                let mean = errors.iter().sum::<f64>() / errors.len() as f64;
                let worst = errors
                    .iter()
                    .fold(0.0f64, |m, e| if e.abs() > m.abs() { *e } else { m });
                points.push((dt * 1e3, mean));
                numbers.push(number(
                    format!("{}.{}.{:.1}ms.mean", approximation.name(), tag(dissipation), dt * 1e3),
                    format!(
                        "{} at δt = {} ms, {}: mean relative error of t_f over {} failing frequencies",
                        approximation.name(),
                        dt * 1e3,
                        if dissipation { "with dissipation" } else { "d = 0" },
                        errors.len()
                    ),
                    if dt == plan.reference_dt { PAPER_SIMILAR } else { PAPER_LARGE_DT },
                    mean,
                    "1",
                ));
                numbers.push(number(
                    format!(
                        "{}.{}.{:.1}ms.worst",
                        approximation.name(),
                        tag(dissipation),
                        dt * 1e3
                    ),
                    "the largest relative error in magnitude, with its sign".into(),
                    PAPER_LARGE_DT,
                    worst,
                    "1",
                ));
            }
            curves.push(super::curve(approximation, points));
        }
        panels.push(super::LinePanel {
            y_label: if dissipation {
                "error of t_f, with dissipation"
            } else {
                "error of t_f, d = 0"
            },
            curves,
        });
    }
    Ok(PaperFigure {
        name: "grasp-errors",
        title: format!(
            "ICF ext. Sec. XII-B, Fig. 22: relative error of t_f against Lagged at {} ms",
            plan.reference_dt * 1e3
        ),
        x_label: "time step δt (ms)",
        panels,
        equal_aspect: false,
        numbers,
        notes: vec![
            "errors averaged over the frequencies where the reference fails; per-frequency values in the numbers".into(),
        ],
    })
}

/// The refinement that validates the reference: `t_f` against δt at one frequency.
pub(super) fn refinement(load: Loader<'_>, quality: Quality) -> Result<PaperFigure> {
    let s = study(load, quality)?;
    let (f, dts) = &s.plan.refinement;
    let mut curves = Vec::new();
    let mut numbers: Vec<Number> = Vec::new();
    for dissipation in [false, true] {
        let mut points = Vec::new();
        for &dt in dts {
            let o = s.get(Case {
                frequency: *f,
                approximation: Approximation::Lagged,
                dt,
                dissipation,
            })?;
            points.push((dt * 1e3, o.t_f));
            numbers.push(number(
                format!("t_f.{}.{:.2}ms", tag(dissipation), dt * 1e3),
                format!(
                    "t_f at {f} Hz, Lagged δt = {} ms, {}{}",
                    dt * 1e3,
                    if dissipation {
                        "with dissipation"
                    } else {
                        "d = 0"
                    },
                    if o.failed { "" } else { " (held: capped)" }
                ),
                "the reference at 0.2 ms is \"validated via a refinement study\"",
                o.t_f,
                "s",
            ));
        }
        // The change between successive steps, coarse to fine.
        for pair in points.windows(2) {
            let ((coarse, t_coarse), (fine, t_fine)) = (pair[0], pair[1]);
            numbers.push(number(
                format!("change.{}.{coarse:.2}-{fine:.2}ms", tag(dissipation)),
                format!("relative change of t_f from δt = {coarse} ms to {fine} ms"),
                "small (not reported)",
                (t_fine - t_coarse) / t_coarse,
                "1",
            ));
        }
        curves.push(super::Curve {
            name: if dissipation {
                "d from the file".into()
            } else {
                "d = 0".into()
            },
            points,
        });
    }
    Ok(PaperFigure {
        name: "grasp-refinement",
        title: format!("ICF ext. Sec. XII-B: t_f at {f} Hz against δt (Lagged)"),
        x_label: "time step δt (ms)",
        panels: vec![super::LinePanel {
            y_label: "time to failure t_f (s)",
            curves,
        }],
        equal_aspect: false,
        numbers,
        notes: vec![],
    })
}
