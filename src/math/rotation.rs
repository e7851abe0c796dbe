//! Unit quaternions: rotation matrices and the kinematic map `q̇ = ½ q ⊗ (0, ω_B)`.
#![allow(non_snake_case)]

use nalgebra::{Matrix3, Quaternion, Vector3};

use crate::scalar::{lit, Scalar};

/// Rotation matrix `R_WB` of a unit quaternion `(w, x, y, z)`. The quaternion is assumed
/// normalized (the step renormalizes after every update).
pub fn rotation_from_quaternion<T: Scalar>(q: &Quaternion<T>) -> Matrix3<T> {
    let (w, x, y, z) = (q.w, q.i, q.j, q.k);
    let one = T::one();
    let two: T = lit(2.0);
    Matrix3::new(
        one - two * (y * y + z * z),
        two * (x * y - w * z),
        two * (x * z + w * y),
        two * (x * y + w * z),
        one - two * (x * x + z * z),
        two * (y * z - w * x),
        two * (x * z - w * y),
        two * (y * z + w * x),
        one - two * (x * x + y * y),
    )
}

/// Time derivative of the unit quaternion `q_WB` for angular velocity `ω_W` (rad/s) expressed
/// in the parent (world) frame: `q̇ = ½ (0, ω_W) ⊗ q`.
pub fn quaternion_rate<T: Scalar>(q: &Quaternion<T>, w_W: &Vector3<T>) -> Quaternion<T> {
    let half: T = lit(0.5);
    (Quaternion::from_parts(T::zero(), *w_W) * q) * half
}

/// Symplectic-Euler quaternion update `q⁺ = normalize(q + δt · ½ (0, ω_W) ⊗ q)`
/// (DESIGN step 4, `q = q0 + δt N(q0) v` with renormalization).
pub fn integrate_quaternion<T: Scalar>(
    q: &Quaternion<T>,
    w_W: &Vector3<T>,
    dt: T,
) -> Quaternion<T> {
    let q_next = q + quaternion_rate(q, w_W) * dt;
    let norm = q_next.coords.norm();
    Quaternion::from(q_next.coords / norm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;
    use nalgebra::UnitQuaternion;

    #[test]
    fn rotation_matches_nalgebra() {
        let u = UnitQuaternion::from_euler_angles(0.4, -1.1, 2.0);
        assert_relative_eq!(
            rotation_from_quaternion(u.quaternion()),
            *u.to_rotation_matrix().matrix(),
            epsilon = 1e-14
        );
    }

    #[test]
    fn integration_converges_to_exponential_map() {
        let q0 = UnitQuaternion::from_euler_angles(0.1, 0.2, 0.3);
        let w = Vector3::new(0.5, -1.0, 2.0);
        let t = 0.3;
        let n = 30_000;
        let mut q = *q0.quaternion();
        for _ in 0..n {
            q = integrate_quaternion(&q, &w, t / n as f64);
        }
        let exact = UnitQuaternion::from_scaled_axis(w * t) * q0;
        assert!((UnitQuaternion::from_quaternion(q).angle_to(&exact)) < 1e-4);
        assert_relative_eq!(q.norm(), 1.0, epsilon = 1e-14);
    }
}
