//! Elandt Sec. 5.3.2, Fig. 5.4: a cam cleat (`problems/cam-cleat.toml`). A rubber-coated rod
//! (compliant pressure-field capsule) runs between two rigid eccentric cams on spring-loaded
//! pivots. Pulled one way, the friction turns the cams open and the rod slips through; pulled
//! the other way, it turns them into the rod until the wedge holds it.
//!
//! The mechanics (docs/figures.md, "The cam cleat"): the normal force `N` of a cam on the rod
//! acts through the disc's centre, a lever `a = e |cos φ|` from the pivot (`e` the disc's
//! offset, `φ` its direction); the friction `F` along the rod acts a lever `L` (the pivot's
//! distance from the contact) away. The cam is at rest when `F L + τ_s = N a` (`τ_s` the
//! spring's closing torque), so it asks of friction `F/N = a/L − τ_s/(N L) ≈ tan β`, `β` the
//! wedge angle between the pivot–contact line and the normal. While `tan β < μ` friction can
//! always supply it: the cam turns with the rod, bites deeper until `2 N tan β` equals the
//! pull, and the holding force grows with the pull (self-locking). With `μ < tan β` the normal
//! force turns the cam open faster than friction closes it, and only the spring holds.

use super::{number, Loader, PaperFigure, Quality};
use crate::contact::Approximation;
use crate::error::{Error, Result};
use crate::geometry::Shape;
use crate::multibody::{BodyId, JointKind};
use crate::problem::Problem;
use crate::report::plot::{Curve, LinePanel};
use crate::step::StepReport;

/// The end of the pull in the free direction and the window over which the rod's free speed
/// is averaged (s): after the drag's 20 ms time constant.
const FREE: (f64, f64) = (0.1, 0.3);
/// The window over which the rod is locked (s): the full pull is on from 0.4 s.
const LOCKED: (f64, f64) = (0.5, 1.0);

/// One cam: its body, the pivot (world), the disc's offset from it in the body frame, the
/// sense in which its joint turns about world z.
struct Cam {
    body: usize,
    pivot: nalgebra::Vector3<f64>,
    offset: nalgebra::Vector3<f64>,
    sense: f64,
}

impl Cam {
    fn of(problem: &Problem, name: &str) -> Result<Cam> {
        let model = &problem.simulator.model;
        let body = model
            .body_index(name)
            .ok_or_else(|| Error::invalid("cam cleat body", name, "a body of the file"))?;
        let joint = &model.joints[body];
        let JointKind::Revolute { axis } = joint.kind else {
            return Err(Error::invalid(name, "joint", "a revolute joint"));
        };
        let offset = problem
            .simulator
            .geometries()
            .iter()
            .find(|g| g.body == BodyId::Body(body) && matches!(g.shape, Shape::Cylinder { .. }))
            .map(|g| g.X_BG.p)
            .ok_or_else(|| Error::invalid(name, "geometry", "a cylinder (the cam's disc)"))?;
        Ok(Cam {
            body,
            pivot: joint.X_PJ.p,
            offset,
            sense: (joint.X_PJ.R * axis).z.signum(),
        })
    }

    /// The normal force's lever `a = |x_centre − x_pivot|` (m) at joint angle `q` (rad).
    fn normal_lever(&self, q: f64) -> f64 {
        let turn = self.sense * q;
        (self.offset.x * turn.cos() - self.offset.y * turn.sin()).abs()
    }
}

/// What one step did, at the time at its end.
#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    t: f64,
    /// The pull on the rod (N, +x the locking direction), applied over the step.
    pull: f64,
    /// The rod's position and velocity along its axis (m, m/s).
    x: f64,
    v: f64,
    /// The cams' joint angles (rad, > 0 closing) and their springs' closing torques (N·m).
    q: [f64; 2],
    spring: [f64; 2],
    /// Per cam: normal force Σ f_n (N), friction on the rod along its axis (N, +x), the
    /// friction's lever `L` about the pivot at the patch's centroid (m), the patch's area (m²).
    normal: [f64; 2],
    friction: [f64; 2],
    lever: [f64; 2],
    area: [f64; 2],
}

