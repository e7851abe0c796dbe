//! Elandt Sec. 5.3.4, Fig. 5.6: a bolt aligned with and screwed into a threaded hole. A rigid
//! M10×1.5 bolt ([`external_thread`]) is pushed along its axis onto a compliant nut
//! ([`internal_thread`]) by a constant force, without gravity. Turned counter-clockwise (the
//! loosening sense of a right-hand thread) the bolt's lowest tooth rides up the flank of the
//! nut's last tooth and falls a pitch whenever the start of its thread passes the start of the
//! nut's: a sawtooth, one pitch up and one down per turn. Just after a fall the threads are aligned; turned
//! clockwise from there, the bolt screws in a pitch per turn.
//!
//! The scene is built here, not in a problem file: the thread meshes are made by
//! [`crate::geometry::thread`] and reach the pressure-field contact as user meshes
//! ([`Geometry::from_mesh`]). The bolt moves on a cylindrical joint (a prismatic joint along
//! the axis carrying a revolute one about it): Elandt's bolt has 6 DoF and is kept from
//! tipping by a bracket's sidewall (docs/figures.md, "The bolt").

use std::f64::consts::TAU;

use nalgebra::{DVector, Matrix3, Vector3};

use super::{number, Loader, Number, PaperFigure, Quality};
use crate::collision::Geometry;
use crate::contact::{Approximation, ContactParams};
use crate::error::Result;
use crate::geometry::thread::{external_thread, internal_thread, IsoThread};
use crate::hydroelastic::{ContactMesh, Hydroelastic};
use crate::math::{Pose, SpatialInertia};
use crate::multibody::{BodyId, JointKind, JointSpec, MultibodyModel};
use crate::report::plot::{Curve, LinePanel};
use crate::step::{Simulator, State, StepSettings};

/// ISO 261 M10 coarse thread: d = 10 mm, P = 1.5 mm.
const THREAD: IsoThread = IsoThread {
    major_diameter: 0.010,
    pitch: 0.0015,
};
/// The bolt's radii short of the basic profile's (m): 0.05 mm between the flanks, more than
/// the chords between the hole's segments take from its radius (0.011 mm at 48 a turn,
/// 0.043 mm at 24).
const CLEARANCE: f64 = 1e-4;
/// Pitches of thread at every angle: the bolt's and the nut's (the nut 7.5 mm thick).
const BOLT_PITCHES: usize = 6;
const NUT_PITCHES: usize = 5;
/// The nut's outer radius (m) and its radial layers (fractions of the wall).
const NUT_RADIUS: f64 = 0.008;
const LAYERS: [f64; 3] = [0.1, 0.25, 0.5];
/// The nut's hydroelastic modulus (Pa): a hard polymer.
const MODULUS: f64 = 1e8;
/// The depth (m) over which the nut's extent grows from 0 on its surface to 1.
const DEPTH: f64 = 1e-3;
/// The bolt's mass (kg) and its rotational inertia about its axis (kg·m²), with the driver's.
const MASS: f64 = 0.1;
const INERTIA: f64 = 1e-6;
/// The push along the axis into the hole (N): the bolt's weight were it upright (g ≈ 10).
const PUSH: f64 = 1.0;
/// The torque's magnitude (N·m): about twice the 1.3 mN·m that lifts the push against the
/// flanks' friction, `F r₂ tan(λ + atan(μ/cos 30°))` (r₂ the pitch radius, λ = 3.0° the
/// lead angle).
const TORQUE: f64 = 2.5e-3;
/// The driver's viscous drag on the turn (N·m·s/rad): the torque's excess over the threads'
/// friction turns the bolt at a steady rate of about two turns a second.
const DRAG: f64 = 1e-4;
/// Friction coefficient (lubricated steel on a polymer) and Hunt & Crossley dissipation (s/m).
const MU: f64 = 0.2;
const DISSIPATION: f64 = 5.0;
/// The bolt starts a quarter turn past the nut's thread start, its lowest flank 0.1 mm above
/// the nut's last one: at height `(m + turn) P` it would rest on it, in the groove.
const START_TURN: f64 = 0.25;
const START_GAP: f64 = 1e-4;
/// The push alone settles the bolt for this long before the torque comes on (s).
const SETTLE: f64 = 0.05;

