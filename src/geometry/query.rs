//! One geometric query per step (DESIGN step 2): every geometry pair within the margin, with
//! witness points, normal, signed distance and the active feature pair. f64 only, parry3d-f64.
#![allow(non_snake_case)]

use nalgebra::{Matrix3, Vector3};
use parry3d_f64::bounding_volume::BoundingVolume;
use parry3d_f64::math::{Pose as ParryPose, Vector as PVec};
use parry3d_f64::query::{
    ContactManifold, ContactManifoldsWorkspace, DefaultQueryDispatcher, PersistentQueryDispatcher,
};
use parry3d_f64::shape::{
    Ball, Capsule, ConvexPolyhedron, Cuboid, Cylinder, HalfSpace, SharedShape,
};
use rayon::prelude::*;

use crate::error::{Error, Result};
pub use crate::geometry::distance::ActiveFeature;
use crate::geometry::distance::{classify, ConvexTopology, LocalShape};
use crate::geometry::shape::{Geometry, Shape};
use crate::hydroelastic::surface::is_hydroelastic_pair;
use crate::hydroelastic::HydroGeometry;
use crate::math::Pose;
use crate::multibody::model::BodyId;

/// One contact point found by the query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeometricContact {
    /// Index of geometry A.
    pub geometry_a: usize,
    /// Index of geometry B (forces are reported on B).
    pub geometry_b: usize,
    /// Witness point on A, world frame (m).
    pub p_WPa: Vector3<f64>,
    /// Witness point on B, world frame (m).
    pub p_WPb: Vector3<f64>,
    /// Unit normal from A to B, world frame.
    pub nhat_W: Vector3<f64>,
    /// Signed distance φ (m), negative when overlapping.
    pub phi: f64,
    /// The active feature pair.
    pub feature: ActiveFeature,
}

/// Rotation taking parry's y-aligned cylinder to our z-aligned one.
fn y_to_z() -> Matrix3<f64> {
    Matrix3::new(1.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 1.0, 0.0)
}

fn v(p: &Vector3<f64>) -> PVec {
    PVec::new(p.x, p.y, p.z)
}

fn nv(p: PVec) -> Vector3<f64> {
    Vector3::new(p.x, p.y, p.z)
}

/// The parry shape of a [`Shape`] and its frame offset `R_GS` (parry frame S in G).
pub(crate) fn to_parry_shape(shape: &Shape) -> Option<(SharedShape, Matrix3<f64>)> {
    let id = Matrix3::identity();
    Some(match shape {
        Shape::Sphere { radius } => (SharedShape::new(Ball::new(*radius)), id),
        Shape::Box { half_extents } => (SharedShape::new(Cuboid::new(v(half_extents))), id),
        Shape::Capsule {
            radius,
            half_length,
        } => (SharedShape::new(Capsule::new_z(*half_length, *radius)), id),
        Shape::Cylinder {
            radius,
            half_length,
        } => (
            SharedShape::new(Cylinder::new(*half_length, *radius)),
            y_to_z(),
        ),
        Shape::HalfSpace => (SharedShape::new(HalfSpace::new(PVec::Z)), id),
        Shape::Ellipsoid { semi_axes } => {
            let mesh =
                crate::hydroelastic::mesh::surface_mesh(shape, 0.25 * semi_axes.min()).ok()?;
            let pts: Vec<PVec> = mesh.vertices.iter().map(v).collect();
            (
                SharedShape::new(ConvexPolyhedron::from_convex_hull(&pts)?),
                id,
            )
        }
        Shape::ConvexMesh { vertices } => {
            let pts: Vec<PVec> = vertices.iter().map(v).collect();
            (
                SharedShape::new(ConvexPolyhedron::from_convex_hull(&pts)?),
                id,
            )
        }
    })
}

fn to_parry_pose(X: &Pose<f64>) -> ParryPose {
    let m = parry3d_f64::glamx::DMat3::from_cols(
        v(&X.R.column(0).into_owned()),
        v(&X.R.column(1).into_owned()),
        v(&X.R.column(2).into_owned()),
    );
    ParryPose::from_parts(v(&X.p), parry3d_f64::glamx::DQuat::from_mat3(&m))
}

