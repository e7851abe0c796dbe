//! Xie & Chakraborty's Sec. VI-D (the seed `004_…`, "XC"), Figs. 9-10: a steel cylinder
//! manipulated past two box obstacles by a schedule of applied wrenches, with the
//! geometrically implicit stepper ([`crate::ncp`]).
//!
//! The paper keeps only its phases' times in the seed copy: the cylinder falls down
//! (0.01-0.65 s), rolls forward on its line contact until an obstacle blocks it (0.66-1.5 s),
//! pivots about the contact point past the obstacle (1.51-2.15 s), rolls forward again
//! (2.16-3.25 s), is lifted up (3.26-4.7 s) and rests at the goal (4.71-5 s).
//! `problems/xie-cylinder-manipulation.toml` states our scene, goal and wrenches. The figures
//! show what the paper's snapshots and Fig. 10(b) show: the centre's path seen from above
//! among the obstacles, and its height, the axis's tilt, the speeds and the contact forces
//! against time with the phases marked; the numbers check each action.

#![allow(non_snake_case)]

use nalgebra::{Vector2, Vector3};

use super::complementarity::{curve, pose, simulate};
use super::{number, Loader, Number, PaperFigure, Quality};
use crate::error::{Error, Result};
use crate::geometry::Shape;
use crate::multibody::model::BodyId;
use crate::ncp::NcpRecording;
use crate::problem::Problem;
use crate::report::plot::{Curve, LinePanel};

/// The shipped problem.
const CASE: &str = "xie-cylinder-manipulation";

/// The goal of the problem file: the cylinder standing with its centre above (x, y) (m).
const GOAL: [f64; 2] = [0.40, 0.09];

/// The ends of the paper's phases (s): fall, roll, pivot, roll on, lift; rest to the end.
const PHASE_ENDS: [f64; 5] = [0.65, 1.5, 2.15, 3.25, 4.7];

/// Moving while the centre is faster than this (m/s).
const MOVING: f64 = 1e-2;

/// A geometry pushes the cylinder while its normal force exceeds this (N): a separated pair's
/// impulse is zero only to the solver's tolerance.
const PUSHING: f64 = 1e-3;

/// The cylinder's state after one step, and the contacts' normal forces.
struct Sample {
    /// End of the step (s).
    t: f64,
    /// Centre of mass (m).
    centre: Vector3<f64>,
    /// Unit axis (world).
    axis: Vector3<f64>,
    /// Velocity of the centre (m/s).
    velocity: Vector3<f64>,
    /// Angular velocity (rad/s).
    spin: Vector3<f64>,
    /// Normal force of each world geometry on the cylinder (N; the step's impulse over δt),
    /// indexed like the problem's geometries.
    forces: Vec<f64>,
    /// Smallest gap of any pair at the end of the step (m; negative: penetration).
    gap: f64,
    /// Newton iterations of the step.
    iterations: usize,
}

/// A world box's footprint.
struct Obstacle {
    index: usize,
    name: String,
    /// Corners of its mid-section normal to its z axis, in order (m; its footprint for an
    /// upright box).
    corners: [Vector3<f64>; 4],
}

/// The run: the cylinder's size, the obstacles and one sample per step (the initial state
/// first, with no forces).
struct Manipulation {
    radius: f64,
    half_length: f64,
    dt: f64,
    obstacles: Vec<Obstacle>,
    ground: Option<usize>,
    samples: Vec<Sample>,
}

fn simulate_manipulation(load: Loader<'_>) -> Result<Manipulation> {
    let (problem, rec) = simulate(load, CASE, None)?;
    manipulation(&problem, &rec)
}

