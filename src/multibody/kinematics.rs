//! Forward kinematics: body poses `X_WB`, spatial velocities and body Jacobians (RBDA
//! Sec. 4.4), in three levels as Pinocchio's `forwardKinematics`: [`update_poses`] (what the
//! CRBA needs), [`update_velocities`] (what RNEA adds) and [`update_jacobians`] (what contact
//! needs); [`forward_kinematics`] runs all three. Spatial transforms are applied through the
//! pose (`R`, `p`) without forming 6×6 matrices, and nothing allocates after
//! [`MultibodyData::new`].
#![allow(non_snake_case)]

use nalgebra::{DMatrix, DVector, Matrix3xX, Vector3, Vector6};

use crate::math::{skew, Pose};
use crate::multibody::model::MultibodyModel;
use crate::scalar::Scalar;

/// Per-configuration kinematic quantities, made by [`MultibodyData::new`] and filled by
/// [`forward_kinematics`].
#[derive(Clone, Debug)]
pub struct MultibodyData<T: Scalar> {
    /// Pose of each body in the world, `X_WB` (nb).
    pub X_WB: Vec<Pose<T>>,
    /// Pose of each body in its parent's frame (the world for roots), `X_PB` (nb); the
    /// motion transform from parent to body coordinates is its
    /// [`Pose::motion_to_child`], applied by [`Pose::motion_in_child`].
    pub X_PB: Vec<Pose<T>>,
    /// Motion subspace columns of each body's joint, body coordinates.
    pub S: Vec<Vec<Vector6<T>>>,
    /// Joint bias accelerations `c_J = Ṡ v` (body coordinates).
    pub c_J: Vec<Vector6<T>>,
    /// Spatial velocity `(ω_B; v_B)` of each body in body coordinates (rad/s, m/s).
    pub V: Vec<Vector6<T>>,
    /// Body Jacobians `V_B = J_B v` (6 × nv each), body coordinates.
    pub J_B: Vec<DMatrix<T>>,
}

impl<T: Scalar> MultibodyData<T> {
    /// Buffers sized for `model`.
    pub fn new(model: &MultibodyModel<T>) -> Self {
        let nb = model.bodies.len();
        MultibodyData {
            X_WB: vec![Pose::identity(); nb],
            X_PB: vec![Pose::identity(); nb],
            S: model
                .joints
                .iter()
                .map(|j| vec![Vector6::zeros(); j.kind.nv()])
                .collect(),
            c_J: vec![Vector6::zeros(); nb],
            V: vec![Vector6::zeros(); nb],
            J_B: vec![DMatrix::zeros(6, model.nv()); nb],
        }
    }
}

/// Computes poses, body velocities and body Jacobians at `(q, v)` (RBDA Sec. 4.4):
/// [`update_poses`], [`update_velocities`] and [`update_jacobians`].
pub fn forward_kinematics<T: Scalar>(
    model: &MultibodyModel<T>,
    data: &mut MultibodyData<T>,
    q: &DVector<T>,
    v: &DVector<T>,
) {
    update_poses(model, data, q);
    update_velocities(model, data, v);
    update_jacobians(model, data);
}

/// Poses `X_PB` and `X_WB` and motion subspaces `S` at `q`: all that the mass matrix needs.
pub fn update_poses<T: Scalar>(
    model: &MultibodyModel<T>,
    data: &mut MultibodyData<T>,
    q: &DVector<T>,
) {
    for (i, joint) in model.joints.iter().enumerate() {
        let X_JM = joint.kind.transform(q.rows(joint.q_start, joint.kind.nq()));
        let X_PB = joint.X_PJ.compose(&X_JM);
        joint.kind.motion_subspace_into(&X_JM, &mut data.S[i]);
        data.X_WB[i] = match joint.parent {
            None => X_PB,
            Some(p) => data.X_WB[p].compose(&X_PB),
        };
        data.X_PB[i] = X_PB;
    }
}

/// Body velocities `V = X_PB⁻¹ V_P + S v` and joint bias accelerations `c_J` at `v`.
/// Requires [`update_poses`].
pub fn update_velocities<T: Scalar>(
    model: &MultibodyModel<T>,
    data: &mut MultibodyData<T>,
    v: &DVector<T>,
) {
    for (i, joint) in model.joints.iter().enumerate() {
        let mut V = Vector6::zeros();
        for (k, s) in data.S[i].iter().enumerate() {
            V += s * v[joint.v_start + k];
        }
        data.c_J[i] = joint.kind.bias_acceleration(&V);
        if let Some(p) = joint.parent {
            V += data.X_PB[i].motion_in_child(&data.V[p]);
        }
        data.V[i] = V;
    }
}

