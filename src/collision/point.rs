//! The point-contact query (DESIGN step 2), once per step: every geometry pair within the
//! margin that is not a pressure-field pair, with witness points, normal, signed distance and
//! the active feature pair. f64 only, parry3d-f64 (broad phase on loosened bounding boxes,
//! narrow phase by contact manifolds).
#![allow(non_snake_case)]

use nalgebra::Vector3;
use parry3d_f64::bounding_volume::{Aabb, BoundingVolume};
use parry3d_f64::math::Pose as ParryPose;
use parry3d_f64::query::{
    ContactManifold, DefaultQueryDispatcher, PersistentQueryDispatcher, TrackedContact, Unsupported,
};
use parry3d_f64::shape::{
    HalfSpace, PackedFeatureId, PolygonalFeature, PolygonalFeatureMap, ShapeType,
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
    let mut query = PointQuery::default();
    query.find(scene, X_WG, margin)?;
    Ok(query.contacts)
}

/// The point-contact query with its lists kept from one step to the next
/// ([`PointQuery::find`]): the parry poses and boxes, the candidate pairs, each candidate's
/// contact manifold and contacts, and the contacts found. Once it has seen as many candidates
/// and contacts, a query allocates nothing (but what rayon may, when the narrow phase runs on
/// its threads).
#[derive(Default)]
pub struct PointQuery {
    poses: Vec<ParryPose>,
    aabbs: Vec<Aabb>,
    /// The geometries in the order of their boxes' lowest x (the broad phase's sweep).
    sweep: Vec<usize>,
    candidates: Vec<(usize, usize)>,
    /// One per candidate (the first `candidates.len()` of them).
    pairs: Vec<PairQuery>,
    /// The contacts found by the last [`PointQuery::find`], in candidate order.
    pub contacts: Vec<GeometricContact>,
}

impl std::fmt::Debug for PointQuery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PointQuery")
            .field("contacts", &self.contacts)
            .finish_non_exhaustive()
    }
}

/// The narrow phase of one candidate pair: the manifold parry writes into, handed to it as
/// fresh at every query (its point list kept), and the pair's contacts.
#[derive(Default)]
struct PairQuery {
    manifolds: Vec<ContactManifold<(), ()>>,
    contacts: Vec<GeometricContact>,
    error: Option<Error>,
}

impl PointQuery {
    /// [`find_contacts`] into [`PointQuery::contacts`], reusing the lists of the last query.
    /// The result is that of [`find_contacts`], bit for bit: each pair's manifold is handed to
    /// parry as a new one (no contact kept from the last query, which parry would update
    /// instead of computing anew).
    ///
    /// # Errors
    /// As [`find_contacts`]; the first failing pair in candidate order.
    pub fn find(&mut self, scene: &CollisionScene, X_WG: &[Pose<f64>], margin: f64) -> Result<()> {
        let n = scene.geometries.len();
        let PointQuery {
            poses,
            aabbs,
            sweep,
            candidates,
            pairs,
            contacts,
        } = self;
        poses.clear();
        poses.extend((0..n).map(|i| {
            to_parry_pose(&X_WG[i].compose(&Pose {
                R: scene.shapes[i].1,
                p: Vector3::zeros(),
            }))
        }));
        aabbs.clear();
        aabbs.extend((0..n).map(|i| scene.shapes[i].0.compute_aabb(&poses[i]).loosened(margin)));
        // Broad phase: pairs that may collide and whose loosened boxes overlap, in index
        // order. Sort and sweep along x: a box is tested only against those whose x-interval
        // starts within its own, O(n log n + pairs) for a pile instead of all n²/2 pairs.
        sweep.clear();
        sweep.extend(0..n);
        sweep
            .sort_unstable_by(|&i, &j| aabbs[i].mins.x.total_cmp(&aabbs[j].mins.x).then(i.cmp(&j)));
        candidates.clear();
        for (a, &i) in sweep.iter().enumerate() {
            for &j in &sweep[a + 1..] {
                if aabbs[j].mins.x > aabbs[i].maxs.x {
                    break;
                }
                let (i, j) = (i.min(j), i.max(j));
                if aabbs[i].intersects(&aabbs[j])
                    && scene.may_touch(i, j)
                    && !scene.is_hydroelastic_pair(i, j)
                {
                    candidates.push((i, j));
                }
            }
        }
        candidates.sort_unstable();
        if pairs.len() < candidates.len() {
            pairs.resize_with(candidates.len(), PairQuery::default);
        }
        // Narrow phase, in parallel over the candidates when there are enough to pay for the
        // threads; either way the pairs' contacts are concatenated in candidate order, so the
        // result is the same bit for bit.
        let poses = &poses[..];
        let narrow = |(pair, &(i, j)): (&mut PairQuery, &(usize, usize))| {
            pair.error = narrow_phase(scene, X_WG, poses, i, j, margin, pair).err();
        };
        let pairs = &mut pairs[..candidates.len()];
        // With one thread in the pool the hand-over (waking a worker and waiting for it) is
        // all there is: a quarter of the 40-body clutter's CPU time (docs/benchmarks.md).
        if candidates.len() >= PARALLEL_MIN_PAIRS && rayon::current_num_threads() > 1 {
            pairs
                .par_iter_mut()
                .zip(candidates.par_iter())
                .with_min_len(PARALLEL_MIN_PAIRS / 2)
                .for_each(narrow);
        } else {
            pairs.iter_mut().zip(candidates.iter()).for_each(narrow);
        }
        contacts.clear();
        for pair in pairs.iter_mut() {
            if let Some(e) = pair.error.take() {
                return Err(e);
            }
            contacts.extend_from_slice(&pair.contacts);
        }
        Ok(())
    }
}

