//! [`ContactPoint`], one contact of a step: its frame, Jacobian, bias and parameters, and
//! what the collision query found for it (DESIGN step 2).
#![allow(non_snake_case)]

use nalgebra::{Matrix3, Matrix3xX, Vector3};

use crate::collision::PolygonContact;
use crate::contact::ContactParams;
use crate::geometry::ActiveFeature;
use crate::multibody::model::BodyId;
use crate::scalar::Scalar;

/// One contact of a step: where it is, how it moves with `v`, and its parameters.
///
/// The contact frame C has its z-axis along the normal `n̂` (from A to B); the contact
/// velocity `v_c = J v + b` is the velocity of B relative to A at the contact point, expressed
/// in C, so `v_n > 0` when the bodies separate. Impulses γ in C act on B (−γ on A).
#[derive(Clone, Debug)]
pub struct ContactPoint<T: Scalar> {
    /// Geometry index of A.
    pub geometry_a: usize,
    /// Geometry index of B.
    pub geometry_b: usize,
    /// Body of A.
    pub body_a: BodyId,
    /// Body of B.
    pub body_b: BodyId,
    /// Contact point, world frame (m), see [`crate::step::contact_point`].
    pub p_WC: Vector3<T>,
    /// Orientation `R_WC` of the contact frame (columns t̂1, t̂2, n̂).
    pub R_WC: Matrix3<T>,
    /// Signed distance at the start of the step φ0 (m); the penetration is `x0 = −φ0`.
    pub phi0: T,
    /// Contact Jacobian `J_i` (3 × nv).
    pub J: Matrix3xX<T>,
    /// Velocity bias `b_i` (m/s, frame C) from prescribed motion at the end of the step.
    pub b: Vector3<T>,
    /// Normal velocity at the start of the step `v_n0` (m/s), for the Lagged model.
    pub v_n0: T,
    /// Combined pair parameters.
    pub params: ContactParams<T>,
    /// What the geometric query found: the active feature pair of a point contact, or the
    /// polygon of a pressure-field contact.
    pub feature: ContactFeature,
}

/// What the geometric query found for one contact.
#[derive(Debug, PartialEq)]
pub enum ContactFeature {
    /// A point contact's active feature pair, boxed: inline (256 bytes) it made every contact
    /// of a step this large, and a pressure-field step moves a contact per polygon through the
    /// query, the assembly and the report.
    Point(Box<ActiveFeature>),
    /// A pressure-field contact's polygon ([`crate::hydroelastic`]).
    Polygon(PolygonContact),
}

impl Clone for ContactFeature {
    fn clone(&self) -> Self {
        match self {
            ContactFeature::Point(feature) => ContactFeature::Point(feature.clone()),
            ContactFeature::Polygon(polygon) => ContactFeature::Polygon(*polygon),
        }
    }

    /// Keeps `self`'s box when both are point contacts: the step derivatives write a step's
    /// contacts over the last one's without allocating.
    fn clone_from(&mut self, source: &Self) {
        match (self, source) {
            (ContactFeature::Point(this), ContactFeature::Point(feature)) => **this = **feature,
            (this, source) => *this = source.clone(),
        }
    }
}

impl ContactFeature {
    /// The polygon of a pressure-field contact.
    pub fn polygon(&self) -> Option<&PolygonContact> {
        match self {
            ContactFeature::Polygon(p) => Some(p),
            ContactFeature::Point(_) => None,
        }
    }
}

/// The world axis [`contact_frame`] makes orthogonal to `n̂` for its first tangent: x, or y
/// when n̂ is nearly along x.
fn tangent_axis<T: Scalar>(nhat: &Vector3<T>) -> Vector3<T> {
    if nhat.x.re().abs() < 0.9 {
        Vector3::x()
    } else {
        Vector3::y()
    }
}

/// A right-handed orthonormal frame `[t̂1, t̂2, n̂]` with z along the unit normal `n̂`:
/// `t̂1` is the world x-axis (or y-axis when n̂ is nearly along x) made orthogonal to n̂, so a
/// ground contact with n̂ = +z gets the world axes.
pub fn contact_frame<T: Scalar>(nhat: &Vector3<T>) -> Matrix3<T> {
    let e = tangent_axis(nhat);
    let t1 = (e - nhat * nhat.dot(&e)).normalize();
    let t2 = nhat.cross(&t1);
    Matrix3::from_columns(&[t1, t2, *nhat])
}

/// The derivatives `∂R/∂n̂_m` (m = x, y, z) of [`contact_frame`] at `nhat`, with n̂'s three
/// components as independent variables (the frame's axis `e` fixed by n̂'s value): with
/// `u = e − n̂ (n̂ · e)`, `t̂1 = u / ‖u‖` and `t̂2 = n̂ × t̂1`,
/// `∂u = −ê_m (n̂ · e) − n̂ e_m`, `∂t̂1 = (∂u − t̂1 (t̂1 · ∂u)) / ‖u‖`,
/// `∂t̂2 = ê_m × t̂1 + n̂ × ∂t̂1` and `∂n̂ = ê_m`.
pub fn contact_frame_derivative(nhat: &Vector3<f64>) -> [Matrix3<f64>; 3] {
    let e = tangent_axis(nhat);
    let u = e - nhat * nhat.dot(&e);
    let norm = u.norm();
    let t1 = u / norm;
    [0, 1, 2].map(|m| {
        let e_m = Vector3::ith(m, 1.0);
        let du = -(e_m * nhat.dot(&e)) - nhat * e[m];
        let dt1 = (du - t1 * t1.dot(&du)) / norm;
        let dt2 = e_m.cross(&t1) + nhat.cross(&dt1);
        // Entries by rows: nalgebra's `from_columns` steps an iterator per entry.
        Matrix3::new(
            dt1.x, dt2.x, e_m.x, dt1.y, dt2.y, e_m.y, dt1.z, dt2.z, e_m.z,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The closed-form derivative against `contact_frame` in dual numbers, on both sides of
    /// the switch of its axis `e` (x, then y for a normal nearly along x).
    #[test]
    fn frame_derivative_matches_dual_numbers() {
        use num_dual::Dual64;
        for n in [
            Vector3::<f64>::z(),
            Vector3::new(0.99, 0.1, 0.0).normalize(),
            Vector3::new(-0.3, 0.5, -0.8).normalize(),
            Vector3::new(-0.95, 0.2, 0.3).normalize(),
        ] {
            let dR = contact_frame_derivative(&n);
            for (m, dR_m) in dR.iter().enumerate() {
                let dual =
                    Vector3::from_fn(|i, _| Dual64::new(n[i], if i == m { 1.0 } else { 0.0 }));
                let expected = contact_frame(&dual).map(|x| x.eps);
                assert!(
                    (dR_m - expected).amax() < 1e-14,
                    "n = {n:?}, m = {m}: {dR_m} vs {expected}"
                );
            }
        }
    }

    #[test]
    fn frame_is_orthonormal_and_right_handed() {
        for n in [
            Vector3::<f64>::z(),
            Vector3::new(0.99, 0.1, 0.0).normalize(),
            Vector3::new(-0.3, 0.5, -0.8).normalize(),
        ] {
            let R = contact_frame(&n);
            assert!((R.transpose() * R - Matrix3::identity()).norm() < 1e-14);
            assert!((R.determinant() - 1.0).abs() < 1e-14);
            assert!((R.column(2) - n).norm() < 1e-15);
        }
        assert!((contact_frame(&Vector3::<f64>::z()) - Matrix3::identity()).norm() < 1e-15);
    }
}
