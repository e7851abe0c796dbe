//! The pressure-field part of the step's one geometric query (DESIGN step 2): the contact
//! polygons of every hydroelastic pair at the start of the step (f64).
#![allow(non_snake_case)]

use crate::collision::scene::{pair_order, CollisionScene};
use crate::error::Result;
use crate::hydroelastic::clip::ClipTopology;
use crate::hydroelastic::coherence::PlaneCandidates;
use crate::hydroelastic::surface::{for_each_polygon_with, ContactPolygon, Placed, PolygonFeature};
use crate::math::Pose;

/// What the query found for one polygon, kept with its contact point (f64): which elements
/// it comes from and how they were clipped, its area and pressure. Its vertices are not kept
/// (an allocation per polygon and step); [`crate::step::Simulator::polygon_vertices`] clips
/// the polygon again from the step's start state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PolygonContact {
    /// The element pair, to evaluate the polygon again in another scalar.
    pub elements: PolygonFeature,
    /// The topology decisions of its clipping, replayed when it is clipped again in duals.
    pub topology: ClipTopology,
    /// Area `A` (m²).
    pub area: f64,
    /// Pressure of the field at the centroid `p0` (Pa).
    pub pressure: f64,
}

impl From<&ContactPolygon<f64>> for PolygonContact {
    fn from(p: &ContactPolygon<f64>) -> Self {
        PolygonContact {
            elements: p.feature,
            topology: p.topology,
            area: p.area,
            pressure: p.pressure,
        }
    }
}

/// A polygon of the contact surface of geometries A and B (ordered by [`pair_order`]).
#[derive(Clone, Debug, PartialEq)]
pub struct FoundPolygon {
    /// Geometry A.
    pub geometry_a: usize,
    /// Geometry B.
    pub geometry_b: usize,
    /// The polygon.
    pub polygon: ContactPolygon<f64>,
}

/// The hydroelastic modulus `E` (Pa) of geometry `i` of `scene`, 0 if it is not compliant.
pub fn modulus(scene: &CollisionScene, i: usize) -> f64 {
    scene.geometries()[i]
        .hydroelastic
        .and_then(|h| h.modulus())
        .unwrap_or(0.0)
}

/// Hands every contact polygon of the scene's pressure-field pairs at the poses `X_WG` (one
/// per geometry) to `found`, without their vertex lists.
///
/// # Errors
/// [`crate::error::Error::UnsupportedPair`] for two hydroelastic half-spaces.
pub fn find_polygons(
    scene: &CollisionScene,
    X_WG: &[Pose<f64>],
    found: impl FnMut(FoundPolygon),
) -> Result<()> {
    polygons_of_pairs(scene, X_WG, |i| modulus(scene, i), None, found)
}

/// [`find_polygons`] with the elements near the plane of each plane–mesh pair taken from
/// `cache`, kept from the last query (`PlaneCandidates`): the same polygons in the same
/// order, without traversing the mesh's BVH while the mesh stays near where it was.
///
/// `cache` belongs to this scene: a geometry replaced since it was filled needs a new one.
///
/// # Errors
/// As [`find_polygons`].
pub fn find_polygons_coherent(
    scene: &CollisionScene,
    X_WG: &[Pose<f64>],
    cache: &mut SurfaceCache,
    found: impl FnMut(FoundPolygon),
) -> Result<()> {
    polygons_of_pairs(scene, X_WG, |i| modulus(scene, i), Some(cache), found)
}

/// [`find_polygons`] with the modulus (Pa) of each compliant geometry `i` given by
/// `modulus(i)` instead of the scene's: the surface at moved parameters.
///
/// # Errors
/// As [`find_polygons`].
pub fn find_polygons_with_moduli(
    scene: &CollisionScene,
    X_WG: &[Pose<f64>],
    modulus: impl Fn(usize) -> f64,
    found: impl FnMut(FoundPolygon),
) -> Result<()> {
    polygons_of_pairs(scene, X_WG, modulus, None, found)
}

/// What the pressure-field query of a scene keeps from one step to the next: the elements
/// near the plane of each plane–mesh pair (`PlaneCandidates`).
#[derive(Clone, Debug, Default)]
pub struct SurfaceCache {
    pairs: Vec<((usize, usize), PlaneCandidates)>,
}

impl SurfaceCache {
    /// The list of the pair of geometries `(a, b)`, empty at first.
    fn pair(&mut self, a: usize, b: usize) -> &mut PlaneCandidates {
        let i = match self.pairs.iter().position(|(pair, _)| *pair == (a, b)) {
            Some(i) => i,
            None => {
                self.pairs.push(((a, b), PlaneCandidates::default()));
                self.pairs.len() - 1
            }
        };
        &mut self.pairs[i].1
    }
}

/// The polygons of every pressure-field pair, the modulus of geometry `i` `modulus(i)`, the
/// elements of plane–mesh pairs from `cache` when given.
fn polygons_of_pairs(
    scene: &CollisionScene,
    X_WG: &[Pose<f64>],
    modulus: impl Fn(usize) -> f64,
    mut cache: Option<&mut SurfaceCache>,
    mut found: impl FnMut(FoundPolygon),
) -> Result<()> {
    let geometries = scene.geometries();
    // Only geometries with pressure fields make pressure-field pairs: a scene of point
    // contacts costs one pass over its geometries.
    for i in (0..geometries.len()).filter(|&i| scene.hydro(i).is_some()) {
        for j in ((i + 1)..geometries.len()).filter(|&j| scene.hydro(j).is_some()) {
            if !scene.is_hydroelastic_pair(i, j) || !scene.may_touch(i, j) {
                continue;
            }
            let (a, b) = pair_order(geometries, i, j);
            let side = |k: usize| {
                scene.hydro(k).map(|geometry| Placed {
                    geometry,
                    X_WG: X_WG[k],
                    modulus: modulus(k),
                })
            };
            let (Some(pa), Some(pb)) = (side(a), side(b)) else {
                continue;
            };
            let candidates = cache.as_deref_mut().map(|c| c.pair(a, b));
            for_each_polygon_with(&pa, &pb, false, candidates, |polygon| {
                found(FoundPolygon {
                    geometry_a: a,
                    geometry_b: b,
                    polygon,
                })
            })?;
        }
    }
    Ok(())
}
