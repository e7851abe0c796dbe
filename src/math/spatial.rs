//! Spatial vector algebra (Featherstone, *Rigid Body Dynamics Algorithms*, Ch. 2), generic
//! over the scalar.
//!
//! A spatial motion vector is `(ω; v)` with `v` the velocity of the point at the frame's
//! origin; a spatial force is `(n; f)` with `n` the moment about the origin. Transforms are
//! built from a [`Pose`] `X_AB`.
#![allow(non_snake_case)]

use nalgebra::{Matrix3, Matrix6, Vector3, Vector6};

use crate::scalar::Scalar;

/// The skew-symmetric cross-product matrix `[a]×`, with `[a]× b = a × b`.
pub fn skew<T: Scalar>(a: &Vector3<T>) -> Matrix3<T> {
    let z = T::zero();
    Matrix3::new(z, -a.z, a.y, a.z, z, -a.x, -a.y, a.x, z)
}

/// A rigid transform `X_AB`: rotation `R` (= `R_AB`) and translation `p` (= `p_AB`, m),
/// so that a point with coordinates `p_B` in B has coordinates `R p_B + p` in A.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose<T: Scalar> {
    /// Rotation `R_AB` (orthonormal).
    pub R: Matrix3<T>,
    /// Translation `p_AB` (m).
    pub p: Vector3<T>,
}

impl<T: Scalar> Pose<T> {
    /// The identity transform.
    pub fn identity() -> Self {
        Pose {
            R: Matrix3::identity(),
            p: Vector3::zeros(),
        }
    }

    /// A pure translation.
    pub fn translation(p: Vector3<T>) -> Self {
        Pose {
            R: Matrix3::identity(),
            p,
        }
    }

    /// Composition `X_AC = X_AB · X_BC`.
    pub fn compose(&self, X_BC: &Pose<T>) -> Pose<T> {
        Pose {
            R: self.R * X_BC.R,
            p: self.p + self.R * X_BC.p,
        }
    }

    /// The inverse `X_BA`.
    pub fn inverse(&self) -> Pose<T> {
        let Rt = self.R.transpose();
        Pose {
            R: Rt,
            p: -(Rt * self.p),
        }
    }

    /// Maps a point from B to A coordinates.
    pub fn transform_point(&self, p_B: &Vector3<T>) -> Vector3<T> {
        self.R * p_B + self.p
    }

    /// Motion transform from A coordinates to B coordinates (6×6), `X_BA` in Featherstone's
    /// notation: `(ω_B; v_B) = [[Rᵀ, 0], [−Rᵀ[p]×, Rᵀ]] (ω_A; v_A)`.
    pub fn motion_to_child(&self) -> Matrix6<T> {
        let Rt = self.R.transpose();
        let mut X = Matrix6::zeros();
        X.fixed_view_mut::<3, 3>(0, 0).copy_from(&Rt);
        X.fixed_view_mut::<3, 3>(3, 3).copy_from(&Rt);
        X.fixed_view_mut::<3, 3>(3, 0)
            .copy_from(&(-(Rt * skew(&self.p))));
        X
    }

    /// This pose in another scalar type, keeping only real parts (f64 → dual, dual → f64).
    pub fn cast<U: Scalar>(&self) -> Pose<U> {
        Pose {
            R: self.R.map(|x| crate::scalar::lit(x.re())),
            p: self.p.map(|x| crate::scalar::lit(x.re())),
        }
    }
}

/// Motion cross product matrix `v×` (RBDA eq. 2.31): `crm(v) u = v ×ₘ u`.
pub fn crm<T: Scalar>(v: &Vector6<T>) -> Matrix6<T> {
    let w = skew(&v.fixed_rows::<3>(0).into_owned());
    let vl = skew(&v.fixed_rows::<3>(3).into_owned());
    let mut X = Matrix6::zeros();
    X.fixed_view_mut::<3, 3>(0, 0).copy_from(&w);
    X.fixed_view_mut::<3, 3>(3, 3).copy_from(&w);
    X.fixed_view_mut::<3, 3>(3, 0).copy_from(&vl);
    X
}

/// Force cross product matrix `v×*` = `−crm(v)ᵀ` (RBDA eq. 2.32).
pub fn crf<T: Scalar>(v: &Vector6<T>) -> Matrix6<T> {
    -crm(v).transpose()
}

/// Rigid-body spatial inertia about the body origin, in body coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpatialInertia<T: Scalar> {
    /// Mass (kg).
    pub mass: T,
    /// Centre of mass in the body frame (m).
    pub com: Vector3<T>,
    /// Rotational inertia about the centre of mass, body axes (kg·m²).
    pub inertia_com: Matrix3<T>,
}

impl<T: Scalar> SpatialInertia<T> {
    /// The 6×6 matrix `[[I_c + m[c]×[c]×ᵀ, m[c]×], [m[c]×ᵀ, m·1]]` (RBDA eq. 2.63).
    pub fn matrix(&self) -> Matrix6<T> {
        let cx = skew(&self.com);
        let m = self.mass;
        let mut I = Matrix6::zeros();
        I.fixed_view_mut::<3, 3>(0, 0)
            .copy_from(&(self.inertia_com + cx * cx.transpose() * m));
        I.fixed_view_mut::<3, 3>(0, 3).copy_from(&(cx * m));
        I.fixed_view_mut::<3, 3>(3, 0)
            .copy_from(&(cx.transpose() * m));
        I.fixed_view_mut::<3, 3>(3, 3)
            .copy_from(&(Matrix3::identity() * m));
        I
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    fn pose() -> Pose<f64> {
        let R = *nalgebra::Rotation3::from_euler_angles(0.3, -0.2, 0.7).matrix();
        Pose {
            R,
            p: Vector3::new(0.1, -0.4, 0.25),
        }
    }

    #[test]
    fn motion_transform_moves_point_velocity() {
        let X_AB = pose();
        let w_A = Vector3::new(0.3, 1.0, -2.0);
        let v_A = Vector3::new(1.0, 0.5, 0.2);
        let V_B = X_AB.motion_to_child() * Vector6::new(w_A.x, w_A.y, w_A.z, v_A.x, v_A.y, v_A.z);
        // Velocity of B's origin, expressed in A, is v_A + ω × p.
        let expected = X_AB.R.transpose() * (v_A + w_A.cross(&X_AB.p));
        assert_relative_eq!(
            V_B.fixed_rows::<3>(3).into_owned(),
            expected,
            epsilon = 1e-14
        );
    }

    #[test]
    fn compose_with_inverse_is_identity() {
        let X = pose();
        let I = X.compose(&X.inverse());
        assert_relative_eq!(I.R, Matrix3::identity(), epsilon = 1e-14);
        assert_relative_eq!(I.p, Vector3::zeros(), epsilon = 1e-14);
    }

    #[test]
    fn spatial_inertia_kinetic_energy_matches_com_form() {
        let I = SpatialInertia {
            mass: 2.0,
            com: Vector3::new(0.1, 0.2, -0.1),
            inertia_com: Matrix3::from_diagonal(&Vector3::new(0.1, 0.2, 0.3)),
        };
        let V = Vector6::new(0.5, -1.0, 2.0, 1.0, 0.0, -0.5);
        let w = V.fixed_rows::<3>(0).into_owned();
        let v_com = V.fixed_rows::<3>(3).into_owned() + w.cross(&I.com);
        let ke = 0.5 * I.mass * v_com.norm_squared() + 0.5 * w.dot(&(I.inertia_com * w));
        assert_relative_eq!(0.5 * V.dot(&(I.matrix() * V)), ke, epsilon = 1e-13);
    }
}
