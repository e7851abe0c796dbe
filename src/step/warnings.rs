//! Warnings for suspicious physics, counted and never fatal (as MuJoCo's `mjtWarning`): a
//! step goes on, and its report lists what looked wrong.
//!
//! - [`WarningKind::DeepPenetration`]: two geometries overlap at the start of a step by more
//!   than [`DEEP_PENETRATION_FRACTION`] of the thinner one's half width
//!   ([`Shape::half_thickness`](crate::geometry::Shape::half_thickness)): a compliant contact is a thin layer, and an overlap this deep
//!   (a body started inside another, or driven through it) is resolved by a huge impulse;
//! - [`WarningKind::Tunnelling`]: a body moves farther in one step than its own size (twice
//!   the largest half width of its geometries) at its speed at the start of the step: it can
//!   pass through thin geometry between two contact queries (reduce δt);
//! - [`WarningKind::Speed`]: a point of a body moves faster than [`SPEED_LIMIT`];
//! - [`WarningKind::IllConditionedInertia`]: a freely rotating body (free or ball joint)
//!   whose smallest principal moment of inertia is below [`INERTIA_RATIO_LIMIT`] times
//!   `max(I_max, m ℓ²)` (ℓ: the reach of its geometries): its rotations dominate the Newton
//!   Hessian's conditioning, and contact can lose friction or let it fall through.
//!   Reported once per simulator, with its first step.
//!
//! Non-physical input (inertias that violate the triangle inequality or are not positive
//! definite, non-finite values) is an error, not a warning ([`crate::multibody`]).
use std::collections::BTreeMap;
use std::fmt;

use nalgebra::SymmetricEigen;

use crate::collision::Geometry;
use crate::multibody::kinematics::MultibodyData;
use crate::multibody::model::{BodyId, MultibodyModel};
use crate::multibody::JointKind;
use crate::step::ContactResult;

/// An overlap deeper than this fraction of the thinner geometry's half width
/// ([`Shape::half_thickness`](crate::geometry::Shape::half_thickness)) is a [`WarningKind::DeepPenetration`].
pub const DEEP_PENETRATION_FRACTION: f64 = 0.5;

/// A point of a body faster than this (m/s) is a [`WarningKind::Speed`] warning.
pub const SPEED_LIMIT: f64 = 100.0;

/// A smallest principal moment below this fraction of `max(I_max, m ℓ²)` is a
/// [`WarningKind::IllConditionedInertia`].
pub const INERTIA_RATIO_LIMIT: f64 = 1e-6;

/// What looked wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WarningKind {
    /// An overlap deeper than [`DEEP_PENETRATION_FRACTION`] of the thinner geometry.
    DeepPenetration,
    /// A body moving farther than its own size in one step.
    Tunnelling,
    /// A body faster than [`SPEED_LIMIT`].
    Speed,
    /// A freely rotating body with a nearly singular rotational inertia.
    IllConditionedInertia,
}

impl WarningKind {
    /// Every kind, in the order of the summaries.
    pub const ALL: [WarningKind; 4] = [
        WarningKind::DeepPenetration,
        WarningKind::Tunnelling,
        WarningKind::Speed,
        WarningKind::IllConditionedInertia,
    ];

    /// The name in `run.json` and the summaries.
    pub fn name(self) -> &'static str {
        match self {
            WarningKind::DeepPenetration => "deep_penetration",
            WarningKind::Tunnelling => "tunnelling",
            WarningKind::Speed => "speed",
            WarningKind::IllConditionedInertia => "ill_conditioned_inertia",
        }
    }
}

/// One warning: its kind, what it is about (bodies or geometries by name), the measured value
/// and the limit it passed (both in the unit of the kind: m, m, m/s, kg·m²).
#[derive(Clone, Debug, PartialEq)]
pub struct Warning {
    /// What looked wrong.
    pub kind: WarningKind,
    /// The body, or the two geometries, by name.
    pub subject: String,
    /// The measured overlap (m), distance per step (m), speed (m/s) or smallest principal
    /// moment (kg·m²).
    pub value: f64,
    /// The limit it passed, in the same unit.
    pub limit: f64,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (s, x, l) = (&self.subject, self.value, self.limit);
        match self.kind {
            WarningKind::DeepPenetration => write!(
                f,
                "{s} overlap by {x:.3e} m, more than {l:.3e} m ({DEEP_PENETRATION_FRACTION} of the thinner one's half width): not a thin compliant layer, it is pushed out by a large impulse"
            ),
            WarningKind::Tunnelling => write!(
                f,
                "{s} moves {x:.3e} m in one step, more than its own size {l:.3e} m: it may pass through thin geometry; reduce δt"
            ),
            WarningKind::Speed => write!(f, "{s} moves at {x:.3e} m/s, above {l} m/s"),
            WarningKind::IllConditionedInertia => write!(
                f,
                "{s} has a smallest principal moment of inertia {x:.3e} kg·m², below {l:.3e} kg·m² ({INERTIA_RATIO_LIMIT:e} of its largest moment or m ℓ²): its contacts may lose friction or let it through"
            ),
        }
    }
}

