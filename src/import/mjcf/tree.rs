//! The body tree: `<worldbody>` and nested `<body>` elements become description bodies in
//! MuJoCo's order (depth first, joints in file order), so that `q` and `v` list the joints as
//! MuJoCo's `qpos` and `qvel` do.
//!
//! MuJoCo moves a body B with joints j₁…jₙ (anchors `p_k`, axes `a_k`, references `ref_k`, in
//! B's frame as moved by the joints before) by `F_k = F_{k−1} T(p_k) J_k(q_k − ref_k) T(−p_k)`
//! from its rest frame `F_0` (mj_kinematics, src/engine/engine_core_smooth.c). Here each joint
//! is the joint of one body (the multibody model's frame M is the child frame of its joint), so
//!
//! - joint k gets a body whose frame is `M_k = F_{k−1} T(p_k) J_k`, placed at
//!   `X_{M_{k−1} J_k} = T(p_k − p_{k−1}) J_k(−ref_k)` (`X_{P J_1} = X_{P F_0} T(p_1) J_1(−ref_1)`),
//!   so that its coordinate is MuJoCo's `qpos` itself (ranges, `springref` and equalities
//!   apply unchanged);
//! - the bodies of j₁…jₙ₋₁ are massless frames named `BODY:JOINT`; the last carries B's
//!   name, mass and geoms, expressed in `M_n = B T(p_n)`;
//! - a free joint sets B's pose in the world directly (`qpos = [x y z qw qx qy qz]`); it must
//!   be B's only joint, on a child of the (static) world;
//! - a body without joints is welded: to the world (its geoms join the world's, with their
//!   world pose) if every ancestor is static, else a fixed joint to its parent.
#![allow(non_snake_case)]

use std::collections::HashMap;

use nalgebra::{UnitQuaternion, Vector3};

use crate::contact::ContactParams;
use crate::error::Result;
use crate::import::mjcf::context::Context;
use crate::import::mjcf::defaults::{Attrs, Defaults};
use crate::import::mjcf::geom::{read_geom, Geom};
use crate::import::mjcf::inertia::{bound_and_check, combine, inertial, massless, Mass};
use crate::import::mjcf::joint::{non_negative, read_joint};
use crate::import::mjcf::orientation::{frame, InertiaFromGeom};
use crate::import::mjcf::xml::Element;
use crate::math::{Pose, SpatialInertia};
use crate::multibody::JointKind;
use crate::scene::{BodyDescription, BodyMotion, GeometryDescription, JointLimits, JointedBody};

/// Mass and principal moments below this make a moving body massless (MuJoCo's `mjMINVAL`).
const MIN_MASS: f64 = 1e-15;

/// A joint of the file, in MuJoCo's order.
#[derive(Clone, Debug, PartialEq)]
pub struct MjcfJoint {
    /// The joint's name in the file (empty if it has none).
    pub name: String,
    /// The joint as the model sees it: `revolute` for a hinge, `prismatic` for a slide, `free`.
    pub kind: JointKind,
    /// The description body it moves.
    pub body: String,
    /// Index of its first coordinate in `q`.
    pub q_index: usize,
    /// Index of its first velocity in `v`.
    pub v_index: usize,
    /// Its limits, if limited.
    pub limits: Option<JointLimits>,
    /// MuJoCo's `ref` (rad or m): the coordinate of the model's rest pose, `qpos0`.
    pub reference: f64,
}

/// What the tree walk gathers.
#[derive(Debug, Default)]
pub(super) struct Tree {
    /// Description bodies, parents first.
    pub bodies: Vec<BodyDescription>,
    /// Collision geometries.
    pub geometries: Vec<GeometryDescription>,
    /// Body pairs whose geometries never touch: each moving body and its parent, as MuJoCo's
    /// `filterparent` (on by default) excludes them; the world is never a parent here.
    pub excluded: Vec<(String, String)>,
    /// Joints in MuJoCo's order.
    pub joints: Vec<MjcfJoint>,
    /// Joint name → index in `joints`.
    pub joint_index: HashMap<String, usize>,
    /// Mass of the bodies welded to the world (kg), for `settotalmass`.
    pub static_mass: f64,
    nq: usize,
    nv: usize,
    /// Moving bodies to check for mass once their welded children are known: description
    /// index and the element, for the error.
    moving: Vec<(usize, Element)>,
}

/// The frame children hang from: a description body (`None` for the world) and the pose of
/// the MJCF parent body's frame in that body's frame.
#[derive(Clone, Debug)]
struct ParentFrame {
    body: Option<String>,
    X_FB: Pose<f64>,
}

