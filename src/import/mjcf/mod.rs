//! MJCF (MuJoCo's XML model format) → [`SceneDescription`], following MuJoCo's compiler
//! (google-deepmind/mujoco: src/xml/xml_native_reader.cc for the schema, src/user/user_model.cc
//! and src/user/user_objects.cc for what the compiler computes) for the subset real models use.
//!
//! ```no_run
//! # fn main() -> stiction::error::Result<()> {
//! let model = stiction::import::mjcf::load(std::path::Path::new("half_cheetah.xml"))?;
//! if let Some(line) = model.report.summary() {
//!     eprintln!("{line}"); // "skipped (no effect on the dynamics here): 1× light, …"
//! }
//! let built = model.description.build()?;
//! # let _ = built;
//! # Ok(())
//! # }
//! ```
//!
//! Read and honoured: `<include>` (relative to the including file), `<compiler>` (`angle`,
//! `eulerseq`, `inertiafromgeom`, `autolimits`, `boundmass`, `boundinertia`, `settotalmass`,
//! `discardvisual`, `inertiagrouprange`), `<default>` classes with nesting, `class` and
//! `childclass`, `<option>` `timestep` and `gravity` and the `contact`, `constraint`,
//! `gravity`, `limit`, `equality` and `passive` disable flags, `<worldbody>` and `<body>` trees
//! with every orientation form (`orientation.rs`), `<inertial>` or inertia from geoms by density
//! (`inertia.rs`), hinge, slide and free joints (several per body; `tree.rs`) with `pos`,
//! `axis`, `ref`, `range`/`limited`, `damping`, `armature`, `stiffness`/`springref`,
//! `frictionloss`, `actuatorfrcrange` and `margin`, geoms (plane, sphere, capsule, cylinder,
//! box, ellipsoid, and mesh as its asset's convex hull: `mesh.rs`; `size`, `fromto`, `pos`,
//! orientation, `contype`/`conaffinity`, first `friction` coefficient as μ (none for
//! `condim="1"`), `mass`/`density`), `<asset><mesh>` with the compiler's `meshdir`,
//! `<equality><joint>` couplings
//! and `motor`, `position` and servo-like `general` actuators (`actuators.rs`).
//!
//! Skipped, counted in one summary line ([`ImportReport`]): lights, cameras, sites, visual-only
//! geoms (contype = conaffinity = 0; their mass still counts where MuJoCo counts it), textures,
//! materials, `custom`, `visual`, `statistic`, `size`, sensors, keyframes and the
//! solver options of `<option>`. Refused with the file, line and element: anything else that
//! changes the dynamics — ball-joint cone limits, springs and frictionloss, tendons, contact pairs and exclusions, actuators on
//! tendons or sites, composites and flexes, weld and connect equalities, fluid forces,
//! height-field and SDF geoms, inline (`vertex`) meshes —
//! and non-physical inertias (MuJoCo's triangle inequality on principal moments).
//!
//! Frames: `q` and `v` follow MuJoCo's joint order; a hinge's or slide's coordinate is MuJoCo's
//! `qpos`, a free joint's `q` is MuJoCo's `qpos` (`[x y z qw qx qy qz]`), but its `v` is
//! `[ω_W, v_W]` (world angular velocity first) where MuJoCo's `qvel` is `[v_W, ω_B]` (body-frame
//! angular velocity second); a ball joint's `q` is MuJoCo's `qpos` and its `v` the angular
//! velocity in the parent's frame, `R ω_B`.
//!
//! Files: `xml.rs` (element tree, includes, locations), `defaults.rs` (classes and typed
//! attributes), `orientation.rs` (compiler settings, frames), `inertia.rs` (masses),
//! `tree.rs` (the body tree), `joint.rs` (hinges, slides and balls), `geom.rs` (geoms), `mesh.rs`
//! (mesh assets and mesh geoms),
//! `actuators.rs` (actuators and equalities); `context.rs` (what the walk and the readers
//! share).

mod actuators;
mod context;
mod defaults;
mod geom;
mod inertia;
mod joint;
mod mesh;
mod orientation;
mod tree;
mod xml;

use std::path::Path;

use nalgebra::Vector3;

use crate::error::Result;
use crate::scene::{BodyMotion, SceneDescription};
use context::Context;
use defaults::{Attrs, Defaults};
use mesh::MeshAssets;
use orientation::Compiler;
pub use tree::MjcfJoint;
use tree::Tree;
use xml::{Element, SkipCounter};

/// An imported MJCF model: the scene, its joints in MuJoCo's order, and what was skipped.
#[derive(Clone, Debug)]
pub struct MjcfModel {
    /// The `model` attribute of `<mujoco>`, if any.
    pub name: Option<String>,
    /// The scene: bodies, collision geometries, actuators, couplers, δt and gravity.
    pub description: SceneDescription,
    /// The file's joints in MuJoCo's order, with their indices in `q` and `v`.
    pub joints: Vec<MjcfJoint>,
    /// What was read but has no effect here.
    pub report: ImportReport,
}

