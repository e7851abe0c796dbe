//! Named parameters under identification and their reparameterization.
//!
//! The optimizers work on unconstrained coordinates `s ∈ ℝ^np`; each physical value is
//! `θ = g(s)` with a monotone map `g` ([`Transform`]):
//!
//! - `Log` (default): `θ = exp(s)`, for positive quantities (μ, k, d, τ_d, v_s, masses,
//!   inertias, sizes). A step in `s` is a relative change in `θ`, so k ≈ 1e4 N/m and μ ≈ 0.5
//!   are equally scaled;
//! - `Identity`: `θ = s`;
//! - `Logistic { lower, upper }`: `θ = lower + (upper − lower) / (1 + exp(−s))`, for a value
//!   known to lie in `(lower, upper)`.
//!
//! Derivatives with respect to `s` follow by the chain rule `∂r/∂s = ∂r/∂θ · g′(s)`, and
//! confidence intervals computed on `s` map to `θ` through `g` (monotone, so an interval stays
//! an interval; with `Log` it is positive and asymmetric).
//!
//! Besides the scene's parameters ([`Parameter`]), two kinds of unknowns belong to a record
//! rather than to the scene ([`Unknown`]): its initial velocities (a record whose launch was not
//! measured) and its clock offset (a record whose time zero is not the scene's). They default
//! to the `Identity` transform, since zero and negative values are ordinary.

use crate::derivatives::Parameter;
use crate::error::{Error, Result};
use crate::multibody::JointKind;
use crate::step::{Simulator, State};

/// What an identified value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unknown {
    /// A parameter of the scene, shared by every record.
    Scene(Parameter),
    /// The generalized velocity `v₀[dof]` (m/s or rad/s) the record starts with, replacing the
    /// scene's. Named like the problem file's fields: `velocity.x@BODY` and
    /// `angular_velocity.x@BODY` (parent frame) for a free body, `v0@BODY` or `v0.i@BODY` for
    /// the `i`-th velocity of another joint.
    InitialVelocity {
        /// Index into `v`.
        dof: usize,
        /// The record (index into the problem's records); `None` until the problem assigns
        /// one unknown per record ([`super::IdentificationProblem::new`]).
        record: Option<usize>,
    },
    /// The clock offset τ (s), named `time_offset`: the sample recorded at `t_k` is compared
    /// with the simulation at `t_k + τ`.
    TimeOffset {
        /// As for [`Unknown::InitialVelocity`].
        record: Option<usize>,
    },
}

impl Unknown {
    /// The record this unknown belongs to (`None` for a scene parameter or before the
    /// problem assigned it).
    pub fn record(&self) -> Option<usize> {
        match *self {
            Unknown::Scene(_) => None,
            Unknown::InitialVelocity { record, .. } | Unknown::TimeOffset { record } => record,
        }
    }

    /// Whether this unknown is one per record.
    pub fn per_record(&self) -> bool {
        !matches!(self, Unknown::Scene(_))
    }

    /// This unknown assigned to `record`.
    pub fn for_record(self, record: usize) -> Self {
        match self {
            Unknown::Scene(p) => Unknown::Scene(p),
            Unknown::InitialVelocity { dof, .. } => Unknown::InitialVelocity {
                dof,
                record: Some(record),
            },
            Unknown::TimeOffset { .. } => Unknown::TimeOffset {
                record: Some(record),
            },
        }
    }

    /// Parses `time_offset`, an initial velocity (see [`Unknown::InitialVelocity`]) or a scene
    /// parameter ([`Parameter::parse`]).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for an unknown name, body or component, or a velocity
    /// name that does not fit the body's joint.
    pub fn parse(sim: &Simulator, name: &str) -> Result<Self> {
        if name == "time_offset" {
            return Ok(Unknown::TimeOffset { record: None });
        }
        let velocity = name.split_once('@').and_then(|(head, body)| {
            let (field, component) = head.split_once('.').unwrap_or((head, ""));
            matches!(field, "velocity" | "angular_velocity" | "v0")
                .then_some((field, component, body))
        });
        let Some((field, component, body_name)) = velocity else {
            return Parameter::parse(sim, name).map(Unknown::Scene);
        };
        let bad = |reason: &str| Error::invalid("parameter", name, reason);
        let body = sim
            .model
            .body_index(body_name)
            .ok_or_else(|| bad(&format!("no body named `{body_name}` with dynamics")))?;
        let joint = &sim.model.joints[body];
        let axis = || {
            ["x", "y", "z"]
                .iter()
                .position(|a| *a == component)
                .ok_or_else(|| bad("the component must be x, y or z (e.g. velocity.x@box)"))
        };
        let offset = match (field, joint.kind) {
            ("angular_velocity", JointKind::Free) => axis()?,
            ("velocity", JointKind::Free) => 3 + axis()?,
            ("v0", JointKind::Free) => {
                return Err(bad(
                    "a free body's initial velocities are velocity.x|y|z@BODY and angular_velocity.x|y|z@BODY",
                ))
            }
            ("v0", kind) => {
                let i = if component.is_empty() {
                    0
                } else {
                    component
                        .parse::<usize>()
                        .map_err(|_| bad("expected v0@BODY or v0.i@BODY with i a velocity index"))?
                };
                if i >= kind.nv() {
                    let count = match kind.nv() {
                        1 => "1 velocity".to_string(),
                        n => format!("{n} velocities"),
                    };
                    return Err(bad(&format!(
                        "velocity index {i} is beyond the {} joint of `{body_name}` ({count})",
                        kind.name()
                    )));
                }
                i
            }
            (_, kind) => {
                return Err(bad(&format!(
                    "`{body_name}` has a {} joint: its initial velocities are v0@BODY or v0.i@BODY",
                    kind.name()
                )))
            }
        };
        Ok(Unknown::InitialVelocity {
            dof: joint.v_start + offset,
            record: None,
        })
    }
}

