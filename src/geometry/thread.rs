//! Screw threads: the ISO 68-1 basic profile of a metric thread swept along its helix, as a
//! bolt's closed triangle surface ([`external_thread`]) and a nut's tetrahedral mesh with its
//! extent field ([`internal_thread`]): meshes no primitive shape gives, for pressure-field
//! contact ([`crate::hydroelastic::ContactMesh`]).
//!
//! A point at angle `θ` (about z, counter-clockwise seen from +z) and height `z` has the
//! helical coordinate `s = z − P θ/2π` (`P` the pitch; a right-hand thread). A thread's radius
//! depends on `s` alone, so a mesh whose vertices sit at fixed `s` on `n` angles per turn
//! follows the helix exactly: the flanks are ruled between helices, the only error being the
//! chords between angles (a radius short by `r (1 − cos π/n)` half-way between them). One turn
//! `θ ∈ [0, 2π]` is swept: the vertices at `θ = 2π` are those at `θ = 0` one pitch further in
//! `s` (shared by index), so a thread of `m` pitches at every angle ends on two helical faces,
//! each with a one-pitch step in the half-plane `θ = 0`: the start and the end of the thread.

use std::collections::HashMap;
use std::f64::consts::TAU;

use nalgebra::{Matrix3, Vector3};

use crate::error::{Error, Result};
use crate::geometry::mesh::{SurfaceMesh, TetMesh};

/// A metric thread's basic profile (ISO 68-1): 60° flanks, the fundamental triangle's height
/// `H = (√3/2) P`, a flat crest `P/8` wide at the major radius and a flat root `P/4` wide at
/// the minor radius `d/2 − 5H/8`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IsoThread {
    /// Major (nominal) diameter `d` (m).
    pub major_diameter: f64,
    /// Pitch `P` (m): the axial advance per turn.
    pub pitch: f64,
}

impl IsoThread {
    /// The radial depth of the basic profile, `5H/8` (m).
    pub fn depth(&self) -> f64 {
        5.0 / 8.0 * 3f64.sqrt() / 2.0 * self.pitch
    }

    /// The radius at the crest of the bolt's thread, `d/2` (m).
    pub fn major_radius(&self) -> f64 {
        0.5 * self.major_diameter
    }

    /// The radius at the root of the bolt's thread (the nut's crest), `d/2 − 5H/8` (m).
    pub fn minor_radius(&self) -> f64 {
        self.major_radius() - self.depth()
    }

    /// The pitch radius `d2/2 = d/2 − 3H/8` (m): where the flanks are half a pitch apart.
    pub fn pitch_radius(&self) -> f64 {
        self.major_radius() - 0.6 * self.depth()
    }

    /// The profile over one pitch as `(s, r)` (m) from `s = start` (m, in `[0, P)`), `s = 0`
    /// being the start of the bolt's root flat: the root (`P/4`), the rising flank (`5P/16`),
    /// the crest (`P/8`), the falling flank (`5P/16`), each flank in `flank_segments` pieces;
    /// the radii less `inset`. The last point is the first one a pitch on.
    fn pitch_profile(&self, inset: f64, flank_segments: usize, start: f64) -> Vec<(f64, f64)> {
        let base = self.basic_pitch(inset, flank_segments);
        let p = self.pitch;
        let two: Vec<(f64, f64)> = base[..base.len() - 1]
            .iter()
            .copied()
            .chain(base.iter().map(|&(s, r)| (s + p, r)))
            .collect();
        let at = |x: f64| {
            let k = two.windows(2).position(|w| w[1].0 >= x).unwrap_or(0);
            let ((sa, ra), (sb, rb)) = (two[k], two[k + 1]);
            ra + (rb - ra) * (x - sa) / (sb - sa)
        };
        std::iter::once((start, at(start)))
            .chain(
                two.iter()
                    .copied()
                    .filter(|&(s, _)| s > start && s < start + p),
            )
            .chain(std::iter::once((start + p, at(start))))
            .collect()
    }