/// The set-up of one run.
#[derive(Clone, Copy, Debug)]
struct Setup {
    dt: f64,
    /// Segments per turn of both meshes.
    around: usize,
    /// Falls to see under the loosening torque before it is reversed.
    falls: usize,
    /// Turns to screw in.
    turns_in: f64,
}

impl Setup {
    fn of(quality: Quality) -> Setup {
        match quality {
            Quality::Quick => Setup {
                dt: 1e-3,
                around: 24,
                falls: 2,
                turns_in: 2.0,
            },
            Quality::Full => Setup {
                dt: 5e-4,
                around: 48,
                falls: 3,
                turns_in: 3.0,
            },
        }
    }
}

/// What one step did, at the time at its end.
#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    t: f64,
    /// The bolt's height along the axis (m) and its turn (rad, + counter-clockwise).
    z: f64,
    turn: f64,
    /// The torque applied over the step (N·m).
    torque: f64,
    /// Σ f_n (N), the number of contact polygons, and how deep the bolt's surface is in the
    /// nut: the largest pressure over `E/depth` (m).
    normal: f64,
    polygons: usize,
    penetration: f64,
}

/// A run: its samples and the index of the first clockwise step.
struct Run {
    samples: Vec<Sample>,
    reverse: usize,
}

/// Runs the bolt: settle, loosen until `setup.falls` falls and an eighth of a turn more,
/// then tighten for `setup.turns_in` turns.
fn run(setup: Setup) -> Result<Run> {
    let mut model = MultibodyModel::new(Vector3::zeros());
    let slide = model.add_body(
        "slide",
        SpatialInertia {
            mass: 0.0,
            com: Vector3::zeros(),
            inertia_com: Matrix3::zeros(),
        },
        JointSpec::new(JointKind::Prismatic { axis: Vector3::z() }),
    )?;
    let mut turn = JointSpec::new(JointKind::Revolute { axis: Vector3::z() });
    turn.parent = Some(slide);
    turn.damping = vec![DRAG];
    let bolt = model.add_body(
        "bolt",
        SpatialInertia {
            mass: MASS,
            com: Vector3::new(0.0, 0.0, 0.5 * (BOLT_PITCHES + 1) as f64 * THREAD.pitch),
            inertia_com: Matrix3::from_diagonal(&Vector3::new(INERTIA, INERTIA, INERTIA)),
        },
        turn,
    )?;
    model.add_actuator(model.joints[slide].v_start)?;
    model.add_actuator(model.joints[bolt].v_start)?;
    let bolt_mesh = external_thread(&THREAD, CLEARANCE, BOLT_PITCHES, setup.around)?;
    let nut_mesh = internal_thread(
        &THREAD,
        NUT_RADIUS,
        NUT_PITCHES,
        setup.around,
        &LAYERS,
        2,
        DEPTH,
    )?;
    let geometries = vec![
        Geometry::from_mesh(
            "nut",
            BodyId::World,
            Pose::identity(),
            ContactMesh::Compliant(nut_mesh),
            Hydroelastic::compliant(MODULUS, THREAD.pitch),
        )?,
        Geometry::from_mesh(
            "bolt",
            BodyId::Body(bolt),
            Pose::identity(),
            ContactMesh::Rigid(bolt_mesh),
            Hydroelastic::rigid(THREAD.pitch),
        )?,
    ];
    let mut settings = StepSettings::default()
        .with_dt(setup.dt)
        .with_approximation(Approximation::Lagged);
    settings.contact = ContactParams::default()
        .with_mu(MU)
        .with_dissipation(DISSIPATION);
    let mut sim = Simulator::new(model, geometries, settings)?;
    let (z_index, turn_index) = (
        sim.model.joints[slide].q_start,
        sim.model.joints[bolt].q_start,
    );
    let p = THREAD.pitch;
    let mut state = State {
        t: 0.0,
        q: DVector::zeros(sim.model.nq()),
        v: DVector::zeros(sim.model.nv()),
    };
    state.q[z_index] = (NUT_PITCHES as f64 + START_TURN) * p + START_GAP;
    state.q[turn_index] = START_TURN * TAU;
    let mut samples = Vec::new();
    let mut reverse = None;
    let mut falls = Falls::default();
    let budget = (SETTLE + 2.0 * (setup.falls as f64 + 1.0 + setup.turns_in)) / setup.dt;
    for _ in 0..budget.ceil() as usize {
        let torque = match reverse {
            _ if state.t < SETTLE => 0.0,
            None => TORQUE,
            Some(_) => -TORQUE,
        };
        let u = DVector::from_vec(vec![-PUSH, torque]);
        let (next, report) = sim.step(&state, &u)?;
        state = next;
        let sample = Sample {
            t: state.t,
            z: state.q[z_index],
            turn: state.q[turn_index],
            torque,
            normal: report.contacts.iter().map(|c| c.normal_force).sum(),
            polygons: report.contacts.len(),
            penetration: report
                .contacts
                .iter()
                .filter_map(|c| c.polygon.map(|p| p.pressure * DEPTH / MODULUS))
                .fold(0.0, f64::max),
        };
        samples.push(sample);
        match reverse {
            None if torque > 0.0 => {
                falls.push(samples.len() - 1, &samples);
                let settled = falls
                    .found
                    .last()
                    .is_some_and(|f| sample.turn > samples[f.bottom].turn + TAU / 8.0);
                if falls.found.len() >= setup.falls && settled {
                    reverse = Some(samples.len());
                }
            }
            Some(at) if samples[at - 1].turn - sample.turn >= setup.turns_in * TAU => break,
            _ => {}
        }
    }
    Ok(Run {
        reverse: reverse.unwrap_or(samples.len()),
        samples,
    })
}