/// An MJCF body with joints, for [`Tree::free_body`] and [`Tree::chain`].
struct Moving<'a> {
    /// Its name.
    name: &'a str,
    /// Its joint elements, in order.
    joints: &'a [&'a Element],
    /// The description body it hangs from; `None` for the world.
    parent: Option<String>,
    /// Its rest frame in the parent's frame.
    X_PB0: Pose<f64>,
    /// Its mass in its own frame.
    mass: Mass,
    /// The default class its joints take.
    childclass: &'a str,
}

impl Tree {
    /// Walks `<worldbody>`.
    pub fn walk(&mut self, world: &Element, cx: &mut Context) -> Result<()> {
        let frame = ParentFrame {
            body: None,
            X_FB: Pose::identity(),
        };
        for child in &world.children {
            match child.tag.as_str() {
                "geom" => {
                    let a = cx.defaults.resolve(child, "main")?;
                    if let Some(g) = read_geom(&a, cx, false, true)? {
                        self.add_geom(g, "world", &Pose::identity(), cx)?;
                    }
                }
                "body" => self.body(child, &frame, "main", cx)?,
                "joint" | "freejoint" => {
                    return Err(child.error(
                        None,
                        "joints inside bodies (the world cannot move)",
                        "a joint of the world body",
                    ))
                }
                _ => self.other(child, cx)?,
            }
        }
        for (index, element) in std::mem::take(&mut self.moving) {
            let has_mass = |i: usize| match &self.bodies[i].motion {
                BodyMotion::Jointed(b) => {
                    b.inertia.mass >= MIN_MASS
                        && b.inertia.inertia_com.symmetric_eigenvalues().min() >= MIN_MASS
                }
                BodyMotion::Prescribed { .. } => false,
            };
            let name = &self.bodies[index].name;
            let welded_child_has_mass =
                self.bodies
                    .iter()
                    .enumerate()
                    .any(|(i, b)| match &b.motion {
                        BodyMotion::Jointed(j) => {
                            j.joint == JointKind::Fixed
                                && j.parent.as_deref() == Some(name)
                                && has_mass(i)
                        }
                        BodyMotion::Prescribed { .. } => false,
                    });
            if !has_mass(index) && !welded_child_has_mass {
                return Err(element.error(
                    None,
                    "a moving body with mass and inertia (MuJoCo: \"mass and inertia of moving \
                     bodies must be larger than mjMINVAL\")",
                    "a massless body on a joint",
                ));
            }
        }
        Ok(())
    }

    /// Elements that do not change the dynamics are counted; the rest are errors.
    fn other(&mut self, el: &Element, cx: &mut Context) -> Result<()> {
        match el.tag.as_str() {
            "site" | "camera" | "light" => {
                cx.skipped.add(&el.tag);
                Ok(())
            }
            "inertial" => Ok(()),
            "frame" | "replicate" | "composite" | "flexcomp" | "attach" | "plugin" => Err(el
                .error(
                None,
                "bodies, joints, geoms, inertials, sites, cameras and lights (this importer does \
                 not expand MuJoCo's frame, replicate, composite, flexcomp, attach or plugin)",
                format!("<{}>", el.tag),
            )),
            other => Err(el.error(
                None,
                "an element MJCF allows in a body",
                format!("<{other}>"),
            )),
        }
    }