/// Sizes of each body's geometries, for the checks: per body (by index) its size (m, twice
/// the largest half width of its geometries) and reach (m, the farthest geometry point from
/// its origin), `None` without geometry; per geometry its half width.
#[derive(Clone, Debug, Default)]
pub(crate) struct Extents {
    bodies: Vec<Option<(f64, f64)>>,
    half_thickness: Vec<f64>,
}

impl Extents {
    /// The extents of `geometries` on the bodies of `model`.
    pub(crate) fn new(model: &MultibodyModel<f64>, geometries: &[Geometry]) -> Self {
        let mut bodies: Vec<Option<(f64, f64)>> = vec![None; model.bodies.len()];
        for g in geometries {
            let BodyId::Body(i) = g.body else { continue };
            let (half, reach) = (
                g.shape.half_thickness(),
                g.X_BG.p.norm() + g.shape.bounding_radius(),
            );
            if !(half.is_finite() && reach.is_finite()) {
                continue;
            }
            let entry = bodies[i].get_or_insert((0.0, 0.0));
            *entry = (entry.0.max(2.0 * half), entry.1.max(reach));
        }
        Extents {
            bodies,
            half_thickness: geometries
                .iter()
                .map(|g| g.shape.half_thickness())
                .collect(),
        }
    }
}

/// [`WarningKind::IllConditionedInertia`] for every freely rotating body of `model`.
pub(crate) fn inertia_warnings(model: &MultibodyModel<f64>, extents: &Extents) -> Vec<Warning> {
    let mut out = Vec::new();
    for (i, body) in model.bodies.iter().enumerate() {
        if !matches!(model.joints[i].kind, JointKind::Free | JointKind::Ball) {
            continue;
        }
        let m = body.inertia.mass;
        let reach = extents.bodies[i].map_or(0.0, |(_, reach)| reach);
        let moments = SymmetricEigen::new(body.inertia.inertia_com).eigenvalues;
        let scale = moments.max().max(m * reach * reach);
        let limit = INERTIA_RATIO_LIMIT * scale;
        if moments.min() < limit {
            out.push(Warning {
                kind: WarningKind::IllConditionedInertia,
                subject: format!("body `{}`", body.name),
                value: moments.min(),
                limit,
            });
        }
    }
    out
}

/// The warnings of a step of `dt` (s) into `out`: [`WarningKind::DeepPenetration`] over its
/// point `contacts` (the overlap at the start of the step, `penetration + δt v_n`), and
/// [`WarningKind::Tunnelling`] and [`WarningKind::Speed`] over the body velocities at the start
/// of the step (`data`, from the step's kinematics).
pub(crate) fn step_warnings(
    model: &MultibodyModel<f64>,
    data: &MultibodyData<f64>,
    geometries: &[Geometry],
    extents: &Extents,
    contacts: &[ContactResult],
    dt: f64,
    out: &mut Vec<Warning>,
) {
    for c in contacts.iter().filter(|c| c.polygon.is_none()) {
        let overlap = c.penetration + dt * c.normal_velocity;
        let (a, b) = c.geometries;
        let limit =
            DEEP_PENETRATION_FRACTION * extents.half_thickness[a].min(extents.half_thickness[b]);
        if overlap > limit {
            out.push(Warning {
                kind: WarningKind::DeepPenetration,
                subject: format!("`{}` and `{}`", geometries[a].name, geometries[b].name),
                value: overlap,
                limit,
            });
        }
    }
    for (i, extent) in extents.bodies.iter().enumerate() {
        let Some((size, reach)) = *extent else {
            continue;
        };
        let V = &data.V[i];
        let speed = V.fixed_rows::<3>(3).norm() + V.fixed_rows::<3>(0).norm() * reach;
        let subject = || format!("body `{}`", model.bodies[i].name);
        if speed * dt > size {
            out.push(Warning {
                kind: WarningKind::Tunnelling,
                subject: subject(),
                value: speed * dt,
                limit: size,
            });
        }
        if speed > SPEED_LIMIT {
            out.push(Warning {
                kind: WarningKind::Speed,
                subject: subject(),
                value: speed,
                limit: SPEED_LIMIT,
            });
        }
    }
}

/// Warnings of a run, counted by kind, each kind with its first occurrence: for summaries,
/// `stats.csv` and `run.json`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WarningTally {
    kinds: BTreeMap<WarningKind, (usize, f64, String)>,
}

impl WarningTally {
    /// Counts `warnings` of the step that ended at `t` (s).
    pub fn add(&mut self, t: f64, warnings: &[Warning]) {
        for w in warnings {
            self.kinds
                .entry(w.kind)
                .and_modify(|(count, _, _)| *count += 1)
                .or_insert_with(|| (1, t, w.to_string()));
        }
    }

    /// Whether nothing was counted.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// Per kind that occurred, in [`WarningKind::ALL`]'s order: the kind, how many times, the
    /// end time (s) of the step of its first occurrence and that occurrence's message.
    pub fn iter(&self) -> impl Iterator<Item = (WarningKind, usize, f64, &str)> {
        self.kinds
            .iter()
            .map(|(&kind, (count, t, first))| (kind, *count, *t, first.as_str()))
    }
}

impl fmt::Display for WarningTally {
    /// One line per kind: `name ×count, first at t = … s: message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (kind, count, t, first) in self.iter() {
            writeln!(f, "{} ×{count}, first at t = {t} s: {first}", kind.name())?;
        }
        Ok(())
    }
}
