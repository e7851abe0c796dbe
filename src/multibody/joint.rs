//! Joint kinds: the joint transform `X_JM(q)`, motion subspace `S` (constant in the child
//! frame M) and the kinematic map `q̇ = N(q) v`.
//!
//! Conventions (child frame M is the body frame):
//! - revolute: `q = θ` (rad), `v = θ̇`, rotation about the unit `axis` of J;
//! - prismatic: `q = d` (m), `v = ḋ`, translation along `axis`;
//! - planar: `q = (x, y, θ)` in J's xy-plane, `v = q̇ = (ẋ, ẏ, θ̇)` (parent frame);
//! - free: `q = (p_JB (3), quaternion w, x, y, z)`, `v = (ω_J (3), v_J (3))`: angular velocity
//!   and velocity of the body origin, both expressed in the parent's joint frame J (as Drake's
//!   quaternion floating mobilizer), `ṗ = v_J`, `q̇uat = ½ (0, ω_J) ⊗ quat`;
//! - ball: `q = quaternion (w, x, y, z)`, `v = ω_J` (3), the free joint's rotation alone:
//!   the body turns about its origin, `q̇uat = ½ (0, ω_J) ⊗ quat`;
//! - fixed: no coordinates.
//!
//! Planar, free and ball joints have parent-frame velocities, so their motion subspace in the child
//! frame, `S(q) = blockdiag(Rᵀ, Rᵀ)` (columns as used), depends on `q`, and the joint adds the
//! bias acceleration `Ṡ v = (0, −ω_B × v_B)` (RBDA Sec. 4.4, `c_J`); a ball joint's origin
//! does not move (`v_B = 0`), so its `Ṡ v = −ω_B × ω_B` vanishes. MuJoCo's ball and free
//! joints take `ω` in the body frame instead: `ω_MuJoCo = Rᵀ ω_J`. Parent-frame linear
//! velocities keep the gyroscopic term `ω × v` out of the explicit free motion: with body-frame
//! velocities it would inflate `‖v‖` by `sqrt(1 + (ω δt)²)` every step of a rolling body.
#![allow(non_snake_case)]

use nalgebra::{DVectorView, Matrix3, Quaternion, Vector3, Vector6};

use crate::math::spatial::spatial;
use crate::math::{integrate_quaternion, rotation_from_quaternion, Pose};
use crate::scalar::Scalar;

/// The kind of a joint, with its axis where it has one (unit vector in the joint frame J).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum JointKind {
    /// Welds the body to its parent.
    Fixed,
    /// One rotational degree of freedom about `axis`.
    Revolute {
        /// Unit axis in the joint frame.
        axis: Vector3<f64>,
    },
    /// One translational degree of freedom along `axis`.
    Prismatic {
        /// Unit axis in the joint frame.
        axis: Vector3<f64>,
    },
    /// Translation in the joint's xy-plane and rotation about its z-axis.
    Planar,
    /// Six degrees of freedom with a unit quaternion.
    Free,
    /// Three rotational degrees of freedom about the joint origin, with a unit quaternion.
    Ball,
}

impl JointKind {
    /// Number of position coordinates.
    pub fn nq(&self) -> usize {
        match self {
            JointKind::Fixed => 0,
            JointKind::Revolute { .. } | JointKind::Prismatic { .. } => 1,
            JointKind::Planar => 3,
            JointKind::Free => 7,
            JointKind::Ball => 4,
        }
    }

    /// Number of velocity coordinates.
    pub fn nv(&self) -> usize {
        match self {
            JointKind::Fixed => 0,
            JointKind::Revolute { .. } | JointKind::Prismatic { .. } => 1,
            JointKind::Planar | JointKind::Ball => 3,
            JointKind::Free => 6,
        }
    }

