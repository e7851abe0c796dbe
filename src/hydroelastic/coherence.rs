//! Temporal coherence of the broad phase of a plane and a mesh (the "fat" bounding volumes of
//! game physics engines): from one step to the next a resting or sliding body barely moves
//! relative to the ground, so the elements near the plane are the same.
//!
//! A [`PlaneCandidates`] list holds the elements whose boxes cross a slab about the plane,
//! in the BVH's order; a later plane that stays inside that slab over the whole mesh takes its
//! elements from the list, each box tested again exactly against the plane, instead of
//! traversing the BVH. The list is a superset of the later plane's elements and in the same
//! order, so the polygons are those of a fresh traversal, bit for bit. A list is made only
//! when the plane has stayed inside the slab about the last query's plane (slow relative
//! motion): a mesh tumbling or rolling fast over the plane traverses the BVH as without lists.
//!
//! The plane's box test ([`plane_test`], [`against_plane`]) lives here; `surface.rs` uses it
//! for fresh traversals too.
#![allow(non_snake_case)]

use parry3d_f64::bounding_volume::Aabb;
use parry3d_f64::partitioning::{Bvh, BvhNode};

use crate::hydroelastic::clip::HalfSpace;

/// Half-width of a list's slab, in element sizes: `∛(V/n)` for a mesh of `n` elements whose
/// bounding box has the volume `V` (about 0.4 mm for the 5 cm ball at a resolution hint of a
/// tenth of its radius, where a slab this wide holds no more elements than the plane).
pub const COHERENCE_MARGIN: f64 = 0.05;

/// Relative rounding allowance of the test that a plane stays inside a slab: far above the
/// rounding of the plane's signed values (`~1e-16 (ρ + |d|)`).
const ROUNDING: f64 = 1e-12;

/// The elements of one mesh near a plane, kept from one query to the next.
#[derive(Clone, Debug, Default)]
pub struct PlaneCandidates {
    /// The mesh and kind of query the planes below were met in.
    query: Option<Query>,
    /// The plane the list was made for (mesh frame), if any.
    listed: Option<HalfSpace<f64>>,
    /// The plane of the last query.
    last: Option<HalfSpace<f64>>,
    /// The elements whose boxes cross the slab about `listed`, in the BVH's order, sorted
    /// when asked.
    elements: Vec<u32>,
    /// How many queries took their elements from the list.
    reuses: usize,
}

/// A mesh and a kind of query of its elements near planes.
#[derive(Clone, Debug)]
struct Query {
    /// The mesh's BVH: its number of leaves and its root box (the planes met in another mesh
    /// are forgotten).
    leaves: u32,
    root: Aabb,
    /// Whether only elements crossing the plane count (a rigid plane; a layer takes those
    /// reaching below it too).
    crossing: bool,
    /// The largest norm `ρ` of a point of the root box (m, mesh frame).
    rho: f64,
    /// The slab's half-width (m): [`COHERENCE_MARGIN`] element sizes.
    margin: f64,
}

impl Query {
    fn new(bvh: &Bvh, crossing: bool) -> Self {
        let root = bvh.root_aabb();
        let leaves = bvh.leaf_count();
        let extents = root.extents();
        // An element's size `∛(V/n)` (0 for a flat mesh, whose lists are never reused).
        let size = (extents.x * extents.y * extents.z / f64::from(leaves.max(1))).cbrt();
        Query {
            leaves,
            root,
            crossing,
            rho: root.mins.abs().max(root.maxs.abs()).length(),
            margin: COHERENCE_MARGIN * size,
        }
    }

    /// Whether this is the query of `bvh`, `crossing` (what follows from them aside).
    fn is_of(&self, bvh: &Bvh, crossing: bool) -> bool {
        self.crossing == crossing && self.leaves == bvh.leaf_count() && self.root == bvh.root_aabb()
    }

    /// Whether `plane` stays inside the slab about `near` over the mesh: over its root box
    /// (points of norm at most `ρ`) the signed values of the two planes differ by at most
    /// `‖m − m0‖ ρ + |d − d0|`, which must be within the slab's half-width.
    fn within(&self, plane: &HalfSpace<f64>, near: &HalfSpace<f64>) -> bool {
        let drift = (plane.m - near.m).norm() * self.rho + (plane.d - near.d).abs();
        drift + ROUNDING * (self.rho + near.d.abs()) <= self.margin
    }
}