    /// [`IsoThread::pitch_profile`] from `s = 0`.
    fn basic_pitch(&self, inset: f64, flank_segments: usize) -> Vec<(f64, f64)> {
        let (p, lo, hi) = (self.pitch, self.minor_radius(), self.major_radius());
        let mut out = vec![(0.0, lo)];
        let flank = |out: &mut Vec<(f64, f64)>, s0: f64, r0: f64, r1: f64| {
            for k in 1..=flank_segments {
                let t = k as f64 / flank_segments as f64;
                out.push((s0 + t * 5.0 / 16.0 * p, r0 + t * (r1 - r0)));
            }
        };
        out.push((0.25 * p, lo));
        flank(&mut out, 0.25 * p, lo, hi);
        out.push((11.0 / 16.0 * p, hi));
        flank(&mut out, 11.0 / 16.0 * p, hi, lo);
        out.iter().map(|&(s, r)| (s, r - inset)).collect()
    }

    fn validate(&self, inset: f64, pitches: usize, around: usize) -> Result<()> {
        let positive = |name: &str, x: f64| {
            if x > 0.0 && x.is_finite() {
                Ok(())
            } else {
                Err(Error::invalid(name, x, "must be positive and finite (m)"))
            }
        };
        positive("thread pitch", self.pitch)?;
        positive("thread major diameter", self.major_diameter)?;
        if !(0.0..self.minor_radius()).contains(&inset) {
            return Err(Error::invalid(
                "thread clearance",
                inset,
                "from 0 up to the minor radius (m)",
            ));
        }
        if pitches < 2 {
            return Err(Error::invalid("thread pitches", pitches, "at least 2"));
        }
        if around < 6 {
            return Err(Error::invalid(
                "thread segments per turn",
                around,
                "at least 6",
            ));
        }
        Ok(())
    }
}

/// Where the nut's wall starts and ends in `s`, as a fraction of the pitch: the middle of
/// its root flat, so that its end faces cut the hole's groove, not a tooth. The last tooth is
/// whole, and a bolt resting on the nut's end rests on that tooth's flank: in the groove.
pub const NUT_START: f64 = 0.625;

/// One pitch of `profile` repeated `pitches` times: `(s, r)` of every row, `K·pitches + 1`
/// rows for the `K + 1` points of one pitch.
fn rows(profile: &[(f64, f64)], pitch: f64, pitches: usize) -> Vec<(f64, f64)> {
    let k = profile.len() - 1;
    (0..=k * pitches)
        .map(|j| {
            let (s, r) = profile[j % k];
            ((j / k) as f64 * pitch + s, r)
        })
        .collect()
}

/// The point at angle step `i` of `around` per turn, helical coordinate `s` and radius `r`.
fn helical(i: usize, around: usize, pitch: f64, s: f64, r: f64) -> Vector3<f64> {
    let turn = i as f64 / around as f64;
    let (sin, cos) = (TAU * turn).sin_cos();
    Vector3::new(r * cos, r * sin, s + pitch * turn)
}

/// Vertex indices of a helical sweep: `(i, j)` for angle step `i ∈ [0, n]` and row
/// `j ∈ [0, rows)`, the vertex at `i = n` being the one at `i = 0` a pitch (`per_pitch` rows)
/// further on where that row exists.
struct Sweep {
    around: usize,
    rows: usize,
    per_pitch: usize,
}

impl Sweep {
    /// The index of vertex `(i, j)`: rows of `θ < 2π` first, then the last pitch's rows at
    /// `θ = 2π`, which have no row to wrap to.
    fn id(&self, i: usize, j: usize) -> u32 {
        let wrapped = self.rows - self.per_pitch;
        let id = if i < self.around {
            i * self.rows + j
        } else if j < wrapped {
            j + self.per_pitch
        } else {
            self.around * self.rows + j - wrapped
        };
        u32::try_from(id).expect("invariant: thread meshes are far below 2³² vertices")
    }

