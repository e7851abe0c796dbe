//! The seed papers' figures, recomputed from the shipped problem files (`stiction figures`,
//! docs/figures.md).
//!
//! Each [`FigureSpec`] names a figure of a paper, runs its scenes and returns a
//! [`PaperFigure`]: the curves it plots (panels of `(x, y)` series, in the paper's axes) and
//! the numbers a reader compares with the paper's ([`Number`]: what the paper reports, what we
//! measure). The command draws the curves through [`crate::report::plot::write_line_figure`],
//! writes them as CSV and lists every figure with its numbers in an `index.md`; the tests
//! (`tests/figures.rs`) assert the numbers, never pixels.
//!
//! Files: `point_contact.rs` (ICF Sec. IX time histories: the oscillating conveyor, Fig. 2;
//! the falling sphere, Fig. 5; the sliding rod without and with dissipation, Figs. 8-11;
//! Castro 2020's sliding box), `convergence.rs` (the convergence studies of ICF Figs. 3, 6 and
//! 12 with fitted slopes; the clutter's iterations against δt, Fig. 16, its penetration and
//! cost against stiffness, Figs. 17-18, and its per-step cost
//! and effective stiction tolerance against time, ext. Figs. 15-16),
//! `trajectory_optimization.rs` (ICF ext. Sec. XII-D: iLQR through pressure-field contact, the
//! Panda rolling a ball, top view and cost per iteration), `grasp.rs` (ICF ext. Sec. XII-B: the
//! Franka hand's grasp stress test, time to failure and its errors, Figs. 21-22),
//! `pressure_field.rs` (Elandt Sec. 4.3: two compliant spheres' equal-pressure surface,
//! Fig. 4.7; Sec. 4.4.2: damping trends, Fig. 4.9; Sec. 4.5: rigid indenters in a compliant
//! layer, Figs. 4.10 and 4.13(b); Sec. 5.3.3: sorting by contact area, Fig. 5.5; Sec. 5.3.1: the pencil in a loosening pinch, Fig. 5.3),
//! `layer_fem.rs` (Elandt Sec. 4.5, the FEM side: PFC's force over an axisymmetric FEM's for a
//! sphere and a cylinder in a layer, Fig. 4.11, and the two pressures, Fig. 4.13(b); the FEM is
//! `axisymmetric_fem.rs`),
//! `ef_models.rs` (Elandt Sec. 4.1-4.2, Table 4.1: the eight generalized elastic-foundation
//! models through the three rounds of elimination, Figs. 4.3-4.5),
//! `conservation.rs` (Elandt Sec. 4.4.1: the work of PFC's force around closed paths, the
//! complete surface against the step's positive-stiffness one),
//! `complementarity.rs` (Xie & Chakraborty Sec. VI-A-C: the equivalent contact point of the
//! sliding cube, the rolling cylinder and the toppling cube, Figs. 6-8),
//! `cylinder_manipulation.rs` (Xie & Chakraborty Sec. VI-D: the cylinder tipped, rolled,
//! pivoted past a box and stood up by a schedule of wrenches, Figs. 9-10), `geared_finger.rs`
//! (ICF ext. Sec. XII-C: the BarrettHand-style finger's clutch torques through loading,
//! driving and breakaway, Fig. 24, and their spectrum).
//! `cam_cleat.rs` (Elandt Sec. 5.3.2: the cam cleat that lets a rubber-coated rod through one
//! way and locks it the other, Fig. 5.4), `bolt.rs` (Elandt Sec. 5.3.4: a bolt turned back
//! until its thread falls into the nut's, then screwed in, Fig. 5.6; the scene is built in
//! Rust around meshed threads).
//!
//! Every figure has a quick version ([`Quality::Quick`]: fewer or larger steps, shorter
//! references) that keeps what the figure shows, for CI; [`Quality::Full`] is the paper's
//! set-up. The problems are read through a [`Loader`], so the command can use the problems
//! compiled into it and the tests the files of the checkout.

mod axisymmetric_fem;
mod bolt;
mod cam_cleat;
mod complementarity;
mod conservation;
mod convergence;
mod cylinder_manipulation;
mod ef_models;
mod geared_finger;
mod grasp;
mod layer_fem;
mod point_contact;
mod pressure_field;
mod trajectory_optimization;

use crate::contact::Approximation;
use crate::error::{Error, Result};
use crate::problem::Problem;
use crate::simulate::{run, Recording};

