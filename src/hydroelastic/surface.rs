//! Contact surfaces of hydroelastic pairs (Elandt Ch. 5): the broad phase over elements
//! (parry3d-f64 BVHs, f64) and the polygon of one element pair in any scalar.
//!
//! - Rigid–compliant: the rigid surface inside the compliant volume, a rigid triangle clipped
//!   by a tetrahedron (or by a compliant layer), or a tetrahedron sliced by a rigid plane. The
//!   normal is the rigid surface's, the pressure the compliant field's.
//! - Compliant–compliant: the equal-pressure plane `p_A(x) = p_B(x)` of a pair of elements
//!   (both fields are linear there), slicing A's tetrahedron and clipped by B's; when both
//!   tetrahedra have a face on their surface, B's surface face is not clipped by (Elandt's
//!   duplicate-clip rule, Ch. 5: both surface faces cut the plane along the same line).
//!
//! Every polygon records its element pair ([`PolygonFeature`]) and the topology decisions of
//! its clipping ([`ClipTopology`], made on real parts): [`replayed_polygon`] evaluates it again
//! in dual numbers with exactly that topology.
//!
//! The f64 surface of a plane and a mesh (a compliant body on a rigid ground, a rigid body in a
//! compliant layer) is computed in the mesh's frame, the plane moved into it once, with the
//! generic polygon's decisions and tests ([`for_each_polygon`]).
#![allow(non_snake_case)]

use nalgebra::Vector3;
use parry3d_f64::bounding_volume::Aabb;
use parry3d_f64::partitioning::Bvh;

use crate::error::{Error, Result};
use crate::hydroelastic::clip::{
    area_centroid, clip, clip_into, slice_tet, slice_tet_fixed, tet_faces, ClipTopology, Decisions,
    HalfSpace, Record, Replay, MAX_VERTICES,
};
use crate::hydroelastic::coherence::{against_plane, PlaneCandidates};
use crate::hydroelastic::field::{aabb, HydroGeometry, RigidMesh, TetField};
use crate::math::Pose;
use crate::scalar::{lit, Scalar};

/// A hydroelastic geometry at its world pose with its modulus `E` (Pa; unused when rigid).
#[derive(Clone, Copy, Debug)]
pub struct Placed<'a, T: Scalar> {
    /// The geometry's hydroelastic representation.
    pub geometry: &'a HydroGeometry,
    /// World pose `X_WG`.
    pub X_WG: Pose<T>,
    /// Modulus `E` (Pa).
    pub modulus: T,
}

/// The pair of elements a polygon comes from: triangle or tetrahedron indices (0 for a plane
/// or layer) of geometry A and of geometry B.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PolygonFeature {
    /// Element of A.
    pub element_a: u32,
    /// Element of B.
    pub element_b: u32,
}

/// One polygon of a contact surface with what its constraint needs (Masterjohn et al.
/// Sec. IV): area, centroid, normal, pressure at the centroid and the effective pressure
/// gradient along the normal.
#[derive(Clone, Debug, PartialEq)]
pub struct ContactPolygon<T: Scalar> {
    /// The element pair.
    pub feature: PolygonFeature,
    /// Vertices in cyclic order (world, m); empty from the step's query
    /// ([`for_each_polygon`] without vertices).
    pub vertices: Vec<Vector3<T>>,
    /// Area `A` (m²).
    pub area: T,
    /// Area centroid (world, m).
    pub centroid: Vector3<T>,
    /// Unit normal from A into B (world).
    pub nhat: Vector3<T>,
    /// Pressure `p0` at the centroid (Pa), the polygon's mean pressure (the field is linear).
    pub pressure: T,
    /// Effective gradient `g` (Pa/m) of the pressure along the normal: the compliant side's,
    /// or `g_A g_B / (g_A + g_B)` (in series) for two compliant sides.
    pub gradient: T,
    /// The topology decisions of its clipping, to clip it again in another scalar.
    pub topology: ClipTopology,
}

/// A linear pressure `p(x) = a·x + b` (world).
#[derive(Clone, Copy, Debug)]
struct Linear<T: Scalar> {
    a: Vector3<T>,
    b: T,
}

impl<T: Scalar> Linear<T> {
    fn at(&self, x: &Vector3<T>) -> T {
        self.a.dot(x) + self.b
    }
}

/// One element of one side, in world coordinates and `T`.
enum Element<T: Scalar> {
    /// The boundary plane of a rigid half-space, `m` its unit outward normal.
    Plane(HalfSpace<T>),
    /// A rigid triangle with its unit outward normal.
    Triangle([Vector3<T>; 3], Vector3<T>),
    /// A compliant tetrahedron: vertices, the surface-face mask (bit `k`: the face opposite
    /// vertex `k`) and the pressure.
    Tet([Vector3<T>; 4], u8, Linear<T>),
    /// A compliant layer: its region `z ≤ 0` and the pressure.
    Layer(HalfSpace<T>, Linear<T>),
}

fn lift<T: Scalar>(x: &Vector3<f64>) -> Vector3<T> {
    x.map(lit::<T>)
}

/// The half-space `z_G · x ≤ z_G · p_WG` below the plane of a half-space geometry.
fn below<T: Scalar>(X_WG: &Pose<T>) -> HalfSpace<T> {
    let m = X_WG.R.column(2).into_owned();
    HalfSpace {
        d: m.dot(&X_WG.p),
        m,
    }
}

/// Element `e` of `side` in world coordinates.
fn element<T: Scalar>(side: &Placed<'_, T>, e: u32) -> Element<T> {
    let X = &side.X_WG;
    match side.geometry {
        HydroGeometry::RigidPlane => Element::Plane(below(X)),
        HydroGeometry::RigidMesh(m) => {
            let v = m.triangle(e as usize).map(|p| X.transform_point(&lift(&p)));
            let n = (v[1] - v[0]).cross(&(v[2] - v[0])).normalize();
            Element::Triangle(v, n)
        }
        HydroGeometry::CompliantMesh(f) => tet_element(f, X, side.modulus, e as usize),
        HydroGeometry::CompliantLayer { thickness } => {
            let region = below(X);
            let k = side.modulus / lit::<T>(*thickness);
            Element::Layer(
                region,
                Linear {
                    a: -region.m * k,
                    b: region.d * k,
                },
            )
        }
    }
}

fn tet_element<T: Scalar>(f: &TetField, X: &Pose<T>, E: T, t: usize) -> Element<T> {
    let v = f.tet(t).map(|p| X.transform_point(&lift(&p)));
    // e(x) = ∇e·R_WGᵀ(x − p_WG) + e0 in the world.
    let g = X.R * lift::<T>(&f.elements[t].gradient);
    let p = Linear {
        a: g * E,
        b: (lit::<T>(f.elements[t].offset) - g.dot(&X.p)) * E,
    };
    Element::Tet(v, f.boundary[t], p)
}

/// Whether the pair uses pressure-field contact: both geometries hydroelastic, at least one
/// compliant.
pub fn is_hydroelastic_pair(a: Option<&HydroGeometry>, b: Option<&HydroGeometry>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if a.is_compliant() || b.is_compliant())
}

/// The polygon of the element pair `feature` of `a` and `b`, `None` when it is empty (or has
/// no positive stiffness: a pressure gradient not pointing into its body, or is a degenerate
/// sliver), its topology decided on real parts and recorded.
pub fn element_polygon<T: Scalar>(
    a: &Placed<'_, T>,
    b: &Placed<'_, T>,
    feature: PolygonFeature,
) -> Option<ContactPolygon<T>> {
    let mut record = Record::default();
    let mut polygon = polygon(a, b, feature, &mut record, Kept::PositiveStiffness)?;
    polygon.topology = record.0;
    Some(polygon)
}

