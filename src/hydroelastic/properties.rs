//! Hydroelastic properties of a geometry (Elandt Ch. 4; Drake's "hydroelastic with
//! fallback"): rigid, or compliant with a hydroelastic modulus `E`.

use crate::error::{Error, Result};
use crate::geometry::Shape;

/// How a geometry takes part in pressure-field contact.
///
/// A pair of geometries uses pressure-field contact when both have hydroelastic properties and
/// at least one is compliant; every other pair falls back to point contact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Hydroelastic {
    /// Rigid: a triangle surface mesh (a plane for a half-space). Made by
    /// [`Hydroelastic::rigid`].
    #[non_exhaustive]
    Rigid {
        /// Surface edge length (m).
        resolution_hint: f64,
    },
    /// Compliant: a tetrahedral mesh with the pressure field `p0 = E·e`, or for a half-space
    /// a layer of the given thickness with `p0 = E · depth / thickness`. Made by
    /// [`Hydroelastic::compliant`] (and [`Hydroelastic::with_thickness`] for a half-space).
    #[non_exhaustive]
    Compliant {
        /// Hydroelastic modulus `E` (Pa).
        modulus: f64,
        /// Edge length of the tetrahedral mesh (m); unused by a half-space.
        resolution_hint: f64,
        /// Thickness of a compliant half-space's layer (m); required for a half-space and
        /// only allowed there.
        thickness: Option<f64>,
    },
}

impl Hydroelastic {
    /// Rigid, meshed with surface edges of about `resolution_hint` (m).
    pub fn rigid(resolution_hint: f64) -> Self {
        Hydroelastic::Rigid { resolution_hint }
    }

    /// Compliant with the hydroelastic modulus `modulus` (`E`, Pa), its tetrahedral mesh with
    /// edges of about `resolution_hint` (m). A compliant half-space also needs its layer's
    /// thickness ([`Hydroelastic::with_thickness`]).
    ///
    /// ```
    /// use stiction::hydroelastic::Hydroelastic;
    /// use stiction::geometry::Shape;
    /// let ball = Hydroelastic::compliant(1e5, 0.005);
    /// assert!(ball.validate(&Shape::Sphere { radius: 0.05 }).is_ok());
    /// let floor = Hydroelastic::compliant(1e6, 0.01).with_thickness(0.02);
    /// assert!(floor.validate(&Shape::HalfSpace).is_ok());
    /// ```
    pub fn compliant(modulus: f64, resolution_hint: f64) -> Self {
        Hydroelastic::Compliant {
            modulus,
            resolution_hint,
            thickness: None,
        }
    }

    /// These properties with a compliant half-space's layer `thickness` (m) when compliant;
    /// unchanged when rigid.
    pub fn with_thickness(self, thickness: f64) -> Self {
        match self {
            Hydroelastic::Compliant {
                modulus,
                resolution_hint,
                ..
            } => Hydroelastic::Compliant {
                modulus,
                resolution_hint,
                thickness: Some(thickness),
            },
            rigid => rigid,
        }
    }

    /// The modulus `E` (Pa) of a compliant geometry, `None` when rigid.
    pub fn modulus(&self) -> Option<f64> {
        match self {
            Hydroelastic::Rigid { .. } => None,
            Hydroelastic::Compliant { modulus, .. } => Some(*modulus),
        }
    }

    /// These properties with the modulus `modulus` (Pa) when compliant; unchanged when rigid.
    pub fn with_modulus(self, modulus: f64) -> Self {
        match self {
            Hydroelastic::Compliant {
                resolution_hint,
                thickness,
                ..
            } => Hydroelastic::Compliant {
                modulus,
                resolution_hint,
                thickness,
            },
            rigid => rigid,
        }
    }

    /// The resolution hint (m).
    pub fn resolution_hint(&self) -> f64 {
        match self {
            Hydroelastic::Rigid { resolution_hint }
            | Hydroelastic::Compliant {
                resolution_hint, ..
            } => *resolution_hint,
        }
    }

    /// Checks ranges for a geometry of `shape`: `E > 0`, hint > 0, a thickness > 0 exactly when
    /// the shape is a compliant half-space.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming the offending property.
    pub fn validate(&self, shape: &Shape) -> Result<()> {
        let positive = |name: &str, x: f64| {
            if x > 0.0 && x.is_finite() {
                Ok(())
            } else {
                Err(Error::invalid(name, x, "must be positive and finite"))
            }
        };
        positive("resolution_hint", self.resolution_hint())?;
        if let Hydroelastic::Compliant {
            modulus, thickness, ..
        } = self
        {
            positive("modulus", *modulus)?;
            match (shape, thickness) {
                (Shape::HalfSpace, Some(h)) => positive("thickness", *h)?,
                (Shape::HalfSpace, None) => {
                    return Err(Error::invalid(
                        "thickness",
                        "none",
                        "a compliant half-space needs the thickness of its layer (m)",
                    ))
                }
                (_, Some(h)) => {
                    return Err(Error::invalid(
                        "thickness",
                        h,
                        "only a compliant half-space has a layer thickness",
                    ))
                }
                (_, None) => {}
            }
        }
        if *shape != Shape::HalfSpace {
            let hint = self.resolution_hint();
            crate::budget::mesh(
                "resolution_hint",
                &format!(
                    "a pressure-field mesh of this {} at resolution hint {hint} m",
                    shape.kind()
                ),
                surface_triangle_estimate(shape, hint),
            )?;
        }
        Ok(())
    }
}

