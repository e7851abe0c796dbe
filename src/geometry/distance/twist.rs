//! First derivatives of a feature pair's φ, n̂ and witness points (eqs. (1)-(4) of the module
//! doc) with respect to the twist of one of its geometries, in closed form (f64): what the IFT
//! contact terms ([`crate::derivatives`]) need of the geometry, without the dual evaluation of
//! [`super::feature_distance`].
//!
//! Geometry X moved by the twist `(ω, v)` about a point `o` (world axes, first order:
//! `R_WX ← R_WX + ε ω̂ R_WX`, `p_WX ← p_WX + ε (v + ω × (p_WX − o))`) moves its material
//! points and turns its directions:
//!
//! ```text
//!   δP = v + ω × (P − o) = [ −(P − o)ˣ | 1 ] (ω, v),     δu = ω × u = [ −uˣ | 0 ] (ω, v),
//! ```
//!
//! the other geometry's are fixed. With `w = P_B − P_A`, the forms of eq. (2) vary as
//!
//! ```text
//!   (2a) δn̂ = δ(R_WA n_A),  δd = n̂ · δw + w · δn̂,  δC_A = δP_B − n̂ δd − d δn̂,  δC_B = δP_B
//!   (2b) δn̂ = δ(R_WB n_B),  δC_A = δP_A,  δC_B = δP_A + n̂ δd + d δn̂
//!   (2c) c = û_A × û_B, δc = δû_A × û_B + û_A × δû_B, δn̂ = σ (1 − n̂ n̂ᵀ) δc / ‖c‖;
//!        the closest points P_A + s û_A, P_B + t û_B with s = (b f − e c')/Δ,
//!        t = (a f − b e)/Δ, Δ = b² − a c' (a = û_A·û_A, b = û_A·û_B, c' = û_B·û_B,
//!        e = û_A·w, f = û_B·w) differentiated as quotients
//!   (2d) the foot F = P_A + û λ, λ = û·w / û·û (A's line; B's: F = P_B − û λ),
//!        δn̂ = (1 − n̂ n̂ᵀ) δm / ‖m‖ with m = P_B − F (A's line) or F − P_A (B's)
//!   (2e) δn̂ = (1 − n̂ n̂ᵀ) δw / ‖w‖
//! ```
//!
//! and eqs. (3)-(4) give `δφ = n̂ · δw + w · δn̂`, `δp_WPa = δC_A + ρ_A δn̂`,
//! `δp_WPb = δC_B − ρ_B δn̂`. A rim point against a plane (eq. (1′)) is not a material point:
//! [`twist_derivative`] leaves it to the dual evaluation.
#![allow(non_snake_case)]

use nalgebra::{Matrix3, RowVector3, SMatrix, SVector, Vector3};
use num_dual::{Derivative, DualSVec64};

use super::{check_sizes, unit, ActiveFeature, CorePoint, FeatureDistance, FeatureKind, ShapeSize};
use crate::error::Result;
use crate::geometry::shape::Shape;
use crate::math::{rotate, skew, Pose};

/// Derivative of a 3-vector with respect to a twist `(ω, v)`.
pub type TwistJacobian = SMatrix<f64, 3, 6>;

/// Derivative of a scalar with respect to a twist `(ω, v)`.
pub type TwistGradient = SMatrix<f64, 1, 6>;

/// `X` at `ε = 0` with its first-order motion along the twist `ε (ω, v)` about `o` seeded in a
/// width-6 dual, slots `(ω, v)`: `R + ε ω̂ R`, `p + ε (v + ω × (p − o))`. Evaluating
/// [`super::feature_distance`] at it gives what [`twist_derivative`] gives in closed form.
pub fn twisted_pose(X: &Pose<f64>, o: &Vector3<f64>) -> Pose<DualSVec64<6>> {
    let dual = |re: f64, eps: [f64; 6]| DualSVec64::new(re, Derivative::some(SVector::from(eps)));
    let r = X.p - o;
    let dR = [0, 1, 2].map(|k| skew(&Vector3::ith(k, 1.0)) * X.R);
    let dp = [0, 1, 2].map(|k| Vector3::ith(k, 1.0).cross(&r));
    Pose {
        R: Matrix3::from_fn(|i, j| {
            dual(
                X.R[(i, j)],
                [dR[0][(i, j)], dR[1][(i, j)], dR[2][(i, j)], 0.0, 0.0, 0.0],
            )
        }),
        p: Vector3::from_fn(|i, _| {
            let mut eps = [dp[0][i], dp[1][i], dp[2][i], 0.0, 0.0, 0.0];
            eps[3 + i] = 1.0;
            dual(X.p[i], eps)
        }),
    }
}