pub use crate::report::plot::{Curve, LinePanel};

/// How much of a figure to compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quality {
    /// Coarse: the same scenes with fewer or larger steps, for CI (all figures in minutes).
    Quick,
    /// The paper's set-up.
    Full,
}

/// Loads a shipped problem by name (`falling-sphere`, …).
pub type Loader<'a> = &'a (dyn Fn(&str) -> Result<Problem> + Sync);

/// One number of a figure: what the paper (or the reference reproduction the issue cites)
/// reports and what we measure.
#[derive(Clone, Debug, PartialEq)]
pub struct Number {
    /// Stable key for tests and CSV (`sap.rebound`, `lagged.slope`, …).
    pub key: String,
    /// What it is, for a reader.
    pub what: String,
    /// What the paper reports (text: a value, a range, or a qualitative statement).
    pub paper: String,
    /// Our measurement, in `unit`; NaN when the event did not happen (a jam that never came).
    pub measured: f64,
    /// Unit of `measured` (`s`, `N`, `m/s`, `1` for a count or slope).
    pub unit: &'static str,
}

/// A recomputed figure: its panels and its numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct PaperFigure {
    /// The figure's name (its files' stem).
    pub name: &'static str,
    /// Title drawn above the panels.
    pub title: String,
    /// Horizontal axis label with its unit.
    pub x_label: &'static str,
    /// The panels, top to bottom.
    pub panels: Vec<LinePanel>,
    /// Whether a metre across is a metre up (a top view); the panels' other axes are
    /// scaled to fit.
    pub equal_aspect: bool,
    /// The numbers to compare with the paper's.
    pub numbers: Vec<Number>,
    /// What differs from the paper's set-up, if anything.
    pub notes: Vec<String>,
}

impl PaperFigure {
    /// The measured value of number `key`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if the figure has no such number.
    pub fn number(&self, key: &str) -> Result<f64> {
        self.numbers
            .iter()
            .find(|n| n.key == key)
            .map(|n| n.measured)
            .ok_or_else(|| Error::invalid("figure number", key, "no such number in this figure"))
    }

    /// The horizontal range of all curves (a unit range about 0 when there are none).
    pub fn x_range(&self) -> std::ops::Range<f64> {
        let xs = self
            .panels
            .iter()
            .flat_map(|p| p.curves.iter().flat_map(|c| c.points.iter().map(|p| p.0)));
        let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
        if lo < hi {
            lo..hi
        } else if lo.is_finite() {
            lo - 0.5..lo + 0.5
        } else {
            0.0..1.0
        }
    }
}

