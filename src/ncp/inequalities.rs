//! Bodies as intersections of convex inequalities (Xie & Chakraborty Sec. IV-A, assumption 2):
//! a body occupies `{ξ : f_i(ξ) ≤ 0, i = 1..m}` with each `f_i` convex and twice
//! continuously differentiable.
//!
//! The inequalities are written in the geometry frame G and evaluated in the world frame W
//! through the pose `X_WG` at the end of the step: `f_i(ξ_W) = f_i^G(X_WGᵀ ξ_W)` and
//! `∇f_i(ξ_W) = R_WG ∇f_i^G`. Every value is a length (m) and every gradient has unit norm on
//! the part of the boundary where that inequality is the only active one, so that the KKT
//! multipliers `l` of Xie & Chakraborty eqs. (13)-(16) are dimensionless and of order one:
//!
//! - half-space sets (boxes, polyhedra): `f_i = n_iᵀξ − d_i`, `‖n_i‖ = 1`;
//! - a cylinder of radius r and half-length L along z, the intersection of a quadric with two
//!   planes: `f_1 = (x² + y²)/(2r) − r/2`, `f_2 = z − L`, `f_3 = −z − L`;
//! - an ellipsoid (a sphere when the semi-axes agree): `f = (ρ/2)(Σ ξ_k²/s_k² − 1)` with ρ the
//!   smallest semi-axis;
//! - the plane of a half-space geometry: `f = z` (the region `z ≤ 0`).

#![allow(non_snake_case)]

use nalgebra::{Matrix3, Vector3};

use crate::error::{Error, Result};
use crate::geometry::Shape;
use crate::math::Pose;
use crate::scalar::{lit, Scalar};

/// Relative tolerance on the support function's ties: vertices whose height along the
/// direction is within this fraction of the body size of the maximum are averaged, so that a
/// face-down box starts from its face centre.
const SUPPORT_TIE: f64 = 1e-9;

/// A convex body `{ξ : f_i(ξ) ≤ 0}` in its geometry frame (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub enum ConvexInequalities {
    /// A bounded polyhedron `{ξ : n_iᵀξ ≤ d_i}` (m faces), with its vertices for the support
    /// function used as a warm start.
    HalfSpaces {
        /// Unit outward face normals (m).
        normals: Vec<Vector3<f64>>,
        /// Offsets `d_i` (m).
        offsets: Vec<f64>,
        /// Vertices (m, geometry frame), computed from the faces.
        vertices: Vec<Vector3<f64>>,
    },
    /// Cylinder along z: quadric side `(x² + y²)/(2r) − r/2 ≤ 0` and caps `±z − L ≤ 0`.
    Cylinder {
        /// Radius r (m).
        radius: f64,
        /// Half length L (m).
        half_length: f64,
    },
    /// Ellipsoid with semi-axes `(s_x, s_y, s_z)` (m) along the frame axes.
    Ellipsoid {
        /// Semi-axes (m).
        semi_axes: Vector3<f64>,
    },
    /// The half-space `z ≤ 0` (its boundary is the plane z = 0).
    Plane,
}

impl ConvexInequalities {
    /// The polyhedron `{ξ : n_iᵀξ ≤ d_i}`; normals are normalized.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for fewer than 4 faces, a zero or non-finite normal, or a
    /// set that is empty or unbounded (fewer than 4 vertices found).
    pub fn polyhedron(normals: &[Vector3<f64>], offsets: &[f64]) -> Result<Self> {
        if normals.len() != offsets.len() || normals.len() < 4 {
            return Err(Error::invalid(
                "polyhedron faces",
                normals.len(),
                "need at least 4 faces and one offset per normal",
            ));
        }
        let mut unit = Vec::with_capacity(normals.len());
        let mut d = Vec::with_capacity(normals.len());
        for (n, o) in normals.iter().zip(offsets) {
            let norm = n.norm();
            if !(norm > 1e-12 && norm.is_finite() && o.is_finite()) {
                return Err(Error::invalid(
                    "polyhedron normal",
                    format!("{n:?}"),
                    "normals must be non-zero and finite",
                ));
            }
            unit.push(n / norm);
            d.push(o / norm);
        }
        // Vertices: every triple of faces with independent normals whose intersection point
        // satisfies all inequalities (O(m³), for the small polyhedra of a scene).
        let scale = d.iter().fold(1e-9_f64, |s, x| s.max(x.abs()));
        let m = unit.len();
        let mut vertices: Vec<Vector3<f64>> = Vec::new();
        for i in 0..m {
            for j in i + 1..m {
                for k in j + 1..m {
                    let A = Matrix3::from_rows(&[
                        unit[i].transpose(),
                        unit[j].transpose(),
                        unit[k].transpose(),
                    ]);
                    let Some(inv) = A.try_inverse() else { continue };
                    let p = inv * Vector3::new(d[i], d[j], d[k]);
                    let inside = unit
                        .iter()
                        .zip(&d)
                        .all(|(n, o)| n.dot(&p) - o <= 1e-9 * scale);
                    if inside && !vertices.iter().any(|v| (v - p).norm() <= 1e-9 * scale) {
                        vertices.push(p);
                    }
                }
            }
        }
        if vertices.len() < 4 {
            return Err(Error::invalid(
                "polyhedron faces",
                normals.len(),
                "the faces must bound a non-empty solid (fewer than 4 vertices found)",
            ));
        }
        Ok(ConvexInequalities::HalfSpaces {
            normals: unit,
            offsets: d,
            vertices,
        })
    }

