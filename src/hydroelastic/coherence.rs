//! Temporal coherence of the broad phase of a plane and a mesh (the "fat" bounding volumes of
//! game physics engines): from one step to the next a resting or sliding body barely moves
//! relative to the ground, so the elements near the plane are the same.
//!
//! A [`PlaneCandidates`] list holds the elements whose boxes cross a slab about the plane,
//! in the BVH's order; a later plane that stays inside that slab over the whole mesh takes its
//! elements from the list, each box tested again exactly against the plane, instead of
//! traversing the BVH. The list is a superset of the later plane's elements and in the same
//! order, so the polygons are those of a fresh traversal, bit for bit.
#![allow(non_snake_case)]

use parry3d_f64::bounding_volume::Aabb;
use parry3d_f64::partitioning::Bvh;

use crate::hydroelastic::clip::HalfSpace;
use crate::hydroelastic::surface::{against_plane, plane_test};

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
    /// What the list was made for.
    made_for: Option<MadeFor>,
    /// The elements, in the BVH's order, sorted when asked.
    elements: Vec<u32>,
    /// How many queries took their elements from the list.
    reuses: usize,
}

/// The query a [`PlaneCandidates`] list was made for.
#[derive(Clone, Debug)]
struct MadeFor {
    /// The plane (mesh frame).
    plane: HalfSpace<f64>,
    /// Whether only elements crossing it count (a rigid plane; a layer takes those reaching
    /// below it too).
    crossing: bool,
    /// The slab's half-width (m).
    margin: f64,
    /// The mesh's BVH: its number of leaves and its root box (a list of another mesh is not
    /// reused).
    leaves: u32,
    root: Aabb,
}

impl PlaneCandidates {
    /// Hands the elements of `bvh` whose boxes cross the plane of `plane` (mesh frame, unit
    /// normal; `crossing`), or reach below it, to `emit`: in the BVH's order, or increasing
    /// when `sorted`. From the list when the plane stays inside its slab, from a traversal of
    /// the BVH for a new slab about this plane otherwise.
    pub fn for_each(
        &mut self,
        bvh: &Bvh,
        plane: &HalfSpace<f64>,
        crossing: bool,
        sorted: bool,
        mut emit: impl FnMut(u32),
    ) {
        if self.covers(bvh, plane, crossing) {
            self.reuses += 1;
            let exact = plane_test(plane, crossing, 0.0);
            for &e in &self.elements {
                if bvh.leaf_node(e).is_some_and(exact) {
                    emit(e);
                }
            }
            return;
        }
        let margin = COHERENCE_MARGIN * element_size(bvh);
        self.made_for = Some(MadeFor {
            plane: *plane,
            crossing,
            margin,
            leaves: bvh.leaf_count(),
            root: bvh.root_aabb(),
        });
        self.elements.clear();
        let exact = plane_test(plane, crossing, 0.0);
        if sorted {
            self.elements
                .extend(against_plane(bvh, plane, crossing, margin));
            self.elements.sort_unstable();
            for &e in &self.elements {
                if bvh.leaf_node(e).is_some_and(exact) {
                    emit(e);
                }
            }
        } else {
            for e in against_plane(bvh, plane, crossing, margin) {
                self.elements.push(e);
                if bvh.leaf_node(e).is_some_and(exact) {
                    emit(e);
                }
            }
        }
    }

    /// How many queries took their elements from the list instead of the BVH.
    pub fn reuses(&self) -> usize {
        self.reuses
    }

    /// Whether the list's slab holds every box of `bvh` that the plane of `plane` crosses:
    /// the same mesh and kind of query, and, over the mesh's bounding box (points of norm at
    /// most `ρ`), signed values of the two planes that differ by at most
    /// `‖m − m0‖ ρ + |d − d0|` within the slab's half-width.
    fn covers(&self, bvh: &Bvh, plane: &HalfSpace<f64>, crossing: bool) -> bool {
        let Some(made_for) = &self.made_for else {
            return false;
        };
        let root = bvh.root_aabb();
        if made_for.crossing != crossing
            || made_for.leaves != bvh.leaf_count()
            || made_for.root != root
        {
            return false;
        }
        let rho = root.mins.abs().max(root.maxs.abs()).length();
        let drift = (plane.m - made_for.plane.m).norm() * rho + (plane.d - made_for.plane.d).abs();
        drift + ROUNDING * (rho + made_for.plane.d.abs()) <= made_for.margin
    }
}

/// The size of an element of `bvh`: `∛(V/n)` for `n` leaves in a bounding box of volume `V`
/// (m; 0 for a flat mesh, whose lists are then never reused).
fn element_size(bvh: &Bvh) -> f64 {
    let extents = bvh.root_aabb().extents();
    (extents.x * extents.y * extents.z / f64::from(bvh.leaf_count().max(1))).cbrt()
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
        let bvh = ball.bvh().unwrap();
        let margin = COHERENCE_MARGIN * element_size(bvh);
        assert!(margin > 1e-4 && margin < 1e-3, "margin {margin}");
        let normal = plane.X_WG.R.column(2).into_owned();
        let ball_at = |rotation: Vector3<f64>, offset: Vector3<f64>| Placed {
            geometry: &ball,
            X_WG: pose(rotation, plane.X_WG.p + normal * (r - 0.003) + offset),
            modulus: 4e5,
        };
        let tangent = plane.X_WG.R.column(0).into_owned();
        // (rotation, offset, reused): sliding keeps the plane in the ball's frame; sinking by
        // less than the margin stays inside the slab; a jump or a turn of the ball leaves it.
        let moves = [
            (Vector3::zeros(), Vector3::zeros(), false),
            (Vector3::zeros(), tangent * 0.02, true),
            (Vector3::zeros(), normal * (-0.9 * margin), true),
            (Vector3::zeros(), normal * (0.9 * margin), true),
            (Vector3::zeros(), normal * (-1.1 * margin), false),
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
        for (k, z) in [0.017, 0.017 + 1e-6, 0.017 - 1e-6].into_iter().enumerate() {
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
            assert_eq!(candidates.reuses(), k);
        }
    }
}
