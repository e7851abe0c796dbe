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

/// `R x` for a 3 × 3 matrix, written out in the order of nalgebra's product
/// (`((R₀ x₀ + R₁ x₁) + R₂ x₂)` by columns, so f64 results are the same bits): for dual
/// scalars nalgebra's generic product goes through its strided kernel, several times slower.
#[inline]
pub fn rotate<T: Scalar>(R: &Matrix3<T>, x: &Vector3<T>) -> Vector3<T> {
    Vector3::new(
        R[(0, 0)] * x.x + R[(0, 1)] * x.y + R[(0, 2)] * x.z,
        R[(1, 0)] * x.x + R[(1, 1)] * x.y + R[(1, 2)] * x.z,
        R[(2, 0)] * x.x + R[(2, 1)] * x.y + R[(2, 2)] * x.z,
    )
}

/// `Rᵀ x` for a 3 × 3 matrix, as [`rotate`].
#[inline]
pub fn rotate_back<T: Scalar>(R: &Matrix3<T>, x: &Vector3<T>) -> Vector3<T> {
    Vector3::new(
        R[(0, 0)] * x.x + R[(1, 0)] * x.y + R[(2, 0)] * x.z,
        R[(0, 1)] * x.x + R[(1, 1)] * x.y + R[(2, 1)] * x.z,
        R[(0, 2)] * x.x + R[(1, 2)] * x.y + R[(2, 2)] * x.z,
    )
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
        rotate(&self.R, p_B) + self.p
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

    /// `motion_to_child() · V_A` without forming the 6×6 matrix: the spatial motion
    /// `(ω; v)` of A coordinates in B coordinates, `(Rᵀ ω; Rᵀ (v − p × ω))` (RBDA eq. 2.24).
    pub fn motion_in_child(&self, V_A: &Vector6<T>) -> Vector6<T> {
        let (w, v) = (angular(V_A), linear(V_A));
        let Rt = self.R.transpose();
        spatial(Rt * w, Rt * (v - self.p.cross(&w)))
    }

    /// `motion_to_child()ᵀ · F_B`: a spatial force `(n; f)` of B coordinates in A coordinates,
    /// `(R n + p × R f; R f)` (RBDA eq. 2.25).
    pub fn force_in_parent(&self, F_B: &Vector6<T>) -> Vector6<T> {
        let f = self.R * linear(F_B);
        spatial(self.R * angular(F_B) + self.p.cross(&f), f)
    }

    /// This pose in another scalar type, keeping only real parts (f64 → dual, dual → f64).
    pub fn cast<U: Scalar>(&self) -> Pose<U> {
        Pose {
            R: self.R.map(|x| crate::scalar::lit(x.re())),
            p: self.p.map(|x| crate::scalar::lit(x.re())),
        }
    }
}

/// Angular part `ω` (or moment `n`) of a spatial vector.
pub fn angular<T: Scalar>(x: &Vector6<T>) -> Vector3<T> {
    Vector3::new(x[0], x[1], x[2])
}

/// Linear part `v` (or force `f`) of a spatial vector.
pub fn linear<T: Scalar>(x: &Vector6<T>) -> Vector3<T> {
    Vector3::new(x[3], x[4], x[5])
}

/// A spatial vector from its angular and linear parts.
pub fn spatial<T: Scalar>(w: Vector3<T>, v: Vector3<T>) -> Vector6<T> {
    Vector6::new(w.x, w.y, w.z, v.x, v.y, v.z)
}

/// The motion vector `x = (ω, v)`, taken about the origin, taken about the point `o` instead:
/// `(ω, v + ω × o)` (the velocity of the point of the body at `o`).
pub fn motion_about<T: Scalar>(x: &Vector6<T>, o: &Vector3<T>) -> Vector6<T> {
    let w = angular(x);
    spatial(w, linear(x) + w.cross(o))
}

/// Motion cross product `a ×ₘ b = (a_ω × b_ω; a_ω × b_v + a_v × b_ω)` (RBDA eq. 2.31), the
/// product [`crm`]`(a) b` without the matrix.
pub fn motion_cross<T: Scalar>(a: &Vector6<T>, b: &Vector6<T>) -> Vector6<T> {
    let (aw, av, bw, bv) = (angular(a), linear(a), angular(b), linear(b));
    spatial(aw.cross(&bw), aw.cross(&bv) + av.cross(&bw))
}

