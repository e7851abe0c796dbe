//! URDF → [`SceneDescription`] (ROS's Unified Robot Description Format,
//! <http://wiki.ros.org/urdf/XML>, read with `urdf-rs`; `roxmltree` parses the same text once
//! more for the line of every element an error names and for what `urdf-rs` fills in with
//! defaults, such as whether a `<limit>` was written at all).
//!
//! The link tree. Every link but one (the root) is the child of exactly one joint; the
//! bodies follow a depth-first walk from the root, a link's child joints in file order. A
//! link on a moving joint becomes a body of the multibody tree; a link on a fixed joint is
//! merged into its parent's body, as Pinocchio and MuJoCo's URDF import do (a hand, a
//! massless tool frame such as `panda_hand_tcp`): its inertia (if any) adds to the
//! parent's, its collision geometries and children hang from the parent at the link's fixed
//! placement. A fixed base is the root on a fixed joint to the world at
//! [`ImportOptions::pose`], its own body if its inertia is positive definite (so that it
//! keeps its name), merged into the world otherwise; a floating base is the root on a free
//! joint. A root link called `world` (ROS's convention for a robot bolted down by its own
//! fixed joint) is the world itself, and refuses a floating base.
//!
//! A sub-tree ([`ImportOptions::root`]): only the named link and the links below it are
//! imported, the link in the root's place (a gripper out of an arm's file); every link must
//! still hang from the file's root. A parent body ([`ImportOptions::parent`]): a fixed base
//! is welded to that body of the scene instead of the world, on its own body (which needs a
//! mass); a floating base refuses one.
//!
//! Frames. A joint's `<origin>` places the child link frame in the parent link frame at
//! q = 0: `X_PC = (R, p)` with `p = xyz` and URDF's fixed-axis roll-pitch-yaw
//! `R = Rz(yaw) Ry(pitch) Rx(roll)`; the joint frame J of the model is that child frame
//! (for a planar joint J is turned so that its z-axis is the URDF axis, the plane's normal,
//! since the model's planar joint moves in J's xy-plane). The joint axis (default x) is
//! normalized. An `<inertial>` gives the mass, the centre of mass `xyz` in the link frame
//! and the inertia about the centre of mass in the inertial frame `rpy`:
//! `I_L = R I Rᵀ` in link axes; merged inertias add by the parallel-axis theorem
//! `I_c = Σ_k (I_k + m_k (‖d_k‖² 1 − d_k d_kᵀ))`, `d_k = c_k − c`.
//!
//! Joints: revolute and continuous → [`JointKind::Revolute`], prismatic →
//! [`JointKind::Prismatic`], fixed → [`JointKind::Fixed`] (or merged), floating →
//! [`JointKind::Free`] (`q0` at the origin pose), planar → [`JointKind::Planar`], spherical →
//! [`JointKind::Ball`] (`q0` the identity quaternion; its `<dynamics friction>` is refused).
//! `<dynamics damping>` is the model's viscous
//! damping of every velocity of the joint; `friction`, `<limit>` and `<mimic>` become
//! [`JointedBody::friction`], [`JointLimits`] and [`CouplerDescription`]. In `<limit>`,
//! URDF's `velocity` and `effort` of 0 (files use it as "not given") mean no limit; a
//! continuous joint has no position limit. Every joint starts at q = 0.
//!
//! Geometry: each `<collision>` element is a geometry on its link's body at
//! `X_BG = X_BL · X_LG` (`<origin>` of the collision), named `PREFIX LINK` or, for links with
//! several, `PREFIX LINK:K` (K from 0 in file order). Box (`size` → half extents), cylinder
//! (along z in both conventions; `length` → half length), sphere, capsule (`length` of the
//! core segment) and mesh (its convex hull, [`super::mesh`]) map to [`Shape`]s. `<visual>`,
//! `<material>`, `<gazebo>` and `<transmission>` do not change the dynamics and are not
//! read. Every parent–child pair of bodies is listed in
//! [`SceneDescription::excluded_collisions`] (their meshes overlap at the joint; MuJoCo
//! excludes such pairs too).
//!
//! Checks (each an [`Error::ModelFile`](crate::error::Error::ModelFile) naming file, line, element and what was expected):
//! malformed XML, numbers that do not parse, duplicate names, a joint naming a missing link,
//! a link with two parent joints, not exactly one root, a joint loop; a negative or
//! non-finite mass, a massless link with inertia, an inertia that is not positive
//! semi-definite or violates the triangle inequality `I₁ + I₂ ≥ I₃` of its principal moments
//! (as MuJoCo's compiler checks), a moving link without mass or with a singular inertia; a
//! zero axis, `lower > upper`, negative damping or friction; a mimic of a missing, fixed or
//! multi-velocity joint, or a mimic loop; a missing mesh (with the places searched). A
//! `<mimic>` on a fixed joint is ignored with a note.
#![allow(non_snake_case)]

