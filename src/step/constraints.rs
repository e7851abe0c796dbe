//! The constraint rows of a step (SAP paper Sec. V; DESIGN "Constraints in the convex
//! problem"), generic in the scalar: from the model's joint limits, couplers, position servos
//! and joint friction at `q0` and the input `u`, each a [`ConstraintRow`] of the convex
//! problem with its regularization `R`, bias `v̂` and impulse set.
//!
//! - **Limits** `g = q − q_lo ≥ 0` (`c = +1`) and `g = q_hi − q ≥ 0` (`c = −1`), impulses in
//!   ℝ₊; **couplers** `g = q_f − ρ q_l − offset = 0` (`c = e_f − ρ e_l`), impulses in ℝ.
//!   Both are near-rigid, as Drake makes them: infinite stiffness, dissipation time scale
//!   `τ_d = δt`, so `v̂ = −g0/(δt + τ_d)` drives `g` to zero within two steps, and
//!   `R = β²/(4π²) w` with `w = c A⁻¹ cᵀ` and `β = 0.1` (the constraint's natural period is
//!   `β δt`, resolved by no step: SAP Sec. V-B).
//! - **Servos** (MJCF `position`): the implicit PD impulse `γ = −δt (K_p (q0 + δt v − q_d) +
//!   K_d v)` clamped to `±δt g f_max`, which is the row `c = e_k`,
//!   `R = 1/(δt (δt K_p + K_d))`, `v̂ = −K_p (q0 − q_d)/(δt K_p + K_d)`, with joint gains
//!   `K_p = g² kp`, `K_d = g² kv` and target `q_d = clamp(u)/g`.
//! - **Joint friction**: `c = e_k`, `v̂ = 0`, near-rigid `R`, impulses in `±δt f`: stiction
//!   below the friction effort, sliding at it (Drake's joint friction constraint).

use nalgebra::{DMatrix, DVector};

use crate::error::{Error, Result};
use crate::math::block::BlockDiagonalCholesky;
use crate::multibody::model::MultibodyModel;
use crate::multibody::{Transmission, TransmissionKind};
use crate::scalar::{lit, Scalar};
use crate::solver::{ConstraintKind, ConstraintRow};

/// The near-rigid constant β: a near-rigid row's natural period is `β δt` (Drake's default
/// for limit constraints).
pub const NEAR_RIGID_BETA: f64 = 0.1;

/// `β²/(4π²)`: a near-rigid row's `R` per unit of `w = c A⁻¹ cᵀ`.
fn near_rigid_factor() -> f64 {
    NEAR_RIGID_BETA * NEAR_RIGID_BETA / (4.0 * std::f64::consts::PI * std::f64::consts::PI)
}

/// How a row's `R` and `v̂` are made: near-rigid from `w` with `v̂ = −g0/(2δt)` (limits,
/// couplers), near-rigid with `v̂ = 0` (friction) or from a servo's gains.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Regularization<T: Scalar> {
    NearRigid { g0: T },
    Friction,
    Servo { Kp: f64, Kd: f64, q_d: T, q0: T },
}

/// The constraint rows of the step from `q0` with input `u` (nu) and step `dt`, given
/// `A = M(q0) + δt D` and its cliques.
///
/// # Errors
/// [`Error::NotPositiveDefinite`] when a block of `A` cannot be factored (only when a
/// near-rigid row needs `w`).
#[allow(non_snake_case)]
pub fn constraint_rows<T: Scalar>(
    model: &MultibodyModel<T>,
    A: &DMatrix<T>,
    cliques: &[Vec<usize>],
    q0: &DVector<T>,
    u: &DVector<T>,
    dt: T,
) -> Result<Vec<ConstraintRow<T>>> {
    let servos = model
        .transmissions
        .iter()
        .any(|t| t.kind != TransmissionKind::Effort);
    let no_rows = model.limits.is_empty()
        && model.couplers.is_empty()
        && model.friction.is_empty()
        && !servos;
    if no_rows {
        return Ok(Vec::new());
    }
    let mut chol =
        BlockDiagonalCholesky::new(A, cliques).ok_or(Error::NotPositiveDefinite { index: 0 })?;
    constraint_rows_with(model, &mut chol, q0, u, dt)
}

