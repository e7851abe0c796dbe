//! Directions along which pressure-field polygons change topology at first order, and the
//! polygons the step has a little way along them.
//!
//! A polygon clipped again in duals keeps the topology the f64 query decided
//! ([`crate::hydroelastic::replayed_polygon`]): its derivative is that of the polygon with
//! this topology. Where element faces and equal-pressure planes coincide within rounding (two
//! identical spheres head-on: mirror-image meshes, each tetrahedron pair's plane through its
//! neighbours' faces), moving along a direction changes the topology at first order:
//! polygons of zero area are born as slivers of area O(h), vertices change faces. The contact
//! surface as a whole stays smooth, but the nominal polygons' derivatives no longer add up
//! to its derivative (5 % off in the head-on spheres' force against the modulus).
//!
//! Such a direction is differentiated a little way along itself on either side instead: at
//! the configurations moved by `±h` ([`POSITION_STEP`], [`MODULUS_STEP`]), where the ties are
//! broken and the f64 query decides a topology that holds on the way, each with that query's
//! polygons. The two one-sided derivatives can differ: the surface's total stiffness `Σ A·g`
//! has a kink at the head-on spheres' equal moduli (its slope changes by up to 7e-4 relative), so
//! the step has no derivative there. The column is the mean of the two, the limit of central
//! differences (the symmetric derivative, inside the generalized gradient); where the step is
//! smooth, the mean is its derivative to O(h²). Every other direction
//! (velocities, actuation, parameters other than moduli, positions along which the polygons
//! keep their topology on both sides) keeps the nominal polygons.
#![allow(non_snake_case)]

use nalgebra::DVector;

use crate::collision::pressure::{find_polygons_with_moduli, modulus, FoundPolygon};
use crate::derivatives::lifted::{Directions, NominalStep};
use crate::derivatives::parameters::Parameter;
use crate::error::Result;
use crate::hydroelastic::{ClipTopology, PolygonFeature};
use crate::multibody::{forward_kinematics, MultibodyData};
use crate::step::{geometry_poses, Simulator};

/// Move (m or rad along a tangent direction of the positions) at which a position direction's
/// topology is decided and differentiated: about 1e-7 of a centimetre-sized geometry, far
/// above rounding (1e-17 m) and far below the steps of central differences.
pub const POSITION_STEP: f64 = 1e-9;

/// Relative move of a modulus at which its direction's topology is decided and differentiated.
/// The equal-pressure plane moves by about the penetration times the relative change, a
/// thousandth of the geometry's size, so the step is larger than [`POSITION_STEP`].
pub const MODULUS_STEP: f64 = 1e-7;

/// A direction along which the polygons change topology at first order.
#[derive(Clone, Debug)]
pub struct MovedDirection {
    /// Index of the direction in θ = [δq, δv, δu, parameters].
    pub direction: usize,
    /// The moves `+h` and `−h` along it (real parts of its seed), each with the polygons of the
    /// f64 query at that configuration.
    pub sides: [(f64, Vec<FoundPolygon>); 2],
}

/// Which polygon, from which element pair, with which topology.
type PolygonKey = (usize, usize, PolygonFeature, ClipTopology);

fn key(f: &FoundPolygon) -> PolygonKey {
    (
        f.geometry_a,
        f.geometry_b,
        f.polygon.feature,
        f.polygon.topology,
    )
}

/// The directions in `columns` whose polygons change topology at first order, each with its
/// move and polygons; none when the nominal step has no pressure-field polygon.
///
/// # Errors
/// Those of the f64 query.
pub fn moved_directions(
    sim: &Simulator,
    nominal: &NominalStep,
    params: &[Parameter],
    dirs: Directions,
    columns: std::ops::Range<usize>,
) -> Result<Vec<MovedDirection>> {
    let nominal_keys: Vec<PolygonKey> = nominal
        .problem
        .contacts
        .iter()
        .filter_map(|c| {
            c.feature
                .polygon()
                .map(|p| (c.geometry_a, c.geometry_b, p.elements, p.topology))
        })
        .collect();
    if nominal_keys.is_empty() {
        return Ok(Vec::new());
    }
    let (nv, nu) = (dirs.nv, dirs.nu);
    let scene = sim.collision();
    let mut data = MultibodyData::new(&sim.model);
    let nominal_moduli: Vec<f64> = (0..sim.geometries().len())
        .map(|i| modulus(scene, i))
        .collect();
    let mut polygons_at = |step: f64, k: usize| -> Result<Option<Vec<FoundPolygon>>> {
        let mut moduli = nominal_moduli.clone();
        let q = if k < nv {
            let tangent = DVector::from_fn(nv, |i, _| if i == k { step } else { 0.0 });
            sim.model.retract(&nominal.state.q, &tangent)
        } else if let Some(Parameter::Modulus { geometry }) =
            k.checked_sub(2 * nv + nu).and_then(|p| params.get(p))
        {
            moduli[*geometry] += step;
            nominal.state.q.clone()
        } else {
            return Ok(None);
        };
        forward_kinematics(&sim.model, &mut data, &q, &nominal.state.v);
        let X_WG = geometry_poses(&sim.model, &data, sim.geometries(), nominal.state.t);
        let mut polygons = Vec::with_capacity(nominal_keys.len());
        find_polygons_with_moduli(scene, &X_WG, |i| moduli[i], |f| polygons.push(f))?;
        Ok(Some(polygons))
    };
    let mut moved = Vec::new();
    for k in columns {
        let h = match k.checked_sub(2 * nv + nu).and_then(|p| params.get(p)) {
            Some(Parameter::Modulus { geometry }) => MODULUS_STEP * nominal_moduli[*geometry],
            _ => POSITION_STEP,
        };
        let (Some(plus), Some(minus)) = (polygons_at(h, k)?, polygons_at(-h, k)?) else {
            continue;
        };
        let same = |p: &[FoundPolygon]| p.iter().map(key).eq(nominal_keys.iter().copied());
        if !(same(&plus) && same(&minus)) {
            moved.push(MovedDirection {
                direction: k,
                sides: [(h, plus), (-h, minus)],
            });
        }
    }
    Ok(moved)
}

/// The directions of `columns` that `moved` leaves out: those evaluated with the nominal
/// polygons.
pub fn unmoved(columns: std::ops::Range<usize>, moved: &[MovedDirection]) -> Vec<usize> {
    columns
        .filter(|k| moved.iter().all(|m| m.direction != *k))
        .collect()
}
