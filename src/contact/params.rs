//! Contact parameters per geometry pair, their defaults and combination rules.

use crate::contact::law::{LawParameters, NormalLawKind};
use crate::error::{Error, Result};
use crate::scalar::{lit, Scalar};

/// Parameters of one contact pair.
///
/// Defaults ([`ContactParams::default`]): μ = 0.5, k = 1e6 N/m, d = 10 s/m,
/// τ_d = 1e-3 s, v_s = 1e-4 m/s, σ = 1e-3.
///
/// Each contact *point* carries the pair's stiffness `k`: a box resting on four corners sinks
/// `m g / (4 k)`.
///
/// Made from the defaults and the `with_*` methods (the struct is `#[non_exhaustive]`, so a
/// new parameter never breaks code that builds parameters); the fields stay public to read and
/// to change. Ranges are checked by [`ContactParams::validate`], which every simulator runs.
///
/// ```
/// use stiction::prelude::*;
/// let rubber = ContactParams::<f64>::default().with_mu(0.9).with_stiffness(2e5);
/// assert_eq!((rubber.mu, rubber.stiffness, rubber.dissipation), (0.9, 2e5, 10.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct ContactParams<T: Scalar> {
    /// Coulomb friction coefficient μ (dimensionless).
    pub mu: T,
    /// Linear stiffness k (N/m), ICF eq. (13).
    pub stiffness: T,
    /// Hunt & Crossley dissipation d (s/m), ICF eq. (13); Lagged and Similar.
    pub dissipation: T,
    /// SAP's linear dissipation relaxation time τ_d (s).
    pub relaxation_time: T,
    /// Stiction tolerance v_s (m/s), the soft-norm ε of ICF eq. (18); Lagged and Similar.
    pub stiction_tolerance: T,
    /// SAP's / regularized Lagged's dimensionless friction regularization σ (ICF eq. (44)).
    pub sigma: T,
    /// The normal law ([`NormalLawKind`], default Hunt & Crossley). For
    /// [`NormalLawKind::Hertz`], `stiffness` holds the effective modulus `E*` (Pa); for
    /// [`NormalLawKind::Barrier`], κ (N/m).
    pub law: NormalLawKind,
    /// Hertz's effective radius of curvature `R` (m); infinite (the default) until a scene
    /// fills it from the geometry's shape (a sphere's or capsule's radius).
    pub hertz_radius: T,
    /// The barrier's activation gap `d̂` (m), default 1 mm.
    pub barrier_distance: T,
}

impl<T: Scalar> Default for ContactParams<T> {
    fn default() -> Self {
        ContactParams {
            mu: lit(0.5),
            stiffness: lit(1e6),
            dissipation: lit(10.0),
            relaxation_time: lit(1e-3),
            stiction_tolerance: lit(1e-4),
            sigma: lit(1e-3),
            law: NormalLawKind::HuntCrossley,
            hertz_radius: lit(f64::INFINITY),
            barrier_distance: lit(1e-3),
        }
    }
}

impl<T: Scalar> ContactParams<T> {
    /// These parameters with friction coefficient μ.
    pub fn with_mu(mut self, mu: T) -> Self {
        self.mu = mu;
        self
    }

    /// These parameters with stiffness `k` (N/m; `E*` in Pa for Hertz, κ in N/m for the
    /// barrier: see [`ContactParams::law`]).
    pub fn with_stiffness(mut self, stiffness: T) -> Self {
        self.stiffness = stiffness;
        self
    }

    /// These parameters with Hunt & Crossley dissipation `d` (s/m).
    pub fn with_dissipation(mut self, dissipation: T) -> Self {
        self.dissipation = dissipation;
        self
    }

    /// These parameters with SAP's relaxation time τ_d (s).
    pub fn with_relaxation_time(mut self, relaxation_time: T) -> Self {
        self.relaxation_time = relaxation_time;
        self
    }

    /// These parameters with stiction tolerance `v_s` (m/s).
    pub fn with_stiction_tolerance(mut self, stiction_tolerance: T) -> Self {
        self.stiction_tolerance = stiction_tolerance;
        self
    }

    /// These parameters with friction regularization σ (dimensionless).
    pub fn with_sigma(mut self, sigma: T) -> Self {
        self.sigma = sigma;
        self
    }

    /// These parameters with normal law `law`.
    pub fn with_law(mut self, law: NormalLawKind) -> Self {
        self.law = law;
        self
    }

    /// These parameters with Hertz's effective radius `R` (m).
    pub fn with_hertz_radius(mut self, hertz_radius: T) -> Self {
        self.hertz_radius = hertz_radius;
        self
    }

    /// These parameters with the barrier's activation gap `d̂` (m).
    pub fn with_barrier_distance(mut self, barrier_distance: T) -> Self {
        self.barrier_distance = barrier_distance;
        self
    }
}

