//! Shapes: their kinds, sizes in any scalar, validation and solid inertias. Sizes are in metres; capsules and cylinders are aligned with the
//! geometry frame's z-axis (Drake's convention); a half-space occupies `z ≤ 0` of its frame
//! (outward normal +z).

#![allow(non_snake_case)]

use nalgebra::{Matrix3, Vector3};
use parry3d_f64::math::Vector as PVec;
use parry3d_f64::shape::ConvexPolyhedron;

use crate::error::{Error, Result};
use crate::scalar::{lit, Scalar};

/// A collision shape.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// Sphere of `radius` (m).
    Sphere {
        /// Radius (m).
        radius: f64,
    },
    /// Box with `half_extents` (m) along the frame axes.
    Box {
        /// Half side lengths (m).
        half_extents: Vector3<f64>,
    },
    /// Capsule: a segment of length `2 half_length` along z swept by a sphere of `radius`.
    Capsule {
        /// Radius (m).
        radius: f64,
        /// Half length of the core segment (m).
        half_length: f64,
    },
    /// Cylinder of `radius` and length `2 half_length` along z.
    Cylinder {
        /// Radius (m).
        radius: f64,
        /// Half length (m).
        half_length: f64,
    },
    /// The half-space `z ≤ 0` of the geometry frame.
    HalfSpace,
    /// Ellipsoid `Σ (x_i / a_i)² ≤ 1` with `semi_axes` `a` (m) along the frame axes. Point
    /// contact sees the convex hull of its surface mesh at edges of a quarter of the smallest
    /// semi-axis; pressure-field contact meshes it at the resolution hint.
    Ellipsoid {
        /// Semi-axes (m).
        semi_axes: Vector3<f64>,
    },
    /// Convex hull of `vertices` (m, geometry frame).
    ConvexMesh {
        /// Vertices of the hull.
        vertices: Vec<Vector3<f64>>,
    },
}

/// The size parameters of a shape in `T` (m): the quantities that size derivatives are taken
/// with respect to. Made by [`Shape::size`]; seed the derivative parts to differentiate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ShapeSize<T: Scalar> {
    /// A sphere.
    Sphere {
        /// Radius (m).
        radius: T,
    },
    /// A box.
    Box {
        /// Half side lengths along the frame axes (m).
        half_extents: Vector3<T>,
    },
    /// A capsule along z.
    Capsule {
        /// Radius (m).
        radius: T,
        /// Half length of the core segment (m).
        half_length: T,
    },
    /// A cylinder along z.
    Cylinder {
        /// Radius (m).
        radius: T,
        /// Half length (m).
        half_length: T,
    },
    /// A half-space: no size.
    HalfSpace,
    /// A convex mesh: no size parameters (its vertices are fixed f64 data), so a convex mesh
    /// has no size derivatives; only its pose differentiates.
    ConvexMesh,
}

impl<T: Scalar> ShapeSize<T> {
    /// The size axes `a` (m, geometry frame) that
    /// [`CorePoint::scale`](crate::geometry::distance::CorePoint::scale) multiplies, eq. (1):
    /// half extents (box), `(r, r, h)` (cylinder), `(0, 0, h)` (capsule core segment), zero
    /// otherwise.
    pub fn axes(&self) -> Vector3<T> {
        match *self {
            ShapeSize::Box { half_extents } => half_extents,
            ShapeSize::Cylinder {
                radius,
                half_length,
            } => Vector3::new(radius, radius, half_length),
            ShapeSize::Capsule { half_length, .. } => {
                Vector3::new(T::zero(), T::zero(), half_length)
            }
            ShapeSize::Sphere { .. } | ShapeSize::HalfSpace | ShapeSize::ConvexMesh => {
                Vector3::zeros()
            }
        }
    }

    /// The radius (m) swept around rounded core points
    /// ([`CorePoint::rounded`](crate::geometry::distance::CorePoint::rounded)), eq. (3):
    /// the radius of a sphere, a capsule or a cylinder, zero otherwise.
    pub fn radius(&self) -> T {
        match *self {
            ShapeSize::Sphere { radius }
            | ShapeSize::Capsule { radius, .. }
            | ShapeSize::Cylinder { radius, .. } => radius,
            _ => T::zero(),
        }
    }

    /// Whether these sizes are of the kind of `shape`.
    pub(crate) fn matches(&self, shape: &Shape) -> bool {
        matches!(
            (self, shape),
            (ShapeSize::Sphere { .. }, Shape::Sphere { .. })
                | (ShapeSize::Box { .. }, Shape::Box { .. })
                | (ShapeSize::Capsule { .. }, Shape::Capsule { .. })
                | (ShapeSize::Cylinder { .. }, Shape::Cylinder { .. })
                | (ShapeSize::HalfSpace, Shape::HalfSpace)
                | (
                    ShapeSize::ConvexMesh,
                    Shape::ConvexMesh { .. } | Shape::Ellipsoid { .. }
                )
        )
    }
}