/// A figure the command can make.
pub struct FigureSpec {
    /// Its name (`falling-sphere`, …).
    pub name: &'static str,
    /// Where in the papers (`ICF Sec. IX-B, Fig. 5`).
    pub source: &'static str,
    /// What it shows, one line.
    pub summary: &'static str,
    /// Computes it.
    pub compute: fn(Loader<'_>, Quality) -> Result<PaperFigure>,
}

/// Every figure, in the papers' order.
pub const FIGURES: &[FigureSpec] = &[
    FigureSpec {
        name: "conveyor-oscillating",
        source: "ICF Sec. IX-A, Fig. 2",
        summary: "box on a belt oscillating at 1 Hz: contact velocities and normal force, δt = 0.01 s",
        compute: point_contact::conveyor_oscillating,
    },
    FigureSpec {
        name: "conveyor-convergence",
        source: "ICF Sec. IX-A, Fig. 3",
        summary: "error of the box trajectory against δt, fitted slopes",
        compute: convergence::conveyor,
    },
    FigureSpec {
        name: "falling-sphere",
        source: "ICF Sec. IX-B, Fig. 5",
        summary: "sphere landing with 2 m/s: slides, then rolls; contact velocities and force, δt = 2e-3 s",
        compute: point_contact::falling_sphere,
    },
    FigureSpec {
        name: "sphere-convergence",
        source: "ICF Sec. IX-B, Fig. 6",
        summary: "error of the sphere trajectory against δt, fitted slopes",
        compute: convergence::sphere,
    },
    FigureSpec {
        name: "sliding-rod",
        source: "ICF Sec. IX-C, Figs. 8-9",
        summary: "Painlevé rod without dissipation: normal force and contact velocities up to the jam",
        compute: point_contact::sliding_rod,
    },
    FigureSpec {
        name: "sliding-rod-damped",
        source: "ICF Sec. IX-C, Figs. 10-11",
        summary: "the rod with d = 0.2 s/m (Lagged, Similar) and τ_d = 4e-6 s (SAP): shifted jams",
        compute: point_contact::sliding_rod_damped,
    },
    FigureSpec {
        name: "rod-convergence",
        source: "ICF Sec. IX-C, Fig. 12",
        summary: "error of the rod trajectory against δt, without and with dissipation",
        compute: convergence::rod,
    },
    FigureSpec {
        name: "sliding-box",
        source: "Castro 2020 note (DESIGN.md)",
        summary: "box sliding at 1 m/s: stops at v0/(μg), normal force = weight",
        compute: point_contact::sliding_box,
    },
    FigureSpec {
        name: "clutter-iterations",
        source: "ICF Sec. X-A, Fig. 16",
        summary: "40 bodies dropped into a box: mean Newton iterations and condition estimate against δt",
        compute: convergence::clutter_iterations,
    },
    FigureSpec {
        name: "clutter-conditioning",
        source: "ICF ext. Sec. XII-A, Fig. 15",
        summary: "the clutter at δt = 2 ms: Newton iterations and condition estimate per step against time, transient against settled",
        compute: convergence::clutter_conditioning,
    },
    FigureSpec {
        name: "clutter-stiction-tolerance",
        source: "ICF ext. Sec. XII-A, Fig. 16",
        summary: "the clutter at δt = 2 ms: effective stiction tolerance against time, fixed v_s against SAP's and the regularized Lagged's",
        compute: convergence::clutter_stiction_tolerance,
    },
    FigureSpec {
        name: "clutter-stiffness",
        source: "ICF Sec. X-A, Figs. 17-18",
        summary: "the clutter at k = 1e4 to 1e12 N/m: mean steady penetration, Newton iterations and condition estimate against stiffness",
        compute: convergence::clutter_stiffness,
    },
    FigureSpec {
        name: "grasp-time-to-failure",
        source: "ICF ext. Sec. XII-B, Figs. 20-21",
        summary: "Franka hand holding a bronze rod along a 3 cm circle: time to failure against frequency, Lagged at 0.2 ms, d = 0 and d > 0 (needs scripts/robots/setup.sh)",
        compute: grasp::time_to_failure,
    },
    FigureSpec {
        name: "grasp-errors",
        source: "ICF ext. Sec. XII-B, Fig. 22",
        summary: "the grasp: relative error of the time to failure of Lagged and Similar against δt",
        compute: grasp::errors,
    },
    FigureSpec {
        name: "grasp-refinement",
        source: "ICF ext. Sec. XII-B",
        summary: "the grasp: time to failure at 1.7 Hz at δt = 0.4, 0.2, 0.1, 0.05 ms, validating the reference",
        compute: grasp::refinement,
    },
    FigureSpec {
        name: "geared-finger",
        source: "ICF ext. Sec. XII-C, Figs. 23-24",
        summary: "a finger driven through a friction clutch held by stiction: clutch torque through loading, driving and breakaway, joint angles",
        compute: geared_finger::geared_finger,
    },
    FigureSpec {
        name: "geared-finger-spectrum",
        source: "ICF ext. Sec. XII-C",
        summary: "the geared finger's contact torques while driving: FFT with the tooth-passing frequency and its harmonics",
        compute: geared_finger::geared_finger_spectrum,
    },
    FigureSpec {
        name: "panda-push-ball",
        source: "ICF ext. Sec. XII-D, Fig. 25",
        summary: "iLQR through pressure-field contact: the Panda rolls a ball to a target in 0.5 s, top view (needs scripts/robots/setup.sh)",
        compute: trajectory_optimization::panda_push_ball,
    },
    FigureSpec {
        name: "panda-push-ball-cost",
        source: "ICF ext. Sec. XII-D",
        summary: "the same solve: cost per iLQR iteration",
        compute: trajectory_optimization::panda_push_ball_cost,
    },
    FigureSpec {
        name: "elandt-damping",
        source: "Elandt Sec. 4.4.2, Fig. 4.9, eq. (5.12)",
        summary: "damping trends: a rigid sphere moving down, up and sideways in a compliant layer; each polygon's pressure scaled by max(1 − χ v_n, 0)",
        compute: pressure_field::damping,
    },
    FigureSpec {
        name: "elandt-ef-models",
        source: "Elandt Sec. 4.1-4.2, Table 4.1, Figs. 4.3-4.5",
        summary: "the eight generalized elastic-foundation models: force on an asymmetric boat as its wall tends to vertical (LPP, PPP unbounded, PLL pushed left), PPL = PLP and LPL = LLP, work around a loop through a ramped-stiffness layer (only PLP conservative)",
        compute: ef_models::ef_models,
    },
    FigureSpec {
        name: "elandt-conservation",
        source: "Elandt Sec. 4.4.1, eq. (4.4)",
        summary: "a rigid cube and sphere moved quasi-statically around a closed path across a compliant block's edge: work of each leg, closed-path work of Elandt's complete surface (≈ 0) against the step's positive-stiffness one",
        compute: conservation::conservation,
    },
    FigureSpec {
        name: "elandt-layer",
        source: "Elandt Sec. 4.5, Figs. 4.10, 4.13(b)",
        summary: "rigid sphere and cylinder in a compliant layer (H = D/4): pressure against radius, diameter and force against PFC's closed forms",
        compute: pressure_field::layer,
    },
    FigureSpec {
        name: "elandt-fem-accuracy",
        source: "Elandt Sec. 4.5.2, Fig. 4.11",
        summary: "PFC's force over an axisymmetric FEM's for a rigid sphere and cylinder in a compliant layer, D = 1 cm, H = D/50 to D",
        compute: layer_fem::accuracy,
    },
    FigureSpec {
        name: "elandt-fem-pressure",
        source: "Elandt Sec. 4.5.4, Fig. 4.13(b)",
        summary: "contact pressure against radius at H = D/4, FEM beside PFC: the cylinder's rim ring, the sphere's smaller FEM contact",
        compute: layer_fem::pressure,
    },
    FigureSpec {
        name: "elandt-compliant-compliant",
        source: "Elandt Sec. 4.3, Fig. 4.7",
        summary: "two compliant spheres pressed together, E_B/E_A = 1, 4, 16 and rigid: the equal-pressure surface, its pressure and force against the smooth fields' closed forms",
        compute: pressure_field::compliant_compliant,
    },
    FigureSpec {
        name: "elandt-pencil",
        source: "Elandt Sec. 5.3.1, Fig. 5.3",
        summary: "a compliant pencil on a pivot in a loosening pinch: held, turns, stopped again; the scrub torque grows with the patch",
        compute: pressure_field::pencil,
    },
    FigureSpec {
        name: "elandt-cam-cleat",
        source: "Elandt Sec. 5.3.2, Fig. 5.4",
        summary: "a rubber-coated rod between two spring-loaded eccentric cams slips through under 1 N one way and locks under 10 N the other",
        compute: cam_cleat::cam_cleat,
    },
    FigureSpec {
        name: "elandt-sorting",
        source: "Elandt Sec. 5.3.3, Fig. 5.5",
        summary: "a paddle senses the contact surface area of a sphere, a cylinder and a box dropped on it and tilts each into its bin",
        compute: pressure_field::sorting,
    },
    FigureSpec {
        name: "elandt-bolt",
        source: "Elandt Sec. 5.3.4, Fig. 5.6",
        summary: "a rigid M10 bolt pushed onto a compliant nut: turned back it rises a pitch and falls a pitch once a turn until aligned, then screws in a pitch a turn",
        compute: bolt::bolt,
    },
    FigureSpec {
        name: "xie-cube-slide",
        source: "Xie & Chakraborty Sec. VI-A, Fig. 6",
        summary: "cube sliding flat (ncp): ECP μh/2 ahead of the face centre, position against the closed form",
        compute: complementarity::cube_slide,
    },
    FigureSpec {
        name: "xie-cylinder-roll",
        source: "Xie & Chakraborty Sec. VI-B, Fig. 7",
        summary: "cylinder rolling and spinning with torque impulses (ncp): the ECP stays on the contact line",
        compute: complementarity::cylinder_roll,
    },
    FigureSpec {
        name: "xie-cube-topple",
        source: "Xie & Chakraborty Sec. VI-C, Fig. 8",
        summary: "cube released on a corner (ncp): 3 → 2 → 1 active facets, sliding velocities, ECP",
        compute: complementarity::cube_topple,
    },
    FigureSpec {
        name: "xie-cylinder-manipulation",
        source: "Xie & Chakraborty Sec. VI-D, Figs. 9-10",
        summary: "steel cylinder on rubber (ncp) tipped over, rolled into a box, pivoted off it, rolled past it and stood up at the goal by constant wrenches: height, tilt, speeds, contact forces",
        compute: cylinder_manipulation::cylinder_manipulation,
    },
    FigureSpec {
        name: "xie-cylinder-manipulation-top",
        source: "Xie & Chakraborty Sec. VI-D, Fig. 9",
        summary: "the same run from above: the centre's path and the cylinder's outline at each phase's end among the two boxes, start and goal",
        compute: cylinder_manipulation::cylinder_manipulation_top,
    },
];

/// The figure called `name`.
///
/// # Errors
/// [`Error::InvalidParameter`] naming the figures there are.
pub fn figure(name: &str) -> Result<&'static FigureSpec> {
    FIGURES.iter().find(|f| f.name == name).ok_or_else(|| {
        let names: Vec<&str> = FIGURES.iter().map(|f| f.name).collect();
        Error::invalid(
            "figure",
            name,
            &format!("expected one of {}", names.join(", ")),
        )
    })
}