/// Elements read and skipped because they do not change the dynamics.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// `(kind, count)`, in the order first met (`("light", 2)`).
    pub skipped: Vec<(String, usize)>,
}

impl ImportReport {
    /// One line listing everything skipped; `None` if nothing was.
    pub fn summary(&self) -> Option<String> {
        if self.skipped.is_empty() {
            return None;
        }
        let items: Vec<String> = self
            .skipped
            .iter()
            .map(|(what, n)| format!("{n}× {what}"))
            .collect();
        Some(format!(
            "skipped (no effect on the dynamics here): {}",
            items.join(", ")
        ))
    }
}

/// Reads the MJCF file at `path`.
///
/// # Errors
/// [`crate::error::Error::Io`] if the file cannot be read; [`crate::error::Error::ProblemFile`]
/// with the file, line, element and what was expected for malformed XML, a bad value, or an
/// element that changes the dynamics and is not supported.
pub fn load(path: &Path) -> Result<MjcfModel> {
    convert(&xml::read_file(path)?)
}

/// Reads MJCF `text` as the file `path` (includes resolve relative to `path`'s folder).
///
/// # Errors
/// As [`load`].
pub fn parse(text: &str, path: &Path) -> Result<MjcfModel> {
    convert(&xml::parse_text(text, path, &mut Vec::new())?)
}

/// Sections that never change the dynamics.
const SKIPPED_SECTIONS: [&str; 6] = [
    "visual",
    "statistic",
    "size",
    "custom",
    "sensor",
    "keyframe",
];

fn convert(root: &Element) -> Result<MjcfModel> {
    let empty = Default::default();
    let mut compiler = Compiler::default();
    for c in root.children_named("compiler") {
        compiler.apply(&Attrs::plain(c, &empty))?;
    }
    let defaults = Defaults::collect(root)?;
    let mut skipped = SkipCounter::default();
    let mut description = SceneDescription::default();
    description.settings.dt = 0.002;
    let mut flags = Flags::default();
    for option in root.children_named("option") {
        read_option(option, &empty, &mut description, &mut flags, &mut skipped)?;
    }
    if !flags.gravity {
        description.gravity = Vector3::zeros();
    }
    for el in &root.children {
        match el.tag.as_str() {
            "compiler" | "option" | "default" | "worldbody" | "actuator" | "equality" => {}
            "asset" => {
                for asset in el.children.iter().filter(|a| a.tag != "mesh") {
                    skipped.add(&format!("{} asset", asset.tag));
                }
            }
            tag if SKIPPED_SECTIONS.contains(&tag) => skipped.add(&format!("<{tag}> section")),
            "contact" => {
                if let Some(pair) = el.children.iter().find(|c| c.tag != "exclude") {
                    return Err(pair.error(
                        None,
                        "only <exclude body1 body2> in <contact> (contact pairs are not supported)",
                        format!("<{}>", pair.tag),
                    ));
                }
            }
            "tendon" | "deformable" | "extension" => {
                if let Some(first) = el.children.first() {
                    return Err(first.error(
                        None,
                        "no tendons, contact pairs or exclusions, flexes or plugins (not supported)",
                        format!("<{}> in <{}>", first.tag, el.tag),
                    ));
                }
            }
            other => {
                return Err(el.error(None, "an MJCF section", format!("<{other}>")));
            }
        }
    }
    let meshes = MeshAssets::collect(root, &compiler)?;
    let mut tree = Tree::default();
    let mut cx = Context {
        compiler: &compiler,
        defaults: &defaults,
        skipped: &mut skipped,
        meshes: &meshes,
        contact: flags.contact && flags.constraint,
        limits: flags.limit && flags.constraint,
        passive: flags.passive,
    };
    for world in root.children_named("worldbody") {
        tree.walk(world, &mut cx)?;
    }
    if let Some(total) = compiler.settotalmass {
        set_total_mass(&mut tree, total);
    }
    description.actuators = actuators::actuators(root, &tree, &defaults, &compiler)?;
    if flags.equality && flags.constraint {
        description.couplers = actuators::couplers(root, &tree, &defaults)?;
    } else if root.children_named("equality").next().is_some() {
        skipped.add("equality section (disabled)");
    }
    description.bodies = std::mem::take(&mut tree.bodies);
    description.geometries = std::mem::take(&mut tree.geometries);
    description.excluded_collisions = std::mem::take(&mut tree.excluded);
    for contact in root.children_named("contact") {
        for exclude in contact.children_named("exclude") {
            let pair = (
                excluded_body(exclude, "body1", &description, root)?,
                excluded_body(exclude, "body2", &description, root)?,
            );
            description.excluded_collisions.push(pair);
        }
    }
    Ok(MjcfModel {
        name: root.attr("model").map(str::to_string),
        description,
        joints: tree.joints,
        report: ImportReport {
            skipped: skipped.entries(),
        },
    })
}