/// [`constraint_rows`] with the factor `chol` of `A`'s clique blocks, as the step's free
/// motion keeps it ([`crate::multibody::FreeMotion::factor`]). Every row has one entry, or
/// two (a coupler), so its `w` is the dense solve's bit for bit
/// ([`BlockDiagonalCholesky::row_quadratic_form`]).
///
/// # Errors
/// As [`constraint_rows`] but for the factorization.
pub(crate) fn constraint_rows_with<T: Scalar>(
    model: &MultibodyModel<T>,
    chol: &mut BlockDiagonalCholesky<T>,
    q0: &DVector<T>,
    u: &DVector<T>,
    dt: T,
) -> Result<Vec<ConstraintRow<T>>> {
    let mut specs: Vec<RowSpec<T>> = Vec::new();
    for l in &model.limits {
        let q = q0[l.q_index];
        if l.lower.is_finite() {
            specs.push((
                ConstraintKind::LowerLimit(l.v_index),
                vec![(l.v_index, T::one())],
                Regularization::NearRigid {
                    g0: q - lit(l.lower),
                },
                (Some(T::zero()), None),
            ));
        }
        if l.upper.is_finite() {
            specs.push((
                ConstraintKind::UpperLimit(l.v_index),
                vec![(l.v_index, -T::one())],
                Regularization::NearRigid {
                    g0: lit::<T>(l.upper) - q,
                },
                (Some(T::zero()), None),
            ));
        }
    }
    for (i, c) in model.couplers.iter().enumerate() {
        let rho: T = lit(c.multiplier);
        specs.push((
            ConstraintKind::Coupler(i),
            vec![(c.follower.1, T::one()), (c.leader.1, -rho)],
            Regularization::NearRigid {
                g0: q0[c.follower.0] - rho * q0[c.leader.0] - lit(c.offset),
            },
            (None, None),
        ));
    }
    for (j, (t, &v_index)) in model.transmissions.iter().zip(&model.actuators).enumerate() {
        let TransmissionKind::Servo {
            kp,
            kv,
            force_limit,
        } = t.kind
        else {
            continue;
        };
        let q_index = model.coordinate_of(v_index)?;
        let g2 = t.gear * t.gear;
        let bound = (force_limit.is_finite()).then(|| dt * lit::<T>(t.gear.abs() * force_limit));
        specs.push((
            ConstraintKind::Servo(j),
            vec![(v_index, T::one())],
            Regularization::Servo {
                Kp: g2 * kp,
                Kd: g2 * kv,
                q_d: servo_target(t, u[j]),
                q0: q0[q_index],
            },
            (bound.map(|b| -b), bound),
        ));
    }
    for f in &model.friction {
        let bound = dt * lit::<T>(f.force);
        specs.push((
            ConstraintKind::Friction(f.v_index),
            vec![(f.v_index, T::one())],
            Regularization::Friction,
            (Some(-bound), Some(bound)),
        ));
    }
    if specs.is_empty() {
        return Ok(Vec::new());
    }
    let beta = lit::<T>(near_rigid_factor());
    let mut rows = Vec::with_capacity(specs.len());
    // The last single-entry row's velocity index and `w`: a joint's lower and upper limit rows
    // (`c = ±e_k`, one after the other) have one `w`, bit for bit (the solve is odd in its
    // right-hand side, and `(−1)(−x) = x`).
    let mut last: Option<(usize, T)> = None;
    let mut w_of = |entries: &[(usize, T)]| match entries {
        [(k, c)] if c.re().abs() == 1.0 => match last {
            Some((j, w)) if j == *k => w,
            _ => {
                let w = chol.row_quadratic_form(entries);
                last = Some((*k, w));
                w
            }
        },
        _ => chol.row_quadratic_form(entries),
    };
    for (kind, entries, regularization, (lower, upper)) in specs {
        // `w = c A⁻¹ cᵀ` of a near-rigid row, solved in the cliques of its entries only.
        let (R, v_hat) = match regularization {
            Regularization::NearRigid { g0 } => (beta * w_of(&entries), -g0 / (dt + dt)),
            Regularization::Friction => (beta * w_of(&entries), T::zero()),
            Regularization::Servo { Kp, Kd, q_d, q0 } => {
                let stiffness = dt * lit::<T>(Kp) + lit::<T>(Kd);
                (
                    T::one() / (dt * stiffness),
                    -lit::<T>(Kp) * (q0 - q_d) / stiffness,
                )
            }
        };
        rows.push(ConstraintRow {
            kind,
            entries,
            R,
            v_hat,
            lower,
            upper,
        });
    }
    Ok(rows)
}

