//! Our shapes and poses as parry3d-f64's: shapes with their frame offsets (parry's cylinder
//! is y-aligned, ours z-aligned), poses, and the topology of the hull parry builds for a convex
//! mesh (for the feature re-evaluation of [`crate::geometry::distance`]).
#![allow(non_snake_case)]

use nalgebra::{Matrix3, Vector3};
use parry3d_f64::math::{Pose as ParryPose, Vector as PVec};
use parry3d_f64::shape::{
    Ball, Capsule, ConvexPolyhedron, Cuboid, Cylinder, HalfSpace, SharedShape,
};

use crate::geometry::distance::ConvexTopology;
use crate::geometry::Shape;
use crate::math::Pose;

/// Rotation taking parry's y-aligned cylinder to our z-aligned one.
pub(super) fn y_to_z() -> Matrix3<f64> {
    Matrix3::new(1.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 1.0, 0.0)
}

pub(super) fn v(p: &Vector3<f64>) -> PVec {
    PVec::new(p.x, p.y, p.z)
}

pub(super) fn nv(p: PVec) -> Vector3<f64> {
    Vector3::new(p.x, p.y, p.z)
}

/// The parry shape of a [`Shape`] and its frame offset `R_GS` (parry frame S in G).
pub(super) fn to_parry_shape(shape: &Shape) -> Option<(SharedShape, Matrix3<f64>)> {
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
            let mesh = crate::geometry::mesh::surface_mesh(shape, 0.25 * semi_axes.min()).ok()?;
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

pub(super) fn to_parry_pose(X: &Pose<f64>) -> ParryPose {
    let m = parry3d_f64::glamx::DMat3::from_cols(
        v(&X.R.column(0).into_owned()),
        v(&X.R.column(1).into_owned()),
        v(&X.R.column(2).into_owned()),
    );
    ParryPose::from_parts(v(&X.p), parry3d_f64::glamx::DQuat::from_mat3(&m))
}

/// Faces and edges of the hull parry built for a convex mesh.
pub(super) fn hull_topology(shape: &SharedShape) -> Option<ConvexTopology> {
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
