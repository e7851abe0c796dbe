//! Point-contact geometry (DESIGN step 2): shapes attached to bodies, one geometric query
//! per step that finds every pair closer than the margin `δ_margin` and the active features.
//!
//! parry3d-f64 does the f64 work (broad phase on bounding boxes, narrow phase by contact
//! manifolds, which give several points for flat contact: the vertices of a box face within
//! the margin). Every contact records its [`ActiveFeature`] — the witness points and normal in
//! the geometries' own frames — so that the signed distance of that feature pair can be
//! re-evaluated generically (dual numbers) without repeating the query.
//!
//! Files: `shape.rs` (shapes, geometries, solid inertias), `query.rs` (broad and narrow phase).

pub mod query;
pub mod shape;

pub use query::{find_contacts, ActiveFeature, GeometricContact};
pub use shape::{Geometry, Shape};