/// The approximations of ICF Sec. IX's figures, in the paper's order.
const MODELS: [Approximation; 3] = [
    Approximation::Sap,
    Approximation::Lagged,
    Approximation::Similar,
];

/// Loads `case`, sets the approximation and δt (s), and runs it for `duration` (s; the
/// problem's own when `None`).
fn simulate(
    load: Loader<'_>,
    case: &str,
    approximation: Approximation,
    dt: f64,
    duration: Option<f64>,
    edit: impl FnOnce(&mut Problem),
) -> Result<(Problem, Recording)> {
    let mut problem = load(case)?;
    problem.simulator.settings.approximation = approximation;
    problem.simulator.settings.dt = dt;
    edit(&mut problem);
    let duration = duration.unwrap_or(problem.duration);
    let rec = run(
        &mut problem.simulator,
        &problem.initial_state,
        duration,
        |_, _| {},
    )?;
    Ok((problem, rec))
}

/// A curve's points: (x, y).
type Series = Vec<(f64, f64)>;

/// Σ f_n (N) of each step, against the time at its end (s).
fn normal_force(rec: &Recording) -> Vec<(f64, f64)> {
    rec.reports
        .iter()
        .zip(&rec.states[1..])
        .map(|(r, s)| (s.t, r.contacts.iter().map(|c| c.normal_force).sum()))
        .collect()
}