/// Faces and edges of the hull parry built for a convex mesh.
fn hull_topology(shape: &SharedShape) -> Option<ConvexTopology> {
    let hull = shape.as_convex_polyhedron()?;
    let adjacent = hull.vertices_adj_to_face();
    Some(ConvexTopology::new(
        hull.points().iter().map(|p| nv(*p)).collect(),
        hull.faces().iter().map(|f| {
            let first = f.first_vertex_or_edge as usize;
            (
                nv(f.normal),
                &adjacent[first..first + f.num_vertices_or_edges as usize],
            )
        }),
    ))
}

/// The geometries of a scene with their parry shapes, built once.
pub struct CollisionScene {
    geometries: Vec<Geometry>,
    shapes: Vec<(SharedShape, Matrix3<f64>)>,
    /// Hull topology of each convex mesh (`None` for other shapes).
    hulls: Vec<Option<ConvexTopology>>,
    /// Hydroelastic representation of each geometry with hydroelastic properties.
    hydro: Vec<Option<HydroGeometry>>,
}

impl std::fmt::Debug for CollisionScene {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CollisionScene")
            .field("geometries", &self.geometries)
            .finish_non_exhaustive()
    }
}

/// The parry shape of a validated geometry and, for a convex mesh, its hull topology.
fn parry_shape(g: &Geometry) -> Result<ParryShape> {
    g.shape.validate().map_err(|e| {
        Error::invalid(
            &format!("geometry `{}`", g.name),
            g.shape.kind(),
            &e.to_string(),
        )
    })?;
    let shape = to_parry_shape(&g.shape).expect("invariant: validated shape has a parry shape");
    let hull = hull_topology(&shape.0);
    Ok((shape, hull))
}

/// A parry shape with its rotation into the geometry's frame, and the hull topology of a
/// convex mesh.
type ParryShape = ((SharedShape, Matrix3<f64>), Option<ConvexTopology>);

/// The pressure-field representation of a geometry with hydroelastic properties.
fn hydro_geometry(g: &Geometry) -> Result<Option<HydroGeometry>> {
    g.hydroelastic
        .as_ref()
        .map(|h| HydroGeometry::new(&g.shape, h))
        .transpose()
        .map_err(|e| hydroelastic_error(g, e))
}

/// An error of `g`'s hydroelastic properties, naming the geometry.
fn hydroelastic_error(g: &Geometry, e: Error) -> Error {
    Error::invalid(
        &format!("geometry `{}` hydroelastic", g.name),
        g.shape.kind(),
        &e.to_string(),
    )
}

impl CollisionScene {
    /// Builds parry shapes for `geometries`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for an invalid shape.
    pub fn new(geometries: Vec<Geometry>) -> Result<Self> {
        let (mut shapes, mut hulls, mut hydro) = (Vec::new(), Vec::new(), Vec::new());
        for g in &geometries {
            let (shape, hull) = parry_shape(g)?;
            shapes.push(shape);
            hulls.push(hull);
            hydro.push(hydro_geometry(g)?);
        }
        Ok(CollisionScene {
            geometries,
            shapes,
            hulls,
            hydro,
        })
    }

    /// Replaces geometry `index`, rebuilding only its own representations. Its pressure-field
    /// mesh is kept when neither its shape nor the properties the mesh is built from (rigid or
    /// compliant, resolution hint, layer thickness) changed: a new modulus, placement or
    /// contact parameters (the finite differences of such parameters) rebuild nothing.
    ///
    /// # Errors
    /// As [`CollisionScene::new`] for the new geometry, or [`Error::InvalidParameter`] for an
    /// index out of range; the scene is unchanged then.
    pub fn replace(&mut self, index: usize, geometry: Geometry) -> Result<()> {
        let Some(old) = self.geometries.get(index) else {
            return Err(Error::invalid(
                "geometry",
                index,
                "no geometry with this index",
            ));
        };
        let (shape, hull) = parry_shape(&geometry)?;
        let same_mesh = old.shape == geometry.shape
            && match (&old.hydroelastic, &geometry.hydroelastic) {
                (Some(a), Some(b)) => a.with_modulus(0.0) == b.with_modulus(0.0),
                _ => false,
            };
        let hydro = if same_mesh {
            if let Some(h) = &geometry.hydroelastic {
                h.validate(&geometry.shape)
                    .map_err(|e| hydroelastic_error(&geometry, e))?;
            }
            self.hydro[index].take()
        } else {
            hydro_geometry(&geometry)?
        };
        self.geometries[index] = geometry;
        self.shapes[index] = shape;
        self.hulls[index] = hull;
        self.hydro[index] = hydro;
        Ok(())
    }

