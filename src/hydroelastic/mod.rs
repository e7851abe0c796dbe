//! Pressure-field (hydroelastic) contact (Elandt's thesis Ch. 4-5; Masterjohn et al., arXiv
//! 2110.04157; DESIGN "Pressure field contact").
//!
//! A compliant geometry carries a tetrahedral mesh with the piecewise-linear pressure field
//! `p0 = E·e`, the extent `e` going from 0 on the surface to 1 inside (Elandt Sec. 5.1); a
//! compliant half-space is a layer with `p0 = E · depth / thickness`. A rigid geometry is a
//! triangle surface mesh (a plane for a half-space). Where two geometries overlap, their
//! contact surface is a set of convex polygons: the rigid surface inside the compliant volume,
//! or the surface of equal pressure of two compliant fields (Elandt Ch. 5), each polygon's
//! area and centroid computed from its centroid fan (Algorithm 1, Fig. 5.1) so that they move
//! continuously when the polygon gains or loses an edge.
//!
//! For the convex, velocity-level solver each polygon becomes one contact point at its
//! centroid (Masterjohn et al. Sec. IV): normal `n̂`, force `f0 = A·p0`, stiffness `k = A·g`
//! with `g` the pressure gradient along `n̂` (in series, `g = g_A g_B/(g_A + g_B)`, for two
//! compliant sides), so the previous penetration of the point is `x0 = f0/k = p0/g`; Hunt &
//! Crossley dissipation and friction come from the pair's parameters. These points enter the
//! same Lagged / regularized Lagged / Similar / SAP potentials as point contacts (ICF eq. (15)
//! is written in `f0`, stable as `k → 0`).
//!
//! Files: `properties.rs` (rigid / compliant, modulus, resolution hint, layer thickness),
//! `field.rs` (the pressure field and BVHs of a geometry, on the meshes of
//! [`crate::geometry::mesh`]), `clip.rs` (slicing and clipping in any scalar, recording or
//! replaying the topology), `coherence.rs` (a plane's elements kept from one step to the
//! next), `surface.rs` (broad phase and the polygon of an element pair). The query over a
//! whole scene is [`crate::collision::pressure`].

pub(crate) mod clip;
pub(crate) mod coherence;
pub(crate) mod field;
pub mod properties;
pub mod surface;

pub use clip::ClipTopology;
pub use field::{ContactMesh, HydroGeometry};
pub use properties::Hydroelastic;
pub use surface::{
    complete_contact_surface, contact_surface, element_polygon, replayed_polygon, ContactPolygon,
    Placed, PolygonFeature,
};