/// Of the contact carrying the largest normal force at each step: slip speed ‖v_t‖ and normal
/// velocity v_n (m/s), NaN for a step without a pushing contact, against the time at the step's
/// end (s).
fn contact_velocities(rec: &Recording) -> (Series, Series) {
    rec.reports
        .iter()
        .zip(&rec.states[1..])
        .map(|(r, s)| {
            let c = r
                .contacts
                .iter()
                .filter(|c| c.normal_force > 0.0)
                .max_by(|a, b| a.normal_force.total_cmp(&b.normal_force));
            (
                (s.t, c.map_or(f64::NAN, |c| c.slip)),
                (s.t, c.map_or(f64::NAN, |c| c.normal_velocity)),
            )
        })
        .unzip()
}

/// A curve named after `approximation`.
fn curve(approximation: Approximation, points: Vec<(f64, f64)>) -> Curve {
    Curve {
        name: approximation.name().to_string(),
        points,
    }
}

/// A number.
fn number(key: String, what: String, paper: &str, measured: f64, unit: &'static str) -> Number {
    Number {
        key,
        what,
        paper: paper.to_string(),
        measured,
        unit,
    }
}

/// The belt of the oscillating conveyor moved by `A(1 − cos ωt)` (phase −π/2): it starts at
/// rest with the box, as the reference reproduction of ICF Sec. IX-A does. The shipped
/// `problems/conveyor-oscillating.toml` keeps `A sin ωt` (the belt at its peak speed at t = 0);
/// docs/contact-models.md ("The conveyor's phase") says why both exist.
pub(crate) fn belt_from_rest(p: &mut crate::problem::Problem) {
    for body in &mut p.simulator.model.prescribed {
        if let crate::multibody::PrescribedMotion::Sinusoid { phase, .. } = &mut body.motion {
            *phase = -std::f64::consts::FRAC_PI_2;
        }
    }
}