/// The polygon of an element pair that the f64 contact surface kept, clipped again in `T`
/// (the lifted step of [`crate::derivatives`]) replaying its recorded `topology`: the same
/// vertices, each a smooth function of the poses and moduli, so the dual parts are the exact
/// derivative of the f64 polygon even where a vertex lies within rounding of a clipping plane
/// (which the real parts in `T`, equal to the f64 values up to rounding, could decide
/// otherwise). The f64 surface's degeneracy tests are not repeated. `None` only when
/// `topology` is not a record of this element pair's clipping.
pub fn replayed_polygon<T: Scalar>(
    a: &Placed<'_, T>,
    b: &Placed<'_, T>,
    feature: PolygonFeature,
    topology: ClipTopology,
) -> Option<ContactPolygon<T>> {
    let mut replay = Replay::new(topology);
    let polygon = polygon(a, b, feature, &mut replay, Kept::PositiveStiffness)?;
    replay.finished().then_some(ContactPolygon {
        topology,
        ..polygon
    })
}

/// Relative gradient below which a polygon has no stiffness: surfaces parallel to the
/// gradient (a vertical box side in a layer) are left out deterministically rather than by the
/// sign of rounding errors.
const POSITIVE_GRADIENT: f64 = 1e-9;
/// Area, relative to the polygon's squared size, below which it is a degenerate sliver.
const NON_DEGENERATE_AREA: f64 = 1e-14;

/// Which polygons of a contact surface a query keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kept {
    /// Those whose pressure grows along the normal into the compliant side (Masterjohn et
    /// al.'s discrete model, Drake's): the convex step's, whose potentials need a stiffness
    /// `k = A g ≥ 0` per polygon.
    PositiveStiffness,
    /// Every polygon, whatever the sign of `g`: Elandt's surface (Sec. 4.3), whose force is
    /// minus the gradient of the displaced pressure's integral (Sec. 4.4.1).
    Complete,
}

/// The polygon of an element pair with its topology from `decisions`: with
/// [`Kept::PositiveStiffness`] the gradient along the normal must exceed
/// [`POSITIVE_GRADIENT`] times the field's gradient (and, for two compliant sides, each
/// side's be positive), and always the area [`NON_DEGENERATE_AREA`] times the squared size,
/// when `decisions` keeps these tests (the f64 surface). Its `topology` is left empty.
fn polygon<T: Scalar, D: Decisions>(
    a: &Placed<'_, T>,
    b: &Placed<'_, T>,
    feature: PolygonFeature,
    decisions: &mut D,
    kept: Kept,
) -> Option<ContactPolygon<T>> {
    let (ea, eb) = (element(a, feature.element_a), element(b, feature.element_b));
    // The polygon, its normal, pressure, effective gradient and the gradients of both sides
    // along the normal (the rigid side's infinite).
    let (vertices, nhat, pressure, gradient, sides) = match (&ea, &eb) {
        (Element::Plane(_) | Element::Triangle(..), _) => {
            let (poly, n, p) = rigid_compliant(&ea, &eb, decisions)?;
            let g = p.a.dot(&n);
            (poly, n, p, g, None)
        }
        (_, Element::Plane(_) | Element::Triangle(..)) => {
            let (poly, n, p) = rigid_compliant(&eb, &ea, decisions)?;
            let g = p.a.dot(&n);
            (poly, -n, p, g, None)
        }
        _ => {
            let ((poly, n, p), (ga, gb)) = compliant_compliant(&ea, &eb, decisions)?;
            (poly, n, p, ga * gb / (ga + gb), Some((ga, gb)))
        }
    };
    // Positive stiffness (active set on the real part): the pressure must grow along the
    // normal into the compliant side, into each side for two.
    let positive = || {
        sides.is_none_or(|(ga, gb): (T, T)| greater(ga.re(), 0.0) && greater(gb.re(), 0.0))
            && greater(gradient.re(), POSITIVE_GRADIENT * pressure.a.norm().re())
    };
    if vertices.len() < 3 || (kept == Kept::PositiveStiffness && !decisions.keeps(positive)) {
        return None;
    }
    let (area, centroid) = area_centroid(&vertices, &nhat, decisions);
    let kept = decisions.keeps(|| {
        // The squared size of the polygon (no square roots per vertex).
        let scale2 = vertices
            .iter()
            .map(|v| (v - vertices[0]).norm_squared().re())
            .fold(0.0, f64::max);
        greater(area.re(), NON_DEGENERATE_AREA * scale2)
    });
    if !kept {
        return None;
    }
    let pressure = pressure.at(&centroid);
    Some(ContactPolygon {
        feature,
        vertices,
        area,
        centroid,
        nhat,
        pressure,
        gradient,
        topology: ClipTopology::default(),
    })
}

/// `a > b`, false when either is NaN (so a NaN polygon is dropped, never kept).
fn greater(a: f64, b: f64) -> bool {
    a.partial_cmp(&b) == Some(std::cmp::Ordering::Greater)
}

/// A polygon with its normal and the pressure that acts on it.
type Piece<T> = (Vec<Vector3<T>>, Vector3<T>, Linear<T>);

/// Polygon, normal (rigid → compliant) and compliant pressure of a rigid and a compliant
/// element; `None` for two rigid or two half-space elements.
fn rigid_compliant<T: Scalar, D: Decisions>(
    rigid: &Element<T>,
    compliant: &Element<T>,
    decisions: &mut D,
) -> Option<Piece<T>> {
    match (rigid, compliant) {
        (Element::Plane(h), Element::Tet(v, _, p)) => Some((slice_tet(v, h, decisions), h.m, *p)),
        (Element::Triangle(t, n), Element::Tet(v, _, p)) => {
            let mut poly = t.to_vec();
            for f in &tet_faces(v, decisions) {
                poly = clip(&poly, f, decisions);
                if poly.is_empty() {
                    return None;
                }
            }
            Some((poly, *n, *p))
        }
        (Element::Triangle(t, n), Element::Layer(region, p)) => {
            Some((clip(t.as_slice(), region, decisions), *n, *p))
        }
        _ => None,
    }
}

/// Polygon, normal (A → B), pressure and the gradients of A's and B's pressures along the
/// normal (`−∇p_A·n̂`, `∇p_B·n̂`) of two compliant elements on their equal-pressure plane.
fn compliant_compliant<T: Scalar, D: Decisions>(
    a: &Element<T>,
    b: &Element<T>,
    decisions: &mut D,
) -> Option<(Piece<T>, (T, T))> {
    let pressure = |e: &Element<T>| match e {
        Element::Tet(_, _, p) | Element::Layer(_, p) => Some(*p),
        _ => None,
    };
    let (pa, pb) = (pressure(a)?, pressure(b)?);
    // p_A − p_B = 0: (a_A − a_B)·x = b_B − b_A.
    let plane = HalfSpace {
        m: pa.a - pb.a,
        d: pb.b - pa.b,
    };
    let norm = plane.m.norm();
    if !decisions.keeps(|| greater(norm.re(), 0.0)) {
        return None;
    }
    let (slicer, other) = match (a, b) {
        (Element::Tet(..), _) => (a, b),
        (_, Element::Tet(..)) => (b, a),
        _ => return None,
    };
    let Element::Tet(v, slicer_boundary, _) = slicer else {
        return None;
    };
    let mut poly = slice_tet(v, &plane, decisions);
    let clips: Vec<(HalfSpace<T>, bool)> = match other {
        Element::Tet(w, boundary, _) => {
            let faces = tet_faces(w, decisions);
            (0..4)
                .map(|k| (faces[k], boundary & (1 << k) != 0))
                .collect()
        }
        Element::Layer(region, _) => vec![(*region, true)],
        _ => return None,
    };
    for (h, on_surface) in clips {
        // Elandt's duplicate-clip rule: the slicer's surface face already bounds the polygon
        // where the other's surface face would.
        if on_surface && *slicer_boundary != 0 {
            continue;
        }
        poly = clip(&poly, &h, decisions);
        if poly.is_empty() {
            return None;
        }
    }
    let nhat = (pb.a - pa.a) / norm;
    Some(((poly, nhat, pa), (-pa.a.dot(&nhat), pb.a.dot(&nhat))))
}

