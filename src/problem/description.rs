//! `[[body]]` and `[[geometry]]` tables → the bodies and geometries of the scene description
//! (values checked where the file gives them), and the description's own errors
//! ([`DescriptionError`]) → the file's fields they concern.
#![allow(non_snake_case)]

use std::path::Path;

use nalgebra::{Matrix3, Quaternion, UnitQuaternion, Vector3};

use crate::contact::ContactParams;
use crate::error::{Error, Result};
use crate::geometry::Shape;
use crate::hydroelastic::Hydroelastic;
use crate::math::{Pose, SpatialInertia};
use crate::multibody::{JointKind, PrescribedMotion};
use crate::problem::build::{count_values, Builder};
use crate::problem::schema::{BodySpec, GeometrySpec, HydroelasticSpec, MotionSpec, ProblemFile};
use crate::scene::description::{
    BodyDescription, BodyMotion, DescriptionError, GeometryDescription, JointedBody,
};

/// Depth (m) of the prism under each triangle of a static mesh when the file gives none: deeper
/// than any penetration of a stiff contact in one step, thinner than most walls.
pub const DEFAULT_PRISM_DEPTH: f64 = 0.05;

impl Builder<'_> {
    /// The description of `body[i]` (`field`): its values checked, its default inertia that
    /// of the first of `geometries` on it (with its shape in `shapes`).
    pub(super) fn body(
        &self,
        field: &str,
        b: &BodySpec,
        geometries: &[GeometrySpec],
        shapes: &[Vec<Shape>],
    ) -> Result<BodyDescription> {
        let position = self.vec3(&format!("{field}.position"), b.position.unwrap_or([0.0; 3]))?;
        let orientation = self.orientation(field, b)?;
        if let Some(m) = &b.prescribed {
            let motion = match m {
                MotionSpec::ConstantVelocity { velocity } => PrescribedMotion::ConstantVelocity {
                    velocity: self.vec3(&format!("{field}.prescribed.velocity"), *velocity)?,
                },
                MotionSpec::Sinusoid {
                    direction,
                    amplitude,
                    frequency,
                    phase,
                } => PrescribedMotion::Sinusoid {
                    direction: self.unit(&format!("{field}.prescribed.direction"), *direction)?,
                    amplitude: self.finite(&format!("{field}.prescribed.amplitude"), *amplitude)?,
                    frequency: self.finite(&format!("{field}.prescribed.frequency"), *frequency)?,
                    phase: self.finite(&format!("{field}.prescribed.phase"), *phase)?,
                },
            };
            return Ok(BodyDescription {
                name: b.name.clone(),
                motion: BodyMotion::Prescribed {
                    initial_pose: Pose {
                        R: *orientation.to_rotation_matrix().matrix(),
                        p: position,
                    },
                    motion,
                },
            });
        }
        let mass = self.positive(
            &format!("{field}.mass"),
            b.mass.ok_or_else(|| {
                self.err(
                    &format!("{field}.mass"),
                    "a mass (kg) for a body without `prescribed` motion",
                    "nothing",
                )
            })?,
        )?;
        let inertia_com = match b.inertia {
            Some(I) => {
                for (k, x) in I.iter().enumerate() {
                    self.positive(&format!("{field}.inertia[{k}]"), *x)?;
                }
                Matrix3::from_diagonal(&Vector3::from(I))
            }
            None => geometries
                .iter()
                .zip(shapes)
                .find(|(g, _)| g.body.as_deref() == Some(b.name.as_str()))
                .and_then(|(_, s)| s.first()?.solid_inertia(mass))
                .ok_or_else(|| self.err(&format!("{field}.inertia"), "principal moments [Ixx, Iyy, Izz] (kg·m²), or a sphere/box/capsule/cylinder geometry to derive them from", "nothing"))?,
        };
        let com = self.vec3(&format!("{field}.com"), b.com.unwrap_or([0.0; 3]))?;
        let kind = self.joint_kind(field, b)?;
        let parent = match b.parent.as_deref() {
            None | Some("world") => None,
            Some(p) => Some(p.to_string()),
        };
        let X_PJ = Pose {
            R: self.rpy(&format!("{field}.origin_rpy_deg"), b.origin_rpy_deg)?,
            p: self.vec3(&format!("{field}.origin"), b.origin.unwrap_or([0.0; 3]))?,
        };
        let damping = match &b.damping {
            None => vec![0.0; kind.nv()],
            Some(d) => {
                if d.len() != kind.nv() {
                    return Err(self.err(
                        &format!("{field}.damping"),
                        &format!("{} for a {} joint", count_values(kind.nv()), kind.name()),
                        count_values(d.len()),
                    ));
                }
                for (k, x) in d.iter().enumerate() {
                    if !(*x >= 0.0 && x.is_finite()) {
                        return Err(self.err(
                            &format!("{field}.damping[{k}]"),
                            "a finite number ≥ 0",
                            x,
                        ));
                    }
                }
                d.clone()
            }
        };
        // Initial state.
        let (q0, v0) = if kind == JointKind::Free {
            let w = self.vec3(
                &format!("{field}.angular_velocity"),
                b.angular_velocity.unwrap_or([0.0; 3]),
            )?;
            let v = self.vec3(&format!("{field}.velocity"), b.velocity.unwrap_or([0.0; 3]))?;
            if b.q0.is_some() || b.v0.is_some() {
                return Err(self.err(
                    &format!("{field}.q0"),
                    "position/quaternion/velocity/angular_velocity for a free joint",
                    "q0/v0",
                ));
            }
            (
                vec![
                    position.x,
                    position.y,
                    position.z,
                    orientation.w,
                    orientation.i,
                    orientation.j,
                    orientation.k,
                ],
                vec![w.x, w.y, w.z, v.x, v.y, v.z],
            )
        } else {
            let mut q0 = Vec::new();
            let mut v0 = Vec::new();
            for (name, given, n, out) in [
                ("q0", &b.q0, kind.nq(), &mut q0),
                ("v0", &b.v0, kind.nv(), &mut v0),
            ] {
                let values = given.clone().unwrap_or_else(|| vec![0.0; n]);
                if values.len() != n {
                    return Err(self.err(
                        &format!("{field}.{name}"),
                        &format!("{} for a {} joint", count_values(n), kind.name()),
                        count_values(values.len()),
                    ));
                }
                for (k, x) in values.iter().enumerate() {
                    self.finite(&format!("{field}.{name}[{k}]"), *x)?;
                }
                *out = values;
            }
            if b.velocity.is_some() || b.angular_velocity.is_some() || b.position.is_some() {
                return Err(self.err(
                    &format!("{field}.velocity"),
                    "q0/v0 for a non-free joint",
                    "position/velocity/angular_velocity",
                ));
            }
            (q0, v0)
        };
        Ok(BodyDescription {
            name: b.name.clone(),
            motion: BodyMotion::Jointed(JointedBody {
                inertia: SpatialInertia {
                    mass,
                    com,
                    inertia_com,
                },
                joint: kind,
                parent,
                X_PJ,
                armature: vec![0.0; damping.len()],
                damping,
                q0,
                v0,
                joint_name: None,
                limits: None,
                spring: None,
                friction: Vec::new(),
            }),
        })
    }

    /// The description of `geometry[i]` (`field`) with its checked `shape`; its contact
    /// parameters start from the file's defaults.
    pub(super) fn geometry(
        &self,
        field: &str,
        g: &GeometrySpec,
        shape: Shape,
        default_contact: &ContactParams<f64>,
    ) -> Result<GeometryDescription> {
        let contact = match &g.contact {
            None => None,
            Some(c) => Some(self.contact(&format!("{field}.contact"), default_contact, c)?),
        };
        let hydroelastic = match &g.hydroelastic {
            None => None,
            Some(h) => Some(self.hydroelastic(&format!("{field}.hydroelastic"), &shape, h)?),
        };
        Ok(GeometryDescription {
            name: g.name.clone(),
            body: g.body.clone().unwrap_or_else(|| "world".into()),
            X_BG: Pose {
                R: self.rpy(&format!("{field}.rpy_deg"), g.rpy_deg)?,
                p: self.vec3(&format!("{field}.position"), g.position.unwrap_or([0.0; 3]))?,
            },
            shape,
            contact,
            hydroelastic,
            filter: None,
        })
    }

    /// A scene-level error of the description built from `file`, at the field it concerns.
    pub(super) fn description_error(&self, e: DescriptionError, file: &ProblemFile) -> Error {
        use DescriptionError as E;
        match e {
            E::UnknownGeometryBody { geometry, body, .. } => self.err(
                &format!("geometry[{geometry}].body"),
                "the name of a body, or `world`",
                format!("`{body}`"),
            ),
            E::BodyName { body, name } => self.err(
                &format!("body[{body}].name"),
                "a unique name other than `world`",
                format!("`{name}`"),
            ),
            E::UnknownParent { body, parent, .. } => self.err(
                &format!("body[{body}].parent"),
                "the name of a body listed before this one, or `world`",
                format!("`{parent}`"),
            ),
            E::Body { body, source } if file.bodies[body].prescribed.is_some() => {
                self.err(&format!("body[{body}]"), "a valid prescribed body", source)
            }
            E::Body { body, source } => {
                self.err(&format!("body[{body}].inertia"), "a valid rigid body", source)
            }
            E::InitialStateSize {
                body,
                vector,
                expected,
                found,
                ..
            } => self.err(
                &format!("body[{body}].{vector}"),
                &count_values(expected),
                count_values(found),
            ),
            E::InitialState { value } => {
                self.err("(model)", "a finite initial position and velocity", value)
            }
            E::GeometryName { geometry, name } => self.err(
                &format!("geometry[{geometry}].name"),
                "a unique geometry name",
                format!("`{name}`"),
            ),
            E::HalfSpaceOnMovingBody { geometry, body, .. } => self.err(
                &format!("geometry[{geometry}].shape"),
                "a half-space on `world` or a prescribed body",
                format!("a half-space on moving body `{body}`"),
            ),
            E::UnknownActuatorBody { actuator, body } => self.err(
                &format!("actuator[{actuator}].body"),
                "the name of a body with a joint (not `world` or a prescribed body)",
                format!("`{body}`"),
            ),
            E::DofOutOfRange {
                actuator,
                body,
                dof,
                nv,
                joint,
            } => self.err(
                &format!("actuator[{actuator}].dof"),
                &format!(
                    "a velocity index below {nv} for the {} joint of `{body}`",
                    joint.name()
                ),
                dof,
            ),
            E::AlreadyDriven {
                actuator,
                body,
                dof,
            } => self.err(
                &format!("actuator[{actuator}].dof"),
                "a joint velocity no other actuator drives",
                format!("velocity {dof} of `{body}`, already driven"),
            ),
            E::PdOnFreeJoint { actuator, .. } => self.err(
                &format!("actuator[{actuator}].control"),
                "an open-loop law for a free joint (PD needs a revolute, prismatic or planar joint)",
                "a PD law",
            ),
            E::EffortLimit {
                actuator, value, ..
            } => self.err(
                &format!("actuator[{actuator}].effort_limit"),
                "a positive finite number",
                value,
            ),
            E::Actuator { actuator, source } => self.err(
                &format!("actuator[{actuator}].dof"),
                "an actuated velocity",
                source,
            ),
            E::Simulator { source } => self.err("(model)", "a valid model", source),
            // The file's couplers come first, a robot model's after them.
            E::Coupler { coupler, source } if coupler < file.couplers.len() => self.err(
                &format!("coupler[{coupler}]"),
                "a coupler between the joints of two different bodies with one coordinate each (revolute or prismatic)",
                source,
            ),
            E::Coupler { source, .. } => self.err("(model)", "valid couplers", source),
            // Problem files name no excluded pairs; a robot model's come from its importer.
            E::UnknownExcludedBody { body, .. } => self.err(
                "(model)",
                "excluded collision pairs of bodies of the scene",
                format!("`{body}`"),
            ),
        }
    }

    /// The shapes of `geometry[i]` (`field`): one, or a static mesh's prisms
    /// ([`crate::import::mesh::triangle_prisms`]).
    pub(super) fn shapes(&self, field: &str, g: &GeometrySpec) -> Result<Vec<Shape>> {
        let mesh_fields = [
            ("file", g.file.is_some()),
            ("scale", g.scale.is_some()),
            ("depth", g.depth.is_some()),
        ];
        if g.shape != "mesh" {
            if let Some((name, _)) = mesh_fields.iter().find(|(_, given)| *given) {
                return Err(self.err(
                    &format!("{field}.{name}"),
                    &format!(
                        "no `{name}` for shape `{}` (only shape `mesh` has one)",
                        g.shape
                    ),
                    "a value",
                ));
            }
            return Ok(vec![self.shape(field, g)?]);
        }
        if let Some(body) = g.body.as_deref().filter(|b| *b != "world") {
            return Err(self.err(
                &format!("{field}.body"),
                "`world`: a `mesh` geometry is static environment (a moving body's mesh comes \
                 from its URDF or MJCF model)",
                format!("`{body}`"),
            ));
        }
        if g.hydroelastic.is_some() {
            return Err(self.err(
                &format!("{field}.hydroelastic"),
                "point contact for a static mesh (no pressure field)",
                "a hydroelastic table",
            ));
        }
        let file = g.file.as_deref().ok_or_else(|| {
            self.err(
                &format!("{field}.file"),
                "`file`, an STL or OBJ mesh, for shape `mesh`",
                "nothing",
            )
        })?;
        let path = self.path.parent().unwrap_or(Path::new(".")).join(file);
        let (vertices, triangles) = crate::import::mesh::read_mesh(&path)
            .map_err(|e| self.err(&format!("{field}.file"), "a readable STL or OBJ mesh", e))?;
        let scale = match g.scale {
            None => Vector3::repeat(1.0),
            Some(s) => self.vec3(&format!("{field}.scale"), s)?,
        };
        let depth = match g.depth {
            None => DEFAULT_PRISM_DEPTH,
            Some(d) => self.positive(&format!("{field}.depth"), d)?,
        };
        crate::import::mesh::triangle_prisms(&vertices, &triangles, scale, depth)
            .map_err(|e| self.err(&format!("{field}.file"), "a triangle mesh", e))
    }

    fn shape(&self, field: &str, g: &GeometrySpec) -> Result<Shape> {
        let need = |name: &str, x: Option<f64>| -> Result<f64> {
            let x = x.ok_or_else(|| {
                self.err(
                    &format!("{field}.{name}"),
                    &format!("`{name}` for shape `{}`", g.shape),
                    "nothing",
                )
            })?;
            self.positive(&format!("{field}.{name}"), x)
        };
        Ok(match g.shape.as_str() {
            "sphere" => Shape::Sphere {
                radius: need("radius", g.radius)?,
            },
            "box" => {
                let s = g.size.ok_or_else(|| {
                    self.err(
                        &format!("{field}.size"),
                        "`size = [x, y, z]` for shape `box`",
                        "nothing",
                    )
                })?;
                for (i, x) in s.iter().enumerate() {
                    self.positive(&format!("{field}.size[{i}]"), *x)?;
                }
                Shape::Box {
                    half_extents: Vector3::from(s) * 0.5,
                }
            }
            "ellipsoid" => {
                let s = g.size.ok_or_else(|| {
                    self.err(
                        &format!("{field}.size"),
                        "`size = [x, y, z]` (diameters) for shape `ellipsoid`",
                        "nothing",
                    )
                })?;
                for (i, x) in s.iter().enumerate() {
                    self.positive(&format!("{field}.size[{i}]"), *x)?;
                }
                Shape::Ellipsoid {
                    semi_axes: Vector3::from(s) * 0.5,
                }
            }
            "capsule" => Shape::Capsule {
                radius: need("radius", g.radius)?,
                half_length: 0.5 * need("length", g.length)?,
            },
            "cylinder" => Shape::Cylinder {
                radius: need("radius", g.radius)?,
                half_length: 0.5 * need("length", g.length)?,
            },
            "half-space" => Shape::HalfSpace,
            "convex-mesh" => {
                let v = g.vertices.as_ref().ok_or_else(|| {
                    self.err(
                        &format!("{field}.vertices"),
                        "`vertices` for shape `convex-mesh`",
                        "nothing",
                    )
                })?;
                let vertices = v
                    .iter()
                    .enumerate()
                    .map(|(i, p)| self.vec3(&format!("{field}.vertices[{i}]"), *p))
                    .collect::<Result<Vec<_>>>()?;
                let shape = Shape::ConvexMesh { vertices };
                shape.validate().map_err(|e| {
                    self.err(
                        &format!("{field}.vertices"),
                        "at least 4 non-coplanar vertices",
                        e,
                    )
                })?;
                shape
            }
            other => return Err(self.err(
                &format!("{field}.shape"),
                "one of sphere, box, capsule, cylinder, ellipsoid, half-space, convex-mesh, mesh",
                format!("`{other}`"),
            )),
        })
    }

    fn joint_kind(&self, field: &str, b: &BodySpec) -> Result<JointKind> {
        let axis = || -> Result<Vector3<f64>> {
            let a = b.axis.ok_or_else(|| {
                self.err(
                    &format!("{field}.axis"),
                    "an `axis` for this joint",
                    "nothing",
                )
            })?;
            self.unit(&format!("{field}.axis"), a)
        };
        Ok(match b.joint.as_deref().unwrap_or("free") {
            "free" => JointKind::Free,
            "planar" => JointKind::Planar,
            "fixed" => JointKind::Fixed,
            "revolute" => JointKind::Revolute { axis: axis()? },
            "prismatic" => JointKind::Prismatic { axis: axis()? },
            other => {
                return Err(self.err(
                    &format!("{field}.joint"),
                    "one of free, planar, revolute, prismatic, fixed",
                    format!("`{other}`"),
                ))
            }
        })
    }

    fn orientation(&self, field: &str, b: &BodySpec) -> Result<UnitQuaternion<f64>> {
        match (b.quaternion, b.rpy_deg) {
            (Some(_), Some(_)) => Err(self.err(field, "either `quaternion` or `rpy_deg`", "both")),
            (Some(q), None) => {
                for (i, x) in q.iter().enumerate() {
                    self.finite(&format!("{field}.quaternion[{i}]"), *x)?;
                }
                let quat = Quaternion::new(q[0], q[1], q[2], q[3]);
                if quat.norm() < 1e-12 {
                    return Err(self.err(
                        &format!("{field}.quaternion"),
                        "a non-zero quaternion [w, x, y, z]",
                        format!("{q:?}"),
                    ));
                }
                Ok(UnitQuaternion::from_quaternion(quat))
            }
            (None, rpy) => Ok(UnitQuaternion::from_matrix(
                &self.rpy(&format!("{field}.rpy_deg"), rpy)?,
            )),
        }
    }

    pub(super) fn hydroelastic(
        &self,
        field: &str,
        shape: &Shape,
        spec: &HydroelasticSpec,
    ) -> Result<Hydroelastic> {
        let half_space = *shape == Shape::HalfSpace;
        let resolution_hint = match (spec.resolution_hint, half_space) {
            (Some(h), _) => self.positive(&format!("{field}.resolution_hint"), h)?,
            // A plane or a layer has no mesh; the hint is not used.
            (None, true) => 1.0,
            (None, false) => {
                return Err(self.err(
                    &format!("{field}.resolution_hint"),
                    "a mesh edge length (m) for a meshed shape",
                    "none",
                ))
            }
        };
        let thickness = match (spec.thickness, half_space && spec.modulus.is_some()) {
            (Some(h), true) => Some(self.positive(&format!("{field}.thickness"), h)?),
            (None, false) => None,
            (None, true) => {
                return Err(self.err(
                    &format!("{field}.thickness"),
                    "the layer thickness (m) of a compliant half-space",
                    "none",
                ))
            }
            (Some(h), false) => {
                return Err(self.err(
                    &format!("{field}.thickness"),
                    "no thickness: only a compliant half-space (with `modulus`) has a layer",
                    h,
                ))
            }
        };
        let properties = match spec.modulus {
            None => Hydroelastic::Rigid { resolution_hint },
            Some(e) => Hydroelastic::Compliant {
                modulus: self.positive(&format!("{field}.modulus"), e)?,
                resolution_hint,
                thickness,
            },
        };
        // A mesh too fine to build is refused here, at the hint's line, before meshing.
        match properties.validate(shape) {
            Err(e @ Error::TooLarge { .. }) => Err(self.err(
                &format!("{field}.resolution_hint"),
                "a mesh within the triangle cap",
                e,
            )),
            _ => Ok(properties),
        }
    }
}
