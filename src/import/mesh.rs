//! Mesh files for collision geometry: STL (binary and ASCII, through `stl_io`) and Wavefront
//! OBJ (through `tobj`), scaled per axis and reduced to their convex hull (parry's
//! quickhull), which becomes a [`Shape::ConvexMesh`]: point contact with a mesh is contact
//! with its hull, as in MuJoCo and Drake's default for collision meshes. A moving body's
//! non-convex mesh can become convex parts instead ([`convex_decomposition`]), and a static
//! environment mesh (a terrain, a bowl) one prism per triangle ([`triangle_prisms`]).
//!
//! COLLADA (`.dae`) files are visual meshes in most robot packages and have no well-kept
//! Rust reader; [`collision_mesh_file`] uses an STL of the same name beside the DAE or in a
//! sibling `collision` or `meshes` folder (example-robot-data's layout:
//! `meshes/visual/link.dae` next to `meshes/collision/link.stl`), and fails clearly
//! otherwise.

use std::fmt;
use std::path::{Path, PathBuf};

use nalgebra::{Matrix3, Vector3};
use parry3d_f64::math::Vector as PVec;
use parry3d_f64::transformation::try_convex_hull;
use parry3d_f64::transformation::vhacd::{VHACDParameters, VHACD};

use crate::geometry::Shape;

/// A mesh file that could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MeshError {
    /// The mesh file.
    pub path: PathBuf,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for MeshError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "mesh {}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for MeshError {}