/// Candidate element pairs of `a` and `b` (f64 broad phase over the BVHs), sorted.
///
/// # Errors
/// [`Error::UnsupportedPair`] for two half-spaces.
pub fn candidate_pairs(a: &Placed<'_, f64>, b: &Placed<'_, f64>) -> Result<Vec<PolygonFeature>> {
    use HydroGeometry as H;
    let pair = |ea: u32, eb: u32| PolygonFeature {
        element_a: ea,
        element_b: eb,
    };
    let mut out: Vec<PolygonFeature> = match (a.geometry, b.geometry) {
        (H::RigidPlane | H::CompliantLayer { .. }, H::RigidMesh(_) | H::CompliantMesh(_)) => {
            let crossing = matches!(a.geometry, H::RigidPlane);
            against_plane(mesh_bvh(b), &plane_in_mesh(&a.X_WG, b), crossing, 0.0)
                .map(|e| pair(0, e))
                .collect()
        }
        (H::RigidMesh(_) | H::CompliantMesh(_), H::RigidPlane | H::CompliantLayer { .. }) => {
            let crossing = matches!(b.geometry, H::RigidPlane);
            against_plane(mesh_bvh(a), &plane_in_mesh(&b.X_WG, a), crossing, 0.0)
                .map(|e| pair(e, 0))
                .collect()
        }
        (H::RigidMesh(_) | H::CompliantMesh(_), H::RigidMesh(_) | H::CompliantMesh(_)) => {
            mesh_pairs(a, b)
                .into_iter()
                .map(|(i, j)| pair(i, j))
                .collect()
        }
        _ => {
            return Err(Error::UnsupportedPair {
                a: "hydroelastic half-space".into(),
                b: "hydroelastic half-space".into(),
            })
        }
    };
    out.sort_unstable();
    Ok(out)
}

/// The half-space below the plane of the half-space geometry with pose `X_WH`, in the frame
/// of `mesh`: `s(x) = m·x − d` with `m` the plane's unit normal there.
pub(crate) fn plane_in_mesh(X_WH: &Pose<f64>, mesh: &Placed<'_, f64>) -> HalfSpace<f64> {
    let X_GW = mesh.X_WG.inverse();
    let m = X_GW.R * X_WH.R.column(2);
    HalfSpace {
        d: m.dot(&X_GW.transform_point(&X_WH.p)),
        m,
    }
}

/// The BVH of a mesh side.
fn mesh_bvh<'a>(side: &Placed<'a, f64>) -> &'a Bvh {
    side.geometry.bvh().expect("invariant: a mesh side")
}

/// Element pairs of two meshes whose boxes overlap: B's elements near A's root box, each
/// tested against A's BVH in A's frame.
fn mesh_pairs(a: &Placed<'_, f64>, b: &Placed<'_, f64>) -> Vec<(u32, u32)> {
    let (bvh_a, bvh_b) = (
        a.geometry.bvh().expect("invariant: a mesh side"),
        b.geometry.bvh().expect("invariant: a mesh side"),
    );
    let X_AB = a.X_WG.inverse().compose(&b.X_WG);
    let X_BA = X_AB.inverse();
    let root = bvh_a.root_aabb();
    let corners: Vec<Vector3<f64>> = root
        .vertices()
        .iter()
        .map(|p| X_BA.transform_point(&Vector3::new(p.x, p.y, p.z)))
        .collect();
    let near: Aabb = aabb(&corners);
    let mut out = Vec::new();
    for eb in bvh_b.intersect_aabb(&near) {
        let in_a: Vec<Vector3<f64>> = b
            .geometry
            .element_vertices(eb)
            .iter()
            .map(|p| X_AB.transform_point(p))
            .collect();
        let box_a = aabb(&in_a);
        out.extend(bvh_a.intersect_aabb(&box_a).map(|ea| (ea, eb)));
    }
    out
}

/// The contact surface of `a` and `b`: every non-empty element polygon, in the order of
/// [`for_each_polygon`].
///
/// # Errors
/// As [`candidate_pairs`].
pub fn contact_surface(
    a: &Placed<'_, f64>,
    b: &Placed<'_, f64>,
) -> Result<Vec<ContactPolygon<f64>>> {
    let mut polygons = Vec::new();
    for_each_polygon(a, b, true, |p| polygons.push(p))?;
    Ok(polygons)
}

/// Elandt's complete contact surface of `a` and `b` (Sec. 4.3): every element polygon with its
/// pressure, also those along whose normal the pressure does not grow into the compliant side
/// (a rigid face facing the nearest compliant surface, or parallel to the field's gradient),
/// which [`contact_surface`] leaves out. Its force `−∫ p n̂ dA` on a rigid side is minus the
/// gradient of the displaced pressure's integral, so its work around a closed path vanishes
/// (Sec. 4.4.1; `stiction figures elandt-conservation`). A geometry query, not the step's: the
/// convex step needs the non-negative stiffness of [`contact_surface`]'s polygons. The
/// generic polygon of each element pair, in the sorted order of [`candidate_pairs`].
///
/// # Errors
/// As [`candidate_pairs`].
pub fn complete_contact_surface(
    a: &Placed<'_, f64>,
    b: &Placed<'_, f64>,
) -> Result<Vec<ContactPolygon<f64>>> {
    Ok(candidate_pairs(a, b)?
        .into_iter()
        .filter_map(|feature| {
            let mut record = Record::default();
            let mut polygon = polygon(a, b, feature, &mut record, Kept::Complete)?;
            polygon.topology = record.0;
            Some(polygon)
        })
        .collect())
}

/// Hands every polygon of the contact surface of `a` and `b` to `found`, without collecting
/// them, in a fixed order of their element pairs (sorted, or the BVH's for a plane and a
/// compliant mesh); their vertex lists only `with_vertices`
/// (left empty otherwise: the step's query needs the area and centroid, and a vertex list
/// costs an allocation per polygon).
///
/// # Errors
/// As [`candidate_pairs`].
pub fn for_each_polygon(
    a: &Placed<'_, f64>,
    b: &Placed<'_, f64>,
    with_vertices: bool,
    found: impl FnMut(ContactPolygon<f64>),
) -> Result<()> {
    for_each_polygon_with(a, b, with_vertices, None, found)
}

/// [`for_each_polygon`] with the elements of a plane and a mesh taken from `candidates`,
/// kept from the last query of this pair (`PlaneCandidates`); the same polygons in the
/// same order. Other pairs do not use it.
///
/// # Errors
/// As [`candidate_pairs`].
pub fn for_each_polygon_with(
    a: &Placed<'_, f64>,
    b: &Placed<'_, f64>,
    with_vertices: bool,
    candidates: Option<&mut PlaneCandidates>,
    mut found: impl FnMut(ContactPolygon<f64>),
) -> Result<()> {
    use HydroGeometry as H;
    let mut deliver = |feature: PolygonFeature, polygon: Option<ContactPolygon<f64>>| {
        if let Some(mut p) = polygon {
            p.feature = feature;
            if !with_vertices {
                p.vertices = Vec::new();
            }
            found(p);
        }
    };
    // The polygon of an element pair: the f64 fast path of the pair's kinds, or the generic one.
    let polygon: Box<dyn Fn(PolygonFeature) -> Option<ContactPolygon<f64>> + '_> =
        match (a.geometry, b.geometry) {
            (H::RigidPlane | H::CompliantLayer { .. }, H::CompliantMesh(_) | H::RigidMesh(_)) => {
                plane_and_mesh(a, b, true, with_vertices, candidates, deliver);
                return Ok(());
            }
            (H::CompliantMesh(_) | H::RigidMesh(_), H::RigidPlane | H::CompliantLayer { .. }) => {
                plane_and_mesh(b, a, false, with_vertices, candidates, deliver);
                return Ok(());
            }
            (H::RigidMesh(rigid), H::CompliantMesh(field)) => {
                let in_mesh = TrianglesInTets::new(a, b, true, with_vertices);
                Box::new(move |f| in_mesh.polygon(rigid, f.element_a, field, f.element_b))
            }
            (H::CompliantMesh(field), H::RigidMesh(rigid)) => {
                let in_mesh = TrianglesInTets::new(b, a, false, with_vertices);
                Box::new(move |f| in_mesh.polygon(rigid, f.element_b, field, f.element_a))
            }
            (H::CompliantMesh(field_a), H::CompliantMesh(field_b)) => {
                let in_a = TetsInTets::new(a, b, with_vertices);
                Box::new(move |f| in_a.polygon(field_a, f.element_a, field_b, f.element_b))
            }
            _ => Box::new(|f| element_polygon(a, b, f)),
        };
    for f in candidate_pairs(a, b)? {
        deliver(f, polygon(f));
    }
    Ok(())
}

