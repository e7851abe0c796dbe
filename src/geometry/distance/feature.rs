//! The active feature pair of a contact, described at query time in f64 (see the module doc
//! of [`crate::geometry::distance`] for the forms and eqs. (1)-(4)).
//!
//! [`classify`] turns the query's witness points and normal into two [`CorePoint`]s and a
//! [`FeatureKind`]: it finds, on each geometry, the planar faces and the straight lines
//! (edges, a capsule's or a cylinder's axis direction, a cylinder rim's tangent) through the
//! witness point, and picks the first feature pair whose normal reproduces the query's.
#![allow(non_snake_case)]

use nalgebra::Vector3;

use crate::error::{Error, Result};
use crate::geometry::shape::Shape;
use crate::math::Pose;
use crate::scalar::Scalar;

/// Distance (m) within which a witness point counts as lying on a face, edge, vertex, rim or
/// end of its shape. parry's witness points lie on the surface to rounding (~1e-16 m), or to
/// ~1e-12 m where GJK works on a curved shape (cylinders), so 1 nm separates "on" from "off"
/// with a wide margin for shapes of millimetres to metres.
const ON_FEATURE_TOL: f64 = 1e-9;

/// Angle (rad) within which a candidate normal (a face normal, a cross product of lines, an
/// offset from a line or a point) counts as the query's normal. parry's normals are exact to
/// rounding except where GJK works on a curved shape (cylinders), where they carry its
/// stopping tolerance (~1e-5 rad seen); 1e-3 rad accepts those and still tells features
/// apart, except next to a switch between two of them, where either is right to first order.
/// The value decides which pair is recorded, not the numbers at the query's poses (see
/// [`classify`]).
const NORMAL_ANGLE_TOL: f64 = 1e-3;

/// Sine of the angle below which two lines are treated as parallel (no line–line normal):
/// near-parallel lines would give a normal that turns as 1/sin with the poses.
const PARALLEL_SIN_TOL: f64 = 1e-3;

/// Shortest core-to-core offset (m) that defines a line–point or point–point normal; closer
/// (or overlapping) sharp features have no such normal and fall back to eq. (2a).
const MIN_OFFSET: f64 = 1e-7;

/// The core point of one side of a contact, module doc eq. (1): a material point of the
/// geometry whose coordinates in the geometry frame depend linearly on the shape's sizes,
/// `p_G = base + scale ⊙ a`, with `a` the size axes of [`super::ShapeSize::axes`] (m) — half
/// extents of a box, `(r, r, h)` of a cylinder, `(0, 0, h)` of a capsule's segment, zero for
/// the other shapes — and, when `rounded`, the shape's radius swept around it.
///
/// Examples: a box vertex has `base = 0`, `scale = s ∈ {±1}³`; a point inside the box face
/// `+x` has `scale = (1, 0, 0)` and its in-face coordinates in `base`; a cylinder rim point has
/// `scale = (cos θ, sin θ, ±1)`; a capsule's segment end has `scale = (0, 0, ±1)` and is
/// rounded; a sphere's centre is `0`, rounded; a convex mesh vertex (no sizes) has
/// `scale = 0`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CorePoint {
    /// Size-independent part (m, geometry frame).
    pub base: Vector3<f64>,
    /// Coefficients of the size axes (dimensionless, geometry frame).
    pub scale: Vector3<f64>,
    /// Whether the shape's radius ([`super::ShapeSize::radius`]) is swept around this point
    /// along the normal: the centre of a sphere, a point of a capsule's segment, a point of a
    /// cylinder's axis under its curved side. Otherwise the point is on the surface.
    pub rounded: bool,
    /// A point of a cylinder's rim against a plane of the other geometry, module doc eq. (1′):
    /// its angle on the rim follows the plane's normal instead of the material, so that the
    /// point stays the rim's lowest over the plane when the cylinder rolls about its axis.
    pub rim: bool,
}

