//! The collision scene: every geometry with the representations its queries need, built once
//! (parry shapes, convex hulls' topology, pressure-field meshes), and which pairs may touch.
#![allow(non_snake_case)]

use std::sync::Arc;

use nalgebra::Matrix3;
use parry3d_f64::shape::SharedShape;

use crate::collision::parry::{hull_topology, to_parry_shape};
use crate::collision::Geometry;
use crate::error::{Error, Result};
use crate::geometry::distance::ConvexTopology;
use crate::hydroelastic::surface::is_hydroelastic_pair;
use crate::hydroelastic::HydroGeometry;
use crate::multibody::model::BodyId;

/// The geometries of a scene with their parry shapes, built once.
pub struct CollisionScene {
    pub(super) geometries: Vec<Geometry>,
    /// Each geometry's parry shape and the rotation `R_GS` of parry's frame in the geometry's.
    pub(super) shapes: Vec<(SharedShape, Matrix3<f64>)>,
    /// Hull topology of each convex mesh (`None` for other shapes).
    pub(super) hulls: Vec<Option<ConvexTopology>>,
    /// Hydroelastic representation of each geometry with hydroelastic properties.
    hydro: Vec<Option<HydroGeometry>>,
    /// Body pairs whose geometries never touch, each ordered (lower first), sorted.
    excluded: Vec<(BodyId, BodyId)>,
}

impl std::fmt::Debug for CollisionScene {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CollisionScene")
            .field("geometries", &self.geometries)
            .finish_non_exhaustive()
    }
}

/// The parry shape of a validated geometry and, for a convex mesh, its hull topology.
fn parry_shape(g: &Geometry) -> Result<ParryShape> {
    g.shape.validate().map_err(|e| {
        Error::invalid(
            &format!("geometry `{}`", g.name),
            g.shape.kind(),
            &e.to_string(),
        )
    })?;
    let shape = to_parry_shape(&g.shape).expect("invariant: validated shape has a parry shape");
    let hull = hull_topology(&shape.0);
    Ok((shape, hull))
}

/// A parry shape with its rotation into the geometry's frame, and the hull topology of a
/// convex mesh.
type ParryShape = ((SharedShape, Matrix3<f64>), Option<ConvexTopology>);

/// The pressure-field representation of a geometry with hydroelastic properties.
fn hydro_geometry(g: &Geometry) -> Result<Option<HydroGeometry>> {
    g.hydroelastic
        .as_ref()
        .map(|h| match &g.mesh {
            Some(mesh) => HydroGeometry::from_mesh(mesh, h),
            None => HydroGeometry::new(&g.shape, h),
        })
        .transpose()
        .map_err(|e| hydroelastic_error(g, e))
}

/// An error of `g`'s hydroelastic properties, naming the geometry.
fn hydroelastic_error(g: &Geometry, e: Error) -> Error {
    Error::invalid(
        &format!("geometry `{}` hydroelastic", g.name),
        g.shape.kind(),
        &e.to_string(),
    )
}

impl CollisionScene {
    /// Builds parry shapes for `geometries`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for an invalid shape.
    pub fn new(geometries: Vec<Geometry>) -> Result<Self> {
        let (mut shapes, mut hulls, mut hydro) = (Vec::new(), Vec::new(), Vec::new());
        for g in &geometries {
            let (shape, hull) = parry_shape(g)?;
            shapes.push(shape);
            hulls.push(hull);
            hydro.push(hydro_geometry(g)?);
        }
        Ok(CollisionScene {
            geometries,
            shapes,
            hulls,
            hydro,
            excluded: Vec::new(),
        })
    }