use std::collections::HashMap;
use std::path::Path;

use nalgebra::{Matrix3, Rotation3, UnitQuaternion, Vector3};
use roxmltree::{Document, Node};

use super::{mesh, model_error, Base, ImportOptions, ImportedModel};
use crate::error::Result;
use crate::geometry::Shape;
use crate::math::{Pose, SpatialInertia};
use crate::multibody::JointKind;
use crate::scene::{
    BodyDescription, BodyMotion, CouplerDescription, GeometryDescription, JointLimits, JointedBody,
    SceneDescription,
};
use xml::Source;

/// Relative tolerance of the inertia checks (positive semi-definite, triangle inequality),
/// relative to the trace: files print inertias with 6–9 significant digits.
const INERTIA_TOL: f64 = 1e-9;

/// Reads the URDF file at `path` (see the module doc).
///
/// # Errors
/// [`Error::ModelFile`](crate::error::Error::ModelFile) for a file that cannot be read or any check of the module doc.
pub fn read_urdf(path: &Path, options: &ImportOptions) -> Result<ImportedModel> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| model_error(path, None, "(file)", format!("cannot read: {e}")))?;
    parse_urdf(&text, path, options)
}

/// Imports the URDF `text`; `path` names it in errors and anchors relative mesh paths and
/// package look-ups.
///
/// # Errors
/// [`Error::ModelFile`](crate::error::Error::ModelFile) for any check of the module doc.
pub fn parse_urdf(text: &str, path: &Path, options: &ImportOptions) -> Result<ImportedModel> {
    let doc = Document::parse(text).map_err(|e| {
        model_error(
            path,
            Some(e.pos().row as usize),
            "(XML)",
            format!("malformed XML: {e}"),
        )
    })?;
    let source = Source { path, doc: &doc };
    let root = doc.root_element();
    if root.tag_name().name() != "robot" {
        return Err(source.error(root, "expected a URDF file: a <robot> root element"));
    }
    source.check_attributes(root)?;
    let robot = urdf_rs::read_from_string(text)
        .map_err(|e| source.error(root, format!("not a valid URDF: {e}")))?;
    Importer::new(&source, &robot, options)?.run()
}

/// Where a link's frame is: on the world or on a body of the description, at `X_BL`.
#[derive(Clone, Copy, Debug)]
struct LinkFrame {
    /// Index in the description's bodies; `None` for the world.
    body: Option<usize>,
    /// Pose of the link frame in that body's frame (or the world).
    X_BL: Pose<f64>,
}

/// A mass with its centre (m) and rotational inertia about it (kg·m²), both in one frame.
#[derive(Clone, Copy, Debug)]
struct MassPart {
    mass: f64,
    com: Vector3<f64>,
    inertia: Matrix3<f64>,
}

impl MassPart {
    /// This part seen from a frame in which its own frame sits at `X`.
    fn transformed(&self, X: &Pose<f64>) -> MassPart {
        MassPart {
            mass: self.mass,
            com: X.transform_point(&self.com),
            inertia: X.R * self.inertia * X.R.transpose(),
        }
    }
}

/// The sum of `parts` (parallel-axis theorem); `None` without mass.
fn combine(parts: &[MassPart]) -> Option<SpatialInertia<f64>> {
    let mass: f64 = parts.iter().map(|p| p.mass).sum();
    if mass <= 0.0 {
        return None;
    }
    let com = parts.iter().map(|p| p.com * p.mass).sum::<Vector3<f64>>() / mass;
    let inertia = parts
        .iter()
        .map(|p| {
            let d = p.com - com;
            p.inertia + (Matrix3::identity() * d.norm_squared() - d * d.transpose()) * p.mass
        })
        .sum::<Matrix3<f64>>();
    Some(SpatialInertia {
        mass,
        com,
        // Symmetric up to rounding; the model checks symmetry.
        inertia_com: (inertia + inertia.transpose()) * 0.5,
    })
}

/// Whether `I` is positive definite (Cholesky succeeds).
fn positive_definite(I: &Matrix3<f64>) -> bool {
    I.cholesky().is_some()
}

/// URDF's fixed-axis roll-pitch-yaw rotation `Rz(y) Ry(p) Rx(r)`.
fn rpy_matrix(rpy: [f64; 3]) -> Matrix3<f64> {
    // nalgebra's from_euler_angles(roll, pitch, yaw) is exactly Rz(yaw) Ry(pitch) Rx(roll).
    Rotation3::from_euler_angles(rpy[0], rpy[1], rpy[2]).into_inner()
}

fn pose_of(origin: &urdf_rs::Pose) -> Pose<f64> {
    Pose {
        R: rpy_matrix(origin.rpy.0),
        p: Vector3::from(origin.xyz.0),
    }
}

