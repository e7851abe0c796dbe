//! Named model parameters θ that step Jacobians are taken with respect to, and the scene
//! lifted into a scalar `T` with those parameters replaced by seeded values.
//!
//! Names: `friction`, `stiffness`, `dissipation`, `relaxation_time`, `stiction_tolerance` for the
//! scene's default pair parameters, or `NAME@GEOMETRY` for a geometry's own; `mass@BODY`;
//! `inertia.x@BODY` (`.y`, `.z`: principal moments about the centre of mass); `radius@GEOMETRY`,
//! `half_length@GEOMETRY`, `half_extent.x@GEOMETRY` (`.y`, `.z`) for geometry sizes;
//! `modulus@GEOMETRY` for the hydroelastic modulus `E` of a compliant geometry.

use crate::collision::Geometry;
use crate::contact::ContactParams;
use crate::error::{Error, Result};
use crate::geometry::distance::ShapeSize;
use crate::geometry::Shape;
use crate::hydroelastic::Hydroelastic;
use crate::multibody::MultibodyModel;
use crate::scalar::{lit, Scalar};
use crate::step::{PairParameters, Simulator};

/// A contact parameter of [`ContactParams`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContactField {
    /// μ.
    Friction,
    /// k (N/m).
    Stiffness,
    /// d (s/m).
    Dissipation,
    /// τ_d (s).
    RelaxationTime,
    /// v_s (m/s).
    StictionTolerance,
}

impl ContactField {
    const ALL: [(ContactField, &'static str); 5] = [
        (ContactField::Friction, "friction"),
        (ContactField::Stiffness, "stiffness"),
        (ContactField::Dissipation, "dissipation"),
        (ContactField::RelaxationTime, "relaxation_time"),
        (ContactField::StictionTolerance, "stiction_tolerance"),
    ];

    fn slot<'a, T: Scalar>(&self, p: &'a mut ContactParams<T>) -> &'a mut T {
        match self {
            ContactField::Friction => &mut p.mu,
            ContactField::Stiffness => &mut p.stiffness,
            ContactField::Dissipation => &mut p.dissipation,
            ContactField::RelaxationTime => &mut p.relaxation_time,
            ContactField::StictionTolerance => &mut p.stiction_tolerance,
        }
    }
}

/// A size of a geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeField {
    /// Radius of a sphere, capsule or cylinder (m).
    Radius,
    /// Half length of a capsule's core or a cylinder (m).
    HalfLength,
    /// Half extent of a box along axis 0, 1 or 2 (m).
    HalfExtent(usize),
}

/// A named model parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parameter {
    /// A contact parameter of the scene default (`geometry: None`) or of a geometry's own.
    Contact {
        /// The geometry, or `None` for the default pair parameters.
        geometry: Option<usize>,
        /// Which parameter.
        field: ContactField,
    },
    /// Mass of a body (kg).
    Mass {
        /// Body index.
        body: usize,
    },
    /// Principal moment of inertia about the centre of mass, body axis 0, 1 or 2 (kg·m²).
    Inertia {
        /// Body index.
        body: usize,
        /// Axis.
        axis: usize,
    },
    /// The hydroelastic modulus `E` (Pa) of a compliant geometry.
    Modulus {
        /// Geometry index.
        geometry: usize,
    },
    /// A geometry size.
    Size {
        /// Geometry index.
        geometry: usize,
        /// Which size.
        size: SizeField,
    },
}

const AXES: [&str; 3] = ["x", "y", "z"];