    /// Replaces geometry `index`, rebuilding only its own representations. Its pressure-field
    /// mesh is kept when neither its shape nor the properties the mesh is built from (rigid or
    /// compliant, resolution hint, layer thickness) changed: a new modulus, placement or
    /// contact parameters (the finite differences of such parameters) rebuild nothing.
    ///
    /// # Errors
    /// As [`CollisionScene::new`] for the new geometry, or [`Error::InvalidParameter`] for an
    /// index out of range; the scene is unchanged then.
    pub fn replace(&mut self, index: usize, geometry: Geometry) -> Result<()> {
        let Some(old) = self.geometries.get(index) else {
            return Err(Error::invalid(
                "geometry",
                index,
                "no geometry with this index",
            ));
        };
        let (shape, hull) = parry_shape(&geometry)?;
        let same_mesh = old.shape == geometry.shape
            && match (&old.mesh, &geometry.mesh) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a == b,
                (a, b) => a.is_none() && b.is_none(),
            }
            && match (&old.hydroelastic, &geometry.hydroelastic) {
                (Some(a), Some(b)) => a.with_modulus(0.0) == b.with_modulus(0.0),
                _ => false,
            };
        let hydro = if same_mesh {
            if let Some(h) = &geometry.hydroelastic {
                h.validate(&geometry.shape)
                    .map_err(|e| hydroelastic_error(&geometry, e))?;
            }
            self.hydro[index].take()
        } else {
            hydro_geometry(&geometry)?
        };
        self.geometries[index] = geometry;
        self.shapes[index] = shape;
        self.hulls[index] = hull;
        self.hydro[index] = hydro;
        Ok(())
    }

    /// The geometries.
    pub fn geometries(&self) -> &[Geometry] {
        &self.geometries
    }

    /// Body pairs whose geometries never touch ([`CollisionScene::exclude`]), each ordered
    /// (lower first), sorted.
    pub fn excluded(&self) -> &[(BodyId, BodyId)] {
        &self.excluded
    }

    /// The hydroelastic representation of geometry `i`, if it has hydroelastic properties.
    pub fn hydro(&self, i: usize) -> Option<&HydroGeometry> {
        self.hydro[i].as_ref()
    }

    /// Keeps the geometries of bodies `a` and `b` from touching each other (a robot's parent
    /// and child links, whose meshes overlap at their joint).
    pub fn exclude(&mut self, a: BodyId, b: BodyId) {
        let pair = (a.min(b), a.max(b));
        if let Err(at) = self.excluded.binary_search(&pair) {
            self.excluded.insert(at, pair);
        }
    }

    /// Whether geometries `i` and `j` may touch: [`can_collide`] by their bodies, admitted by
    /// both collision filters, and not on an excluded body pair ([`CollisionScene::exclude`]).
    pub fn may_touch(&self, i: usize, j: usize) -> bool {
        let (a, b) = (&self.geometries[i], &self.geometries[j]);
        if !can_collide(a.body, b.body) {
            return false;
        }
        if let (Some(fa), Some(fb)) = (&a.filter, &b.filter) {
            if !fa.admits(fb) {
                return false;
            }
        }
        self.excluded.is_empty()
            || self
                .excluded
                .binary_search(&(a.body.min(b.body), a.body.max(b.body)))
                .is_err()
    }

    /// Whether geometries `i` and `j` are a pressure-field pair
    /// ([`is_hydroelastic_pair`]); all other pairs use point contact.
    pub fn is_hydroelastic_pair(&self, i: usize, j: usize) -> bool {
        is_hydroelastic_pair(self.hydro(i), self.hydro(j))
    }
}

/// The order `(A, B)` of a pair of geometries `i < j`: A is the world / prescribed geometry
/// when there is one, otherwise the lower index.
pub fn pair_order(geometries: &[Geometry], i: usize, j: usize) -> (usize, usize) {
    if matches!(geometries[j].body, BodyId::Body(_)) {
        (i, j)
    } else {
        (j, i)
    }
}