/// Per cam: Σ f_n (N), the friction on the rod along x (N), the friction's lever `L` (the
/// pivot's distance from the patch's centroid, m) and the patch's area (m²).
fn per_cam(cams: &[Cam; 2], rod: usize, report: &StepReport) -> [[f64; 4]; 2] {
    let rod = BodyId::Body(rod);
    let mut out = [[0.0; 4]; 2];
    for (k, cam) in cams.iter().enumerate() {
        let cam_id = BodyId::Body(cam.body);
        let mut normal = 0.0;
        let mut friction = 0.0;
        for c in &report.contacts {
            let on_rod = if c.body_b == rod && c.body_a == cam_id {
                c.force
            } else if c.body_a == rod && c.body_b == cam_id {
                -c.force
            } else {
                continue;
            };
            normal += c.normal_force;
            friction += (on_rod - c.normal * c.normal.dot(&on_rod)).x;
        }
        let patch = report.patches.iter().find(|p| {
            (p.body_a, p.body_b) == (rod, cam_id) || (p.body_a, p.body_b) == (cam_id, rod)
        });
        let (lever, area) = patch.map_or((f64::NAN, 0.0), |p| {
            ((p.centroid.y - cam.pivot.y).abs(), p.area)
        });
        out[k] = [normal, friction, lever, area];
    }
    out
}