impl Parameter {
    /// Parses a parameter name (see the module docs) for the scene of `sim`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for an unknown name, body or geometry, a contact parameter of
    /// a geometry without its own contact parameters, or a size its shape does not have (a
    /// half-space and a convex mesh have no size parameters).
    pub fn parse(sim: &Simulator, name: &str) -> Result<Parameter> {
        let (head, target) = match name.split_once('@') {
            Some((h, t)) => (h, Some(t)),
            None => (name, None),
        };
        let bad = |reason: &str| Error::invalid("parameter", name, reason);
        let geometry = |t: &str| {
            sim.geometries()
                .iter()
                .position(|g| g.name == t)
                .ok_or_else(|| bad(&format!("no geometry named `{t}`")))
        };
        let axis = |s: &str| {
            AXES.iter()
                .position(|a| *a == s)
                .ok_or_else(|| bad("axis must be x, y or z"))
        };
        if let Some((field, _)) = ContactField::ALL.iter().find(|(_, n)| *n == head) {
            let geometry = match target {
                None => None,
                Some(t) => {
                    let g = geometry(t)?;
                    if sim.geometries()[g].contact.is_none() {
                        return Err(bad("this geometry has no contact parameters of its own: give it `contact = {…}` or use the scene default (no `@`)"));
                    }
                    Some(g)
                }
            };
            return Ok(Parameter::Contact {
                geometry,
                field: *field,
            });
        }
        let target = target.ok_or_else(|| {
            bad("expected NAME@BODY or NAME@GEOMETRY (e.g. mass@box, radius@ball)")
        })?;
        if head == "modulus" {
            let g = geometry(target)?;
            if sim.geometries()[g]
                .hydroelastic
                .and_then(|h| h.modulus())
                .is_none()
            {
                return Err(bad(
                    "this geometry is not compliant (no hydroelastic modulus)",
                ));
            }
            return Ok(Parameter::Modulus { geometry: g });
        }
        let body = || {
            sim.model
                .body_index(target)
                .ok_or_else(|| bad(&format!("no body named `{target}` with dynamics")))
        };
        match head.split_once('.') {
            None if head == "mass" => Ok(Parameter::Mass { body: body()? }),
            Some(("inertia", a)) => Ok(Parameter::Inertia {
                body: body()?,
                axis: axis(a)?,
            }),
            _ => {
                let g = geometry(target)?;
                if sim.geometries()[g].hydroelastic.is_some() {
                    return Err(bad(
                        "a hydroelastic geometry's meshes are fixed: its sizes are not parameters",
                    ));
                }
                let size = match (head.split_once('.'), &sim.geometries()[g].shape) {
                    (None, Shape::Sphere { .. } | Shape::Capsule { .. } | Shape::Cylinder { .. }) if head == "radius" => SizeField::Radius,
                    (None, Shape::Capsule { .. } | Shape::Cylinder { .. }) if head == "half_length" => SizeField::HalfLength,
                    (Some(("half_extent", a)), Shape::Box { .. }) => SizeField::HalfExtent(axis(a)?),
                    (_, shape) => {
                        return Err(bad(&format!(
                            "unknown parameter for a {}: sizes are radius (sphere, capsule, cylinder), half_length (capsule, cylinder), half_extent.x|y|z (box); half-spaces and convex meshes have none",
                            shape.kind()
                        )))
                    }
                };
                Ok(Parameter::Size { geometry: g, size })
            }
        }
    }

    /// The canonical name of this parameter in the scene of `sim`.
    pub fn name(&self, sim: &Simulator) -> String {
        let g = |i: usize| sim.geometries()[i].name.as_str();
        let b = |i: usize| sim.model.bodies[i].name.as_str();
        match *self {
            Parameter::Contact { geometry, field } => {
                let n = ContactField::ALL
                    .iter()
                    .find(|(f, _)| *f == field)
                    .map_or("", |(_, n)| n);
                match geometry {
                    None => n.to_string(),
                    Some(i) => format!("{n}@{}", g(i)),
                }
            }
            Parameter::Mass { body } => format!("mass@{}", b(body)),
            Parameter::Modulus { geometry } => format!("modulus@{}", g(geometry)),
            Parameter::Inertia { body, axis } => format!("inertia.{}@{}", AXES[axis], b(body)),
            Parameter::Size { geometry, size } => match size {
                SizeField::Radius => format!("radius@{}", g(geometry)),
                SizeField::HalfLength => format!("half_length@{}", g(geometry)),
                SizeField::HalfExtent(a) => format!("half_extent.{}@{}", AXES[a], g(geometry)),
            },
        }
    }

    /// The current value of this parameter in `sim`.
    pub fn value(&self, sim: &Simulator) -> f64 {
        let mut scene = lift_scene::<f64>(sim, &[], &[]);
        *self.slot(&mut scene)
    }