impl CorePoint {
    /// The point `base + scale ⊙ axes` (m, geometry frame) for size axes `axes` (m).
    pub fn eval<T: Scalar>(&self, axes: &Vector3<T>) -> Vector3<T> {
        Vector3::from_fn(|i, _| {
            crate::scalar::lit::<T>(self.base[i]) + axes[i] * crate::scalar::lit::<T>(self.scale[i])
        })
    }

    /// The point (m, geometry frame) for size axes `axes` when the geometry's outward normal
    /// at the contact is `outward` (geometry frame): [`CorePoint::eval`], except for a rim
    /// point, eq. (1′): `base + (r ô_xy, ±h)` with `ô_xy` the unit projection of `outward` on
    /// the rim's plane, the rim's extreme point along `outward`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a rim point whose outward normal is along the axis
    /// (the rim has no extreme point; never at the query's poses).
    pub fn eval_toward<T: Scalar>(
        &self,
        axes: &Vector3<T>,
        outward: &Vector3<T>,
    ) -> Result<Vector3<T>> {
        if !self.rim {
            return Ok(self.eval(axes));
        }
        let n2 = outward.x * outward.x + outward.y * outward.y;
        if n2.re() <= 0.0 || !n2.re().is_finite() {
            return Err(Error::invalid(
                "feature",
                "cylinder rim",
                "degenerate feature pair: the plane's normal is along the cylinder's axis",
            ));
        }
        let radial = n2.sqrt();
        let lit = crate::scalar::lit::<T>;
        Ok(Vector3::new(
            lit(self.base.x) + axes.x * outward.x / radial,
            lit(self.base.y) + axes.y * outward.y / radial,
            lit(self.base.z) + axes.z * lit(self.scale.z),
        ))
    }
}

/// Which feature pair defines the contact normal `n̂` (from A to B) of a contact, module doc
/// eq. (2). `P_A`, `P_B` are the contact's core points ([`CorePoint`]s in world frame).
///
/// Directions are unit vectors in the named geometry frame; `sign` (±1) orients the
/// edge–edge normal from A to B, as the query's normal was at query time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FeatureKind {
    /// A plane of A against a point of B, eq. (2a): `n̂ = R_WA nhat_A`. Also the fallback when
    /// no feature pair reproduces the query's normal (the normal is then carried by A).
    FaceA {
        /// Normal from A to B (unit, A's frame): A's outward face normal.
        nhat_A: Vector3<f64>,
    },
    /// A point of A against a plane of B, eq. (2b): `n̂ = R_WB nhat_B`.
    FaceB {
        /// Normal from A to B (unit, B's frame): minus B's outward face normal.
        nhat_B: Vector3<f64>,
    },
    /// Two non-parallel lines, eq. (2c): `n̂ = sign · (R_WA u_A × R_WB u_B)/‖·‖`.
    EdgeEdge {
        /// Direction of A's line (unit, A's frame).
        u_A: Vector3<f64>,
        /// Direction of B's line (unit, B's frame).
        u_B: Vector3<f64>,
        /// Orientation (±1).
        sign: f64,
    },
    /// A line of A through `P_A` against the point `P_B`, eq. (2d):
    /// `n̂ = (1 − ûûᵀ)(P_B − P_A)/‖·‖`, `û = R_WA u_A`.
    EdgeA {
        /// Direction of A's line (unit, A's frame).
        u_A: Vector3<f64>,
    },
    /// The point `P_A` against a line of B through `P_B`, eq. (2d) with the roles swapped:
    /// `n̂ = (1 − ûûᵀ)(P_B − P_A)/‖·‖`, `û = R_WB u_B`.
    EdgeB {
        /// Direction of B's line (unit, B's frame).
        u_B: Vector3<f64>,
    },
    /// Two points, eq. (2e): `n̂ = (P_B − P_A)/‖P_B − P_A‖`.
    PointPoint,
}