/// The values of [`super::feature_distance`] and their derivatives with respect to the twist of one
/// geometry (columns `(ω, v)`, world axes, about the point given to [`twist_derivative`]).
#[derive(Clone, Copy, Debug)]
pub struct TwistDerivative {
    /// The feature pair's values at the poses (as f64 [`super::feature_distance`]).
    pub value: FeatureDistance<f64>,
    /// `∂φ/∂(ω, v)`.
    pub phi: TwistGradient,
    /// `∂n̂/∂(ω, v)`.
    pub nhat_W: TwistJacobian,
    /// `∂p_WPa/∂(ω, v)`.
    pub p_WPa: TwistJacobian,
    /// `∂p_WPb/∂(ω, v)`.
    pub p_WPb: TwistJacobian,
}

/// `δP` of a material point `P` of the moving geometry: `[ −(P − o)ˣ | 1 ]`.
fn point_jacobian(P: &Vector3<f64>, o: &Vector3<f64>) -> TwistJacobian {
    let mut J = TwistJacobian::zeros();
    J.fixed_view_mut::<3, 3>(0, 0).copy_from(&(-skew(&(P - o))));
    J.fixed_view_mut::<3, 3>(0, 3)
        .copy_from(&Matrix3::identity());
    J
}

/// `δu` of a direction `u` of the moving geometry: `[ −uˣ | 0 ]`.
fn direction_jacobian(u: &Vector3<f64>) -> TwistJacobian {
    let mut J = TwistJacobian::zeros();
    J.fixed_view_mut::<3, 3>(0, 0).copy_from(&(-skew(u)));
    J
}

/// `δ(x/‖x‖)` given `δx`: `(1 − x̂ x̂ᵀ) δx / ‖x‖` with `x̂` the unit vector.
fn unit_jacobian(xhat: &Vector3<f64>, norm: f64, dx: &TwistJacobian) -> TwistJacobian {
    (dx - xhat * (xhat.transpose() * dx)) / norm
}

/// A core point of a geometry in world frame (eq. (1), material points only).
fn core_point(point: &CorePoint, size: &ShapeSize<f64>, X: &Pose<f64>) -> Vector3<f64> {
    X.transform_point(&point.eval(&size.axes()))
}