fn manipulation(problem: &Problem, rec: &NcpRecording) -> Result<Manipulation> {
    let geometries = problem.simulator.geometries();
    let (radius, half_length, R_BG) = geometries
        .iter()
        .find_map(|g| match g.shape {
            Shape::Cylinder {
                radius,
                half_length,
            } if g.body == BodyId::Body(0) => Some((radius, half_length, g.X_BG.R)),
            _ => None,
        })
        .ok_or_else(|| Error::invalid(CASE, "its first body", "carries no cylinder"))?;
    let obstacles = geometries
        .iter()
        .enumerate()
        .filter_map(|(index, g)| match g.shape {
            Shape::Box { half_extents: h } if g.body == BodyId::World => Some(Obstacle {
                index,
                name: g.name.clone(),
                corners: [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)].map(|(sx, sy)| {
                    g.X_BG
                        .transform_point(&Vector3::new(sx * h.x, sy * h.y, 0.0))
                }),
            }),
            _ => None,
        })
        .collect();
    let ground = geometries
        .iter()
        .position(|g| g.body == BodyId::World && matches!(g.shape, Shape::HalfSpace));
    let dt = problem.simulator.settings.dt;
    let sample = |k: usize| {
        let s = &rec.states[k];
        let (centre, q, spin, velocity) = pose(s, 0);
        let axis = q.to_rotation_matrix().matrix() * R_BG * Vector3::z();
        let mut forces = vec![0.0; geometries.len()];
        let (mut gap, mut iterations) = (f64::INFINITY, 0);
        if let Some(report) = k.checked_sub(1).map(|j| &rec.reports[j]) {
            for c in &report.contacts {
                forces[c.geometries.0] += c.impulse[0] / dt;
                gap = gap.min(c.gap);
            }
            iterations = report.stats.iterations;
        }
        Sample {
            t: s.t,
            centre,
            axis,
            velocity,
            spin,
            forces,
            gap,
            iterations,
        }
    };
    Ok(Manipulation {
        radius,
        half_length,
        dt,
        obstacles,
        ground,
        samples: (0..rec.states.len()).map(sample).collect(),
    })
}

impl Manipulation {
    /// The sample at the end of the step ending nearest `t` (s).
    fn at(&self, t: f64) -> &Sample {
        let k = ((t / self.dt).round() as usize).min(self.samples.len() - 1);
        &self.samples[k]
    }

    /// Samples with `from < t ≤ to`.
    fn between(&self, from: f64, to: f64) -> impl Iterator<Item = &Sample> {
        let eps = 1e-9;
        self.samples
            .iter()
            .filter(move |s| s.t > from + eps && s.t <= to + eps)
    }

    /// The axis's tilt from the vertical (°).
    fn tilt(s: &Sample) -> f64 {
        s.axis.z.abs().min(1.0).acos().to_degrees()
    }

    /// The height of the cylinder's lowest point above the ground z = 0 (m): its centre's
    /// height less the extent `r √(1 − a_z²) + h |a_z|` of a cylinder with axis a.
    fn lowest_point(&self, s: &Sample) -> f64 {
        let a_z = s.axis.z.abs().min(1.0);
        s.centre.z - self.radius * (1.0 - a_z * a_z).sqrt() - self.half_length * a_z
    }

    /// The obstacle that stopped the cylinder first: (obstacle, first step it pushed).
    fn blocking(&self) -> Option<(&Obstacle, &Sample)> {
        self.samples.iter().find_map(|s| {
            self.obstacles
                .iter()
                .find(|o| s.forces[o.index] > PUSHING)
                .map(|o| (o, s))
        })
    }

    /// How far the final centre lies beyond the far side of the obstacle that blocked the
    /// cylinder, along the direction it rolled into it (m; NaN if none blocked it).
    fn passed(&self) -> f64 {
        let Some((o, hit)) = self.blocking() else {
            return f64::NAN;
        };
        let last = self.samples.last().expect("invariant: the initial state");
        let rolled = self
            .samples
            .iter()
            .rev()
            .find(|s| s.t < hit.t && s.velocity.xy().norm() > MOVING)
            .map(|s| Vector3::new(s.velocity.x, s.velocity.y, 0.0).normalize());
        rolled.map_or(f64::NAN, |d| {
            let far = o.corners.iter().map(|c| d.dot(c)).fold(f64::MIN, f64::max);
            d.dot(&Vector3::new(last.centre.x, last.centre.y, 0.0)) - far
        })
    }

    /// The final centre's distance from [`GOAL`] seen from above (m).
    fn goal_distance(&self) -> f64 {
        let last = self.samples.last().expect("invariant: the initial state");
        (last.centre.xy() - Vector2::from(GOAL)).norm()
    }

