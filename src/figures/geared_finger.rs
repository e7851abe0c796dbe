//! ICF ext. Sec. XII-C (Figs. 23-24): the BarrettHand's geared finger, whose proximal link is
//! driven through a friction clutch held by stiction and whose distal link follows the motor
//! through a pulley (a holonomic coupler); `problems/geared-finger.toml` is the mechanism.
//!
//! One motor turns the worm gear (the "shaft", through a worm stage modelled as a coupler).
//! The proximal gear (the "nut") rides on the shaft's thread: a prismatic joint on the shaft
//! and a revolute joint on it, coupled by `z = −(lead/2π) φ`, `φ` the nut's turn relative to
//! the shaft. Wound forward, its rigid face presses the Belleville washers (one compliant
//! pressure-field cylinder on the shaft, μ = 1); the stiction of that patch makes the clutch.
//! The nut's teeth mesh with the proximal wheel's (boxes, frictionless point contact), so the
//! proximal link turns with the nut at `−N_nut/N_wheel`. The paper's phases (Sec. XII-C):
//!
//! - loading: the motor turns forward with the proximal link against its rest; the nut winds
//!   into the washers until the motor stalls at its effort limit (0.6 N·cm); the clutch
//!   slides, so its torque reaches `μ F r_eff` with the axial force `F` and the effective
//!   radius `r_eff = Σ r_i f_n,i / Σ f_n,i` of the patch's contacts;
//! - driving: the motor reverses (limit 0.66 N·cm); the clutch sticks, since the torque it
//!   transmits (the thread's back-torque `F·lead/2π` plus the link's load) stays below the
//!   loaded `μ F r_eff`, and the link follows the nut through the teeth;
//! - breakaway: the link meets a fixed obstacle; the clutch torque builds to `μ F r_eff`, the
//!   clutch slips, the nut unwinds off the washers (the drivetrain disconnects) while the
//!   distal link keeps following the worm gear through its coupler.
//!
//! [`geared_finger`] plots the clutch's torque on the nut about the shaft (and the teeth's)
//! with the phases marked, the joint angles and the clutch's axial force;
//! [`geared_finger_spectrum`] the amplitude spectrum of both torques while driving, where the
//! tooth-passing frequency `N_nut |ω_shaft|/2π` and its harmonics stand out (rustfft). What
//! differs from the paper's CAD model is listed in the figure's notes and in docs/figures.md.

use std::f64::consts::PI;

use rustfft::num_complex::Complex;
use rustfft::FftPlanner;

use super::{number, Loader, PaperFigure, Quality};
use crate::control::ControlLaw;
use crate::error::{Error, Result};
use crate::multibody::model::BodyId;
use crate::problem::Problem;
use crate::report::plot::{Curve, LinePanel};
use crate::simulate::Recording;
use crate::step::StepReport;

/// The problem file.
const CASE: &str = "geared-finger";

/// The mechanism's named parts in the problem file.
struct Parts {
    /// Body indices of the motor, the worm gear (shaft), the nut and the two links.
    motor: usize,
    shaft: usize,
    nut: usize,
    proximal: usize,
    distal: usize,
    /// Geometry index of the obstacle.
    obstacle: usize,
    /// Teeth of the nut and of the proximal wheel (geometries `nut-tooth-*`, `wheel-tooth-*`).
    nut_teeth: usize,
    wheel_teeth: usize,
    /// The clutch's friction coefficient (the washers' own).
    mu: f64,
    /// Stiction tolerance v_s of the clutch (m/s).
    stiction_tolerance: f64,
    /// The time the motor reverses (s): the second phase of its scheduled PD law.
    reversal: f64,
    /// The motor's effort limits while loading and driving (N·m).
    limits: (f64, f64),
}

