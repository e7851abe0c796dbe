//! The hydroelastic representation of a geometry (Elandt Ch. 4): a rigid triangle mesh or
//! plane, a compliant tetrahedral mesh with its piecewise-linear pressure field `p0 = E·e`,
//! or a compliant layer. Static geometry in f64 (geometry frame), with a BVH over elements
//! (parry3d-f64); the modulus `E` stays outside so it can be a dual number.
#![allow(non_snake_case)]

use std::sync::OnceLock;

use nalgebra::{Matrix4, Vector3, Vector4};
use parry3d_f64::bounding_volume::Aabb;
use parry3d_f64::math::Vector as PVec;
use parry3d_f64::partitioning::{Bvh, BvhBuildStrategy};

use crate::error::{Error, Result};
use crate::geometry::mesh::{
    capsule_tet_mesh, star_centre, surface_mesh, tet_mesh, SurfaceMesh, TetMesh,
};
use crate::geometry::Shape;
use crate::hydroelastic::clip::{tet_faces, HalfSpace, Record};
use crate::hydroelastic::Hydroelastic;

/// One tetrahedron of a [`TetField`] (geometry frame): its vertices and its field
/// `e(x) = ∇e · x + e0`, side by side so that slicing it is one contiguous read (two cache
/// lines) instead of one per vertex through the mesh's indices.
#[derive(Clone, Copy, Debug)]
pub struct TetElement {
    /// The vertices, in the mesh's order.
    pub vertices: [Vector3<f64>; 4],
    /// Gradient `∇e` (1/m).
    pub gradient: Vector3<f64>,
    /// Offset `e0`.
    pub offset: f64,
}

/// A tetrahedral mesh with the extent field, linear in each tetrahedron:
/// `e(x) = ∇e_t · x + e0_t` for `x` in tetrahedron `t` (geometry frame).
#[derive(Clone, Debug)]
pub struct TetField {
    /// The mesh.
    pub mesh: TetMesh,
    /// Each tetrahedron's vertices and field, side by side.
    pub elements: Vec<TetElement>,
    /// Bit `k` set when the face opposite vertex `k` lies on the surface (`e = 0`).
    pub boundary: Vec<u8>,
    /// Each tetrahedron's faces, made at the first call of [`TetField::faces`].
    faces: OnceLock<TetFaces>,
    /// BVH over the tetrahedra.
    pub bvh: Bvh,
}

/// The faces of a [`TetField`]'s tetrahedra: what clipping by a tetrahedron needs (a rigid
/// triangle or another compliant mesh's slice), 129 bytes a tetrahedron, so made only for
/// meshes that meet one ([`TetField::faces`]), not for a mesh that only meets planes.
#[derive(Clone, Debug)]
pub struct TetFaces {
    /// The half-spaces of each tetrahedron's faces, the tetrahedron inside ([`tet_faces`],
    /// geometry frame).
    pub faces: Vec<[HalfSpace<f64>; 4]>,
    /// The decisions [`tet_faces`] made for them: bit `k` set when face `k`'s normal was
    /// flipped.
    pub flips: Vec<u8>,
}

impl TetField {
    /// The field of `mesh`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a degenerate tetrahedron.
    pub fn new(mesh: TetMesh) -> Result<Self> {
        let n = mesh.tets.len();
        let (mut elements, mut boundary) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let mut boxes = Vec::with_capacity(n);
        for t in &mesh.tets {
            let x = t.map(|i| mesh.vertices[i as usize]);
            let e = t.map(|i| mesh.extent[i as usize]);
            // Rows [x_kᵀ 1] [∇e; e0] = e_k.
            let M = Matrix4::from_fn(|r, c| if c < 3 { x[r][c] } else { 1.0 });
            let sol = M
                .lu()
                .solve(&Vector4::from(e))
                .ok_or_else(|| Error::invalid("mesh", "tetrahedron", "degenerate tetrahedron"))?;
            elements.push(TetElement {
                vertices: x,
                gradient: Vector3::new(sol[0], sol[1], sol[2]),
                offset: sol[3],
            });
            boundary.push(
                (0..4)
                    .filter(|&k| (0..4).filter(|&j| j != k).all(|j| e[j] == 0.0))
                    .fold(0u8, |m, k| m | (1 << k)),
            );
            boxes.push(aabb(&x));
        }
        let bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &boxes);
        Ok(TetField {
            mesh,
            elements,
            boundary,
            faces: OnceLock::new(),
            bvh,
        })
    }

    /// The faces of the tetrahedra ([`TetFaces`]), made at the first call.
    pub fn faces(&self) -> &TetFaces {
        self.faces.get_or_init(|| {
            let (faces, flips) = self
                .elements
                .iter()
                .map(|e| {
                    let mut flips = Record::default();
                    let faces = tet_faces(&e.vertices, &mut flips);
                    (faces, flips.0.first_bits())
                })
                .unzip();
            TetFaces { faces, flips }
        })
    }

    /// The extent `e(x) = ∇e_t · x + e0_t` of tetrahedron `t`'s field at `x` (geometry frame).
    #[inline(always)]
    pub fn extent(&self, t: usize, x: &Vector3<f64>) -> f64 {
        let e = &self.elements[t];
        e.gradient.dot(x) + e.offset
    }

    /// The vertices of tetrahedron `t` (geometry frame).
    #[inline(always)]
    pub fn tet(&self, t: usize) -> [Vector3<f64>; 4] {
        self.elements[t].vertices
    }
}