/// A fall of the sawtooth: the sample at its top and the one at its bottom.
#[derive(Clone, Copy, Debug)]
struct Fall {
    top: usize,
    bottom: usize,
}

/// Finds the falls of the bolt while it is loosened, sample by sample: a fall begins at the
/// highest point since the last one when the bolt is half a pitch below it, and ends at the
/// lowest point before it climbs a tenth of a pitch again.
#[derive(Default)]
struct Falls {
    found: Vec<Fall>,
    top: Option<usize>,
    falling: Option<Fall>,
}

impl Falls {
    fn push(&mut self, i: usize, samples: &[Sample]) {
        let p = THREAD.pitch;
        let z = samples[i].z;
        if let Some(f) = &mut self.falling {
            if z < samples[f.bottom].z {
                f.bottom = i;
            } else if z > samples[f.bottom].z + 0.1 * p {
                self.found.push(*f);
                self.top = Some(f.bottom);
                self.falling = None;
            }
            return;
        }
        let top = *self.top.get_or_insert(i);
        if z > samples[top].z {
            self.top = Some(i);
        } else if z < samples[top].z - 0.5 * p {
            self.falling = Some(Fall { top, bottom: i });
        }
    }
}

/// What a run measures, heights in pitches.
struct Measured {
    /// Turns while loosening, from the torque's start to its reversal.
    loosened_turns: f64,
    /// Each fall's height.
    falls: Vec<f64>,
    /// Falls per turn, from the first fall's top to the last's.
    falls_per_turn: f64,
    /// Each climb from one fall's bottom to the next one's top, per turn.
    climbs: Vec<f64>,
    /// Turns while tightening, from an eighth of a turn after the reversal, and the advance
    /// into the hole over those turns.
    tightened_turns: f64,
    advance_per_turn: f64,
    /// How deep the bolt's surface reached into the nut (m); most polygons in a step.
    deepest: f64,
    most_polygons: usize,
}