impl Parts {
    fn of(problem: &Problem) -> Result<Parts> {
        let model = &problem.simulator.model;
        let body = |name: &str| {
            model
                .body_index(name)
                .ok_or_else(|| Error::invalid("geared finger body", name, "a body of the file"))
        };
        let geometries = problem.simulator.geometries();
        let geometry = |name: &str| {
            geometries
                .iter()
                .position(|g| g.name == name)
                .ok_or_else(|| Error::invalid("geared finger geometry", name, "a geometry"))
        };
        let count = |prefix: &str| {
            geometries
                .iter()
                .filter(|g| g.name.starts_with(prefix))
                .count()
        };
        let washers = geometry("washers")?;
        let clutch = geometries[washers].contact.ok_or_else(|| {
            Error::invalid("washers", "no contact table", "the clutch's own friction")
        })?;
        let (reversal, limits) = problem
            .controller
            .actuators
            .iter()
            .find_map(|a| match &a.law {
                ControlLaw::PdSchedule {
                    times,
                    effort_limits,
                    ..
                } if times.len() == 2 => Some((
                    times[1],
                    (
                        effort_limits[0].min(a.effort_limit),
                        effort_limits[1].min(a.effort_limit),
                    ),
                )),
                _ => None,
            })
            .ok_or_else(|| {
                Error::invalid("motor", "its law", "a scheduled PD law of two phases")
            })?;
        Ok(Parts {
            motor: body("motor")?,
            shaft: body("shaft")?,
            nut: body("nut")?,
            proximal: body("proximal")?,
            distal: body("distal")?,
            obstacle: geometry("obstacle")?,
            nut_teeth: count("nut-tooth-"),
            wheel_teeth: count("wheel-tooth-"),
            mu: clutch.mu,
            stiction_tolerance: clutch.stiction_tolerance,
            reversal,
            limits,
        })
    }
}

/// What one step did, at the time at its end.
#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    t: f64,
    /// Torque of the clutch's contacts on the nut about the shaft axis (N·m).
    clutch_torque: f64,
    /// Torque of the teeth's contacts on the nut about the shaft axis (N·m).
    mesh_torque: f64,
    /// The clutch's axial (normal) force Σ f_n (N).
    clutch_force: f64,
    /// Σ r_i f_n,i over the clutch's contacts (N·m): μ times it bounds the clutch torque.
    clutch_moment: f64,
    /// The largest slip speed of the clutch's contacts (m/s).
    clutch_slip: f64,
    /// Normal force of the obstacle on the link (N).
    obstacle_force: f64,
    /// Contacts of the step.
    contacts: usize,
    /// Angles (rad): motor, worm gear, nut (absolute), proximal and distal joints.
    motor: f64,
    shaft: f64,
    nut: f64,
    proximal: f64,
    distal: f64,
}

/// One step's sample: the contact torques about the shaft axis (world x through the shaft's
/// joint origin) on the nut, and the joint angles of the state at its end.
fn sample(parts: &Parts, problem: &Problem, report: &StepReport, q: &[f64], t: f64) -> Sample {
    let model = &problem.simulator.model;
    let axis = model.joints[parts.shaft].X_PJ.p;
    let nut = BodyId::Body(parts.nut);
    let mut s = Sample {
        t,
        contacts: report.contacts.len(),
        ..Sample::default()
    };
    for c in &report.contacts {
        if c.geometries.0 == parts.obstacle || c.geometries.1 == parts.obstacle {
            s.obstacle_force += c.normal_force;
            continue;
        }
        let (on_nut, other) = if c.body_b == nut {
            (c.force, c.body_a)
        } else if c.body_a == nut {
            (-c.force, c.body_b)
        } else {
            continue;
        };
        let r = c.point - axis;
        let torque = r.y * on_nut.z - r.z * on_nut.y;
        if other == BodyId::Body(parts.shaft) {
            s.clutch_torque += torque;
            s.clutch_force += c.normal_force;
            s.clutch_moment += r.yz().norm() * c.normal_force;
            s.clutch_slip = s.clutch_slip.max(c.slip);
        } else {
            s.mesh_torque += torque;
        }
    }
    let q_of = |b: usize| q[model.joints[b].q_start];
    s.motor = q_of(parts.motor);
    s.shaft = q_of(parts.shaft);
    // The nut's joint is its turn relative to the shaft (its slide does not turn).
    s.nut = q_of(parts.shaft) + q_of(parts.nut);
    s.proximal = q_of(parts.proximal);
    s.distal = q_of(parts.distal);
    s
}

