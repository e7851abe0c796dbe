//! Point-contact geometry (DESIGN step 2): shapes attached to bodies, one geometric query
//! per step that finds every pair closer than the margin `δ_margin` and the active features.
//!
//! parry3d-f64 does the f64 work (broad phase on bounding boxes, narrow phase by contact
//! manifolds, which give several points for flat contact: the vertices of a box face within
//! the margin). Every contact records its [`ActiveFeature`] — the witness points and normal in
//! the geometries' own frames, the core points as functions of the sizes and the kind of
//! feature pair — so that the signed distance, normal and witness points of that pair can be
//! re-evaluated generically ([`feature_distance`], dual numbers) without repeating the query.
//!
//! Files: `shape.rs` (shapes, their sizes in any scalar, geometries, solid inertias),
//! `distance/` (the active feature pairs and their re-evaluation in any scalar, for
//! derivatives), `query.rs` (broad and narrow phase). Each imports only the ones before it.

pub mod distance;
pub mod query;
pub mod shape;

pub use distance::{feature_distance, CorePoint, FeatureDistance, FeatureKind, ShapeSize};
pub use query::{find_contacts, ActiveFeature, GeometricContact};
pub use shape::{Geometry, Shape};
