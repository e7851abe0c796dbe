//! What a step reports (ICF Sec. VIII quantities): per contact, the impulse and force on B,
//! the normal and tangential forces, the slip, the normal velocity and penetration at the end
//! of the step and the effective stiction tolerance; per pressure-field pair, its patch.
use nalgebra::{DVector, Vector3};

use crate::collision::PolygonContact;
use crate::multibody::model::BodyId;
use crate::solver::{ConstraintKind, SolverStats};
use crate::step::assembled::Assembled;
use crate::step::patch::{patches, Patch};
use crate::step::warnings::Warning;

/// What one contact did during a step.
#[derive(Clone, Debug, PartialEq)]
pub struct ContactResult {
    /// Body A.
    pub body_a: BodyId,
    /// Body B (forces are on B).
    pub body_b: BodyId,
    /// Geometry indices (A, B).
    pub geometries: (usize, usize),
    /// Contact point, world frame (m).
    pub point: Vector3<f64>,
    /// Normal from A to B, world frame.
    pub normal: Vector3<f64>,
    /// Impulse γ in the contact frame (N·s, on B).
    pub impulse: Vector3<f64>,
    /// Force on B, world frame (N): `R_WC γ / δt`.
    pub force: Vector3<f64>,
    /// Normal force `γ_n/δt` (N).
    pub normal_force: f64,
    /// Tangential force magnitude `‖γ_t‖/δt` (N).
    pub tangential_force: f64,
    /// Slip speed `‖v_t‖` at the end of the step (m/s).
    pub slip: f64,
    /// Normal velocity `v_n` at the end of the step (m/s, > 0 separating).
    pub normal_velocity: f64,
    /// Penetration at the end of the step `x0 − δt v_n` (m, > 0 overlapping); for a
    /// pressure-field contact the virtual penetration `p0/g − δt v_n` of its polygon.
    pub penetration: f64,
    /// Effective stiction tolerance (m/s), ICF Sec. VIII: `v_s` for Lagged and Similar, the
    /// regularized ε of eq. (44), SAP's `R_t μ γ_n` (eq. (42)).
    pub stiction_tolerance: f64,
    /// The polygon of a pressure-field contact.
    pub polygon: Option<PolygonContact>,
}

/// Report of one step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepReport {
    /// Solver statistics.
    pub stats: SolverStats,
    /// Per-contact results (one per polygon for pressure-field pairs).
    pub contacts: Vec<ContactResult>,
    /// Per-pair contact patches of the pressure-field pairs.
    pub patches: Vec<Patch>,
    /// Per constraint row (joint limits, couplers, servos, joint friction), in the order of
    /// the problem's rows.
    pub constraints: Vec<ConstraintResult>,
    /// Suspicious physics seen in this step ([`crate::step::warnings`]); empty normally.
    pub warnings: Vec<Warning>,
}

/// What one constraint row did during a step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConstraintResult {
    /// What the row models.
    pub kind: ConstraintKind,
    /// Its generalized effort `γ/δt` along its row `c` (N·m or N): a limit's is ≥ 0,
    /// pushing the joint off its limit; a servo's or a friction's acts on its joint.
    pub effort: f64,
    /// The row's velocity `c·v` at the end of the step (rad/s or m/s).
    pub velocity: f64,
    /// How far the row's unprojected effort `y/δt`, `y = (v̂ − c·v)/R`, is from the bounds
    /// where its impulse activates or saturates (N·m or N): a limit's effort when it pushes,
    /// the effort it lacks to push when it does not; infinite for a coupler, which has no
    /// bound. Near zero the step bends, and finite differences straddle the bend.
    pub clearance: f64,
}

/// The report of a solved step of `dt` (s): each contact of `assembled` with its impulse
/// `gamma` (N·s) and contact velocity `v_c` (m/s), both in its contact frame and in the order of
/// the problem's pool (nc each), then the patches of the pressure-field pairs; written into
/// `report`, whose lists are reused (its warnings cleared).
#[allow(clippy::too_many_arguments)]
pub(super) fn step_report_into(
    assembled: &Assembled<f64>,
    gamma: &[Vector3<f64>],
    v_c: &[Vector3<f64>],
    v: &DVector<f64>,
    row_gamma: &[f64],
    dt: f64,
    stats: SolverStats,
    report: &mut StepReport,
) {
    let Assembled {
        problem,
        contacts,
        frames,
    } = assembled;
    // By reference: moving each contact out would copy it whole.
    let inv_dt = 1.0 / dt;
    report.stats = stats;
    report.contacts.clear();
    report
        .contacts
        .extend(contacts.iter().enumerate().map(|(i, c)| {
            let (gamma, v_c) = (gamma[i], v_c[i]);
            let frame = &frames[c.frame];
            ContactResult {
                body_a: frame.bodies.0,
                body_b: frame.bodies.1,
                geometries: frame.geometries,
                point: c.p_WC,
                normal: frame.R_WC.column(2).into_owned(),
                impulse: gamma,
                force: frame.R_WC * (gamma * inv_dt),
                normal_force: gamma.z * inv_dt,
                tangential_force: gamma.xy().norm() * inv_dt,
                slip: v_c.xy().norm(),
                normal_velocity: v_c.z,
                penetration: -c.phi0 - dt * v_c.z,
                stiction_tolerance: problem.contacts.stiction_tolerance(i, &v_c),
                polygon: c.feature.polygon().copied(),
            }
        }));
    report.patches = patches(&report.contacts);
    report.constraints.clear();
    report.constraints.extend(
        problem
            .constraints
            .iter()
            .zip(row_gamma)
            .map(|(row, &gamma)| {
                let velocity = row.velocity(v.as_slice());
                let unprojected = (row.v_hat - velocity) / row.R;
                let clearance = [row.lower, row.upper]
                    .into_iter()
                    .flatten()
                    .map(|bound| (unprojected - bound).abs() * inv_dt)
                    .fold(f64::INFINITY, f64::min);
                ConstraintResult {
                    kind: row.kind,
                    effort: gamma * inv_dt,
                    velocity,
                    clearance,
                }
            }),
    );
    report.warnings.clear();
}