/// φ, n̂ and the witness points of `feature` (as [`super::feature_distance`]) and their derivatives
/// with respect to the twist of geometry A (`moving_a`) or B about `o`, module doc eqs.
/// (2a)-(2e). `Ok(None)` when a core point is a rim point against a plane (eq. (1′)): its
/// angle follows the normal, and the dual evaluation covers it.
///
/// # Errors
/// Those of [`super::feature_distance`] at these poses.
#[allow(clippy::too_many_arguments)]
pub fn twist_derivative(
    shape_a: &Shape,
    size_a: &ShapeSize<f64>,
    X_WA: &Pose<f64>,
    shape_b: &Shape,
    size_b: &ShapeSize<f64>,
    X_WB: &Pose<f64>,
    feature: &ActiveFeature,
    moving_a: bool,
    o: &Vector3<f64>,
) -> Result<Option<TwistDerivative>> {
    check_sizes(shape_a, size_a, shape_b, size_b)?;
    if feature.point_a.rim || feature.point_b.rim {
        return Ok(None);
    }
    let P_A = core_point(&feature.point_a, size_a, X_WA);
    let P_B = core_point(&feature.point_b, size_b, X_WB);
    let w = P_B - P_A;
    let zero = TwistJacobian::zeros();
    let (dP_A, dP_B) = if moving_a {
        (point_jacobian(&P_A, o), zero)
    } else {
        (zero, point_jacobian(&P_B, o))
    };
    let dw = dP_B - dP_A;
    // A direction of geometry A (`of_a`) or B in world frame, and its derivative.
    let direction = |u: &Vector3<f64>, of_a: bool| {
        let (R, moves) = if of_a {
            (&X_WA.R, moving_a)
        } else {
            (&X_WB.R, !moving_a)
        };
        let u = rotate(R, u);
        let du = if moves { direction_jacobian(&u) } else { zero };
        (u, du)
    };
    // The values as `feature_distance` computes them, eqs. (2)-(4), with their derivatives.
    let (n, C_A, C_B, dn, dC_A, dC_B) = match feature.kind {
        FeatureKind::FaceA { nhat_A } => {
            let (n, dn) = direction(&nhat_A, true);
            let (d, dd) = (w.dot(&n), n.transpose() * dw + w.transpose() * dn);
            (n, P_B - n * d, P_B, dn, dP_B - n * dd - dn * d, dP_B)
        }
        FeatureKind::FaceB { nhat_B } => {
            let (n, dn) = direction(&nhat_B, false);
            let (d, dd) = (w.dot(&n), n.transpose() * dw + w.transpose() * dn);
            (n, P_A, P_A + n * d, dn, dP_A, dP_A + n * dd + dn * d)
        }
        FeatureKind::EdgeEdge { u_A, u_B, sign } => {
            let (uA, duA) = direction(&u_A, true);
            let (uB, duB) = direction(&u_B, false);
            let c = uA.cross(&uB);
            let n = unit(c, sign, "edge-edge")?;
            let dc = skew(&uA) * duB - skew(&uB) * duA;
            let dn = unit_jacobian(&n, c.norm(), &dc) * sign;
            let (a, b, cc) = (uA.dot(&uA), uA.dot(&uB), uB.dot(&uB));
            let (e, f) = (uA.dot(&w), uB.dot(&w));
            let row = |x: &Vector3<f64>| -> RowVector3<f64> { x.transpose() };
            let da = row(&uA) * duA * 2.0;
            let db = row(&uB) * duA + row(&uA) * duB;
            let dcc = row(&uB) * duB * 2.0;
            let de = row(&w) * duA + row(&uA) * dw;
            let df = row(&w) * duB + row(&uB) * dw;
            let det = b * b - a * cc;
            let ddet = db * (2.0 * b) - da * cc - dcc * a;
            let s = (b * f - e * cc) / det;
            let t = (a * f - b * e) / det;
            let ds = (db * f + df * b - de * cc - dcc * e - ddet * s) / det;
            let dt = (da * f + df * a - db * e - de * b - ddet * t) / det;
            (
                n,
                P_A + uA * s,
                P_B + uB * t,
                dn,
                dP_A + uA * ds + duA * s,
                dP_B + uB * dt + duB * t,
            )
        }
        FeatureKind::EdgeA { u_A } => {
            let (u, du) = direction(&u_A, true);
            let (g, h) = (u.dot(&w), u.dot(&u));
            let lambda = g / h;
            let dlambda = (w.transpose() * du + u.transpose() * dw) / h
                - u.transpose() * du * (2.0 * lambda / h);
            let foot = P_A + u * lambda;
            let n = unit(P_B - foot, 1.0, "line-point")?;
            let dfoot = dP_A + u * dlambda + du * lambda;
            let dn = unit_jacobian(&n, (P_B - foot).norm(), &(dP_B - dfoot));
            (n, foot, P_B, dn, dfoot, dP_B)
        }
        FeatureKind::EdgeB { u_B } => {
            let (u, du) = direction(&u_B, false);
            let (g, h) = (u.dot(&w), u.dot(&u));
            let lambda = g / h;
            let dlambda = (w.transpose() * du + u.transpose() * dw) / h
                - u.transpose() * du * (2.0 * lambda / h);
            let foot = P_B - u * lambda;
            let n = unit(foot - P_A, 1.0, "line-point")?;
            let dfoot = dP_B - u * dlambda - du * lambda;
            let dn = unit_jacobian(&n, (foot - P_A).norm(), &(dfoot - dP_A));
            (n, P_A, foot, dn, dP_A, dfoot)
        }
        FeatureKind::PointPoint => {
            let n = unit(w, 1.0, "point-point")?;
            (n, P_A, P_B, unit_jacobian(&n, w.norm(), &dw), dP_A, dP_B)
        }
    };
    let rho = |point: &CorePoint, size: &ShapeSize<f64>| {
        if point.rounded {
            size.radius()
        } else {
            0.0
        }
    };
    let (rho_A, rho_B) = (rho(&feature.point_a, size_a), rho(&feature.point_b, size_b));
    Ok(Some(TwistDerivative {
        value: FeatureDistance {
            phi: w.dot(&n) - rho_A - rho_B,
            nhat_W: n,
            p_WPa: C_A + n * rho_A,
            p_WPb: C_B - n * rho_B,
        },
        phi: n.transpose() * dw + w.transpose() * dn,
        nhat_W: dn,
        p_WPa: dC_A + dn * rho_A,
        p_WPb: dC_B - dn * rho_B,
    }))
}