/// The run and its samples.
struct FingerRun {
    parts: Parts,
    samples: Vec<Sample>,
    dt: f64,
    /// Tooth thickness of the nut's teeth (m) and their pitch radius (m).
    tooth: (f64, f64),
}

/// Runs `geared-finger` at the quality's δt (the file's 1 ms for `Quick`, 0.25 ms for `Full`).
fn simulate(load: Loader<'_>, quality: Quality) -> Result<FingerRun> {
    let mut problem = load(CASE)?;
    if quality == Quality::Full {
        problem.simulator.settings.dt = 2.5e-4;
    }
    let dt = problem.simulator.settings.dt;
    let parts = Parts::of(&problem)?;
    let tooth = problem
        .simulator
        .geometries()
        .iter()
        .find(|g| g.name.starts_with("nut-tooth-"))
        .and_then(|g| match g.shape {
            crate::geometry::Shape::Box { half_extents } => {
                Some((2.0 * half_extents.z, g.X_BG.p.norm()))
            }
            _ => None,
        })
        .ok_or_else(|| Error::invalid("nut-tooth-0", "its shape", "a box"))?;
    let Recording { states, reports } = problem.run()?;
    let samples = reports
        .iter()
        .zip(&states[1..])
        .map(|(r, s)| sample(&parts, &problem, r, s.q.as_slice(), s.t))
        .collect();
    Ok(FingerRun {
        parts,
        samples,
        dt,
        tooth,
    })
}

/// The phases' times (s): the motor's reversal, the first step the obstacle pushes, the first
/// step after it whose clutch slips faster than `slip_bound` (m/s), and the first step after
/// that without clutch contact (NaN for an event that did not come).
struct Phases {
    reversal: f64,
    hit: f64,
    slip: f64,
    release: f64,
}

impl FingerRun {
    /// The clutch's slip counts as sliding above ten stiction tolerances.
    fn slip_bound(&self) -> f64 {
        10.0 * self.parts.stiction_tolerance
    }

    fn phases(&self) -> Phases {
        let after = |t0: f64, f: &dyn Fn(&Sample) -> bool| {
            self.samples
                .iter()
                .find(|s| s.t > t0 && f(s))
                .map_or(f64::NAN, |s| s.t)
        };
        let reversal = self.parts.reversal;
        let hit = after(reversal, &|s| s.obstacle_force > 0.0);
        let slip = after(hit, &|s| s.clutch_slip > self.slip_bound());
        let release = after(slip, &|s| s.clutch_force == 0.0);
        Phases {
            reversal,
            hit,
            slip,
            release,
        }
    }

    /// The samples with `t0 < t ≤ t1`.
    fn window(&self, t0: f64, t1: f64) -> impl Iterator<Item = &Sample> {
        self.samples.iter().filter(move |s| s.t > t0 && s.t <= t1)
    }
}

/// Largest of `f` over `samples` (NaN for none).
fn max_of<'a>(samples: impl Iterator<Item = &'a Sample>, f: impl Fn(&Sample) -> f64) -> f64 {
    samples.map(f).fold(f64::NAN, f64::max)
}