impl<T: Scalar> ContactParams<T> {
    /// Checks that the normal law is convex with these parameters
    /// ([`NormalLawKind::check_convexity`]), then ranges: μ ≥ 0, k > 0, d ≥ 0, τ_d ≥ 0,
    /// v_s > 0, σ > 0, all finite.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming the first offending parameter.
    pub fn validate(&self) -> Result<()> {
        self.law.check_convexity(self)?;
        let checks = [
            ("friction", self.mu.re(), self.mu.re() >= 0.0),
            ("stiffness", self.stiffness.re(), self.stiffness.re() > 0.0),
            (
                "dissipation",
                self.dissipation.re(),
                self.dissipation.re() >= 0.0,
            ),
            (
                "relaxation_time",
                self.relaxation_time.re(),
                self.relaxation_time.re() >= 0.0,
            ),
            (
                "stiction_tolerance",
                self.stiction_tolerance.re(),
                self.stiction_tolerance.re() > 0.0,
            ),
            ("sigma", self.sigma.re(), self.sigma.re() > 0.0),
        ];
        for (name, value, ok) in checks {
            if !(ok && value.is_finite()) {
                return Err(Error::invalid(
                    name,
                    value,
                    "out of range (see ContactParams docs)",
                ));
            }
        }
        Ok(())
    }

    /// These parameters in another scalar type, through their real parts (f64 → dual lifts
    /// them with zero derivative parts).
    pub fn cast<U: Scalar>(&self) -> ContactParams<U> {
        ContactParams {
            mu: lit(self.mu.re()),
            stiffness: lit(self.stiffness.re()),
            dissipation: lit(self.dissipation.re()),
            relaxation_time: lit(self.relaxation_time.re()),
            stiction_tolerance: lit(self.stiction_tolerance.re()),
            sigma: lit(self.sigma.re()),
            law: self.law,
            hertz_radius: lit(self.hertz_radius.re()),
            barrier_distance: lit(self.barrier_distance.re()),
        }
    }

    /// Combines the parameters of two geometries as Drake does: friction
    /// `μ = 2 μ_a μ_b / (μ_a + μ_b)`, stiffness in series `k = k_a k_b / (k_a + k_b)`,
    /// dissipation weighted by compliance `d = (k_b d_a + k_a d_b) / (k_a + k_b)`, relaxation
    /// times added `τ_d = τ_a + τ_b`; stiction tolerance and σ take the smaller (tighter) value.
    /// The normal law is the one that is not Hunt & Crossley, if any (a scene refuses pairs of
    /// two different laws other than Hunt & Crossley, [`ContactParams::law_of_pair`]); Hertz
    /// radii combine as curvatures, `1/R = 1/R_a + 1/R_b` (moduli, in `stiffness`, in series
    /// as above: `1/E* = 1/E_a + 1/E_b`), and the barrier takes the larger `d̂`.
    pub fn combine(a: &Self, b: &Self) -> Self {
        let mu = if (a.mu + b.mu).re() > 0.0 {
            lit::<T>(2.0) * a.mu * b.mu / (a.mu + b.mu)
        } else {
            T::zero()
        };
        let ks = a.stiffness + b.stiffness;
        ContactParams {
            mu,
            stiffness: a.stiffness * b.stiffness / ks,
            dissipation: (b.stiffness * a.dissipation + a.stiffness * b.dissipation) / ks,
            relaxation_time: a.relaxation_time + b.relaxation_time,
            stiction_tolerance: a.stiction_tolerance.min(b.stiction_tolerance),
            sigma: a.sigma.min(b.sigma),
            law: if a.law == NormalLawKind::HuntCrossley {
                b.law
            } else {
                a.law
            },
            hertz_radius: T::one() / (T::one() / a.hertz_radius + T::one() / b.hertz_radius),
            barrier_distance: a.barrier_distance.max(b.barrier_distance),
        }
    }

    /// The law of a pair of geometries with parameters `a` and `b`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when they name two different laws, neither Hunt & Crossley
    /// being a default that yields.
    pub fn law_of_pair(a: &Self, b: &Self) -> Result<NormalLawKind> {
        match (a.law, b.law) {
            (x, y) if x == y => Ok(x),
            (NormalLawKind::HuntCrossley, y) => Ok(y),
            (x, NormalLawKind::HuntCrossley) => Ok(x),
            (x, y) => Err(Error::invalid(
                "normal_law",
                format!("{x} and {y}"),
                "a pair of geometries needs one normal law",
            )),
        }
    }
}

impl<T: Scalar> LawParameters<T> for ContactParams<T> {
    #[inline(always)]
    fn kind(&self) -> NormalLawKind {
        self.law
    }
    #[inline(always)]
    fn stiffness(&self) -> T {
        self.stiffness
    }
    #[inline(always)]
    fn dissipation(&self) -> T {
        self.dissipation
    }
    #[inline(always)]
    fn hertz_radius(&self) -> T {
        self.hertz_radius
    }
    #[inline(always)]
    fn barrier_distance(&self) -> T {
        self.barrier_distance
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combination_of_equal_materials() {
        let a = ContactParams::<f64> {
            mu: 0.6,
            stiffness: 2e6,
            dissipation: 4.0,
            ..Default::default()
        };
        let c = ContactParams::combine(&a, &a);
        assert!((c.mu - 0.6).abs() < 1e-15);
        assert!((c.stiffness - 1e6).abs() < 1e-6);
        assert!((c.dissipation - 4.0).abs() < 1e-15);
        assert!((c.relaxation_time - 2e-3).abs() < 1e-15);
    }
}
