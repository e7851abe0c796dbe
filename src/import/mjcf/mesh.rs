//! Mesh assets and mesh geoms (MuJoCo XML reference, "asset/mesh" and "geom" of type mesh;
//! src/user/user_mesh.cc): `<asset><mesh name file scale>` with the files looked up in the
//! compiler's `meshdir` (or `assetdir`) relative to the model file, read as STL or OBJ
//! ([`crate::import::mesh`]) and reduced to their convex hull, which is what MuJoCo collides
//! with. The hull's mass properties (a solid of uniform density,
//! [`crate::import::mesh::solid_mass_properties`]) give the geom's
//! mass, centre of mass and inertia, as MuJoCo's `inertia="convex"`; for the convex meshes of
//! robot models that is also MuJoCo's default. The vertices stay in the file's coordinates in
//! the geom frame (MuJoCo re-centres them on their inertial frame and moves the geom frame
//! by as much, which places them the same).

#![allow(non_snake_case)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use nalgebra::{Matrix3, Vector3};

use crate::error::Result;
use crate::geometry::Shape;
use crate::import::mesh::{convex_hull, read_vertices, solid_mass_properties};
use crate::import::mjcf::defaults::Attrs;
use crate::import::mjcf::inertia::Mass;
use crate::import::mjcf::orientation::Compiler;
use crate::import::mjcf::xml::Element;
use crate::math::Pose;

/// The mesh assets of a model by name: the file and the per-axis scale.
#[derive(Debug, Default)]
pub(super) struct MeshAssets {
    meshes: HashMap<String, (PathBuf, Vector3<f64>)>,
}

impl MeshAssets {
    /// The `<mesh>` elements of the `<asset>` sections of `root`, files resolved against
    /// the compiler's mesh folder relative to the model file's folder.
    pub(super) fn collect(root: &Element, compiler: &Compiler) -> Result<Self> {
        let empty = Default::default();
        let base = root
            .origin
            .file
            .parent()
            .unwrap_or(Path::new(""))
            .to_path_buf();
        let folder = match &compiler.meshdir {
            Some(dir) => base.join(dir),
            None => base,
        };
        let mut meshes = HashMap::new();
        for asset in root.children_named("asset") {
            for mesh in asset.children_named("mesh") {
                let a = Attrs::plain(mesh, &empty);
                let Some(file) = a.str("file") else {
                    return Err(mesh.error(
                        Some("file"),
                        "a mesh file (inline `vertex` meshes are not supported)",
                        "no file",
                    ));
                };
                let scale = a.array::<3>("scale", "sx sy sz")?.unwrap_or([1.0; 3]);
                let name = match a.str("name") {
                    Some(n) => n.to_string(),
                    None => Path::new(file)
                        .file_stem()
                        .and_then(|s| s.to_str())
                        .unwrap_or(file)
                        .to_string(),
                };
                meshes.insert(name, (folder.join(file), Vector3::from(scale)));
            }
        }
        Ok(MeshAssets { meshes })
    }
}

/// The hull of mesh geom `a` as a [`Shape::ConvexMesh`], and its mass placed at `X_BG` in the
/// body when `counts_mass`: the geom's `mass`, or `density` (default 1000 kg/m³) times the
/// hull's volume.
pub(super) fn mesh_geom(
    a: &Attrs,
    assets: &MeshAssets,
    X_BG: &Pose<f64>,
    counts_mass: bool,
) -> Result<(Shape, Option<Mass>)> {
    let name = a.str("mesh").unwrap_or_default();
    let Some((path, scale)) = assets.meshes.get(name) else {
        return Err(a.error("mesh", "the name of a <mesh> asset", name));
    };
    let vertices = read_vertices(path)
        .map_err(|e| a.error("mesh", "a readable STL or OBJ mesh", e.to_string()))?;
    let (shape, triangles) = convex_hull(&vertices, *scale).map_err(|e| {
        a.error(
            "mesh",
            "a mesh with a solid convex hull",
            format!("{}: {e}", path.display()),
        )
    })?;
    if !counts_mass {
        return Ok((shape, None));
    }
    let (volume, centroid, unit_inertia) = match &shape {
        Shape::ConvexMesh { vertices } => solid_mass_properties(vertices, &triangles),
        _ => (0.0, Vector3::zeros(), Matrix3::zeros()),
    };
    if volume.is_nan() || volume <= 0.0 {
        return Err(a.error(
            "mesh",
            "a mesh with a solid convex hull",
            path.display().to_string(),
        ));
    }
    let mass = match a.f64("mass")? {
        Some(m) if m < 0.0 => return Err(a.error("mass", "a mass ≥ 0 (kg)", m.to_string())),
        Some(m) => m,
        None => {
            let density = a.f64_or("density", 1000.0)?;
            if density < 0.0 {
                return Err(a.error("density", "a density ≥ 0 (kg/m³)", density.to_string()));
            }
            density * volume
        }
    };
    let local = unit_inertia * (mass / volume);
    let com = centroid;
    Ok((
        shape,
        Some(Mass {
            mass,
            com: X_BG.p + X_BG.R * com,
            inertia_com: X_BG.R * local * X_BG.R.transpose(),
        }),
    ))
}