impl PlaneCandidates {
    /// Hands the elements of `bvh` whose boxes cross the plane of `plane` (mesh frame, unit
    /// normal; `crossing`), or reach below it, to `emit`: in the BVH's order, or increasing
    /// when `sorted`.
    ///
    /// - From the list when the plane stays inside its slab.
    /// - From a traversal of the BVH for a new slab about this plane, kept as the list, when
    ///   the plane stays inside the slab about the last query's plane: the mesh moves slowly
    ///   relative to the plane, and the next queries are likely to reuse the list.
    /// - From a traversal of the BVH for the plane alone otherwise, as without a list: a mesh
    ///   moving fast relative to the plane pays nothing for lists it would not reuse.
    pub fn for_each(
        &mut self,
        bvh: &Bvh,
        plane: &HalfSpace<f64>,
        crossing: bool,
        sorted: bool,
        mut emit: impl FnMut(u32),
    ) {
        let query = match self.query.take() {
            Some(query) if query.is_of(bvh, crossing) => query,
            _ => {
                *self = PlaneCandidates {
                    reuses: self.reuses,
                    ..Default::default()
                };
                Query::new(bvh, crossing)
            }
        };
        let exact = plane_test(plane, crossing, 0.0);
        let reuse = self.listed.is_some_and(|l| query.within(plane, &l));
        let slow = self.last.is_some_and(|l| query.within(plane, &l));
        if reuse {
            self.reuses += 1;
        } else if slow {
            self.listed = Some(*plane);
            self.elements.clear();
            self.elements
                .extend(against_plane(bvh, plane, crossing, query.margin));
            if sorted {
                self.elements.sort_unstable();
            }
        } else {
            self.listed = None;
            let elements = against_plane(bvh, plane, crossing, 0.0);
            if sorted {
                let mut sorted: Vec<u32> = elements.collect();
                sorted.sort_unstable();
                sorted.into_iter().for_each(&mut emit);
            } else {
                elements.for_each(&mut emit);
            }
        }
        if reuse || slow {
            for &e in &self.elements {
                if bvh.leaf_node(e).is_some_and(exact) {
                    emit(e);
                }
            }
        }
        self.query = Some(query);
        self.last = Some(*plane);
    }

    /// How many queries took their elements from the list instead of the BVH.
    pub fn reuses(&self) -> usize {
        self.reuses
    }
}

/// Elements of the BVH `bvh` whose boxes pass [`plane_test`], in the BVH's fixed order
/// (depth first, left before right).
pub(crate) fn against_plane<'a>(
    bvh: &'a Bvh,
    plane: &HalfSpace<f64>,
    crossing: bool,
    margin: f64,
) -> impl Iterator<Item = u32> + 'a {
    bvh.leaves(plane_test(plane, crossing, margin))
}