/// [`for_each_polygon`] of a plane (a rigid half-space or a compliant layer) and a mesh: the
/// elements crossing (or below) the plane, each polygon handed to `deliver` with its feature.
fn plane_and_mesh(
    plane: &Placed<'_, f64>,
    mesh: &Placed<'_, f64>,
    plane_is_a: bool,
    with_vertices: bool,
    candidates: Option<&mut PlaneCandidates>,
    mut deliver: impl FnMut(PolygonFeature, Option<ContactPolygon<f64>>),
) {
    use HydroGeometry as H;
    let in_mesh = PlaneInMesh::new(&plane.X_WG, mesh, plane_is_a, with_vertices);
    let feature = |e: u32| PolygonFeature {
        element_a: if plane_is_a { 0 } else { e },
        element_b: if plane_is_a { e } else { 0 },
    };
    let (a, b) = if plane_is_a {
        (plane, mesh)
    } else {
        (mesh, plane)
    };
    let emit = |e: u32| {
        let polygon = match (plane.geometry, mesh.geometry) {
            (H::RigidPlane, H::CompliantMesh(field)) => in_mesh.tet_polygon(field, e),
            (H::CompliantLayer { thickness }, H::RigidMesh(rigid)) => {
                in_mesh.triangle_polygon(rigid, e, plane.modulus / thickness)
            }
            _ => element_polygon(a, b, feature(e)),
        };
        deliver(feature(e), polygon);
    };
    let crossing = matches!(plane.geometry, H::RigidPlane);
    // Sorted for a rigid mesh: a face's triangles are consecutive, so its polygons, which
    // share a normal, come one after the other and share the step's contact frame. Every
    // polygon of a compliant mesh has the plane's normal: the BVH's order (a fixed order of
    // the elements) needs no sorting.
    let sorted = matches!(mesh.geometry, H::RigidMesh(_));
    // Without a list kept from the last query, a new one traverses the BVH.
    let mut fresh = PlaneCandidates::default();
    candidates.unwrap_or(&mut fresh).for_each(
        mesh_bvh(mesh),
        &in_mesh.plane,
        crossing,
        sorted,
        emit,
    );
}

/// A plane against a mesh in f64, in the mesh's frame (the polygon of [`element_polygon`]
/// without moving each element into the world): the fast paths of the most common pairs, a
/// compliant body on a rigid ground (tetrahedra sliced by the plane) and a rigid body on a
/// compliant layer (triangles clipped by it). Same decisions, recorded in the same order, and
/// the same tests as the generic polygon; only the rounding differs.
struct PlaneInMesh<'a> {
    /// The plane's half-space (below the plane) in the mesh frame.
    plane: HalfSpace<f64>,
    /// +1 when the plane's geometry is A (normals from A into B), −1 otherwise.
    sign: f64,
    /// The normal of every tetrahedron's polygon from A into B, in the mesh frame and the
    /// world: the plane's, times the sign.
    polygon_normals: (Vector3<f64>, Vector3<f64>),
    mesh: &'a Placed<'a, f64>,
    /// Whether the polygons keep their vertex lists.
    with_vertices: bool,
}

impl<'a> PlaneInMesh<'a> {
    /// The plane of the half-space with pose `X_WH` in the frame of `mesh`, the plane being
    /// geometry A or not, the polygons keeping their vertex lists or not.
    fn new(
        X_WH: &Pose<f64>,
        mesh: &'a Placed<'a, f64>,
        plane_is_a: bool,
        with_vertices: bool,
    ) -> Self {
        let plane = plane_in_mesh(X_WH, mesh);
        let n_W = X_WH.R.column(2).into_owned();
        let sign = if plane_is_a { 1.0 } else { -1.0 };
        PlaneInMesh {
            plane,
            sign,
            polygon_normals: (plane.m * sign, n_W * sign),
            mesh,
            with_vertices,
        }
    }

    /// The mesh's frame, where the polygons are computed.
    fn frame(&self) -> InFrame<'_> {
        InFrame {
            X_WG: &self.mesh.X_WG,
            with_vertices: self.with_vertices,
        }
    }

    /// The polygon of tetrahedron `t` of a compliant mesh on a rigid plane: its slice, normal
    /// along the plane's, pressure and gradient the tetrahedron's.
    fn tet_polygon(&self, field: &TetField, t: u32) -> Option<ContactPolygon<f64>> {
        let t = t as usize;
        let E = self.mesh.modulus;
        let g = gradient_along(&(field.elements[t].gradient * E), &self.plane.m)?;
        let mut record = Record::default();
        let (vertices, n) = slice_tet_fixed(&field.tet(t), &self.plane, &mut record);
        let orientation = Orientation {
            nhat_G: self.polygon_normals.0,
            nhat_W: self.polygon_normals.1,
            gradient: g,
        };
        let pressure = |c: &Vector3<f64>| E * field.extent(t, c);
        self.frame()
            .polygon(&vertices[..n], orientation, pressure, record)
    }

    /// The polygon of triangle `t` of a rigid mesh in a compliant layer whose pressure grows
    /// by `k = E/thickness` (Pa/m) with depth: the triangle below the surface, normal the
    /// triangle's (out of the rigid body).
    fn triangle_polygon(&self, rigid: &RigidMesh, t: u32, k: f64) -> Option<ContactPolygon<f64>> {
        let triangle = rigid.triangle(t as usize);
        let m = (triangle[1] - triangle[0]).cross(&(triangle[2] - triangle[0]));
        // One division, then products.
        let n_G = m * (1.0 / m.norm());
        // The pressure `k (d − m·x)` grows along −m: along the normal by `−k m·n`.
        let g = -k * self.plane.m.dot(&n_G);
        if !greater(g, POSITIVE_GRADIENT * k) {
            return None;
        }
        let mut record = Record::default();
        let mut vertices = [Vector3::zeros(); MAX_VERTICES];
        let n = clip_into(&triangle, &self.plane, &mut record, &mut vertices);
        // From the rigid side into the layer: `n` when the mesh is A.
        let nhat_G = n_G * -self.sign;
        let orientation = Orientation {
            nhat_G,
            nhat_W: self.mesh.X_WG.R * nhat_G,
            gradient: g,
        };
        let pressure = |c: &Vector3<f64>| k * (self.plane.d - self.plane.m.dot(c));
        self.frame()
            .polygon(&vertices[..n], orientation, pressure, record)
    }
}

/// A rigid mesh against a compliant mesh in f64, in the compliant mesh's frame: each rigid
/// triangle moved into it and clipped by the faces of a tetrahedron there (the polygon of
/// [`element_polygon`] without moving each tetrahedron into the world), the fast path of rigid
/// fingers or tools on a compliant object. Same decisions, recorded in the same order, and
/// the same tests as the generic polygon; only the rounding differs.
struct TrianglesInTets<'a> {
    /// The rigid mesh's pose in the compliant mesh's frame.
    X_CR: Pose<f64>,
    /// +1 when the rigid geometry is A (normals from A into B), −1 otherwise.
    sign: f64,
    compliant: &'a Placed<'a, f64>,
    /// Whether the polygons keep their vertex lists.
    with_vertices: bool,
}

impl<'a> TrianglesInTets<'a> {
    fn new(
        rigid: &Placed<'_, f64>,
        compliant: &'a Placed<'a, f64>,
        rigid_is_a: bool,
        with_vertices: bool,
    ) -> Self {
        TrianglesInTets {
            X_CR: compliant.X_WG.inverse().compose(&rigid.X_WG),
            sign: if rigid_is_a { 1.0 } else { -1.0 },
            compliant,
            with_vertices,
        }
    }