/// Bounding box of points (geometry frame).
pub fn aabb(points: &[Vector3<f64>]) -> Aabb {
    let (mut lo, mut hi) = (points[0], points[0]);
    for p in points {
        lo = lo.inf(p);
        hi = hi.sup(p);
    }
    Aabb::new(PVec::new(lo.x, lo.y, lo.z), PVec::new(hi.x, hi.y, hi.z))
}

/// A rigid triangle mesh with a BVH over its triangles.
#[derive(Clone, Debug)]
pub struct RigidMesh {
    /// The outward surface.
    pub mesh: SurfaceMesh,
    /// BVH over the triangles.
    pub bvh: Bvh,
}

impl RigidMesh {
    /// `mesh` with a BVH over its triangles.
    pub fn new(mesh: SurfaceMesh) -> Self {
        let boxes: Vec<Aabb> = mesh
            .triangles
            .iter()
            .map(|t| aabb(&t.map(|i| mesh.vertices[i as usize])))
            .collect();
        let bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &boxes);
        RigidMesh { mesh, bvh }
    }

    /// The vertices of triangle `t` (geometry frame).
    #[inline(always)]
    pub fn triangle(&self, t: usize) -> [Vector3<f64>; 3] {
        self.mesh.triangles[t].map(|i| self.mesh.vertices[i as usize])
    }
}

/// A mesh built by the user for pressure-field contact, in place of the one the shape's
/// mesher makes (a screw thread: [`crate::geometry::thread`]); geometry frame, m. A geometry
/// with one ([`crate::collision::Geometry::from_mesh`]) takes part in pressure-field contact
/// only: point contact has no use for it.
#[derive(Clone, Debug, PartialEq)]
pub enum ContactMesh {
    /// A rigid geometry's closed triangle surface, triangles counter-clockwise seen from
    /// outside.
    Rigid(SurfaceMesh),
    /// A compliant geometry's tetrahedral mesh with its extent `e` at the vertices: 0 on the
    /// surface, up to 1 inside (Elandt Sec. 5.1); the pressure is `E·e`.
    Compliant(TetMesh),
}

impl ContactMesh {
    /// The vertices (m, geometry frame).
    pub fn vertices(&self) -> &[Vector3<f64>] {
        match self {
            ContactMesh::Rigid(m) => &m.vertices,
            ContactMesh::Compliant(m) => &m.vertices,
        }
    }

    /// Checks that the mesh has elements, indices in range, finite vertices and, for a
    /// tetrahedral mesh, one extent in `[0, 1]` per vertex.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming what is wrong.
    pub fn validate(&self) -> Result<()> {
        let vertices = self.vertices();
        if !vertices.iter().all(|v| v.iter().all(|x| x.is_finite())) {
            return Err(Error::invalid("mesh", "vertex", "vertices must be finite"));
        }
        let n = vertices.len();
        let (elements, in_range) = match self {
            ContactMesh::Rigid(m) => (
                m.triangles.len(),
                m.triangles.iter().flatten().all(|&i| (i as usize) < n),
            ),
            ContactMesh::Compliant(m) => {
                if m.extent.len() != n || m.extent.iter().any(|e| !(0.0..=1.0).contains(e)) {
                    return Err(Error::invalid(
                        "mesh",
                        "extent",
                        "one extent in [0, 1] per vertex",
                    ));
                }
                (
                    m.tets.len(),
                    m.tets.iter().flatten().all(|&i| (i as usize) < n),
                )
            }
        };
        if elements == 0 {
            return Err(Error::invalid("mesh", 0, "a mesh needs elements"));
        }
        if !in_range {
            return Err(Error::invalid("mesh", "index", "vertex index out of range"));
        }
        Ok(())
    }
}

