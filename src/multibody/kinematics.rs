//! Forward kinematics: body poses `X_WB`, spatial velocities and body Jacobians.
#![allow(non_snake_case)]

use nalgebra::{DMatrix, DVector, Matrix3xX, Matrix6, Vector3, Vector6};

use crate::math::{skew, Pose};
use crate::multibody::model::MultibodyModel;
use crate::scalar::Scalar;

/// Per-configuration kinematic quantities, made by [`MultibodyData::new`] and filled by
/// [`forward_kinematics`].
#[derive(Clone, Debug)]
pub struct MultibodyData<T: Scalar> {
    /// Pose of each body in the world, `X_WB` (nb).
    pub X_WB: Vec<Pose<T>>,
    /// Motion transform from parent to body coordinates, `ᴮX_P` (6×6 each, nb).
    pub Xup: Vec<Matrix6<T>>,
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
            Xup: vec![Matrix6::identity(); nb],
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

/// Computes poses, body velocities and body Jacobians at `(q, v)` (RBDA Sec. 4.4).
pub fn forward_kinematics<T: Scalar>(
    model: &MultibodyModel<T>,
    data: &mut MultibodyData<T>,
    q: &DVector<T>,
    v: &DVector<T>,
) {
    for (i, joint) in model.joints.iter().enumerate() {
        let (nq, nv) = (joint.kind.nq(), joint.kind.nv());
        let X_JM = joint.kind.transform(q.rows(joint.q_start, nq));
        let X_PB = joint.X_PJ.compose(&X_JM);
        data.Xup[i] = X_PB.motion_to_child();
        data.S[i] = joint.kind.motion_subspace(&X_JM);
        let mut V = Vector6::zeros();
        for (k, s) in data.S[i].iter().enumerate() {
            V += s * v[joint.v_start + k];
        }
        data.c_J[i] = joint.kind.bias_acceleration(&V);
        match joint.parent {
            None => {
                // A root's Jacobian has only its own joint's columns (set below); the others
                // stay zero from `MultibodyData::new`, so a scene of many free bodies does not
                // rewrite nb × 6 × nv zeros per step.
                data.X_WB[i] = X_PB;
            }
            Some(p) => {
                data.X_WB[i] = data.X_WB[p].compose(&X_PB);
                V += data.Xup[i] * data.V[p];
                let (head, tail) = data.J_B.split_at_mut(i);
                tail[0].copy_from(&(data.Xup[i] * &head[p]));
            }
        }
        data.V[i] = V;
        for k in 0..nv {
            data.J_B[i].set_column(joint.v_start + k, &data.S[i][k]);
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
