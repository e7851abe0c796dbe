//! Meshes of primitives: outward triangle surfaces (rigid geometries, and the boundary of
//! compliant ones) and star-shaped tetrahedral meshes with the extent field `e` (Elandt
//! Sec. 5.1: `e = 0` on the surface, `e = 1` at the centre).
//!
//! The volume mesh of a shape that is star-shaped about its centre `c` is its surface mesh
//! coned to `c`: one tetrahedron per surface triangle, `e = 0` on the surface and `e = 1` at
//! `c`. Each tetrahedron is the pyramid of one face, where `e` is exactly linear: the
//! piecewise-linear field is the distance to that face divided by the face's distance to `c`,
//! on a sphere `e = 1 − r/R` (Elandt's Fig. 4.3), and the pressure gradient is `E` over the
//! face's distance. Subdividing each pyramid in shells scaled about `c` would represent the
//! same field, but a plane through the outer prism of a face would then cut three tetrahedra
//! where the cone has one: three contact polygons of one pyramid's slice, with the same normal
//! and the same linear pressure, for one. Drake meshes compliant spheres the same way. A
//! capsule has `e = 1` on its whole axis instead ([`capsule_tet_mesh`]), as Drake's: coned to
//! its centre, its caps would be softer than its sides.
//!
//! Sizes: surface edges are at most about the resolution hint `h` long; a sphere or an
//! ellipsoid is Drake's refined octahedron, its edges along the equator at most `h`.
#![allow(non_snake_case)]

use std::collections::HashMap;

use nalgebra::{Matrix3, Vector3};

use crate::error::{Error, Result};
use crate::geometry::Shape;

/// A closed triangle surface, triangles counter-clockwise seen from outside (m, geometry
/// frame).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SurfaceMesh {
    /// Vertex positions.
    pub vertices: Vec<Vector3<f64>>,
    /// Triangles as vertex indices, outward orientation.
    pub triangles: Vec<[u32; 3]>,
}

/// A tetrahedral mesh with the extent `e ∈ [0, 1]` at its vertices (m, geometry frame).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TetMesh {
    /// Vertex positions.
    pub vertices: Vec<Vector3<f64>>,
    /// Extent at each vertex: 0 on the surface, 1 at the centre.
    pub extent: Vec<f64>,
    /// Tetrahedra as vertex indices, positive volume.
    pub tets: Vec<[u32; 4]>,
}

/// Merges vertices that coincide (within `1e-9` of the mesh size) while a mesh is built.
struct VertexPool {
    vertices: Vec<Vector3<f64>>,
    index: HashMap<[i64; 3], u32>,
    quantum: f64,
}

impl VertexPool {
    fn new(size: f64) -> Self {
        VertexPool {
            vertices: Vec::new(),
            index: HashMap::new(),
            quantum: 1e-9 * size,
        }
    }

    fn add(&mut self, p: Vector3<f64>) -> u32 {
        let key = [
            (p.x / self.quantum).round() as i64,
            (p.y / self.quantum).round() as i64,
            (p.z / self.quantum).round() as i64,
        ];
        let next = self.vertices.len() as u32;
        *self.index.entry(key).or_insert_with(|| {
            self.vertices.push(p);
            next
        })
    }
}

/// Adds triangle `(a, b, c)` oriented so that its normal points away from `centre`; drops
/// degenerate triangles (repeated vertices).
fn push_outward(
    mesh: &mut Vec<[u32; 3]>,
    vertices: &[Vector3<f64>],
    centre: &Vector3<f64>,
    [a, b, c]: [u32; 3],
) {
    if a == b || b == c || a == c {
        return;
    }
    let (pa, pb, pc) = (
        vertices[a as usize],
        vertices[b as usize],
        vertices[c as usize],
    );
    let n = (pb - pa).cross(&(pc - pa));
    if n.norm() <= 1e-14 * (pb - pa).norm_squared().max(1e-300) {
        return;
    }
    if n.dot(&((pa + pb + pc) / 3.0 - centre)) >= 0.0 {
        mesh.push([a, b, c]);
    } else {
        mesh.push([a, c, b]);
    }
}