    fn body(
        &mut self,
        el: &Element,
        parent: &ParentFrame,
        childclass: &str,
        cx: &mut Context,
    ) -> Result<()> {
        let empty = Default::default();
        let a = Attrs::plain(el, &empty);
        let childclass = el.attr("childclass").unwrap_or(childclass).to_string();
        cx.defaults.class(&childclass, el, "childclass")?;
        if a.bool("mocap")? == Some(true) {
            return Err(a.error(
                "mocap",
                "a body that the dynamics moves (mocap bodies are not supported)",
                "true",
            ));
        }
        if a.f64_or("gravcomp", 0.0)? != 0.0 {
            return Err(a.error(
                "gravcomp",
                "0 (gravity compensation is not supported)",
                a.str("gravcomp").unwrap_or_default(),
            ));
        }
        let X_FB0 = parent.X_FB.compose(&frame(&a, cx.compiler)?);
        let name = match el.attr("name") {
            Some(n) => n.to_string(),
            None => format!("body{}", self.bodies.len()),
        };
        let joints: Vec<&Element> = el
            .children
            .iter()
            .filter(|c| c.tag == "joint" || c.tag == "freejoint")
            .collect();
        let explicit = el.children_named("inertial").next();
        let from_geoms = match cx.compiler.inertia_from_geom {
            InertiaFromGeom::Always => true,
            InertiaFromGeom::Auto => explicit.is_none(),
            InertiaFromGeom::Never => false,
        };
        let is_static = joints.is_empty() && parent.body.is_none();
        let mut geoms = Vec::new();
        for g in el.children_named("geom") {
            let ga = cx.defaults.resolve(g, &childclass)?;
            if let Some(geom) = read_geom(&ga, cx, from_geoms, is_static)? {
                geoms.push(geom);
            }
        }
        let mass = match (from_geoms, explicit) {
            (true, _) => combine(&geoms.iter().filter_map(|g| g.mass).collect::<Vec<_>>()),
            (false, Some(i)) => inertial(&Attrs::plain(i, &empty), cx.compiler)?,
            (false, None) => massless(),
        };
        let mass = bound_and_check(&mass, cx.compiler).map_err(|found| {
            el.error(
                None,
                "a physical inertia: mass ≥ 0, principal moments A + B ≥ C",
                found,
            )
        })?;

        if is_static {
            self.static_mass += mass.mass;
            for g in geoms {
                self.add_geom(g, "world", &X_FB0, cx)?;
            }
            let frame = ParentFrame {
                body: None,
                X_FB: X_FB0,
            };
            return self.children(el, &frame, &childclass, cx);
        }
        let parent_name = parent.body.clone();
        if let Some(p) = &parent_name {
            self.excluded.push((p.clone(), name.clone()));
        }
        let X_MB = if joints.is_empty() {
            self.weld(&name, parent_name, X_FB0, mass);
            Pose::identity()
        } else {
            let free = joints.iter().any(|j| is_free(j, cx.defaults, &childclass));
            let moving = Moving {
                name: &name,
                joints: &joints,
                parent: parent_name,
                X_PB0: X_FB0,
                mass,
                childclass: &childclass,
            };
            if free {
                self.free_body(moving, cx)?;
                Pose::identity()
            } else {
                self.chain(moving, cx)?
            }
        };
        if !joints.is_empty() {
            self.moving.push((self.bodies.len() - 1, el.clone()));
        }
        for g in geoms {
            self.add_geom(g, &name, &X_MB, cx)?;
        }
        let frame = ParentFrame {
            body: Some(name),
            X_FB: X_MB,
        };
        self.children(el, &frame, &childclass, cx)
    }

    fn children(
        &mut self,
        el: &Element,
        frame: &ParentFrame,
        childclass: &str,
        cx: &mut Context,
    ) -> Result<()> {
        for child in &el.children {
            match child.tag.as_str() {
                "body" => self.body(child, frame, childclass, cx)?,
                "geom" | "joint" | "freejoint" => {}
                _ => self.other(child, cx)?,
            }
        }
        Ok(())
    }

    /// A body with a free joint: its pose in the world is `q`.
    fn free_body(&mut self, body: Moving, cx: &mut Context) -> Result<()> {
        let Moving {
            name,
            joints,
            parent,
            X_PB0: X_WB0,
            mass,
            childclass,
        } = body;
        let joint = joints[0];
        if joints.len() > 1 {
            return Err(joints[1].error(
                None,
                "a free joint alone in its body (MuJoCo refuses more)",
                format!("{} joints in body \"{name}\"", joints.len()),
            ));
        }
        if parent.is_some() {
            return Err(joint.error(
                None,
                "a free joint in a body whose ancestors are all static (a child of the world)",
                "a free joint below a moving body",
            ));
        }
        let (damping, armature) = if joint.tag == "freejoint" {
            (0.0, 0.0)
        } else {
            let a = cx.defaults.resolve(joint, childclass)?;
            if a.f64_or("stiffness", 0.0)? != 0.0 {
                return Err(a.error(
                    "stiffness",
                    "0 (free-joint springs are not supported)",
                    a.str("stiffness").unwrap_or_default(),
                ));
            }
            (non_negative(&a, "damping")?, non_negative(&a, "armature")?)
        };
        let damping = if cx.passive { damping } else { 0.0 };
        let q = UnitQuaternion::from_rotation_matrix(&nalgebra::Rotation3::from_matrix_unchecked(
            X_WB0.R,
        ));
        let p = X_WB0.p;
        self.record_joint(joint.attr("name"), JointKind::Free, name, None, 0.0);
        self.bodies.push(BodyDescription {
            name: name.to_string(),
            motion: BodyMotion::Jointed(JointedBody {
                inertia: mass,
                joint: JointKind::Free,
                parent: None,
                X_PJ: Pose::identity(),
                damping: vec![damping; 6],
                q0: vec![p.x, p.y, p.z, q.w, q.i, q.j, q.k],
                v0: vec![0.0; 6],
                joint_name: None,
                limits: None,
                armature: vec![armature; 6],
                spring: None,
                friction: Vec::new(),
            }),
        });
        Ok(())
    }