impl Measured {
    fn of(run: &Run) -> Measured {
        let Run { samples, reverse } = run;
        let (p, reverse) = (THREAD.pitch, *reverse);
        let loosening: Vec<usize> = (0..reverse).filter(|&i| samples[i].t > SETTLE).collect();
        let mut falls = Falls::default();
        for &i in &loosening {
            falls.push(i, samples);
        }
        let falls = falls.found;
        let heights = falls
            .iter()
            .map(|f| (samples[f.top].z - samples[f.bottom].z) / p)
            .collect();
        let climbs = falls
            .windows(2)
            .map(|w| {
                let (a, b) = (&samples[w[0].bottom], &samples[w[1].top]);
                (b.z - a.z) / p / ((b.turn - a.turn) / TAU)
            })
            .collect();
        let falls_per_turn = match (falls.first(), falls.last()) {
            (Some(a), Some(b)) if falls.len() > 1 => {
                (falls.len() - 1) as f64 / ((samples[b.top].turn - samples[a.top].turn) / TAU)
            }
            _ => f64::NAN,
        };
        let first = loosening.first().map_or(0, |&i| i);
        let loosened_turns = (samples[reverse.max(1) - 1].turn - samples[first].turn) / TAU;
        let tightening = &samples[reverse.min(samples.len())..];
        let start = tightening
            .iter()
            .find(|s| tightening[0].turn - s.turn >= TAU / 8.0)
            .copied()
            .unwrap_or_default();
        let end = tightening.last().copied().unwrap_or_default();
        let tightened_turns = (start.turn - end.turn) / TAU;
        Measured {
            loosened_turns,
            falls: heights,
            falls_per_turn,
            climbs,
            tightened_turns,
            advance_per_turn: (start.z - end.z) / (tightened_turns * p),
            deepest: samples.iter().map(|s| s.penetration).fold(0.0, f64::max),
            most_polygons: samples.iter().map(|s| s.polygons).max().unwrap_or(0),
        }
    }
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Elandt Sec. 5.3.4, Fig. 5.6: the bolt loosened falls a pitch once a turn, then screws in a
/// pitch a turn. Full: 48 segments a turn, δt = 0.5 ms, and again at δt = 0.25 ms; quick: 24,
/// δt = 1 ms.
pub(super) fn bolt(_load: Loader<'_>, quality: Quality) -> Result<PaperFigure> {
    let setup = Setup::of(quality);
    let main = run(setup)?;
    let m = Measured::of(&main);
    let halved = match quality {
        Quality::Full => Some(Measured::of(&run(Setup {
            dt: 0.5 * setup.dt,
            ..setup
        })?)),
        Quality::Quick => None,
    };
    let samples = &main.samples;
    let p = THREAD.pitch;
    let z0 = NUT_PITCHES as f64 * p;
    let column = |f: &dyn Fn(&Sample) -> f64| -> Vec<(f64, f64)> {
        samples.iter().map(|s| (s.t, f(s))).collect()
    };
    let curve = |name: &str, points| Curve {
        name: name.to_string(),
        points,
    };
    let (t0, t1) = (0.0, samples.last().map_or(1.0, |s| s.t));
    let (lo, hi) = samples
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), s| {
            (lo.min(s.z - z0), hi.max(s.z - z0))
        });
    let marks: Vec<Curve> = ((lo / p).floor() as i64..=(hi / p).ceil() as i64)
        .map(|k| {
            let z = k as f64 * p * 1e3;
            curve(&format!("{k} P"), vec![(t0, z), (t1, z)])
        })
        .collect();
    let mut position = vec![curve("bolt height", column(&|s| (s.z - z0) * 1e3))];
    position.extend(marks);
    Ok(PaperFigure {
        name: "elandt-bolt",
        title: "Elandt Fig. 5.6: a bolt turned back falls a pitch once a turn until aligned, then screws in a pitch a turn".into(),
        x_label: "t (s)",
        panels: vec![
            LinePanel {
                y_label: "bolt height (mm; pitch P = 1.5 mm)",
                curves: position,
            },
            LinePanel {
                y_label: "bolt turn (turns, + counter-clockwise)",
                curves: vec![curve("turn", column(&|s| s.turn / TAU))],
            },
            LinePanel {
                y_label: "torque on the bolt (mN·m)",
                curves: vec![curve("torque", column(&|s| s.torque * 1e3))],
            },
            LinePanel {
                y_label: "contact: Σ f_n (N), polygons / 100",
                curves: vec![
                    curve("Σ f_n", column(&|s| s.normal)),
                    curve("polygons / 100", column(&|s| s.polygons as f64 / 100.0)),
                ],
            },
        ],
        equal_aspect: false,
        numbers: numbers(&m, halved.as_ref(), setup.dt),
        notes: vec![
            format!(
                "Elandt gives no dimensions; ours: an ISO M10×1.5 thread (basic profile, 60° flanks), a rigid bolt {CLEARANCE:e} m short of the basic radii, a compliant nut (E = {MODULUS:e} Pa, outer radius {NUT_RADIUS} m, {NUT_PITCHES} pitches), {} segments a turn ({} triangles a turn on the bolt's flanks); μ = {MU}, push {PUSH} N, torque ±{TORQUE} N·m, drag {DRAG} N·m·s/rad, Lagged at δt = {} s.",
                setup.around,
                4 * setup.around,
                setup.dt
            ),
            "The bolt turns and slides on a cylindrical joint (revolute on prismatic) instead of Elandt's 6 DoF held upright by a sidewall; the threads' ends are helical faces with a one-pitch step (the thread's start) instead of flat ones.".into(),
            "Height 0 is the bolt resting on the nut's last flank at turn 0; the marks are whole pitches from there.".into(),
        ],
    })
}