/// Splits each triangle `(a, b, c)` of `corners` into `n²` triangles, mapping every point
/// through `map` (projection onto a curved surface), merging shared vertices.
fn subdivided(
    corners: &[[Vector3<f64>; 3]],
    n: usize,
    size: f64,
    map: impl Fn(Vector3<f64>) -> Vector3<f64>,
) -> SurfaceMesh {
    let mut pool = VertexPool::new(size);
    let mut ids = Vec::new();
    for [a, b, c] in corners {
        // Vertex (i, j) = a + i/n (b − a) + j/n (c − a), i + j ≤ n.
        let mut grid = vec![vec![0u32; n + 1]; n + 1];
        for (i, row) in grid.iter_mut().enumerate() {
            for (j, slot) in row.iter_mut().enumerate().take(n + 1 - i) {
                let p = a + (b - a) * (i as f64 / n as f64) + (c - a) * (j as f64 / n as f64);
                *slot = pool.add(map(p));
            }
        }
        for i in 0..n {
            for j in 0..n - i {
                ids.push([grid[i][j], grid[i + 1][j], grid[i][j + 1]]);
                if i + j + 1 < n {
                    ids.push([grid[i + 1][j], grid[i + 1][j + 1], grid[i][j + 1]]);
                }
            }
        }
    }
    let mut triangles = Vec::with_capacity(ids.len());
    let centre = Vector3::zeros();
    for t in ids {
        push_outward(&mut triangles, &pool.vertices, &centre, t);
    }
    SurfaceMesh {
        vertices: pool.vertices,
        triangles,
    }
}

/// Surface of revolution about z of the profile `(ρ, z)` from the bottom pole (ρ = 0) to the
/// top pole (ρ = 0), `around` segments per ring.
fn revolution(profile: &[(f64, f64)], around: usize, size: f64) -> SurfaceMesh {
    let mut pool = VertexPool::new(size);
    let rings: Vec<Vec<u32>> = profile
        .iter()
        .map(|&(rho, z)| {
            (0..around)
                .map(|k| {
                    let phi = std::f64::consts::TAU * k as f64 / around as f64;
                    pool.add(Vector3::new(rho * phi.cos(), rho * phi.sin(), z))
                })
                .collect()
        })
        .collect();
    let mut triangles = Vec::new();
    let centre = Vector3::zeros();
    for w in rings.windows(2) {
        for k in 0..around {
            let k1 = (k + 1) % around;
            let (a, b, c, d) = (w[0][k], w[0][k1], w[1][k], w[1][k1]);
            push_outward(&mut triangles, &pool.vertices, &centre, [a, b, d]);
            push_outward(&mut triangles, &pool.vertices, &centre, [a, d, c]);
        }
    }
    SurfaceMesh {
        vertices: pool.vertices,
        triangles,
    }
}

/// `⌈x / h⌉`, at least `min`.
fn divisions(x: f64, h: f64, min: usize) -> usize {
    ((x / h).ceil() as usize).max(min)
}

/// Points `(ρ, z)` of a quarter circle of radius `r` centred at `(0, z0)`, from angle `a0` to
/// `a1` (rad, measured from the equator), `n` segments, the first point excluded.
fn arc(r: f64, z0: f64, a0: f64, a1: f64, n: usize) -> impl Iterator<Item = (f64, f64)> {
    (1..=n).map(move |k| {
        let a = a0 + (a1 - a0) * k as f64 / n as f64;
        (r * a.cos(), z0 + r * a.sin())
    })
}