    /// The polygon of triangle `t` of `rigid` in tetrahedron `k` of `field` (its feature left
    /// at the default): the triangle clipped by the tetrahedron's faces, normal the
    /// triangle's (out of the rigid body), pressure and gradient the tetrahedron's.
    fn polygon(
        &self,
        rigid: &RigidMesh,
        t: u32,
        field: &TetField,
        k: u32,
    ) -> Option<ContactPolygon<f64>> {
        let k = k as usize;
        let triangle = rigid
            .triangle(t as usize)
            .map(|p| self.X_CR.transform_point(&p));
        let n_C = (triangle[1] - triangle[0])
            .cross(&(triangle[2] - triangle[0]))
            .normalize();
        let E = self.compliant.modulus;
        let mut record = Record::default();
        // Clipped back and forth between two buffers.
        let (mut polygon, mut other) = (
            [Vector3::zeros(); MAX_VERTICES],
            [Vector3::zeros(); MAX_VERTICES],
        );
        polygon[..3].copy_from_slice(&triangle);
        let mut n = 3;
        // The faces in the mesh frame, and their flips, are the mesh's.
        let faces = field.faces();
        record.decide_all(4, u64::from(faces.flips[k]));
        for face in &faces.faces[k] {
            n = clip_into(&polygon[..n], face, &mut record, &mut other);
            if n == 0 {
                return None;
            }
            std::mem::swap(&mut polygon, &mut other);
        }
        let g = gradient_along(&(field.elements[k].gradient * E), &n_C)?;
        let nhat_C = n_C * self.sign;
        let orientation = Orientation {
            nhat_G: nhat_C,
            nhat_W: self.compliant.X_WG.R * nhat_C,
            gradient: g,
        };
        let pressure = |c: &Vector3<f64>| E * field.extent(k, c);
        let frame = InFrame {
            X_WG: &self.compliant.X_WG,
            with_vertices: self.with_vertices,
        };
        frame.polygon(&polygon[..n], orientation, pressure, record)
    }
}

/// Two compliant meshes in f64, in A's frame: B's field and the faces of its tetrahedra moved
/// into it, A's tetrahedron sliced by the plane of equal pressure and clipped by B's (the
/// polygon of [`element_polygon`] without moving both tetrahedra into the world). Same
/// decisions, recorded in the same order, and the same tests as the generic polygon,
/// Elandt's duplicate-clip rule included; only the rounding differs.
struct TetsInTets<'a> {
    /// B's pose in A's frame.
    X_AB: Pose<f64>,
    a: &'a Placed<'a, f64>,
    b: &'a Placed<'a, f64>,
    /// Whether the polygons keep their vertex lists.
    with_vertices: bool,
}

impl<'a> TetsInTets<'a> {
    fn new(a: &'a Placed<'a, f64>, b: &'a Placed<'a, f64>, with_vertices: bool) -> Self {
        TetsInTets {
            X_AB: a.X_WG.inverse().compose(&b.X_WG),
            a,
            b,
            with_vertices,
        }
    }

    /// The polygon of tetrahedron `s` of A and `t` of B (its feature left at the default).
    fn polygon(
        &self,
        field_a: &TetField,
        s: u32,
        field_b: &TetField,
        t: u32,
    ) -> Option<ContactPolygon<f64>> {
        let (s, t) = (s as usize, t as usize);
        let X = &self.X_AB;
        // The pressures `a·x + b` in A's frame.
        let (E_A, E_B) = (self.a.modulus, self.b.modulus);
        let pa = Linear {
            a: field_a.elements[s].gradient * E_A,
            b: field_a.elements[s].offset * E_A,
        };
        let grad_b = X.R * field_b.elements[t].gradient * E_B;
        let pb = Linear {
            a: grad_b,
            b: field_b.elements[t].offset * E_B - grad_b.dot(&X.p),
        };
        // p_A − p_B = 0: (a_A − a_B)·x = b_B − b_A.
        let plane = HalfSpace {
            m: pa.a - pb.a,
            d: pb.b - pa.b,
        };
        let norm = plane.m.norm();
        if !greater(norm, 0.0) {
            return None;
        }
        let mut record = Record::default();
        let (slice, n) = slice_tet_fixed(&field_a.tet(s), &plane, &mut record);
        let mut buffers = (
            [Vector3::zeros(); MAX_VERTICES],
            [Vector3::zeros(); MAX_VERTICES],
        );
        let (polygon, other) = (&mut buffers.0, &mut buffers.1);
        polygon[..n].copy_from_slice(&slice[..n]);
        let mut n = n;
        // B's faces, moved into A's frame, and their flips.
        let faces = field_b.faces();
        record.decide_all(4, u64::from(faces.flips[t]));
        for (k, face) in faces.faces[t].iter().enumerate() {
            // Elandt's duplicate-clip rule (see `compliant_compliant`).
            if field_b.boundary[t] & (1 << k) != 0 && field_a.boundary[s] != 0 {
                continue;
            }
            let m = X.R * face.m;
            let face = HalfSpace {
                d: face.d + m.dot(&X.p),
                m,
            };
            n = clip_into(&polygon[..n], &face, &mut record, other);
            if n == 0 {
                return None;
            }
            std::mem::swap(polygon, other);
        }
        let nhat_A = (pb.a - pa.a) / norm;
        let (ga, gb) = (-pa.a.dot(&nhat_A), pb.a.dot(&nhat_A));
        if !(greater(ga, 0.0) && greater(gb, 0.0)) {
            return None;
        }
        let g = ga * gb / (ga + gb);
        if n < 3 || !greater(g, POSITIVE_GRADIENT * pa.a.norm()) {
            return None;
        }
        let orientation = Orientation {
            nhat_G: nhat_A,
            nhat_W: self.a.X_WG.R * nhat_A,
            gradient: g,
        };
        let frame = InFrame {
            X_WG: &self.a.X_WG,
            with_vertices: self.with_vertices,
        };
        frame.polygon(&polygon[..n], orientation, |c| pa.at(c), record)
    }
}

/// A polygon's unit normal from A into B, in the frame G of its vertices and in the world, and
/// the effective pressure gradient `g` (Pa/m) along it.
struct Orientation {
    nhat_G: Vector3<f64>,
    nhat_W: Vector3<f64>,
    gradient: f64,
}

/// The pressure gradient `∇p` along the unit normal `n`, `None` unless it exceeds
/// [`POSITIVE_GRADIENT`] times `|∇p|` (the test of the generic polygon).
fn gradient_along(gradient: &Vector3<f64>, n: &Vector3<f64>) -> Option<f64> {
    let g = gradient.dot(n);
    greater(g, POSITIVE_GRADIENT * gradient.norm()).then_some(g)
}

/// A frame G where polygons are computed: its world pose, and whether the polygons keep
/// their vertex lists.
struct InFrame<'a> {
    X_WG: &'a Pose<f64>,
    with_vertices: bool,
}

impl InFrame<'_> {
    /// The polygon `vertices` (in G) with `orientation` and the pressure `pressure(x)`: its
    /// area, centroid and pressure there, in the world, the vertex lists if kept; `None` when
    /// it has fewer than 3 vertices or is a degenerate sliver.
    fn polygon(
        &self,
        vertices: &[Vector3<f64>],
        orientation: Orientation,
        pressure: impl Fn(&Vector3<f64>) -> f64,
        mut record: Record,
    ) -> Option<ContactPolygon<f64>> {
        let X_WG = self.X_WG;
        let nhat_G = &orientation.nhat_G;
        if vertices.len() < 3 {
            return None;
        }
        let (area, centroid) = if vertices.len() <= 4 {
            small_area_centroid(vertices, nhat_G, &mut record)
        } else {
            area_centroid(vertices, nhat_G, &mut record)
        };
        // Finite: plain comparisons.
        let scale2 = vertices
            .iter()
            .map(|v| (v - vertices[0]).norm_squared())
            .fold(0.0, |a, b| if b > a { b } else { a });
        if !greater(area, NON_DEGENERATE_AREA * scale2) {
            return None;
        }
        Some(ContactPolygon {
            feature: PolygonFeature::default(),
            vertices: if self.with_vertices {
                vertices.iter().map(|v| X_WG.transform_point(v)).collect()
            } else {
                Vec::new()
            },
            area,
            centroid: X_WG.transform_point(&centroid),
            nhat: orientation.nhat_W,
            pressure: pressure(&centroid),
            gradient: orientation.gradient,
            topology: record.0,
        })
    }
}