    /// A short lowercase name (`"revolute"`, …).
    pub fn name(&self) -> &'static str {
        match self {
            JointKind::Fixed => "fixed",
            JointKind::Revolute { .. } => "revolute",
            JointKind::Prismatic { .. } => "prismatic",
            JointKind::Planar => "planar",
            JointKind::Free => "free",
            JointKind::Ball => "ball",
        }
    }

    /// Index of the unit quaternion `(w, x, y, z)` among the joint's coordinates, for the
    /// joints that have one (free: 3, ball: 0); its angular velocity is then `v[0..3]`.
    pub fn quaternion_start(&self) -> Option<usize> {
        match self {
            JointKind::Free => Some(3),
            JointKind::Ball => Some(0),
            _ => None,
        }
    }

    /// Motion subspace columns `S(q)` (6 × nv), spatial (ω; v) in the child frame, for the
    /// joint transform `X_JM` at the joint's current `q`.
    pub fn motion_subspace<T: Scalar>(&self, X_JM: &Pose<T>) -> Vec<Vector6<T>> {
        let mut S = vec![Vector6::zeros(); self.nv()];
        self.motion_subspace_into(X_JM, &mut S);
        S
    }

    /// [`JointKind::motion_subspace`] written into `S` (length nv), without allocating.
    pub fn motion_subspace_into<T: Scalar>(&self, X_JM: &Pose<T>, S: &mut [Vector6<T>]) {
        let c = |a: &Vector3<f64>| a.map(crate::scalar::lit::<T>);
        let zero = Vector3::zeros();
        let Rt = X_JM.R.transpose();
        let angular = |k: usize| spatial(Rt.column(k).into_owned(), zero);
        let linear = |k: usize| spatial(zero, Rt.column(k).into_owned());
        match self {
            JointKind::Fixed => {}
            JointKind::Revolute { axis } => S[0] = spatial(c(axis), zero),
            JointKind::Prismatic { axis } => S[0] = spatial(zero, c(axis)),
            JointKind::Planar => {
                S[0] = linear(0);
                S[1] = linear(1);
                S[2] = angular(2);
            }
            JointKind::Free => {
                for k in 0..3 {
                    S[k] = angular(k);
                    S[k + 3] = linear(k);
                }
            }
            JointKind::Ball => {
                for (k, column) in S.iter_mut().enumerate() {
                    *column = angular(k);
                }
            }
        }
    }

    /// Bias acceleration `c_J = Ṡ v` of the joint (child frame), given the joint's spatial
    /// velocity `V_J = S v = (ω_B; v_B)`: `(0; −ω_B × v_B)` for planar and free joints, zero
    /// for the others.
    pub fn bias_acceleration<T: Scalar>(&self, V_J: &Vector6<T>) -> Vector6<T> {
        match self {
            JointKind::Planar | JointKind::Free => {
                let w = V_J.fixed_rows::<3>(0).into_owned();
                let v = V_J.fixed_rows::<3>(3).into_owned();
                let mut c = Vector6::zeros();
                c.fixed_rows_mut::<3>(3).copy_from(&(-w.cross(&v)));
                c
            }
            _ => Vector6::zeros(),
        }
    }

    /// Joint transform `X_JM(q)` for this joint's coordinates `q` (length nq).
    pub fn transform<T: Scalar>(&self, q: DVectorView<T>) -> Pose<T> {
        match self {
            JointKind::Fixed => Pose::identity(),
            JointKind::Revolute { axis } => Pose {
                R: axis_angle::<T>(axis, q[0]),
                p: Vector3::zeros(),
            },
            JointKind::Prismatic { axis } => {
                Pose::translation(axis.map(crate::scalar::lit::<T>) * q[0])
            }
            JointKind::Planar => Pose {
                R: axis_angle::<T>(&Vector3::z(), q[2]),
                p: Vector3::new(q[0], q[1], T::zero()),
            },
            JointKind::Free => Pose {
                R: rotation_from_quaternion(&Quaternion::new(q[3], q[4], q[5], q[6])),
                p: Vector3::new(q[0], q[1], q[2]),
            },
            JointKind::Ball => Pose {
                R: rotation_from_quaternion(&Quaternion::new(q[0], q[1], q[2], q[3])),
                p: Vector3::zeros(),
            },
        }
    }

    /// Symplectic-Euler position update `q⁺ = q + δt N(q) v` for this joint, with the
    /// quaternion renormalized (DESIGN step 4). `q`, `v` are this joint's coordinates.
    pub fn integrate<T: Scalar>(&self, q: DVectorView<T>, v: DVectorView<T>, dt: T) -> Vec<T> {
        let mut out = vec![T::zero(); self.nq()];
        self.integrate_into(q, v, dt, &mut out);
        out
    }

    /// [`JointKind::integrate`] written into `out` (this joint's nq coordinates), which may
    /// be a view into the whole configuration: nothing allocated.
    pub fn integrate_into<T: Scalar>(
        &self,
        q: DVectorView<T>,
        v: DVectorView<T>,
        dt: T,
        out: &mut [T],
    ) {
        match self {
            JointKind::Fixed => {}
            JointKind::Revolute { .. } | JointKind::Prismatic { .. } => out[0] = q[0] + dt * v[0],
            JointKind::Planar => {
                out.copy_from_slice(&[q[0] + dt * v[0], q[1] + dt * v[1], q[2] + dt * v[2]])
            }
            JointKind::Free => {
                let quat = Quaternion::new(q[3], q[4], q[5], q[6]);
                let w_J = Vector3::new(v[0], v[1], v[2]);
                let p = Vector3::new(q[0], q[1], q[2]) + Vector3::new(v[3], v[4], v[5]) * dt;
                let quat = integrate_quaternion(&quat, &w_J, dt);
                out.copy_from_slice(&[p.x, p.y, p.z, quat.w, quat.i, quat.j, quat.k]);
            }
            JointKind::Ball => {
                let quat = Quaternion::new(q[0], q[1], q[2], q[3]);
                let quat = integrate_quaternion(&quat, &Vector3::new(v[0], v[1], v[2]), dt);
                out.copy_from_slice(&[quat.w, quat.i, quat.j, quat.k]);
            }
        }
    }
}

