//! Elandt Sec. 4.4.1: PFC is energetically conservative. A rigid body against a compliant
//! one feels `F = −∫_S p n̂ dA` over its surface inside the compliant volume (`n̂` its outward
//! normal), which is minus the gradient of the displaced pressure's integral
//! `U(x) = ∫_{rigid ∩ compliant} p dV` (eq. (4.4), Appendix A.1): moving the rigid body by
//! `dx` sweeps its surface through `n̂·dx dA` of pressure. So the work of the force around a
//! closed quasi-static path vanishes. This holds for the discrete field too (`p` piecewise
//! linear and continuous, zero on the surface): `U` is C¹ in the pose.
//!
//! It holds for Elandt's complete surface ([`complete_contact_surface`]: every polygon of the
//! rigid surface inside the compliant mesh). The convex step's surface
//! ([`contact_surface`], Masterjohn et al.'s discrete model, as Drake's) keeps only the
//! polygons along whose normal the pressure grows into the compliant side (positive stiffness
//! `k = A ∇p·n̂`, which the step's convex potentials need): a rigid face that faces the
//! compliant body's nearest surface, or lies along the field's gradient, carries no pressure,
//! and that force is no gradient. Across a compliant body's edge the difference is large.
//!
//! The study: a compliant block (10 × 10 × 4 cm, E = 1 MPa, its field coned to its centre,
//! `p = E · distance to a face / that face's distance to the centre` in each face's pyramid,
//! tetrahedra of 5 mm) and a rigid 2 cm cube or a rigid sphere of radius 1 cm moved
//! quasi-statically (translation only) around A (clear, left of the block) → B (4 mm into its
//! top, astride its left edge) → C (as deep, at its middle) → D (clear, above C) → A; and
//! around a rectangle inside the top's pyramid, 4-7 mm deep, where the two surfaces differ
//! only by the cube's side faces, whose forces cancel. The force at each pose, the work of
//! each leg by the trapezoid rule, the closed path's work against the largest leg's, and
//! its fall with the number of steps per leg; and `F = −∇U` directly at three poses, `U`
//! by clipping each tetrahedron by the body's planes.

use nalgebra::Vector3;
use rayon::prelude::*;

use super::{number, Loader, Number, PaperFigure, Quality};
use crate::error::Result;
use crate::geometry::Shape;
use crate::hydroelastic::clip::HalfSpace;
use crate::hydroelastic::{
    complete_contact_surface, contact_surface, ContactPolygon, HydroGeometry, Hydroelastic, Placed,
};
use crate::math::Pose;
use crate::report::plot::{Curve, LinePanel};

/// The block's modulus `E` (Pa); forces and work scale with it.
const MODULUS: f64 = 1e6;
/// The block's half extents (m): 10 × 10 × 4 cm, its top at z = 2 cm.
const BLOCK: [f64; 3] = [0.05, 0.05, 0.02];
/// The block's tetrahedra's edges (m).
const MESH: f64 = 0.005;
/// How deep the bodies go into the block's top at B and C (m).
const DEPTH: f64 = 0.004;
/// The rigid bodies' half height (m): the cube's half side, the sphere's radius.
const HALF_HEIGHT: f64 = 0.01;

/// A contact surface query: the step's or Elandt's complete one.
type Query = fn(&Placed<'_, f64>, &Placed<'_, f64>) -> Result<Vec<ContactPolygon<f64>>>;

/// The two surfaces compared, with their keys.
const SURFACES: [(&str, Query); 2] = [
    ("complete", complete_contact_surface),
    ("filtered", contact_surface),
];