    /// Every vertex `(i, j)` once, in index order.
    fn vertices(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let wrapped = self.rows - self.per_pitch;
        (0..self.around)
            .flat_map(move |i| (0..self.rows).map(move |j| (i, j)))
            .chain((wrapped..self.rows).map(move |j| (self.around, j)))
    }
}

/// The closed outward surface of a bolt's thread, `pitches` pitches at every angle: the basic
/// profile of `thread` with its radii `clearance` (m) short of the basic ones, `around`
/// segments per turn (`8 · around` triangles per turn of the thread, half of them on the
/// flanks). Geometry frame: the axis is z, the thread's lowest row starts at `z = 0` on +x and
/// rises a pitch a turn counter-clockwise (a right-hand thread); the top row ends at
/// `z = (pitches + 1) P`. Each end is the helical boundary row and its one-pitch step fanned
/// to a point on the axis half a pitch above the row's start, so that the solid's volume is
/// the helical sweep's, `π m P ⟨r²⟩` (the mean over a pitch) up to the chords.
///
/// # Errors
/// [`Error::InvalidParameter`] for a non-positive pitch or diameter, a clearance outside
/// `[0, minor radius)`, fewer than two pitches or fewer than 6 segments per turn.
pub fn external_thread(
    thread: &IsoThread,
    clearance: f64,
    pitches: usize,
    around: usize,
) -> Result<SurfaceMesh> {
    thread.validate(clearance, pitches, around)?;
    let p = thread.pitch;
    let profile = thread.pitch_profile(clearance, 1, 0.0);
    let rows = rows(&profile, p, pitches);
    let sweep = Sweep {
        around,
        rows: rows.len(),
        per_pitch: profile.len() - 1,
    };
    let mut vertices: Vec<Vector3<f64>> = sweep
        .vertices()
        .map(|(i, j)| helical(i, around, p, rows[j].0, rows[j].1))
        .collect();
    let mut triangles = Vec::with_capacity(2 * around * rows.len() + 2 * (around + 8));
    for i in 0..around {
        for j in 0..rows.len() - 1 {
            let [a, b, c, d] =
                [(i, j), (i + 1, j), (i + 1, j + 1), (i, j + 1)].map(|(i, j)| sweep.id(i, j));
            triangles.push([a, b, c]);
            triangles.push([a, c, d]);
        }
    }
    // The ends: every boundary edge fanned to its end's point on the axis, reversed so that
    // the cap meets the side consistently.
    let mut directed: HashMap<(u32, u32), ()> = HashMap::with_capacity(3 * triangles.len());
    for t in &triangles {
        for k in 0..3 {
            directed.insert((t[k], t[(k + 1) % 3]), ());
        }
    }
    let top_start = pitches as f64 * p;
    let apex = [0.5 * p, top_start + 0.5 * p].map(|z| {
        vertices.push(Vector3::new(0.0, 0.0, z));
        (vertices.len() - 1) as u32
    });
    let half_height = 0.5 * (top_start + p);
    let mut caps = Vec::new();
    for t in &triangles {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            if !directed.contains_key(&(b, a)) {
                let z = 0.5 * (vertices[a as usize].z + vertices[b as usize].z);
                let end = usize::from(z > half_height);
                caps.push([b, a, apex[end]]);
            }
        }
    }
    triangles.extend(caps);
    Ok(SurfaceMesh {
        vertices,
        triangles,
    })
}

