//! Compliant normal laws `f_n(x, ẋ)` (ICF Sec. IV, eq. (5)) and their discrete potentials.
//!
//! With `x = x0 + δt ẋ` and `ẋ = −v_n`, the discrete normal impulse is
//! `n(v_n) = δt f_n(x0 − δt v_n, −v_n)` (eq. (6)) and the potential is `−N(v_n)` with
//! `N' = n` (eq. (7)). Its second derivative is `δt² ∂f/∂x + δt ∂f/∂ẋ` (eq. (8)), so the
//! potential is convex when `∂f/∂x ≥ 0` and `∂f/∂ẋ ≥ 0`: every law checks the parameters that
//! guarantee this when a scene is built ([`NormalLawKind::check_convexity`]) and refuses the
//! others with the reason.
//!
//! The laws:
//! - [`HuntCrossley`] (`hunt_crossley.rs`): `k x₊ (1 + d ẋ)₊`, ICF eq. (13), the default;
//! - [`Hertz`] (`hertz.rs`): `(4/3) E* √R x₊^{3/2} (1 + d ẋ)₊`, Hertz's sphere with
//!   Hunt & Crossley dissipation;
//! - [`Barrier`] (`barrier.rs`): the IPC log barrier of ICF eqs. (11)-(12), whose force grows
//!   without bound as the gap closes.
//!
//! Adding a law touches three files: the law's own file (its type, its
//! [`NormalLaw`] implementation and its unit tests, which run the shared potential checks of
//! `contact/testing.rs`), this file (a [`NormalLawKind`] variant with its name and convexity
//! check, and a [`Law`] variant), and a scene test in `tests/normal_laws.rs`. A law with a new
//! parameter also adds it to [`crate::contact::ContactParams`] and the problem schema.

mod barrier;
mod hertz;
mod hunt_crossley;

use std::fmt;
use std::str::FromStr;

pub use barrier::{Barrier, BARRIER_FLOOR};
pub use hertz::Hertz;
pub use hunt_crossley::HuntCrossley;

use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// Value of the discrete normal potential's antiderivative and its derivatives at `v_n`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NormalEval<T: Scalar> {
    /// Antiderivative `N(v_n)` (N·s·m/s = J).
    pub antiderivative: T,
    /// Impulse `n(v_n) = N'(v_n)` (N·s).
    pub impulse: T,
    /// `n'(v_n)` (N·s²/m), ≤ 0 for a convex potential.
    pub impulse_derivative: T,
}

/// A compliant normal law within ICF's framework (eq. (5)), discretized at one contact's
/// previous penetration `x0` and step `δt`.
pub trait NormalLaw<T: Scalar>: Copy {
    /// Force `f_n(x, ẋ)` (N) at penetration `x` (m, > 0 overlapping) and rate `ẋ` (m/s).
    fn force(&self, x: T, xdot: T) -> T;
    /// Discrete antiderivative, impulse and impulse derivative at normal velocity `v_n`.
    fn discrete(&self, v_n: T) -> NormalEval<T>;
    /// The previous penetration `x0` (m) the law is discretized at.
    fn x0(&self) -> T;
    /// SAP's linear model of the law at the start of the step (ICF eq. (19), whose
    /// compliance is linear): the tangent stiffness `k̃ = ∂f_n/∂x (x0, 0)` (N/m) and the
    /// penetration `x̃0` (m) with `k̃ x̃0 = f_n(x0, 0)`. A law with no stiffness at `x0` (apart)
    /// returns `k̃ = 0`.
    fn linearized(&self) -> (T, T);
    /// The normal velocity `v̂` (m/s) at and above which the discrete impulse and its
    /// derivative are zero and the antiderivative is constant (ICF eq. (16)'s `v̂`).
    fn release_velocity(&self) -> T;
}

/// What a law reads of a pair's parameters ([`crate::contact::ContactParams`] implements it;
/// the laws do not depend on it).
pub trait LawParameters<T: Scalar> {
    /// Which law.
    fn kind(&self) -> NormalLawKind;
    /// Hunt & Crossley's k (N/m), Hertz's effective modulus E* (Pa), the barrier's κ (N/m).
    fn stiffness(&self) -> T;
    /// Hunt & Crossley dissipation d (s/m).
    fn dissipation(&self) -> T;
    /// Hertz's radius of curvature R (m).
    fn hertz_radius(&self) -> T;
    /// The barrier's activation gap d̂ (m).
    fn barrier_distance(&self) -> T;
}

