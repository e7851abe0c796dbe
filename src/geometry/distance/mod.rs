//! Generic re-evaluation of a contact's active feature pair (DESIGN "Derivatives", ICF ext.
//! Sec. X-B): signed distance φ, unit normal n̂ and witness points in any `T: Scalar`, so that
//! derivatives with respect to the geometry poses `X_WA`, `X_WB` and to the geometry sizes
//! flow through them.
//!
//! The geometric query ([`crate::collision::find_contacts`]) runs once per step in f64
//! (parry3d-f64) and records for every contact point which features are active
//! ([`ActiveFeature`]). [`feature_distance`] evaluates that pair again, without a new query,
//! at the same or other poses and sizes and in dual numbers. At the query's poses and sizes it
//! reproduces the query's φ, n̂ and witness points (to rounding).
//!
//! # The forms
//!
//! Each geometry G contributes a **core point**, a material point whose coordinates in G's
//! frame are affine in the sizes ([`CorePoint`]):
//!
//! ```text
//!   P_G = b + s ⊙ a,        P = R_WG P_G + p_WG                                   (1)
//! ```
//!
//! with the size axes `a` of [`ShapeSize::axes`]: a box's half extents (a vertex is
//! `s ⊙ a`, `s ∈ {±1}³`; a point inside a face has `s = ±e_i` along the face normal and its
//! in-face coordinates in `b`), a cylinder's `(r, r, h)` (a rim point is
//! `(r cos θ, r sin θ, ±h)`), a capsule's `(0, 0, h)` (its segment: an end is `(0, 0, ±h)`),
//! and zero for a sphere, a half-space and a convex mesh. A rim point against a plane of the
//! other geometry is not material in its angle θ: it is the rim's extreme point along the
//! geometry's outward normal `o` (geometry frame),
//!
//! ```text
//!   P_G = b + (r o_x, r o_y, ±h) / ‖(o_x, o_y)‖                                   (1′)
//! ```
//!
//! so that a cylinder lying or rolling on a plane keeps its contact point under the axis, as
//! the query does (a material rim point would run around the rim at first order). A **rounded** core point has the
//! shape's radius ρ swept around it along the normal: a sphere's centre, a point of a
//! capsule's segment, a point of a cylinder's axis (for contact on the curved side, away from
//! the rims); otherwise ρ = 0 and the core point is on the surface (vertices, face points, rim
//! points, a cylinder cap).
//!
//! The normal (from A to B, world) comes from the feature pair ([`FeatureKind`]), with
//! `w = P_B − P_A`:
//!
//! ```text
//!   (2a) plane of A:        n̂ = R_WA n_A          (half-space, box or mesh face, cylinder cap)
//!   (2b) plane of B:        n̂ = R_WB n_B
//!   (2c) line–line:         n̂ = σ (û_A × û_B) / ‖û_A × û_B‖,   û_A = R_WA u_A,  û_B = R_WB u_B
//!   (2d) line of A–point:   n̂ = (1 − û_A û_Aᵀ) w / ‖(1 − û_A û_Aᵀ) w‖   (and point–line of B)
//!   (2e) point–point:       n̂ = w / ‖w‖
//! ```
//!
//! Lines are box and mesh edges, a capsule's segment, a cylinder's axis (rounded core) or
//! side generator, and a rim's tangent `(−sin θ, cos θ, 0)`; σ = ±1 orients (2c) from A to B
//! as the query's normal was. The signed distance is
//!
//! ```text
//!   d = (P_B − P_A) · n̂,        φ = d − ρ_A − ρ_B.                                 (3)
//! ```
//!
//! Because the core points are material points of their features, (3) is the distance of
//! the features: in (2a) `P_A` stays on A's plane, so d is the height of `P_B` over that plane;
//! in (2c) both points stay on their lines and n̂ is normal to both, so d is the distance of the
//! lines; in (2d) n̂ is normal to A's line through `P_A`, so d is the distance of `P_B` from
//! it. The witness points are the closest points `C_A`, `C_B` of the two features, moved onto
//! the surfaces:
//!
//! ```text
//!   p_WPa = C_A + ρ_A n̂,   p_WPb = C_B − ρ_B n̂,   so that  p_WPb − p_WPa = φ n̂,     (4)
//! ```
//!
//! with `C_B = P_B, C_A = P_B − d n̂` (2a); `C_A = P_A, C_B = P_A + d n̂` (2b); the closest
//! points of the two lines (2c); the foot of the point on the line (2d); and the core points
//! themselves (2e). The only divisions are the normalizations in (2c)-(2e); a vanishing
//! direction is an error, never a `sqrt(0)` (whose dual part is NaN).
//!
//! # Which pair is active
//!
//! At query time (f64), each witness point is moved to its core point and located on its
//! shape: on which faces, edges, ends, rims it lies (within 1 nm). The first of (2a)/(2b),
//! (2c), (2d), (2e) whose normal is the query's (within 1e-3 rad, the accuracy of parry's
//! GJK on curved shapes) is recorded; (2d) and (2e) need the core points apart along the
//! normal, which rounded cores always are. parry's box–box, box–half-space and polytope
//! manifolds return clipped points (a point on a face of one geometry where an edge of the
//! other crosses it): such a point is a material point of the geometry that owns the edge or
//! vertex, measured against the plane of the other geometry's face (2a/2b). When no pair
//! reproduces the query's normal (for instance clipped points of an edge–edge separating axis,
//! or overlapping sharp features), the query's normal is carried by A (2a): still a smooth
//! function of the poses, and exact at the query's poses.
//!
//! At the query's poses and sizes the re-evaluation reproduces the query's φ and n̂ to
//! rounding: face normals are the query's own, line directions are recorded perpendicular to
//! it, and for (2d)/(2e) the stray part of the core offset (normal to n̂ and to the line) is
//! taken out of the point's core. The witness points satisfy (4) exactly, and so reproduce the
//! query's up to the query's own inconsistency `‖p_WPb − p_WPa − φ n̂‖`: rounding for every
//! shape but the cylinder, where GJK may misplace a witness point along a flat direction of
//! the surface by up to millimetres (while φ and n̂ stay accurate). The feature pair's closest
//! points are then the more accurate witnesses.
//!
//! First derivatives of φ are those of the distance of the two shapes wherever that distance
//! is smooth (the envelope theorem: the closest points may be held as material points). At
//! feature switches (a sphere crossing from a face region to an edge region, flat face–face
//! contact) the derivative is that of the recorded feature pair.
//!
//! A convex mesh has no size parameters ([`ShapeSize::ConvexMesh`] carries none), so size
//! derivatives of a mesh cannot be requested: only its pose differentiates.
//!
//! Files: `feature.rs` (the f64 descriptions [`CorePoint`], [`FeatureKind`] and their
//! classification at query time), `twist.rs` (the derivatives with respect to a geometry's
//! twist in closed form, [`twist_derivative`]), `tests/` (comparison with the query and with finite
//! differences for every supported pair).
#![allow(non_snake_case)]