    /// The cylinder's outline seen from above: its caps' circles and the two lines joining
    /// them (a rectangle lying, a circle standing), then a break.
    fn outline(&self, s: &Sample) -> Vec<(f64, f64)> {
        let a = s.axis;
        let across = if a.z.abs() < 1.0 - 1e-12 {
            Vector3::z().cross(&a).normalize()
        } else {
            Vector3::x()
        };
        let up = a.cross(&across);
        let cap = |sign: f64| s.centre + a * (sign * self.half_length);
        let mut points = Vec::new();
        for sign in [1.0, -1.0] {
            let c = cap(sign);
            for k in 0..=32 {
                let phi = k as f64 / 32.0 * std::f64::consts::TAU;
                let p = c + (across * phi.cos() + up * phi.sin()) * self.radius;
                points.push((p.x, p.y));
            }
            points.push((c.x, f64::NAN));
        }
        for side in [1.0, -1.0] {
            let (p, q) = (
                cap(1.0) + across * (side * self.radius),
                cap(-1.0) + across * (side * self.radius),
            );
            points.extend([(p.x, p.y), (q.x, q.y), (q.x, f64::NAN)]);
        }
        points
    }
}

/// A circle of radius `r` about `(x, y)` (m), as a curve.
fn circle(name: &str, (x, y): (f64, f64), r: f64) -> Curve {
    curve(
        name,
        (0..=48)
            .map(|k| {
                let phi = k as f64 / 48.0 * std::f64::consts::TAU;
                (x + r * phi.cos(), y + r * phi.sin())
            })
            .collect(),
    )
}

/// Vertical lines at the phases' ends over `lo..hi`, one curve.
fn phase_marks(lo: f64, hi: f64) -> Curve {
    curve(
        "phase ends (paper)",
        PHASE_ENDS
            .iter()
            .flat_map(|&t| [(t, lo), (t, hi), (t, f64::NAN)])
            .collect(),
    )
}

