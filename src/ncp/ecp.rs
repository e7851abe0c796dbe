//! The equivalent contact point (ECP): closest points of two convex bodies written as
//! algebraic and complementarity conditions (Xie & Chakraborty Sec. IV-A, eqs. (11)-(17);
//! Chakraborty, Berard, Akella & Trinkle, IJRR 2014).
//!
//! Body F (`f_i ≤ 0`, i = 1..m) and body G (`g_j ≤ 0`, j = 1..n) are evaluated at their
//! end-of-step poses. The unknowns are the points `a1` (on F) and `a2` (on G), the multipliers
//! `l1 ∈ ℝᵐ`, `l2 ∈ ℝⁿ` and the signed gap δ along the contact normal:
//!
//! ```text
//! (K1)  Σ_i l1_i ∇f_i(a1) + Σ_j l2_j ∇g_j(a2) = 0          eq. (14)
//! (K2)  a1 − a2 − δ n = 0,   n = Σ_j l2_j ∇g_j(a2)          eq. (13)
//! (K3)  ½ (nᵀn − 1) = 0
//!       0 ≤ l1 ⊥ −f(a1) ≥ 0,   0 ≤ l2 ⊥ −g(a2) ≥ 0          eqs. (15), (16)
//!       0 ≤ p_n ⊥ δ ≥ 0                                      eq. (17)
//! ```
//!
//! (K1) says that the normal cones of F at `a1` and of G at `a2` are opposite; n is the unit
//! normal out of G, along which the normal impulse pushes F. These are the KKT conditions of
//! `min ‖a1 − a2‖` (eq. (12)) with the multipliers rescaled by the distance, which is the
//! modification that keeps them well posed at touch: the unscaled multipliers vanish there
//! and leave the points undetermined, the scaled ones (normalized by (K3)) do not.
//!
//! Two choices differ from the paper's text and are verified by the tests of
//! `tests/ncp_cases.rs` rather than taken on trust:
//! - the paper's eq. (13) ties `a1 − a2` to the gradient of one active constraint of G with an
//!   unnormalized multiplier; we use the normal-cone element `n` with the explicit
//!   normalization (K3) and the gap δ, so that separation (δ > 0), touch (δ = 0) and the
//!   normal direction are all defined by the same equations;
//! - eq. (17) pairs `p_n` with `max_i f_i(a2)`, which is non-smooth; for convex bodies with
//!   opposite normal cones at `a1` and `a2`, `max_i f_i(a2) ≥ 0 ⇔ δ ≥ 0`, so we pair `p_n` with
//!   the smooth δ.
//!
//! At surface or line contact `a1 = a2` may lie anywhere on the patch as far as geometry is
//! concerned; the Newton–Euler equations, through the moment arm `a1 − x`, select the ECP
//! (Sec. V, Proposition 2). The number of positive `l1_i` is the number of active facets of F:
//! 3 at a cube's corner, 2 on an edge, 1 on a face (Sec. VI-C).

#![allow(non_snake_case)]

use nalgebra::Vector3;

use crate::math::Pose;
use crate::ncp::inequalities::ConvexInequalities;
use crate::scalar::Scalar;

/// One body of a contact pair at its end-of-step pose.
#[derive(Clone, Copy, Debug)]
pub struct PairBody<'a, T: Scalar> {
    /// The body's inequalities in its geometry frame.
    pub shape: &'a ConvexInequalities,
    /// Pose `X_WG` of the geometry frame at the end of the step.
    pub X_WG: Pose<T>,
}

/// The ECP unknowns of one pair (sizes m and n for the two bodies).
#[derive(Clone, Copy, Debug)]
pub struct EcpUnknowns<'a, T: Scalar> {
    /// Point `a1` on F (m, world).
    pub a1: Vector3<T>,
    /// Point `a2` on G (m, world).
    pub a2: Vector3<T>,
    /// Signed gap δ along n (m).
    pub gap: T,
    /// Multipliers of F's inequalities (m).
    pub l1: &'a [T],
    /// Multipliers of G's inequalities (n).
    pub l2: &'a [T],
}