mod feature;
#[cfg(test)]
mod tests;
mod twist;

use nalgebra::Vector3;

pub(crate) use feature::{classify, ConvexTopology, LocalShape};
pub use feature::{CorePoint, FeatureKind};
pub use twist::{twist_derivative, twisted_pose, TwistDerivative, TwistGradient, TwistJacobian};

use crate::error::{Error, Result};
use crate::geometry::shape::Shape;
pub use crate::geometry::shape::ShapeSize;
use crate::math::{rotate, rotate_back, Pose};
use crate::scalar::{lit, Scalar};

/// The active feature pair of a contact, in the geometries' own frames (f64): enough to
/// re-evaluate the signed distance of this pair at other poses or sizes without a new query
/// ([`feature_distance`], whose module doc gives the forms).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ActiveFeature {
    /// Witness point on geometry A, A's frame (m).
    pub p_AoPa_A: Vector3<f64>,
    /// Witness point on geometry B, B's frame (m).
    pub p_BoPb_B: Vector3<f64>,
    /// Contact normal (from A to B), A's frame.
    pub nhat_A: Vector3<f64>,
    /// parry's packed feature id on A (vertex, edge or face).
    pub feature_a: u32,
    /// parry's packed feature id on B.
    pub feature_b: u32,
    /// Core point of A as a material point of A's sizes, A's frame: the witness point, or on
    /// a rounded surface the centre, segment or axis point under it.
    pub point_a: CorePoint,
    /// Core point of B as a material point of B's sizes, B's frame.
    pub point_b: CorePoint,
    /// Which feature pair defines the normal.
    pub kind: FeatureKind,
}

