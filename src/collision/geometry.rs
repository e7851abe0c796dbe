//! [`Geometry`]: a shape attached to a body, with what the contact step needs to know of it —
//! its own contact parameters and, for pressure-field contact, its hydroelastic properties.
#![allow(non_snake_case)]

use std::sync::Arc;

use nalgebra::Vector3;
use parry3d_f64::math::Vector as PVec;
use parry3d_f64::shape::ConvexPolyhedron;

use crate::collision::CollisionFilter;
use crate::contact::ContactParams;
use crate::error::{Error, Result};
use crate::geometry::Shape;
use crate::hydroelastic::{ContactMesh, Hydroelastic};
use crate::math::Pose;
use crate::multibody::model::BodyId;

/// A shape attached to a body.
///
/// Made with [`Geometry::new`] and the `with_*` methods (the struct is `#[non_exhaustive]`, so a
/// new property never breaks code that builds geometries); the fields stay public to read and
/// to change.
///
/// ```
/// use stiction::prelude::*;
/// let ball = Geometry::new("ball", BodyId::Body(0), Pose::identity(), Shape::Sphere { radius: 0.05 })
///     .with_contact(ContactParams::default().with_mu(0.3))
///     .with_hydroelastic(Hydroelastic::compliant(1e5, 0.01));
/// let ground = Geometry::new("ground", BodyId::World, Pose::identity(), Shape::HalfSpace);
/// assert!(ground.contact.is_none() && ground.hydroelastic.is_none());
/// # let _ = ball;
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Geometry {
    /// Unique name.
    pub name: String,
    /// The body it moves with.
    pub body: BodyId,
    /// Pose `X_BG` of the geometry frame in the body frame.
    pub X_BG: Pose<f64>,
    /// The shape.
    pub shape: Shape,
    /// Contact parameters of this geometry, if it has its own. A pair where both geometries
    /// have parameters combines them ([`ContactParams::combine`]); where one has, it uses
    /// those; where neither has, the scene's default ([`crate::step::StepSettings::contact`]).
    pub contact: Option<ContactParams<f64>>,
    /// Hydroelastic properties, if any: a pair of geometries that both have them, at least one
    /// compliant, uses pressure-field contact ([`crate::hydroelastic`]); other pairs use point
    /// contact.
    pub hydroelastic: Option<Hydroelastic>,
    /// Which other geometries it may touch ([`CollisionFilter`]); `None` touches every
    /// geometry on another body.
    pub filter: Option<CollisionFilter>,
    /// A mesh the user built for pressure-field contact ([`Geometry::from_mesh`]), used
    /// instead of meshing the shape; `None` for a primitive's own mesh.
    pub mesh: Option<Arc<ContactMesh>>,
}

impl Geometry {
    /// A geometry `name` of `shape` on `body` at pose `X_BG` (the geometry frame in the body
    /// frame; m), with the scene's contact parameters and point contact only.
    pub fn new(name: impl Into<String>, body: BodyId, X_BG: Pose<f64>, shape: Shape) -> Self {
        Geometry {
            name: name.into(),
            body,
            X_BG,
            shape,
            contact: None,
            hydroelastic: None,
            filter: None,
            mesh: None,
        }
    }

    /// A geometry `name` on `body` at pose `X_BG` whose pressure-field mesh is `mesh`, built
    /// by the user (a screw thread, [`crate::geometry::thread`]), with `hydroelastic`
    /// properties of the mesh's kind (their resolution hint is unused). Its shape is the
    /// convex hull of the mesh's vertices, which the broad phase bounds and the renderers
    /// draw; it takes part in pressure-field contact only: a pair that would need point
    /// contact (with a geometry without hydroelastic properties, or two rigid ones) is an
    /// [`Error::UnsupportedPair`] when their boxes meet.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a mesh whose vertices span no volume, or as
    /// [`crate::hydroelastic::HydroGeometry::from_mesh`] when the scene is built.
    pub fn from_mesh(
        name: impl Into<String>,
        body: BodyId,
        X_BG: Pose<f64>,
        mesh: ContactMesh,
        hydroelastic: Hydroelastic,
    ) -> Result<Self> {
        let name = name.into();
        let points: Vec<PVec> = mesh
            .vertices()
            .iter()
            .map(|p| PVec::new(p.x, p.y, p.z))
            .collect();
        let hull = ConvexPolyhedron::from_convex_hull(&points).ok_or_else(|| {
            Error::invalid(
                &format!("geometry `{name}` mesh"),
                mesh.vertices().len(),
                "its vertices span no volume",
            )
        })?;
        let vertices = hull
            .points()
            .iter()
            .map(|p| Vector3::new(p.x, p.y, p.z))
            .collect();
        let mut geometry = Geometry::new(name, body, X_BG, Shape::ConvexMesh { vertices });
        geometry.hydroelastic = Some(hydroelastic);
        geometry.mesh = Some(Arc::new(mesh));
        Ok(geometry)
    }

    /// This geometry with its own contact parameters (see [`Geometry::contact`]).
    pub fn with_contact(mut self, contact: ContactParams<f64>) -> Self {
        self.contact = Some(contact);
        self
    }

    /// This geometry with collision filter `filter` (see [`Geometry::filter`]).
    pub fn with_filter(mut self, filter: CollisionFilter) -> Self {
        self.filter = Some(filter);
        self
    }

    /// This geometry with hydroelastic properties (see [`Geometry::hydroelastic`]).
    pub fn with_hydroelastic(mut self, hydroelastic: Hydroelastic) -> Self {
        self.hydroelastic = Some(hydroelastic);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructor_sets_every_field_and_with_methods_add_properties() {
        let X_BG = Pose::translation(Vector3::new(0.0, 0.0, -0.1));
        let shape = Shape::Sphere { radius: 0.02 };
        let plain = Geometry::new("bob", BodyId::Body(3), X_BG, shape.clone());
        let literal = Geometry {
            name: "bob".into(),
            body: BodyId::Body(3),
            X_BG,
            shape,
            contact: None,
            hydroelastic: None,
            filter: None,
            mesh: None,
        };
        assert_eq!(plain, literal);
        let params = ContactParams {
            mu: 0.2,
            ..Default::default()
        };
        let soft = Hydroelastic::compliant(2e5, 0.004);
        let full = plain.with_contact(params).with_hydroelastic(soft);
        assert_eq!(full.contact, Some(params));
        assert_eq!(full.hydroelastic, Some(soft));
    }
}
