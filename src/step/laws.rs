//! The normal laws of a scene's geometries checked together when a simulator is made
//! ([`crate::contact::law`]): a Hertz geometry's radius from its shape, one law per pair, and a
//! barrier that acts within the contact margin.

use crate::collision::Geometry;
use crate::contact::{ContactParams, NormalLawKind};
use crate::error::{Error, Result};
use crate::geometry::Shape;

/// Gives a geometry with Hertz contact and no radius of its own its shape's radius of
/// curvature: a sphere's or a capsule's radius (flat shapes have none).
pub(super) fn fill_hertz_radius(geometry: &mut Geometry) {
    let Some(params) = &mut geometry.contact else {
        return;
    };
    if params.law != NormalLawKind::Hertz || params.hertz_radius.is_finite() {
        return;
    }
    if let Shape::Sphere { radius } | Shape::Capsule { radius, .. } = geometry.shape {
        params.hertz_radius = radius;
    }
}

/// Refuses a barrier that acts farther than the margin: its pairs would only become contacts
/// inside its range, and start pushing with a jump.
pub(super) fn check_barrier_within_margin<'a>(
    mut params: impl Iterator<Item = &'a ContactParams<f64>>,
    margin: f64,
) -> Result<()> {
    match params.find(|p| p.law == NormalLawKind::Barrier && p.barrier_distance > margin) {
        Some(p) => Err(Error::invalid(
            "barrier_distance",
            p.barrier_distance,
            &format!("must not exceed the contact margin ({margin} m)"),
        )),
        None => Ok(()),
    }
}

/// Refuses two geometries whose own contact parameters name different normal laws (other than
/// the default Hunt & Crossley, which yields): their pair would have none.
pub(super) fn check_pair_laws<'a>(geometries: impl Iterator<Item = &'a Geometry>) -> Result<()> {
    let with_law: Vec<(&Geometry, &ContactParams<f64>)> = geometries
        .filter_map(|g| g.contact.as_ref().map(|c| (g, c)))
        .filter(|(_, c)| c.law != NormalLawKind::HuntCrossley)
        .collect();
    for (i, (a, pa)) in with_law.iter().enumerate() {
        for (b, pb) in &with_law[i + 1..] {
            ContactParams::law_of_pair(pa, pb).map_err(|e| {
                Error::invalid(
                    &format!("geometries `{}` and `{}` contact", a.name, b.name),
                    "",
                    &e.to_string(),
                )
            })?;
        }
    }
    Ok(())
}