/// The notes both figures carry: what differs from the paper's CAD model.
fn simplifications(run: &FingerRun) -> Vec<String> {
    vec![
        "Geometry: boxes and cylinders, not the paper's hydroelastic meshes from CAD drawings. The nut's and the wheel's teeth are straight-sided boxes on parallel axes (a spur pair standing in for the proximal worm and worm wheel); they mesh with backlash and a ratio that varies within each tooth, frictionless point contact.".into(),
        "The motor's worm stage (motor to worm gear) is a holonomic coupler of ratio 10, backdrivable; the paper's worm friction μ ≥ tan λ (non-backdrivability) is not modelled. Gravity is off, so nothing backdrives the drivetrain once the clutch lets go; the link's rest and the obstacle are fixed boxes.".into(),
        "The thread is a coupler between a prismatic and a revolute joint (no thread contact, no thread friction); the Belleville washers are one compliant pressure-field cylinder (E = 15 MPa, r = 4 mm, 2 mm thick) against the nut's rigid flat face, μ = 1 as in the paper, stiction tolerance 1e-6 m/s (the regularized friction's creep, ∝ v_s, would unscrew the nut). Six joints and three couplers (three degrees of freedom) against the paper's seven.".into(),
        format!(
            "δt = {} ms: the nut's teeth travel {:.0} % of their thickness per step at the worm gear's driving speed (the paper chose δt for 25 %).",
            run.dt * 1e3,
            100.0 * tooth_travel(run)
        ),
    ]
}

/// The nut's teeth's travel per step while driving, as a fraction of their thickness.
fn tooth_travel(run: &FingerRun) -> f64 {
    let (thickness, radius) = run.tooth;
    radius * shaft_speed(run) * run.dt / thickness
}

/// The worm gear's mean speed |ω| (rad/s) from 20 % into the driving phase to its end.
fn shaft_speed(run: &FingerRun) -> f64 {
    let p = run.phases();
    let t0 = p.reversal + 0.2 * (p.hit - p.reversal);
    let w: Vec<&Sample> = run.window(t0, p.hit - 0.5 * run.dt).collect();
    match (w.first(), w.last()) {
        (Some(a), Some(b)) if b.t > a.t => ((b.shaft - a.shaft) / (b.t - a.t)).abs(),
        _ => f64::NAN,
    }
}

/// A vertical marker from `lo` to `hi` at `t`.
fn marker(name: &str, t: f64, (lo, hi): (f64, f64)) -> Curve {
    Curve {
        name: name.to_string(),
        points: if t.is_finite() {
            vec![(t, lo), (t, hi)]
        } else {
            Vec::new()
        },
    }
}