impl JointKind {
    /// The retraction `q ⊕ δ` of the tangent space (DESIGN "Derivatives"): `δ` has the joint's
    /// nv coordinates, ordered and framed as its velocities, and `q ⊕ δ` is one position
    /// update with velocity `δ` over a unit time, so first-order exact.
    pub fn retract<T: Scalar>(&self, q: DVectorView<T>, delta: DVectorView<T>) -> Vec<T> {
        self.integrate(q, delta, T::one())
    }

    /// The exact inverse of [`JointKind::retract`]: the `δ` with `q0 ⊕ δ = q1`. For a free
    /// joint `δp = p1 − p0` and `δθ = 2 vec(q1 q0*) / w(q1 q0*)`; a ball joint has the `δθ`
    /// alone.
    pub fn difference<T: Scalar>(&self, q1: DVectorView<T>, q0: DVectorView<T>) -> Vec<T> {
        let rotation = |k: usize| {
            let d = Quaternion::new(q1[k], q1[k + 1], q1[k + 2], q1[k + 3])
                * Quaternion::new(q0[k], q0[k + 1], q0[k + 2], q0[k + 3]).conjugate();
            let two: T = crate::scalar::lit(2.0);
            [two * d.i / d.w, two * d.j / d.w, two * d.k / d.w]
        };
        match self {
            JointKind::Free => {
                let mut delta = rotation(3).to_vec();
                delta.extend((0..3).map(|i| q1[i] - q0[i]));
                delta
            }
            JointKind::Ball => rotation(0).to_vec(),
            _ => (0..self.nq()).map(|i| q1[i] - q0[i]).collect(),
        }
    }
}