/// The outward surface mesh of `shape` with edges of about `hint` (m).
///
/// # Errors
/// [`Error::InvalidParameter`] for a non-positive hint, a half-space (no finite surface) or
/// a degenerate convex mesh.
pub fn surface_mesh(shape: &Shape, hint: f64) -> Result<SurfaceMesh> {
    if !(hint > 0.0 && hint.is_finite()) {
        return Err(Error::invalid(
            "resolution_hint",
            hint,
            "must be positive and finite (m)",
        ));
    }
    use std::f64::consts::{FRAC_PI_2, TAU};
    Ok(match shape {
        Shape::Sphere { radius } => {
            let r = *radius;
            unit_sphere(sphere_level(r, hint), |p| p * r)
        }
        Shape::Ellipsoid { semi_axes } => {
            let s = semi_axes;
            unit_sphere(sphere_level(s.max(), hint), |p| p.component_mul(s))
        }
        Shape::Box { half_extents } => {
            let h = half_extents;
            let corners: Vec<Vector3<f64>> = (0..8)
                .map(|i| {
                    Vector3::new(
                        if i & 1 == 0 { -h.x } else { h.x },
                        if i & 2 == 0 { -h.y } else { h.y },
                        if i & 4 == 0 { -h.z } else { h.z },
                    )
                })
                .collect();
            convex_surface(&corners, hint)?
        }
        Shape::ConvexMesh { vertices } => convex_surface(vertices, hint)?,
        Shape::Cylinder {
            radius,
            half_length,
        } => {
            let (r, h) = (*radius, *half_length);
            let (nr, nz) = (divisions(r, hint, 1), divisions(2.0 * h, hint, 1));
            let mut profile = vec![(0.0, -h)];
            profile.extend((1..=nr).map(|k| (r * k as f64 / nr as f64, -h)));
            profile.extend((1..=nz).map(|k| (r, h * (((2 * k) as f64 - nz as f64) / nz as f64))));
            profile.extend((1..=nr).rev().map(|k| (r * (k - 1) as f64 / nr as f64, h)));
            revolution(&profile, divisions(TAU * r, hint, 8), r.max(h))
        }
        Shape::Capsule {
            radius,
            half_length,
        } => {
            let (r, h) = (*radius, *half_length);
            let (na, nz) = (
                divisions(FRAC_PI_2 * r, hint, 2),
                divisions(2.0 * h, hint, 1),
            );
            let mut profile = vec![(0.0, -h - r)];
            profile.extend(arc(r, -h, -FRAC_PI_2, 0.0, na));
            // `h · ((2k − n)/n)` ends at `h` exactly (the ratio is 1); `−h + 2hk/n` can miss it
            // by an ulp, and the capsule's tetrahedra look their axis points up by height.
            profile.extend((1..=nz).map(|k| (r, h * (((2 * k) as f64 - nz as f64) / nz as f64))));
            profile.extend(arc(r, h, 0.0, FRAC_PI_2, na));
            if let Some(last) = profile.last_mut() {
                last.0 = 0.0;
            }
            revolution(&profile, divisions(TAU * r, hint, 8), r + h)
        }
        Shape::HalfSpace => {
            return Err(Error::invalid(
                "shape",
                "half-space",
                "a half-space has no finite surface mesh (it is a plane or a layer)",
            ))
        }
    })
}

/// Refinement level of a sphere of radius `r` (or an ellipsoid of largest semi-axis `r`) for
/// edges of at most `hint` along its equator, as Drake's `MakeSphereVolumeMesh`: the equator of
/// level `L` has `4·2ᴸ` chords of `2r sin(π / 2ᴸ⁺²)`, so `L = ⌈log₂(π / asin(h / 2r))⌉ − 2`,
/// at least 0 and at most [`MAX_SPHERE_LEVEL`].
fn sphere_level(r: f64, hint: f64) -> u32 {
    let chord = hint.min(2.0 * r) / (2.0 * r);
    let level = (std::f64::consts::PI / chord.asin()).log2().ceil() - 2.0;
    (level.max(0.0) as u32).min(MAX_SPHERE_LEVEL)
}

/// The finest sphere refinement: `8·4⁸` (half a million) surface triangles, as Drake.
const MAX_SPHERE_LEVEL: u32 = 8;