/// The hydroelastic representation of one geometry.
#[derive(Clone, Debug)]
pub enum HydroGeometry {
    /// A rigid half-space `z ≤ 0`: its boundary plane.
    RigidPlane,
    /// A rigid triangle mesh.
    RigidMesh(RigidMesh),
    /// A compliant tetrahedral mesh; pressure `E·e`.
    CompliantMesh(TetField),
    /// A compliant half-space: pressure `E · (−z) / thickness` below `z = 0`.
    CompliantLayer {
        /// Layer thickness (m).
        thickness: f64,
    },
}

impl HydroGeometry {
    /// Builds the representation of `shape` with `properties` (meshes from the resolution
    /// hint).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for invalid properties or a shape that cannot be meshed.
    pub fn new(shape: &Shape, properties: &Hydroelastic) -> Result<Self> {
        properties.validate(shape)?;
        let hint = properties.resolution_hint();
        Ok(match (shape, properties) {
            (Shape::HalfSpace, Hydroelastic::Rigid { .. }) => HydroGeometry::RigidPlane,
            (Shape::HalfSpace, Hydroelastic::Compliant { thickness, .. }) => {
                HydroGeometry::CompliantLayer {
                    thickness: thickness.expect("invariant: validated compliant half-space"),
                }
            }
            (_, Hydroelastic::Rigid { .. }) => {
                HydroGeometry::RigidMesh(RigidMesh::new(surface_mesh(shape, hint)?))
            }
            (_, Hydroelastic::Compliant { .. }) => {
                let surface = surface_mesh(shape, hint)?;
                let mesh = match shape {
                    Shape::Capsule { half_length, .. } => capsule_tet_mesh(&surface, *half_length)?,
                    _ => tet_mesh(&surface, &star_centre(shape, &surface))?,
                };
                HydroGeometry::CompliantMesh(TetField::new(mesh)?)
            }
        })
    }

    /// The representation of a geometry whose mesh the user built ([`ContactMesh`]), with
    /// `properties` of the same kind: rigid for a triangle surface, compliant (no layer
    /// thickness) for a tetrahedral mesh.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for invalid properties, properties of the other kind than
    /// the mesh, an empty mesh, an index out of range, a non-finite vertex, an extent outside
    /// `[0, 1]` or a degenerate tetrahedron.
    pub fn from_mesh(mesh: &ContactMesh, properties: &Hydroelastic) -> Result<Self> {
        mesh.validate()?;
        properties.validate(&Shape::ConvexMesh {
            vertices: Vec::new(),
        })?;
        match (mesh, properties) {
            (ContactMesh::Rigid(m), Hydroelastic::Rigid { .. }) => {
                Ok(HydroGeometry::RigidMesh(RigidMesh::new(m.clone())))
            }
            (ContactMesh::Compliant(m), Hydroelastic::Compliant { .. }) => {
                Ok(HydroGeometry::CompliantMesh(TetField::new(m.clone())?))
            }
            (ContactMesh::Rigid(_), _) => Err(Error::invalid(
                "hydroelastic",
                "compliant",
                "a triangle surface is rigid: a compliant mesh is a tetrahedral mesh",
            )),
            (ContactMesh::Compliant(_), _) => Err(Error::invalid(
                "hydroelastic",
                "rigid",
                "a tetrahedral mesh is compliant: a rigid mesh is a triangle surface",
            )),
        }
    }

    /// True for compliant geometries.
    pub fn is_compliant(&self) -> bool {
        matches!(
            self,
            HydroGeometry::CompliantMesh(_) | HydroGeometry::CompliantLayer { .. }
        )
    }

    /// The BVH over the elements of a mesh (`None` for a plane or layer).
    pub fn bvh(&self) -> Option<&Bvh> {
        match self {
            HydroGeometry::RigidMesh(m) => Some(&m.bvh),
            HydroGeometry::CompliantMesh(f) => Some(&f.bvh),
            HydroGeometry::RigidPlane | HydroGeometry::CompliantLayer { .. } => None,
        }
    }