/// Faces and edges of a convex mesh's hull (f64, geometry frame), used to classify witness
/// points on it. Built once per scene from the hull the query uses.
#[derive(Clone, Debug)]
pub(crate) struct ConvexTopology {
    /// Hull vertices (m).
    points: Vec<Vector3<f64>>,
    /// Faces as (outward unit normal, offset `n·p` in m).
    planes: Vec<(Vector3<f64>, f64)>,
    /// Edges as vertex index pairs (each once per adjacent face).
    edges: Vec<[usize; 2]>,
}

impl ConvexTopology {
    /// From hull vertices and faces given as (outward normal, vertex cycle).
    pub(crate) fn new<'a>(
        points: Vec<Vector3<f64>>,
        faces: impl Iterator<Item = (Vector3<f64>, &'a [u32])>,
    ) -> Self {
        let mut planes = Vec::new();
        let mut edges = Vec::new();
        for (normal, cycle) in faces {
            let n = normal.normalize();
            planes.push((n, n.dot(&points[cycle[0] as usize])));
            for (k, &i) in cycle.iter().enumerate() {
                edges.push([i as usize, cycle[(k + 1) % cycle.len()] as usize]);
            }
        }
        ConvexTopology {
            points,
            planes,
            edges,
        }
    }
}

/// A shape with, for a convex mesh, its hull topology.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LocalShape<'a> {
    /// The shape.
    pub(crate) shape: &'a Shape,
    /// Hull topology (convex meshes only).
    pub(crate) hull: Option<&'a ConvexTopology>,
}

/// Signs (−1, 0, +1) of the box coordinates of `p` that lie on a face `±h_i`.
fn box_boundary(h: &Vector3<f64>, p: &Vector3<f64>) -> [f64; 3] {
    std::array::from_fn(|i| {
        if (p[i].abs() - h[i]).abs() <= ON_FEATURE_TOL {
            p[i].signum()
        } else {
            0.0
        }
    })
}

/// Where a point lies on a cylinder of `radius` and `half_length`: unit radial direction if
/// on the side, sign of z if on a cap.
fn cylinder_boundary(
    radius: f64,
    half_length: f64,
    p: &Vector3<f64>,
) -> (Option<Vector3<f64>>, f64) {
    let rho = p.xy().norm();
    let side = ((rho - radius).abs() <= ON_FEATURE_TOL && rho > 0.0)
        .then(|| Vector3::new(p.x / rho, p.y / rho, 0.0));
    let cap = if (p.z.abs() - half_length).abs() <= ON_FEATURE_TOL {
        p.z.signum()
    } else {
        0.0
    };
    (side, cap)
}

/// One geometry's side of a contact: its shape and its core point (m, geometry frame).
struct Side<'a> {
    local: LocalShape<'a>,
    /// The witness point moved inward by the radius when `rounded`.
    core: Vector3<f64>,
    /// Whether the shape's radius is swept around `core` ([`CorePoint::rounded`]).
    rounded: bool,
}

impl<'a> Side<'a> {
    /// The core of the witness point `witness` (m, geometry frame) of a shape whose outward
    /// normal there is `m` (unit, geometry frame): a sphere's centre, a point of a capsule's
    /// segment, a point of a cylinder's axis when the witness lies on the curved side (not on
    /// a rim) with `m` radial; otherwise the witness itself.
    fn new(local: LocalShape<'a>, witness: &Vector3<f64>, m: &Vector3<f64>) -> Self {
        let radius = match local.shape {
            Shape::Sphere { radius } | Shape::Capsule { radius, .. } => Some(*radius),
            Shape::Cylinder {
                radius,
                half_length,
            } => match cylinder_boundary(*radius, *half_length, witness) {
                (Some(radial), cap) if cap == 0.0 && alignment(&radial, m, 0.5) == Some(1.0) => {
                    Some(*radius)
                }
                _ => None,
            },
            _ => None,
        };
        Side {
            local,
            core: witness - m * radius.unwrap_or(0.0),
            rounded: radius.is_some(),
        }
    }