/// XC Sec. VI-D, Figs. 9-10: the cylinder's height, tilt, speeds and contact forces against
/// time with the phases marked, and the numbers that check each action.
pub(super) fn cylinder_manipulation(load: Loader<'_>, _quality: Quality) -> Result<PaperFigure> {
    let m = simulate_manipulation(load)?;
    let r = m.radius;
    let series = |f: &dyn Fn(&Sample) -> f64| -> Vec<(f64, f64)> {
        m.samples.iter().map(|s| (s.t, f(s))).collect()
    };
    let rolling_speed = |s: &Sample| r * s.spin.dot(&s.axis).abs();
    let speed = |s: &Sample| s.velocity.norm();
    let mut force_curves: Vec<Curve> = m
        .ground
        .into_iter()
        .map(|g| (g, "ground".to_string()))
        .chain(m.obstacles.iter().map(|o| (o.index, o.name.clone())))
        .map(|(g, name)| curve(&name, series(&|s| s.forces[g])))
        .collect();
    let peak_force = force_curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    force_curves.push(phase_marks(0.0, peak_force));

    let [fall, roll, pivot, roll_on, lift] = PHASE_ENDS;
    let fallen = m.at(fall);
    // Rolling: moving on the ground alone in the two rolling phases.
    let rolling = m
        .between(fall, roll)
        .chain(m.between(pivot, roll_on))
        .filter(|s| speed(s) > MOVING && m.obstacles.iter().all(|o| s.forces[o.index] <= PUSHING));
    let (slip, rolling_steps) = rolling.fold((0.0_f64, 0), |(worst, n), s| {
        (worst.max((speed(s) - rolling_speed(s)).abs()), n + 1)
    });
    let roll_speed = m.between(fall, roll).map(speed).fold(0.0, f64::max);
    let (blocked_at, blocker) = match m.blocking() {
        Some((o, s)) => (s.t, o.name.clone()),
        None => (f64::NAN, "none".into()),
    };
    let horizontal = |s: &Sample| Vector3::new(s.axis.x, s.axis.y, 0.0).normalize();
    let turn = horizontal(m.at(roll))
        .dot(&horizontal(m.at(pivot)))
        .clamp(-1.0, 1.0)
        .acos()
        .to_degrees();
    let pivot_shift = (m.at(pivot).centre - m.at(roll).centre).norm();
    let roll_on_distance = (m.at(roll_on).centre - m.at(pivot).centre).norm();
    let last = m.samples.last().expect("invariant: the initial state");
    // At rest upright from the first step after which every step is.
    let still = |s: &Sample| Manipulation::tilt(s) < 0.5 && speed(s) < 1e-6 && s.spin.norm() < 1e-5;
    let rest = m
        .samples
        .iter()
        .rposition(|s| !still(s))
        .map_or(0.0, |k| m.samples.get(k + 1).map_or(f64::NAN, |s| s.t));
    let ground_penetration = m
        .samples
        .iter()
        .map(|s| -m.lowest_point(s))
        .fold(0.0, f64::max);
    let contact_penetration = m.samples.iter().map(|s| -s.gap).fold(0.0, f64::max);
    let most_iterations = m.samples.iter().map(|s| s.iterations).max().unwrap_or(0);

    Ok(PaperFigure {
        name: "xie-cylinder-manipulation",
        title: format!(
            "XC Sec. VI-D: a cylinder (r = {r} m, L = {} m) tipped, rolled, pivoted, stood up",
            2.0 * m.half_length
        ),
        x_label: "t (s)",
        panels: vec![
            LinePanel {
                y_label: "centre height (m)",
                curves: vec![
                    curve("ncp", series(&|s| s.centre.z)),
                    phase_marks(0.0, 0.12),
                ],
            },
            LinePanel {
                y_label: "axis tilt from vertical (°)",
                curves: vec![curve("ncp", series(&Manipulation::tilt)), phase_marks(0.0, 90.0)],
            },
            LinePanel {
                y_label: "speed (m/s)",
                curves: vec![
                    curve("centre |v|", series(&speed)),
                    curve("r |ω · axis|", series(&rolling_speed)),
                    phase_marks(0.0, roll_speed),
                ],
            },
            LinePanel {
                y_label: "normal force on the cylinder (N)",
                curves: force_curves,
            },
        ],
        equal_aspect: false,
        numbers: vec![
            number(
                "fall.tilt".into(),
                format!("axis tilt at the end of the fall ({fall} s)"),
                "fallen down on the plane (lying, 90°)",
                Manipulation::tilt(fallen),
                "°",
            ),
            number(
                "fall.height".into(),
                format!("centre height at {fall} s"),
                &format!("r = {r} m (lying on its side)"),
                fallen.centre.z,
                "m",
            ),
            number(
                "roll.speed".into(),
                format!("largest centre speed while rolling ({fall}-{roll} s)"),
                "rolls forward with line contact",
                roll_speed,
                "m/s",
            ),
            number(
                "roll.slip".into(),
                format!(
                    "largest ||v| − r |ω · axis|| over the {rolling_steps} steps rolling on the ground alone ({fall}-{roll}, {pivot}-{roll_on} s)"
                ),
                "rolling without slip",
                slip,
                "m/s",
            ),
            number(
                "blocked.time".into(),
                format!("first step {blocker} pushes the cylinder"),
                &format!("an obstacle blocks the roll before {roll} s"),
                blocked_at,
                "s",
            ),
            number(
                "blocked.speed".into(),
                format!("centre speed at {roll} s"),
                "blocked (inelastic impact)",
                speed(m.at(roll)),
                "m/s",
            ),
            number(
                "pivot.turn".into(),
                format!("turn of the axis about the vertical, {roll}-{pivot} s"),
                "pivots about the contact point and passes the obstacle",
                turn,
                "°",
            ),
            number(
                "pivot.shift".into(),
                format!("displacement of the centre, {roll}-{pivot} s (a spin about the ECP of its line contact)"),
                "rotates about the contact point",
                pivot_shift,
                "m",
            ),
            number(
                "roll_on.distance".into(),
                format!("distance the centre rolls, {pivot}-{roll_on} s"),
                "rolls forward",
                roll_on_distance,
                "m",
            ),
            number(
                "passed".into(),
                "final centre beyond the far side of the obstacle that blocked it, along the first roll".into(),
                "passes the obstacle",
                m.passed(),
                "m",
            ),
            number(
                "rest.time".into(),
                "time from which it stays at rest upright (tilt < 0.5°, |v| < 1e-6 m/s, |ω| < 1e-5 rad/s)".into(),
                &format!("lifted up by {lift} s, at rest at the goal after (wobbling first)"),
                rest,
                "s",
            ),
            number(
                "final.tilt".into(),
                "axis tilt at the end".into(),
                "standing (0°)",
                Manipulation::tilt(last),
                "°",
            ),
            goal_number(&m),
            number(
                "penetration.ground".into(),
                "largest depth of the cylinder's lowest point below the ground (from its pose)".into(),
                "none (non-penetration at the end of every step)",
                ground_penetration,
                "m",
            ),
            number(
                "penetration.contacts".into(),
                "largest negative gap of any pair at the end of a step".into(),
                "none",
                contact_penetration,
                "m",
            ),
            number(
                "solver.max_iterations".into(),
                "most Newton iterations in a step, all its attempts together (an attempt stops at 100: more means the first globalization failed)".into(),
                "PATH solves every step",
                most_iterations as f64,
                "1",
            ),
        ],
        notes: vec![
            "The paper's sizes, μ, obstacles, goal and wrenches are stripped from the seed copy; ours are those of problems/xie-cylinder-manipulation.toml: constant wrenches over each phase, an open-loop schedule tuned to this scene and δt.".into(),
            "The pivot spins the lying cylinder about the vertical through the ECP of its line contact with the plane, turning it off the face of box A that blocks it; it then rolls on sideways, past A, and is stood up about the rim of one end.".into(),
            "The hard steps: the impact on A's face and the rest against it (two parallel line contacts, docs/steppers.md) and the landings on the side and on the cap, 80-320 Newton iterations against at most 19 otherwise (4 typically).".into(),
        ],
    })
}