    /// Sets this parameter in `sim` (for finite differences).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if the value makes the model invalid.
    pub fn set(&self, sim: &mut Simulator, value: f64) -> Result<()> {
        match *self {
            Parameter::Contact {
                geometry: None,
                field,
            } => *field.slot(&mut sim.settings.contact) = value,
            Parameter::Contact {
                geometry: Some(g),
                field,
            } => {
                let mut geometry: Geometry = sim.geometries()[g].clone();
                let params = geometry.contact.as_mut().ok_or_else(|| {
                    Error::invalid("parameter", g, "geometry has no own contact parameters")
                })?;
                *field.slot(params) = value;
                sim.replace_geometry(g, geometry)?;
            }
            Parameter::Mass { body } => sim.model.bodies[body].inertia.mass = value,
            Parameter::Modulus { geometry: g } => {
                let mut geometry: Geometry = sim.geometries()[g].clone();
                match geometry.hydroelastic.as_mut() {
                    Some(Hydroelastic::Compliant { modulus, .. }) => *modulus = value,
                    _ => return Err(Error::invalid("parameter", g, "geometry is not compliant")),
                }
                sim.replace_geometry(g, geometry)?;
            }
            Parameter::Inertia { body, axis } => {
                sim.model.bodies[body].inertia.inertia_com[(axis, axis)] = value
            }
            Parameter::Size { geometry: g, size } => {
                let mut geometry: Geometry = sim.geometries()[g].clone();
                match (&mut geometry.shape, size) {
                    (
                        Shape::Sphere { radius }
                        | Shape::Capsule { radius, .. }
                        | Shape::Cylinder { radius, .. },
                        SizeField::Radius,
                    ) => *radius = value,
                    (
                        Shape::Capsule { half_length, .. } | Shape::Cylinder { half_length, .. },
                        SizeField::HalfLength,
                    ) => *half_length = value,
                    (Shape::Box { half_extents }, SizeField::HalfExtent(a)) => {
                        half_extents[a] = value
                    }
                    _ => {
                        return Err(Error::invalid(
                            "parameter",
                            g,
                            "size does not match the shape",
                        ))
                    }
                }
                sim.replace_geometry(g, geometry)?;
            }
        }
        Ok(())
    }

    /// The slot of this parameter in a lifted scene.
    fn slot<'a, T: Scalar>(&self, scene: &'a mut LiftedScene<T>) -> &'a mut T {
        match *self {
            Parameter::Contact {
                geometry: None,
                field,
            } => field.slot(&mut scene.pairs.default),
            Parameter::Contact {
                geometry: Some(g),
                field,
            } => field.slot(
                scene.pairs.geometry[g]
                    .as_mut()
                    .expect("invariant: parse checked own parameters"),
            ),
            Parameter::Mass { body } => &mut scene.model.bodies[body].inertia.mass,
            Parameter::Modulus { geometry } => &mut scene.moduli[geometry],
            Parameter::Inertia { body, axis } => {
                &mut scene.model.bodies[body].inertia.inertia_com[(axis, axis)]
            }
            Parameter::Size { geometry, size } => match (&mut scene.sizes[geometry], size) {
                (
                    ShapeSize::Sphere { radius }
                    | ShapeSize::Capsule { radius, .. }
                    | ShapeSize::Cylinder { radius, .. },
                    SizeField::Radius,
                ) => radius,
                (
                    ShapeSize::Capsule { half_length, .. }
                    | ShapeSize::Cylinder { half_length, .. },
                    SizeField::HalfLength,
                ) => half_length,
                (ShapeSize::Box { half_extents }, SizeField::HalfExtent(a)) => &mut half_extents[a],
                _ => unreachable!("invariant: parse matched the size to the shape"),
            },
        }
    }
}

/// The model, contact parameters and geometry sizes of a scene in `T`.
pub struct LiftedScene<T: Scalar> {
    /// The multibody model.
    pub model: MultibodyModel<T>,
    /// Contact parameters.
    pub pairs: PairParameters<T>,
    /// Geometry sizes, one per geometry.
    pub sizes: Vec<ShapeSize<T>>,
    /// Hydroelastic modulus `E` (Pa) of each geometry, 0 when not compliant.
    pub moduli: Vec<T>,
}

/// Lifts the scene of `sim` into `T`, with `params[k]` replaced by `values[k]` (a dual number
/// whose real part is the parameter's value and whose derivative part seeds it).
pub fn lift_scene<T: Scalar>(
    sim: &Simulator,
    params: &[Parameter],
    values: &[T],
) -> LiftedScene<T> {
    let mut scene = LiftedScene {
        model: sim.model.cast(),
        pairs: PairParameters {
            default: sim.settings.contact.cast(),
            geometry: sim
                .geometries()
                .iter()
                .map(|g| g.contact.as_ref().map(ContactParams::cast))
                .collect(),
        },
        sizes: sim.geometries().iter().map(|g| g.shape.size()).collect(),
        moduli: sim
            .geometries()
            .iter()
            .map(|g| lit(g.hydroelastic.and_then(|h| h.modulus()).unwrap_or(0.0)))
            .collect(),
    };
    for (p, v) in params.iter().zip(values) {
        *p.slot(&mut scene) = *v;
    }
    scene
}
