//! Geoms (MuJoCo XML reference, "geom"; src/user/user_objects.cc, `mjCGeom::Compile`): the
//! type and `size` (or `fromto`, which sets the centre, the z axis from `to` to `from` and the
//! half-length, `size[2]` of a box or ellipsoid), the pose, `contype`/`conaffinity`, the first
//! `friction` coefficient (zero for `condim="1"`), and the mass where it counts. A plane belongs to the world or a
//! static body; a mesh geom is its mesh asset's convex hull ([`super::mesh`]); height-field
//! and SDF geoms are refused.
#![allow(non_snake_case)]

use nalgebra::Vector3;

use crate::collision::CollisionFilter;
use crate::error::Result;
use crate::geometry::Shape;
use crate::import::mjcf::context::Context;
use crate::import::mjcf::defaults::Attrs;
use crate::import::mjcf::inertia::{geom_mass, Mass};
use crate::import::mjcf::mesh::mesh_geom;
use crate::import::mjcf::orientation::{frame, pose, z_to};
use crate::import::mjcf::xml::Element;
use crate::math::Pose;

/// A geom read: its shape and pose, whether it collides, its filter and friction, and its
/// mass if it counts.
pub(super) struct Geom {
    pub name: Option<String>,
    pub shape: Shape,
    pub X_BG: Pose<f64>,
    pub collides: bool,
    pub filter: CollisionFilter,
    pub mu: f64,
    pub mass: Option<Mass>,
    pub element: Element,
}