/// The tetrahedral mesh of a nut's threaded wall, `pitches` pitches at every angle: the solid
/// between the basic profile of `thread` (the hole) and the cylinder of `outer_radius` (m),
/// with `around` segments per turn and radial layers at the fractions `layers` of the wall
/// (increasing in `(0, 1)`; the wall's inner and outer surfaces are added). Geometry frame as
/// [`external_thread`]'s: the wall spans `s ∈ [s0, s0 + m P]` with `s0 = NUT_START · P`
/// ([`NUT_START`], the middle of the nut's root), each end a helical face with a one-pitch
/// step at `θ = 0`. The flanks are split in `flank_segments` rows.
///
/// Each `(r, s)` cross-section is a structured grid (the profile's rows by the layers), its
/// quadrilaterals split along one diagonal; swept from one angle to the next each triangle is
/// a prism, split into three tetrahedra by the order of its vertices in the section (so that
/// neighbouring prisms split their shared faces alike). The grid repeats every pitch, so the
/// section at `θ = 2π` meets the one at `θ = 0` face to face.
///
/// The extent `e` is the distance to the section's boundary (the hole, the outer cylinder
/// and the two ends, measured in the `(r, s)` half-plane) over `depth` (m), at most 1: the
/// pressure `E·e` grows by `E/depth` from the surface, and `depth · p/E` is how deep a point
/// of pressure `p` lies. It is 0 on every vertex of the surface, the steps at the ends
/// included.
///
/// # Errors
/// [`Error::InvalidParameter`] as [`external_thread`], for an outer radius not beyond the
/// thread's major radius, no layers, layers outside `(0, 1)` or not increasing, or a
/// non-positive depth.
pub fn internal_thread(
    thread: &IsoThread,
    outer_radius: f64,
    pitches: usize,
    around: usize,
    layers: &[f64],
    flank_segments: usize,
    depth: f64,
) -> Result<TetMesh> {
    thread.validate(0.0, pitches, around)?;
    if !(depth > 0.0 && depth.is_finite()) {
        return Err(Error::invalid(
            "nut extent depth",
            depth,
            "must be positive and finite (m)",
        ));
    }
    if !(outer_radius > thread.major_radius() && outer_radius.is_finite()) {
        return Err(Error::invalid(
            "nut outer radius",
            outer_radius,
            "beyond the thread's major radius (m)",
        ));
    }
    let increasing = layers.windows(2).all(|w| w[0] < w[1]);
    if layers.is_empty() || !increasing || layers.iter().any(|&u| !(u > 0.0 && u < 1.0)) {
        return Err(Error::invalid(
            "nut layers",
            format!("{layers:?}"),
            "one or more increasing fractions of the wall in (0, 1)",
        ));
    }
    let p = thread.pitch;
    let profile = thread.pitch_profile(0.0, flank_segments.max(1), NUT_START * p);
    let hole = rows(&profile, p, pitches);
    let u: Vec<f64> = std::iter::once(0.0)
        .chain(layers.iter().copied())
        .chain(std::iter::once(1.0))
        .collect();
    let nl = u.len();
    // The section: vertex (j, l) at row j of the hole, layer l.
    let section: Vec<(f64, f64)> = hole
        .iter()
        .flat_map(|&(s, r)| u.iter().map(move |&f| (s, r + f * (outer_radius - r))))
        .collect();
    let section_id = |j: usize, l: usize| j * nl + l;
    // Each cell is split along the diagonal through its interior vertex where it has three on
    // the boundary (the section's corners): a triangle of three boundary vertices would be a
    // prism of e = 0, which pushes nothing out. The choice depends on the row's place in its
    // pitch only, so the section at θ = 2π still meets the one at θ = 0.
    let per_pitch = profile.len() - 1;
    let mut triangles = Vec::new();
    for j in 0..hole.len() - 1 {
        for l in 0..nl - 1 {
            let [a, b, c, d] =
                [(j, l), (j + 1, l), (j + 1, l + 1), (j, l + 1)].map(|(j, l)| section_id(j, l));
            let (first, last) = (j % per_pitch == 0, j % per_pitch == per_pitch - 1);
            let across = (l == 0 && last) || (l == nl - 2 && first);
            if across {
                triangles.push([a, b, d]);
                triangles.push([b, c, d]);
            } else {
                triangles.push([a, b, c]);
                triangles.push([a, c, d]);
            }
        }
    }
    let extent = section_extent(&section, &hole, nl, outer_radius, depth);
    // A sweep whose rows are the section's vertices: a pitch is `K · nl` of them.
    let sweep = Sweep {
        around,
        rows: section.len(),
        per_pitch: per_pitch * nl,
    };
    let vertices: Vec<Vector3<f64>> = sweep
        .vertices()
        .map(|(i, j)| helical(i, around, p, section[j].0, section[j].1))
        .collect();
    // A prism is split by the order of its section's vertices, one order per turn step (its
    // prisms share their side faces). The first and last steps lie against the steps of the
    // ends (e = 0 at every vertex there): their orders put the section's interior vertices
    // first and last, so that every tetrahedron keeps one off the step and off the surface.
    let rim = |v: usize| {
        let (j, l) = (v / nl, v % nl);
        l == 0 || l == nl - 1 || j == 0 || j == hole.len() - 1
    };
    let mut tets = Vec::with_capacity(3 * around * triangles.len());
    for i in 0..around {
        for t in &triangles {
            let mut t = *t;
            match i {
                0 => t.sort_unstable_by_key(|&v| (rim(v), v)),
                _ if i == around - 1 => t.sort_unstable_by_key(|&v| (!rim(v), v)),
                _ => t.sort_unstable(),
            }
            let [a, b, c] = t.map(|j| sweep.id(i, j));
            let [a1, b1, c1] = t.map(|j| sweep.id(i + 1, j));
            for tet in [[a, b, c, a1], [b, c, a1, b1], [c, a1, b1, c1]] {
                tets.push(positive(tet, &vertices)?);
            }
        }
    }
    let mut extent: Vec<f64> = sweep.vertices().map(|(_, j)| extent[j]).collect();
    for v in surface_vertices(&tets) {
        extent[v as usize] = 0.0;
    }
    Ok(TetMesh {
        vertices,
        extent,
        tets,
    })
}