fn mesh_error(path: &Path, message: impl Into<String>) -> MeshError {
    MeshError {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// The file to read for the collision mesh `path`: `path` itself for STL and OBJ; for a DAE,
/// an STL with the same stem beside it or in a sibling `collision` or `meshes` folder, with a
/// note saying so.
///
/// # Errors
/// A DAE with no STL in those places, or another extension.
pub fn collision_mesh_file(path: &Path) -> Result<(PathBuf, Option<String>), MeshError> {
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("stl" | "obj") => Ok((path.to_path_buf(), None)),
        Some("dae") => {
            let stem = path.file_stem().unwrap_or_default();
            let dir = path.parent().unwrap_or(Path::new(""));
            let mut folders = vec![dir.to_path_buf()];
            if let Some(up) = dir.parent() {
                folders.push(up.join("collision"));
                folders.push(up.join("meshes"));
            }
            let candidates: Vec<PathBuf> = folders
                .iter()
                .flat_map(|f| ["stl", "STL"].map(|e| f.join(stem).with_extension(e)))
                .collect();
            match candidates.iter().find(|c| c.is_file()) {
                Some(stl) => Ok((
                    stl.clone(),
                    Some(format!(
                        "collision mesh {}: COLLADA is not read; using {} instead",
                        path.display(),
                        stl.display()
                    )),
                )),
                None => Err(mesh_error(
                    path,
                    format!(
                        "COLLADA (.dae) meshes are not read; convert it to STL or OBJ (no STL \
                         of the same name found at {})",
                        candidates
                            .iter()
                            .step_by(2)
                            .map(|c| c.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )),
            }
        }
        _ => Err(mesh_error(
            path,
            "expected an STL (.stl) or Wavefront OBJ (.obj) mesh",
        )),
    }
}

/// The vertices (m, mesh frame, unscaled) of the STL or OBJ mesh at `path`; faces are not
/// needed for a hull.
///
/// # Errors
/// A file that cannot be read or parsed, or that has no vertex.
pub fn read_vertices(path: &Path) -> Result<Vec<Vector3<f64>>, MeshError> {
    read_mesh(path).map(|(vertices, _)| vertices)
}

/// A triangle mesh: vertices (m) and triangles, three vertex indices each.
pub type TriangleMesh = (Vec<Vector3<f64>>, Vec<[u32; 3]>);

/// The vertices (m, mesh frame, unscaled) and triangles (vertex indices) of the STL or OBJ
/// mesh at `path` (OBJ polygons triangulated).
///
/// # Errors
/// A file that cannot be read or parsed, that has no vertex, or a face naming a vertex it
/// does not have.
pub fn read_mesh(path: &Path) -> Result<TriangleMesh, MeshError> {
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let (vertices, triangles): (Vec<Vector3<f64>>, Vec<[u32; 3]>) = match extension.as_deref() {
        Some("stl") => {
            let mut file = std::fs::File::open(path)
                .map_err(|e| mesh_error(path, format!("cannot read: {e}")))?;
            let mesh = stl_io::read_stl(&mut file)
                .map_err(|e| mesh_error(path, format!("not a valid STL file: {e}")))?;
            (
                mesh.vertices
                    .iter()
                    .map(|v| Vector3::new(v.0[0] as f64, v.0[1] as f64, v.0[2] as f64))
                    .collect(),
                mesh.faces
                    .iter()
                    .map(|f| f.vertices.map(|i| i as u32))
                    .collect(),
            )
        }
        Some("obj") => {
            // Materials (`mtllib`) do not matter for collision: their result is not read.
            let options = tobj::LoadOptions {
                triangulate: true,
                ..tobj::LoadOptions::default()
            };
            let (models, _materials) = tobj::load_obj(path, &options)
                .map_err(|e| mesh_error(path, format!("not a valid OBJ file: {e}")))?;
            let (mut vertices, mut triangles) = (Vec::new(), Vec::new());
            for m in &models {
                let base = vertices.len() as u32;
                vertices.extend(
                    m.mesh
                        .positions
                        .chunks_exact(3)
                        .map(|p| Vector3::new(p[0] as f64, p[1] as f64, p[2] as f64)),
                );
                triangles.extend(
                    m.mesh
                        .indices
                        .chunks_exact(3)
                        .map(|t| [base + t[0], base + t[1], base + t[2]]),
                );
            }
            (vertices, triangles)
        }
        _ => {
            return Err(mesh_error(
                path,
                "expected an STL (.stl) or Wavefront OBJ (.obj) mesh",
            ))
        }
    };
    if vertices.is_empty() {
        return Err(mesh_error(path, "the mesh has no vertex"));
    }
    if let Some(bad) = vertices.iter().find(|v| !v.iter().all(|x| x.is_finite())) {
        return Err(mesh_error(
            path,
            format!("non-finite vertex {:?}", bad.as_slice()),
        ));
    }
    if triangles
        .iter()
        .flatten()
        .any(|&i| i as usize >= vertices.len())
    {
        return Err(mesh_error(
            path,
            "a face names a vertex the mesh does not have",
        ));
    }
    Ok((vertices, triangles))
}

/// The convex parts of a non-convex mesh (`vertices`, `triangles`) scaled by `scale`, by
/// parry's V-HACD with its default parameters (voxel resolution 64, concavity 0.01), each
/// part the hull of the mesh's own points in it ([`convex_hull`]); parts too thin to have a
/// solid hull are dropped.
///
/// # Errors
/// A message if the scale is invalid, the mesh has no triangle, or no part is solid.
pub fn convex_decomposition(
    vertices: &[Vector3<f64>],
    triangles: &[[u32; 3]],
    scale: Vector3<f64>,
) -> Result<Vec<Shape>, String> {
    if !scale.iter().all(|s| s.is_finite() && *s != 0.0) {
        return Err(format!(
            "expected a scale with finite non-zero factors, found {:?}",
            scale.as_slice()
        ));
    }
    if triangles.is_empty() {
        return Err("a convex decomposition needs the mesh's triangles; it has none".into());
    }
    let points: Vec<PVec> = vertices
        .iter()
        .map(|v| {
            let s = v.component_mul(&scale);
            PVec::new(s.x, s.y, s.z)
        })
        .collect();
    let decomposition = VHACD::decompose(&VHACDParameters::default(), &points, triangles, true);
    let parts: Vec<Shape> = decomposition
        .compute_exact_convex_hulls(&points, triangles)
        .iter()
        .filter_map(|(part, _)| {
            let part: Vec<Vector3<f64>> =
                part.iter().map(|p| Vector3::new(p.x, p.y, p.z)).collect();
            convex_hull(&part, Vector3::new(1.0, 1.0, 1.0))
                .ok()
                .map(|(shape, _)| shape)
        })
        .collect();
    if parts.is_empty() {
        return Err("the convex decomposition has no solid part".into());
    }
    Ok(parts)
}

/// Most triangles a static mesh may have: each becomes a geometry of the scene.
pub const MAX_STATIC_TRIANGLES: usize = 100_000;

/// A static environment mesh as convex pieces: each triangle `(a, b, c)` of `vertices` scaled
/// by `scale` becomes the prism between it and its copy moved `depth` (m) against its
/// normal `n = (b − a) × (c − a) / |…|` (outward by the right-hand rule), as MuJoCo collides
/// each triangle of a height field as a prism. A body touching the surface touches the top
/// faces; sideways normals arise only within the penetration depth of an edge between
/// prisms, and a body that moves more than `depth` into the surface in one step can pass
/// through it. Degenerate triangles (zero area) are skipped.
///
/// # Errors
/// A message if the scale or depth is invalid, the mesh has no triangle of positive area,
/// or more than [`MAX_STATIC_TRIANGLES`] triangles.
pub fn triangle_prisms(
    vertices: &[Vector3<f64>],
    triangles: &[[u32; 3]],
    scale: Vector3<f64>,
    depth: f64,
) -> Result<Vec<Shape>, String> {
    if !scale.iter().all(|s| s.is_finite() && *s != 0.0) {
        return Err(format!(
            "expected a scale with finite non-zero factors, found {:?}",
            scale.as_slice()
        ));
    }
    if !(depth.is_finite() && depth > 0.0) {
        return Err(format!("expected a prism depth > 0 (m), found {depth}"));
    }
    if triangles.len() > MAX_STATIC_TRIANGLES {
        return Err(format!(
            "{} triangles: at most {MAX_STATIC_TRIANGLES} (simplify the mesh)",
            triangles.len()
        ));
    }
    // A mirroring scale turns the winding, and with it the normal.
    let mirrored = scale.iter().filter(|s| **s < 0.0).count() % 2 == 1;
    let point = |i: u32| vertices.get(i as usize).map(|v| v.component_mul(&scale));
    let mut prisms = Vec::with_capacity(triangles.len());
    for t in triangles {
        let [Some(a), Some(b), Some(c)] = t.map(point) else {
            return Err(format!(
                "triangle {t:?} names a vertex beyond the {} read",
                vertices.len()
            ));
        };
        let cross = (b - a).cross(&(c - a));
        let extent = (b - a).norm().max((c - a).norm());
        if cross.norm() <= 1e-12 * extent * extent || extent == 0.0 {
            continue;
        }
        let n = if mirrored {
            -cross.normalize()
        } else {
            cross.normalize()
        };
        let down = n * depth;
        prisms.push(Shape::ConvexMesh {
            vertices: vec![a, b, c, a - down, b - down, c - down],
        });
    }
    if prisms.is_empty() {
        return Err("the mesh has no triangle of positive area".into());
    }
    Ok(prisms)
}

/// The convex hull of `vertices` scaled by `scale` (per axis), as a
/// [`Shape::ConvexMesh`] holding the hull's vertices only; also returns the hull's
/// triangles (indices into those vertices, outward by the right-hand rule).
///
/// # Errors
/// A message if the scale has a zero or non-finite factor, or if the scaled points are
/// degenerate (fewer than 4, or all in a plane).
pub fn convex_hull(
    vertices: &[Vector3<f64>],
    scale: Vector3<f64>,
) -> Result<(Shape, Vec<[u32; 3]>), String> {
    if !scale.iter().all(|s| s.is_finite() && *s != 0.0) {
        return Err(format!(
            "expected a scale with finite non-zero factors, found {:?}",
            scale.as_slice()
        ));
    }
    let points: Vec<PVec> = vertices
        .iter()
        .map(|v| {
            let s = v.component_mul(&scale);
            PVec::new(s.x, s.y, s.z)
        })
        .collect();
    let degenerate = || {
        format!(
            "the mesh's {} vertices are degenerate (fewer than 4, or in one plane): no solid \
             convex hull",
            vertices.len()
        )
    };
    let (hull, triangles) = try_convex_hull(&points).map_err(|_| degenerate())?;
    let hull: Vec<Vector3<f64>> = hull.iter().map(|p| Vector3::new(p.x, p.y, p.z)).collect();
    if hull.len() < 4 || triangles.len() < 4 || hull_volume(&hull, &triangles) <= 0.0 {
        return Err(degenerate());
    }
    Ok((Shape::ConvexMesh { vertices: hull }, triangles))
}

/// Volume (m³) enclosed by a closed triangle mesh with outward faces (divergence theorem:
/// the sum of the signed tetrahedra from the origin).
pub fn hull_volume(vertices: &[Vector3<f64>], triangles: &[[u32; 3]]) -> f64 {
    triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|i| vertices[i as usize]);
            a.dot(&b.cross(&c)) / 6.0
        })
        .sum()
}