/// The map `θ = g(s)` from unconstrained coordinates to a parameter's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Transform {
    /// `θ = exp(s)`: θ > 0.
    Log,
    /// `θ = s`.
    Identity,
    /// `θ = lower + (upper − lower) σ(s)`, `σ` the logistic function: lower < θ < upper.
    Logistic {
        /// Lower bound (exclusive).
        lower: f64,
        /// Upper bound (exclusive).
        upper: f64,
    },
}

impl Transform {
    /// `θ = g(s)`.
    pub fn to_value(&self, s: f64) -> f64 {
        match *self {
            Transform::Log => s.exp(),
            Transform::Identity => s,
            Transform::Logistic { lower, upper } => lower + (upper - lower) * logistic(s),
        }
    }

    /// `g′(s) = dθ/ds`.
    pub fn derivative(&self, s: f64) -> f64 {
        match *self {
            Transform::Log => s.exp(),
            Transform::Identity => 1.0,
            Transform::Logistic { lower, upper } => {
                let p = logistic(s);
                (upper - lower) * p * (1.0 - p)
            }
        }
    }

    /// `s = g⁻¹(θ)`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if θ is outside the range of `g` (θ ≤ 0 for `Log`, θ not
    /// strictly between the bounds for `Logistic`) or not finite.
    pub fn to_coordinate(&self, name: &str, theta: f64) -> Result<f64> {
        let bad = |reason: &str| Err(Error::invalid(name, theta, reason));
        if !theta.is_finite() {
            return bad("must be finite");
        }
        match *self {
            Transform::Log if theta <= 0.0 => bad("a log-parameterized value must be positive"),
            Transform::Log => Ok(theta.ln()),
            Transform::Identity => Ok(theta),
            Transform::Logistic { lower, upper } if !(lower < theta && theta < upper) => bad(
                &format!("must lie strictly between the bounds {lower} and {upper}"),
            ),
            Transform::Logistic { lower, upper } => {
                let p = (theta - lower) / (upper - lower);
                Ok((p / (1.0 - p)).ln())
            }
        }
    }
}

/// `σ(s) = 1 / (1 + exp(−s))`.
fn logistic(s: f64) -> f64 {
    1.0 / (1.0 + (-s).exp())
}

/// One parameter to identify: what it is, where the search starts, how it is constrained.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamSpec {
    /// The name as given (`friction`, `stiffness@ground`, `mass@box`, …).
    pub name: String,
    /// What it is.
    pub unknown: Unknown,
    /// Initial value θ₀ (in the parameter's unit).
    pub initial: f64,
    /// Reparameterization, default [`Transform::Log`] for scene parameters and
    /// [`Transform::Identity`] for initial velocities and the time offset.
    pub transform: Transform,
    /// Search bounds `[lower, upper]` given in the file (`None`: the default of
    /// [`ParamSpec::search_bounds`]). The optimizer stays inside them, multi-start draws its
    /// starts from them and profile intervals end at them.
    pub bounds: Option<(f64, f64)>,
}

impl ParamSpec {
    /// The unknown `name` of the scene of `sim` (see [`Unknown::parse`]), started at
    /// `initial`, or when `None` at the scene's own value (0 for an initial velocity, see
    /// [`ParamSpec::starting_from`], and for the time offset), with the default transform.
    ///
    /// # Errors
    /// An unknown name, or an initial value outside the transform's range or not finite.
    pub fn new(sim: &Simulator, name: &str, initial: Option<f64>) -> Result<Self> {
        let unknown = Unknown::parse(sim, name)?;
        let (scene_value, transform) = match unknown {
            Unknown::Scene(parameter) => (parameter.value(sim), Transform::Log),
            _ => (0.0, Transform::Identity),
        };
        let spec = ParamSpec {
            name: name.to_string(),
            unknown,
            initial: initial.unwrap_or(scene_value),
            transform,
            bounds: None,
        };
        spec.transform.to_coordinate(name, spec.initial)?;
        Ok(spec)
    }

