//! Convex polygon clipping in any scalar (Elandt Ch. 5): a tetrahedron sliced by a plane,
//! a polygon clipped by a half-space (Sutherland–Hodgman), and the area and centroid of a
//! polygon from its centroid-fan tessellation (Algorithm 1, Fig. 5.1).
//!
//! Topology (which vertices are inside, how many the polygon has) is decided on real parts;
//! the coordinates of the resulting vertices are then smooth functions of the inputs, so dual
//! numbers carry the derivative of the active topology.
#![allow(non_snake_case)]

use nalgebra::Vector3;

use crate::scalar::{lit, Scalar};

/// The half-space `m·x ≤ d` (`m` need not be unit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HalfSpace<T: Scalar> {
    /// Outward normal direction.
    pub m: Vector3<T>,
    /// Offset.
    pub d: T,
}

impl<T: Scalar> HalfSpace<T> {
    /// Signed value `m·x − d` (≤ 0 inside).
    pub fn eval(&self, x: &Vector3<T>) -> T {
        self.m.dot(x) - self.d
    }
}

/// The point where segment `a b` meets the plane, given the signed values `sa`, `sb` of
/// opposite signs (real parts).
fn crossing<T: Scalar>(a: &Vector3<T>, b: &Vector3<T>, sa: T, sb: T) -> Vector3<T> {
    a + (b - a) * (sa / (sa - sb))
}

/// The polygon where the plane `m·x = d` cuts the tetrahedron `v`, vertices in cyclic order;
/// empty when the plane misses it (or only touches a vertex, edge or face).
///
/// Marching tetrahedra: one vertex apart from three gives a triangle, two from two a
/// quadrilateral whose consecutive vertices share a face of the tetrahedron.
pub fn slice_tet<T: Scalar>(v: &[Vector3<T>; 4], plane: &HalfSpace<T>) -> Vec<Vector3<T>> {
    let s = v.map(|x| plane.eval(&x));
    // Active set chosen on the real parts; the crossing points are smooth in between. Fixed
    // arrays: no allocation but the polygon's.
    let (mut above, mut below) = ([0usize; 4], [0usize; 4]);
    let (mut na, mut nb) = (0, 0);
    for (i, si) in s.iter().enumerate() {
        if si.re() > 0.0 {
            above[na] = i;
            na += 1;
        } else {
            below[nb] = i;
            nb += 1;
        }
    }
    let cut = |i: usize, j: usize| crossing(&v[i], &v[j], s[i], s[j]);
    match (na, nb) {
        (1, 3) => below[..3].iter().map(|&j| cut(above[0], j)).collect(),
        (3, 1) => above[..3].iter().map(|&j| cut(j, below[0])).collect(),
        (2, 2) => {
            let ([a, b], [c, d]) = ([above[0], above[1]], [below[0], below[1]]);
            vec![cut(a, c), cut(a, d), cut(b, d), cut(b, c)]
        }
        _ => Vec::new(),
    }
}

/// `polygon ∩ {m·x ≤ d}` (Sutherland–Hodgman), keeping the cyclic order.
pub fn clip<T: Scalar>(polygon: &[Vector3<T>], plane: &HalfSpace<T>) -> Vec<Vector3<T>> {
    let n = polygon.len();
    let s: Vec<T> = polygon.iter().map(|x| plane.eval(x)).collect();
    let mut out = Vec::with_capacity(n + 1);
    for i in 0..n {
        let j = (i + 1) % n;
        let (inside_i, inside_j) = (s[i].re() <= 0.0, s[j].re() <= 0.0);
        if inside_i {
            out.push(polygon[i]);
        }
        if inside_i != inside_j {
            out.push(crossing(&polygon[i], &polygon[j], s[i], s[j]));
        }
    }
    out
}