    /// Hinges and slides, one body each; returns `X_MB`, the MJCF body's frame in the frame
    /// of the last.
    fn chain(&mut self, body: Moving, cx: &mut Context) -> Result<Pose<f64>> {
        let Moving {
            name,
            joints,
            mut parent,
            X_PB0,
            mass,
            childclass,
        } = body;
        let mut previous: Option<Vector3<f64>> = None;
        for (k, el) in joints.iter().enumerate() {
            let a = cx.defaults.resolve(el, childclass)?;
            let joint = read_joint(&a, cx)?;
            let nv = joint.kind.nv();
            let X_PJ = match previous {
                None => X_PB0.compose(&Pose::translation(joint.anchor)),
                Some(p) => Pose::translation(joint.anchor - p),
            }
            .compose(&joint.rest_offset);
            previous = Some(joint.anchor);
            let last = k + 1 == joints.len();
            let body_name = if last {
                name.to_string()
            } else {
                format!(
                    "{name}:{}",
                    el.attr("name")
                        .map_or_else(|| format!("joint{k}"), str::to_string)
                )
            };
            self.record_joint(
                el.attr("name"),
                joint.kind,
                &body_name,
                joint.limits,
                joint.reference,
            );
            let inertia = if last {
                let X_MB = Pose::translation(-joint.anchor);
                SpatialInertia {
                    mass: mass.mass,
                    com: X_MB.transform_point(&mass.com),
                    inertia_com: X_MB.R * mass.inertia_com * X_MB.R.transpose(),
                }
            } else {
                massless()
            };
            self.bodies.push(BodyDescription {
                name: body_name.clone(),
                motion: BodyMotion::Jointed(JointedBody {
                    inertia,
                    joint: joint.kind,
                    parent: parent.clone(),
                    X_PJ,
                    damping: vec![joint.damping; nv],
                    q0: joint.q0,
                    v0: vec![0.0; nv],
                    joint_name: el.attr("name").map(str::to_string),
                    limits: joint.limits,
                    armature: vec![joint.armature; nv],
                    spring: joint.spring,
                    friction: vec![joint.friction_loss; nv],
                }),
            });
            parent = Some(body_name);
        }
        Ok(Pose::translation(-previous.unwrap_or_default()))
    }

    /// A body welded to a moving parent.
    fn weld(&mut self, name: &str, parent: Option<String>, X_PJ: Pose<f64>, inertia: Mass) {
        self.bodies.push(BodyDescription {
            name: name.to_string(),
            motion: BodyMotion::Jointed(JointedBody {
                inertia,
                joint: JointKind::Fixed,
                parent,
                X_PJ,
                damping: Vec::new(),
                q0: Vec::new(),
                v0: Vec::new(),
                joint_name: None,
                limits: None,
                armature: Vec::new(),
                spring: None,
                friction: Vec::new(),
            }),
        });
    }

    fn record_joint(
        &mut self,
        name: Option<&str>,
        kind: JointKind,
        body: &str,
        limits: Option<JointLimits>,
        reference: f64,
    ) {
        if let Some(n) = name {
            self.joint_index.insert(n.to_string(), self.joints.len());
        }
        self.joints.push(MjcfJoint {
            name: name.unwrap_or_default().to_string(),
            kind,
            body: body.to_string(),
            q_index: self.nq,
            v_index: self.nv,
            limits,
            reference,
        });
        self.nq += kind.nq();
        self.nv += kind.nv();
    }

    fn add_geom(&mut self, g: Geom, body: &str, X_MB: &Pose<f64>, cx: &mut Context) -> Result<()> {
        if !g.collides {
            cx.skipped.add("visual-only geom");
            return Ok(());
        }
        if !cx.contact {
            cx.skipped.add("geom (contact disabled)");
            return Ok(());
        }
        let name = g
            .name
            .clone()
            .unwrap_or_else(|| format!("{body}:geom{}", self.geometries.len()));
        if self.geometries.iter().any(|other| other.name == name) {
            return Err(g.element.error(Some("name"), "a geom name used once", name));
        }
        self.geometries.push(GeometryDescription {
            name,
            body: body.to_string(),
            X_BG: X_MB.compose(&g.X_BG),
            shape: g.shape,
            contact: Some(ContactParams {
                mu: g.mu,
                ..ContactParams::default()
            }),
            hydroelastic: None,
            filter: Some(g.filter),
        });
        Ok(())
    }
}

/// Whether a joint element is free (`<freejoint>` or `type="free"`).
fn is_free(el: &Element, defaults: &Defaults, childclass: &str) -> bool {
    el.tag == "freejoint"
        || defaults
            .resolve(el, childclass)
            .map(|a| a.str("type") == Some("free"))
            .unwrap_or(false)
}
