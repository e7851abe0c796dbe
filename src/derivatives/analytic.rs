//! `∂r/∂θ` for the state and control directions θ = [δq0 (tangent), δv0, δu], analytically in
//! f64 (ICF ext. Sec. X-B; DESIGN "Derivatives"). The dual path ([`crate::derivatives::lifted`])
//! stays the reference and the path for named parameters.
//!
//! The dynamics part of the residual is inverse dynamics at the step's mean acceleration:
//!
//! ```text
//!   A(v − v*) = M(q0)(v − v0) + δt c(q0, v0) + δt D v − δt B u
//!             = δt ID(q0, v0, (v − v0)/δt) + δt D v − δt B u,
//! ```
//!
//! (plus `δt k (q0 − q_ref)` for each joint spring), so `∂/∂q0 = δt ∂ID/∂q + δt K`,
//! `∂/∂v0 = δt ∂ID/∂v − M` and `∂/∂u = −δt B`, with the analytic RNEA
//! derivatives of `crate::multibody::derivatives`. The contact part is
//! `crate::derivatives::contact_terms`; the constraint rows' part (limits, couplers, servos,
//! joint friction) is `add_constraint_columns`'s.
#![allow(non_snake_case)]

use nalgebra::{DMatrix, DVector, Vector6};

use crate::derivatives::contact_terms::{add_contact_columns, ContactInputs, ContactScratch};
use crate::derivatives::lifted::NominalStep;
use crate::error::{Error, Result};
use crate::math::block::BlockDiagonalCholesky;
use crate::math::Pose;
use crate::multibody::derivatives::{
    inverse_dynamics_derivatives, inverse_dynamics_derivatives_into, spatial, RneaInput,
    RneaScratch, WorldKinematics,
};
use crate::multibody::model::BodyId;
use crate::multibody::TransmissionKind;
use crate::step::constraints::row_sensitivity;
use crate::step::{assign, Simulator};

/// The columns of the constraint rows (SAP Sec. V; [`crate::step::constraints`]): a row
/// whose impulse `γ = (v̂ − c·v)/R` lies inside its set adds `−c ∂γ/∂θ` to `∂r/∂θ`, with
/// `∂γ/∂θ = (∂v̂/∂θ − γ ∂R/∂θ)/R`; a clamped row's impulse is a constant. A near-rigid row's
/// `R = β²/(4π²) w`, `w = c A⁻¹ cᵀ`, changes with `q0` through `M`:
/// `∂w/∂q0 = −xᵀ ∂(M x)/∂q0` with `x = A⁻¹ cᵀ` (the RNEA derivatives at `v = 0`, `a = x`,
/// no gravity).
fn add_constraint_columns(
    sim: &Simulator,
    nominal: &NominalStep,
    world: &WorldKinematics,
    out: &mut DMatrix<f64>,
) -> Result<()> {
    let model = &sim.model;
    let (nv, dt) = (model.nv(), sim.settings.dt);
    let problem = &nominal.problem.problem;
    let mut chol = None;
    for row in &problem.constraints {
        let e = row.eval(row.velocity(nominal.v.as_slice()));
        if e.G == 0.0 {
            continue;
        }
        let sensitivity = row_sensitivity(model, row, &nominal.u, dt);
        // ∂γ/∂θ as a row over [δq0, δv0, δu].
        let mut dgamma = DVector::<f64>::zeros(out.ncols());
        for &(k, d) in &sensitivity.v_hat_q {
            dgamma[k] += d / row.R;
        }
        if let Some((j, d)) = sensitivity.v_hat_u {
            dgamma[2 * nv + j] += d / row.R;
        }
        if let Some(factor) = sensitivity.near_rigid {
            let chol = match &mut chol {
                Some(c) => c,
                None => chol.insert(
                    BlockDiagonalCholesky::new(&problem.A, &problem.cliques)
                        .ok_or(Error::NotPositiveDefinite { index: 0 })?,
                ),
            };
            let mut c = DMatrix::zeros(nv, 1);
            for &(k, ck) in &row.entries {
                c[(k, 0)] += ck;
            }
            let x = chol.solve(&c);
            let x = DVector::from_column_slice(x.as_slice());
            let no_gravity = Vector6::zeros();
            let (dMx, _) = inverse_dynamics_derivatives(
                model,
                world,
                &DVector::zeros(nv),
                &x,
                &no_gravity,
                false,
            );
            let dw = -(dMx.transpose() * &x);
            for k in 0..nv {
                dgamma[k] -= e.gamma * factor * dw[k] / row.R;
            }
        }
        for &(k, c) in &row.entries {
            for (col, d) in dgamma.iter().enumerate() {
                out[(k, col)] -= c * d;
            }
        }
    }
    Ok(())
}