/// XC Sec. VI-D, Fig. 9 seen from above: the centre's path among the obstacles, the cylinder's
/// outline at the end of each phase, the start and the goal.
pub(super) fn cylinder_manipulation_top(
    load: Loader<'_>,
    _quality: Quality,
) -> Result<PaperFigure> {
    let m = simulate_manipulation(load)?;
    let first = &m.samples[0];
    let last = m.samples.last().expect("invariant: the initial state");
    let mut outlines = m.outline(first);
    for t in PHASE_ENDS {
        outlines.extend(m.outline(m.at(t)));
    }
    outlines.extend(m.outline(last));
    let mut curves = vec![
        curve(
            "centre",
            m.samples.iter().map(|s| (s.centre.x, s.centre.y)).collect(),
        ),
        curve("cylinder at the start and each phase's end", outlines),
    ];
    curves.extend(m.obstacles.iter().map(|o| {
        let mut points: Vec<(f64, f64)> = o.corners.iter().map(|c| (c.x, c.y)).collect();
        points.push(points[0]);
        curve(&o.name, points)
    }));
    curves.push(circle(
        "start circle",
        (first.centre.x, first.centre.y),
        1.5 * m.radius,
    ));
    curves.push(circle("goal circle", (GOAL[0], GOAL[1]), 1.5 * m.radius));
    let passed = m.passed();
    Ok(PaperFigure {
        name: "xie-cylinder-manipulation-top",
        title: format!(
            "XC Sec. VI-D (Fig. 9) from above: the cylinder's centre and outline, δt = {} s",
            m.dt
        ),
        x_label: "x (m)",
        panels: vec![LinePanel {
            y_label: "y (m)",
            curves,
        }],
        equal_aspect: true,
        numbers: vec![
            number(
                "passed".into(),
                "final centre beyond the far side of the obstacle that blocked it, along the first roll".into(),
                "passes the obstacle",
                passed,
                "m",
            ),
            goal_number(&m),
        ],
        notes: vec![
            "Outlines: caps' circles joined by the silhouette lines (a rectangle lying, a circle standing), at t = 0, 0.65, 1.5, 2.15, 3.25, 4.7 and 5 s. Circles of 1.5 r about the start and the goal (the paper's dashed circles).".into(),
        ],
    })
}

/// The number of both figures: the centre's distance from the goal at the end (m).
fn goal_number(m: &Manipulation) -> Number {
    number(
        "final.goal_distance".into(),
        format!(
            "centre from the goal ({}, {}) m at the end",
            GOAL[0], GOAL[1]
        ),
        "at the goal configuration",
        m.goal_distance(),
        "m",
    )
}
