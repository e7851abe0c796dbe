//! ICF Sec. IX's time histories and Castro 2020's sliding box: the contact velocities
//! (slip `‖v_t‖`, normal `v_n`) and the normal force `Σ f_n` of each approximation against
//! time, with the events the papers describe (touchdown, rebound, rolling, jam, stop).

use rayon::prelude::*;

use super::{
    contact_velocities, curve, normal_force, number, simulate, Loader, PaperFigure, Quality, MODELS,
};
use crate::contact::Approximation;
use crate::error::Result;
use crate::problem::Problem;
use crate::report::body_states;
use crate::report::plot::LinePanel;
use crate::simulate::Recording;

/// Sliding when the slip speed exceeds this (m/s): ten times the stiction tolerance.
const SLIDING: f64 = 1e-3;
/// Stuck: slip below the stiction tolerance v_s of ICF Sec. IX (m/s).
const STUCK: f64 = 1e-4;
/// The conveyor's start-up left out of its peaks (s).
const SETTLED: f64 = 0.1;

/// Runs `case` at δt for every model of [`MODELS`], in parallel, with `edit` applied.
fn runs(
    load: Loader<'_>,
    case: &str,
    dt: f64,
    edit: fn(&mut Problem),
) -> Result<Vec<(Approximation, Problem, Recording)>> {
    MODELS
        .par_iter()
        .map(|&a| simulate(load, case, a, dt, None, edit).map(|(p, r)| (a, p, r)))
        .collect()
}

/// The three panels of ICF Figs. 2, 5 and 8-11: slip speed, normal velocity, normal force.
fn velocity_and_force_panels(runs: &[(Approximation, Problem, Recording)]) -> Vec<LinePanel> {
    let mut slip = Vec::new();
    let mut normal = Vec::new();
    let mut force = Vec::new();
    for (a, _, rec) in runs {
        let (s, n) = contact_velocities(rec);
        slip.push(curve(*a, s));
        normal.push(curve(*a, n));
        force.push(curve(*a, normal_force(rec)));
    }
    vec![
        LinePanel {
            y_label: "slip speed ‖v_t‖ (m/s)",
            curves: slip,
        },
        LinePanel {
            y_label: "normal velocity v_n (m/s)",
            curves: normal,
        },
        LinePanel {
            y_label: "normal force Σf_n (N)",
            curves: force,
        },
    ]
}

/// ICF Sec. IX-A, Fig. 2: the box on the oscillating belt at δt = 0.01 s.
pub(super) fn conveyor_oscillating(load: Loader<'_>, _quality: Quality) -> Result<PaperFigure> {
    let dt = 0.01;
    let runs = runs(load, "conveyor-oscillating", dt, super::belt_from_rest)?;
    let mut numbers = Vec::new();
    for (a, problem, rec) in &runs {
        let weight =
            problem.simulator.model.bodies[0].inertia.mass * problem.simulator.model.gravity.norm();
        let settled = || {
            rec.reports
                .iter()
                .zip(&rec.states[1..])
                .filter(|(_, s)| s.t > SETTLED)
                .map(|(r, _)| r)
        };
        let peak = settled()
            .map(|r| r.contacts.iter().map(|c| c.normal_force).sum::<f64>())
            .fold(0.0, f64::max);
        let vz = body_states(rec, &problem.simulator.model)
            .iter()
            .skip(1)
            .zip(&rec.reports)
            .filter(|(_, r)| r.contacts.iter().any(|c| c.slip > SLIDING))
            .map(|(s, _)| s[0].v_WB.z.abs())
            .fold(0.0, f64::max);
        let (paper_peak, paper_vz) = if *a == Approximation::Lagged {
            ("m g = 9.81 N in stick and slip", "0: no vertical motion")
        } else {
            (
                "\"quick peaks in the normal force\" at slip → stick; 45-448 N in the reference reproduction",
                "non-zero while sliding (gliding)",
            )
        };
        numbers.push(number(
            format!("{a}.peak_force"),
            format!("{a}: peak Σf_n after {SETTLED} s"),
            paper_peak,
            peak,
            "N",
        ));
        numbers.push(number(
            format!("{a}.max_vz_sliding"),
            format!("{a}: largest |v_z| of the box while sliding"),
            paper_vz,
            vz,
            "m/s",
        ));
        if *a == Approximation::Lagged {
            numbers.push(number("weight".into(), "m g".into(), "9.81 N", weight, "N"));
        }
    }
    Ok(PaperFigure {
        name: "conveyor-oscillating",
        title: format!("ICF Fig. 2: oscillating conveyor, δt = {dt} s"),
        x_label: "time t (s)",
        panels: velocity_and_force_panels(&runs),
        equal_aspect: false,
        numbers,
        notes: vec![
            "The belt moves by A(1 − cos ωt), starting at rest with the box (docs/contact-models.md, \"The conveyor's phase\").".into(),
            "Velocities are those of the contact carrying the largest normal force (the box rests on four corners).".into(),
        ],
    })
}