/// The unit sphere refined `level` times from the octahedron, as Drake's sparse sphere mesh
/// (`RefineUnitSphereMeshOnSurface`): each level splits every triangle into four at its edge
/// midpoints, pushed out onto the sphere, so that triangles stay about equal in size all over
/// (a flat subdivision projected once makes them smaller near the octahedron's vertices).
/// Vertices are then mapped through `map` (the radius, or the semi-axes of an ellipsoid).
fn unit_sphere(level: u32, map: impl Fn(Vector3<f64>) -> Vector3<f64>) -> SurfaceMesh {
    let mut faces = octahedron(1.0);
    for _ in 0..level {
        faces = faces
            .iter()
            .flat_map(|&[a, b, c]| {
                let [ab, bc, ca] = [(a + b), (b + c), (c + a)].map(|m| m.normalize());
                [[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]
            })
            .collect();
    }
    let mut pool = VertexPool::new(1.0);
    let ids: Vec<[u32; 3]> = faces.iter().map(|t| t.map(|p| pool.add(p))).collect();
    let vertices: Vec<Vector3<f64>> = pool.vertices.into_iter().map(map).collect();
    let mut triangles = Vec::with_capacity(ids.len());
    for t in ids {
        push_outward(&mut triangles, &vertices, &Vector3::zeros(), t);
    }
    SurfaceMesh {
        vertices,
        triangles,
    }
}

/// The eight faces of the octahedron with vertices `±r` on the axes.
fn octahedron(r: f64) -> Vec<[Vector3<f64>; 3]> {
    let mut faces = Vec::with_capacity(8);
    for sx in [-r, r] {
        for sy in [-r, r] {
            for sz in [-r, r] {
                faces.push([
                    Vector3::new(sx, 0.0, 0.0),
                    Vector3::new(0.0, sy, 0.0),
                    Vector3::new(0.0, 0.0, sz),
                ]);
            }
        }
    }
    faces
}

/// The hull of `points` with its faces fanned into triangles, each subdivided so that edges
/// are about `hint` long (one subdivision count for all, so shared edges match).
fn convex_surface(points: &[Vector3<f64>], hint: f64) -> Result<SurfaceMesh> {
    use parry3d_f64::math::Vector as PVec;
    let pts: Vec<PVec> = points.iter().map(|p| PVec::new(p.x, p.y, p.z)).collect();
    let hull = parry3d_f64::shape::ConvexPolyhedron::from_convex_hull(&pts).ok_or_else(|| {
        Error::invalid(
            "vertices",
            points.len(),
            "vertices are degenerate (coplanar); no convex hull",
        )
    })?;
    let v = |i: u32| {
        let p = hull.points()[i as usize];
        Vector3::new(p.x, p.y, p.z)
    };
    let adjacent = hull.vertices_adj_to_face();
    let mut corners = Vec::new();
    for f in hull.faces() {
        let first = f.first_vertex_or_edge as usize;
        let mut face: Vec<Vector3<f64>> = adjacent[first..first + f.num_vertices_or_edges as usize]
            .iter()
            .map(|&i| v(i))
            .collect();
        // Cyclic order by angle about the face's vertex mean, in the face plane.
        let n = Vector3::new(f.normal.x, f.normal.y, f.normal.z);
        let mean = face.iter().sum::<Vector3<f64>>() / face.len() as f64;
        let t1 = (face[0] - mean).normalize();
        let t2 = n.cross(&t1);
        let angle = |p: &Vector3<f64>| (p - mean).dot(&t2).atan2((p - mean).dot(&t1));
        face.sort_by(|a, b| angle(a).total_cmp(&angle(b)));
        for k in 1..face.len() - 1 {
            corners.push([face[0], face[k], face[k + 1]]);
        }
    }
    let longest = corners
        .iter()
        .flat_map(|[a, b, c]| [(b - a).norm(), (c - b).norm(), (a - c).norm()])
        .fold(0.0, f64::max);
    let size = points.iter().map(|p| p.norm()).fold(0.0, f64::max);
    let centre = centroid(&corners);
    let shifted: Vec<_> = corners
        .iter()
        .map(|[a, b, c]| [a - centre, b - centre, c - centre])
        .collect();
    let mut mesh = subdivided(&shifted, divisions(longest, hint, 1), size, |p| p);
    for p in &mut mesh.vertices {
        *p += centre;
    }
    Ok(mesh)
}

/// Area-weighted centroid of a set of triangles (a point strictly inside a convex hull).
fn centroid(triangles: &[[Vector3<f64>; 3]]) -> Vector3<f64> {
    let (mut sum, mut area) = (Vector3::zeros(), 0.0);
    for [a, b, c] in triangles {
        let w = (b - a).cross(&(c - a)).norm();
        sum += (a + b + c) / 3.0 * w;
        area += w;
    }
    sum / area
}

/// The centre the volume mesh of `shape` is star-shaped about: the origin of the geometry
/// frame for the primitives, the area centroid of the surface for a convex mesh.
pub fn star_centre(shape: &Shape, surface: &SurfaceMesh) -> Vector3<f64> {
    match shape {
        Shape::ConvexMesh { .. } => centroid(
            &surface
                .triangles
                .iter()
                .map(|t| t.map(|i| surface.vertices[i as usize]))
                .collect::<Vec<_>>(),
        ),
        _ => Vector3::zeros(),
    }
}

/// The tetrahedral mesh of a surface star-shaped about `centre`: the surface coned to it, with
/// `e = 1` at `centre` and `0` on the surface (module docs).
///
/// # Errors
/// [`Error::InvalidParameter`] when `centre` does not see every triangle from inside.
pub fn tet_mesh(surface: &SurfaceMesh, centre: &Vector3<f64>) -> Result<TetMesh> {
    star_shaped(surface, centre)?;
    // Vertex 0 is the centre, vertex 1 + i the surface's vertex i.
    let mut vertices = vec![*centre];
    vertices.extend_from_slice(&surface.vertices);
    let mut extent = vec![0.0; vertices.len()];
    extent[0] = 1.0;
    let tets = surface
        .triangles
        .iter()
        .map(|t| positive([0, t[0] + 1, t[1] + 1, t[2] + 1], &vertices))
        .collect();
    Ok(TetMesh {
        vertices,
        extent,
        tets,
    })
}

/// The tetrahedral mesh of a capsule of half-length `h` (axis z) from its surface mesh (a
/// surface of revolution: rings of vertices at equal heights), with `e = 1` on the axis as
/// Drake's (`MakeCapsuleVolumeMesh`), so that `e` grows by `1/r` from the surface everywhere,
/// on the caps too. Each cap's triangles are coned to the end of the axis on their side. The
/// cylinder between two rings and the axis between their heights form one prism per sector,
/// split into three tetrahedra: the two outer triangles coned to the axis point of the lower
/// ring, and the tetrahedron of the axis segment and the upper edge (every radial face split
/// from the lower axis point to the upper ring, so neighbours conform). Every tetrahedron
/// spans the radius, not the whole capsule.
///
/// # Errors
/// As [`tet_mesh`], when the surface is not a capsule's about the origin.
pub fn capsule_tet_mesh(surface: &SurfaceMesh, h: f64) -> Result<TetMesh> {
    star_shaped(surface, &Vector3::zeros())?;
    // The heights of the cylinder's rings, the ends included: vertices 0.. on the axis.
    let mut heights: Vec<f64> = surface
        .vertices
        .iter()
        .map(|v| v.z)
        .filter(|z| z.abs() <= h)
        .collect();
    heights.sort_by(f64::total_cmp);
    heights.dedup();
    let axis = |z: f64| {
        heights
            .binary_search_by(|x| x.total_cmp(&z))
            .expect("invariant: a height of the cylinder's rings") as u32
    };
    let n = heights.len() as u32;
    let mut vertices: Vec<Vector3<f64>> =
        heights.iter().map(|&z| Vector3::new(0.0, 0.0, z)).collect();
    vertices.extend_from_slice(&surface.vertices);
    let mut extent = vec![0.0; vertices.len()];
    extent[..heights.len()].fill(1.0);
    let mut tets = Vec::with_capacity(surface.triangles.len() * 2);
    for t in &surface.triangles {
        let z = t.map(|i| surface.vertices[i as usize].z);
        let shifted = t.map(|i| i + n);
        let (low, high) = (
            z.iter().copied().fold(f64::INFINITY, f64::min),
            z.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        let apex = if low >= h {
            axis(h)
        } else if high <= -h {
            axis(-h)
        } else {
            axis(low)
        };
        tets.push(positive(
            [apex, shifted[0], shifted[1], shifted[2]],
            &vertices,
        ));
        // A side triangle with its edge on the upper ring: the axis segment's tetrahedron.
        let upper: Vec<u32> = (0..3)
            .filter(|&k| z[k] == high)
            .map(|k| shifted[k])
            .collect();
        if low < h && high > -h && upper.len() == 2 {
            tets.push(positive([apex, axis(high), upper[0], upper[1]], &vertices));
        }
    }
    Ok(TetMesh {
        vertices,
        extent,
        tets,
    })
}

/// Checks that `centre` sees every triangle of `surface` from inside.
///
/// # Errors
/// [`Error::InvalidParameter`] otherwise.
fn star_shaped(surface: &SurfaceMesh, centre: &Vector3<f64>) -> Result<()> {
    let inradius = surface
        .triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|i| surface.vertices[i as usize]);
            (b - a).cross(&(c - a)).normalize().dot(&(a - centre))
        })
        .fold(f64::INFINITY, f64::min);
    if inradius.is_nan() || inradius <= 0.0 {
        return Err(Error::invalid(
            "mesh",
            inradius,
            "surface is not star-shaped about its centre",
        ));
    }
    Ok(())
}