    /// The core point as a material point of the sizes: every coordinate that lies on a
    /// size-defined boundary scales with that size.
    fn core_point(&self) -> CorePoint {
        let core = &self.core;
        let scale = match self.local.shape {
            Shape::Box { half_extents } => Vector3::from(box_boundary(half_extents, core)),
            Shape::Capsule { half_length, .. } => {
                let on_end = (core.z.abs() - half_length).abs() <= ON_FEATURE_TOL;
                Vector3::new(0.0, 0.0, if on_end { core.z.signum() } else { 0.0 })
            }
            Shape::Cylinder {
                radius,
                half_length,
            } if !self.rounded => {
                let (side, cap) = cylinder_boundary(*radius, *half_length, core);
                let radial = side.unwrap_or_else(Vector3::zeros);
                Vector3::new(radial.x, radial.y, cap)
            }
            _ => Vector3::zeros(),
        };
        let axes = self.local.shape.size::<f64>().axes();
        CorePoint {
            base: core - scale.component_mul(&axes),
            scale,
            rounded: self.rounded,
            rim: false,
        }
    }

    /// The core point against a plane of the other geometry whose normal is `outward` (this
    /// geometry's outward normal, unit, geometry frame): a cylinder rim point becomes the
    /// rim's extreme point along `outward`, eq. (1′), unless `outward` is within
    /// [`PARALLEL_SIN_TOL`] of the axis (flat cap contact, where the recorded point stays
    /// material). At `outward` it is the recorded point.
    fn core_point_against_plane(&self, outward: &Vector3<f64>) -> CorePoint {
        let point = self.core_point();
        let Shape::Cylinder {
            radius,
            half_length,
        } = self.local.shape
        else {
            return point;
        };
        let radial = outward.xy().norm();
        match cylinder_boundary(*radius, *half_length, &self.core) {
            (Some(_), cap) if cap != 0.0 && !self.rounded && radial >= PARALLEL_SIN_TOL => {
                let scale = Vector3::new(outward.x / radial, outward.y / radial, cap);
                let axes = self.local.shape.size::<f64>().axes();
                CorePoint {
                    base: self.core - scale.component_mul(&axes),
                    scale,
                    rounded: false,
                    rim: true,
                }
            }
            _ => point,
        }
    }

    /// Calls `f` with the outward unit normal of every planar face through the core, and
    /// returns how many surface patches (planar faces, a cylinder's side) meet there.
    fn faces(&self, f: &mut dyn FnMut(Vector3<f64>)) -> usize {
        let core = &self.core;
        match self.local.shape {
            Shape::HalfSpace => {
                f(Vector3::z());
                1
            }
            Shape::Box { half_extents } => {
                let signs = box_boundary(half_extents, core);
                let mut count = 0;
                for (i, s) in signs.iter().enumerate() {
                    if *s != 0.0 {
                        f(Vector3::ith(i, *s));
                        count += 1;
                    }
                }
                count
            }
            Shape::Cylinder { .. } if self.rounded => 1,
            Shape::Cylinder {
                radius,
                half_length,
            } => {
                let (side, cap) = cylinder_boundary(*radius, *half_length, core);
                if cap != 0.0 {
                    f(Vector3::z() * cap);
                }
                usize::from(cap != 0.0) + usize::from(side.is_some())
            }
            Shape::ConvexMesh { .. } | Shape::Ellipsoid { .. } => {
                let mut count = 0;
                for (n, d) in self.local.hull.map_or(&[][..], |h| &h.planes[..]) {
                    if (n.dot(core) - d).abs() <= ON_FEATURE_TOL {
                        f(*n);
                        count += 1;
                    }
                }
                count
            }
            Shape::Sphere { .. } | Shape::Capsule { .. } => 0,
        }
    }

    /// Whether a planar face through the core has the outward normal `m` (unit), and how many
    /// surface patches meet there.
    fn face_along(&self, m: &Vector3<f64>) -> (bool, usize) {
        let mut found = false;
        let patches = self.faces(&mut |N| {
            found |= alignment(&N, m, 0.5) == Some(1.0);
        });
        (found, patches)
    }