/// ICF ext. Sec. XII-C, Fig. 24: the contact torques on the proximal gear (nut) about the worm
/// gear's axis through loading, driving and breakaway, with the joint angles.
pub(super) fn geared_finger(load: Loader<'_>, quality: Quality) -> Result<PaperFigure> {
    let run = simulate(load, quality)?;
    let p = run.phases();
    let parts = &run.parts;
    let s = &run.samples;
    let series =
        |f: &dyn Fn(&Sample) -> f64| -> Vec<(f64, f64)> { s.iter().map(|x| (x.t, f(x))).collect() };
    let curve = |name: &str, points| Curve {
        name: name.to_string(),
        points,
    };
    // N·mm for the torques.
    let (tau_lo, tau_hi) = s.iter().fold((0.0f64, 0.0f64), |(lo, hi), x| {
        let m = 1e3 * x.clutch_torque.min(x.mesh_torque);
        let n = 1e3 * x.clutch_torque.max(x.mesh_torque);
        (lo.min(m), hi.max(n))
    });
    let markers = |range| {
        vec![
            marker("reversal (driving)", p.reversal, range),
            marker("obstacle (breakaway)", p.hit, range),
            marker("clutch slips", p.slip, range),
        ]
    };

    // Loading: the last 5 ms before the reversal.
    let loaded: Vec<&Sample> = run.window(p.reversal - 5e-3, p.reversal).collect();
    let mean = |f: &dyn Fn(&Sample) -> f64| {
        loaded.iter().map(|x| f(x)).sum::<f64>() / loaded.len().max(1) as f64
    };
    let loaded_torque = mean(&|x| x.clutch_torque.abs());
    let loaded_force = mean(&|x| x.clutch_force);
    let loaded_bound = parts.mu * mean(&|x| x.clutch_moment);
    // Driving: from the first step after the reversal to the step before the obstacle pushes.
    let driven = p.hit - 0.5 * run.dt;
    let driving_torque = max_of(run.window(p.reversal + 0.5 * run.dt, driven), |x| {
        x.clutch_torque.abs()
    });
    let settle = p.reversal + 0.2 * (p.hit - p.reversal);
    let driving_slip = max_of(run.window(settle, driven), |x| x.clutch_slip);
    let ends = |t0: f64, t1: f64| {
        let w: Vec<&Sample> = run.window(t0, t1).collect();
        match (w.first(), w.last()) {
            (Some(a), Some(b)) => Some((**a, **b)),
            _ => None,
        }
    };
    let driving_ratio = ends(settle, driven).map_or(f64::NAN, |(a, b)| {
        (b.proximal - a.proximal) / (b.nut - a.nut)
    });
    // Breakaway: the peak clutch torque, and the torque against μ Σ r f_n while it slides.
    let breakaway_torque = max_of(run.window(p.hit, p.release), |x| x.clutch_torque.abs());
    let sliding: Vec<f64> = run
        .window(p.slip, p.release)
        .filter(|x| x.clutch_slip > run.slip_bound() && x.clutch_moment > 0.0)
        .map(|x| x.clutch_torque.abs() / (parts.mu * x.clutch_moment))
        .collect();
    let coulomb = median(sliding);
    let distal_ratio = ends(p.slip, f64::INFINITY).map_or(f64::NAN, |(a, b)| {
        (b.distal - a.distal) / (b.shaft - a.shaft)
    });
    let proximal_after =
        ends(p.slip, f64::INFINITY).map_or(f64::NAN, |(a, b)| b.proximal - a.proximal);
    let mean_contacts = s.iter().map(|x| x.contacts as f64).sum::<f64>() / s.len().max(1) as f64;
    let r_eff = mean(&|x| x.clutch_moment) / loaded_force;
    let (motor_load, motor_drive) = parts.limits;

    let mut notes = simplifications(&run);
    notes.push(format!(
        "Loaded clutch: F = {loaded_force:.1} N, r_eff = Σ r f_n / Σ f_n = {:.2} mm (2/3 of the washers' 4 mm radius for a uniform pressure: 2.67 mm).",
        r_eff * 1e3
    ));
    Ok(PaperFigure {
        name: "geared-finger",
        title: format!(
            "ICF ext. XII-C (Fig. 24): geared finger, clutch held by stiction, δt = {} ms",
            run.dt * 1e3
        ),
        x_label: "time t (s)",
        panels: vec![
            LinePanel {
                y_label: "torque on the proximal gear (N·mm)",
                curves: [
                    vec![
                        curve("clutch (washers)", series(&|x| 1e3 * x.clutch_torque)),
                        curve("teeth", series(&|x| 1e3 * x.mesh_torque)),
                    ],
                    markers((tau_lo, tau_hi)),
                ]
                .concat(),
            },
            LinePanel {
                y_label: "joint angle (rad)",
                curves: vec![
                    curve("motor / 10", series(&|x| x.motor / 10.0)),
                    curve("proximal gear", series(&|x| x.nut)),
                    curve("proximal link", series(&|x| x.proximal)),
                    curve("distal link", series(&|x| x.distal)),
                ],
            },
            LinePanel {
                y_label: "clutch axial force (N)",
                curves: vec![curve("Σ f_n", series(&|x| x.clutch_force))],
            },
        ],
        equal_aspect: false,
        numbers: vec![
            number(
                "loading.torque".into(),
                "loaded clutch torque |τ| (last 5 ms before the reversal)".into(),
                &format!(
                    "the motor stalls at its effort limit {} N·cm",
                    motor_load * 100.0
                ),
                loaded_torque,
                "N·m",
            ),
            number(
                "loading.coulomb".into(),
                "loaded clutch torque / μ Σ r_i f_n,i (1: the clutch slid until the stall)".into(),
                "the washers compressed until the effort limit",
                loaded_torque / loaded_bound,
                "1",
            ),
            number(
                "loading.force".into(),
                "loaded axial force of the clutch Σ f_n".into(),
                "not reported",
                loaded_force,
                "N",
            ),
            number(
                "loading.r_eff".into(),
                "effective radius of the loaded clutch Σ r_i f_n,i / Σ f_n,i".into(),
                "not reported (washers from CAD)",
                r_eff,
                "m",
            ),
            number(
                "driving.max_torque".into(),
                "largest |clutch torque| while driving / loaded torque".into(),
                &format!(
                    "below 1: the torques from the motor (limit {} N·cm) do not exceed the loaded torque",
                    motor_drive * 100.0
                ),
                driving_torque / loaded_torque,
                "1",
            ),
            number(
                "driving.slip".into(),
                "largest clutch slip speed while driving (after 20 % of it)".into(),
                "the clutch is engaged (stiction)",
                driving_slip,
                "m/s",
            ),
            number(
                "driving.ratio".into(),
                "proximal link turn / proximal gear turn while driving".into(),
                &format!(
                    "the gear ratio −{}/{}",
                    parts.nut_teeth, parts.wheel_teeth
                ),
                driving_ratio,
                "1",
            ),
            number(
                "driving.tooth_travel".into(),
                "the nut's tooth travel per step / tooth thickness".into(),
                "0.25 (δt chosen for it)",
                tooth_travel(&run),
                "1",
            ),
            number(
                "breakaway.hit".into(),
                "time the proximal link meets the obstacle".into(),
                "not reported",
                p.hit,
                "s",
            ),
            number(
                "breakaway.torque".into(),
                "peak |clutch torque| after the obstacle / loaded torque".into(),
                "builds until it exceeds the loaded torque, then slips",
                breakaway_torque / loaded_torque,
                "1",
            ),
            number(
                "breakaway.coulomb".into(),
                "|clutch torque| / μ Σ r_i f_n,i while it slides (median)".into(),
                "μ × normal force × effective radius",
                coulomb,
                "1",
            ),
            number(
                "breakaway.release".into(),
                "time the clutch loses contact".into(),
                "the gear winds up its threads until out of contact",
                p.release,
                "s",
            ),
            number(
                "breakaway.distal_ratio".into(),
                "distal turn / worm gear turn after the clutch slips".into(),
                "the motor's torque goes to the distal link only (pulley coupler 1/3)",
                distal_ratio,
                "1",
            ),
            number(
                "breakaway.proximal".into(),
                "proximal link turn after the clutch slips".into(),
                "held at the obstacle",
                proximal_after,
                "rad",
            ),
            number(
                "contacts".into(),
                "contacts per step (mean)".into(),
                "about 1100",
                mean_contacts,
                "1",
            ),
        ],
        notes,
    })
}

