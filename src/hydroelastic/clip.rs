//! Convex polygon clipping in any scalar (Elandt Ch. 5): a tetrahedron sliced by a plane,
//! a polygon clipped by a half-space (Sutherland–Hodgman), and the area and centroid of a
//! polygon from its centroid-fan tessellation (Algorithm 1, Fig. 5.1).
//!
//! Topology (which vertices are inside, which way a face or a polygon turns) is a sequence of
//! yes/no decisions, taken from [`Decisions`]. The f64 contact surface decides them on real
//! parts and records them ([`Record`]) in the polygon's [`ClipTopology`]; the polygon clipped
//! again in dual numbers replays them ([`Replay`]) rather than deciding again on real parts
//! that equal the f64 values only up to rounding. It then has the f64 polygon's vertex list,
//! each vertex a smooth function of the inputs, so the dual parts are the exact derivative of
//! the f64 topology, even where a vertex lies within rounding of a clipping plane.
#![allow(non_snake_case)]

use nalgebra::Vector3;

use crate::scalar::{lit, Scalar};

/// The topology decisions of one polygon's clipping, in the order they were made (decision
/// `k` is bit `k`). No heap: a polygon makes at most 31 decisions (a slice's 4, a
/// tetrahedron's 4 face orientations, one per input vertex of four clips of at most 4, 5, 6
/// and 7 vertices, as a convex polygon gains at most one vertex per clip, and the orientation
/// of the area), which fit in [`ClipTopology::CAPACITY`] bits.
///
/// One word: the decisions in its low half, their number in its high half. The topology is
/// copied with every polygon contact through the step, and a word written whole is read back
/// whole (two words written one by one and read as one wait for both writes to retire).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ClipTopology(u64);

impl ClipTopology {
    /// The most decisions a topology records.
    pub const CAPACITY: u8 = 32;

    /// The decisions (bit `k` is decision `k`).
    fn bits(self) -> u64 {
        self.0 & low_bits(Self::CAPACITY)
    }

    /// The number of decisions asked for (past [`ClipTopology::CAPACITY`], more than were
    /// recorded).
    fn count(self) -> u64 {
        self.0 >> Self::CAPACITY
    }

    /// Number of decisions recorded.
    pub fn len(&self) -> usize {
        usize::try_from(self.count()).unwrap_or(usize::MAX)
    }

    /// True when no decision was recorded.
    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// The first 8 decisions (bit `k` is decision `k`).
    pub fn first_bits(&self) -> u8 {
        (self.0 & 0xff) as u8
    }
}

/// The `n` low bits of a `u64` (`n ≤ 64`).
fn low_bits(n: u8) -> u64 {
    u64::MAX.checked_shr(64 - u32::from(n)).unwrap_or(0)
}

/// Where the topology decisions of clipping come from.
pub trait Decisions {
    /// The next `n ≤ 64` decisions at once, bit `k` of `on_real_parts` being what the real
    /// parts say for decision `k`: those when recording, the recorded ones when replaying.
    fn decide_all(&mut self, n: u8, on_real_parts: u64) -> u64;

    /// The next decision ([`Decisions::decide_all`] of one).
    fn decide(&mut self, on_real_parts: bool) -> bool {
        self.decide_all(1, u64::from(on_real_parts)) == 1
    }

    /// Whether the polygon passes a degeneracy test: `test()` when recording (the f64
    /// surface's thresholds), always when replaying (the f64 surface kept the polygon).
    fn keeps(&mut self, test: impl FnOnce() -> bool) -> bool;
}

/// Decides on real parts and records the decisions (the f64 contact surface).
#[derive(Clone, Copy, Debug, Default)]
pub struct Record(pub ClipTopology);

impl Decisions for Record {
    #[inline]
    fn decide_all(&mut self, n: u8, on_real_parts: u64) -> u64 {
        let (bits, count) = (self.0.bits(), self.0.count());
        let capacity = u64::from(ClipTopology::CAPACITY);
        let total = count + u64::from(n);
        // Past the capacity (not reached, see `ClipTopology`) the record stops being
        // replayable: `Replay::finished` fails.
        let bits = if total <= capacity {
            bits | (on_real_parts & low_bits(n)) << count
        } else {
            bits
        };
        // The count saturates in the high half.
        self.0 = ClipTopology(bits | total.min(u64::from(u32::MAX)) << ClipTopology::CAPACITY);
        on_real_parts
    }

