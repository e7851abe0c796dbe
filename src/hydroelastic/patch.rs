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
pub fn patches(contacts: &[ContactResult]) -> Vec<Patch> {
    let mut out: Vec<(Patch, f64)> = Vec::new();
    for c in contacts {
        let Some(polygon) = &c.polygon else {
            continue;
        };
        let index = match out.iter().position(|(p, _)| p.geometries == c.geometries) {
            Some(i) => i,
            None => {
                out.push((
                    Patch {
                        body_a: c.body_a,
                        body_b: c.body_b,
                        geometries: c.geometries,
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
        let (p, normal) = &mut out[index];
        p.area += polygon.area;
        p.centroid += c.point * polygon.area;
        p.force += c.force;
        // Moment about the origin for now, shifted to the centroid below.
        p.moment += c.point.cross(&c.force);
        p.polygons += 1;
        *normal += c.normal_force;
        let pressure = c.normal_force / polygon.area;
        if pressure > p.max_pressure {
            p.max_pressure = pressure;
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