    /// The geometries.
    pub fn geometries(&self) -> &[Geometry] {
        &self.geometries
    }

    /// The hydroelastic representation of geometry `i`, if it has hydroelastic properties.
    pub fn hydro(&self, i: usize) -> Option<&HydroGeometry> {
        self.hydro[i].as_ref()
    }

    /// Whether geometries `i` and `j` are a pressure-field pair
    /// ([`is_hydroelastic_pair`]); all other pairs use point contact.
    pub fn is_hydroelastic_pair(&self, i: usize, j: usize) -> bool {
        is_hydroelastic_pair(self.hydro(i), self.hydro(j))
    }
}

/// The order `(A, B)` of a pair of geometries `i < j`: A is the world / prescribed geometry
/// when there is one, otherwise the lower index.
pub fn pair_order(geometries: &[Geometry], i: usize, j: usize) -> (usize, usize) {
    if matches!(geometries[j].body, BodyId::Body(_)) {
        (i, j)
    } else {
        (j, i)
    }
}

/// Whether geometries on these two bodies can touch: not the same body, and at least one of
/// them a body of the tree.
pub fn can_collide(a: BodyId, b: BodyId) -> bool {
    a != b && (matches!(a, BodyId::Body(_)) || matches!(b, BodyId::Body(_)))
}

/// Finds every contact point between geometries closer than `margin` (m), given each
/// geometry's world pose `X_WG` (one per geometry), except for pressure-field pairs
/// ([`crate::hydroelastic::query`]). Pairs are ordered by [`pair_order`]; the normal points
/// from A to B.
///
/// # Errors
/// [`Error::UnsupportedPair`] if parry has no narrow phase for a pair.
pub fn find_contacts(
    scene: &CollisionScene,
    X_WG: &[Pose<f64>],
    margin: f64,
) -> Result<Vec<GeometricContact>> {
    let n = scene.geometries.len();
    let poses: Vec<ParryPose> = (0..n)
        .map(|i| {
            to_parry_pose(&X_WG[i].compose(&Pose {
                R: scene.shapes[i].1,
                p: Vector3::zeros(),
            }))
        })
        .collect();
    let aabbs: Vec<_> = (0..n)
        .map(|i| scene.shapes[i].0.compute_aabb(&poses[i]).loosened(margin))
        .collect();
    // Broad phase: pairs that may collide and whose loosened boxes overlap, in index order.
    let candidates: Vec<(usize, usize)> = (0..n)
        .flat_map(|i| ((i + 1)..n).map(move |j| (i, j)))
        .filter(|&(i, j)| {
            can_collide(scene.geometries[i].body, scene.geometries[j].body)
                && !scene.is_hydroelastic_pair(i, j)
                && aabbs[i].intersects(&aabbs[j])
        })
        .collect();
    // Narrow phase, in parallel over the candidates when there are enough to pay for the
    // threads; either way the pairs' contacts are concatenated in candidate order, so the
    // result is the same bit for bit.
    let narrow = |&(i, j): &(usize, usize)| narrow_phase(scene, X_WG, &poses, i, j, margin);
    let per_pair: Vec<Vec<GeometricContact>> = if candidates.len() >= PARALLEL_MIN_PAIRS {
        candidates
            .par_iter()
            .with_min_len(PARALLEL_MIN_PAIRS / 2)
            .map(narrow)
            .collect::<Result<_>>()?
    } else {
        candidates.iter().map(narrow).collect::<Result<_>>()?
    };
    Ok(per_pair.concat())
}

/// Candidate pairs from which the narrow phase runs on rayon's threads: below, the threads
/// cost more than the queries (a box-box manifold takes a few µs).
pub const PARALLEL_MIN_PAIRS: usize = 64;