    /// Calls `f` with the unit direction of every straight line through the core: box and
    /// mesh edges, a capsule's segment away from its ends, a cylinder's axis (rounded core),
    /// a rim's tangent and the side's generator through a rim point.
    fn lines(&self, f: &mut dyn FnMut(Vector3<f64>)) {
        let core = &self.core;
        match self.local.shape {
            Shape::Box { half_extents } => {
                // An edge point has one free coordinate (the edge's axis); a vertex has the
                // three edges that meet there; a face point has no edge.
                let signs = box_boundary(half_extents, core);
                let on_boundary = signs.iter().filter(|s| **s != 0.0).count();
                for (i, s) in signs.iter().enumerate() {
                    if on_boundary == 3 || (on_boundary == 2 && *s == 0.0) {
                        f(Vector3::ith(i, 1.0));
                    }
                }
            }
            Shape::Capsule { half_length, .. } => {
                if (core.z.abs() - half_length).abs() > ON_FEATURE_TOL {
                    f(Vector3::z());
                }
            }
            Shape::Cylinder { .. } if self.rounded => f(Vector3::z()),
            Shape::Cylinder {
                radius,
                half_length,
            } => {
                if let (Some(radial), cap) = cylinder_boundary(*radius, *half_length, core) {
                    if cap != 0.0 {
                        f(Vector3::new(-radial.y, radial.x, 0.0));
                    }
                    f(Vector3::z());
                }
            }
            Shape::ConvexMesh { .. } | Shape::Ellipsoid { .. } => {
                let Some(hull) = self.local.hull else { return };
                for [i, j] in &hull.edges {
                    let (a, b) = (hull.points[*i], hull.points[*j]);
                    let e = b - a;
                    let t = ((core - a).dot(&e) / e.norm_squared()).clamp(0.0, 1.0);
                    if (a + e * t - core).norm() <= ON_FEATURE_TOL {
                        f(e.normalize());
                    }
                }
            }
            Shape::Sphere { .. } | Shape::HalfSpace => {}
        }
    }
}

/// `Some(±1)` when `v` (norm at least `min_norm`) is parallel or antiparallel to the unit
/// vector `n` within [`NORMAL_ANGLE_TOL`].
fn alignment(v: &Vector3<f64>, n: &Vector3<f64>, min_norm: f64) -> Option<f64> {
    let norm = v.norm();
    if norm < min_norm {
        return None;
    }
    let v = v / norm;
    (v.cross(n).norm() <= NORMAL_ANGLE_TOL).then(|| v.dot(n).signum())
}

/// `u` made perpendicular to the unit vector `n` and unit length.
fn perpendicular_to(u: &Vector3<f64>, n: &Vector3<f64>) -> Vector3<f64> {
    (u - n * n.dot(u)).normalize()
}