/// Body Jacobians `J_B`: the parent's columns moved into the body frame, then the joint's own
/// columns `S`. Only the columns of ancestors' joints are written; the others stay zero from
/// [`MultibodyData::new`], so a scene of many free bodies does not rewrite nb × 6 × nv zeros.
/// Requires [`update_poses`].
pub fn update_jacobians<T: Scalar>(model: &MultibodyModel<T>, data: &mut MultibodyData<T>) {
    for (i, joint) in model.joints.iter().enumerate() {
        if let Some(p) = joint.parent {
            let (head, tail) = data.J_B.split_at_mut(i);
            let (J_P, J) = (&head[p], &mut tail[0]);
            let X_PB = &data.X_PB[i];
            let mut a = Some(p);
            while let Some(j) = a {
                let ancestor = &model.joints[j];
                for c in ancestor.v_start..ancestor.v_start + ancestor.kind.nv() {
                    let col: Vector6<T> = J_P.fixed_view::<6, 1>(0, c).into_owned();
                    J.fixed_view_mut::<6, 1>(0, c)
                        .copy_from(&X_PB.motion_in_child(&col));
                }
                a = ancestor.parent;
            }
        }
        for (k, s) in data.S[i].iter().enumerate() {
            data.J_B[i].set_column(joint.v_start + k, s);
        }
    }
}

/// Jacobian (3 × nv, world frame) of the velocity of the material point of body `body`
/// that coincides with world point `p_W` (m): `v_p_W = R_WB (v_B + ω_B × p_B)`.
pub fn point_jacobian<T: Scalar>(
    data: &MultibodyData<T>,
    body: usize,
    p_W: &Vector3<T>,
) -> Matrix3xX<T> {
    let X = &data.X_WB[body];
    let p_B = X.R.transpose() * (p_W - X.p);
    let J = &data.J_B[body];
    let J_ang = J.rows(0, 3);
    let J_lin = J.rows(3, 3);
    let local = J_lin - skew(&p_B) * J_ang;
    let out = X.R * local;
    Matrix3xX::from_column_slice(out.as_slice())
}

/// World-frame angular velocity (rad/s) and velocity of the body origin (m/s).
pub fn body_velocity_world<T: Scalar>(
    data: &MultibodyData<T>,
    body: usize,
) -> (Vector3<T>, Vector3<T>) {
    let R = data.X_WB[body].R;
    let V = &data.V[body];
    (
        R * V.fixed_rows::<3>(0).into_owned(),
        R * V.fixed_rows::<3>(3).into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::SpatialInertia;
    use crate::multibody::{JointKind, JointSpec};
    use approx::assert_relative_eq;
    use nalgebra::Matrix3;

    /// Double pendulum with a free root: the point Jacobian must match finite differences of
    /// the point's world position along `q̇ = N(q) v`.
    #[test]
    fn point_jacobian_matches_finite_differences() {
        let mut m = MultibodyModel::<f64>::new(Vector3::zeros());
        let inertia = SpatialInertia {
            mass: 1.0,
            com: Vector3::new(0.0, 0.0, -0.2),
            inertia_com: Matrix3::identity() * 0.01,
        };
        let b0 = m
            .add_body("root", inertia, JointSpec::new(JointKind::Free))
            .unwrap();
        let b1 = m
            .add_body(
                "link",
                inertia,
                JointSpec {
                    parent: Some(b0),
                    X_PJ: Pose::translation(Vector3::new(0.0, 0.0, -0.4)),
                    ..JointSpec::new(JointKind::Revolute { axis: Vector3::y() })
                },
            )
            .unwrap();
        let mut q = m.neutral_configuration();
        q.rows_mut(0, 7)
            .copy_from_slice(&[0.1, 0.2, 0.3, 0.9, 0.1, -0.3, 0.2]);
        let n = q.rows(3, 4).norm();
        for k in 3..7 {
            q[k] /= n;
        }
        q[7] = 0.4;
        let v = DVector::from_vec(vec![0.3, -0.2, 0.5, 1.0, -1.0, 0.5, 2.0]);
        let mut d = MultibodyData::new(&m);
        forward_kinematics(&m, &mut d, &q, &v);
        let p_B = Vector3::new(0.05, 0.0, -0.3);
        let p_W = d.X_WB[b1].transform_point(&p_B);
        let Jv = point_jacobian(&d, b1, &p_W) * &v;
        let h = 1e-7;
        let mut pos = |s: f64| {
            let mut qq = q.clone();
            for j in &m.joints {
                let next = j.kind.integrate(
                    q.rows(j.q_start, j.kind.nq()),
                    v.rows(j.v_start, j.kind.nv()),
                    s,
                );
                qq.rows_mut(j.q_start, j.kind.nq()).copy_from_slice(&next);
            }
            forward_kinematics(&m, &mut d, &qq, &v);
            d.X_WB[b1].transform_point(&p_B)
        };
        let fd = (pos(h) - pos(-h)) / (2.0 * h);
        assert_relative_eq!(Jv, fd, epsilon = 1e-6);
    }
}
