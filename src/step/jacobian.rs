//! The contact Jacobians of a step (ICF eq. (3); DESIGN step 2): the contact velocity
//! `v_c = J_i v + b_i` in the contact frame C (z along the normal from A to B, so `v_n > 0`
//! separates) is B's point velocity minus A's at the contact point,
//! `J_i = R_CW (J_B(p) − J_A(p))`. A body's point Jacobian in C ([`FrameJacobian`]) is made
//! once per contact frame and written for each contact point of that frame, touching only the
//! columns of the joints that support the body.
#![allow(non_snake_case)]

use nalgebra::{DVector, Matrix3, Vector3};

use crate::multibody::kinematics::MultibodyData;
use crate::multibody::model::{BodyId, MultibodyModel};
use crate::scalar::{lit, Scalar};

/// Where a contact's force acts (m, world): on the surface of B (its witness point) when A is
/// the world or a prescribed body, midway between the witness points for two tree bodies.
///
/// On a static or prescribed A the force acts on B's material surface, so friction has B's own
/// moment arm even while SAP or Similar glide at a gap `φ > 0` (ICF eq. (41)); a midpoint would
/// lengthen the arm by `φ/2` and break the conservation of angular momentum about the contact
/// point (a sliding sphere would roll faster than 5/7 of its touchdown speed).
pub fn contact_point<T: Scalar>(
    body_a: BodyId,
    p_WPa: Vector3<T>,
    p_WPb: Vector3<T>,
) -> Vector3<T> {
    match body_a {
        BodyId::Body(_) => (p_WPa + p_WPb) * lit::<T>(0.5),
        BodyId::World | BodyId::Prescribed(_) => p_WPb,
    }
}

/// The columns `(k, ω_k, v_k)` (body frame) of tree body `i`'s Jacobian for the joints that
/// support it, from the body to the root; the others are zero.
fn supporting_columns<'a, T: Scalar>(
    model: &'a MultibodyModel<T>,
    data: &'a MultibodyData<T>,
    i: usize,
) -> impl Iterator<Item = (usize, Vector3<T>, Vector3<T>)> + 'a {
    std::iter::successors(Some(i), |&j| model.joints[j].parent)
        .flat_map(|j| {
            let start = model.joints[j].v_start;
            start..start + model.joints[j].kind.nv()
        })
        .map(move |k| {
            let col = data.J_B[i].column(k);
            (
                k,
                Vector3::new(col[0], col[1], col[2]),
                Vector3::new(col[3], col[4], col[5]),
            )
        })
}

/// The point Jacobian of a body seen in a contact frame C, for any point of the body, times a
/// sign (+1 for body B, −1 for body A): for each column `k` of the joints supporting it,
/// `±R_CB v_k` and `±R_CB ω_k` (its body Jacobian's columns in C). A point `p_W` then has the
/// column `±(R_CB v_k + R_CB ω_k × p_C)` with `p_C = R_CW (p_W − p_WB)`
/// (`R_CW R_WB (v_k + ω_k × p_B)`): the polygons of one patch share one frame and one body, so
/// this is made once for all of them.
pub(super) struct FrameJacobian<T: Scalar> {
    /// `R_CW` it was made for.
    R_CW: Matrix3<T>,
    /// The body's origin `p_WB` (m, world).
    p_WB: Vector3<T>,
    /// `(k, ±R_CB v_k, ±R_CB ω_k)` per supporting joint column.
    columns: Vec<(usize, Vector3<T>, Vector3<T>)>,
    /// The body's velocity in C at the step's start velocities, times the sign:
    /// `±Σ_k R_CB v_k v[k]` and `±Σ_k R_CB ω_k v[k]`, so a point's is `V + Ω × p_C`.
    V: Vector3<T>,
    Omega: Vector3<T>,
}

impl<T: Scalar> FrameJacobian<T> {
    /// No columns, in the world frame: made for a body by [`FrameJacobian::remake`].
    pub(super) fn empty() -> Self {
        FrameJacobian {
            R_CW: Matrix3::identity(),
            p_WB: Vector3::zeros(),
            columns: Vec::new(),
            V: Vector3::zeros(),
            Omega: Vector3::zeros(),
        }
    }

    /// Made again for `body` in the frame `R_CW` with `sign`, keeping its allocation: no
    /// columns for the world and prescribed bodies.
    pub(super) fn remake(
        &mut self,
        model: &MultibodyModel<T>,
        data: &MultibodyData<T>,
        (body, sign): (BodyId, T),
        R_CW: &Matrix3<T>,
        v: &DVector<T>,
    ) {
        self.columns.clear();
        self.R_CW = *R_CW;
        if let BodyId::Body(i) = body {
            let R_CB = R_CW * data.X_WB[i].R * sign;
            self.p_WB = data.X_WB[i].p;
            self.columns.extend(
                supporting_columns(model, data, i).map(|(k, w, v)| (k, R_CB * v, R_CB * w)),
            );
        }
        (self.V, self.Omega) = self.columns.iter().fold(
            (Vector3::zeros(), Vector3::zeros()),
            |(V, Omega), (k, Rv, Rw)| (V + Rv * v[*k], Omega + Rw * v[*k]),
        );
    }

    /// Writes the signed point Jacobian at `p_W` (in C) into `J_C` (3 × nv, column-major):
    /// added to it when `ADD`, over it otherwise (the first body of a contact, its other
    /// columns zero). Returns what it adds to the normal velocity `(J_C v)_z`. Only the
    /// columns of the supporting joints are touched (the others are zero), so a contact costs
    /// O(depth) instead of O(nv).
    #[inline(always)]
    pub(super) fn write<const ADD: bool>(&self, p_W: &Vector3<T>, J_C: &mut [T]) -> T {
        let p_C = self.R_CW * (p_W - self.p_WB);
        for (k, Rv, Rw) in &self.columns {
            let column = Rv + Rw.cross(&p_C);
            let out = &mut J_C[3 * k..3 * k + 3];
            if ADD {
                out.iter_mut()
                    .zip(column.iter())
                    .for_each(|(o, c)| *o += *c);
            } else {
                out.copy_from_slice(column.as_slice());
            }
        }
        (self.V + self.Omega.cross(&p_C)).z
    }
}