/// Buffers of [`state_residual_jacobian_into`], kept from one call to the next (the
/// simulator keeps them for [`crate::derivatives::step_jacobians`]).
#[derive(Default)]
pub struct AnalyticScratch {
    /// World-frame kinematics at `q0`.
    world: WorldKinematics,
    rnea: RneaScratch,
    /// `∂ID/∂q` and `∂ID/∂v` (nv × nv).
    dID_dq: DMatrix<f64>,
    dID_dv: DMatrix<f64>,
    /// The step's mean acceleration `(v − v0)/δt` (nv).
    a: DVector<f64>,
    /// Geometry poses at `q0`.
    X_WG: Vec<Pose<f64>>,
    contacts: ContactScratch,
}

/// `∂r/∂[δq0, δv0, δu]` (nv × (2 nv + nu)) at the converged velocities of `nominal`.
///
/// # Errors
/// Feature pairs that cannot be re-evaluated, a singular `A` (SAP and regularized Lagged).
pub fn state_residual_jacobian(sim: &Simulator, nominal: &NominalStep) -> Result<DMatrix<f64>> {
    let mut out = DMatrix::zeros(0, 0);
    state_residual_jacobian_into(sim, nominal, &mut AnalyticScratch::default(), &mut out)?;
    Ok(out)
}

/// [`state_residual_jacobian`] into `out` (written over), computed in the buffers of
/// `scratch`: the same numbers, without allocating once the buffers have their sizes.
///
/// # Errors
/// As [`state_residual_jacobian`].
pub fn state_residual_jacobian_into(
    sim: &Simulator,
    nominal: &NominalStep,
    scratch: &mut AnalyticScratch,
    out: &mut DMatrix<f64>,
) -> Result<()> {
    let model = &sim.model;
    let (nv, nu, dt) = (model.nv(), model.nu(), sim.settings.dt);
    let (q0, v0, v) = (&nominal.state.q, &nominal.state.v, &nominal.v);
    let AnalyticScratch {
        world,
        rnea,
        dID_dq,
        dID_dv,
        a,
        X_WG,
        contacts,
    } = scratch;
    // The poses of the nominal step's assembly when the simulator still has them.
    let computed;
    let X_WB = match sim.kinematics_at(q0) {
        Some(data) => {
            world.set_from(model, data);
            &data.X_WB
        }
        None => {
            let X_WB;
            (*world, X_WB) = WorldKinematics::at(model, q0);
            computed = X_WB;
            &computed
        }
    };
    assign(a, v);
    *a -= v0;
    *a /= dt;
    let gravity: Vector6<f64> = spatial(nalgebra::Vector3::zeros(), -model.gravity);
    let input = RneaInput {
        v: v0,
        a,
        a_root: &gravity,
    };
    inverse_dynamics_derivatives_into(model, world, &input, rnea, dID_dq, Some(&mut *dID_dv));
    let A = &nominal.problem.problem.A;
    let shape = (nv, 2 * nv + nu);
    if out.shape() != shape {
        *out = DMatrix::zeros(shape.0, shape.1);
    }
    // The position and velocity blocks written whole, element by element over the
    // column-major storage, and the control block zeroed.
    let (position, rest) = out.as_mut_slice().split_at_mut(nv * nv);
    let (velocity, control) = rest.split_at_mut(nv * nv);
    for (o, d) in position.iter_mut().zip(dID_dq.as_slice()) {
        *o = d * dt;
    }
    for ((o, d), a) in velocity.iter_mut().zip(dID_dv.as_slice()).zip(A.as_slice()) {
        *o = d * dt - a;
    }
    control.fill(0.0);
    for joint in &model.joints {
        for (m, d) in joint.damping.iter().enumerate() {
            let i = joint.v_start + m;
            out[(i, nv + i)] += dt * d;
        }
        // The explicit spring effort −k (q0 − q_ref) enters r as +δt k (q0 − q_ref).
        if let Some(spring) = &joint.spring {
            out[(joint.v_start, joint.v_start)] += dt * spring.stiffness;
        }
    }
    for (col, (&index, t)) in model.actuators.iter().zip(&model.transmissions).enumerate() {
        // `g · clamp(u)` passes its derivative inside the input range only; a servo's input
        // acts through its row (below).
        if t.kind == TransmissionKind::Effort && t.input_inside(nominal.u[col]) {
            out[(index, 2 * nv + col)] = -dt * t.gear;
        }
    }
    add_constraint_columns(sim, nominal, world, out)?;
    X_WG.clear();
    X_WG.extend(sim.geometries().iter().map(|g| {
        let X_WB = match g.body {
            BodyId::World => Pose::identity(),
            BodyId::Body(i) => X_WB[i],
            BodyId::Prescribed(i) => model.prescribed[i].pose(nominal.state.t),
        };
        X_WB.compose(&g.X_BG)
    }));
    // One set of buffers for all contacts: the step's twists and more.
    contacts.start_step();
    let inputs = ContactInputs {
        sim,
        world,
        X_WG,
        A,
        v,
        v0,
        t: nominal.state.t,
    };
    for c in &nominal.problem.contacts {
        add_contact_columns(&inputs, c, out, contacts)?;
    }
    Ok(())
}