/// The contact points of candidate pair `(i, j)` (`i < j`), A being the world or prescribed
/// geometry when there is one.
fn narrow_phase(
    scene: &CollisionScene,
    X_WG: &[Pose<f64>],
    poses: &[ParryPose],
    i: usize,
    j: usize,
    margin: f64,
) -> Result<Vec<GeometricContact>> {
    let (a, b) = pair_order(&scene.geometries, i, j);
    let mut manifolds: Vec<ContactManifold<(), ()>> = Vec::new();
    let mut workspace: Option<ContactManifoldsWorkspace> = None;
    let pos12 = poses[a].inv_mul(&poses[b]);
    DefaultQueryDispatcher
        .contact_manifolds(
            &pos12,
            scene.shapes[a].0.as_ref(),
            scene.shapes[b].0.as_ref(),
            margin,
            &mut manifolds,
            &mut workspace,
        )
        .map_err(|_| Error::UnsupportedPair {
            a: scene.geometries[a].shape.kind().to_string(),
            b: scene.geometries[b].shape.kind().to_string(),
        })?;
    let (R_GaSa, R_GbSb) = (scene.shapes[a].1, scene.shapes[b].1);
    let X_AB = X_WG[a].inverse().compose(&X_WG[b]);
    let local = |i: usize| LocalShape {
        shape: &scene.geometries[i].shape,
        hull: scene.hulls[i].as_ref(),
    };
    let mut out = Vec::new();
    for m in &manifolds {
        let n_Sa = nv(m.local_n1);
        for c in &m.points {
            if c.dist >= margin {
                continue;
            }
            let (p_Sa, p_Sb) = (nv(c.local_p1), nv(c.local_p2));
            let (p_AoPa_A, p_BoPb_B, nhat_A) = (R_GaSa * p_Sa, R_GbSb * p_Sb, R_GaSa * n_Sa);
            let (point_a, point_b, kind) =
                classify(local(a), local(b), &X_AB, &p_AoPa_A, &p_BoPb_B, &nhat_A);
            out.push(GeometricContact {
                geometry_a: a,
                geometry_b: b,
                p_WPa: nv(poses[a].transform_point(c.local_p1)),
                p_WPb: nv(poses[b].transform_point(c.local_p2)),
                nhat_W: nv(poses[a].transform_vector(m.local_n1)).normalize(),
                phi: c.dist,
                feature: ActiveFeature {
                    p_AoPa_A,
                    p_BoPb_B,
                    nhat_A,
                    feature_a: c.fid1.0,
                    feature_b: c.fid2.0,
                    point_a,
                    point_b,
                    kind,
                },
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geometry(name: &str, body: BodyId, shape: Shape) -> Geometry {
        Geometry {
            name: name.into(),
            body,
            X_BG: Pose::identity(),
            shape,
            contact: None,
            hydroelastic: None,
        }
    }

    /// A new modulus or new contact parameters keep a geometry's pressure-field mesh (the
    /// same buffers); a new resolution hint or shape rebuilds it; invalid properties and a
    /// missing index are refused, leaving the scene as it was.
    #[test]
    fn replace_rebuilds_a_mesh_only_when_its_shape_or_resolution_changes() {
        use crate::contact::ContactParams;
        use crate::hydroelastic::{HydroGeometry, Hydroelastic};
        let compliant = |modulus: f64, resolution_hint: f64| Hydroelastic::Compliant {
            modulus,
            resolution_hint,
            thickness: None,
        };
        let mut ball = geometry("ball", BodyId::Body(0), Shape::Sphere { radius: 0.05 });
        ball.hydroelastic = Some(compliant(1e5, 0.01));
        let mut scene = CollisionScene::new(vec![ball.clone()]).unwrap();
        let mesh = |scene: &CollisionScene| match scene.hydro(0) {
            Some(HydroGeometry::CompliantMesh(f)) => (f.mesh.vertices.as_ptr(), f.mesh.tets.len()),
            other => panic!("{other:?}"),
        };
        let (buffer, tets) = mesh(&scene);
        let mut stiffer = ball.clone();
        stiffer.hydroelastic = Some(compliant(4e5, 0.01));
        stiffer.contact = Some(ContactParams {
            mu: 0.9,
            ..Default::default()
        });
        scene.replace(0, stiffer.clone()).unwrap();
        assert_eq!(mesh(&scene), (buffer, tets));
        assert_eq!(scene.geometries()[0], stiffer);
        let mut invalid = stiffer.clone();
        invalid.hydroelastic = Some(compliant(-1.0, 0.01));
        assert!(scene.replace(0, invalid).is_err());
        assert!(scene.replace(1, stiffer.clone()).is_err());
        assert_eq!(mesh(&scene), (buffer, tets));
        assert_eq!(scene.geometries()[0], stiffer);
        let mut finer = stiffer.clone();
        finer.hydroelastic = Some(compliant(4e5, 0.005));
        scene.replace(0, finer).unwrap();
        assert!(mesh(&scene).1 > tets);
        let mut larger = stiffer;
        larger.shape = Shape::Sphere { radius: 0.08 };
        scene.replace(0, larger).unwrap();
        let fresh = CollisionScene::new(scene.geometries().to_vec()).unwrap();
        assert_eq!(mesh(&scene).1, mesh(&fresh).1);
        let Some(HydroGeometry::CompliantMesh(f)) = scene.hydro(0) else {
            unreachable!()
        };
        let radius = f.mesh.vertices.iter().map(|v| v.norm()).fold(0.0, f64::max);
        assert!((radius - 0.08).abs() < 1e-12, "{radius}");
    }

    fn ground_and(shape: Shape, X: Pose<f64>) -> Vec<GeometricContact> {
        let scene = CollisionScene::new(vec![
            geometry("ground", BodyId::World, Shape::HalfSpace),
            geometry("b", BodyId::Body(0), shape),
        ])
        .unwrap();
        find_contacts(&scene, &[Pose::identity(), X], 0.01).unwrap()
    }

    #[test]
    fn sphere_above_ground_within_margin() {
        let c = ground_and(
            Shape::Sphere { radius: 0.1 },
            Pose::translation(Vector3::new(0.3, 0.0, 0.105)),
        );
        assert_eq!(c.len(), 1);
        assert!((c[0].phi - 0.005).abs() < 1e-12);
        assert!((c[0].nhat_W - Vector3::z()).norm() < 1e-12);
        assert!((c[0].p_WPb - Vector3::new(0.3, 0.0, 0.005)).norm() < 1e-12);
        assert_eq!((c[0].geometry_a, c[0].geometry_b), (0, 1));
        assert!(ground_and(
            Shape::Sphere { radius: 0.1 },
            Pose::translation(Vector3::new(0.0, 0.0, 0.2))
        )
        .is_empty());
    }

    #[test]
    fn flat_box_on_ground_has_four_corner_contacts() {
        let h = Vector3::new(0.025, 0.025, 0.025);
        let c = ground_and(
            Shape::Box { half_extents: h },
            Pose::translation(Vector3::new(0.0, 0.0, 0.0249)),
        );
        assert_eq!(c.len(), 4, "{c:#?}");
        for k in &c {
            assert!((k.phi + 1e-4).abs() < 1e-12);
            assert!((k.p_WPb.xy().abs() - h.xy()).norm() < 1e-12);
        }
    }

    #[test]
    fn cylinder_lying_on_ground_touches_along_its_length() {
        // Axis along x: rotate z onto x.
        let R =
            *nalgebra::Rotation3::from_axis_angle(&Vector3::y_axis(), std::f64::consts::FRAC_PI_2)
                .matrix();
        let c = ground_and(
            Shape::Cylinder {
                radius: 0.05,
                half_length: 0.2,
            },
            Pose {
                R,
                p: Vector3::new(0.0, 0.0, 0.0499),
            },
        );
        assert!(c.len() >= 2, "{c:#?}");
        for k in &c {
            assert!((k.phi + 1e-4).abs() < 1e-9);
        }
    }

    #[test]
    fn capsule_tip_and_convex_mesh() {
        let c = ground_and(
            Shape::Capsule {
                radius: 0.005,
                half_length: 0.245,
            },
            Pose::translation(Vector3::new(0.0, 0.0, 0.25)),
        );
        assert_eq!(c.len(), 1);
        assert!((c[0].phi).abs() < 1e-12);
        let tet = Shape::ConvexMesh {
            vertices: vec![
                Vector3::new(0.0, 0.0, 0.0),
                Vector3::new(0.1, 0.0, 0.1),
                Vector3::new(0.0, 0.1, 0.1),
                Vector3::new(-0.1, -0.1, 0.1),
            ],
        };
        let c = ground_and(tet, Pose::translation(Vector3::new(0.0, 0.0, -0.001)));
        assert_eq!(c.len(), 1);
        assert!((c[0].phi + 0.001).abs() < 1e-12);
    }
}