/// A rotation taking z to the unit vector `n` (the shortest one; a half turn about x for
/// `n = −z`).
fn z_to(n: &Vector3<f64>) -> Matrix3<f64> {
    Rotation3::rotation_between(&Vector3::z(), n)
        .unwrap_or_else(|| Rotation3::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI))
        .into_inner()
}

struct Importer<'s, 'a, 'input> {
    source: &'s Source<'a, 'input>,
    robot: &'s urdf_rs::Robot,
    options: &'s ImportOptions,
    /// Link index by name.
    links: HashMap<&'s str, usize>,
    /// Joint index by name.
    joints: HashMap<&'s str, usize>,
    /// The joint whose child each link is.
    parent_joint: Vec<Option<usize>>,
    /// Each link's child joints in file order.
    child_joints: Vec<Vec<usize>>,
    /// Each link's frame, once placed.
    frames: Vec<Option<LinkFrame>>,
    /// The body made for each joint (moving or kept fixed), by joint index.
    joint_body: Vec<Option<usize>>,
    bodies: Vec<BodyDescription>,
    /// The links whose mass each body carries, with the first link (the body's own).
    body_parts: Vec<(usize, Vec<MassPart>)>,
    geometries: Vec<GeometryDescription>,
    notes: Vec<String>,
}

impl<'s, 'a, 'input> Importer<'s, 'a, 'input> {
    fn new(
        source: &'s Source<'a, 'input>,
        robot: &'s urdf_rs::Robot,
        options: &'s ImportOptions,
    ) -> Result<Self> {
        let mut links = HashMap::new();
        for (i, link) in robot.links.iter().enumerate() {
            if links.insert(link.name.as_str(), i).is_some() {
                return Err(source.error(
                    source.named("link", &link.name),
                    "duplicate link name: names must be unique",
                ));
            }
        }
        let mut joints = HashMap::new();
        let mut parent_joint = vec![None; robot.links.len()];
        let mut child_joints = vec![Vec::new(); robot.links.len()];
        for (j, joint) in robot.joints.iter().enumerate() {
            let node = source.named("joint", &joint.name);
            if joints.insert(joint.name.as_str(), j).is_some() {
                return Err(source.error(node, "duplicate joint name: names must be unique"));
            }
            let find = |link: &str, role: &str| {
                links.get(link).copied().ok_or_else(|| {
                    source.error(
                        node,
                        format!("{role} link `{link}` is not a <link> of the file"),
                    )
                })
            };
            let parent = find(&joint.parent.link, "parent")?;
            let child = find(&joint.child.link, "child")?;
            if let Some(other) = parent_joint[child] {
                let other: &urdf_rs::Joint = &robot.joints[other];
                return Err(source.error(
                    node,
                    format!(
                        "link `{}` is already the child of joint `{}`: a link has one parent",
                        joint.child.link, other.name
                    ),
                ));
            }
            parent_joint[child] = Some(j);
            child_joints[parent].push(j);
        }
        Ok(Importer {
            source,
            robot,
            options,
            links,
            joints,
            parent_joint,
            child_joints,
            frames: vec![None; robot.links.len()],
            joint_body: vec![None; robot.joints.len()],
            bodies: Vec::new(),
            body_parts: Vec::new(),
            geometries: Vec::new(),
            notes: Vec::new(),
        })
    }

    fn link_node(&self, link: usize) -> Node<'a, 'input> {
        self.source.named("link", &self.robot.links[link].name)
    }

    fn joint_node(&self, joint: usize) -> Node<'a, 'input> {
        self.source.named("joint", &self.robot.joints[joint].name)
    }

    fn name(&self, name: &str) -> String {
        format!("{}{name}", self.options.prefix)
    }

