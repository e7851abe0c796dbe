//! The point-contact query (DESIGN step 2), once per step: every geometry pair within the
//! margin that is not a pressure-field pair, with witness points, normal, signed distance and
//! the active feature pair. f64 only, parry3d-f64 (broad phase on loosened bounding boxes,
//! narrow phase by contact manifolds).
#![allow(non_snake_case)]

use nalgebra::Vector3;
use parry3d_f64::bounding_volume::BoundingVolume;
use parry3d_f64::math::Pose as ParryPose;
use parry3d_f64::query::{
    ContactManifold, ContactManifoldsWorkspace, DefaultQueryDispatcher, PersistentQueryDispatcher,
};
use rayon::prelude::*;

use crate::collision::parry::{nv, to_parry_pose};
use crate::collision::scene::{pair_order, CollisionScene};
use crate::error::{Error, Result};
use crate::geometry::distance::{classify, ActiveFeature, LocalShape};
use crate::math::Pose;

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

/// Finds every contact point between geometries closer than `margin` (m), given each
/// geometry's world pose `X_WG` (one per geometry), except for pressure-field pairs
/// ([`crate::collision::pressure`]). Pairs are ordered by [`pair_order`]; the normal points
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
            scene.may_touch(i, j)
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
    use crate::collision::Geometry;
    use crate::geometry::Shape;
    use crate::multibody::model::BodyId;

    fn geometry(name: &str, body: BodyId, shape: Shape) -> Geometry {
        Geometry::new(name, body, Pose::identity(), shape)
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