/// Area and area centroid of a planar convex polygon with unit normal `nhat`, from the fan
/// of triangles around the vertex mean (Elandt Algorithm 1, line 16). The area centroid does
/// not depend on the fan's apex, so it and the area move continuously when an edge of the
/// polygon shrinks to nothing (Fig. 5.1), where the vertex mean would jump.
pub fn area_centroid<T: Scalar>(polygon: &[Vector3<T>], nhat: &Vector3<T>) -> (T, Vector3<T>) {
    let n = polygon.len();
    let mean = polygon.iter().fold(Vector3::zeros(), |s, x| s + x) / lit::<T>(n as f64);
    let (mut area, mut moment) = (T::zero(), Vector3::zeros());
    let third = lit::<T>(1.0 / 3.0);
    for i in 0..n {
        let (a, b) = (polygon[i], polygon[(i + 1) % n]);
        let w = (a - mean).cross(&(b - mean)).dot(nhat) * lit::<T>(0.5);
        area += w;
        moment += (mean + a + b) * third * w;
    }
    if area.re() == 0.0 {
        return (area, mean);
    }
    let centroid = moment / area;
    // Orientation chosen on the real part: clockwise polygons have negative signed area.
    (if area.re() < 0.0 { -area } else { area }, centroid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_dual::Dual64;

    fn unit_tet() -> [Vector3<f64>; 4] {
        [Vector3::zeros(), Vector3::x(), Vector3::y(), Vector3::z()]
    }

    #[test]
    fn slices_of_the_unit_tet_have_the_exact_area() {
        // z = c cuts the unit tet in a right triangle with legs 1 − c.
        for c in [0.1, 0.5, 0.9] {
            let p = slice_tet(
                &unit_tet(),
                &HalfSpace {
                    m: Vector3::z(),
                    d: c,
                },
            );
            assert_eq!(p.len(), 3);
            let (a, x) = area_centroid(&p, &Vector3::z());
            assert!((a - 0.5 * (1.0 - c) * (1.0 - c)).abs() < 1e-15);
            assert!((x - Vector3::new((1.0 - c) / 3.0, (1.0 - c) / 3.0, c)).norm() < 1e-15);
        }
        // x + y = 1/2 separates {0, z} from {x, y}: a quadrilateral.
        let m = Vector3::new(1.0, 1.0, 0.0);
        let q = slice_tet(&unit_tet(), &HalfSpace { m, d: 0.5 });
        assert_eq!(q.len(), 4);
        let (a, _) = area_centroid(&q, &m.normalize());
        // A rectangle: √2/2 along the cut of the face z = 0, 1/2 high.
        assert!((a - 2f64.sqrt() / 4.0).abs() < 1e-15, "{a}");
    }

    #[test]
    fn clipping_keeps_the_inside_and_is_continuous_as_an_edge_vanishes() {
        let square = vec![
            Vector3::new(0.0, 0.0, 0.0),
            Vector3::new(1.0, 0.0, 0.0),
            Vector3::new(1.0, 1.0, 0.0),
            Vector3::new(0.0, 1.0, 0.0),
        ];
        // x + y ≤ 2 − t cuts a corner of size t: a pentagon for t > 0, the square at t = 0.
        let mut last = None;
        for k in 0..=20 {
            let t = 0.5 - 0.025 * k as f64;
            let p = clip(
                &square,
                &HalfSpace {
                    m: Vector3::new(1.0, 1.0, 0.0),
                    d: 2.0 - t,
                },
            );
            let (a, c) = area_centroid(&p, &Vector3::z());
            assert!((a - (1.0 - 0.5 * t * t)).abs() < 1e-14);
            if let Some((a0, c0)) = last {
                let (da, dc): (f64, Vector3<f64>) = (a - a0, c - c0);
                assert!(da.abs() <= 0.025 && dc.norm() <= 0.025, "{da} {dc}");
            }
            last = Some((a, c));
        }
    }

    #[test]
    fn area_derivative_through_duals() {
        // d/dc of the slice area 0.5 (1 − c)² is −(1 − c).
        let tet = unit_tet().map(|v| v.map(Dual64::from_re));
        let c = Dual64::new(0.3, 1.0);
        let p = slice_tet(
            &tet,
            &HalfSpace {
                m: Vector3::z().map(Dual64::from_re),
                d: c,
            },
        );
        let (a, _) = area_centroid(&p, &Vector3::z().map(Dual64::from_re));
        assert!((a.eps + 0.7).abs() < 1e-14);
    }
}