    #[inline]
    fn keeps(&mut self, test: impl FnOnce() -> bool) -> bool {
        test()
    }
}

/// Replays recorded decisions (a polygon of the f64 step clipped again in duals).
#[derive(Clone, Copy, Debug)]
pub struct Replay {
    topology: ClipTopology,
    next: u8,
    matched: bool,
}

impl Replay {
    /// Replays `topology` from its first decision.
    pub fn new(topology: ClipTopology) -> Self {
        Replay {
            topology,
            next: 0,
            matched: true,
        }
    }

    /// Whether exactly the recorded decisions were asked for: the clipping replayed is the
    /// one recorded.
    pub fn finished(&self) -> bool {
        self.matched && u64::from(self.next) == self.topology.count()
    }
}

impl Decisions for Replay {
    #[inline]
    fn decide_all(&mut self, n: u8, on_real_parts: u64) -> u64 {
        let end = u64::from(self.next) + u64::from(n);
        if end > self.topology.count().min(ClipTopology::CAPACITY.into()) {
            self.matched = false;
            return on_real_parts;
        }
        let recorded = self.topology.bits() >> self.next;
        self.next += n;
        recorded & low_bits(n)
    }

    #[inline]
    fn keeps(&mut self, _test: impl FnOnce() -> bool) -> bool {
        true
    }
}

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

/// Difference of the signed values at the ends of an edge, relative to the scale
/// `|m|₁(|a|∞ + |b|∞) + |d|` of their terms, below which the edge `a b` lies in the plane
/// within rounding.
const EDGE_IN_PLANE: f64 = 1e-12;

/// The scale of the rounding errors of a plane's signed values.
#[derive(Clone, Copy)]
struct Rounding {
    /// `|m|₁`.
    m: f64,
    /// `|d|`.
    d: f64,
}

impl Rounding {
    fn of<T: Scalar>(plane: &HalfSpace<T>) -> Self {
        Rounding {
            m: plane.m.x.re().abs() + plane.m.y.re().abs() + plane.m.z.re().abs(),
            d: plane.d.re().abs(),
        }
    }

    /// The size `max(|x|, |y|, |z|)` of a point (m) (finite: plain comparisons).
    #[inline(always)]
    fn size<T: Scalar>(x: &Vector3<T>) -> f64 {
        let max = |a: f64, b: f64| if a > b { a } else { b };
        max(max(x.x.re().abs(), x.y.re().abs()), x.z.re().abs())
    }

    /// The least `|sa − sb|` of an edge whose ends have the sizes ([`Rounding::size`])
    /// `size_a` and `size_b` that does not lie in the plane within rounding
    /// ([`EDGE_IN_PLANE`]).
    #[inline(always)]
    fn tolerance(&self, size_a: f64, size_b: f64) -> f64 {
        EDGE_IN_PLANE * (self.m * (size_a + size_b) + self.d)
    }
}

/// The point where segment `a b` meets the plane, given the signed values `sa`, `sb` on
/// either side of it (as decided) and whether `a` is the inside end.
///
/// Where the edge lies in the plane within rounding (`|sa − sb|` at most `tolerance`,
/// [`Rounding::tolerance`]: the
/// equal-pressure plane of mirror-image meshes on an element face), which end is inside was
/// rounding's choice and the fraction `sa/(sa − sb)` a ratio of rounding errors, whose dual
/// parts would be of order 1/ε. Any point of the edge is then on the plane to rounding and
/// gives the same polygon: the inside end is taken, in f64 and in duals alike (a replayed
/// decision can meet such an edge with `sa − sb` zero or of the other sign).
#[inline(always)]
fn crossing<T: Scalar>(
    (a, sa): (&Vector3<T>, T),
    (b, sb): (&Vector3<T>, T),
    a_inside: bool,
    tolerance: f64,
) -> Vector3<T> {
    let den = sa - sb;
    if den.re().abs() > tolerance {
        a + (b - a) * (sa / den)
    } else if a_inside {
        *a
    } else {
        *b
    }
}