/// Candidate pairs from which the narrow phase runs on rayon's threads: below, the threads
/// cost more than the queries (a box-box manifold takes a few µs).
pub const PARALLEL_MIN_PAIRS: usize = 64;

/// Points reserved in a pair's manifold: two clipped box faces give at most 8, so a pair's
/// storage does not grow (allocate) in a later step when it touches at more points.
const MANIFOLD_POINTS: usize = 16;

/// `manifolds` as parry's query receives them fresh (one new manifold), keeping the storage
/// of the first one's points ([`MANIFOLD_POINTS`] at least).
fn fresh_manifold(manifolds: &mut Vec<ContactManifold<(), ()>>) {
    manifolds.truncate(1);
    match manifolds.first_mut() {
        Some(m) => {
            let mut points = std::mem::take(&mut m.points);
            points.clear();
            points.reserve(MANIFOLD_POINTS);
            *m = ContactManifold::new();
            m.points = points;
        }
        None => manifolds.push(ContactManifold::new()),
    }
}

/// The contact manifold of a half-space and a polyhedral shape (`pos12`: the shape in the
/// half-space's frame, or the other way round when `flipped`), as parry's
/// `contact_manifold_halfspace_pfm` computes it into a fresh manifold, the same operations
/// in the same order; parry's own takes the manifold's point list out to match contacts
/// with and fills a new one, an allocation per query we avoid.
fn halfspace_pfm(
    pos12: &ParryPose,
    halfspace1: &HalfSpace,
    (pfm2, border_radius2): (&dyn PolygonalFeatureMap, f64),
    prediction: f64,
    manifold: &mut ContactManifold<(), ()>,
    flipped: bool,
) {
    let normal1_2 = pos12.rotation.inverse() * halfspace1.normal;
    let mut feature2 = PolygonalFeature::default();
    pfm2.local_support_feature(-normal1_2, &mut feature2);
    manifold.points.clear();
    for i in 0..feature2.num_vertices {
        let vtx2 = feature2.vertices[i];
        let vtx2_1 = pos12 * vtx2;
        let dist_to_plane = vtx2_1.dot(halfspace1.normal);
        if dist_to_plane - border_radius2 <= prediction {
            manifold.points.push(TrackedContact::flipped(
                vtx2_1 - halfspace1.normal * dist_to_plane,
                vtx2 - normal1_2 * border_radius2,
                PackedFeatureId::face(0),
                feature2.vids[i],
                dist_to_plane - border_radius2,
                flipped,
            ));
        }
    }
    if flipped {
        manifold.local_n1 = -normal1_2;
        manifold.local_n2 = halfspace1.normal;
    } else {
        manifold.local_n1 = halfspace1.normal;
        manifold.local_n2 = -normal1_2;
    }
}

