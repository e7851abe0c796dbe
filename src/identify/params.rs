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

use crate::derivatives::Parameter;
use crate::error::{Error, Result};
use crate::step::Simulator;

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
    /// The parsed parameter.
    pub parameter: Parameter,
    /// Initial value θ₀ (in the parameter's unit).
    pub initial: f64,
    /// Reparameterization, default [`Transform::Log`].
    pub transform: Transform,
    /// Search bounds `[lower, upper]` given in the file (`None`: the default of
    /// [`ParamSpec::search_bounds`]). The optimizer stays inside them, multi-start draws its
    /// starts from them and profile intervals end at them.
    pub bounds: Option<(f64, f64)>,
}

impl ParamSpec {
    /// The parameter `name` of the scene of `sim` (see [`Parameter::parse`]), started at
    /// `initial`, or at the scene's own value when `None`, with the `Log` transform.
    ///
    /// # Errors
    /// An unknown name, or a non-positive or non-finite initial value.
    pub fn new(sim: &Simulator, name: &str, initial: Option<f64>) -> Result<Self> {
        let parameter = Parameter::parse(sim, name)?;
        let spec = ParamSpec {
            name: name.to_string(),
            parameter,
            initial: initial.unwrap_or_else(|| parameter.value(sim)),
            transform: Transform::Log,
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