    fn run(mut self) -> Result<ImportedModel> {
        let roots: Vec<usize> = (0..self.robot.links.len())
            .filter(|&l| self.parent_joint[l].is_none())
            .collect();
        let root = match roots.as_slice() {
            [root] => *root,
            [] => {
                return Err(self.source.error(
                    self.source.doc.root_element(),
                    if self.robot.links.is_empty() {
                        "expected at least one <link>".to_string()
                    } else {
                        "every link is the child of a joint: the joints form a loop".to_string()
                    },
                ))
            }
            [_, second, ..] => {
                let names: Vec<&str> = roots
                    .iter()
                    .map(|&l| self.robot.links[l].name.as_str())
                    .collect();
                return Err(self.source.error(
                    self.link_node(*second),
                    format!(
                        "expected one root link (a link that is no joint's child), found {}: \
                         {}",
                        names.len(),
                        names.join(", ")
                    ),
                ));
            }
        };
        // Every link hangs from the file's root (else the joints form a loop), whichever
        // sub-tree is imported.
        let from_root = self.subtree(root);
        if let Some(unreachable) = from_root.iter().position(|&reached| !reached) {
            return Err(self.source.error(
                self.link_node(unreachable),
                "the link is not connected to the root: its joints form a loop",
            ));
        }
        let root = match &self.options.root {
            None => root,
            Some(name) => *self.links.get(name.as_str()).ok_or_else(|| {
                self.source.error(
                    self.source.doc.root_element(),
                    format!(
                        "root link `{name}` (the sub-tree to import) is not a <link> of the file"
                    ),
                )
            })?,
        };
        let imported = self.subtree(root);
        let mass_parts: Vec<Option<MassPart>> = (0..self.robot.links.len())
            .map(|l| self.link_mass(l))
            .collect::<Result<_>>()?;

        // The root on the world, or on the scene's body `parent`. A root link called `world`
        // (the ROS convention for a robot bolted down by its own fixed joint) is the world
        // itself.
        let world_root = self.robot.links[root].name == "world";
        match (self.options.base, &self.options.parent) {
            (Base::Fixed, Some(parent)) if world_root => {
                return Err(self.source.error(
                    self.link_node(root),
                    format!(
                        "the root link is `world`: it cannot be welded to body `{parent}`; \
                         import the sub-tree below it (`root`)"
                    ),
                ))
            }
            (Base::Fixed, Some(parent)) => {
                let parent = parent.clone();
                self.add_body(
                    root,
                    None,
                    JointKind::Fixed,
                    None,
                    self.options.pose,
                    Vec::new(),
                    &mass_parts,
                )?;
                if let BodyMotion::Jointed(j) = &mut self.bodies[0].motion {
                    j.parent = Some(parent);
                }
            }
            (Base::Fixed, None) if world_root => {
                self.place_link(root, None, self.options.pose, &mass_parts)
            }
            (Base::Fixed, None) => {
                self.place_fixed(root, None, self.options.pose, None, &mass_parts)?
            }
            (Base::Floating, Some(parent)) => {
                return Err(self.source.error(
                    self.link_node(root),
                    format!(
                        "a floating base joins the world: it cannot hang from body `{parent}` \
                         (a model with a parent body has a fixed base)"
                    ),
                ))
            }
            (Base::Floating, None) if world_root => {
                return Err(self.source.error(
                    self.link_node(root),
                    "the root link is `world`: the file fixes the robot to the world; import \
                     it with a fixed base",
                ))
            }
            (Base::Floating, None) => {
                let q = UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix(
                    &self.options.pose.R,
                ));
                let p = self.options.pose.p;
                self.add_body(
                    root,
                    None,
                    JointKind::Free,
                    None,
                    Pose::identity(),
                    vec![p.x, p.y, p.z, q.w, q.i, q.j, q.k],
                    &mass_parts,
                )?;
            }
        }
        // Depth first, child joints in file order.
        let mut stack: Vec<usize> = self.child_joints[root].iter().rev().copied().collect();
        while let Some(j) = stack.pop() {
            let child = self.links[self.robot.joints[j].child.link.as_str()];
            self.place_joint(j, &mass_parts)?;
            stack.extend(self.child_joints[child].iter().rev());
        }
        let bodies = self.finish_bodies()?;
        for link in (0..self.robot.links.len()).filter(|&l| imported[l]) {
            self.add_geometries(link)?;
        }
        let couplers = self.couplers(root, &imported)?;
        // Parent and child links overlap at their joint: they never touch (MuJoCo's rule).
        let excluded_collisions = bodies
            .iter()
            .filter_map(|b| match &b.motion {
                BodyMotion::Jointed(j) => j.parent.clone().map(|p| (p, b.name.clone())),
                BodyMotion::Prescribed { .. } => None,
            })
            .collect();
        Ok(ImportedModel {
            description: SceneDescription {
                bodies,
                geometries: self.geometries,
                couplers,
                excluded_collisions,
                ..SceneDescription::default()
            },
            notes: self.notes,
        })
    }

    /// Which links are `link` or below it (by link index).
    fn subtree(&self, link: usize) -> Vec<bool> {
        let mut reached = vec![false; self.robot.links.len()];
        let mut stack = vec![link];
        while let Some(l) = stack.pop() {
            if !std::mem::replace(&mut reached[l], true) {
                stack.extend(
                    self.child_joints[l]
                        .iter()
                        .map(|&j| self.links[self.robot.joints[j].child.link.as_str()]),
                );
            }
        }
        reached
    }

    /// The link's own mass, centre and inertia in link axes; `None` without mass.
    fn link_mass(&self, l: usize) -> Result<Option<MassPart>> {
        let link = &self.robot.links[l];
        let node = Source::child(self.link_node(l), "inertial").unwrap_or(self.link_node(l));
        let m = link.inertial.mass.value;
        let i = &link.inertial.inertia;
        let I = Matrix3::new(
            i.ixx, i.ixy, i.ixz, i.ixy, i.iyy, i.iyz, i.ixz, i.iyz, i.izz,
        );
        if m < 0.0 {
            return Err(self.source.error(
                node,
                format!("link `{}`: expected a mass ≥ 0 (kg), found {m}", link.name),
            ));
        }
        if m == 0.0 {
            if I.iter().any(|x| *x != 0.0) {
                return Err(self.source.error(
                    node,
                    format!(
                        "link `{}`: no mass but a non-zero inertia: give it a mass or zero the \
                     inertia",
                        link.name
                    ),
                ));
            }
            return Ok(None);
        }
        let moments = I.symmetric_eigenvalues();
        let tol = INERTIA_TOL * I.trace().abs();
        let (a, b, c) = (moments[0], moments[1], moments[2]);
        if moments.min() < -tol {
            return Err(self.source.error(
                node,
                format!(
                    "link `{}`: inertia is not positive semi-definite (principal moments {a:.6e}, \
                     {b:.6e}, {c:.6e} kg·m²)",
                    link.name
                ),
            ));
        }
        if a + b < c - tol || a + c < b - tol || b + c < a - tol {
            return Err(self.source.error(
                node,
                format!(
                    "link `{}`: inertia violates the triangle inequality of its principal moments \
                     ({a:.6e}, {b:.6e}, {c:.6e} kg·m²): no rigid body has it",
                    link.name
                ),
            ));
        }
        let X_LI = pose_of(&link.inertial.origin);
        Ok(Some(
            MassPart {
                mass: m,
                com: Vector3::zeros(),
                inertia: I,
            }
            .transformed(&X_LI),
        ))
    }

    /// Adds a body for `link` on `joint` (`None`: the root), hanging from `parent` (a body
    /// index; `None` for the world) at `X_PJ`.
    #[allow(clippy::too_many_arguments)]
    fn add_body(
        &mut self,
        link: usize,
        parent: Option<usize>,
        kind: JointKind,
        joint: Option<usize>,
        X_PJ: Pose<f64>,
        q0: Vec<f64>,
        mass_parts: &[Option<MassPart>],
    ) -> Result<()> {
        let index = self.bodies.len();
        // The body frame is the joint frame; a planar joint's is turned from the link's.
        let X_BL = match (kind, joint) {
            (JointKind::Planar, Some(j)) => {
                let axis = Vector3::from(self.robot.joints[j].axis.xyz.0).normalize();
                Pose {
                    R: z_to(&axis).transpose(),
                    p: Vector3::zeros(),
                }
            }
            _ => Pose::identity(),
        };
        let urdf_joint = joint.map(|j| &self.robot.joints[j]);
        let dynamics = urdf_joint
            .and_then(|j| j.dynamics.clone())
            .unwrap_or_default();
        let node = joint.map_or_else(|| self.link_node(link), |j| self.joint_node(j));
        for (what, value) in [
            ("damping", dynamics.damping),
            ("friction", dynamics.friction),
        ] {
            if value < 0.0 {
                return Err(self.source.error(
                    node,
                    format!("<dynamics> {what}: expected a value ≥ 0, found {value}"),
                ));
            }
        }
        if kind == JointKind::Ball && dynamics.friction > 0.0 {
            return Err(self.source.error(
                node,
                format!(
                    "<dynamics> friction: expected 0 on a spherical joint (a Coulomb box per \
                     axis depends on the frame and is not modelled), found {}",
                    dynamics.friction
                ),
            ));
        }
        let nv = kind.nv();
        let limits = match joint {
            Some(j) => self.limits(j, kind)?,
            None => None,
        };
        self.bodies.push(BodyDescription {
            name: self.name(&self.robot.links[link].name),
            motion: BodyMotion::Jointed(JointedBody {
                // Replaced by the merged links' total in `finish_bodies`.
                inertia: SpatialInertia {
                    mass: 0.0,
                    com: Vector3::zeros(),
                    inertia_com: Matrix3::zeros(),
                },
                joint: kind,
                parent: parent.map(|p| self.bodies[p].name.clone()),
                X_PJ,
                damping: vec![dynamics.damping; nv],
                q0: if q0.is_empty() {
                    vec![0.0; kind.nq()]
                } else {
                    q0
                },
                v0: vec![0.0; nv],
                armature: vec![0.0; nv],
                spring: None,
                joint_name: urdf_joint.map(|j| self.name(&j.name)),
                limits,
                friction: if dynamics.friction > 0.0 {
                    vec![dynamics.friction; nv]
                } else {
                    Vec::new()
                },
            }),
        });
        self.body_parts.push((link, Vec::new()));
        if let Some(j) = joint {
            self.joint_body[j] = Some(index);
        }
        self.place_link(link, Some(index), X_BL, mass_parts);
        Ok(())
    }

    /// Records `link`'s frame and adds its mass to the body there.
    fn place_link(
        &mut self,
        link: usize,
        body: Option<usize>,
        X_BL: Pose<f64>,
        mass_parts: &[Option<MassPart>],
    ) {
        self.frames[link] = Some(LinkFrame { body, X_BL });
        if let (Some(b), Some(part)) = (body, mass_parts[link]) {
            self.body_parts[b].1.push(part.transformed(&X_BL));
        }
    }

    /// `link` on a fixed joint (`None`: the root on the world) whose child frame sits at
    /// `X_HO` in the frame of `host` (a body, or the world): merged into a host body (as
    /// Pinocchio and MuJoCo's URDF import do); on the world, its own body if its inertia is
    /// positive definite (the base keeps its name), merged into the world otherwise.
    fn place_fixed(
        &mut self,
        link: usize,
        host: Option<usize>,
        X_HO: Pose<f64>,
        joint: Option<usize>,
        mass_parts: &[Option<MassPart>],
    ) -> Result<()> {
        let own = host.is_none() && mass_parts[link].is_some_and(|p| positive_definite(&p.inertia));
        if own {
            self.add_body(
                link,
                host,
                JointKind::Fixed,
                joint,
                X_HO,
                Vec::new(),
                mass_parts,
            )
        } else {
            self.place_link(link, host, X_HO, mass_parts);
            Ok(())
        }
    }

    /// The child link of joint `j`, whose parent link is placed already.
    fn place_joint(&mut self, j: usize, mass_parts: &[Option<MassPart>]) -> Result<()> {
        let robot = self.robot;
        let joint = &robot.joints[j];
        let parent = self.links[joint.parent.link.as_str()];
        let child = self.links[joint.child.link.as_str()];
        let frame = self.frames[parent].expect("invariant: parents are placed first");
        let X_HO = frame.X_BL.compose(&pose_of(&joint.origin));
        let axis = Vector3::from(joint.axis.xyz.0);
        let unit_axis = if axis.norm() > 0.0 {
            Ok(axis.normalize())
        } else {
            Err(self.source.error(
                self.joint_node(j),
                "<axis> xyz: expected a non-zero vector, found 0 0 0",
            ))
        };
        use urdf_rs::JointType as U;
        let mut plane_normal = Vector3::z();
        let kind = match joint.joint_type {
            U::Fixed => return self.place_fixed(child, frame.body, X_HO, Some(j), mass_parts),
            U::Revolute | U::Continuous => JointKind::Revolute { axis: unit_axis? },
            U::Prismatic => JointKind::Prismatic { axis: unit_axis? },
            U::Floating => JointKind::Free,
            U::Planar => {
                plane_normal = unit_axis?;
                JointKind::Planar
            }
            U::Spherical => JointKind::Ball,
        };
        let (X_PJ, q0) = match kind {
            JointKind::Planar => (
                Pose {
                    R: X_HO.R * z_to(&plane_normal),
                    p: X_HO.p,
                },
                Vec::new(),
            ),
            JointKind::Free => (X_HO, vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]),
            JointKind::Ball => (X_HO, vec![1.0, 0.0, 0.0, 0.0]),
            _ => (X_HO, Vec::new()),
        };
        self.add_body(child, frame.body, kind, Some(j), X_PJ, q0, mass_parts)
    }

    /// The `<limit>` of joint `j` as [`JointLimits`]; `None` for joints of several
    /// velocities or without one.
    fn limits(&self, j: usize, kind: JointKind) -> Result<Option<JointLimits>> {
        let joint = &self.robot.joints[j];
        let node = self.joint_node(j);
        let written = Source::child(node, "limit");
        let one_velocity = matches!(
            kind,
            JointKind::Revolute { .. } | JointKind::Prismatic { .. }
        );
        if !one_velocity {
            return Ok(None);
        }
        let Some(limit_node) = written else {
            if joint.joint_type == urdf_rs::JointType::Continuous {
                return Ok(None);
            }
            return Err(self.source.error(
                node,
                "expected a <limit lower upper effort velocity> element (required for \
                 revolute and prismatic joints)",
            ));
        };
        let l = &joint.limit;
        let unlimited = |x: f64| if x > 0.0 { x } else { f64::INFINITY };
        let (lower, upper) = if joint.joint_type == urdf_rs::JointType::Continuous {
            (f64::NEG_INFINITY, f64::INFINITY)
        } else {
            (l.lower, l.upper)
        };
        if lower > upper {
            return Err(self.source.error(
                limit_node,
                format!("expected lower ≤ upper, found lower {lower} > upper {upper}"),
            ));
        }
        for (what, value) in [("velocity", l.velocity), ("effort", l.effort)] {
            if value < 0.0 {
                return Err(self.source.error(
                    limit_node,
                    format!("{what}: expected a value ≥ 0, found {value}"),
                ));
            }
        }
        Ok(Some(JointLimits {
            lower,
            upper,
            velocity: unlimited(l.velocity),
            effort: unlimited(l.effort),
        }))
    }

    /// Sums every body's merged masses and checks what the moving ones need.
    fn finish_bodies(&mut self) -> Result<Vec<BodyDescription>> {
        let mut bodies = std::mem::take(&mut self.bodies);
        for (body, (link, parts)) in bodies.iter_mut().zip(&self.body_parts) {
            let BodyMotion::Jointed(jointed) = &mut body.motion else {
                continue;
            };
            let node = self.link_node(*link);
            let joint = match (&jointed.joint_name, &jointed.parent) {
                (Some(name), _) => name.clone(),
                (None, Some(parent)) => format!("the weld to body `{parent}`"),
                (None, None) => "the free base joint".to_string(),
            };
            let Some(inertia) = combine(parts) else {
                return Err(self.source.error(
                    node,
                    format!(
                        "the link moves ({} joint `{joint}`) but has no mass: expected an \
                         <inertial> with a positive mass on it or on links fixed to it",
                        jointed.joint.name()
                    ),
                ));
            };
            if !positive_definite(&inertia.inertia_com) {
                return Err(self.source.error(
                    node,
                    format!(
                        "the link moves ({} joint `{joint}`) but its inertia (with the links \
                         fixed to it) is singular: expected a positive-definite <inertia>",
                        jointed.joint.name()
                    ),
                ));
            }
            jointed.inertia = inertia;
        }
        Ok(bodies)
    }

    /// The `<collision>` elements of `link` as geometries on its body.
    fn add_geometries(&mut self, link: usize) -> Result<()> {
        let frame = self.frames[link].expect("invariant: every link is placed");
        let body = match frame.body {
            Some(b) => self.bodies_name(b),
            None => "world".to_string(),
        };
        let l = &self.robot.links[link];
        let nodes: Vec<Node> = self
            .link_node(link)
            .children()
            .filter(|n| n.has_tag_name("collision"))
            .collect();
        for (k, collision) in l.collision.iter().enumerate() {
            let node = nodes.get(k).copied().unwrap_or(self.link_node(link));
            let shape_node = node
                .descendants()
                .find(|n| {
                    ["box", "cylinder", "sphere", "capsule", "mesh"]
                        .iter()
                        .any(|t| n.has_tag_name(*t))
                })
                .unwrap_or(node);
            let positive = |what: &str, x: f64| {
                if x > 0.0 {
                    Ok(x)
                } else {
                    Err(self.source.error(
                        shape_node,
                        format!("{what}: expected a positive length (m), found {x}"),
                    ))
                }
            };
            let shapes = match &collision.geometry {
                urdf_rs::Geometry::Box { size } => vec![Shape::Box {
                    half_extents: Vector3::new(
                        positive("size", size.0[0])?,
                        positive("size", size.0[1])?,
                        positive("size", size.0[2])?,
                    ) * 0.5,
                }],
                urdf_rs::Geometry::Cylinder { radius, length } => vec![Shape::Cylinder {
                    radius: positive("radius", *radius)?,
                    half_length: positive("length", *length)? * 0.5,
                }],
                urdf_rs::Geometry::Capsule { radius, length } => vec![Shape::Capsule {
                    radius: positive("radius", *radius)?,
                    half_length: positive("length", *length)? * 0.5,
                }],
                urdf_rs::Geometry::Sphere { radius } => vec![Shape::Sphere {
                    radius: positive("radius", *radius)?,
                }],
                urdf_rs::Geometry::Mesh { filename, scale } => {
                    let scale = scale.map_or(Vector3::new(1.0, 1.0, 1.0), |s| Vector3::from(s.0));
                    self.mesh_shapes(filename, scale, shape_node)?
                }
            };
            let name = if l.collision.len() == 1 {
                self.name(&l.name)
            } else {
                self.name(&format!("{}:{k}", l.name))
            };
            let parts = shapes.len();
            for (p, shape) in shapes.into_iter().enumerate() {
                self.geometries.push(GeometryDescription {
                    name: if parts == 1 {
                        name.clone()
                    } else {
                        format!("{name}#{p}")
                    },
                    body: body.clone(),
                    X_BG: frame.X_BL.compose(&pose_of(&collision.origin)),
                    shape,
                    contact: None,
                    hydroelastic: None,
                    filter: None,
                });
            }
        }
        Ok(())
    }

    fn bodies_name(&self, body: usize) -> String {
        // `finish_bodies` moved the bodies out; their names follow the links'.
        let link = self.body_parts[body].0;
        self.name(&self.robot.links[link].name)
    }

    /// The convex hull of the mesh file `filename` (resolved on the package path), or its
    /// convex parts when the options ask for a decomposition.
    fn mesh_shapes(
        &mut self,
        filename: &str,
        scale: Vector3<f64>,
        node: Node,
    ) -> Result<Vec<Shape>> {
        let path = self
            .options
            .package_path
            .resolve(filename, self.source.path)
            .map_err(|e| self.source.error(node, e))?;
        let (file, note) =
            mesh::collision_mesh_file(&path).map_err(|e| self.source.error(node, e.to_string()))?;
        self.notes.extend(note);
        let (vertices, triangles) =
            mesh::read_mesh(&file).map_err(|e| self.source.error(node, e.to_string()))?;
        let failed = |e: String| {
            self.source
                .error(node, format!("mesh {}: {e}", file.display()))
        };
        if self.options.convex_decomposition {
            return mesh::convex_decomposition(&vertices, &triangles, scale).map_err(failed);
        }
        let (shape, _) = mesh::convex_hull(&vertices, scale).map_err(failed)?;
        Ok(vec![shape])
    }

    /// The `<mimic>` elements of the joints below `root` (`imported` marks its sub-tree's
    /// links) as couplers, with their checks.
    fn couplers(&mut self, root: usize, imported: &[bool]) -> Result<Vec<CouplerDescription>> {
        let mut notes = Vec::new();
        let mut leader_of: HashMap<usize, usize> = HashMap::new();
        let mut couplers = Vec::new();
        for (j, joint) in self.robot.joints.iter().enumerate() {
            let Some(mimic) = &joint.mimic else {
                continue;
            };
            let below_root = |k: usize| {
                let child = self.links[self.robot.joints[k].child.link.as_str()];
                imported[child] && child != root
            };
            if !below_root(j) {
                continue;
            }
            let node = Source::child(self.joint_node(j), "mimic").unwrap_or(self.joint_node(j));
            let one_velocity = |k: usize| {
                use urdf_rs::JointType as U;
                matches!(
                    self.robot.joints[k].joint_type,
                    U::Revolute | U::Continuous | U::Prismatic
                )
            };
            if joint.joint_type == urdf_rs::JointType::Fixed {
                notes.push(format!(
                    "{}: <mimic> on fixed joint `{}` ignored (a fixed joint does not move)",
                    self.source.location(node),
                    joint.name
                ));
                continue;
            }
            if !one_velocity(j) {
                return Err(self.source.error(
                    node,
                    "only revolute, continuous and prismatic joints can mimic another",
                ));
            }
            let Some(&leader) = self.joints.get(mimic.joint.as_str()) else {
                return Err(self.source.error(
                    node,
                    format!(
                        "mimics joint `{}`, which is not a <joint> of the file",
                        mimic.joint
                    ),
                ));
            };
            if !one_velocity(leader) {
                return Err(self.source.error(
                    node,
                    format!(
                        "mimics joint `{}`: expected a revolute, continuous or prismatic joint",
                        mimic.joint
                    ),
                ));
            }
            if !below_root(leader) {
                return Err(self.source.error(
                    node,
                    format!(
                        "mimics joint `{}`, which is not below the imported root link `{}`",
                        mimic.joint, self.robot.links[root].name
                    ),
                ));
            }
            leader_of.insert(j, leader);
            let body = |k: usize| {
                let b = self.joint_body[k].expect("invariant: moving joints have bodies");
                self.bodies_name(b)
            };
            couplers.push(CouplerDescription {
                follower: body(j),
                leader: body(leader),
                multiplier: mimic.multiplier.unwrap_or(1.0),
                offset: mimic.offset.unwrap_or(0.0),
            });
        }
        // A follower's chain of leaders must end at a joint that mimics nothing.
        let mut followers: Vec<usize> = leader_of.keys().copied().collect();
        followers.sort_unstable();
        for start in followers {
            let mut chain = vec![start];
            let mut j = start;
            while let Some(&next) = leader_of.get(&j) {
                if chain.contains(&next) {
                    let names: Vec<&str> = chain
                        .iter()
                        .map(|&k| self.robot.joints[k].name.as_str())
                        .collect();
                    let first = *chain.iter().min().expect("a non-empty chain");
                    return Err(self.source.error(
                        Source::child(self.joint_node(first), "mimic")
                            .unwrap_or(self.joint_node(first)),
                        format!(
                            "mimic loop: {} → {}: expected a chain ending at a joint that \
                             mimics none",
                            names.join(" → "),
                            self.robot.joints[next].name
                        ),
                    ));
                }
                chain.push(next);
                j = next;
            }
        }
        self.notes.extend(notes);
        Ok(couplers)
    }
}

#[cfg(test)]
mod tests;
mod xml;