/// Rotation matrix for a unit `axis` and an angle (rad), Rodrigues' formula.
pub fn axis_angle<T: Scalar>(axis: &Vector3<f64>, angle: T) -> Matrix3<T> {
    let a = axis.map(crate::scalar::lit::<T>);
    let K = crate::math::skew(&a);
    let (s, c) = angle.sin_cos();
    Matrix3::identity() + K * s + K * K * (T::one() - c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;
    use nalgebra::DVector;

    #[test]
    fn revolute_transform_is_a_rotation_about_its_axis() {
        let axis = Vector3::new(1.0, 2.0, 2.0) / 3.0;
        let j = JointKind::Revolute { axis };
        let q = DVector::from_vec(vec![0.7]);
        let X = j.transform::<f64>(q.rows(0, 1));
        let expected =
            nalgebra::Rotation3::from_axis_angle(&nalgebra::Unit::new_normalize(axis), 0.7);
        assert_relative_eq!(X.R, *expected.matrix(), epsilon = 1e-14);
        assert_relative_eq!(X.R * axis, axis, epsilon = 1e-14);
    }

    #[test]
    fn difference_inverts_retract() {
        let j = JointKind::Free;
        let u = nalgebra::UnitQuaternion::from_euler_angles(0.3, -0.7, 1.2);
        let q = DVector::from_vec(vec![0.1, 0.2, 0.3, u.w, u.i, u.j, u.k]);
        let delta = DVector::from_vec(vec![0.2, -0.1, 0.4, 1.0, -2.0, 0.5]);
        let q1 = DVector::from_vec(j.retract(q.rows(0, 7), delta.rows(0, 6)));
        let back = j.difference(q1.rows(0, 7), q.rows(0, 7));
        assert_relative_eq!(DVector::from_vec(back), delta, epsilon = 1e-13);
    }

    #[test]
    fn ball_difference_inverts_retract_and_turns_about_the_origin() {
        let j = JointKind::Ball;
        let u = nalgebra::UnitQuaternion::from_euler_angles(-0.4, 0.9, 0.2);
        let q = DVector::from_vec(vec![u.w, u.i, u.j, u.k]);
        let delta = DVector::from_vec(vec![0.3, -0.5, 0.1]);
        let q1 = DVector::from_vec(j.retract(q.rows(0, 4), delta.rows(0, 3)));
        let back = j.difference(q1.rows(0, 4), q.rows(0, 4));
        assert_relative_eq!(DVector::from_vec(back), delta, epsilon = 1e-13);
        let X = j.transform::<f64>(q.rows(0, 4));
        assert_relative_eq!(X.R, *u.to_rotation_matrix().matrix(), epsilon = 1e-14);
        assert_eq!(X.p, Vector3::zeros());
        // ω_J along the parent's z is Rᵀ z in the body frame, with no linear part.
        let S = j.motion_subspace(&X);
        let z_B = X.R.transpose() * Vector3::z();
        assert_relative_eq!(S[2], Vector6::new(z_B.x, z_B.y, z_B.z, 0.0, 0.0, 0.0));
    }

    #[test]
    fn planar_velocities_are_in_the_parent_frame() {
        let j = JointKind::Planar;
        let q = DVector::from_vec(vec![0.0, 0.0, std::f64::consts::FRAC_PI_2]);
        let X = j.transform::<f64>(q.rows(0, 3));
        let S = j.motion_subspace(&X);
        // ẋ = 1 in the parent frame is −y in the body frame rotated by 90°.
        assert_relative_eq!(
            S[0],
            Vector6::new(0.0, 0.0, 0.0, 0.0, -1.0, 0.0),
            epsilon = 1e-15
        );
        let v = DVector::from_vec(vec![1.0, 0.0, 0.0]);
        let q1 = j.integrate(q.rows(0, 3), v.rows(0, 3), 0.1);
        assert_relative_eq!(q1[0], 0.1, epsilon = 1e-15);
    }
}
