//! The collision layer (DESIGN step 2): geometries attached to bodies, the scene they form, and
//! the one geometric query per step in its two kinds — point contact and pressure-field
//! contact.
//!
//! Files, each importing only the ones before it: `filter.rs` ([`CollisionFilter`]:
//! MuJoCo's contact bit masks), `geometry.rs` ([`Geometry`]: a
//! [`crate::geometry::Shape`] on a body, with its contact parameters and hydroelastic
//! properties), `parry.rs` (our shapes and poses as parry3d-f64's), `scene.rs`
//! ([`CollisionScene`]: the geometries with their parry shapes, hulls and pressure-field
//! meshes, built once; which pairs may touch — bodies, filters, excluded body pairs — and in
//! which order), `point.rs`
//! ([`find_contacts`]: witness points, normal, signed distance and the active feature pair of
//! every point-contact pair within the margin), `pressure.rs` ([`find_polygons`]: the contact
//! polygons of every pressure-field pair, through [`crate::hydroelastic`]).
//!
//! Below this layer, [`crate::geometry`] knows shapes and their distance features and
//! [`crate::hydroelastic`] knows pressure fields and their polygons, neither of them what a
//! contact is; above it, [`crate::step`] turns what the queries found into the step's contact
//! points.

mod filter;
mod geometry;
mod parry;
pub mod point;
pub mod pressure;
pub mod scene;

pub use filter::CollisionFilter;
pub use geometry::Geometry;
pub use point::{find_contacts, GeometricContact, PointQuery, PARALLEL_MIN_PAIRS};
pub use pressure::{
    find_polygons, find_polygons_coherent, FoundPolygon, PolygonContact, SurfaceCache,
};
pub use scene::{can_collide, pair_order, CollisionScene};