/// The extent of each vertex of a section (`nl` layers per row of the `hole`): its distance
/// (m) to the section's boundary over `depth` (m), at most 1.
fn section_extent(
    section: &[(f64, f64)],
    hole: &[(f64, f64)],
    nl: usize,
    outer: f64,
    depth: f64,
) -> Vec<f64> {
    let (s0, s1) = (hole[0].0, hole[hole.len() - 1].0);
    let to_segment = |(s, r): (f64, f64), (sa, ra): (f64, f64), (sb, rb): (f64, f64)| {
        let (ds, dr) = (sb - sa, rb - ra);
        let t = (((s - sa) * ds + (r - ra) * dr) / (ds * ds + dr * dr)).clamp(0.0, 1.0);
        (s - sa - t * ds).hypot(r - ra - t * dr)
    };
    section
        .iter()
        .enumerate()
        .map(|(v, &(s, r))| {
            if v % nl == 0 || v % nl == nl - 1 || s == s0 || s == s1 {
                return 0.0;
            }
            let to_hole = hole
                .windows(2)
                .map(|w| to_segment((s, r), w[0], w[1]))
                .fold(f64::INFINITY, f64::min);
            (to_hole.min(outer - r).min(s - s0).min(s1 - s) / depth).min(1.0)
        })
        .collect()
}