    /// The vertices of element `e` of a mesh (geometry frame); empty for a plane or layer.
    pub fn element_vertices(&self, e: u32) -> Vec<Vector3<f64>> {
        match self {
            HydroGeometry::RigidMesh(m) => m.triangle(e as usize).to_vec(),
            HydroGeometry::CompliantMesh(f) => f.tet(e as usize).to_vec(),
            HydroGeometry::RigidPlane | HydroGeometry::CompliantLayer { .. } => Vec::new(),
        }
    }

    /// Number of elements (tetrahedra or triangles; 1 for a plane or layer).
    pub fn elements(&self) -> usize {
        match self {
            HydroGeometry::RigidPlane | HydroGeometry::CompliantLayer { .. } => 1,
            HydroGeometry::RigidMesh(m) => m.mesh.triangles.len(),
            HydroGeometry::CompliantMesh(f) => f.mesh.tets.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_field_is_the_distance_to_the_nearest_face_over_its_depth() {
        let h = Vector3::new(0.1, 0.2, 0.05);
        let g = HydroGeometry::new(
            &Shape::Box { half_extents: h },
            &Hydroelastic::Compliant {
                modulus: 1e5,
                resolution_hint: 0.02,
                thickness: None,
            },
        )
        .unwrap();
        let HydroGeometry::CompliantMesh(f) = g else {
            panic!("a compliant box has a tet mesh")
        };
        // e = 1 − max(|x|/hx, |y|/hy, |z|/hz), linear in each face pyramid, so exact.
        for t in 0..f.mesh.tets.len() {
            let x = f.tet(t).iter().sum::<Vector3<f64>>() / 4.0;
            let e = f.extent(t, &x);
            let exact = 1.0 - (x.x.abs() / h.x).max(x.y.abs() / h.y).max(x.z.abs() / h.z);
            assert!((e - exact).abs() < 1e-12, "{e} vs {exact}");
        }
        assert!(f.boundary.iter().filter(|&&b| b != 0).count() > 0);
    }

    /// A user mesh becomes the representation of its kind, with its own elements; a mesh of
    /// the other kind than its properties, or with an extent outside [0, 1], is an error.
    #[test]
    fn user_meshes_need_properties_of_their_kind_and_a_valid_extent() {
        use crate::geometry::thread::{external_thread, internal_thread, IsoThread};
        let thread = IsoThread {
            major_diameter: 0.01,
            pitch: 0.0015,
        };
        let bolt = ContactMesh::Rigid(external_thread(&thread, 1e-4, 3, 24).unwrap());
        let nut = internal_thread(&thread, 0.008, 3, 24, &[0.2, 0.5], 1, 1e-3).unwrap();
        let (rigid, compliant) = (
            Hydroelastic::rigid(1e-3),
            Hydroelastic::compliant(1e8, 1e-3),
        );
        let g = HydroGeometry::from_mesh(&bolt, &rigid).unwrap();
        let ContactMesh::Rigid(surface) = &bolt else {
            unreachable!()
        };
        assert_eq!(g.elements(), surface.triangles.len());
        assert!(!g.is_compliant());
        let tets = nut.tets.len();
        let g = HydroGeometry::from_mesh(&ContactMesh::Compliant(nut.clone()), &compliant).unwrap();
        assert!(g.is_compliant() && g.elements() == tets);
        assert!(HydroGeometry::from_mesh(&bolt, &compliant).is_err());
        assert!(HydroGeometry::from_mesh(&ContactMesh::Compliant(nut.clone()), &rigid).is_err());
        let mut bad = nut;
        bad.extent[0] = 1.5;
        assert!(HydroGeometry::from_mesh(&ContactMesh::Compliant(bad), &compliant).is_err());
    }

    #[test]
    fn invalid_properties_are_errors() {
        let layer = Hydroelastic::Compliant {
            modulus: 1e5,
            resolution_hint: 0.01,
            thickness: None,
        };
        assert!(HydroGeometry::new(&Shape::HalfSpace, &layer).is_err());
        let negative = Hydroelastic::Compliant {
            modulus: -1.0,
            resolution_hint: 0.01,
            thickness: None,
        };
        assert!(HydroGeometry::new(&Shape::Sphere { radius: 0.1 }, &negative).is_err());
    }
}