/// ICF Sec. IX-B, Fig. 5: the falling sphere at δt = 2e-3 s.
pub(super) fn falling_sphere(load: Loader<'_>, _quality: Quality) -> Result<PaperFigure> {
    let dt = 2e-3;
    let runs = runs(load, "falling-sphere", dt, |_| {})?;
    let mut numbers = Vec::new();
    for (a, problem, rec) in &runs {
        let radius = problem
            .simulator
            .geometries()
            .iter()
            .find_map(|g| match g.shape {
                crate::geometry::Shape::Sphere { radius } => Some(radius),
                _ => None,
            })
            .unwrap_or(f64::NAN);
        let sphere: Vec<_> = body_states(rec, &problem.simulator.model)
            .into_iter()
            .map(|row| row[0])
            .collect();
        let touch = rec
            .reports
            .iter()
            .position(|r| r.contacts.iter().any(|c| c.normal_force > 0.0));
        let t_touch = touch.map_or(f64::NAN, |k| rec.states[k + 1].t);
        let rebound = touch.map_or(f64::NAN, |k| {
            sphere[k + 1..]
                .iter()
                .map(|s| s.v_WB.z)
                .fold(f64::NEG_INFINITY, f64::max)
        });
        let u0 = touch.map_or(f64::NAN, |k| sphere[k].v_WB.x);
        let rolling = touch.and_then(|k| {
            (k..sphere.len())
                .find(|&i| (sphere[i].v_WB.x - sphere[i].w_WB.y * radius).abs() < SLIDING)
        });
        let last = sphere.last().map_or(f64::NAN, |s| s.v_WB.x);
        let early = if *a == Approximation::Lagged {
            "the reference; touches down when the surfaces meet"
        } else {
            "earlier than Lagged (action at a distance)"
        };
        numbers.push(number(
            format!("{a}.touchdown"),
            format!("{a}: end of the first step with a contact force"),
            early,
            t_touch,
            "s",
        ));
        numbers.push(number(
            format!("{a}.rebound"),
            format!("{a}: largest upward speed after touchdown"),
            if *a == Approximation::Lagged {
                "≈ 0: lands"
            } else {
                "normal velocity \"affected by the slip velocity\"; 0.17-0.39 m/s in the reference reproduction"
            },
            rebound,
            "m/s",
        ));
        numbers.push(number(
            format!("{a}.rolling"),
            format!("{a}: first time with |v_x − ω_y r| < {SLIDING} m/s"),
            "slides, then rolls (\"until about t = 0.07 s\" in the paper's time axis)",
            rolling.map_or(f64::NAN, |k| rec.states[k].t),
            "s",
        ));
        numbers.push(number(
            format!("{a}.final_over_touchdown"),
            format!("{a}: final v_x over v_x at touchdown"),
            "5/7 = 0.7143 (angular momentum about the contact point)",
            last / u0,
            "1",
        ));
    }
    Ok(PaperFigure {
        name: "falling-sphere",
        title: format!("ICF Fig. 5: falling sphere, δt = {dt} s"),
        x_label: "time t (s)",
        panels: velocity_and_force_panels(&runs),
        equal_aspect: false,
        numbers,
        notes: vec![
            "Default settings: only touching pairs enter SAP's and Similar's problems (docs/contact-models.md); with simulation.speculative = \"all\" they touch down 4-6 ms before Lagged and do not bounce.".into(),
        ],
    })
}