/// Signed distance, normal and witness points of one contact's active feature pair, eqs.
/// (3)-(4), all in world frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FeatureDistance<T: Scalar> {
    /// Signed distance φ (m), negative when overlapping.
    pub phi: T,
    /// Unit normal n̂ from A to B (world).
    pub nhat_W: Vector3<T>,
    /// Witness point on A's surface (m, world).
    pub p_WPa: Vector3<T>,
    /// Witness point on B's surface (m, world); `p_WPb − p_WPa = φ n̂`.
    pub p_WPb: Vector3<T>,
}

/// `σ v/‖v‖`, or an error when `v` vanishes (dual `sqrt(0)` has no derivative).
fn unit<T: Scalar>(v: Vector3<T>, sign: f64, what: &str) -> Result<Vector3<T>> {
    let n2 = v.norm_squared();
    // Branch on the real part: a zero direction has no normal, whatever its derivative.
    if n2.re() <= 0.0 || !n2.re().is_finite() {
        return Err(Error::invalid(
            "feature",
            what,
            "degenerate feature pair: its normal direction vanishes at this pose",
        ));
    }
    Ok(v * (lit::<T>(sign) / n2.sqrt()))
}

/// An error unless `size_a` and `size_b` are sizes of the kinds of `shape_a` and `shape_b`.
fn check_sizes<T: Scalar>(
    shape_a: &Shape,
    size_a: &ShapeSize<T>,
    shape_b: &Shape,
    size_b: &ShapeSize<T>,
) -> Result<()> {
    for (name, shape, size) in [("size_a", shape_a, size_a), ("size_b", shape_b, size_b)] {
        if !size.matches(shape) {
            return Err(Error::invalid(
                name,
                format!("{size:?}"),
                &format!("sizes must be those of the shape ({})", shape.kind()),
            ));
        }
    }
    Ok(())
}