/// The closest-point conditions (K1)-(K3) of one pair: seven equations, the unit normal n
/// (out of G) and the complementarity pairs `(l1_i, −f_i(a1))`, `(l2_j, −g_j(a2))` appended to
/// `pairs` (m + n of them).
pub fn closest_point_conditions<T: Scalar>(
    F: &PairBody<'_, T>,
    G: &PairBody<'_, T>,
    x: &EcpUnknowns<'_, T>,
    pairs: &mut Vec<(T, T)>,
) -> ([T; 7], Vector3<T>) {
    let mut cone_F = Vector3::zeros();
    for (i, l) in x.l1.iter().enumerate() {
        let (f, grad) = F.shape.world(i, &F.X_WG, &x.a1);
        cone_F += grad * *l;
        pairs.push((*l, -f));
    }
    let mut n = Vector3::zeros();
    for (j, l) in x.l2.iter().enumerate() {
        let (g, grad) = G.shape.world(j, &G.X_WG, &x.a2);
        n += grad * *l;
        pairs.push((*l, -g));
    }
    let k1 = cone_F + n;
    let k2 = x.a1 - x.a2 - n * x.gap;
    let half: T = crate::scalar::lit(0.5);
    (
        [
            k1.x,
            k1.y,
            k1.z,
            k2.x,
            k2.y,
            k2.z,
            half * (n.dot(&n) - T::one()),
        ],
        n,
    )
}

/// The contact frame `(t, o, n)` (Sec. III-A): `t` is the unit projection of the fixed
/// `helper` direction on the plane normal to `n`, `o = n × t`. The helper is chosen once per
/// step, away from n (see [`frame_helper`]), so the frame is smooth in n during a solve.
pub fn contact_frame<T: Scalar>(n: &Vector3<T>, helper: &Vector3<f64>) -> (Vector3<T>, Vector3<T>) {
    let h = helper.map(crate::scalar::lit::<T>);
    let t = h - n * n.dot(&h);
    let t = t / t.norm();
    let o = n.cross(&t);
    (t, o)
}

/// The world axis least aligned with `n` (a helper for [`contact_frame`]); the x-axis for a
/// vertical normal, so that `t = x`, `o = y` on a horizontal ground.
pub fn frame_helper(n: &Vector3<f64>) -> Vector3<f64> {
    let a = n.abs();
    if a.x <= a.y && a.x <= a.z {
        Vector3::x()
    } else if a.y <= a.z {
        Vector3::y()
    } else {
        Vector3::z()
    }
}

/// Start values of the multipliers of `shape` at the point `p_G` (geometry frame) for the
/// outward normal direction `m_G`: least squares over the inequalities active at `p_G`,
/// clipped at zero. Exact for boxes and cylinders, whose active gradients are orthogonal.
pub fn initial_multipliers(
    shape: &ConvexInequalities,
    p_G: &Vector3<f64>,
    m_G: &Vector3<f64>,
    scale: f64,
) -> Vec<f64> {
    (0..shape.len())
        .map(|i| {
            let (f, grad) = shape.local(i, p_G);
            if f.abs() <= 1e-9 * scale.max(1e-12) {
                (grad.dot(m_G) / grad.norm_squared().max(1e-300)).max(0.0)
            } else {
                0.0
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A unit cube resting face-down on the plane z = 0 satisfies (K1)-(K3) with a1 = a2 on
    /// the face, one active facet, and δ = 0.
    #[test]
    fn cube_on_plane_touch_satisfies_the_conditions() {
        let cube = ConvexInequalities::from_shape(&crate::geometry::Shape::Box {
            half_extents: Vector3::repeat(0.5),
        })
        .expect("box");
        let plane = ConvexInequalities::Plane;
        let F = PairBody {
            shape: &cube,
            X_WG: Pose::translation(Vector3::new(0.0, 0.0, 0.5)),
        };
        let G = PairBody {
            shape: &plane,
            X_WG: Pose::identity(),
        };
        let a = Vector3::new(0.2, -0.1, 0.0);
        let l1 = initial_multipliers(&cube, &Vector3::new(0.2, -0.1, -0.5), &-Vector3::z(), 0.5);
        assert_eq!(l1.iter().filter(|l| **l > 0.0).count(), 1);
        let mut pairs = Vec::new();
        let (eq, n) = closest_point_conditions(
            &F,
            &G,
            &EcpUnknowns {
                a1: a,
                a2: a,
                gap: 0.0,
                l1: &l1,
                l2: &[1.0],
            },
            &mut pairs,
        );
        assert!(eq.iter().all(|e| e.abs() < 1e-15));
        assert_eq!(n, Vector3::z());
        assert!(pairs
            .iter()
            .all(|(l, s)| *l >= 0.0 && *s >= 0.0 && l * s == 0.0));
    }

    #[test]
    fn frame_is_orthonormal_and_right_handed() {
        let n = Vector3::new(0.2, -0.3, 0.9).normalize();
        let (t, o) = contact_frame(&n, &frame_helper(&n));
        assert!((t.norm() - 1.0).abs() < 1e-14 && t.dot(&n).abs() < 1e-14);
        assert!((t.cross(&o) - n).norm() < 1e-14);
    }
}