/// Jam time (s, NaN if none), peak Σf_n (N) and the length of the first stick (s) of a rod run.
fn jam(rec: &Recording) -> (f64, f64, f64) {
    let stuck: Vec<bool> = rec
        .reports
        .iter()
        .map(|r| {
            r.contacts
                .iter()
                .any(|c| c.normal_force > 0.0 && c.slip < STUCK)
        })
        .collect();
    let first = stuck.iter().position(|&s| s);
    let length = first.map_or(f64::NAN, |k| {
        let n = stuck[k..].iter().take_while(|&&s| s).count();
        rec.states[k + n].t - rec.states[k].t
    });
    let peak = normal_force(rec).iter().map(|p| p.1).fold(0.0, f64::max);
    (
        first.map_or(f64::NAN, |k| rec.states[k + 1].t),
        peak,
        length,
    )
}

/// The rod's δt: the paper's smallest convergence step, 4e-5 s when quick.
fn rod_dt(quality: Quality) -> f64 {
    match quality {
        Quality::Quick => 4e-5,
        Quality::Full => 1e-5,
    }
}

/// The rod's figure with `edit` applied to the problem.
fn rod(
    load: Loader<'_>,
    quality: Quality,
    (name, title): (&'static str, &str),
    edit: fn(&mut Problem),
    paper: [(&str, &str); 3],
) -> Result<PaperFigure> {
    let dt = rod_dt(quality);
    let runs = runs(load, "sliding-rod", dt, edit)?;
    let mut numbers = Vec::new();
    for ((a, _, rec), (paper_jam, paper_peak)) in runs.iter().zip(paper) {
        let (t_jam, peak, stick) = jam(rec);
        numbers.push(number(
            format!("{a}.jam"),
            format!("{a}: first step ending stuck (‖v_t‖ < {STUCK} m/s while pushing)"),
            paper_jam,
            t_jam,
            "s",
        ));
        numbers.push(number(
            format!("{a}.peak_force"),
            format!("{a}: peak Σf_n"),
            paper_peak,
            peak,
            "N",
        ));
        numbers.push(number(
            format!("{a}.stick"),
            format!("{a}: length of the first stick"),
            "about 0.2 ms",
            stick,
            "s",
        ));
    }
    Ok(PaperFigure {
        name,
        title: format!("{title}, δt = {dt} s"),
        x_label: "time t (s)",
        panels: velocity_and_force_panels(&runs),
        equal_aspect: false,
        numbers,
        notes: vec![
            format!("The paper plots a reference at δt = 1e-7 s; ours is δt = {dt} s (the convergence study's smallest step)."),
            "The rod starts touching; SAP and Similar kick it up in the first step by their gliding distance μ δt ‖v_t‖ (docs/contact-models.md, \"The sliding rod's start\").".into(),
        ],
    })
}

/// ICF Sec. IX-C, Figs. 8-9: the undamped rod.
pub(super) fn sliding_rod(load: Loader<'_>, quality: Quality) -> Result<PaperFigure> {
    let same = "jams; the time of impact \"almost the same for all three models\"";
    rod(
        load,
        quality,
        (
            "sliding-rod",
            "ICF Figs. 8-9: sliding rod without dissipation",
        ),
        |_| {},
        [
            (same, "force oscillates, then rises sharply to the jam"),
            (
                "jams; 0.0204 s at δt = 4e-5 in the reference reproduction",
                "709 N at δt = 1e-5 in the reference reproduction",
            ),
            (same, "force oscillates, then rises sharply to the jam"),
        ],
    )
}

/// ICF Sec. IX-C, Figs. 10-11: the rod with d = 0.2 s/m and τ_d = 4e-6 s.
pub(super) fn sliding_rod_damped(load: Loader<'_>, quality: Quality) -> Result<PaperFigure> {
    rod(
        load,
        quality,
        (
            "sliding-rod-damped",
            "ICF Figs. 10-11: sliding rod, d = 0.2 s/m, τ_d = 4e-6 s",
        ),
        damp,
        [
            ("jams later than Lagged", "different from Lagged's"),
            ("little changed by the dissipation", "—"),
            (
                "jams earlier than Lagged; force oscillates faster (k_eff = k (1 + μ d ‖v_t‖))",
                "different from Lagged's",
            ),
        ],
    )
}

/// The dissipation of ICF Sec. IX-C's second case.
pub(super) fn damp(problem: &mut Problem) {
    problem.simulator.settings.contact.dissipation = 0.2;
    problem.simulator.settings.contact.relaxation_time = 4e-6;
}

/// Castro 2020 note: the box sliding at 1 m/s, δt = 1e-2 s and 1e-3 s.
pub(super) fn sliding_box(load: Loader<'_>, _quality: Quality) -> Result<PaperFigure> {
    let cases: Vec<(Approximation, f64)> = [1e-2, 1e-3]
        .into_iter()
        .flat_map(|dt| MODELS.map(|a| (a, dt)))
        .collect();
    let runs: Vec<(Approximation, f64, Problem, Recording)> = cases
        .par_iter()
        .map(|&(a, dt)| {
            simulate(load, "sliding-box", a, dt, None, |_| {}).map(|(p, r)| (a, dt, p, r))
        })
        .collect::<Result<_>>()?;
    let mut speed = Vec::new();
    let mut force = Vec::new();
    let mut numbers = Vec::new();
    for (a, dt, problem, rec) in &runs {
        let model = &problem.simulator.model;
        let (mass, g) = (model.bodies[0].inertia.mass, model.gravity.norm());
        let mu = problem.simulator.settings.contact.mu;
        let states = body_states(rec, model);
        let v: Vec<(f64, f64)> = states
            .iter()
            .zip(&rec.states)
            .map(|(s, st)| (st.t, s[0].v_WB.xy().norm()))
            .collect();
        let stop = v.iter().position(|p| p.1 < SLIDING);
        let sliding = stop.map_or(rec.reports.len(), |k| k.saturating_sub(1));
        let mean = rec.reports[..sliding]
            .iter()
            .map(|r| r.contacts.iter().map(|c| c.normal_force).sum::<f64>())
            .sum::<f64>()
            / sliding.max(1) as f64;
        let first = normal_force(rec).first().map_or(f64::NAN, |p| p.1);
        let label = format!("{a}, δt = {dt}");
        speed.push(super::Curve {
            name: label.clone(),
            points: v.clone(),
        });
        force.push(super::Curve {
            name: label,
            points: normal_force(rec),
        });
        let key = format!("{a}.dt{dt:e}");
        numbers.push(number(
            format!("{key}.stop"),
            format!("{a}, δt = {dt}: stops (speed < {SLIDING} m/s)"),
            &format!("v0/(μg) = {:.4} s", v[0].1 / (mu * g)),
            stop.map_or(f64::NAN, |k| rec.states[k].t),
            "s",
        ));
        numbers.push(number(
            format!("{key}.mean_force"),
            format!("{a}, δt = {dt}: mean Σf_n while sliding"),
            &format!("m g = {:.2} N", mass * g),
            mean,
            "N",
        ));
        numbers.push(number(
            format!("{key}.first_force"),
            format!("{a}, δt = {dt}: Σf_n of the first step"),
            if *a == Approximation::Lagged {
                "m g"
            } else {
                "SAP: a kick at the start from z = 0 (Castro 2020); Similar glides too"
            },
            first,
            "N",
        ));
    }
    Ok(PaperFigure {
        name: "sliding-box",
        title: "Castro 2020: box sliding at 1 m/s, μ = 0.5".into(),
        x_label: "time t (s)",
        panels: vec![
            LinePanel {
                y_label: "speed ‖v‖ (m/s)",
                curves: speed,
            },
            LinePanel {
                y_label: "normal force Σf_n (N)",
                curves: force,
            },
        ],
        equal_aspect: false,
        numbers,
        notes: vec![],
    })
}