/// Elandt Sec. 5.3.2, Fig. 5.4: the cam cleat lets the rod through one way and locks it the
/// other. Full: δt = 1 ms; quick: 2 ms.
pub(super) fn cam_cleat(load: Loader<'_>, quality: Quality) -> Result<PaperFigure> {
    let dt = match quality {
        Quality::Quick => 2e-3,
        Quality::Full => 1e-3,
    };
    let mut problem = load("cam-cleat")?;
    problem.simulator.settings.approximation = Approximation::Lagged;
    problem.simulator.settings.dt = dt;
    let model = &problem.simulator.model;
    let rod = model
        .body_index("rod")
        .ok_or_else(|| Error::invalid("cam cleat body", "rod", "a body of the file"))?;
    let cams = [
        Cam::of(&problem, "upper-cam")?,
        Cam::of(&problem, "lower-cam")?,
    ];
    let pull = problem
        .controller
        .actuators
        .iter()
        .find(|a| a.name == "pull")
        .map(|a| a.actuator)
        .ok_or_else(|| Error::invalid("cam cleat actuator", "pull", "an actuator of the file"))?;
    let springs = cams.each_ref().map(|c| {
        problem
            .controller
            .actuators
            .iter()
            .find(|a| a.v_index == model.joints[c.body].v_start)
            .map(|a| a.actuator)
    });
    let [Some(upper_spring), Some(lower_spring)] = springs else {
        return Err(Error::invalid(
            "cam cleat actuators",
            "springs",
            "a law on each cam's joint",
        ));
    };
    let (rod_q, rod_v) = (model.joints[rod].q_start, model.joints[rod].v_start);
    let cam_q = cams.each_ref().map(|c| model.joints[c.body].q_start);
    let contact = problem.simulator.settings.contact;
    let nu = model.nu();
    let rec = problem.run()?;
    let series: Vec<Sample> = rec
        .reports
        .iter()
        .zip(rec.states.windows(2))
        .map(|(report, s)| {
            let per_cam = per_cam(&cams, rod, report);
            let end = &s[1];
            let u = problem.controller.effort(&s[0], nu);
            Sample {
                t: end.t,
                pull: u[pull],
                spring: [u[upper_spring], u[lower_spring]],
                x: end.q[rod_q],
                v: end.v[rod_v],
                q: cam_q.map(|i| end.q[i]),
                normal: per_cam.map(|c| c[0]),
                friction: per_cam.map(|c| c[1]),
                lever: per_cam.map(|c| c[2]),
                area: per_cam.map(|c| c[3]),
            }
        })
        .collect();
    let within = |w: (f64, f64)| series.iter().filter(move |s| s.t > w.0 && s.t <= w.1);
    let mean = |w: (f64, f64), f: &dyn Fn(&Sample) -> f64| {
        let (sum, n) = within(w).fold((0.0, 0usize), |(a, n), s| (a + f(s), n + 1));
        if n == 0 {
            f64::NAN
        } else {
            sum / n as f64
        }
    };
    let at = |t: f64| {
        series
            .iter()
            .min_by(|a, b| (a.t - t).abs().total_cmp(&(b.t - t).abs()))
            .copied()
            .unwrap_or_default()
    };
    let free_speed = -mean(FREE, &|s| s.v);
    let free_pull = -mean(FREE, &|s| s.pull);
    let free_friction = mean(FREE, &|s| s.friction[0] + s.friction[1]);
    // Sliding the free way, friction μN turns each cam open with the normal force, against
    // its spring: N (a + μ L) = τ_s.
    let free_closed = mean(FREE, &|s| {
        (0..2)
            .map(|k| {
                let a = cams[k].normal_lever(s.q[k]);
                contact.mu * s.spring[k] / (a + contact.mu * s.lever[k])
            })
            .sum::<f64>()
    });
    let turn = series
        .iter()
        .min_by(|a, b| a.x.total_cmp(&b.x))
        .copied()
        .unwrap_or_default();
    let (start, end) = (at(LOCKED.0), at(LOCKED.1));
    let locked_pull = mean(LOCKED, &|s| s.pull);
    let locked_speed = within(LOCKED).map(|s| s.v.abs()).fold(0.0, f64::max);
    let friction_over_pull = mean(LOCKED, &|s| -(s.friction[0] + s.friction[1]) / s.pull);
    let normal = mean(LOCKED, &|s| 0.5 * (s.normal[0] + s.normal[1]));
    let ratio = mean(LOCKED, &|s| {
        -(s.friction[0] + s.friction[1]) / (s.normal[0] + s.normal[1])
    });
    let tan_beta = |s: &Sample| {
        0.5 * (0..2)
            .map(|k| cams[k].normal_lever(s.q[k]) / s.lever[k])
            .sum::<f64>()
    };
    let locked_tan_beta = mean(LOCKED, &tan_beta);
    let initial_tan_beta = tan_beta(&at(FREE.1));
    let q_mean = |s: &Sample| 0.5 * (s.q[0] + s.q[1]);
    let column = |f: &dyn Fn(&Sample) -> f64| -> Vec<(f64, f64)> {
        series.iter().map(|s| (s.t, f(s))).collect()
    };
    let curve = |name: &str, points| Curve {
        name: name.to_string(),
        points,
    };
    let closed_normal = locked_pull / (2.0 * locked_tan_beta);
    Ok(PaperFigure {
        name: "elandt-cam-cleat",
        title: "Elandt Fig. 5.4: a cam cleat lets a rubber-coated rod through one way and locks it the other".into(),
        x_label: "t (s)",
        panels: vec![
            LinePanel {
                y_label: "pull on the rod (N, + locking)",
                curves: vec![curve("pull", column(&|s| s.pull))],
            },
            LinePanel {
                y_label: "rod position (mm)",
                curves: vec![curve("x", column(&|s| s.x * 1e3))],
            },
            LinePanel {
                y_label: "rod velocity (mm/s)",
                curves: vec![curve("v", column(&|s| s.v * 1e3))],
            },
            LinePanel {
                y_label: "cam angles (deg, + closing)",
                curves: vec![
                    curve("upper cam", column(&|s| s.q[0].to_degrees())),
                    curve("lower cam", column(&|s| s.q[1].to_degrees())),
                ],
            },
            LinePanel {
                y_label: "forces on the rod (N; the cams' curves coincide)",
                curves: vec![
                    curve("normal, upper cam", column(&|s| s.normal[0])),
                    curve("normal, lower cam", column(&|s| s.normal[1])),
                    curve(
                        "friction of both cams along +x",
                        column(&|s| s.friction[0] + s.friction[1]),
                    ),
                    curve("− pull", column(&|s| -s.pull)),
                ],
            },
            LinePanel {
                y_label: "contact surface area, per cam (mm²)",
                curves: vec![
                    curve("upper", column(&|s| s.area[0] * 1e6)),
                    curve("lower", column(&|s| s.area[1] * 1e6)),
                ],
            },
        ],
        equal_aspect: false,
        numbers: vec![
            number(
                "free.speed".into(),
                format!(
                    "mean rod speed in the free direction under a {free_pull:.2} N pull, t in [{}, {}] s",
                    FREE.0, FREE.1
                ),
                "the rod moves freely forward (> 0)",
                free_speed,
                "m/s",
            ),
            number(
                "free.friction".into(),
                format!("mean friction of both cams along the rod meanwhile (the cams pushed open; closed form Σ μ τ_s/(a + μ L) = {free_closed:.4} N)"),
                "the rubber slips against the cams",
                free_friction,
                "N",
            ),
            number(
                "free.friction_over_closed_form".into(),
                "that friction over its closed form".into(),
                "1",
                free_friction / free_closed,
                "1",
            ),
            number(
                "reverse.travel".into(),
                format!(
                    "rod travel in the locking direction from its turning point ({:.2} s) to {} s",
                    turn.t, LOCKED.0
                ),
                "the cable moves upward; the cams move with the rubber (small)",
                start.x - turn.x,
                "m",
            ),
            number(
                "locked.pull_over_free".into(),
                "pull held in the locking direction over the pull that moved the rod freely".into(),
                "the upward force remains constant",
                locked_pull / free_pull,
                "1",
            ),
            number(
                "locked.displacement".into(),
                format!("|rod displacement| over the locked window [{}, {}] s", LOCKED.0, LOCKED.1),
                "the cable does not move",
                (end.x - start.x).abs(),
                "m",
            ),
            number(
                "locked.speed".into(),
                format!(
                    "largest |rod speed| over the locked window (regularized friction creeps: v_s = {:e} m/s)",
                    contact.stiction_tolerance
                ),
                "0 (creep ∝ v_s)",
                locked_speed,
                "m/s",
            ),
            number(
                "locked.creep_over_stiction_tolerance".into(),
                "largest |rod speed| while locked over v_s".into(),
                "O(10) (the cams' rolling into the rubber, resisted by the patches' micro-slip)",
                locked_speed / contact.stiction_tolerance,
                "1",
            ),
            number(
                "locked.friction_over_pull".into(),
                "both cams' friction along the rod over the pull, mean while locked".into(),
                "1 (friction holds the pull)",
                friction_over_pull,
                "1",
            ),
            number(
                "locked.normal".into(),
                format!("normal force per cam while locked (N; closed form pull/(2 tan β) = {closed_normal:.2} N)"),
                "grows with the pull: N = P/(2 tan β)",
                normal,
                "N",
            ),
            number(
                "locked.tan_beta".into(),
                "tan β = a/L while locked: the normal's lever a (pivot to the disc's centre along the rod) over the friction's L (pivot to the patch's centroid across it)".into(),
                "below μ",
                locked_tan_beta,
                "1",
            ),
            number(
                "locked.friction_over_normal".into(),
                "friction over normal force while locked".into(),
                "tan β, less the spring's τ_s/(N L)",
                ratio,
                "1",
            ),
            number(
                "locked.utilization".into(),
                format!("friction over μ × normal force while locked (μ = {})", contact.mu),
                "tan β/μ < 1: self-locking",
                ratio / contact.mu,
                "1",
            ),
            number(
                "wedge_angle".into(),
                format!(
                    "wedge angle β at the end of the free pull (deg); friction angle atan μ = {:.1}°",
                    contact.mu.atan().to_degrees()
                ),
                "below the friction angle",
                initial_tan_beta.atan().to_degrees(),
                "deg",
            ),
            number(
                "locked.cam_turn".into(),
                format!("cams' turn from the end of the free pull ({:.2}°) to the locked window's end", q_mean(&at(FREE.1)).to_degrees()),
                "the cams rotate with the rubber, then stop",
                (q_mean(&end) - q_mean(&at(FREE.1))).to_degrees(),
                "deg",
            ),
        ],
        notes: vec![
            "Elandt's cams, rod and forces are not given in numbers; the problem file states ours: a rod of radius 5 mm with a rubber coat (hydroelastic modulus 3 MPa, μ = 0.7 on aluminium), two rigid eccentric discs (R = 10 mm, offset 6 mm) on torsion springs (PD laws with kd = 0), 1 N one way for 0.3 s, then 10 N the other way, Lagged.".into(),
            "The rod runs on a prismatic joint with 10 N·s/m of drag (the fairlead and the load); gravity lies along the cams' axes and does no work.".into(),
        ],
    })
}