/// Number of surface triangles the mesher ([`crate::geometry::mesh::surface_mesh`]) makes
/// for `shape` at edges of about `hint` (m), from the same subdivision counts, without
/// building the mesh: uniform subdivision in `n = ⌈longest edge / h⌉` per triangle of a box
/// (12 triangles, `n²` each); surfaces of revolution (cylinder, capsule) with `⌈2πr/h⌉`
/// (at least 8) sectors over their profile's segments; Drake's refined octahedron (`8·4ᴸ`,
/// `L ≤ 8`) for spheres and ellipsoids. A convex mesh, whose hull is only known once it is
/// computed, and a half-space (no mesh) count 0. The test beside it checks the counts
/// against the meshes.
pub fn surface_triangle_estimate(shape: &Shape, hint: f64) -> f64 {
    use std::f64::consts::{FRAC_PI_2, TAU};
    let divisions = |x: f64, min: f64| (x / hint).ceil().max(min);
    let revolution = |segments: f64, r: f64| 2.0 * segments * divisions(TAU * r, 8.0);
    match shape {
        Shape::Box { half_extents } => {
            let mut e = [half_extents.x, half_extents.y, half_extents.z].map(|x| 2.0 * x);
            e.sort_by(f64::total_cmp);
            let diagonal = e[1].hypot(e[2]);
            12.0 * divisions(diagonal, 1.0).powi(2)
        }
        Shape::Cylinder {
            radius,
            half_length,
        } => {
            let (nr, nz) = (divisions(*radius, 1.0), divisions(2.0 * half_length, 1.0));
            revolution(2.0 * nr + nz, *radius)
        }
        Shape::Capsule {
            radius,
            half_length,
        } => {
            let (na, nz) = (
                divisions(FRAC_PI_2 * radius, 2.0),
                divisions(2.0 * half_length, 1.0),
            );
            revolution(2.0 * na + nz, *radius)
        }
        Shape::Sphere { radius: r } => sphere_triangles(*r, hint),
        Shape::Ellipsoid { semi_axes } => sphere_triangles(semi_axes.max(), hint),
        Shape::ConvexMesh { .. } | Shape::HalfSpace => 0.0,
    }
}

/// `8·4ᴸ` triangles of the sphere of radius `r` refined to level
/// `L = ⌈log₂(π / asin(h / 2r))⌉ − 2`, clamped to `[0, 8]` as the mesher does.
fn sphere_triangles(r: f64, hint: f64) -> f64 {
    let chord = hint.min(2.0 * r) / (2.0 * r);
    let level = ((std::f64::consts::PI / chord.asin()).log2().ceil() - 2.0).clamp(0.0, 8.0);
    8.0 * 4f64.powf(level)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::mesh::surface_mesh;
    use nalgebra::Vector3;

    /// The estimate follows the mesher: exact for boxes and spheres, over by the pole
    /// triangles (two rings of sectors that collapse at the axis) for surfaces of revolution.
    #[test]
    fn triangle_estimates_bound_the_meshes_closely() {
        let shapes = [
            (
                Shape::Box {
                    half_extents: Vector3::new(0.01, 0.005, 0.01),
                },
                0.004,
            ),
            (
                Shape::Cylinder {
                    radius: 0.05,
                    half_length: 0.1,
                },
                0.01,
            ),
            (
                Shape::Capsule {
                    radius: 0.005,
                    half_length: 0.04,
                },
                0.0015,
            ),
            (Shape::Sphere { radius: 0.05 }, 0.005),
            (
                Shape::Ellipsoid {
                    semi_axes: Vector3::new(0.05, 0.03, 0.02),
                },
                0.01,
            ),
        ];
        for (shape, hint) in shapes {
            let actual = surface_mesh(&shape, hint).unwrap().triangles.len() as f64;
            let estimate = surface_triangle_estimate(&shape, hint);
            assert!(
                actual <= estimate && estimate <= 1.15 * actual,
                "{shape:?}: {estimate} estimated, {actual} made"
            );
        }
    }

    /// Elandt's pencil-scrub finger stretched to 16 m at its 4 mm hint would be meshed into
    /// 1.9e8 triangles: refused before meshing, naming the hint.
    #[test]
    fn a_huge_mesh_is_refused_before_it_is_built() {
        let finger = Shape::Box {
            half_extents: Vector3::new(8.0, 0.005, 0.01),
        };
        let e = Hydroelastic::rigid(0.004).validate(&finger).unwrap_err();
        assert!(matches!(&e, Error::TooLarge { field, .. } if field == "resolution_hint"));
        assert!(e.to_string().contains("1.92e8 triangles"), "{e}");
        assert!(Hydroelastic::rigid(0.5).validate(&finger).is_ok());
    }
}