/// Parry's contact manifolds of shapes `a` and `b` at `pos12` (b in a's frame) into
/// `manifolds`, handed over fresh ([`fresh_manifold`]): parry's dispatcher, but for a
/// half-space against a shape other than a ball ([`halfspace_pfm`]), and with a workspace of
/// its own for composite shapes (none of ours).
fn manifolds_of(
    pos12: &ParryPose,
    a: &dyn parry3d_f64::shape::Shape,
    b: &dyn parry3d_f64::shape::Shape,
    margin: f64,
    manifolds: &mut Vec<ContactManifold<(), ()>>,
) -> std::result::Result<(), Unsupported> {
    let convex = a.is_convex() && b.is_convex();
    if !convex {
        manifolds.clear();
        return DefaultQueryDispatcher.contact_manifolds(pos12, a, b, margin, manifolds, &mut None);
    }
    fresh_manifold(manifolds);
    let manifold = &mut manifolds[0];
    let ball = |s: &dyn parry3d_f64::shape::Shape| s.shape_type() == ShapeType::Ball;
    match (a.as_halfspace(), b.as_halfspace()) {
        (Some(halfspace), None) if !ball(b) => {
            let pfm = b.as_polygonal_feature_map().ok_or(Unsupported)?;
            halfspace_pfm(pos12, halfspace, pfm, margin, manifold, false);
            Ok(())
        }
        (None, Some(halfspace)) if !ball(a) => {
            let pfm = a.as_polygonal_feature_map().ok_or(Unsupported)?;
            halfspace_pfm(&pos12.inverse(), halfspace, pfm, margin, manifold, true);
            Ok(())
        }
        _ => DefaultQueryDispatcher
            .contact_manifold_convex_convex(pos12, a, b, None, None, margin, manifold),
    }
}