/// The vertices of the faces of `tets` that belong to one tetrahedron only (the surface).
fn surface_vertices(tets: &[[u32; 4]]) -> Vec<u32> {
    let mut faces: HashMap<[u32; 3], u32> = HashMap::with_capacity(4 * tets.len());
    for t in tets {
        for skip in 0..4 {
            let mut f = [0; 3];
            let mut n = 0;
            for (k, &v) in t.iter().enumerate() {
                if k != skip {
                    f[n] = v;
                    n += 1;
                }
            }
            f.sort_unstable();
            *faces.entry(f).or_default() += 1;
        }
    }
    let mut out: Vec<u32> = faces
        .into_iter()
        .filter(|&(_, n)| n == 1)
        .flat_map(|(f, _)| f)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Tetrahedron `t` with a positive volume (its last two vertices swapped if needed).
///
/// # Errors
/// [`Error::InvalidParameter`] for a flat tetrahedron.
fn positive(t: [u32; 4], vertices: &[Vector3<f64>]) -> Result<[u32; 4]> {
    let [a, b, c, d] = t.map(|i| vertices[i as usize]);
    let volume = Matrix3::from_columns(&[b - a, c - a, d - a]).determinant();
    if volume > 0.0 {
        Ok(t)
    } else if volume < 0.0 {
        Ok([t[0], t[1], t[3], t[2]])
    } else {
        Err(Error::invalid(
            "nut mesh",
            "tetrahedron",
            "flat tetrahedron",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::mesh::tests::{enclosed, is_closed};
    use std::f64::consts::PI;

    const M10: IsoThread = IsoThread {
        major_diameter: 0.010,
        pitch: 0.0015,
    };

    /// `⟨f⟩` over one pitch of the piecewise-linear profile, `f` of the radius, by the exact
    /// integral of `r²` (or `r`) on each piece.
    fn mean_square(profile: &[(f64, f64)], pitch: f64) -> f64 {
        profile
            .windows(2)
            .map(|w| {
                let ((sa, ra), (sb, rb)) = (w[0], w[1]);
                (sb - sa) * (ra * ra + ra * rb + rb * rb) / 3.0
            })
            .sum::<f64>()
            / pitch
    }

    /// The volume of a solid of revolution's chords: an `n`-gon of circumradius r has area
    /// `r² · n sin(2π/n)/2`, the circle's times `sin(2π/n)/(2π/n)`.
    fn chord_factor(n: usize) -> f64 {
        let a = TAU / n as f64;
        a.sin() / a
    }

    #[test]
    fn the_basic_profile_has_iso_radii_and_sixty_degree_flanks() {
        // ISO 724: M10×1.5 has d1 = 8.376 mm, d2 = 9.026 mm.
        assert!((2.0 * M10.minor_radius() - 8.376e-3).abs() < 1e-6);
        assert!((2.0 * M10.pitch_radius() - 9.026e-3).abs() < 1e-6);
        let profile = M10.pitch_profile(0.0, 1, 0.0);
        let (ds, dr) = (profile[2].0 - profile[1].0, profile[2].1 - profile[1].1);
        assert!((ds.atan2(dr).to_degrees() - 30.0).abs() < 1e-9);
        assert!((profile.last().unwrap().0 - M10.pitch).abs() < 1e-15);
    }

    /// The bolt is closed and outward, its volume the helical sweep's `π m P ⟨r²⟩` to the
    /// chords' factor, and its flanks' triangles lie at 30° to the radial direction.
    #[test]
    fn the_bolt_is_a_closed_outward_surface_of_the_swept_volume() {
        let (clearance, pitches, around) = (1e-4, 4, 48);
        let s = external_thread(&M10, clearance, pitches, around).unwrap();
        assert!(is_closed(&s));
        let volume = enclosed(&s);
        let profile = M10.pitch_profile(clearance, 1, 0.0);
        let exact = PI * pitches as f64 * M10.pitch * mean_square(&profile, M10.pitch);
        let chords = exact * chord_factor(around);
        assert!((volume / chords - 1.0).abs() < 2e-3, "{volume} vs {chords}");
        assert!(volume > 0.0 && volume < exact);
        // 8 triangles per turn and pitch row, the caps extra.
        let side = 2 * around * 4 * pitches;
        assert_eq!(s.triangles.len() - side, 2 * (around + 4));
        assert!(s
            .vertices
            .iter()
            .all(|v| v.z >= 0.0 && v.z <= 5.0 * M10.pitch + 1e-12));
    }

    /// The nut's tetrahedra are positive and fill the swept wall `π m P (R² − ⟨r²⟩)` to the
    /// chords' factor without overlapping (no face shared by three); the extent is 0 on every
    /// surface vertex, in `(0, 1]` inside, 1 somewhere.
    #[test]
    fn the_nut_fills_the_swept_wall_and_its_extent_vanishes_on_its_surface() {
        let (outer, pitches, around) = (0.008, 3, 24);
        let m = internal_thread(&M10, outer, pitches, around, &[0.1, 0.3, 0.6], 2, 1e-3).unwrap();
        let volumes: Vec<f64> = m
            .tets
            .iter()
            .map(|t| {
                let [a, b, c, d] = t.map(|i| m.vertices[i as usize]);
                Matrix3::from_columns(&[b - a, c - a, d - a]).determinant() / 6.0
            })
            .collect();
        assert!(volumes.iter().all(|&v| v > 0.0));
        let volume: f64 = volumes.iter().sum();
        let profile = M10.pitch_profile(0.0, 1, NUT_START * M10.pitch);
        let exact =
            PI * pitches as f64 * M10.pitch * (outer * outer - mean_square(&profile, M10.pitch));
        let chords = exact * chord_factor(around);
        assert!((volume / chords - 1.0).abs() < 2e-3, "{volume} vs {chords}");
        let mut faces: HashMap<[u32; 3], usize> = HashMap::new();
        for t in &m.tets {
            for skip in 0..4 {
                let mut f: Vec<u32> = (0..4).filter(|&k| k != skip).map(|k| t[k]).collect();
                f.sort_unstable();
                *faces.entry([f[0], f[1], f[2]]).or_default() += 1;
            }
        }
        assert!(faces.values().all(|&n| n <= 2));
        let surface: Vec<[u32; 3]> = faces
            .iter()
            .filter(|&(_, &n)| n == 1)
            .map(|(f, _)| *f)
            .collect();
        assert!(surface
            .iter()
            .flatten()
            .all(|&v| m.extent[v as usize] == 0.0));
        // Every tetrahedron has a vertex inside: no prism of e = 0 at the section's corners.
        let flat = m
            .tets
            .iter()
            .filter(|t| t.iter().all(|&v| m.extent[v as usize] == 0.0))
            .count();
        assert_eq!(flat, 0);
        let on_surface: std::collections::HashSet<u32> =
            surface.iter().flatten().copied().collect();
        let inside: Vec<f64> = (0..m.vertices.len() as u32)
            .filter(|v| !on_surface.contains(v))
            .map(|v| m.extent[v as usize])
            .collect();
        assert!(!inside.is_empty());
        assert!(inside.iter().all(|&e| e > 0.0 && e <= 1.0));
        assert!(inside.contains(&1.0));
        // The hole's vertices lie on the profile: the crest of the nut at the minor radius.
        let r_min = m
            .vertices
            .iter()
            .map(|v| v.x.hypot(v.y))
            .fold(f64::INFINITY, f64::min);
        assert!((r_min - M10.minor_radius()).abs() < 1e-12);
    }

    #[test]
    fn bad_threads_are_errors() {
        assert!(external_thread(&M10, -1e-4, 4, 48).is_err());
        assert!(external_thread(&M10, 0.0, 1, 48).is_err());
        assert!(internal_thread(&M10, 0.004, 3, 24, &[0.5], 1, 1e-3).is_err());
        assert!(internal_thread(&M10, 0.008, 3, 24, &[0.5, 0.2], 1, 1e-3).is_err());
        assert!(internal_thread(&M10, 0.008, 3, 24, &[], 1, 1e-3).is_err());
        assert!(internal_thread(&M10, 0.008, 3, 24, &[0.5], 1, 0.0).is_err());
        let flat = IsoThread {
            major_diameter: 0.01,
            pitch: 0.0,
        };
        assert!(external_thread(&flat, 0.0, 4, 48).is_err());
    }
}