    /// The inequalities of a collision [`Shape`]: boxes become six half-spaces, cylinders a
    /// quadric and two planes, spheres an ellipsoid, half-spaces their plane.
    ///
    /// # Errors
    /// [`Error::UnsupportedPair`] for capsules and convex meshes, which the geometrically
    /// implicit stepper does not describe yet.
    pub fn from_shape(shape: &Shape) -> Result<Self> {
        match shape {
            Shape::Box { half_extents: e } => {
                let mut normals = Vec::with_capacity(6);
                let mut offsets = Vec::with_capacity(6);
                for k in 0..3 {
                    for s in [1.0, -1.0] {
                        let mut n = Vector3::zeros();
                        n[k] = s;
                        normals.push(n);
                        offsets.push(e[k]);
                    }
                }
                Self::polyhedron(&normals, &offsets)
            }
            Shape::Cylinder {
                radius,
                half_length,
            } => Ok(ConvexInequalities::Cylinder {
                radius: *radius,
                half_length: *half_length,
            }),
            Shape::Sphere { radius } => Ok(ConvexInequalities::Ellipsoid {
                semi_axes: Vector3::repeat(*radius),
            }),
            Shape::HalfSpace => Ok(ConvexInequalities::Plane),
            Shape::Ellipsoid { semi_axes } => Ok(ConvexInequalities::Ellipsoid {
                semi_axes: *semi_axes,
            }),
            other => Err(Error::UnsupportedPair {
                a: other.kind().to_string(),
                b: "the geometrically implicit (ncp) stepper: use box, cylinder, sphere or half-space"
                    .to_string(),
            }),
        }
    }

    /// Number of inequalities m.
    pub fn len(&self) -> usize {
        match self {
            ConvexInequalities::HalfSpaces { normals, .. } => normals.len(),
            ConvexInequalities::Cylinder { .. } => 3,
            ConvexInequalities::Ellipsoid { .. } | ConvexInequalities::Plane => 1,
        }
    }

    /// A characteristic size (m): the radius of the smallest origin-centred ball holding a
    /// bounded body; 1 m for the plane. Scales the residual (see `problem.rs`).
    pub fn size(&self) -> f64 {
        match self {
            ConvexInequalities::HalfSpaces { vertices, .. } => {
                vertices.iter().fold(0.0_f64, |s, v| s.max(v.norm()))
            }
            ConvexInequalities::Cylinder {
                radius,
                half_length,
            } => radius.hypot(*half_length),
            ConvexInequalities::Ellipsoid { semi_axes } => semi_axes.max(),
            ConvexInequalities::Plane => 1.0,
        }
    }

    /// Always false: every description has at least one inequality.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Value `f_i(ξ_G)` (m) and gradient `∇f_i` of inequality `i` at a point in the geometry
    /// frame G.
    pub fn local<T: Scalar>(&self, i: usize, p_G: &Vector3<T>) -> (T, Vector3<T>) {
        let half: T = lit(0.5);
        match self {
            ConvexInequalities::HalfSpaces {
                normals, offsets, ..
            } => {
                let n = normals[i].map(lit::<T>);
                (n.dot(p_G) - lit(offsets[i]), n)
            }
            ConvexInequalities::Cylinder {
                radius,
                half_length,
            } => {
                let r: T = lit(*radius);
                let L: T = lit(*half_length);
                match i {
                    0 => (
                        (p_G.x * p_G.x + p_G.y * p_G.y) / (r + r) - r * half,
                        Vector3::new(p_G.x / r, p_G.y / r, T::zero()),
                    ),
                    1 => (p_G.z - L, Vector3::z()),
                    _ => (-p_G.z - L, -Vector3::z()),
                }
            }
            ConvexInequalities::Ellipsoid { semi_axes } => {
                let rho: T = lit(semi_axes.min());
                let s2 = semi_axes.map(|s| lit::<T>(s * s));
                let q = p_G.x * p_G.x / s2.x + p_G.y * p_G.y / s2.y + p_G.z * p_G.z / s2.z;
                (
                    rho * half * (q - T::one()),
                    Vector3::new(p_G.x / s2.x, p_G.y / s2.y, p_G.z / s2.z) * rho,
                )
            }
            ConvexInequalities::Plane => (p_G.z, Vector3::z()),
        }
    }

    /// Value `f_i(ξ_W)` (m) and world gradient `∇f_i(ξ_W)` of inequality `i` at a world
    /// point, for the geometry at pose `X_WG` (Xie & Chakraborty eqs. (11), (15)).
    pub fn world<T: Scalar>(&self, i: usize, X_WG: &Pose<T>, p_W: &Vector3<T>) -> (T, Vector3<T>) {
        let p_G = X_WG.R.transpose() * (p_W - X_WG.p);
        let (f, grad_G) = self.local(i, &p_G);
        (f, X_WG.R * grad_G)
    }