/// Whether a box crosses the slab `|s(x)| ≤ margin` about the plane of `plane` (`crossing`),
/// or reaches below `s(x) = margin`; `margin` 0 for the plane itself.
pub(crate) fn plane_test(
    plane: &HalfSpace<f64>,
    crossing: bool,
    margin: f64,
) -> impl Fn(&BvhNode) -> bool + Copy {
    let HalfSpace { m: n, d } = *plane;
    // `s` is least at the box's corner that takes, on each axis, the lower bound where the
    // normal is positive, and greatest at the opposite corner.
    let positive = [n.x >= 0.0, n.y >= 0.0, n.z >= 0.0];
    move |node: &BvhNode| {
        let (lo, hi) = (node.mins(), node.maxs());
        let pick = |k: usize, low: f64, high: f64| {
            if positive[k] {
                (low, high)
            } else {
                (high, low)
            }
        };
        let ((x0, x1), (y0, y1), (z0, z1)) = (
            pick(0, lo.x, hi.x),
            pick(1, lo.y, hi.y),
            pick(2, lo.z, hi.z),
        );
        let least = n.x * x0 + n.y * y0 + n.z * z0 - d;
        least <= margin && (!crossing || n.x * x1 + n.y * y1 + n.z * z1 - d >= -margin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Shape;
    use crate::hydroelastic::surface::{for_each_polygon, for_each_polygon_with};
    use crate::hydroelastic::{ContactPolygon, HydroGeometry, Hydroelastic, Placed};
    use crate::math::Pose;
    use nalgebra::{Rotation3, Vector3};

    fn pose(rotation: Vector3<f64>, p: Vector3<f64>) -> Pose<f64> {
        Pose {
            R: Rotation3::from_scaled_axis(rotation).into_inner(),
            p,
        }
    }

    fn surface(
        plane: &Placed<'_, f64>,
        mesh: &Placed<'_, f64>,
        candidates: Option<&mut PlaneCandidates>,
    ) -> Vec<ContactPolygon<f64>> {
        let mut polygons = Vec::new();
        for_each_polygon_with(plane, mesh, false, candidates, |p| polygons.push(p)).unwrap();
        polygons
    }

    fn fresh(plane: &Placed<'_, f64>, mesh: &Placed<'_, f64>) -> Vec<ContactPolygon<f64>> {
        let mut polygons = Vec::new();
        for_each_polygon(plane, mesh, false, |p| polygons.push(p)).unwrap();
        polygons
    }

    /// A compliant ball (R = 5 cm, resolution R/10) pressed 3 mm into a rigid plane, then
    /// moved: within the slab the polygons come from the list, beyond it from the BVH, and
    /// both are those of a fresh traversal, bit for bit, also where the list holds elements
    /// the moved plane no longer crosses.
    #[test]
    fn reused_lists_give_the_polygons_of_a_fresh_traversal() {
        let r = 0.05;
        let ball = HydroGeometry::new(
            &Shape::Sphere { radius: r },
            &Hydroelastic::Compliant {
                modulus: 4e5,
                resolution_hint: r / 10.0,
                thickness: None,
            },
        )
        .unwrap();
        let ground = HydroGeometry::RigidPlane;
        let plane = Placed {
            geometry: &ground,
            X_WG: pose(
                Vector3::new(0.02, -0.01, 0.3),
                Vector3::new(0.001, 0.0, -0.002),
            ),
            modulus: 0.0,
        };
        let margin = Query::new(ball.bvh().unwrap(), true).margin;
        assert!(margin > 1e-4 && margin < 1e-3, "margin {margin}");
        let normal = plane.X_WG.R.column(2).into_owned();
        let ball_at = |rotation: Vector3<f64>, offset: Vector3<f64>| Placed {
            geometry: &ball,
            X_WG: pose(rotation, plane.X_WG.p + normal * (r - 0.003) + offset),
            modulus: 4e5,
        };
        let tangent = plane.X_WG.R.column(0).into_owned();
        // (rotation, offset, reused): the first query has no list; sliding keeps the plane in
        // the ball's frame, so the mesh is slow and a list is made; sinking by less than the
        // margin stays inside its slab; a jump by more than the margin leaves it and, fast,
        // makes no list; a turn of the ball leaves it too.
        let moves = [
            (Vector3::zeros(), Vector3::zeros(), false),
            (Vector3::zeros(), tangent * 0.02, false),
            (Vector3::zeros(), normal * (-0.9 * margin), true),
            (Vector3::zeros(), normal * (0.9 * margin), true),
            (Vector3::zeros(), normal * (-1.1 * margin), false),
            (
                Vector3::new(0.0, 0.0, 1e-4 * margin / r),
                normal * (-1.1 * margin),
                false,
            ),
            (
                Vector3::new(0.0, 0.0, 1e-4 * margin / r),
                normal * (-1.1 * margin),
                true,
            ),
            (Vector3::new(0.3, 0.0, 0.0), normal * (-1.1 * margin), false),
            (Vector3::new(0.3, 0.0, 0.0), normal * -0.004, false),
        ];
        let mut candidates = PlaneCandidates::default();
        let mut superset = false;
        for (k, (rotation, offset, reused)) in moves.into_iter().enumerate() {
            let ball = ball_at(rotation, offset);
            let before = candidates.reuses();
            let polygons = surface(&plane, &ball, Some(&mut candidates));
            assert_eq!(
                candidates.reuses() - before,
                usize::from(reused),
                "move {k}"
            );
            assert_eq!(polygons, fresh(&plane, &ball), "move {k}");
            assert!(polygons.len() > 40, "move {k}: {} polygons", polygons.len());
            superset |= candidates.elements.len() > polygons.len();
        }
        assert!(superset, "no list held an element the plane did not cross");
    }

    /// A rigid box tilted into a compliant layer (triangles, sorted): the same polygons from
    /// the list as from the BVH.
    #[test]
    fn reused_lists_of_a_rigid_mesh_in_a_layer_stay_sorted() {
        let rigid = HydroGeometry::new(
            &Shape::Box {
                half_extents: Vector3::new(0.1, 0.05, 0.02),
            },
            &Hydroelastic::Rigid {
                resolution_hint: 0.01,
            },
        )
        .unwrap();
        let layer = HydroGeometry::CompliantLayer { thickness: 0.1 };
        let plane = Placed {
            geometry: &layer,
            X_WG: Pose::identity(),
            modulus: 1e6,
        };
        let mut candidates = PlaneCandidates::default();
        let depths = [0.017, 0.017 + 1e-6, 0.017 - 1e-6, 0.017];
        for (k, z) in depths.into_iter().enumerate() {
            let mesh = Placed {
                geometry: &rigid,
                X_WG: pose(Vector3::new(0.2, -0.1, 0.4), Vector3::new(0.0, 0.0, z)),
                modulus: 0.0,
            };
            let polygons = surface(&plane, &mesh, Some(&mut candidates));
            assert_eq!(polygons, fresh(&plane, &mesh), "depth {z}");
            assert!(polygons.len() > 10, "{} polygons", polygons.len());
            assert!(polygons
                .windows(2)
                .all(|w| w[0].feature.element_b < w[1].feature.element_b));
            assert_eq!(candidates.reuses(), k.saturating_sub(1));
        }
    }
}