/// The active feature pair of one contact, from the query's witness points `p_AoPa_A` (on
/// A's surface, A's frame, m), `p_BoPb_B` (B's frame, m), normal `nhat_A` (A to B, A's frame)
/// and the relative pose `X_AB`: the core points of A and B and the [`FeatureKind`].
///
/// The faces test comes first (eq. 2a/2b): a face through a core point whose normal is the
/// query's. When both geometries offer one (flat face–face contact), the plane is taken on the
/// side whose point lies on fewer surface patches — a clipped point inside a face is measured
/// against the plane of that face, an edge or vertex of the other geometry against it; ties go
/// to A. Then edge–edge, line–point (A's lines, then B's), point–point; failing all, the
/// query's normal carried by A. The line and point forms need the core points apart along the
/// normal (`(P_B − P_A)·n̂ ≥` [`MIN_OFFSET`]): overlapping sharp features have no such normal.
///
/// The recorded pair reproduces the query's φ and n̂ exactly: face normals are the query's;
/// line directions are stored perpendicular to it (they move by at most
/// [`NORMAL_ANGLE_TOL`]); for line–point and point–point pairs, the part of the core offset
/// `P_B − P_A` normal to n̂ and to the line — rounding, or GJK's inconsistency on a curved
/// shape — is removed from the point's core. The witness points then reproduce the query's
/// up to that inconsistency, the tangential part of the query's `p_WPb − p_WPa`.
pub(crate) fn classify(
    a: LocalShape<'_>,
    b: LocalShape<'_>,
    X_AB: &Pose<f64>,
    p_AoPa_A: &Vector3<f64>,
    p_BoPb_B: &Vector3<f64>,
    nhat_A: &Vector3<f64>,
) -> (CorePoint, CorePoint, FeatureKind) {
    let n_A = nhat_A.normalize();
    let R_AB = X_AB.R;
    let n_B = R_AB.transpose() * n_A;
    let side_a = Side::new(a, p_AoPa_A, &n_A);
    let side_b = Side::new(b, p_BoPb_B, &-n_B);
    let (mut point_a, mut point_b) = (side_a.core_point(), side_b.core_point());
    let (face_a, patches_a) = side_a.face_along(&n_A);
    let (face_b, patches_b) = side_b.face_along(&-n_B);
    if face_b && (!face_a || patches_b < patches_a) {
        let point_a = side_a.core_point_against_plane(&n_A);
        return (point_a, point_b, FeatureKind::FaceB { nhat_B: n_B });
    }
    if face_a {
        let point_b = side_b.core_point_against_plane(&-n_B);
        return (point_a, point_b, FeatureKind::FaceA { nhat_A: n_A });
    }

    let w = X_AB.transform_point(&side_b.core) - side_a.core;
    let mut kind = None;
    side_a.lines(&mut |u_A| {
        side_b.lines(&mut |u_B| {
            if kind.is_none() {
                let c = u_A.cross(&(R_AB * u_B));
                if let Some(sign) = alignment(&c, &n_A, PARALLEL_SIN_TOL) {
                    kind = Some(FeatureKind::EdgeEdge {
                        u_A: perpendicular_to(&u_A, &n_A),
                        u_B: perpendicular_to(&u_B, &n_B),
                        sign,
                    });
                }
            }
        })
    });
    // Points apart along +n̂ only (see the doc above).
    let apart = |v: &Vector3<f64>| alignment(v, &n_A, MIN_OFFSET) == Some(1.0);
    let off_line = |u: &Vector3<f64>| w - u * u.dot(&w);
    side_a.lines(&mut |u_A| {
        if kind.is_none() && apart(&off_line(&u_A)) {
            let u_A = perpendicular_to(&u_A, &n_A);
            kind = Some(FeatureKind::EdgeA { u_A });
        }
    });
    side_b.lines(&mut |u_B| {
        if kind.is_none() && apart(&off_line(&(R_AB * u_B))) {
            let u_B = perpendicular_to(&u_B, &n_B);
            kind = Some(FeatureKind::EdgeB { u_B });
        }
    });
    if kind.is_none() && apart(&w) {
        kind = Some(FeatureKind::PointPoint);
    }
    // Part of w normal to n̂ and to `line` (A's frame): removed from the point's core, so
    // that eq. (2d)/(2e) give n̂ exactly.
    let stray = |line: Option<Vector3<f64>>| {
        let t = w - n_A * n_A.dot(&w);
        line.map_or(t, |u| t - u * u.dot(&t))
    };
    match kind {
        Some(FeatureKind::EdgeA { u_A }) => point_b.base -= R_AB.transpose() * stray(Some(u_A)),
        Some(FeatureKind::EdgeB { u_B }) => point_a.base += stray(Some(R_AB * u_B)),
        Some(FeatureKind::PointPoint) => point_b.base -= R_AB.transpose() * stray(None),
        _ => {}
    }
    (
        point_a,
        point_b,
        kind.unwrap_or(FeatureKind::FaceA { nhat_A: n_A }),
    )
}