/// The median of `x` (NaN for none).
fn median(mut x: Vec<f64>) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    x.sort_by(f64::total_cmp);
    x[x.len() / 2]
}

/// Amplitude spectrum (same unit as `x`) of `x` sampled every `dt` (s), mean removed, Hann
/// window (amplitudes corrected for its mean 1/2): `(frequency (Hz), amplitude)` up to
/// `f_max`.
fn spectrum(x: &[f64], dt: f64, f_max: f64) -> Vec<(f64, f64)> {
    let n = x.len();
    if n < 2 {
        return Vec::new();
    }
    let mean = x.iter().sum::<f64>() / n as f64;
    let mut buffer: Vec<Complex<f64>> = x
        .iter()
        .enumerate()
        .map(|(k, v)| {
            let w = 0.5 - 0.5 * (2.0 * PI * k as f64 / (n - 1) as f64).cos();
            Complex::new((v - mean) * w, 0.0)
        })
        .collect();
    FftPlanner::new().plan_fft_forward(n).process(&mut buffer);
    let df = 1.0 / (n as f64 * dt);
    buffer
        .iter()
        .take(n / 2 + 1)
        .enumerate()
        .map(|(k, c)| (k as f64 * df, 4.0 * c.norm() / n as f64))
        .take_while(|&(f, _)| f <= f_max)
        .collect()
}

/// The frequency (Hz) of the largest amplitude above `f_min`.
fn peak(spectrum: &[(f64, f64)], f_min: f64) -> f64 {
    spectrum
        .iter()
        .filter(|(f, _)| *f >= f_min)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(f64::NAN, |p| p.0)
}