    /// This parameter searched within `[lower, upper]`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for bounds that are not finite with `lower < upper`, that
    /// leave the transform's range (`lower ≤ 0` with `Log`) or that exclude the initial value.
    pub fn with_bounds(mut self, lower: f64, upper: f64) -> Result<Self> {
        let bad = |reason: String| {
            Err(Error::invalid(
                &self.name,
                format!("bounds [{lower}, {upper}]"),
                &reason,
            ))
        };
        if !(lower.is_finite() && upper.is_finite() && lower < upper) {
            return bad("bounds must be finite with lower < upper".into());
        }
        if self.transform == Transform::Log && lower <= 0.0 {
            return bad("a log-parameterized value is positive: give a lower bound > 0".into());
        }
        if !(lower <= self.initial && self.initial <= upper) {
            return bad(format!(
                "the bounds exclude the initial value {}",
                self.initial
            ));
        }
        self.bounds = Some((lower, upper));
        Ok(self)
    }

    /// The search bounds `[lower, upper]` in θ: those given, else those of a `Logistic`
    /// transform, else one decade either side of the start `[θ₀/10, 10 θ₀]` for a `Log`
    /// (positive) parameter; `None` for an unbounded `Identity` parameter.
    pub fn search_bounds(&self) -> Option<(f64, f64)> {
        self.bounds.or(match self.transform {
            Transform::Logistic { lower, upper } => Some((lower, upper)),
            Transform::Log => Some((self.initial / 10.0, self.initial * 10.0)),
            Transform::Identity => None,
        })
    }

    /// The search bounds in the coordinate `s` (`±∞` where unbounded; a `Logistic`
    /// transform's own bounds are open and map to `±∞`).
    pub fn coordinate_bounds(&self) -> (f64, f64) {
        match (self.search_bounds(), self.transform) {
            (Some((lower, upper)), Transform::Log | Transform::Identity) => {
                let to = |x: f64| match self.transform {
                    Transform::Log => x.ln(),
                    _ => x,
                };
                (to(lower), to(upper))
            }
            (Some((lower, upper)), Transform::Logistic { lower: a, upper: b }) => {
                let to = |x: f64| {
                    if x <= a || x >= b {
                        None
                    } else {
                        let p = (x - a) / (b - a);
                        Some((p / (1.0 - p)).ln())
                    }
                };
                (
                    to(lower).unwrap_or(f64::NEG_INFINITY),
                    to(upper).unwrap_or(f64::INFINITY),
                )
            }
            (None, _) => (f64::NEG_INFINITY, f64::INFINITY),
        }
    }

    /// This parameter with another transform.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for bounds that are not finite with `lower < upper`, or an
    /// initial value outside the new transform's range.
    pub fn with_transform(mut self, transform: Transform) -> Result<Self> {
        if let Transform::Logistic { lower, upper } = transform {
            if !(lower.is_finite() && upper.is_finite() && lower < upper) {
                return Err(Error::invalid(
                    &self.name,
                    format!("[{lower}, {upper}]"),
                    "bounds must be finite with lower < upper",
                ));
            }
        }
        self.transform = transform;
        self.transform.to_coordinate(&self.name, self.initial)?;
        if let Some((lower, upper)) = self.bounds {
            return self.with_bounds(lower, upper);
        }
        Ok(self)
    }

    /// An initial velocity started at its value in `state` (the scene's initial state) rather
    /// than 0; other unknowns unchanged.
    pub fn starting_from(mut self, state: &State) -> Self {
        if let Unknown::InitialVelocity { dof, .. } = self.unknown {
            self.initial = state.v[dof];
        }
        self
    }

    /// The initial coordinate `s₀ = g⁻¹(θ₀)`.
    pub fn initial_coordinate(&self) -> f64 {
        self.transform
            .to_coordinate(&self.name, self.initial)
            .expect("invariant: the initial value was checked against the transform")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Round trip and derivative against a central difference (step 1e-6, error O(h²)).
    #[test]
    fn transforms_invert_and_differentiate() {
        const TOL: f64 = 1e-8;
        let transforms = [
            (Transform::Log, 1e4),
            (Transform::Identity, -0.3),
            (
                Transform::Logistic {
                    lower: 0.1,
                    upper: 2.0,
                },
                0.7,
            ),
        ];
        for (t, theta) in transforms {
            let s = t.to_coordinate("x", theta).unwrap();
            assert!((t.to_value(s) - theta).abs() <= 1e-12 * theta.abs());
            let h = 1e-6;
            let fd = (t.to_value(s + h) - t.to_value(s - h)) / (2.0 * h);
            assert!(
                (t.derivative(s) - fd).abs() <= TOL * fd.abs().max(1.0),
                "{t:?}"
            );
        }
    }

    #[test]
    fn values_outside_the_range_are_rejected() {
        assert!(Transform::Log.to_coordinate("k", 0.0).is_err());
        let bounded = Transform::Logistic {
            lower: 0.0,
            upper: 1.0,
        };
        assert!(bounded.to_coordinate("mu", 1.0).is_err());
        assert!(Transform::Identity.to_coordinate("x", f64::NAN).is_err());
    }
}