    /// The largest inequality value `max_i f_i(ξ_G)` (m): negative inside, zero on the
    /// boundary; an outside point has a positive value.
    pub fn max_value(&self, p_G: &Vector3<f64>) -> f64 {
        (0..self.len())
            .map(|i| self.local(i, p_G).0)
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// A support point `argmax_{ξ ∈ body} dᵀξ` in the geometry frame for a unit direction
    /// `d_G`; ties between polyhedron vertices are averaged. Used to start the ECP search.
    /// The plane has no support point; its origin projected along `d` is returned.
    pub fn support(&self, d_G: &Vector3<f64>) -> Vector3<f64> {
        match self {
            ConvexInequalities::HalfSpaces { vertices, .. } => {
                let size = vertices.iter().fold(0.0_f64, |s, v| s.max(v.norm()));
                let best = vertices
                    .iter()
                    .map(|v| v.dot(d_G))
                    .fold(f64::NEG_INFINITY, f64::max);
                let tied: Vec<_> = vertices
                    .iter()
                    .filter(|v| v.dot(d_G) >= best - SUPPORT_TIE * size.max(1e-12))
                    .collect();
                tied.iter().fold(Vector3::zeros(), |s, v| s + *v) / tied.len() as f64
            }
            ConvexInequalities::Cylinder {
                radius,
                half_length,
            } => {
                let radial = Vector3::new(d_G.x, d_G.y, 0.0);
                let rn = radial.norm();
                let side = if rn > 1e-12 {
                    radial * (radius / rn)
                } else {
                    Vector3::zeros()
                };
                let cap = if d_G.z.abs() > 1e-12 {
                    half_length * d_G.z.signum()
                } else {
                    0.0
                };
                side + Vector3::new(0.0, 0.0, cap)
            }
            ConvexInequalities::Ellipsoid { semi_axes } => {
                let s2 = semi_axes.component_mul(semi_axes);
                let w = s2.component_mul(d_G);
                let norm = d_G.dot(&w).sqrt();
                if norm > 0.0 {
                    w / norm
                } else {
                    Vector3::zeros()
                }
            }
            ConvexInequalities::Plane => Vector3::zeros(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_dual::Dual64;

    /// Gradients are checked against forward-mode derivatives to round-off.
    const GRADIENT_TOLERANCE: f64 = 1e-12;

    fn shapes() -> Vec<ConvexInequalities> {
        vec![
            ConvexInequalities::from_shape(&Shape::Box {
                half_extents: Vector3::new(0.1, 0.2, 0.3),
            })
            .expect("box"),
            ConvexInequalities::Cylinder {
                radius: 0.1,
                half_length: 0.4,
            },
            ConvexInequalities::Ellipsoid {
                semi_axes: Vector3::new(0.1, 0.2, 0.3),
            },
            ConvexInequalities::Plane,
        ]
    }

    #[test]
    fn world_gradients_match_dual_derivatives() {
        let X_WG = Pose {
            R: *nalgebra::Rotation3::from_euler_angles(0.3, -0.2, 1.1).matrix(),
            p: Vector3::new(0.5, -0.1, 0.2),
        };
        let X: Pose<Dual64> = X_WG.cast();
        let p = Vector3::new(0.55, -0.02, 0.31);
        for s in shapes() {
            for i in 0..s.len() {
                let (_, g) = s.world(i, &X_WG, &p);
                for k in 0..3 {
                    let mut pd = p.map(Dual64::from);
                    pd[k].eps = 1.0;
                    let (fd, _) = s.world(i, &X, &pd);
                    assert!((fd.eps - g[k]).abs() < GRADIENT_TOLERANCE, "{s:?} {i} {k}");
                }
            }
        }
    }

    #[test]
    fn box_has_eight_vertices_and_face_centre_support() {
        let b = ConvexInequalities::from_shape(&Shape::Box {
            half_extents: Vector3::new(0.5, 0.5, 0.5),
        })
        .expect("box");
        let ConvexInequalities::HalfSpaces { vertices, .. } = &b else {
            panic!("box is a half-space set")
        };
        assert_eq!(vertices.len(), 8);
        assert!((b.support(&-Vector3::z()) - Vector3::new(0.0, 0.0, -0.5)).norm() < 1e-12);
        let corner = b.support(&Vector3::new(1.0, -1.0, 1.0).normalize());
        assert!((corner - Vector3::new(0.5, -0.5, 0.5)).norm() < 1e-12);
    }

    #[test]
    fn support_points_lie_on_the_boundary() {
        let d = Vector3::new(0.3, -0.5, 0.8).normalize();
        for s in shapes().into_iter().take(3) {
            let p = s.support(&d);
            assert!(s.max_value(&p).abs() < 1e-12, "{s:?}");
        }
    }

    #[test]
    fn unbounded_polyhedron_is_an_error() {
        let n = [Vector3::x(), Vector3::y(), Vector3::z(), -Vector3::x()];
        assert!(ConvexInequalities::polyhedron(&n, &[1.0; 4]).is_err());
    }
}
