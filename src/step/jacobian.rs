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
use crate::solver::ContactJacobians;

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

    /// Adds the signed point Jacobian at `p_W` (in C) to the last contact of `J` (its
    /// columns, [`ContactJacobians::add_column`]). Returns what it adds to the normal velocity
    /// `(J_C v)_z`. Only the columns of the supporting joints are stored (the others are
    /// zero), so a contact costs O(depth) instead of O(nv).
    #[inline(always)]
    pub(super) fn add_to(&self, p_W: &Vector3<T>, J: &mut ContactJacobians<T>) -> T {
        let p_C = self.R_CW * (p_W - self.p_WB);
        for (k, Rv, Rw) in &self.columns {
            J.add_column(*k, &(Rv + Rw.cross(&p_C)));
        }
        (self.V + self.Omega.cross(&p_C)).z
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{Pose, SpatialInertia};
    use crate::multibody::kinematics::{body_velocity_world, forward_kinematics};
    use crate::multibody::{JointKind, JointSpec};
    use crate::step::contact_frame;
    use nalgebra::Matrix3xX;

    /// `J v` against the twists: both sum the same terms in other orders (round-off).
    const TOLERANCE: f64 = 1e-12;

    /// A free ball, and a tree of a free root with a link on a revolute joint.
    fn model() -> MultibodyModel<f64> {
        let mut m = MultibodyModel::<f64>::new(Vector3::zeros());
        let inertia = SpatialInertia {
            mass: 1.0,
            com: Vector3::new(0.0, 0.0, -0.2),
            inertia_com: Matrix3::identity() * 0.01,
        };
        m.add_body("ball", inertia, JointSpec::new(JointKind::Free))
            .unwrap();
        let root = m
            .add_body("root", inertia, JointSpec::new(JointKind::Free))
            .unwrap();
        m.add_body(
            "link",
            inertia,
            JointSpec {
                parent: Some(root),
                X_PJ: Pose::translation(Vector3::new(0.0, 0.0, -0.4)),
                ..JointSpec::new(JointKind::Revolute { axis: Vector3::y() })
            },
        )
        .unwrap();
        m
    }

    /// Kinematics of [`model`] at a generic configuration and velocity (nv = 13).
    fn kinematics(m: &MultibodyModel<f64>) -> (MultibodyData<f64>, DVector<f64>) {
        let mut q = m.neutral_configuration();
        let poses = [
            [0.1, 0.2, 0.3, 0.9, 0.1, -0.3, 0.2],
            [-0.4, 0.5, 0.8, 0.7, -0.2, 0.4, 0.5],
        ];
        for (joint, pose) in m.joints.iter().zip(&poses) {
            q.rows_mut(joint.q_start, 7).copy_from_slice(pose);
            let n = q.rows(joint.q_start + 3, 4).norm();
            q.rows_mut(joint.q_start + 3, 4).unscale_mut(n);
        }
        q[14] = 0.4;
        let v = DVector::from_fn(m.nv(), |i, _| 0.7 * (i as f64 + 1.0).sin() + 0.1 * i as f64);
        let mut data = MultibodyData::new(m);
        forward_kinematics(m, &mut data, &q, &v);
        (data, v)
    }

    /// The contact Jacobian `J_C` (3 × nv) of bodies `(a, b)` at `p_W` for the normal
    /// `nhat_W`, written as the assembly writes it (B's columns, then A's added), and the
    /// normal velocity the writes return.
    fn contact_jacobian(
        m: &MultibodyModel<f64>,
        data: &MultibodyData<f64>,
        (a, b): (BodyId, BodyId),
        nhat_W: &Vector3<f64>,
        p_W: &Vector3<f64>,
        v: &DVector<f64>,
    ) -> (Matrix3xX<f64>, f64) {
        let R_CW = contact_frame(nhat_W).transpose();
        let (mut jacobian_a, mut jacobian_b) = (FrameJacobian::empty(), FrameJacobian::empty());
        jacobian_a.remake(m, data, (a, -1.0), &R_CW, v);
        jacobian_b.remake(m, data, (b, 1.0), &R_CW, v);
        let mut J = ContactJacobians::new(m.nv());
        J.push_contact();
        let v_n = jacobian_b.add_to(p_W, &mut J) + jacobian_a.add_to(p_W, &mut J);
        (J.dense(0), v_n)
    }

    /// Velocity (world) of the material point of `body` at `p_W`, from the body's twist.
    fn point_velocity(data: &MultibodyData<f64>, body: BodyId, p_W: &Vector3<f64>) -> Vector3<f64> {
        match body {
            BodyId::Body(i) => {
                let (omega_W, v_WBo) = body_velocity_world(data, i);
                v_WBo + omega_W.cross(&(p_W - data.X_WB[i].p))
            }
            _ => Vector3::zeros(),
        }
    }

    /// `J_C v` is B's point velocity minus A's at the contact point, expressed in the contact
    /// frame, computed from the bodies' twists: a free body against the world, a body in a
    /// tree against a free body, and two bodies of one tree (whose shared root columns add).
    #[test]
    fn contact_jacobian_gives_the_relative_velocity_in_the_contact_frame() {
        let m = model();
        let (data, v) = kinematics(&m);
        let (ball, root, link) = (BodyId::Body(0), BodyId::Body(1), BodyId::Body(2));
        let nhat_W = Vector3::new(0.3, -0.5, 0.8).normalize();
        let p_W = Vector3::new(0.2, 0.1, -0.3);
        for bodies in [(BodyId::World, ball), (ball, link), (root, link)] {
            let (J, v_n) = contact_jacobian(&m, &data, bodies, &nhat_W, &p_W, &v);
            let v_c = &J * &v;
            let relative =
                point_velocity(&data, bodies.1, &p_W) - point_velocity(&data, bodies.0, &p_W);
            let expected = contact_frame(&nhat_W).transpose() * relative;
            assert!(
                (v_c - expected).norm() <= TOLERANCE * expected.norm(),
                "{bodies:?}: J v = {v_c:?}, twists give {expected:?}"
            );
            assert!(
                (v_n - v_c.z).abs() <= TOLERANCE * expected.norm(),
                "{bodies:?}"
            );
        }
    }

    /// The sign convention: with the world as A and the normal +z from A into B, a ball
    /// rising has `v_n > 0` (separating), a ball falling `v_n < 0`, and a ball sliding along
    /// +x slips along the first tangent (the world x-axis).
    #[test]
    fn normal_velocity_is_positive_when_separating() {
        let m = model();
        let mut q = m.neutral_configuration();
        q[2] = 0.5;
        let p_W = Vector3::new(0.0, 0.0, 0.3);
        let mut data = MultibodyData::new(&m);
        // The ball's free-joint velocities are (ω; v), world axes at the identity.
        for (speed, sign) in [(1.0, 1.0), (-2.0, -1.0)] {
            let mut v = DVector::zeros(m.nv());
            v[5] = speed;
            v[3] = 0.25;
            forward_kinematics(&m, &mut data, &q, &v);
            let bodies = (BodyId::World, BodyId::Body(0));
            let (J, v_n) = contact_jacobian(&m, &data, bodies, &Vector3::z(), &p_W, &v);
            let v_c = &J * &v;
            assert_eq!(v_n.signum(), sign);
            assert!((v_c.z - speed).abs() <= TOLERANCE);
            assert!((v_c.x - 0.25).abs() <= TOLERANCE && v_c.y.abs() <= TOLERANCE);
        }
    }

    /// The force acts on B's surface against the world or a prescribed body, midway between
    /// the witness points for two tree bodies.
    #[test]
    fn contact_point_is_on_b_against_a_static_body() {
        let (p_WPa, p_WPb) = (Vector3::new(0.0, 0.0, 0.1), Vector3::new(0.0, 0.0, -0.1));
        assert_eq!(contact_point(BodyId::World, p_WPa, p_WPb), p_WPb);
        assert_eq!(contact_point(BodyId::Prescribed(0), p_WPa, p_WPb), p_WPb);
        assert_eq!(
            contact_point(BodyId::Body(3), p_WPa, p_WPb),
            Vector3::zeros()
        );
    }
}