/// Whether geometries on these two bodies can touch: not the same body, and at least one of
/// them a body of the tree.
pub fn can_collide(a: BodyId, b: BodyId) -> bool {
    a != b && (matches!(a, BodyId::Body(_)) || matches!(b, BodyId::Body(_)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Shape;
    use crate::math::Pose;

    fn geometry(name: &str, body: BodyId, shape: Shape) -> Geometry {
        Geometry::new(name, body, Pose::identity(), shape)
    }

    /// Two overlapping spheres on bodies 0 and 1 touch until their bodies are excluded or
    /// their filters do not admit each other; nothing touches its own body, and excluding a
    /// pair leaves the other pairs alone.
    #[test]
    fn excluded_bodies_and_filters_keep_pairs_apart() {
        use crate::collision::{find_contacts, CollisionFilter};
        let ball = |name: &str, body: usize| {
            geometry(name, BodyId::Body(body), Shape::Sphere { radius: 0.1 })
        };
        let poses = [Pose::identity(); 3];
        let scene = |geometries: Vec<Geometry>| CollisionScene::new(geometries).unwrap();
        let mut three = scene(vec![ball("a", 0), ball("b", 1), ball("c", 2)]);
        assert!(three.may_touch(0, 1) && three.may_touch(1, 2) && three.may_touch(0, 2));
        assert_eq!(find_contacts(&three, &poses, 0.01).unwrap().len(), 3);
        three.exclude(BodyId::Body(1), BodyId::Body(0));
        three.exclude(BodyId::Body(0), BodyId::Body(1));
        assert!(!three.may_touch(0, 1) && !three.may_touch(1, 0));
        assert!(three.may_touch(1, 2) && three.may_touch(0, 2));
        let found = find_contacts(&three, &poses, 0.01).unwrap();
        assert_eq!(found.len(), 2);
        assert!(found.iter().all(|c| (c.geometry_a, c.geometry_b) != (0, 1)));
        let same_body = scene(vec![ball("a", 0), ball("b", 0)]);
        assert!(!same_body.may_touch(0, 1));
        let filtered = |contype, conaffinity| CollisionFilter {
            contype,
            conaffinity,
        };
        let apart = scene(vec![
            ball("a", 0).with_filter(filtered(1, 0)),
            ball("b", 1).with_filter(filtered(1, 0)),
        ]);
        assert!(!apart.may_touch(0, 1));
        assert!(find_contacts(&apart, &poses[..2], 0.01).unwrap().is_empty());
        let admitted = scene(vec![
            ball("a", 0).with_filter(filtered(1, 0)),
            ball("b", 1).with_filter(filtered(0, 1)),
        ]);
        assert!(admitted.may_touch(0, 1));
    }

    /// A new modulus or new contact parameters keep a geometry's pressure-field mesh (the
    /// same buffers); a new resolution hint or shape rebuilds it; invalid properties and a
    /// missing index are refused, leaving the scene as it was.
    #[test]
    fn replace_rebuilds_a_mesh_only_when_its_shape_or_resolution_changes() {
        use crate::contact::ContactParams;
        use crate::hydroelastic::{HydroGeometry, Hydroelastic};
        let compliant = |modulus: f64, resolution_hint: f64| Hydroelastic::Compliant {
            modulus,
            resolution_hint,
            thickness: None,
        };
        let mut ball = geometry("ball", BodyId::Body(0), Shape::Sphere { radius: 0.05 });
        ball.hydroelastic = Some(compliant(1e5, 0.01));
        let mut scene = CollisionScene::new(vec![ball.clone()]).unwrap();
        let mesh = |scene: &CollisionScene| match scene.hydro(0) {
            Some(HydroGeometry::CompliantMesh(f)) => (f.mesh.vertices.as_ptr(), f.mesh.tets.len()),
            other => panic!("{other:?}"),
        };
        let (buffer, tets) = mesh(&scene);
        let mut stiffer = ball.clone();
        stiffer.hydroelastic = Some(compliant(4e5, 0.01));
        stiffer.contact = Some(ContactParams {
            mu: 0.9,
            ..Default::default()
        });
        scene.replace(0, stiffer.clone()).unwrap();
        assert_eq!(mesh(&scene), (buffer, tets));
        assert_eq!(scene.geometries()[0], stiffer);
        let mut invalid = stiffer.clone();
        invalid.hydroelastic = Some(compliant(-1.0, 0.01));
        assert!(scene.replace(0, invalid).is_err());
        assert!(scene.replace(1, stiffer.clone()).is_err());
        assert_eq!(mesh(&scene), (buffer, tets));
        assert_eq!(scene.geometries()[0], stiffer);
        let mut finer = stiffer.clone();
        finer.hydroelastic = Some(compliant(4e5, 0.005));
        scene.replace(0, finer).unwrap();
        assert!(mesh(&scene).1 > tets);
        let mut larger = stiffer;
        larger.shape = Shape::Sphere { radius: 0.08 };
        scene.replace(0, larger).unwrap();
        let fresh = CollisionScene::new(scene.geometries().to_vec()).unwrap();
        assert_eq!(mesh(&scene).1, mesh(&fresh).1);
        let Some(HydroGeometry::CompliantMesh(f)) = scene.hydro(0) else {
            unreachable!()
        };
        let radius = f.mesh.vertices.iter().map(|v| v.norm()).fold(0.0, f64::max);
        assert!((radius - 0.08).abs() < 1e-12, "{radius}");
    }
}