/// Volume (m³), centroid (m) and inertia about the centroid per unit density (m⁵) of the
/// solid bounded by a closed triangle mesh with outward faces: the signed tetrahedra from the
/// first vertex, each with `∫ x xᵀ dV = det(a, b, c)/120 · (a aᵀ + b bᵀ + c cᵀ + s sᵀ)`,
/// `s = a + b + c`, for edges `a, b, c` from that vertex (Tonon 2004), summed, moved to the
/// centroid, and `I = tr(C) 1 − C`.
pub fn solid_mass_properties(
    vertices: &[Vector3<f64>],
    triangles: &[[u32; 3]],
) -> (f64, Vector3<f64>, Matrix3<f64>) {
    let Some(&o) = vertices.first() else {
        return (0.0, Vector3::zeros(), Matrix3::zeros());
    };
    let (mut volume, mut first, mut second) = (0.0, Vector3::zeros(), Matrix3::zeros());
    for t in triangles {
        let [a, b, c] = t.map(|i| vertices[i as usize] - o);
        let det = a.dot(&b.cross(&c));
        let sum = a + b + c;
        volume += det / 6.0;
        first += sum * (det / 24.0);
        second +=
            (a * a.transpose() + b * b.transpose() + c * c.transpose() + sum * sum.transpose())
                * (det / 120.0);
    }
    if volume <= 0.0 {
        return (volume, o, Matrix3::zeros());
    }
    let centroid = first / volume;
    let about_centroid = second - centroid * centroid.transpose() * volume;
    let inertia = Matrix3::identity() * about_centroid.trace() - about_centroid;
    (volume, o + centroid, inertia)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact arithmetic on small integers; the hull is quickhull's, in f64.
    const TOL: f64 = 1e-12;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("stiction-mesh-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch folder");
        dir
    }

    /// The 12 triangles of the box [0, a] × [0, b] × [0, c], outward.
    fn box_triangles(a: f32, b: f32, c: f32) -> Vec<[[f32; 3]; 3]> {
        let v = |i: usize| {
            [
                if i & 1 != 0 { a } else { 0.0 },
                if i & 2 != 0 { b } else { 0.0 },
                if i & 4 != 0 { c } else { 0.0 },
            ]
        };
        let quads = [
            [0, 2, 3, 1],
            [4, 5, 7, 6],
            [0, 1, 5, 4],
            [2, 6, 7, 3],
            [0, 4, 6, 2],
            [1, 3, 7, 5],
        ];
        quads
            .iter()
            .flat_map(|q| [[v(q[0]), v(q[1]), v(q[2])], [v(q[0]), v(q[2]), v(q[3])]])
            .collect()
    }

    /// An L of two unit-section boxes (volume 3), whose hull fills the notch (volume 3.5):
    /// decomposed, it is two or more solid parts inside the L's bounds whose volumes add up to
    /// about the L's, clearly less than the hull's.
    #[test]
    fn an_l_shape_decomposes_into_parts_without_its_notch() {
        let mut vertices = Vec::new();
        let mut triangles = Vec::new();
        let boxes = [
            (Vector3::zeros(), Vector3::new(2.0, 1.0, 1.0)),
            (Vector3::new(0.0, 0.0, 1.0), Vector3::new(1.0, 1.0, 1.0)),
        ];
        for (origin, size) in boxes {
            let base = vertices.len() as u32;
            for t in box_triangles(size.x as f32, size.y as f32, size.z as f32) {
                let mut face = [0u32; 3];
                for (k, v) in t.iter().enumerate() {
                    vertices.push(origin + Vector3::new(v[0] as f64, v[1] as f64, v[2] as f64));
                    face[k] = base + (vertices.len() as u32 - 1 - base);
                }
                triangles.push(face);
            }
        }
        let (hull, hull_triangles) = convex_hull(&vertices, Vector3::new(1.0, 1.0, 1.0)).unwrap();
        let Shape::ConvexMesh { vertices: hv } = &hull else {
            panic!("a hull")
        };
        assert!((hull_volume(hv, &hull_triangles) - 3.5).abs() < TOL);
        let parts =
            convex_decomposition(&vertices, &triangles, Vector3::new(1.0, 1.0, 1.0)).unwrap();
        assert!(parts.len() >= 2, "{} parts", parts.len());
        let mut total = 0.0;
        for part in &parts {
            let Shape::ConvexMesh { vertices: pv } = part else {
                panic!("convex parts")
            };
            assert!(pv.iter().all(|v| v.x > -1e-9
                && v.x < 2.0 + 1e-9
                && v.y > -1e-9
                && v.y < 1.0 + 1e-9
                && v.z > -1e-9
                && v.z < 2.0 + 1e-9));
            let (part_hull, t) = convex_hull(pv, Vector3::new(1.0, 1.0, 1.0)).unwrap();
            let Shape::ConvexMesh { vertices: ph } = &part_hull else {
                panic!("a hull")
            };
            total += hull_volume(ph, &t);
        }
        assert!(total > 2.7 && total < 3.3, "parts' volume {total}");
    }

    fn write_binary_stl(path: &Path, triangles: &[[[f32; 3]; 3]]) {
        let mesh: Vec<stl_io::Triangle> = triangles
            .iter()
            .map(|t| stl_io::Triangle {
                normal: stl_io::Normal::new([0.0, 0.0, 0.0]),
                vertices: t.map(stl_io::Vertex::new),
            })
            .collect();
        let mut file = std::fs::File::create(path).expect("a file");
        stl_io::write_stl(&mut file, mesh.iter()).expect("an STL");
    }

    fn write_ascii_stl(path: &Path, triangles: &[[[f32; 3]; 3]]) {
        let mut text = String::from("solid box\n");
        for t in triangles {
            text += "facet normal 0 0 0\nouter loop\n";
            for v in t {
                text += &format!("vertex {} {} {}\n", v[0], v[1], v[2]);
            }
            text += "endloop\nendfacet\n";
        }
        text += "endsolid box\n";
        std::fs::write(path, text).expect("a file");
    }

    fn hull_of(path: &Path, scale: Vector3<f64>) -> (Vec<Vector3<f64>>, Vec<[u32; 3]>) {
        let vertices = read_vertices(path).expect("a mesh");
        match convex_hull(&vertices, scale).expect("a hull") {
            (Shape::ConvexMesh { vertices }, triangles) => (vertices, triangles),
            (other, _) => panic!("expected a convex mesh, got {other:?}"),
        }
    }

    #[test]
    fn binary_and_ascii_stl_boxes_become_their_hull() {
        let dir = scratch("stl");
        let triangles = box_triangles(1.0, 2.0, 3.0);
        write_binary_stl(&dir.join("box.stl"), &triangles);
        write_ascii_stl(&dir.join("ascii.STL"), &triangles);
        for file in ["box.stl", "ascii.STL"] {
            let path = dir.join(file);
            assert_eq!(read_vertices(&path).expect("a mesh").len(), 8, "{file}");
            let (hull, faces) = hull_of(&path, Vector3::new(1.0, 1.0, 1.0));
            assert_eq!(hull.len(), 8, "{file}");
            assert!((hull_volume(&hull, &faces) - 6.0).abs() < TOL, "{file}");
            // Scaled by (2, 0.5, −1): volume |2 · 0.5 · −1| · 6, the hull mirrored in z.
            let (hull, faces) = hull_of(&path, Vector3::new(2.0, 0.5, -1.0));
            assert!((hull_volume(&hull, &faces) - 6.0).abs() < TOL, "{file}");
            let z_min = hull.iter().map(|v| v.z).fold(f64::INFINITY, f64::min);
            assert!((z_min + 3.0).abs() < TOL, "{file}: {z_min}");
        }
    }

    #[test]
    fn obj_tetrahedron_with_an_interior_point_keeps_four_vertices() {
        // A tetrahedron with legs 1, 2, 3 (volume 1) and an interior point the hull drops.
        let dir = scratch("obj");
        let path = dir.join("tet.obj");
        std::fs::write(
            &path,
            "mtllib missing.mtl\nv 0 0 0\nv 1 0 0\nv 0 2 0\nv 0 0 3\nv 0.1 0.1 0.1\n\
             f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\nf 1 2 5\n",
        )
        .expect("a file");
        assert_eq!(read_vertices(&path).expect("a mesh").len(), 5);
        let (hull, faces) = hull_of(&path, Vector3::new(1.0, 1.0, 1.0));
        assert_eq!((hull.len(), faces.len()), (4, 4));
        assert!((hull_volume(&hull, &faces) - 1.0).abs() < TOL);
    }

    #[test]
    fn bad_meshes_are_refused_with_the_reason() {
        let dir = scratch("bad");
        let flat = dir.join("flat.obj");
        std::fs::write(&flat, "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\n").expect("a file");
        let vertices = read_vertices(&flat).expect("a mesh");
        let e = convex_hull(&vertices, Vector3::new(1.0, 1.0, 1.0)).expect_err("flat");
        assert!(e.contains("degenerate"), "{e}");
        let e = convex_hull(&vertices, Vector3::new(1.0, 0.0, 1.0)).expect_err("zero scale");
        assert!(e.contains("non-zero"), "{e}");
        let garbage = dir.join("garbage.stl");
        std::fs::write(&garbage, "solid x\nfacet normal oops\n").expect("a file");
        let e = read_vertices(&garbage).expect_err("not an STL");
        assert!(e.to_string().contains("not a valid STL file"), "{e}");
        let e = read_vertices(&dir.join("none.stl")).expect_err("missing");
        assert!(e.message.starts_with("cannot read"), "{e}");
    }

    #[test]
    fn a_dae_uses_the_stl_of_the_same_name_in_the_collision_folder() {
        let dir = scratch("dae");
        std::fs::create_dir_all(dir.join("visual")).expect("folders");
        std::fs::create_dir_all(dir.join("collision")).expect("folders");
        write_binary_stl(
            &dir.join("collision/link.stl"),
            &box_triangles(1.0, 1.0, 1.0),
        );
        let (file, note) =
            collision_mesh_file(&dir.join("visual/link.dae")).expect("the STL beside it");
        assert_eq!(file, dir.join("collision/link.stl"));
        assert!(note.expect("a note").contains("using"));
        let e = collision_mesh_file(&dir.join("visual/base.dae")).expect_err("no STL");
        assert!(
            e.message.contains("COLLADA (.dae) meshes are not read"),
            "{e}"
        );
        assert!(e.message.contains("collision/base.stl"), "{e}");
        assert!(collision_mesh_file(&dir.join("link.ply")).is_err());
    }
}