/// Which normal law a contact pair uses (problem files: `normal_law`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum NormalLawKind {
    /// Linear Hunt & Crossley, `f_n = k x₊ (1 + d ẋ)₊` (ICF eq. (13)). Default.
    #[default]
    HuntCrossley,
    /// Hertz with Hunt & Crossley dissipation, `f_n = (4/3) E* √R x₊^{3/2} (1 + d ẋ)₊`: the
    /// pair's `stiffness` is the effective modulus `E*` (Pa) and `hertz_radius` the effective
    /// radius of curvature `R` (m).
    Hertz,
    /// IPC's log barrier (ICF eqs. (11)-(12)): the pair's `stiffness` is `κ` (N/m) and
    /// `barrier_distance` the gap `d̂` (m) below which it pushes; elastic (no dissipation).
    Barrier,
}

impl NormalLawKind {
    /// All laws, in documentation order.
    pub const ALL: [NormalLawKind; 3] = [
        NormalLawKind::HuntCrossley,
        NormalLawKind::Hertz,
        NormalLawKind::Barrier,
    ];

    /// The problem-file name (`hunt-crossley`, `hertz`, `barrier`).
    pub fn name(&self) -> &'static str {
        match self {
            NormalLawKind::HuntCrossley => "hunt-crossley",
            NormalLawKind::Hertz => "hertz",
            NormalLawKind::Barrier => "barrier",
        }
    }

    /// Refuses parameters for which the law's discrete potential would not be convex
    /// (ICF eq. (8): `∂f/∂x ≥ 0`, `∂f/∂ẋ ≥ 0`) or not defined, saying why.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming the parameter and the condition it breaks.
    pub fn check_convexity<T: Scalar>(&self, params: &impl LawParameters<T>) -> Result<()> {
        let finite = |name: &str, x: f64| {
            if x.is_finite() {
                Ok(())
            } else {
                Err(Error::invalid(name, x, "must be finite"))
            }
        };
        let k = params.stiffness().re();
        let d = params.dissipation().re();
        finite("stiffness", k)?;
        finite("dissipation", d)?;
        let dissipation = || {
            if d >= 0.0 {
                Ok(())
            } else {
                Err(Error::invalid(
                    "dissipation",
                    d,
                    "a negative dissipation d makes ∂f_n/∂ẋ = d·f_elastic < 0, so the normal \
                     potential would not be convex (ICF eq. (8)); use d ≥ 0 (s/m)",
                ))
            }
        };
        match self {
            NormalLawKind::HuntCrossley => {
                if k <= 0.0 {
                    return Err(Error::invalid(
                        "stiffness",
                        k,
                        "hunt-crossley needs k > 0 (N/m): with k < 0, ∂f_n/∂x = k(1 + dẋ) < 0 \
                         and the normal potential would not be convex (ICF eq. (8))",
                    ));
                }
                dissipation()
            }
            NormalLawKind::Hertz => {
                if k <= 0.0 {
                    return Err(Error::invalid(
                        "elastic_modulus",
                        k,
                        "hertz needs an effective modulus E* > 0 (Pa): with E* < 0, \
                         ∂f_n/∂x = 2E*√(Rx)(1 + dẋ) < 0 and the normal potential would not be \
                         convex (ICF eq. (8))",
                    ));
                }
                let r = params.hertz_radius().re();
                if !(r > 0.0 && r.is_finite()) {
                    return Err(Error::invalid(
                        "hertz_radius",
                        r,
                        "hertz needs a positive, finite radius of curvature R (m): a sphere or \
                         capsule in the pair, or `hertz_radius`",
                    ));
                }
                dissipation()
            }
            NormalLawKind::Barrier => {
                if k <= 0.0 {
                    return Err(Error::invalid(
                        "stiffness",
                        k,
                        "barrier needs κ > 0 (N/m): with κ < 0 the barrier pulls and its \
                         potential −κ(d̂ − g)² ln(g/d̂) is concave (ICF eq. (11))",
                    ));
                }
                let distance = params.barrier_distance().re();
                if !(distance > 0.0 && distance.is_finite()) {
                    return Err(Error::invalid(
                        "barrier_distance",
                        distance,
                        "barrier needs a positive, finite activation distance d̂ (m)",
                    ));
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for NormalLawKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for NormalLawKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        NormalLawKind::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| {
                Error::invalid(
                    "normal_law",
                    s,
                    "expected one of hunt-crossley, hertz, barrier",
                )
            })
    }
}

/// Any of the laws, discretized at one contact: what the contact factory makes from a pair's
/// [`crate::contact::ContactParams`] ([`Law::new`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Law<T: Scalar> {
    /// [`HuntCrossley`].
    HuntCrossley(HuntCrossley<T>),
    /// [`Hertz`].
    Hertz(Hertz<T>),
    /// [`Barrier`].
    Barrier(Barrier<T>),
}