/// ICF ext. Sec. XII-C: the FFT of the contact torques on the proximal gear while driving,
/// with the tooth-passing frequency `N_nut |ω_shaft|/2π` and its harmonics.
pub(super) fn geared_finger_spectrum(load: Loader<'_>, quality: Quality) -> Result<PaperFigure> {
    let run = simulate(load, quality)?;
    let p = run.phases();
    let settle = p.reversal + 0.2 * (p.hit - p.reversal);
    let window: Vec<&Sample> = run.window(settle, p.hit - 0.5 * run.dt).collect();
    let f_tooth = run.parts.nut_teeth as f64 * shaft_speed(&run) / (2.0 * PI);
    let f_max = 6.0 * f_tooth;
    let mesh = spectrum(
        &window
            .iter()
            .map(|x| 1e3 * x.mesh_torque)
            .collect::<Vec<_>>(),
        run.dt,
        f_max,
    );
    let clutch = spectrum(
        &window
            .iter()
            .map(|x| 1e3 * x.clutch_torque)
            .collect::<Vec<_>>(),
        run.dt,
        f_max,
    );
    let top = mesh.iter().chain(&clutch).map(|p| p.1).fold(0.0, f64::max);
    let harmonics = (1..=5)
        .map(|k| {
            marker(
                &format!("{k} × tooth passing"),
                k as f64 * f_tooth,
                (0.0, top),
            )
        })
        .collect::<Vec<_>>();
    // Peaks above half the tooth-passing frequency: below it lie the window's drift and the
    // nut's once-per-turn eccentricity of the box teeth.
    let mesh_peak = peak(&mesh, 0.5 * f_tooth);
    let clutch_peak = peak(&clutch, 0.5 * f_tooth);
    let curve = |name: &str, points| Curve {
        name: name.to_string(),
        points,
    };
    Ok(PaperFigure {
        name: "geared-finger-spectrum",
        title: format!(
            "ICF ext. XII-C: spectrum of the contact torques while driving ({:.2} s), δt = {} ms",
            window.len() as f64 * run.dt,
            run.dt * 1e3
        ),
        x_label: "frequency (Hz)",
        panels: vec![LinePanel {
            y_label: "amplitude (N·mm)",
            curves: [
                vec![
                    curve("teeth on the proximal gear", mesh),
                    curve("clutch on the proximal gear", clutch),
                ],
                harmonics,
            ]
            .concat(),
        }],
        equal_aspect: false,
        numbers: vec![
            number(
                "tooth_passing".into(),
                format!(
                    "tooth-passing frequency {} |ω_worm gear|/2π while driving",
                    run.parts.nut_teeth
                ),
                "harmonics consistent with gear ratios, tooth widths and speeds",
                f_tooth,
                "Hz",
            ),
            number(
                "teeth.peak".into(),
                "largest peak of the teeth's torque / tooth-passing frequency".into(),
                "a harmonic of the tooth-passing frequency",
                mesh_peak / f_tooth,
                "1",
            ),
            number(
                "clutch.peak".into(),
                "largest peak of the clutch's torque / tooth-passing frequency".into(),
                "a harmonic of the tooth-passing frequency",
                clutch_peak / f_tooth,
                "1",
            ),
        ],
        notes: simplifications(&run),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spectrum_finds_a_sine_and_its_amplitude() {
        // 2.5 sin(2π 40 t) + 1 over 1 s at 1 kHz: one peak at 40 Hz of about 2.5.
        let dt = 1e-3;
        let x: Vec<f64> = (0..1000)
            .map(|k| 1.0 + 2.5 * (2.0 * PI * 40.0 * k as f64 * dt).sin())
            .collect();
        let s = spectrum(&x, dt, 200.0);
        assert_eq!(peak(&s, 10.0), 40.0);
        let a = s.iter().find(|p| p.0 == 40.0).map(|p| p.1).unwrap_or(0.0);
        assert!((a - 2.5).abs() < 0.05, "amplitude {a}");
    }
}
