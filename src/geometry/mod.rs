//! Shapes and what can be computed from a shape alone (DESIGN step 2): sizes, solid inertias,
//! meshes, and the distance between two shapes' active features in any scalar.
//!
//! The collision query ([`crate::collision`]) runs once per step in f64 and records for each
//! point contact its [`ActiveFeature`] — the witness points and normal in the geometries' own
//! frames, the core points as functions of the sizes and the kind of feature pair — so that
//! the signed distance, normal and witness points of that pair can be re-evaluated generically
//! ([`feature_distance`], dual numbers) without repeating the query.
//!
//! Files: `shape.rs` ([`Shape`], [`ShapeSize`] in any scalar, validation, solid inertias),
//! `mesh.rs` (surface and tetrahedral meshes of primitives, for pressure fields and
//! rendering), `thread.rs` (a metric screw thread swept along its helix: a bolt's surface and
//! a nut's tetrahedral mesh, for pressure-field contact), `distance/` (the active feature
//! pairs and their re-evaluation in any scalar).
//! Each imports only the ones before it, and nothing here knows bodies' contacts: the
//! geometries that carry contact parameters live in [`crate::collision`].

pub mod distance;
pub mod mesh;
pub mod shape;
pub mod thread;

pub use distance::{
    feature_distance, ActiveFeature, CorePoint, FeatureDistance, FeatureKind, ShapeSize,
};
pub use shape::Shape;