/// Impulse bounds of a row (lowest, highest), `None` for infinite.
type Bounds<T> = (Option<T>, Option<T>);

/// What a row is made from: its kind, entries, regularization and impulse bounds.
type RowSpec<T> = (
    ConstraintKind,
    Vec<(usize, T)>,
    Regularization<T>,
    Bounds<T>,
);

/// A servo's target joint position `q_d = clamp(u)/g` (rad or m).
pub fn servo_target<T: Scalar>(t: &Transmission, u: T) -> T {
    t.clamped(u) / lit::<T>(t.gear)
}

/// The first-order sensitivities of a row's bias `v̂` and regularization `R` (f64), for the
/// analytic step derivatives: `∂v̂/∂q0` (tangent, as `(velocity index, value)`), `∂v̂/∂u`
/// (`(actuator, value)`) and whether `R` is near-rigid, `R = β²/(4π²) w(q0)`, whose
/// derivative comes from `∂A/∂q0`.
#[derive(Clone, Debug, PartialEq)]
pub struct RowSensitivity {
    /// `∂v̂/∂q0` entries.
    pub v_hat_q: Vec<(usize, f64)>,
    /// `∂v̂/∂u` entry.
    pub v_hat_u: Option<(usize, f64)>,
    /// `R = near_rigid_factor() · w`: the `R` the analytic derivatives differentiate through
    /// `w`; `None` for a servo (gains only).
    pub near_rigid: Option<f64>,
}

/// The [`RowSensitivity`] of `row`, a row the step of `model` made with input `u` and
/// step `dt`.
pub fn row_sensitivity(
    model: &MultibodyModel<f64>,
    row: &ConstraintRow<f64>,
    u: &DVector<f64>,
    dt: f64,
) -> RowSensitivity {
    let rate = -1.0 / (2.0 * dt);
    let near_rigid = Some(near_rigid_factor());
    match row.kind {
        // v̂ = −g0/(2δt) with g0 = Σ c_k q_k − const: ∂v̂/∂q_k = −c_k/(2δt).
        ConstraintKind::LowerLimit(_)
        | ConstraintKind::UpperLimit(_)
        | ConstraintKind::Coupler(_) => RowSensitivity {
            v_hat_q: row.entries.iter().map(|&(k, c)| (k, rate * c)).collect(),
            v_hat_u: None,
            near_rigid,
        },
        ConstraintKind::Friction(_) => RowSensitivity {
            v_hat_q: Vec::new(),
            v_hat_u: None,
            near_rigid,
        },
        ConstraintKind::Servo(j) => {
            let t = &model.transmissions[j];
            let g2 = t.gear * t.gear;
            let (Kp, Kd) = match t.kind {
                TransmissionKind::Servo { kp, kv, .. } => (g2 * kp, g2 * kv),
                TransmissionKind::Effort => (0.0, 1.0),
            };
            let slope = Kp / (dt * Kp + Kd);
            let v_index = model.actuators[j];
            let du = if t.input_inside(u[j]) {
                slope / t.gear
            } else {
                0.0
            };
            RowSensitivity {
                v_hat_q: vec![(v_index, -slope)],
                v_hat_u: Some((j, du)),
                near_rigid: None,
            }
        }
    }
}