/// Force cross product `a ×* f = (a_ω × f_n + a_v × f_f; a_ω × f_f)` (RBDA eq. 2.32), the
/// product [`crf`]`(a) f` without the matrix.
pub fn force_cross<T: Scalar>(a: &Vector6<T>, f: &Vector6<T>) -> Vector6<T> {
    let (aw, av, fn_, ff) = (angular(a), linear(a), angular(f), linear(f));
    spatial(aw.cross(&fn_) + av.cross(&ff), aw.cross(&ff))
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

/// A spatial inertia about a frame's origin as mass `m`, first moment `h = m c` (kg·m) and
/// rotational inertia `I_o` about the origin (kg·m²): the 6×6 matrix
/// `[[I_o, [h]×], [[h]×ᵀ, m 1]]` (RBDA eq. 2.63 with `I_o = I_c − m [c]×²`) kept by its ten
/// parameters. The composite inertia of a subtree is a plain sum in this form, and a change of
/// frame costs two 3×3 products instead of two 6×6 ones (RBDA Sec. 2.13; Pinocchio's
/// `Inertia` keeps `m, c, I_c` to the same end).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OriginInertia<T: Scalar> {
    /// Mass (kg).
    pub mass: T,
    /// First mass moment `h = m c` about the origin (kg·m).
    pub h: Vector3<T>,
    /// Rotational inertia about the origin (kg·m²), symmetric.
    pub I_o: Matrix3<T>,
}

impl<T: Scalar> OriginInertia<T> {
    /// `I · V` for a spatial motion `V = (ω; v)`: `(I_o ω + h × v; m v − h × ω)`.
    pub fn apply(&self, V: &Vector6<T>) -> Vector6<T> {
        let (w, v) = (angular(V), linear(V));
        spatial(
            self.I_o * w + self.h.cross(&v),
            v * self.mass - self.h.cross(&w),
        )
    }

    /// This inertia, given in the coordinates of frame B, in those of A for the pose `X_AB`:
    /// `Xᵀ I X` with `X` = [`Pose::motion_to_child`] (RBDA eq. 2.66). With `h_r = R h`:
    /// `h_A = h_r + m p` and `I_A = R I_o Rᵀ − [h_r]×[p]× − [p]×[h_r]× − m [p]×²` (the
    /// parallel-axis theorem for a shift by `p`).
    pub fn in_parent(&self, X_AB: &Pose<T>) -> Self {
        let (R, p, m) = (&X_AB.R, &X_AB.p, self.mass);
        let h_r = R * self.h;
        let (P, H) = (skew(p), skew(&h_r));
        OriginInertia {
            mass: m,
            h: h_r + p * m,
            I_o: R * self.I_o * R.transpose() - H * P - P * H - P * P * m,
        }
    }

    /// The 6×6 matrix, for checks.
    pub fn matrix(&self) -> Matrix6<T> {
        let hx = skew(&self.h);
        let mut I = Matrix6::zeros();
        I.fixed_view_mut::<3, 3>(0, 0).copy_from(&self.I_o);
        I.fixed_view_mut::<3, 3>(0, 3).copy_from(&hx);
        I.fixed_view_mut::<3, 3>(3, 0).copy_from(&hx.transpose());
        I.fixed_view_mut::<3, 3>(3, 3)
            .copy_from(&(Matrix3::identity() * self.mass));
        I
    }
}

impl<T: Scalar> From<&SpatialInertia<T>> for OriginInertia<T> {
    /// The same inertia about the body origin, `I_o = I_c + m [c]× [c]×ᵀ`, `h = m c`.
    fn from(I: &SpatialInertia<T>) -> Self {
        let cx = skew(&I.com);
        OriginInertia {
            mass: I.mass,
            h: I.com * I.mass,
            I_o: I.inertia_com + cx * cx.transpose() * I.mass,
        }
    }
}

impl<T: Scalar> std::ops::AddAssign for OriginInertia<T> {
    fn add_assign(&mut self, other: Self) {
        self.mass += other.mass;
        self.h += other.h;
        self.I_o += other.I_o;
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

    /// The matrix-free transforms, cross products and inertias agree with their 6×6 forms.
    #[test]
    fn matrix_free_operations_match_the_matrices() {
        let X = pose();
        let V = Vector6::new(0.3, 1.0, -2.0, 1.0, 0.5, 0.2);
        let F = Vector6::new(-0.4, 0.7, 0.1, 2.0, -1.0, 0.3);
        let M = X.motion_to_child();
        assert_relative_eq!(X.motion_in_child(&V), M * V, epsilon = 1e-14);
        assert_relative_eq!(X.force_in_parent(&F), M.transpose() * F, epsilon = 1e-14);
        assert_relative_eq!(motion_cross(&V, &F), crm(&V) * F, epsilon = 1e-14);
        assert_relative_eq!(force_cross(&V, &F), crf(&V) * F, epsilon = 1e-14);
        let body = SpatialInertia {
            mass: 2.0,
            com: Vector3::new(0.1, 0.2, -0.1),
            inertia_com: Matrix3::new(0.1, 0.01, 0.0, 0.01, 0.2, 0.02, 0.0, 0.02, 0.3),
        };
        let I = OriginInertia::from(&body);
        assert_relative_eq!(I.matrix(), body.matrix(), epsilon = 1e-15);
        assert_relative_eq!(I.apply(&V), body.matrix() * V, epsilon = 1e-14);
        let moved = I.in_parent(&X);
        assert_relative_eq!(
            moved.matrix(),
            M.transpose() * body.matrix() * M,
            epsilon = 1e-14
        );
        let mut sum = I;
        sum += moved;
        assert_relative_eq!(sum.matrix(), I.matrix() + moved.matrix(), epsilon = 1e-15);
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