/// The description body of attribute `attr` of an `<exclude>`: a moving body by its name, a
/// body welded to the world as `world`.
fn excluded_body(
    exclude: &Element,
    attr: &str,
    description: &SceneDescription,
    root: &Element,
) -> Result<String> {
    fn declared(el: &Element, name: &str) -> bool {
        el.children
            .iter()
            .any(|c| (c.tag == "body" && c.attr("name") == Some(name)) || declared(c, name))
    }
    let name = exclude
        .attr(attr)
        .ok_or_else(|| exclude.error(Some(attr), "a body name", "nothing"))?;
    if description.bodies.iter().any(|b| b.name == name) {
        Ok(name.to_string())
    } else if name == "world" || declared(root, name) {
        Ok("world".to_string())
    } else {
        Err(exclude.error(
            Some(attr),
            "the name of a body of the model",
            format!("`{name}`"),
        ))
    }
}

/// MuJoCo's `settotalmass`: every mass and inertia scaled by one factor so that the bodies'
/// masses (static bodies included) add up to `total`.
fn set_total_mass(tree: &mut Tree, total: f64) {
    let moving: f64 = tree
        .bodies
        .iter()
        .map(|b| match &b.motion {
            BodyMotion::Jointed(j) => j.inertia.mass,
            BodyMotion::Prescribed { .. } => 0.0,
        })
        .sum();
    let current = moving + tree.static_mass;
    if current <= 0.0 {
        return;
    }
    let scale = total / current;
    for b in &mut tree.bodies {
        if let BodyMotion::Jointed(j) = &mut b.motion {
            j.inertia.mass *= scale;
            j.inertia.inertia_com *= scale;
        }
    }
}

/// `<option><flag …/>` settings that change the model (true = enabled).
struct Flags {
    contact: bool,
    constraint: bool,
    gravity: bool,
    limit: bool,
    equality: bool,
    passive: bool,
}

impl Default for Flags {
    fn default() -> Self {
        Flags {
            contact: true,
            constraint: true,
            gravity: true,
            limit: true,
            equality: true,
            passive: true,
        }
    }
}

fn read_option(
    option: &Element,
    empty: &defaults::Class,
    description: &mut SceneDescription,
    flags: &mut Flags,
    skipped: &mut SkipCounter,
) -> Result<()> {
    let a = Attrs::plain(option, empty);
    if let Some(dt) = a.f64("timestep")? {
        if dt <= 0.0 {
            return Err(a.error("timestep", "a positive time step (s)", dt.to_string()));
        }
        description.settings.dt = dt;
    }
    if let Some(g) = a.array::<3>("gravity", "x y z (m/s²)")? {
        description.gravity = Vector3::from(g);
    }
    for fluid in ["density", "viscosity"] {
        if a.f64_or(fluid, 0.0)? != 0.0 {
            return Err(a.error(
                fluid,
                "0 (fluid forces are not supported)",
                a.str(fluid).unwrap_or_default(),
            ));
        }
    }
    if a.array::<3>("wind", "x y z")?
        .is_some_and(|w| w != [0.0; 3])
    {
        return Err(a.error(
            "wind",
            "0 0 0 (fluid forces are not supported)",
            a.str("wind").unwrap_or_default(),
        ));
    }
    for (name, _) in &option.attrs {
        if !matches!(
            name.as_str(),
            "timestep" | "gravity" | "density" | "viscosity" | "wind"
        ) {
            skipped.add(&format!("option {name}"));
        }
    }
    for flag in &option.children {
        if flag.tag != "flag" {
            return Err(flag.error(None, "<flag> inside <option>", format!("<{}>", flag.tag)));
        }
        let f = Attrs::plain(flag, empty);
        for (name, _) in &flag.attrs {
            let enabled = f.keyword(name, &["enable", "disable"], "enable")? == "enable";
            let slot = match name.as_str() {
                "contact" => &mut flags.contact,
                "constraint" => &mut flags.constraint,
                "gravity" => &mut flags.gravity,
                "limit" => &mut flags.limit,
                "equality" => &mut flags.equality,
                "passive" => &mut flags.passive,
                "actuation" if !enabled => {
                    return Err(f.error(
                        name,
                        "enable (a model without actuation is not supported)",
                        "disable",
                    ));
                }
                _ => {
                    skipped.add(&format!("option flag {name}"));
                    continue;
                }
            };
            *slot = enabled;
        }
    }
    Ok(())
}