/// The contact points of candidate pair `(i, j)` (`i < j`), A being the world or prescribed
/// geometry when there is one, into `pair.contacts`.
fn narrow_phase(
    scene: &CollisionScene,
    X_WG: &[Pose<f64>],
    poses: &[ParryPose],
    i: usize,
    j: usize,
    margin: f64,
    pair: &mut PairQuery,
) -> Result<()> {
    let (a, b) = pair_order(&scene.geometries, i, j);
    let kind = |g: usize| {
        let g = &scene.geometries[g];
        match g.mesh {
            Some(_) => format!("`{}`'s mesh (pressure-field contact only)", g.name),
            None => g.shape.kind().to_string(),
        }
    };
    if scene.geometries[a].mesh.is_some() || scene.geometries[b].mesh.is_some() {
        return Err(Error::UnsupportedPair {
            a: kind(a),
            b: kind(b),
        });
    }
    let pos12 = poses[a].inv_mul(&poses[b]);
    let out = &mut pair.contacts;
    out.clear();
    manifolds_of(
        &pos12,
        scene.shapes[a].0.as_ref(),
        scene.shapes[b].0.as_ref(),
        margin,
        &mut pair.manifolds,
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
    for m in &pair.manifolds {
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
    Ok(())
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

    /// A pile of shapes on the ground at step `k` of a slow tumble: boxes resting tilted on
    /// the ground and on each other, a sphere, a cylinder and a capsule.
    fn pile(k: usize) -> (CollisionScene, Vec<Pose<f64>>) {
        let scene = CollisionScene::new(vec![
            geometry("ground", BodyId::World, Shape::HalfSpace),
            geometry(
                "box",
                BodyId::Body(0),
                Shape::Box {
                    half_extents: Vector3::new(0.05, 0.04, 0.03),
                },
            ),
            geometry(
                "box on box",
                BodyId::Body(1),
                Shape::Box {
                    half_extents: Vector3::new(0.03, 0.03, 0.03),
                },
            ),
            geometry("sphere", BodyId::Body(2), Shape::Sphere { radius: 0.04 }),
            geometry(
                "cylinder",
                BodyId::Body(3),
                Shape::Cylinder {
                    radius: 0.03,
                    half_length: 0.05,
                },
            ),
            geometry(
                "capsule",
                BodyId::Body(4),
                Shape::Capsule {
                    radius: 0.02,
                    half_length: 0.04,
                },
            ),
        ])
        .unwrap();
        let angle = 0.02 * k as f64;
        let tilted = |axis: Vector3<f64>, p: Vector3<f64>| Pose {
            R: *nalgebra::Rotation3::from_scaled_axis(axis * angle).matrix(),
            p,
        };
        let poses = vec![
            Pose::identity(),
            tilted(Vector3::new(0.3, 1.0, 0.0), Vector3::new(0.0, 0.0, 0.0295)),
            tilted(Vector3::new(1.0, 0.2, 0.5), Vector3::new(0.01, 0.0, 0.088)),
            Pose::translation(Vector3::new(0.08, 0.0, 0.0398 + 1e-4 * k as f64)),
            tilted(Vector3::new(0.0, 1.0, 1.0), Vector3::new(-0.1, 0.0, 0.0499)),
            tilted(Vector3::new(1.0, 0.0, 0.0), Vector3::new(0.0, 0.1, 0.0599)),
        ];
        (scene, poses)
    }

    /// A user mesh takes part in pressure-field contact only: against a sphere without
    /// hydroelastic properties, once their boxes meet, the query is an unsupported pair that
    /// names the mesh; apart, nothing is asked of it.
    #[test]
    fn a_user_mesh_is_an_unsupported_pair_for_point_contact() {
        use crate::geometry::thread::{external_thread, IsoThread};
        use crate::hydroelastic::{ContactMesh, Hydroelastic};
        let thread = IsoThread {
            major_diameter: 0.01,
            pitch: 0.0015,
        };
        let bolt = Geometry::from_mesh(
            "bolt",
            BodyId::World,
            Pose::identity(),
            ContactMesh::Rigid(external_thread(&thread, 1e-4, 3, 24).unwrap()),
            Hydroelastic::rigid(1e-3),
        )
        .unwrap();
        let scene = CollisionScene::new(vec![
            bolt,
            geometry("ball", BodyId::Body(0), Shape::Sphere { radius: 0.005 }),
        ])
        .unwrap();
        let near = Pose::translation(Vector3::new(0.0, 0.0, 0.008));
        let err = find_contacts(&scene, &[Pose::identity(), near], 0.001).unwrap_err();
        assert!(
            matches!(&err, Error::UnsupportedPair { a, .. } if a.contains("`bolt`'s mesh")),
            "{err}"
        );
        let far = Pose::translation(Vector3::new(0.0, 0.0, 0.1));
        assert!(find_contacts(&scene, &[Pose::identity(), far], 0.001)
            .unwrap()
            .is_empty());
    }

    /// A query that keeps its lists and manifolds from one step to the next finds what a
    /// fresh one finds, bit for bit (parry would update a manifold handed back to it instead
    /// of computing it anew; ours are handed over fresh), as the pile moves and its contacts
    /// come and go.
    #[test]
    fn a_kept_query_finds_what_a_fresh_one_finds() {
        let mut kept = PointQuery::default();
        for k in [0, 1, 2, 5, 1, 9, 3] {
            let (scene, poses) = pile(k);
            kept.find(&scene, &poses, 0.01).unwrap();
            let fresh = find_contacts(&scene, &poses, 0.01).unwrap();
            assert_eq!(kept.contacts, fresh, "step {k}");
            let pairs = |c: &[GeometricContact]| {
                let mut p: Vec<_> = c.iter().map(|c| (c.geometry_a, c.geometry_b)).collect();
                p.dedup();
                p.len()
            };
            assert!(pairs(&fresh) >= 4, "step {k}: {fresh:#?}");
        }
    }

    /// Our manifold of a half-space against a box or a cylinder, either first, is parry's
    /// (its dispatcher's, into a new manifold), point for point and bit for bit.
    #[test]
    fn half_space_manifolds_are_parrys() {
        let (scene, poses) = pile(3);
        let poses: Vec<ParryPose> = poses
            .iter()
            .enumerate()
            .map(|(i, X)| {
                to_parry_pose(&X.compose(&Pose {
                    R: scene.shapes[i].1,
                    p: Vector3::zeros(),
                }))
            })
            .collect();
        for (a, b) in [(0, 1), (1, 0), (0, 4), (4, 0), (0, 3)] {
            let pos12 = poses[a].inv_mul(&poses[b]);
            let (sa, sb) = (scene.shapes[a].0.as_ref(), scene.shapes[b].0.as_ref());
            let mut ours = vec![ContactManifold::new()];
            ours[0].points.push(TrackedContact::new(
                Default::default(),
                Default::default(),
                PackedFeatureId::face(7),
                PackedFeatureId::face(7),
                1.0,
            ));
            manifolds_of(&pos12, sa, sb, 0.01, &mut ours).unwrap();
            let mut parrys: Vec<ContactManifold<(), ()>> = Vec::new();
            DefaultQueryDispatcher
                .contact_manifolds(&pos12, sa, sb, 0.01, &mut parrys, &mut None)
                .unwrap();
            assert!(!parrys[0].points.is_empty(), "({a}, {b})");
            assert_eq!(format!("{ours:?}"), format!("{parrys:?}"), "({a}, {b})");
        }
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