/// The figure's numbers: those of the run at `dt` (s), and of the run at `dt/2` if made.
fn numbers(m: &Measured, halved: Option<&Measured>, dt: f64) -> Vec<Number> {
    let mut out = vec![
        number(
            "loosen.turns".into(),
            "turns of the loosening (counter-clockwise) phase".into(),
            "the bolt is turned counter-clockwise until aligned",
            m.loosened_turns,
            "turn",
        ),
        number(
            "loosen.falls".into(),
            "falls of at least half a pitch while loosening".into(),
            "the threads slip past each other once per turn",
            m.falls.len() as f64,
            "1",
        ),
        number(
            "loosen.falls_per_turn".into(),
            "falls per turn, first to last fall".into(),
            "once per turn",
            m.falls_per_turn,
            "1",
        ),
        number(
            "loosen.fall_over_pitch".into(),
            "mean height of a fall over the pitch".into(),
            "the threads jump down one pitch length",
            mean(&m.falls),
            "1",
        ),
        number(
            "loosen.fall_over_pitch_min".into(),
            "the smallest fall over the pitch".into(),
            "one pitch",
            m.falls.iter().copied().fold(f64::INFINITY, f64::min),
            "1",
        ),
        number(
            "loosen.climb_per_turn_over_pitch".into(),
            "mean climb between falls per turn over the pitch".into(),
            "(the bolt rides up the nut's thread: one pitch a turn)",
            mean(&m.climbs),
            "1",
        ),
        number(
            "tighten.turns".into(),
            "turns of the tightening (clockwise) phase, from an eighth of a turn after the reversal".into(),
            "the torque changes direction to tighten",
            m.tightened_turns,
            "turn",
        ),
        number(
            "tighten.advance_over_pitch_per_turn".into(),
            "axial advance into the hole over (turns × pitch) while tightening".into(),
            "the bolt screws in (one pitch a turn)",
            m.advance_per_turn,
            "1",
        ),
        number(
            "penetration.max".into(),
            "how deep the bolt's surface reaches into the nut over the run: the largest polygon pressure p × depth/E".into(),
            "(small against the thread's depth)",
            m.deepest,
            "m",
        ),
        number(
            "penetration.max_over_thread_depth".into(),
            format!(
                "that over the thread's depth 5H/8 ({:.3} mm)",
                THREAD.depth() * 1e3
            ),
            "well below 1: the threads do not pass through each other",
            m.deepest / THREAD.depth(),
            "1",
        ),
        number(
            "polygons.max".into(),
            "most contact polygons in a step".into(),
            "≈ 92 triangles per turn of thread: many tet-triangle contacts as the bolt goes in",
            m.most_polygons as f64,
            "1",
        ),
    ];
    let per_fall = |prefix: &str, m: &Measured| -> Vec<Number> {
        let falls = m.falls.iter().enumerate().map(|(k, &h)| {
            number(
                format!("{prefix}fall.{}", k + 1),
                format!("fall {} over the pitch", k + 1),
                "one pitch",
                h,
                "1",
            )
        });
        let climbs = m.climbs.iter().enumerate().map(|(k, &c)| {
            number(
                format!("{prefix}climb.{}", k + 1),
                format!(
                    "climb {} (between falls {} and {}) per turn over the pitch",
                    k + 1,
                    k + 1,
                    k + 2
                ),
                "one pitch a turn",
                c,
                "1",
            )
        });
        falls.chain(climbs).collect()
    };
    out.extend(per_fall("", m));
    if let Some(h) = halved {
        let half = 0.5 * dt;
        out.extend(per_fall(&format!("dt_{half:e}."), h));
        out.push(number(
            format!("dt_{half:e}.tighten.advance_over_pitch_per_turn"),
            format!("advance per turn over the pitch while tightening, at δt = {half:e} s"),
            "one pitch a turn",
            h.advance_per_turn,
            "1",
        ));
        out.push(number(
            format!("dt_{half:e}.loosen.falls_per_turn"),
            format!("falls per turn while loosening, at δt = {half:e} s"),
            "once per turn",
            h.falls_per_turn,
            "1",
        ));
    }
    out
}