impl<T: Scalar> Law<T> {
    /// The law of `params` at previous penetration `x0` (m) and step `dt` (s).
    #[inline(always)]
    pub fn new(params: &impl LawParameters<T>, x0: T, dt: T) -> Self {
        match params.kind() {
            NormalLawKind::HuntCrossley => {
                Law::HuntCrossley(HuntCrossley::from_params(params, x0, dt))
            }
            NormalLawKind::Hertz => Law::Hertz(Hertz::new(
                params.stiffness(),
                params.hertz_radius(),
                params.dissipation(),
                x0,
                dt,
            )),
            NormalLawKind::Barrier => Law::Barrier(Barrier::new(
                params.stiffness(),
                params.barrier_distance(),
                x0,
                dt,
            )),
        }
    }
}

impl<T: Scalar> NormalLaw<T> for Law<T> {
    #[inline(always)]
    fn force(&self, x: T, xdot: T) -> T {
        match self {
            Law::HuntCrossley(l) => l.force(x, xdot),
            Law::Hertz(l) => l.force(x, xdot),
            Law::Barrier(l) => l.force(x, xdot),
        }
    }

    #[inline(always)]
    fn discrete(&self, v_n: T) -> NormalEval<T> {
        match self {
            Law::HuntCrossley(l) => l.discrete(v_n),
            Law::Hertz(l) => l.discrete(v_n),
            Law::Barrier(l) => l.discrete(v_n),
        }
    }

    #[inline(always)]
    fn x0(&self) -> T {
        match self {
            Law::HuntCrossley(l) => l.x0,
            Law::Hertz(l) => l.x0,
            Law::Barrier(l) => l.x0,
        }
    }

    #[inline(always)]
    fn linearized(&self) -> (T, T) {
        match self {
            Law::HuntCrossley(l) => l.linearized(),
            Law::Hertz(l) => l.linearized(),
            Law::Barrier(l) => l.linearized(),
        }
    }

    #[inline(always)]
    fn release_velocity(&self) -> T {
        match self {
            Law::HuntCrossley(l) => l.release_velocity(),
            Law::Hertz(l) => l.release_velocity(),
            Law::Barrier(l) => l.release_velocity(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::ContactParams;

    #[test]
    fn names_round_trip() {
        for law in NormalLawKind::ALL {
            assert_eq!(law.name().parse::<NormalLawKind>().unwrap(), law);
        }
        assert!("hooke".parse::<NormalLawKind>().is_err());
    }

    #[test]
    fn non_convex_parameters_are_refused_with_the_reason() {
        let base = ContactParams::<f64> {
            hertz_radius: 0.05,
            barrier_distance: 1e-3,
            ..Default::default()
        };
        for law in NormalLawKind::ALL {
            let p = ContactParams { law, ..base };
            p.law.check_convexity(&p).unwrap();
            let soft = ContactParams {
                stiffness: -1.0,
                ..p
            };
            let e = law.check_convexity(&soft).unwrap_err().to_string();
            assert!(e.contains("convex") || e.contains("concave"), "{law}: {e}");
        }
        for law in [NormalLawKind::HuntCrossley, NormalLawKind::Hertz] {
            let p = ContactParams {
                law,
                dissipation: -1.0,
                ..base
            };
            let e = law.check_convexity(&p).unwrap_err().to_string();
            assert!(e.contains("ICF eq. (8)"), "{e}");
        }
        let flat = ContactParams {
            law: NormalLawKind::Hertz,
            hertz_radius: f64::INFINITY,
            ..base
        };
        assert!(flat
            .law
            .check_convexity(&flat)
            .unwrap_err()
            .to_string()
            .contains("sphere"));
        let no_gap = ContactParams {
            law: NormalLawKind::Barrier,
            barrier_distance: 0.0,
            ..base
        };
        assert!(no_gap.law.check_convexity(&no_gap).is_err());
    }
}