/// Reads a geom; `None` for a visual-only mesh whose mass does not count.
pub(super) fn read_geom(
    a: &Attrs,
    cx: &mut Context,
    counts_mass: bool,
    on_static: bool,
) -> Result<Option<Geom>> {
    let el = a.element;
    let kind = a.keyword(
        "type",
        &[
            "plane",
            "hfield",
            "sphere",
            "capsule",
            "ellipsoid",
            "cylinder",
            "box",
            "mesh",
            "sdf",
        ],
        "sphere",
    )?;
    let contype = a.int("contype", 1)?;
    let conaffinity = a.int("conaffinity", 1)?;
    let (Ok(contype), Ok(conaffinity)) = (u32::try_from(contype), u32::try_from(conaffinity))
    else {
        return Err(el.error(
            Some("contype"),
            "contype and conaffinity between 0 and 2³²−1",
            format!("{contype}, {conaffinity}"),
        ));
    };
    let visual = contype == 0 && conaffinity == 0;
    if !visual && a.f64("margin")?.is_some_and(|m| m != 0.0) {
        // One contact margin per scene (the step's δ_margin): a geom's own is not applied.
        cx.skipped
            .add("geom margin (the scene's contact margin applies)");
    }
    let group = a.int("group", 0)?;
    let counts_mass = counts_mass
        && group >= cx.compiler.inertia_groups[0]
        && group <= cx.compiler.inertia_groups[1]
        && !(cx.compiler.discardvisual && visual);
    if matches!(kind, "hfield" | "sdf") || a.has("hfield") {
        return Err(el.error(
            Some("type"),
            "a primitive or mesh geom: height fields and SDFs are not supported",
            format!("{kind} geom"),
        ));
    }
    let is_mesh = kind == "mesh" || a.has("mesh");
    if is_mesh && visual && !counts_mass {
        cx.skipped.add("visual-only mesh geom");
        return Ok(None);
    }
    if a.bool("shellinertia")? == Some(true) {
        return Err(a.error(
            "shellinertia",
            "false (shell inertias are not supported)",
            "true",
        ));
    }
    if is_mesh {
        let X_BG = frame(a, cx.compiler)?;
        let (shape, mass) = mesh_geom(a, cx.meshes, &X_BG, counts_mass)?;
        return Ok(Some(Geom {
            name: el.attr("name").map(str::to_string),
            shape,
            X_BG,
            collides: !visual,
            filter: CollisionFilter {
                contype,
                conaffinity,
            },
            mu: friction(a, cx)?,
            mass,
            element: el.clone(),
        }));
    }
    let size = a.floats("size")?.unwrap_or_default();
    let fromto = a.array::<6>("fromto", "x1 y1 z1 x2 y2 z2")?;
    let half = fromto.map(|f| Vector3::new(f[0] - f[3], f[1] - f[4], f[2] - f[5]).norm() / 2.0);
    let need = |n: usize, what: &str| -> Result<Vec<f64>> {
        if size.len() < n {
            return Err(a.error(
                "size",
                format!("{n} positive numbers ({what})"),
                a.str("size").unwrap_or("nothing"),
            ));
        }
        if size[..n].iter().any(|x| *x <= 0.0) {
            return Err(a.error(
                "size",
                format!("positive sizes ({what})"),
                a.str("size").unwrap_or_default(),
            ));
        }
        Ok(size[..n].to_vec())
    };
    if fromto.is_some() && !matches!(kind, "capsule" | "cylinder" | "box" | "ellipsoid") {
        return Err(a.error(
            "fromto",
            "fromto only on a capsule, cylinder, box or ellipsoid",
            kind,
        ));
    }
    if let Some(h) = half {
        if h < 1e-14 {
            return Err(a.error(
                "fromto",
                "two distinct points",
                a.str("fromto").unwrap_or_default(),
            ));
        }
    }
    let shape = match (kind, half) {
        ("plane", _) => {
            if !on_static {
                return Err(el.error(
                    Some("type"),
                    "a plane in the world or a static body (MuJoCo's rule)",
                    "a plane on a moving body",
                ));
            }
            Shape::HalfSpace
        }
        ("sphere", _) => Shape::Sphere {
            radius: need(1, "radius")?[0],
        },
        ("capsule" | "cylinder", Some(h)) => {
            let r = need(1, "radius")?[0];
            if kind == "capsule" {
                Shape::Capsule {
                    radius: r,
                    half_length: h,
                }
            } else {
                Shape::Cylinder {
                    radius: r,
                    half_length: h,
                }
            }
        }
        ("capsule" | "cylinder", None) => {
            let s = need(2, "radius, half-length")?;
            if kind == "capsule" {
                Shape::Capsule {
                    radius: s[0],
                    half_length: s[1],
                }
            } else {
                Shape::Cylinder {
                    radius: s[0],
                    half_length: s[1],
                }
            }
        }
        ("box" | "ellipsoid", Some(h)) => {
            let s = need(1, "half-width")?;
            let v = Vector3::new(s[0], s[0], h);
            if kind == "box" {
                Shape::Box { half_extents: v }
            } else {
                Shape::Ellipsoid { semi_axes: v }
            }
        }
        (_, _) => {
            let s = need(3, "three half-sizes")?;
            let v = Vector3::new(s[0], s[1], s[2]);
            if kind == "box" {
                Shape::Box { half_extents: v }
            } else {
                Shape::Ellipsoid { semi_axes: v }
            }
        }
    };
    let X_BG = match fromto {
        Some(f) => {
            if a.array::<3>("pos", "x y z")?.is_some_and(|p| p != [0.0; 3]) {
                return Err(a.error(
                    "pos",
                    "pos or fromto, not both (MuJoCo refuses both)",
                    a.str("pos").unwrap_or_default(),
                ));
            }
            let from = Vector3::new(f[0], f[1], f[2]);
            let to = Vector3::new(f[3], f[4], f[5]);
            pose((from + to) / 2.0, &z_to(&(from - to)))
        }
        None => frame(a, cx.compiler)?,
    };
    let mass = if counts_mass {
        Some(geom_mass(a, &shape, &X_BG.R, X_BG.p)?)
    } else {
        None
    };
    let mu = friction(a, cx)?;
    Ok(Some(Geom {
        name: el.attr("name").map(str::to_string),
        shape,
        X_BG,
        collides: !visual,
        filter: CollisionFilter {
            contype,
            conaffinity,
        },
        mu,
        mass,
        element: el.clone(),
    }))
}

/// The friction coefficient μ of geom `a`: the first of `friction`, zero for `condim="1"`
/// (4 and 6 add torsional and rolling friction, which the point contact model here does not
/// have).
fn friction(a: &Attrs, cx: &mut Context) -> Result<f64> {
    let mu = a
        .floats("friction")?
        .and_then(|f| f.first().copied())
        .unwrap_or(1.0);
    if mu < 0.0 {
        return Err(a.error("friction", "a friction coefficient ≥ 0", mu.to_string()));
    }
    Ok(match a.int("condim", 3)? {
        1 => 0.0,
        3 => mu,
        4 | 6 => {
            cx.skipped
                .add("torsional or rolling friction (condim 4, 6)");
            mu
        }
        other => return Err(a.error("condim", "1, 3, 4 or 6", other.to_string())),
    })
}