/// The polygon where the plane `m·x = d` cuts the tetrahedron `v`, vertices in cyclic order;
/// empty when the plane misses it (or only touches a vertex, edge or face).
///
/// Marching tetrahedra: one vertex apart from three gives a triangle, two from two a
/// quadrilateral whose consecutive vertices share a face of the tetrahedron. One decision
/// per vertex: above the plane or not.
pub fn slice_tet<T: Scalar, D: Decisions>(
    v: &[Vector3<T>; 4],
    plane: &HalfSpace<T>,
    decisions: &mut D,
) -> Vec<Vector3<T>> {
    let (polygon, n) = slice_tet_fixed(v, plane, decisions);
    polygon[..n].to_vec()
}

/// [`slice_tet`] without allocating: the polygon is the first `n` vertices of the array
/// (`n` is 0, 3 or 4).
#[inline(always)]
pub fn slice_tet_fixed<T: Scalar, D: Decisions>(
    v: &[Vector3<T>; 4],
    plane: &HalfSpace<T>,
    decisions: &mut D,
) -> ([Vector3<T>; 4], usize) {
    let s = v.map(|x| plane.eval(&x));
    let (mut above, mut below) = ([0usize; 4], [0usize; 4]);
    let (mut na, mut nb) = (0, 0);
    let real_above = u64::from(s[0].re() > 0.0)
        | u64::from(s[1].re() > 0.0) << 1
        | u64::from(s[2].re() > 0.0) << 2
        | u64::from(s[3].re() > 0.0) << 3;
    let above_bits = decisions.decide_all(4, real_above);
    for i in 0..4 {
        if above_bits & (1 << i) != 0 {
            above[na] = i;
            na += 1;
        } else {
            below[nb] = i;
            nb += 1;
        }
    }
    let mut out = [Vector3::zeros(); 4];
    if na == 0 || nb == 0 {
        return (out, 0);
    }
    // `i` above, `j` below (inside).
    let rounding = Rounding::of(plane);
    let sizes = v.each_ref().map(Rounding::size);
    let cut = |i: usize, j: usize| {
        let tolerance = rounding.tolerance(sizes[i], sizes[j]);
        crossing((&v[i], s[i]), (&v[j], s[j]), false, tolerance)
    };
    match (na, nb) {
        (1, 3) => {
            for (k, &j) in below[..3].iter().enumerate() {
                out[k] = cut(above[0], j);
            }
            (out, 3)
        }
        (3, 1) => {
            for (k, &j) in above[..3].iter().enumerate() {
                out[k] = cut(j, below[0]);
            }
            (out, 3)
        }
        _ => {
            let ([a, b], [c, d]) = ([above[0], above[1]], [below[0], below[1]]);
            out = [cut(a, c), cut(a, d), cut(b, d), cut(b, c)];
            (out, 4)
        }
    }
}

/// The half-spaces of the faces of tetrahedron `v` (face `k` opposite vertex `k`), the
/// tetrahedron inside. One decision per face: whether its normal must be flipped so that
/// vertex `k` is inside.
pub fn tet_faces<T: Scalar, D: Decisions>(
    v: &[Vector3<T>; 4],
    decisions: &mut D,
) -> [HalfSpace<T>; 4] {
    let faces = [0, 1, 2, 3].map(|k| {
        let [i, j, l] = [(k + 1) % 4, (k + 2) % 4, (k + 3) % 4];
        let m = (v[j] - v[i]).cross(&(v[l] - v[i]));
        (m, m.dot(&(v[k] - v[i])).re() > 0.0, i)
    });
    let real_flips = faces
        .iter()
        .enumerate()
        .fold(0, |bits, (k, f)| bits | u64::from(f.1) << k);
    let flips = decisions.decide_all(4, real_flips);
    [0, 1, 2, 3].map(|k| {
        let (m, _, i) = faces[k];
        let m = if flips & (1 << k) != 0 { -m } else { m };
        HalfSpace { d: m.dot(&v[i]), m }
    })
}