impl Shape {
    /// A short lowercase name (`"sphere"`, `"half-space"`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            Shape::Sphere { .. } => "sphere",
            Shape::Box { .. } => "box",
            Shape::Capsule { .. } => "capsule",
            Shape::Cylinder { .. } => "cylinder",
            Shape::HalfSpace => "half-space",
            Shape::Ellipsoid { .. } => "ellipsoid",
            Shape::ConvexMesh { .. } => "convex-mesh",
        }
    }

    /// The size parameters in `T` (m), each lifted with [`lit`] (no derivative part): seed
    /// the derivative parts of the result to differentiate with respect to sizes. A convex
    /// mesh, an ellipsoid and a half-space have none ([`ShapeSize::ConvexMesh`],
    /// [`ShapeSize::HalfSpace`]): their point-contact geometry is a fixed hull.
    pub fn size<T: Scalar>(&self) -> ShapeSize<T> {
        match self {
            Shape::Sphere { radius } => ShapeSize::Sphere {
                radius: lit(*radius),
            },
            Shape::Box { half_extents } => ShapeSize::Box {
                half_extents: half_extents.map(lit),
            },
            Shape::Capsule {
                radius,
                half_length,
            } => ShapeSize::Capsule {
                radius: lit(*radius),
                half_length: lit(*half_length),
            },
            Shape::Cylinder {
                radius,
                half_length,
            } => ShapeSize::Cylinder {
                radius: lit(*radius),
                half_length: lit(*half_length),
            },
            Shape::HalfSpace => ShapeSize::HalfSpace,
            Shape::ConvexMesh { .. } | Shape::Ellipsoid { .. } => ShapeSize::ConvexMesh,
        }
    }

    /// Checks sizes: positive and finite; a convex mesh needs four non-coplanar vertices.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming the offending size.
    pub fn validate(&self) -> Result<()> {
        let positive = |name: &str, x: f64| {
            if x > 0.0 && x.is_finite() {
                Ok(())
            } else {
                Err(Error::invalid(name, x, "must be positive and finite (m)"))
            }
        };
        match self {
            Shape::Sphere { radius } => positive("radius", *radius),
            Shape::Box { half_extents } => {
                half_extents.iter().try_for_each(|&h| positive("size", h))
            }
            Shape::Capsule {
                radius,
                half_length,
            }
            | Shape::Cylinder {
                radius,
                half_length,
            } => {
                positive("radius", *radius)?;
                positive("length", *half_length)
            }
            Shape::HalfSpace => Ok(()),
            Shape::Ellipsoid { semi_axes } => {
                semi_axes.iter().try_for_each(|&a| positive("size", a))
            }
            Shape::ConvexMesh { vertices } => {
                if vertices.len() < 4 || vertices.iter().any(|v| !v.iter().all(|x| x.is_finite())) {
                    return Err(Error::invalid(
                        "vertices",
                        vertices.len(),
                        "a convex mesh needs at least 4 finite vertices",
                    ));
                }
                let points: Vec<PVec> = vertices.iter().map(|p| PVec::new(p.x, p.y, p.z)).collect();
                if ConvexPolyhedron::from_convex_hull(&points).is_none() {
                    return Err(Error::invalid(
                        "vertices",
                        vertices.len(),
                        "vertices are degenerate (coplanar); no convex hull",
                    ));
                }
                Ok(())
            }
        }
    }

    /// Half the shape's thinnest width (m): the radius of a sphere, capsule or cylinder (or
    /// a cylinder's half length if shorter), a box's or an ellipsoid's smallest half extent,
    /// the smallest half side of a convex mesh's bounding box; infinite for a half-space.
    /// The depth past which an overlap is no longer a thin compliant layer
    /// ([`crate::step::warnings`]).
    pub fn half_thickness(&self) -> f64 {
        match self {
            Shape::Sphere { radius } | Shape::Capsule { radius, .. } => *radius,
            Shape::Cylinder {
                radius,
                half_length,
            } => radius.min(*half_length),
            Shape::Box { half_extents: h } | Shape::Ellipsoid { semi_axes: h } => h.min(),
            Shape::HalfSpace => f64::INFINITY,
            Shape::ConvexMesh { vertices } => {
                let (lo, hi) = bounding_box(vertices);
                0.5 * (hi - lo).min()
            }
        }
    }

    /// The radius (m) of the smallest sphere about the geometry frame's origin that holds the
    /// shape; infinite for a half-space.
    pub fn bounding_radius(&self) -> f64 {
        match self {
            Shape::Sphere { radius } => *radius,
            Shape::Capsule {
                radius,
                half_length,
            } => radius + half_length,
            Shape::Cylinder {
                radius,
                half_length,
            } => radius.hypot(*half_length),
            Shape::Box { half_extents: h } => h.norm(),
            Shape::Ellipsoid { semi_axes: a } => a.max(),
            Shape::HalfSpace => f64::INFINITY,
            Shape::ConvexMesh { vertices } => vertices.iter().map(|v| v.norm()).fold(0.0, f64::max),
        }
    }

    /// Rotational inertia (kg·m², about the centre of the shape, shape axes) of a solid of
    /// uniform density with total `mass` (kg). `None` for a half-space and a convex mesh.
    pub fn solid_inertia(&self, mass: f64) -> Option<Matrix3<f64>> {
        let d = |x: f64, y: f64, z: f64| Some(Matrix3::from_diagonal(&Vector3::new(x, y, z)));
        match self {
            Shape::Sphere { radius } => {
                let i = 0.4 * mass * radius * radius;
                d(i, i, i)
            }
            Shape::Box { half_extents: h } => {
                let (x, y, z) = (4.0 * h.x * h.x, 4.0 * h.y * h.y, 4.0 * h.z * h.z);
                d(
                    mass * (y + z) / 12.0,
                    mass * (x + z) / 12.0,
                    mass * (x + y) / 12.0,
                )
            }
            Shape::Cylinder {
                radius,
                half_length,
            } => {
                let l = 2.0 * half_length;
                let t = mass * (3.0 * radius * radius + l * l) / 12.0;
                d(t, t, 0.5 * mass * radius * radius)
            }
            Shape::Capsule {
                radius,
                half_length,
            } => {
                // Cylinder of length 2h plus two hemispheres, uniform density.
                let (r, h) = (*radius, *half_length);
                let v_cyl = std::f64::consts::PI * r * r * 2.0 * h;
                let v_sph = 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
                let rho = mass / (v_cyl + v_sph);
                let (mc, ms) = (rho * v_cyl, rho * v_sph);
                let axial = 0.5 * mc * r * r + 0.4 * ms * r * r;
                let trans = mc * (3.0 * r * r + 4.0 * h * h) / 12.0
                    + ms * (0.4 * r * r + h * h + 0.75 * h * r);
                d(trans, trans, axial)
            }
            Shape::Ellipsoid { semi_axes: a } => {
                let (x, y, z) = (a.x * a.x, a.y * a.y, a.z * a.z);
                d(
                    0.2 * mass * (y + z),
                    0.2 * mass * (x + z),
                    0.2 * mass * (x + y),
                )
            }
            Shape::HalfSpace | Shape::ConvexMesh { .. } => None,
        }
    }
}

