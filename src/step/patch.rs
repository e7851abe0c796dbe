//! Per-pair results of a step with pressure-field contact: the patch of each pair, summed
//! from its polygons' contact results.

use nalgebra::Vector3;

use crate::multibody::model::BodyId;
use crate::step::ContactResult;

/// The contact patch of one pressure-field pair during a step.
#[derive(Clone, Debug, PartialEq)]
pub struct Patch {
    /// Body A.
    pub body_a: BodyId,
    /// Body B (forces are on B).
    pub body_b: BodyId,
    /// Geometry indices (A, B).
    pub geometries: (usize, usize),
    /// Total area `Σ A_i` (m²).
    pub area: f64,
    /// Area centroid `Σ A_i c_i / Σ A_i` (world, m).
    pub centroid: Vector3<f64>,
    /// Total force on B (world, N).
    pub force: Vector3<f64>,
    /// Moment on B about the centroid (world, N·m): `Σ (c_i − c) × f_i`, including the
    /// scrub torque of friction about the normal.
    pub moment: Vector3<f64>,
    /// Number of polygons.
    pub polygons: usize,
    /// Mean pressure `Σ f_n,i / Σ A_i` (Pa) of the solved normal forces.
    pub mean_pressure: f64,
    /// Largest polygon pressure `f_n,i / A_i` (Pa).
    pub max_pressure: f64,
}

/// The patches of the polygon contacts among `contacts`, one per geometry pair, in order of
/// first appearance.
///
/// A pair's polygons come one after the other in a step's results: each run of them is summed
/// in local variables (not through the patch in memory, where every polygon's sums would wait
/// on the previous polygon's), then added to its pair's patch.
pub fn patches(contacts: &[ContactResult]) -> Vec<Patch> {
    let mut out: Vec<(Patch, f64)> = Vec::new();
    for run in contacts.chunk_by(|a, b| a.geometries == b.geometries) {
        let mut polygons = run
            .iter()
            .filter_map(|c| c.polygon.as_ref().map(|p| (c, p)))
            .peekable();
        let Some((first, _)) = polygons.peek() else {
            continue;
        };
        let index = match out
            .iter()
            .position(|(p, _)| p.geometries == first.geometries)
        {
            Some(i) => i,
            None => {
                out.push((
                    Patch {
                        body_a: first.body_a,
                        body_b: first.body_b,
                        geometries: first.geometries,
                        area: 0.0,
                        centroid: Vector3::zeros(),
                        force: Vector3::zeros(),
                        moment: Vector3::zeros(),
                        polygons: 0,
                        mean_pressure: 0.0,
                        max_pressure: 0.0,
                    },
                    0.0,
                ));
                out.len() - 1
            }
        };
        let (mut area, mut normal, mut max_pressure) = (0.0, 0.0, 0.0);
        let (mut centroid, mut force, mut moment) =
            (Vector3::zeros(), Vector3::zeros(), Vector3::zeros());
        let mut count = 0;
        for (c, polygon) in polygons {
            area += polygon.area;
            centroid += c.point * polygon.area;
            force += c.force;
            // Moment about the origin for now, shifted to the centroid below.
            moment += c.point.cross(&c.force);
            count += 1;
            normal += c.normal_force;
            let pressure = c.normal_force / polygon.area;
            if pressure > max_pressure {
                max_pressure = pressure;
            }
        }
        let (p, pair_normal) = &mut out[index];
        p.area += area;
        p.centroid += centroid;
        p.force += force;
        p.moment += moment;
        p.polygons += count;
        *pair_normal += normal;
        if max_pressure > p.max_pressure {
            p.max_pressure = max_pressure;
        }
    }
    out.into_iter()
        .map(|(mut p, normal)| {
            p.centroid /= p.area;
            p.moment -= p.centroid.cross(&p.force);
            p.mean_pressure = normal / p.area;
            p
        })
        .collect()
}