/// `polygon ∩ {m·x ≤ d}` (Sutherland–Hodgman), keeping the cyclic order. One decision per
/// vertex: inside or not.
pub fn clip<T: Scalar, D: Decisions>(
    polygon: &[Vector3<T>],
    plane: &HalfSpace<T>,
    decisions: &mut D,
) -> Vec<Vector3<T>> {
    let mut out = Vec::with_capacity(polygon.len() + 1);
    clip_each(polygon, plane, decisions, |x| out.push(x));
    out
}

/// [`clip`] without allocating: the clipped polygon is written to `out`, its number of
/// vertices returned.
#[inline(always)]
pub fn clip_into<T: Scalar, D: Decisions>(
    polygon: &[Vector3<T>],
    plane: &HalfSpace<T>,
    decisions: &mut D,
    out: &mut [Vector3<T>; MAX_VERTICES],
) -> usize {
    let mut n = 0;
    clip_each(polygon, plane, decisions, |x| {
        out[n] = x;
        n += 1;
    });
    n
}

/// Most vertices of a clipped polygon: a convex polygon gains at most one vertex per clip, so
/// a tetrahedron's slice (4) clipped by four faces has at most 8, a triangle so clipped 7.
pub const MAX_VERTICES: usize = 8;

/// [`clip`], handing the vertices of the clipped polygon to `push` in cyclic order.
#[inline(always)]
fn clip_each<T: Scalar, D: Decisions>(
    polygon: &[Vector3<T>],
    plane: &HalfSpace<T>,
    decisions: &mut D,
    mut push: impl FnMut(Vector3<T>),
) {
    let n = polygon.len();
    assert!(
        n < MAX_VERTICES,
        "invariant: a polygon to clip has fewer than {MAX_VERTICES} vertices"
    );
    let mut s = [T::zero(); MAX_VERTICES];
    for (si, x) in s.iter_mut().zip(polygon) {
        *si = plane.eval(x);
    }
    let real_inside = s[..n]
        .iter()
        .enumerate()
        .fold(0, |bits, (i, si)| bits | u64::from(si.re() <= 0.0) << i);
    // `n < 8` decisions.
    let inside_bits = decisions.decide_all(n as u8, real_inside);
    let inside = |i: usize| inside_bits & (1 << i) != 0;
    if inside_bits == low_bits(n as u8) {
        polygon.iter().copied().for_each(push);
        return;
    }
    if inside_bits == 0 {
        return;
    }
    let rounding = Rounding::of(plane);
    for i in 0..n {
        let j = (i + 1) % n;
        let (inside_i, inside_j) = (inside(i), inside(j));
        if inside_i {
            push(polygon[i]);
        }
        if inside_i != inside_j {
            push(crossing(
                (&polygon[i], s[i]),
                (&polygon[j], s[j]),
                inside_i,
                rounding.tolerance(Rounding::size(&polygon[i]), Rounding::size(&polygon[j])),
            ));
        }
    }
}