/// The rigid bodies, with their keys and the edges of their triangle meshes (m): the cube's
/// force does not depend on how its flat faces are cut (and each triangle meets nearly every
/// coned tetrahedron's box, so fewer triangles are fewer pairs); the sphere's 5 mm facets
/// make it a polyhedron of 128 triangles.
fn bodies() -> [(&'static str, Shape, f64); 2] {
    [
        (
            "cube",
            Shape::Box {
                half_extents: Vector3::repeat(HALF_HEIGHT),
            },
            0.02,
        ),
        (
            "sphere",
            Shape::Sphere {
                radius: HALF_HEIGHT,
            },
            0.005,
        ),
    ]
}

/// The block and a rigid body, meshed.
struct Scene {
    block: HydroGeometry,
    body: HydroGeometry,
}

impl Scene {
    fn new(shape: &Shape, hint: f64) -> Result<Self> {
        let [x, y, z] = BLOCK;
        Ok(Scene {
            block: HydroGeometry::new(
                &Shape::Box {
                    half_extents: Vector3::new(x, y, z),
                },
                &Hydroelastic::compliant(MODULUS, MESH),
            )?,
            body: HydroGeometry::new(shape, &Hydroelastic::rigid(hint))?,
        })
    }

    /// The force on the rigid body (N) with its centre at `at`: `−Σ n̂ A p` over the polygons
    /// of `query`, the body being A (normals from it into the block).
    fn force(&self, at: Vector3<f64>, query: Query) -> Result<Vector3<f64>> {
        let polygons = query(
            &Placed {
                geometry: &self.body,
                X_WG: Pose::translation(at),
                modulus: 0.0,
            },
            &Placed {
                geometry: &self.block,
                X_WG: Pose::identity(),
                modulus: MODULUS,
            },
        )?;
        Ok(-polygons
            .iter()
            .map(|p| p.nhat * (p.area * p.pressure))
            .sum::<Vector3<f64>>())
    }
}

/// A convex polyhedron as its faces, each a convex polygon in cyclic order (m).
type Polyhedron = Vec<Vec<Vector3<f64>>>;

/// `polyhedron ∩ {m·x ≤ d}`: each face clipped, and the cap on the plane made of the clipped
/// faces' vertices on it, ordered by angle about their mean (`m` of unit length).
fn clip_polyhedron(polyhedron: &Polyhedron, plane: &HalfSpace<f64>) -> Polyhedron {
    // Nothing outside: unchanged (a face on the plane, as after a coplanar triangle of the
    // same body face, is not a new cap).
    if polyhedron
        .iter()
        .flatten()
        .all(|v| plane.m.dot(v) <= plane.d)
    {
        return polyhedron.clone();
    }
    let mut faces: Polyhedron = polyhedron
        .iter()
        .map(|f| clip_face(f, plane))
        .filter(|f| f.len() >= 3)
        .collect();
    let tolerance = 1e-12 * plane.m.norm();
    let mut cap: Vec<Vector3<f64>> = Vec::new();
    for v in faces.iter().flatten() {
        if (plane.m.dot(v) - plane.d).abs() <= tolerance
            && cap.iter().all(|c| (c - v).norm() > 1e-12)
        {
            cap.push(*v);
        }
    }
    if cap.len() >= 3 {
        let mean = cap.iter().sum::<Vector3<f64>>() / cap.len() as f64;
        let u = (cap[0] - mean).normalize();
        let w = plane.m.normalize().cross(&u);
        let angle = |v: &Vector3<f64>| (v - mean).dot(&w).atan2((v - mean).dot(&u));
        cap.sort_by(|a, b| angle(a).total_cmp(&angle(b)));
        faces.push(cap);
    }
    faces
}

/// `face ∩ {m·x ≤ d}` (Sutherland–Hodgman) for faces of any number of vertices (the caps of
/// a tetrahedron clipped by a sphere's many planes exceed the contact polygons' bound).
fn clip_face(face: &[Vector3<f64>], plane: &HalfSpace<f64>) -> Vec<Vector3<f64>> {
    let side = |v: &Vector3<f64>| plane.m.dot(v) - plane.d;
    let mut out = Vec::with_capacity(face.len() + 1);
    for (k, a) in face.iter().enumerate() {
        let b = &face[(k + 1) % face.len()];
        let (sa, sb) = (side(a), side(b));
        if sa <= 0.0 {
            out.push(*a);
        }
        if (sa <= 0.0) != (sb <= 0.0) {
            out.push(a + (b - a) * (sa / (sa - sb)));
        }
    }
    out
}

/// Volume (m³) and centroid of a convex polyhedron: the tetrahedra of its faces' fans and a
/// point inside.
fn volume_centroid(polyhedron: &Polyhedron) -> (f64, Vector3<f64>) {
    let vertices: Vec<&Vector3<f64>> = polyhedron.iter().flatten().collect();
    let inside = vertices.iter().copied().sum::<Vector3<f64>>() / vertices.len() as f64;
    let (mut volume, mut moment) = (0.0, Vector3::zeros());
    for face in polyhedron {
        for k in 1..face.len() - 1 {
            let (a, b, c) = (face[0] - inside, face[k] - inside, face[k + 1] - inside);
            let v = a.cross(&b).dot(&c).abs() / 6.0;
            volume += v;
            moment += (inside * 4.0 + a + b + c) * (v / 4.0);
        }
    }
    (volume, moment / volume)
}

impl Scene {
    /// The displaced pressure's integral `U = ∫_{body ∩ block} p dV` (J) with the body's
    /// centre at `at` (eq. (4.4)): each tetrahedron clipped by the planes of the body's
    /// triangles (a convex body), the linear pressure integrated exactly as the clipped
    /// volume times the pressure at its centroid.
    fn displaced_pressure(&self, at: Vector3<f64>) -> f64 {
        let (HydroGeometry::RigidMesh(body), HydroGeometry::CompliantMesh(block)) =
            (&self.body, &self.block)
        else {
            return f64::NAN;
        };
        let planes: Vec<HalfSpace<f64>> = (0..body.mesh.triangles.len())
            .map(|t| {
                let [a, b, c] = body.triangle(t).map(|v| v + at);
                let m = (b - a).cross(&(c - a)).normalize();
                HalfSpace { d: m.dot(&a), m }
            })
            .collect();
        (0..block.mesh.tets.len())
            .map(|t| {
                let v = block.tet(t);
                // Tetrahedra off the body's box: nothing displaced.
                let off = (0..3).any(|i| {
                    v.iter().all(|p| p[i] < at[i] - HALF_HEIGHT)
                        || v.iter().all(|p| p[i] > at[i] + HALF_HEIGHT)
                });
                if off {
                    return 0.0;
                }
                let mut polyhedron: Polyhedron = [[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]]
                    .iter()
                    .map(|f| f.iter().map(|&i| v[i]).collect())
                    .collect();
                for plane in &planes {
                    polyhedron = clip_polyhedron(&polyhedron, plane);
                    if polyhedron.len() < 4 {
                        return 0.0;
                    }
                }
                let (volume, centroid) = volume_centroid(&polyhedron);
                let element = &block.elements[t];
                volume * MODULUS * (element.gradient.dot(&centroid) + element.offset)
            })
            .sum()
    }
}

/// The body's centre at A, B, C and D: B and C `DEPTH` into the top, B on the left edge, C in
/// the middle, D 1 cm clear above C, A 1 cm clear left of B's height. The leg D → A stays
/// clear of the block (its bottom at least 0.7 mm above the top where it is over the block).
fn edge_path() -> [Vector3<f64>; 4] {
    let z = BLOCK[2] + HALF_HEIGHT - DEPTH;
    [
        Vector3::new(-BLOCK[0] - 4.0 * HALF_HEIGHT, 0.0, z),
        Vector3::new(-BLOCK[0], 0.0, z),
        Vector3::new(0.0, 0.0, z),
        Vector3::new(0.0, 0.0, z + DEPTH + HALF_HEIGHT),
    ]
}

/// A rectangle in the plane y = 0 inside the top's pyramid: x from −1 to 1 cm, 4 to 7 mm deep.
fn inner_path() -> [Vector3<f64>; 4] {
    let z = BLOCK[2] + HALF_HEIGHT - DEPTH;
    let deeper = z - 0.003;
    [
        Vector3::new(-0.01, 0.0, z),
        Vector3::new(0.01, 0.0, z),
        Vector3::new(0.01, 0.0, deeper),
        Vector3::new(-0.01, 0.0, deeper),
    ]
}

/// The quasi-static walk around a closed path: the force at `steps + 1` equally spaced poses
/// of each leg, its ends included.
struct Walk {
    corners: Vec<Vector3<f64>>,
    steps: usize,
    /// Per leg, the force at each pose (N).
    forces: Vec<Vec<Vector3<f64>>>,
}

impl Walk {
    /// Walks `corners` (and back to the first), `steps` equal steps a leg.
    fn new(scene: &Scene, corners: &[Vector3<f64>], steps: usize, query: Query) -> Result<Self> {
        let forces = (0..corners.len())
            .map(|l| {
                let (start, end) = (corners[l], corners[(l + 1) % corners.len()]);
                (0..=steps)
                    .into_par_iter()
                    .map(|k| scene.force(start + (end - start) * (k as f64 / steps as f64), query))
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Walk {
            corners: corners.to_vec(),
            steps,
            forces,
        })
    }

    /// The work of each leg (J) by the trapezoid rule on every `stride`-th pose (`steps /
    /// stride` steps a leg).
    fn legs(&self, stride: usize) -> Vec<f64> {
        self.forces
            .iter()
            .enumerate()
            .map(|(l, f)| {
                let step = (self.corners[(l + 1) % self.corners.len()] - self.corners[l])
                    * (stride as f64 / self.steps as f64);
                f.iter()
                    .step_by(stride)
                    .collect::<Vec<_>>()
                    .windows(2)
                    .map(|w| 0.5 * (w[0] + w[1]).dot(&step))
                    .sum()
            })
            .collect()
    }

    /// The closed path's work over the largest leg's, at `steps / stride` steps a leg, and
    /// the largest leg's (J).
    fn closed(&self, stride: usize) -> (f64, f64) {
        let legs = self.legs(stride);
        let largest = legs.iter().fold(0.0_f64, |m, w| m.max(w.abs()));
        (legs.iter().sum::<f64>() / largest, largest)
    }

    /// Every force (N).
    fn all_forces(&self) -> impl Iterator<Item = &Vector3<f64>> {
        self.forces.iter().flatten()
    }

    /// Per pose, the path parameter `s` (leg `l` from `l` to `l + 1`) and the force along the
    /// path (N) when `work` is false, the work done on the body so far (mJ) when true.
    fn curve(&self, name: String, work: bool) -> Curve {
        let mut done = 0.0;
        let mut points = Vec::new();
        for (l, f) in self.forces.iter().enumerate() {
            let delta = self.corners[(l + 1) % self.corners.len()] - self.corners[l];
            let (along, step) = (delta.normalize(), delta / self.steps as f64);
            for (k, force) in f.iter().enumerate() {
                if k > 0 {
                    done += 0.5 * (f[k - 1] + force).dot(&step);
                }
                let s = l as f64 + k as f64 / self.steps as f64;
                points.push((s, if work { done * 1e3 } else { force.dot(&along) }));
            }
        }
        Curve { name, points }
    }
}

/// Elandt Sec. 4.4.1: the work of PFC's force around closed quasi-static paths of a rigid cube
/// and sphere against a compliant block's edge, Elandt's complete contact surface against the
/// step's positive-stiffness one.
pub(super) fn conservation(_load: Loader<'_>, quality: Quality) -> Result<PaperFigure> {
    // The finest steps a leg; the closed work is also summed on every 2nd, 4th, … pose.
    let (steps, coarsest) = match quality {
        Quality::Quick => (40, 10),
        Quality::Full => (320, 10),
    };
    let strides: Vec<usize> = (0..)
        .map(|k| 1 << k)
        .take_while(|s| steps / s >= coarsest)
        .collect();
    let mut numbers: Vec<Number> = Vec::new();
    let (mut work_panels, mut force_panels, mut meshes) = (Vec::new(), Vec::new(), Vec::new());
    for (body, shape, hint) in bodies() {
        let scene = Scene::new(&shape, hint)?;
        meshes.push(format!(
            "{body}: {} triangles",
            scene.body.bvh().map_or(0, |b| b.leaf_count())
        ));
        let (mut work_curves, mut force_curves) = (Vec::new(), Vec::new());
        for (surface, query) in SURFACES {
            let walk = Walk::new(&scene, &edge_path(), steps, query)?;
            let (closed, largest) = walk.closed(1);
            numbers.push(number(
                format!("{body}.{surface}.closed"),
                format!("{body}, {surface} surface: work around A → B → C → D → A over the largest leg's ({steps} steps a leg; largest leg {:.3} mJ)", largest * 1e3),
                if surface == "complete" {
                    "0 (conservative)"
                } else {
                    "0 for Elandt's model; not for positive-stiffness polygons"
                },
                closed,
                "1",
            ));
            let legs = [
                ("ab", "A → B"),
                ("bc", "B → C"),
                ("cd", "C → D"),
                ("da", "D → A"),
            ];
            for ((key, leg), work) in legs.iter().zip(walk.legs(1)) {
                numbers.push(number(
                    format!("{body}.{surface}.work_{key}"),
                    format!("{body}, {surface} surface: work done on the body along {leg}"),
                    "",
                    work * 1e3,
                    "mJ",
                ));
            }
            let clear = walk.forces[3].iter().fold(0.0_f64, |m, f| m.max(f.norm()));
            numbers.push(number(
                format!("{body}.{surface}.clear_leg_force"),
                format!(
                    "{body}, {surface} surface: largest |F| on the leg D → A, clear of the block"
                ),
                "0",
                clear,
                "N",
            ));
            if surface == "complete" {
                // Quadrature error only: it falls as the path is refined.
                for &stride in strides.iter().rev() {
                    let n = steps / stride;
                    numbers.push(number(
                        format!("{body}.complete.closed_{n}"),
                        format!("{body}, complete surface: closed work over the largest leg's at {n} steps a leg"),
                        "→ 0 as the path is refined",
                        walk.closed(stride).0,
                        "1",
                    ));
                }
            }
            work_curves.push(walk.curve(format!("{body}, {surface}"), true));
            force_curves.push(walk.curve(format!("{body}, {surface}"), false));
        }
        // F = −∇U at three poses of B → C, U's central differences with h = 1 µm.
        let h = 1e-6;
        let mut gradient_error = 0.0_f64;
        let mut largest_force = 0.0_f64;
        for x in [-0.05, -0.045, -0.035] {
            let at = Vector3::new(x, 0.0, edge_path()[1].z);
            let force = scene.force(at, complete_contact_surface)?;
            let minus_gradient = Vector3::from_fn(|i, _| {
                let e = Vector3::ith(i, h);
                -(scene.displaced_pressure(at + e) - scene.displaced_pressure(at - e)) / (2.0 * h)
            });
            gradient_error = gradient_error.max((force - minus_gradient).norm());
            largest_force = largest_force.max(force.norm());
        }
        numbers.push(number(
            format!("{body}.gradient_error"),
            format!("{body}: largest |F_complete + ∇U| at x = −5, −4.5, −3.5 cm on B → C, U = ∫ p dV over the body ∩ block by clipping, central differences of 1 µm, over the largest |F| ({largest_force:.3} N)"),
            "0 (F = −∇U, eq. (4.4))",
            gradient_error / largest_force,
            "1",
        ));
        // Inside the top's pyramid the two surfaces carry the same force. It is constant
        // along the horizontal legs and the same on the two vertical ones: 4 steps a leg.
        let (complete, filtered) = (
            Walk::new(&scene, &inner_path(), 4, complete_contact_surface)?,
            Walk::new(&scene, &inner_path(), 4, contact_surface)?,
        );
        let largest = complete.all_forces().fold(0.0_f64, |m, f| m.max(f.norm()));
        let difference = complete
            .all_forces()
            .zip(filtered.all_forces())
            .fold(0.0_f64, |m, (a, b)| m.max((a - b).norm()));
        numbers.push(number(
            format!("{body}.inner.difference"),
            format!("{body}, rectangle inside the top: largest |F_complete − F_filtered| over the largest |F| ({largest:.3} N)"),
            "0 (the dropped polygons' forces cancel)",
            difference / largest,
            "1",
        ));
        for (surface, walk) in [("complete", &complete), ("filtered", &filtered)] {
            let (closed, largest) = walk.closed(1);
            numbers.push(number(
                format!("{body}.inner.{surface}.closed"),
                format!("{body}, {surface} surface: work around the rectangle inside the top over the largest leg's ({:.3} mJ)", largest * 1e3),
                "0",
                closed,
                "1",
            ));
        }
        work_panels.push(work_curves);
        force_panels.push(force_curves);
    }
    let mut panels = Vec::new();
    let labels = [
        (
            "cube: work done on it so far (mJ)",
            "cube: force along the path (N)",
        ),
        (
            "sphere: work done on it so far (mJ)",
            "sphere: force along the path (N)",
        ),
    ];
    for ((work, force), (work_label, force_label)) in
        work_panels.into_iter().zip(force_panels).zip(labels)
    {
        panels.push(LinePanel {
            y_label: force_label,
            curves: force,
        });
        panels.push(LinePanel {
            y_label: work_label,
            curves: work,
        });
    }
    Ok(PaperFigure {
        name: "elandt-conservation",
        title: "Elandt Sec. 4.4.1: work around A → B → C → D → A across a block's edge, complete vs filtered surface".into(),
        x_label: "path: A → B (0-1), B → C (1-2), C → D (2-3), D → A (3-4)",
        panels,
        equal_aspect: false,
        numbers,
        notes: vec![
            format!(
                "A compliant block of 10 × 10 × 4 cm (E = {MODULUS:e} Pa, tetrahedra of {} mm, its field coned to its centre); a rigid 2 cm cube and a rigid sphere of radius 1 cm ({}), moved by translation: A = (−9, 0, 2.6) cm, B = (−5, 0, 2.6) cm (4 mm into the top, astride the left edge), C = (0, 0, 2.6) cm, D = (0, 0, 4) cm; the rectangle inside the top has corners x = ±1 cm, z = 2.6 and 2.3 cm. Elandt gives no numbers; the paths are ours.",
                MESH * 1e3,
                meshes.join(", ")
            ),
            "Complete: every polygon of the rigid surface inside the block (Elandt's model). Filtered: the convex step's surface, only polygons whose pressure grows along the normal into the block (positive stiffness; Masterjohn et al., Drake).".into(),
        ],
    })
}