/// [`area_centroid`] of a triangle or a quadrilateral (f64), from one or two triangles: the
/// area centroid does not depend on the triangulation. The same decision (whether the polygon
/// turns clockwise about `nhat`).
#[inline(always)]
fn small_area_centroid(
    polygon: &[Vector3<f64>],
    nhat: &Vector3<f64>,
    decisions: &mut Record,
) -> (f64, Vector3<f64>) {
    let a = polygon[0];
    let (ab, ac) = (polygon[1] - a, polygon[2] - a);
    let area_abc = 0.5 * ab.cross(&ac).dot(nhat);
    let (area, moment) = match polygon.get(3) {
        None => (area_abc, (a * 3.0 + ab + ac) * area_abc),
        Some(d) => {
            let ad = d - a;
            let area_acd = 0.5 * ac.cross(&ad).dot(nhat);
            (
                area_abc + area_acd,
                (a * 3.0 + ab + ac) * area_abc + (a * 3.0 + ac + ad) * area_acd,
            )
        }
    };
    let clockwise = decisions.decide(area < 0.0);
    if area == 0.0 {
        return (area, a);
    }
    let centroid = moment * (1.0 / (3.0 * area));
    (if clockwise { -area } else { area }, centroid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Shape;
    use crate::hydroelastic::Hydroelastic;
    use nalgebra::Matrix3;
    use std::f64::consts::PI;

    fn compliant(shape: &Shape, hint: f64) -> HydroGeometry {
        HydroGeometry::new(
            shape,
            &Hydroelastic::Compliant {
                modulus: 1e5,
                resolution_hint: hint,
                thickness: None,
            },
        )
        .unwrap()
    }

    fn placed(g: &HydroGeometry, p: Vector3<f64>, modulus: f64) -> Placed<'_, f64> {
        Placed {
            geometry: g,
            X_WG: Pose::translation(p),
            modulus,
        }
    }

    fn totals(polygons: &[ContactPolygon<f64>]) -> (f64, Vector3<f64>) {
        polygons.iter().fold((0.0, Vector3::zeros()), |(a, f), p| {
            (a + p.area, f + p.nhat * p.area * p.pressure)
        })
    }

    /// The sphere's surface and force on a rigid plane against the field `p = E (1 − r/R)`
    /// integrated over the plane at distance `d = R − δ` from the centre: force
    /// `2πE (R²/6 − d²/2 + d³/(3R))`, area `π(R² − d²)`. The mesh is faceted and the field
    /// piecewise linear, so both converge at second order in the mesh size: the errors fall
    /// about fourfold each time the resolution hint is halved from R/10 to R/40.
    #[test]
    fn sphere_on_rigid_plane_converges_to_the_field_integral() {
        let (r, delta, e) = (0.05, 0.005, 1e5);
        let d = r - delta;
        let exact_force = 2.0 * PI * e * (r * r / 6.0 - d * d / 2.0 + d * d * d / (3.0 * r));
        let exact_area = PI * (r * r - d * d);
        let plane = HydroGeometry::RigidPlane;
        let errors: Vec<(f64, f64)> = [10.0, 20.0, 40.0]
            .iter()
            .map(|k| {
                let ball = compliant(&Shape::Sphere { radius: r }, r / k);
                let polygons = contact_surface(
                    &placed(&plane, Vector3::zeros(), 0.0),
                    &placed(&ball, Vector3::new(0.0, 0.0, r - delta), e),
                )
                .unwrap();
                let (area, force) = totals(&polygons);
                assert!(force.xy().norm() < 1e-9 * force.z);
                assert!(polygons
                    .iter()
                    .all(|p| (p.nhat - Vector3::z()).norm() < 1e-15));
                (
                    (area / exact_area - 1.0).abs(),
                    (force.z / exact_force - 1.0).abs(),
                )
            })
            .collect();
        println!("relative errors (area, force) at R/10, R/20, R/40: {errors:?}");
        for w in errors.windows(2) {
            assert!(w[1].0 < w[0].0 / 3.0 && w[1].1 < w[0].1 / 3.0, "{errors:?}");
        }
        assert!(errors[2].0 < 2.5e-3 && errors[2].1 < 2.5e-3, "{errors:?}");
    }

    /// The surface of `a` and `b` (a plane and a mesh: the fast path) against the generic
    /// polygon of each element pair, with the plane as A and as B: the same polygons, topology
    /// records, normals, areas, centroids, pressures, gradients and vertices.
    fn assert_fast_path_is_generic(a: Placed<'_, f64>, b: Placed<'_, f64>, at_least: usize) {
        for (a, b) in [(a, b), (b, a)] {
            let mut fast = contact_surface(&a, &b).unwrap();
            fast.sort_by_key(|p| p.feature);
            assert!(fast.len() >= at_least, "{}", fast.len());
            let generic: Vec<_> = candidate_pairs(&a, &b)
                .unwrap()
                .into_iter()
                .filter_map(|f| element_polygon(&a, &b, f))
                .collect();
            assert_eq!(fast.len(), generic.len());
            let largest_gradient = generic.iter().map(|q| q.gradient).fold(0.0, f64::max);
            for (p, q) in fast.iter().zip(&generic) {
                assert_eq!((p.feature, p.topology), (q.feature, q.topology));
                assert!((p.nhat - q.nhat).norm() < 1e-14, "{p:?} {q:?}");
                // To rounding of the squared size and of the vertices' coordinates (1e-15 m,
                // about 10 ulps at 0.1 m, times the size): a clipped sliver's area is less
                // accurate than its size.
                let size2 = q
                    .vertices
                    .iter()
                    .map(|v| (v - q.vertices[0]).norm_squared())
                    .fold(0.0, f64::max);
                let tolerance = 1e-12 * size2 + 1e-15 * size2.sqrt();
                assert!((p.area - q.area).abs() < tolerance, "{p:?} {q:?}");
                assert!((p.centroid - q.centroid).norm() < 1e-14, "{p:?} {q:?}");
                // `E (∇e·x + e0)` cancels terms of order `E |∇e| |x|` (up to 10 E here).
                let modulus = a.modulus.max(b.modulus);
                assert!(
                    (p.pressure - q.pressure).abs() < 1e-14 * modulus,
                    "{} vs {}",
                    p.pressure,
                    q.pressure
                );
                // `E ∇e·n̂` to rounding of `E |∇e|` (a face nearly along the gradient has a
                // small `g`), as large as the largest `g`.
                assert!(
                    (p.gradient - q.gradient).abs() < 1e-12 * largest_gradient,
                    "{} vs {}",
                    p.gradient,
                    q.gradient
                );
                assert_eq!(p.vertices.len(), q.vertices.len());
                for (x, y) in p.vertices.iter().zip(&q.vertices) {
                    assert!((x - y).norm() < 1e-14, "{p:?} {q:?}");
                }
            }
        }
    }

    fn turned(v: Vector3<f64>) -> Matrix3<f64> {
        nalgebra::Rotation3::from_scaled_axis(v).into_inner()
    }

    /// A compliant ball on a tilted rigid plane: tetrahedra sliced in the mesh frame.
    #[test]
    fn ball_on_a_plane_fast_path_is_the_generic_polygon() {
        let (r, e) = (0.05, 4e5);
        let ball = compliant(&Shape::Sphere { radius: r }, r / 10.0);
        let plane = HydroGeometry::RigidPlane;
        let X_WP = Pose {
            R: turned(Vector3::new(0.3, -0.2, 0.1)),
            p: Vector3::new(0.01, -0.02, 0.003),
        };
        let X_WB = Pose {
            R: turned(Vector3::new(-0.4, 0.7, 1.3)),
            p: X_WP.p + X_WP.R * Vector3::new(0.004, 0.002, r - 0.006),
        };
        assert_fast_path_is_generic(
            Placed {
                geometry: &plane,
                X_WG: X_WP,
                modulus: 0.0,
            },
            Placed {
                geometry: &ball,
                X_WG: X_WB,
                modulus: e,
            },
            50,
        );
    }

    /// A rigid box tilted into a compliant layer: triangles clipped in the mesh frame, the
    /// bottom face's and the sides' (whose gradients along their normals are positive once
    /// tilted).
    #[test]
    fn box_in_a_layer_fast_path_is_the_generic_polygon() {
        let h = Vector3::new(0.1, 0.05, 0.02);
        let rigid = HydroGeometry::new(
            &Shape::Box { half_extents: h },
            &Hydroelastic::Rigid {
                resolution_hint: 0.02,
            },
        )
        .unwrap();
        let layer = HydroGeometry::CompliantLayer { thickness: 0.1 };
        let X_WL = Pose {
            R: turned(Vector3::new(0.05, 0.02, 0.3)),
            p: Vector3::new(0.0, 0.01, -0.002),
        };
        let X_WB = Pose {
            R: X_WL.R * turned(Vector3::new(0.2, -0.1, 0.4)),
            p: X_WL.p + X_WL.R * Vector3::new(0.003, -0.001, 0.02),
        };
        assert_fast_path_is_generic(
            Placed {
                geometry: &layer,
                X_WG: X_WL,
                modulus: 1e6,
            },
            Placed {
                geometry: &rigid,
                X_WG: X_WB,
                modulus: 0.0,
            },
            20,
        );
    }

    /// A rigid box edge-first into a compliant capsule, both turned: triangles clipped by
    /// tetrahedra in the capsule's frame.
    #[test]
    fn box_in_a_capsule_fast_path_is_the_generic_polygon() {
        let rigid = HydroGeometry::new(
            &Shape::Box {
                half_extents: Vector3::new(0.02, 0.03, 0.01),
            },
            &Hydroelastic::Rigid {
                resolution_hint: 0.004,
            },
        )
        .unwrap();
        let capsule = compliant(
            &Shape::Capsule {
                radius: 0.01,
                half_length: 0.04,
            },
            0.002,
        );
        let X_WC = Pose {
            R: turned(Vector3::new(0.1, 1.2, -0.3)),
            p: Vector3::new(0.01, -0.02, 0.03),
        };
        let X_WB = Pose {
            R: X_WC.R * turned(Vector3::new(0.4, 0.3, 0.2)),
            p: X_WC.p + X_WC.R * Vector3::new(0.0, 0.027, 0.005),
        };
        assert_fast_path_is_generic(
            Placed {
                geometry: &rigid,
                X_WG: X_WB,
                modulus: 0.0,
            },
            Placed {
                geometry: &capsule,
                X_WG: X_WC,
                modulus: 1e6,
            },
            30,
        );
    }

    /// Two compliant spheres of different moduli, turned and off-axis: A's tetrahedra sliced
    /// by the planes of equal pressure and clipped by B's in A's frame.
    #[test]
    fn two_compliant_spheres_fast_path_is_the_generic_polygon() {
        let r = 0.05;
        let ball = compliant(&Shape::Sphere { radius: r }, r / 4.0);
        let X_WA = Pose {
            R: turned(Vector3::new(0.2, -0.1, 0.3)),
            p: Vector3::new(0.0, 0.0, -(r - 0.004)),
        };
        let X_WB = Pose {
            R: turned(Vector3::new(0.0, 0.3, 0.9)),
            p: Vector3::new(0.003, -0.002, r - 0.004),
        };
        assert_fast_path_is_generic(
            Placed {
                geometry: &ball,
                X_WG: X_WA,
                modulus: 1e5,
            },
            Placed {
                geometry: &ball,
                X_WG: X_WB,
                modulus: 3e5,
            },
            10,
        );
    }

    #[test]
    fn rigid_box_in_a_compliant_layer_has_the_face_area_and_linear_pressure() {
        let (h, e, thickness, delta) = (Vector3::new(0.1, 0.05, 0.02), 1e6, 0.1, 0.004);
        let rigid = HydroGeometry::new(
            &Shape::Box { half_extents: h },
            &Hydroelastic::Rigid {
                resolution_hint: 0.02,
            },
        )
        .unwrap();
        let layer = HydroGeometry::CompliantLayer { thickness };
        let polygons = contact_surface(
            &placed(&layer, Vector3::zeros(), e),
            &placed(&rigid, Vector3::new(0.0, 0.0, h.z - delta), 0.0),
        )
        .unwrap();
        let (area, force) = totals(&polygons);
        // The bottom face only: the side faces' gradients are tangent, the top is outside.
        assert!((area - 4.0 * h.x * h.y).abs() < 1e-12, "{area}");
        assert!((force.z - 4.0 * h.x * h.y * e * delta / thickness).abs() < 1e-6);
        assert!(polygons
            .iter()
            .all(|p| (p.gradient - e / thickness).abs() < 1e-6));
    }

    /// The box of the test above: the complete surface adds its side faces below the layer's
    /// surface, whose gradient along the normal is zero (the field grows straight down), each
    /// with the side's `∫ p dA = w E δ²/(2H)`; opposite sides' forces cancel, so both surfaces
    /// carry the same force.
    #[test]
    fn complete_surface_adds_the_side_faces_whose_forces_cancel() {
        let (h, e, thickness, delta) = (Vector3::new(0.1, 0.05, 0.02), 1e6, 0.1, 0.004);
        let rigid = HydroGeometry::new(
            &Shape::Box { half_extents: h },
            &Hydroelastic::Rigid {
                resolution_hint: 0.02,
            },
        )
        .unwrap();
        let layer = HydroGeometry::CompliantLayer { thickness };
        let (a, b) = (
            placed(&layer, Vector3::zeros(), e),
            placed(&rigid, Vector3::new(0.0, 0.0, h.z - delta), 0.0),
        );
        let (filtered, complete) = (
            contact_surface(&a, &b).unwrap(),
            complete_contact_surface(&a, &b).unwrap(),
        );
        let bottom = 4.0 * h.x * h.y;
        let sides: Vec<&ContactPolygon<f64>> =
            complete.iter().filter(|p| p.nhat.z.abs() < 1e-12).collect();
        assert!(filtered.iter().all(|p| (p.nhat.z - 1.0).abs() < 1e-12));
        assert_eq!(complete.len(), filtered.len() + sides.len());
        // Each side's force, from its polygons: w E δ²/(2H) with w the side's width.
        for (axis, width) in [(0, 2.0 * h.y), (1, 2.0 * h.x)] {
            for sign in [-1.0, 1.0] {
                let force: f64 = sides
                    .iter()
                    .filter(|p| p.nhat[axis] * sign > 0.5)
                    .map(|p| p.area * p.pressure)
                    .sum();
                let exact = width * e * delta * delta / (2.0 * thickness);
                assert!((force / exact - 1.0).abs() < 1e-9, "{force} vs {exact}");
            }
        }
        assert!(sides
            .iter()
            .all(|p| p.gradient.abs() < 1e-6 * e / thickness));
        let ((area_f, force_f), (area_c, force_c)) = (totals(&filtered), totals(&complete));
        assert!((area_f - bottom).abs() < 1e-12, "{area_f}");
        let side_area = 2.0 * (2.0 * h.x + 2.0 * h.y) * delta;
        assert!((area_c - bottom - side_area).abs() < 1e-12, "{area_c}");
        assert!(
            (force_c - force_f).norm() < 1e-9 * force_f.z,
            "{force_c} {force_f}"
        );
    }

    /// A rigid cube (2 cm) near a compliant box's edge, 4 mm into its top, its left face 5 mm
    /// inside the box's left side. The box's field is coned to its centre: `p = E·(distance to
    /// a face)/(that face's distance to the centre)` in each face's pyramid, the top's and the
    /// left side's meeting on the plane `z = −0.4 x`. The cube's side faces carry no stiffness
    /// (`g ≤ 0`): the filtered surface has no lateral force, the complete one has the pressure
    /// on them. Its right face (x = −2.5 cm, in the top's pyramid) carries `E w δ²/(2 h_z)` =
    /// 8 N toward −x; its left face (x = −4.5 cm) 4 N toward +x below z = 1.8 cm (the left
    /// side's pyramid, `p = E · 5 mm / 5 cm`, `g < 0`) and 2 N above: a net −2 N, toward the
    /// edge, where the displaced pressure is smaller. Every polygon of positive stiffness is
    /// in both surfaces alike.
    #[test]
    fn complete_surface_keeps_faces_against_the_gradient() {
        let (e, delta, width) = (1e6, 0.004, 0.02);
        let block = HydroGeometry::new(
            &Shape::Box {
                half_extents: Vector3::new(0.05, 0.05, 0.02),
            },
            &Hydroelastic::Compliant {
                modulus: e,
                resolution_hint: 0.005,
                thickness: None,
            },
        )
        .unwrap();
        let cube = HydroGeometry::new(
            &Shape::Box {
                half_extents: Vector3::repeat(width / 2.0),
            },
            &Hydroelastic::Rigid {
                resolution_hint: 0.01,
            },
        )
        .unwrap();
        let (a, b) = (
            placed(&cube, Vector3::new(-0.035, 0.0013, 0.03 - delta), 0.0),
            placed(&block, Vector3::zeros(), e),
        );
        let (filtered, complete) = (
            contact_surface(&a, &b).unwrap(),
            complete_contact_surface(&a, &b).unwrap(),
        );
        let dropped = complete
            .iter()
            .filter(|p| p.gradient <= POSITIVE_GRADIENT * e / 0.02)
            .count();
        assert_eq!(complete.len(), filtered.len() + dropped);
        for p in &filtered {
            let q = complete
                .iter()
                .find(|q| q.feature == p.feature)
                .expect("in both surfaces");
            assert!((p.area - q.area).abs() < 1e-15 && (p.centroid - q.centroid).norm() < 1e-14);
            assert!((p.pressure - q.pressure).abs() < 1e-8 && p.gradient == q.gradient);
        }
        // The force on the cube (A): −Σ n̂ A p.
        let force_x = |polygons: &[ContactPolygon<f64>]| -totals(polygons).1.x;
        assert!(force_x(&filtered).abs() < 1e-12, "{}", force_x(&filtered));
        assert!(
            (force_x(&complete) + 2.0).abs() < 1e-9,
            "{}",
            force_x(&complete)
        );
        let against: f64 = complete
            .iter()
            // −E/(5 cm) in the left side's pyramid; rounding leaves ±1e-7 Pa/m elsewhere.
            .filter(|p| p.gradient < -1e-3 * e && p.nhat.x < -0.99)
            .map(|p| p.area * p.pressure)
            .sum();
        assert!((against - 4.0).abs() < 1e-9, "{against}");
    }

    #[test]
    fn compliant_ball_on_a_compliant_layer_meets_on_equal_pressure() {
        let (r, e_ball, e_layer, thickness) = (0.05, 1e5, 3e5, 0.02);
        let ball = compliant(&Shape::Sphere { radius: r }, r / 5.0);
        let layer = HydroGeometry::CompliantLayer { thickness };
        let polygons = contact_surface(
            &placed(&layer, Vector3::zeros(), e_layer),
            &placed(&ball, Vector3::new(0.0, 0.0, r - 0.004), e_ball),
        )
        .unwrap();
        assert!(polygons.len() > 4);
        for p in &polygons {
            // On the surface of equal pressure: the layer's pressure at the centroid.
            let layer_pressure = e_layer * (-p.centroid.z) / thickness;
            assert!(
                (p.pressure - layer_pressure).abs() < 1e-9 * layer_pressure,
                "{p:?}"
            );
            assert!(p.centroid.z < 0.0 && p.nhat.z > 0.9);
            // In series: below both sides' gradients.
            assert!(p.gradient > 0.0 && p.gradient < e_layer / thickness);
        }
        let (_, force) = totals(&polygons);
        assert!(force.z > 0.0 && force.xy().norm() < 1e-9 * force.z);
    }

    #[test]
    fn identical_spheres_meet_on_their_mid_plane_symmetrically() {
        let (r, delta, e) = (0.05, 0.004, 1e5);
        let ball = compliant(&Shape::Sphere { radius: r }, r / 4.0);
        let (a, b) = (
            placed(&ball, Vector3::new(0.0, 0.0, -(r - delta)), e),
            placed(&ball, Vector3::new(0.0, 0.0, r - delta), e),
        );
        let polygons = contact_surface(&a, &b).unwrap();
        assert!(!polygons.is_empty());
        let (area, force) = totals(&polygons);
        assert!(area > 0.0 && force.z > 0.0);
        // The mesh is symmetric under z → −z, so the surface is: every centroid's mirror
        // image is the centroid of another polygon with the same area and pressure.
        for p in &polygons {
            let mirror = Vector3::new(p.centroid.x, p.centroid.y, -p.centroid.z);
            assert!(
                polygons.iter().any(|q| (q.centroid - mirror).norm() < 1e-12
                    && (q.area - p.area).abs() < 1e-15
                    && (q.pressure - p.pressure).abs() < 1e-9),
                "{p:?}"
            );
        }
        assert!(force.xy().norm() < 1e-9 * force.z, "{force}");
    }

    #[test]
    fn replayed_polygons_keep_the_f64_topology_through_a_vertex_on_the_plane() {
        use num_dual::Dual64;
        // A rigid plane, tilted 0.2 rad about a generic axis, through the centre of a
        // compliant ball: the apex of every tetrahedron (the coned mesh's centre) lies on it,
        // a slice vertex exactly where the f64 surface decides; no other vertex does.
        let (r, e, z0) = (0.05, 1e5, 0.01);
        let ball = compliant(&Shape::Sphere { radius: r }, r / 4.0);
        let plane = HydroGeometry::RigidPlane;
        let tilt =
            nalgebra::Rotation3::from_scaled_axis(Vector3::new(0.17, 0.05, 0.03)).into_inner();
        let X_WP = Pose {
            R: tilt,
            p: Vector3::new(0.0, 0.0, z0),
        };
        let at = |z: f64| {
            contact_surface(
                &Placed {
                    geometry: &plane,
                    X_WG: X_WP,
                    modulus: 0.0,
                },
                &placed(&ball, Vector3::new(0.0, 0.0, z), e),
            )
            .unwrap()
        };
        let polygons = at(z0);
        assert!(!polygons.is_empty());
        // In duals the ball one ulp higher, its height seeded: the real parts put the apex
        // above the plane.
        let lift = |x: f64| Dual64::from_re(x);
        let dual_plane = Placed {
            geometry: &plane,
            X_WG: Pose {
                R: tilt.map(lift),
                p: X_WP.p.map(lift),
            },
            modulus: lift(0.0),
        };
        let dual_ball = Placed {
            geometry: &ball,
            X_WG: Pose::translation(Vector3::new(
                lift(0.0),
                lift(0.0),
                Dual64::new(z0.next_up(), 1.0),
            )),
            modulus: lift(e),
        };
        let h = 1e-9;
        let (below, above) = (at(z0 - h), at(z0 + h));
        let force = |p: &ContactPolygon<f64>| p.area * p.pressure;
        let mut redecided = 0;
        for p in &polygons {
            let again = element_polygon(&dual_plane, &dual_ball, p.feature);
            if again.map(|q| q.vertices.len()) != Some(p.vertices.len()) {
                redecided += 1;
            }
            let q = replayed_polygon(&dual_plane, &dual_ball, p.feature, p.topology)
                .expect("the f64 topology replays");
            assert_eq!(q.vertices.len(), p.vertices.len());
            // Central differences of the polygon's force and centroid (a polygon missing on
            // one side has no force there). Through the apex they are C¹, not C²: the
            // differences are off by O(h), 1e-6 of the derivatives at h = 1e-9 m.
            let side = |s: &[ContactPolygon<f64>]| {
                s.iter()
                    .find(|o| o.feature == p.feature)
                    .map_or((0.0, p.centroid), |o| (force(o), o.centroid))
            };
            let ((f0, c0), (f1, c1)) = (side(&below), side(&above));
            let df = (f1 - f0) / (2.0 * h);
            let dual_force = q.area * q.pressure;
            assert!(
                (dual_force.eps - df).abs() < 1e-5 * (1.0 + df.abs()),
                "{p:?}: {} vs {df}",
                dual_force.eps
            );
            if f0 > 0.0 && f1 > 0.0 {
                let dc = (c1 - c0) / (2.0 * h);
                let dual_dc = q.centroid.map(|x| x.eps);
                assert!(
                    (dual_dc - dc).norm() < 1e-5 * (1.0 + dc.norm()),
                    "{p:?}: {dual_dc} vs {dc}"
                );
            }
        }
        // Deciding again on the real parts gives other polygons, replaying does not.
        assert!(redecided > 0, "no polygon within rounding of the plane");
    }
}