/// Tetrahedron `t` of `vertices` with a positive volume (its last two vertices swapped if
/// needed).
fn positive(t: [u32; 4], vertices: &[Vector3<f64>]) -> [u32; 4] {
    let [a, b, c, d] = t.map(|i| vertices[i as usize]);
    let volume = Matrix3::from_columns(&[b - a, c - a, d - a]).determinant();
    if volume >= 0.0 {
        t
    } else {
        [t[0], t[2], t[1], t[3]]
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn volume(m: &TetMesh) -> f64 {
        m.tets
            .iter()
            .map(|t| {
                let [a, b, c, d] = t.map(|i| m.vertices[i as usize]);
                Matrix3::from_columns(&[b - a, c - a, d - a]).determinant() / 6.0
            })
            .sum()
    }

    /// The volume a closed, outward surface encloses (m³).
    pub(crate) fn enclosed(s: &SurfaceMesh) -> f64 {
        s.triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|i| s.vertices[i as usize]);
                a.dot(&b.cross(&c)) / 6.0
            })
            .sum()
    }

    /// Every edge of a closed, consistently oriented surface is used once in each direction.
    pub(crate) fn is_closed(s: &SurfaceMesh) -> bool {
        let mut edges = HashMap::new();
        for t in &s.triangles {
            for k in 0..3 {
                *edges.entry((t[k], t[(k + 1) % 3])).or_insert(0) += 1;
            }
        }
        edges
            .iter()
            .all(|(&(a, b), &n)| n == 1 && edges.get(&(b, a)) == Some(&1))
    }

    #[test]
    fn surfaces_are_closed_and_enclose_the_shape_volume() {
        use std::f64::consts::PI;
        let cases = [
            (Shape::Sphere { radius: 0.1 }, 4.0 / 3.0 * PI * 1e-3, 0.01),
            (
                Shape::Box {
                    half_extents: Vector3::new(0.1, 0.2, 0.05),
                },
                0.2 * 0.4 * 0.1,
                1e-12,
            ),
            (
                Shape::Cylinder {
                    radius: 0.05,
                    half_length: 0.1,
                },
                PI * 0.05 * 0.05 * 0.2,
                0.01,
            ),
            (
                Shape::Capsule {
                    radius: 0.05,
                    half_length: 0.1,
                },
                PI * 0.05 * 0.05 * 0.2 + 4.0 / 3.0 * PI * 0.05f64.powi(3),
                0.01,
            ),
            (
                Shape::Ellipsoid {
                    semi_axes: Vector3::new(0.1, 0.05, 0.03),
                },
                4.0 / 3.0 * PI * 0.1 * 0.05 * 0.03,
                0.01,
            ),
            (
                // A square pyramid, apex off centre.
                Shape::ConvexMesh {
                    vertices: vec![
                        Vector3::new(-0.1, -0.1, 0.0),
                        Vector3::new(0.1, -0.1, 0.0),
                        Vector3::new(0.1, 0.1, 0.0),
                        Vector3::new(-0.1, 0.1, 0.0),
                        Vector3::new(0.03, 0.02, 0.15),
                    ],
                },
                0.2 * 0.2 * 0.15 / 3.0,
                1e-12,
            ),
        ];
        for (shape, exact, tol) in cases {
            let s = surface_mesh(&shape, 0.01).unwrap();
            assert!(is_closed(&s), "{shape:?}");
            let v = enclosed(&s);
            assert!(
                (v - exact).abs() <= tol * exact,
                "{shape:?}: {v} vs {exact}"
            );
            let m = tet_mesh(&s, &star_centre(&shape, &s)).unwrap();
            assert!(
                (volume(&m) - v).abs() < 1e-9 * v,
                "{shape:?}: {} vs {v}",
                volume(&m)
            );
            assert!(m.tets.iter().all(|t| {
                let [a, b, c, d] = t.map(|i| m.vertices[i as usize]);
                Matrix3::from_columns(&[b - a, c - a, d - a]).determinant() > 0.0
            }));
        }
    }

    /// Number of tetrahedra of `m` sharing each face.
    fn face_counts(m: &TetMesh) -> HashMap<[u32; 3], usize> {
        let mut faces: HashMap<[u32; 3], usize> = HashMap::new();
        for t in &m.tets {
            for skip in 0..4 {
                let mut f: Vec<u32> = (0..4).filter(|&k| k != skip).map(|k| t[k]).collect();
                f.sort_unstable();
                *faces.entry([f[0], f[1], f[2]]).or_default() += 1;
            }
        }
        faces
    }

    #[test]
    fn tet_faces_are_shared_by_at_most_two_tets_and_boundary_faces_match_the_surface() {
        let shape = Shape::Sphere { radius: 0.1 };
        let s = surface_mesh(&shape, 0.03).unwrap();
        let faces = face_counts(&tet_mesh(&s, &Vector3::zeros()).unwrap());
        assert!(faces.values().all(|&n| n <= 2));
        let boundary = faces.values().filter(|&&n| n == 1).count();
        assert_eq!(boundary, s.triangles.len());
    }

    /// The capsule's mesh fills the surface exactly, without overlaps (every face shared by
    /// two tetrahedra but the surface's), and its field grows by `1/r` from the surface
    /// everywhere: on the caps, where the mesh coned to the centre gave `1/(h + r)` at the
    /// poles, as on the sides.
    #[test]
    fn capsule_field_grows_by_one_over_the_radius_on_the_caps_and_the_sides() {
        let (r, h) = (0.01, 0.04);
        let shape = Shape::Capsule {
            radius: r,
            half_length: h,
        };
        let s = surface_mesh(&shape, 0.002).unwrap();
        let m = capsule_tet_mesh(&s, h).unwrap();
        assert!((volume(&m) - enclosed(&s)).abs() < 1e-12 * enclosed(&s));
        assert!(m.tets.iter().all(|t| {
            let [a, b, c, d] = t.map(|i| m.vertices[i as usize]);
            Matrix3::from_columns(&[b - a, c - a, d - a]).determinant() > 0.0
        }));
        let faces = face_counts(&m);
        assert!(faces.values().all(|&n| n <= 2));
        assert_eq!(
            faces.values().filter(|&&n| n == 1).count(),
            s.triangles.len()
        );
        // Each tetrahedron with a surface face: `|∇e|` is one over the distance from the
        // face's plane to its interior vertex, which lies on the axis.
        let mut worst = 0.0_f64;
        for t in &m.tets {
            let x = t.map(|i| m.vertices[i as usize]);
            let e = t.map(|i| m.extent[i as usize]);
            let Some(apex) = (0..4).find(|&k| e[k] == 1.0) else {
                continue;
            };
            let others: Vec<_> = (0..4).filter(|&k| k != apex).collect();
            if others.iter().any(|&k| e[k] != 0.0) {
                continue;
            }
            let [a, b, c] = [x[others[0]], x[others[1]], x[others[2]]];
            let n = (b - a).cross(&(c - a)).normalize();
            let depth = n.dot(&(x[apex] - a)).abs();
            worst = worst.max((depth / r - 1.0).abs());
        }
        // Faceting: the faces' planes lie inside the circle by up to `1 − cos(π/n)`.
        assert!(worst < 0.02, "{worst}");
    }

    /// A 12 cm capsule at 1 mm: `−h + 2h·120/120` is an ulp short of `h` (and so is
    /// `h·120/120`), so the cylinder's top ring is placed at `h · 1` for the tetrahedra to find
    /// their axis points.
    #[test]
    fn capsule_rings_end_exactly_at_the_half_length() {
        let h = 0.06;
        assert_ne!(-h + 2.0 * h * 120.0 / 120.0, h);
        assert_ne!(h * 120.0 / 120.0, h);
        let shape = Shape::Capsule {
            radius: 0.005,
            half_length: h,
        };
        let s = surface_mesh(&shape, 0.001).unwrap();
        assert!(s.vertices.iter().any(|v| v.z == h) && s.vertices.iter().any(|v| v.z == -h));
        let m = capsule_tet_mesh(&s, h).unwrap();
        assert!((volume(&m) - enclosed(&s)).abs() < 1e-12 * enclosed(&s));
    }
}