/// Re-evaluates the active feature pair `feature` of a contact between geometry A (shape
/// `shape_a`, sizes `size_a`, world pose `X_WA` of its geometry frame) and geometry B, in
/// `T`: φ, n̂ and witness points by eqs. (1)-(4) of the module doc.
///
/// `feature` is the one [`find_contacts`](crate::collision::find_contacts) recorded,
/// with A and B in the order it reported them. At the poses and sizes of the query the result
/// equals the query's contact (witness points: up to the query's own inconsistency, see the
/// module doc); elsewhere it is the same feature pair moved (no new query).
///
/// # Errors
/// [`Error::InvalidParameter`] if a size does not match its shape's kind, or if the feature
/// pair has no normal at these poses (edge–edge with parallel edges, a point on the other
/// geometry's line or point; never at the query's poses).
///
/// # Examples
/// ```
/// use nalgebra::Vector3;
/// use num_dual::Dual64;
/// use stiction::geometry::distance::feature_distance;
/// use stiction::collision::{find_contacts, CollisionScene, Geometry};
/// use stiction::geometry::Shape;
/// use stiction::math::Pose;
/// use stiction::multibody::model::BodyId;
///
/// let geometry = |body, shape| Geometry::new(format!("{body:?}"), body, Pose::identity(), shape);
/// let sphere = Shape::Sphere { radius: 0.1 };
/// let scene = CollisionScene::new(vec![
///     geometry(BodyId::World, Shape::HalfSpace),
///     geometry(BodyId::Body(0), sphere.clone()),
/// ])?;
/// let X_WB = Pose::translation(Vector3::new(0.0, 0.0, 0.095));
/// let contact = find_contacts(&scene, &[Pose::identity(), X_WB], 0.01)?[0];
/// // dφ/dr by a dual number seeded on the radius: −1.
/// let size_b = stiction::geometry::distance::ShapeSize::Sphere {
///     radius: Dual64::new(0.1, 1.0),
/// };
/// let d = feature_distance(
///     &Shape::HalfSpace,
///     &Shape::HalfSpace.size(),
///     &Pose::identity(),
///     &sphere,
///     &size_b,
///     &X_WB.cast(),
///     &contact.feature,
/// )?;
/// assert!((d.phi.re + 0.005).abs() < 1e-12 && (d.phi.eps + 1.0).abs() < 1e-12);
/// # Ok::<(), stiction::error::Error>(())
/// ```
pub fn feature_distance<T: Scalar>(
    shape_a: &Shape,
    size_a: &ShapeSize<T>,
    X_WA: &Pose<T>,
    shape_b: &Shape,
    size_b: &ShapeSize<T>,
    X_WB: &Pose<T>,
    feature: &ActiveFeature,
) -> Result<FeatureDistance<T>> {
    check_sizes(shape_a, size_a, shape_b, size_b)?;
    let v = |x: &Vector3<f64>| x.map(lit::<T>);
    // Eq. (1): core points in world; a rim point against a plane by eq. (1′), along the
    // plane's normal (outward for A, inward for B).
    let plane = match feature.kind {
        FeatureKind::FaceA { nhat_A } => rotate(&X_WA.R, &v(&nhat_A)),
        FeatureKind::FaceB { nhat_B } => rotate(&X_WB.R, &v(&nhat_B)),
        _ => Vector3::zeros(),
    };
    let P_A = X_WA.transform_point(
        &feature
            .point_a
            .eval_toward(&size_a.axes(), &rotate_back(&X_WA.R, &plane))?,
    );
    let P_B = X_WB.transform_point(
        &feature
            .point_b
            .eval_toward(&size_b.axes(), &rotate_back(&X_WB.R, &-plane))?,
    );
    let w = P_B - P_A;
    // Eq. (2): the normal, and the closest points (C_A, C_B) of the two features, eq. (4).
    let (nhat_W, C_A, C_B) = match feature.kind {
        FeatureKind::FaceA { nhat_A } => {
            let n = rotate(&X_WA.R, &v(&nhat_A));
            (n, P_B - n * w.dot(&n), P_B)
        }
        FeatureKind::FaceB { nhat_B } => {
            let n = rotate(&X_WB.R, &v(&nhat_B));
            (n, P_A, P_A + n * w.dot(&n))
        }
        FeatureKind::EdgeEdge { u_A, u_B, sign } => {
            let (uA, uB) = (rotate(&X_WA.R, &v(&u_A)), rotate(&X_WB.R, &v(&u_B)));
            let n = unit(uA.cross(&uB), sign, "edge-edge")?;
            // Closest points P_A + s û_A, P_B + t û_B: (P_B + t û_B − P_A − s û_A) ⟂ û_A, û_B.
            let (a, b, c) = (uA.dot(&uA), uA.dot(&uB), uB.dot(&uB));
            let (e, f) = (uA.dot(&w), uB.dot(&w));
            let det = b * b - a * c;
            let s = (b * f - e * c) / det;
            let t = (a * f - b * e) / det;
            (n, P_A + uA * s, P_B + uB * t)
        }
        FeatureKind::EdgeA { u_A } => {
            let u = rotate(&X_WA.R, &v(&u_A));
            let foot = P_A + u * (u.dot(&w) / u.dot(&u));
            (unit(P_B - foot, 1.0, "line-point")?, foot, P_B)
        }
        FeatureKind::EdgeB { u_B } => {
            let u = rotate(&X_WB.R, &v(&u_B));
            let foot = P_B - u * (u.dot(&w) / u.dot(&u));
            (unit(foot - P_A, 1.0, "line-point")?, P_A, foot)
        }
        FeatureKind::PointPoint => (unit(w, 1.0, "point-point")?, P_A, P_B),
    };
    // Eq. (3).
    let rho = |point: &CorePoint, size: &ShapeSize<T>| {
        if point.rounded {
            size.radius()
        } else {
            T::zero()
        }
    };
    let (rho_A, rho_B) = (rho(&feature.point_a, size_a), rho(&feature.point_b, size_b));
    let phi = w.dot(&nhat_W) - rho_A - rho_B;
    Ok(FeatureDistance {
        phi,
        nhat_W,
        p_WPa: C_A + nhat_W * rho_A,
        p_WPb: C_B - nhat_W * rho_B,
    })
}