/// Corners (lowest, highest) of the axis-aligned box around `points`; zeros for none.
fn bounding_box(points: &[Vector3<f64>]) -> (Vector3<f64>, Vector3<f64>) {
    let mut lo = Vector3::repeat(f64::INFINITY);
    let mut hi = Vector3::repeat(f64::NEG_INFINITY);
    for p in points {
        lo = lo.inf(p);
        hi = hi.sup(p);
    }
    if points.is_empty() {
        (Vector3::zeros(), Vector3::zeros())
    } else {
        (lo, hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solid_inertias() {
        let s = Shape::Sphere { radius: 0.025 }.solid_inertia(0.5).unwrap();
        assert!((s[(0, 0)] - 0.4 * 0.5 * 0.025 * 0.025).abs() < 1e-18);
        let b = Shape::Box {
            half_extents: Vector3::new(0.025, 0.025, 0.025),
        }
        .solid_inertia(1.0)
        .unwrap();
        assert!((b[(2, 2)] - 1.0 * 2.0 * 0.05 * 0.05 / 12.0).abs() < 1e-18);
        assert!(Shape::Sphere { radius: -1.0 }.validate().is_err());
    }

    /// Thickness and reach of each kind: the thinnest half width and the farthest point.
    #[test]
    fn half_thickness_and_bounding_radius() {
        let b = Shape::Box {
            half_extents: Vector3::new(0.3, 0.1, 0.2),
        };
        assert_eq!(b.half_thickness(), 0.1);
        assert!((b.bounding_radius() - 0.14f64.sqrt()).abs() < 1e-15);
        let c = Shape::Cylinder {
            radius: 0.5,
            half_length: 0.02,
        };
        assert_eq!(
            (c.half_thickness(), c.bounding_radius()),
            (0.02, 0.5f64.hypot(0.02))
        );
        let m = Shape::ConvexMesh {
            vertices: vec![
                Vector3::new(0.0, 0.0, 0.0),
                Vector3::new(1.0, 0.0, 0.0),
                Vector3::new(0.0, 0.4, 0.0),
                Vector3::new(0.0, 0.0, 2.0),
            ],
        };
        assert_eq!((m.half_thickness(), m.bounding_radius()), (0.2, 2.0));
        assert_eq!(Shape::HalfSpace.half_thickness(), f64::INFINITY);
    }
}