/// Area and area centroid of a planar convex polygon with unit normal `nhat`, from the fan
/// of triangles around the vertex mean (Elandt Algorithm 1, line 16). The area centroid does
/// not depend on the fan's apex, so it and the area move continuously when an edge of the
/// polygon shrinks to nothing (Fig. 5.1), where the vertex mean would jump. One decision:
/// whether the polygon turns clockwise about `nhat` (negative signed area).
pub fn area_centroid<T: Scalar, D: Decisions>(
    polygon: &[Vector3<T>],
    nhat: &Vector3<T>,
    decisions: &mut D,
) -> (T, Vector3<T>) {
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
    // Decided even for a zero area (which the f64 surface drops), so that a replay asks for
    // as many decisions as were recorded.
    let clockwise = decisions.decide(area.re() < 0.0);
    if area.re() == 0.0 {
        return (area, mean);
    }
    let centroid = moment / area;
    (if clockwise { -area } else { area }, centroid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_dual::Dual64;

    fn unit_tet() -> [Vector3<f64>; 4] {
        [Vector3::zeros(), Vector3::x(), Vector3::y(), Vector3::z()]
    }

    #[test]
    fn a_topology_replays_up_to_its_capacity_and_no_further() {
        // Decisions in groups as clipping asks for them: 4 at once, then one by one.
        let decisions = |n: u8| {
            let pattern = |k: u8| 0b1011_0110_1101u64.rotate_left(u32::from(k));
            let mut asked = vec![(4, pattern(0))];
            asked.extend((4..n).map(|k| (1, pattern(k))));
            asked
        };
        for n in [5, 31, 32, 33, 40] {
            let mut record = Record::default();
            let asked: Vec<(u8, u64)> = decisions(n);
            let made: Vec<u64> = asked
                .iter()
                .map(|&(group, bits)| record.decide_all(group, bits) & low_bits(group))
                .collect();
            let total: usize = asked.iter().map(|&(group, _)| usize::from(group)).sum();
            assert_eq!(record.0.len(), total);
            let mut replay = Replay::new(record.0);
            let replayed: Vec<u64> = asked
                .iter()
                .map(|&(group, _)| replay.decide_all(group, 0))
                .collect();
            let fits = total <= usize::from(ClipTopology::CAPACITY);
            assert_eq!(replay.finished(), fits, "{total} decisions");
            if fits {
                assert_eq!(replayed, made, "{total} decisions");
            }
        }
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
                &mut Record::default(),
            );
            assert_eq!(p.len(), 3);
            let (a, x) = area_centroid(&p, &Vector3::z(), &mut Record::default());
            assert!((a - 0.5 * (1.0 - c) * (1.0 - c)).abs() < 1e-15);
            assert!((x - Vector3::new((1.0 - c) / 3.0, (1.0 - c) / 3.0, c)).norm() < 1e-15);
        }
        // x + y = 1/2 separates {0, z} from {x, y}: a quadrilateral.
        let m = Vector3::new(1.0, 1.0, 0.0);
        let q = slice_tet(
            &unit_tet(),
            &HalfSpace { m, d: 0.5 },
            &mut Record::default(),
        );
        assert_eq!(q.len(), 4);
        let (a, _) = area_centroid(&q, &m.normalize(), &mut Record::default());
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
                &mut Record::default(),
            );
            let (a, c) = area_centroid(&p, &Vector3::z(), &mut Record::default());
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
            &mut Record::default(),
        );
        let (a, _) = area_centroid(
            &p,
            &Vector3::z().map(Dual64::from_re),
            &mut Record::default(),
        );
        assert!((a.eps + 0.7).abs() < 1e-14);
    }

    /// The unit square shifted by `(tx, ty)` and clipped by `x + 2y ≤ d`, with its area and
    /// centroid, deciding with `decisions`.
    fn clipped_square<T: Scalar, D: Decisions>(
        tx: T,
        ty: T,
        d: T,
        decisions: &mut D,
    ) -> (usize, T, Vector3<T>) {
        let shift = Vector3::new(tx, ty, T::zero());
        let square = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]
            .map(|(x, y)| Vector3::new(lit::<T>(x), lit::<T>(y), T::zero()) + shift);
        let plane = HalfSpace {
            m: Vector3::new(lit::<T>(1.0), lit::<T>(2.0), T::zero()),
            d,
        };
        let p = clip(&square, &plane, decisions);
        let (a, c) = area_centroid(&p, &Vector3::z().map(lit::<T>), decisions);
        (p.len(), a, c)
    }

    #[test]
    fn replaying_the_f64_topology_keeps_a_vertex_within_rounding_of_the_plane() {
        // x + 2y ≤ 3 passes through the corner (1, 1): the f64 clip keeps the square.
        let mut record = Record::default();
        let (n, _, _) = clipped_square(0.0, 0.0, 3.0, &mut record);
        assert_eq!((n, record.0.len()), (4, 5));
        // In duals whose real parts are one ulp off (d = 3⁻), deciding again puts the corner
        // outside: a pentagon with an edge of length 1e-16. Replaying keeps the square.
        let d = 3f64.next_down();
        let lifted = |k: usize| {
            let seed = |j: usize, x: f64| Dual64::new(x, if j == k { 1.0 } else { 0.0 });
            (seed(0, 0.0), seed(1, 0.0), seed(2, d))
        };
        let (tx, ty, dd) = lifted(0);
        assert_eq!(clipped_square(tx, ty, dd, &mut Record::default()).0, 5);
        let h = 1e-6;
        let f64_at = |x: [f64; 3]| {
            let (_, a, c) = clipped_square(x[0], x[1], x[2], &mut Record::default());
            (a, c)
        };
        for k in 0..3 {
            let (tx, ty, dd) = lifted(k);
            let mut replay = Replay::new(record.0);
            let (n, a, c) = clipped_square(tx, ty, dd, &mut replay);
            assert!(n == 4 && replay.finished());
            // Central differences through the corner (the cut-off area is quadratic in the
            // cut, so the area and centroid are C¹ there).
            let (mut lo, mut hi) = ([0.0, 0.0, 3.0], [0.0, 0.0, 3.0]);
            lo[k] -= h;
            hi[k] += h;
            let ((a0, c0), (a1, c1)) = (f64_at(lo), f64_at(hi));
            let (da, dc) = ((a1 - a0) / (2.0 * h), (c1 - c0) / (2.0 * h));
            assert!((a.eps - da).abs() < 1e-6, "{k}: {} vs {da}", a.eps);
            assert!((c.map(|x| x.eps) - dc).norm() < 1e-6, "{k}: {c:?} vs {dc}");
        }
        // The centroid follows the square.
        let (tx, ty, dd) = lifted(0);
        let (_, _, c) = clipped_square(tx, ty, dd, &mut Replay::new(record.0));
        assert!((c.map(|x| x.eps) - Vector3::x()).norm() < 1e-14, "{c:?}");
    }

    #[test]
    fn a_replay_of_another_clip_does_not_finish() {
        let mut record = Record::default();
        clipped_square(0.0, 0.0, 3.0, &mut record);
        // A triangle asks for one decision fewer.
        let triangle = [Vector3::zeros(), Vector3::x(), Vector3::y()];
        let plane = HalfSpace {
            m: Vector3::x(),
            d: 0.5,
        };
        let mut replay = Replay::new(record.0);
        let p = clip(&triangle, &plane, &mut replay);
        area_centroid(&p, &Vector3::z(), &mut replay);
        assert!(!replay.finished());
    }

    #[test]
    fn an_edge_in_the_plane_is_crossed_at_its_inside_end() {
        // The unit square's edge x = 1 lies in the plane x + 1e-15 y ≤ d = 1 within rounding:
        // (1, 0) on it, (1, 1) 1e-15 outside. The fraction 0 / −1e-15 along the edge would
        // have a derivative of 1e15 with respect to d; the crossing is (1, 0) instead.
        let square = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]
            .map(|(x, y)| Vector3::new(x, y, 0.0).map(Dual64::from_re));
        let plane = HalfSpace {
            m: Vector3::new(1.0, 1e-15, 0.0).map(Dual64::from_re),
            d: Dual64::new(1.0, 1.0),
        };
        let mut record = Record::default();
        let p = clip(&square, &plane, &mut record);
        assert_eq!(p.len(), 5);
        assert_eq!(p[2].map(|x| x.re), Vector3::x());
        assert!(
            p.iter().all(|v| v.iter().all(|c| c.eps.abs() <= 1.0)),
            "{p:?}"
        );
        // Replayed at real parts that put both ends on the plane (sa − sb = 0).
        let flat = HalfSpace {
            m: Vector3::x().map(Dual64::from_re),
            ..plane
        };
        let mut replay = Replay::new(record.0);
        let q = clip(&square, &flat, &mut replay);
        assert_eq!(q.len(), 5);
        assert!(q
            .iter()
            .all(|v| v.iter().all(|c| c.re.is_finite() && c.eps.abs() <= 1.0)));
    }
}
