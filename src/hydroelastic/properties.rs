//! Hydroelastic properties of a geometry (Elandt Ch. 4; Drake's "hydroelastic with
//! fallback"): rigid, or compliant with a hydroelastic modulus `E`.

use crate::error::{Error, Result};
use crate::geometry::Shape;

/// How a geometry takes part in pressure-field contact.
///
/// A pair of geometries uses pressure-field contact when both have hydroelastic properties and
/// at least one is compliant; every other pair falls back to point contact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Hydroelastic {
    /// Rigid: a triangle surface mesh (a plane for a half-space). Made by
    /// [`Hydroelastic::rigid`].
    #[non_exhaustive]
    Rigid {
        /// Surface edge length (m).
        resolution_hint: f64,
    },
    /// Compliant: a tetrahedral mesh with the pressure field `p0 = E·e`, or for a half-space
    /// a layer of the given thickness with `p0 = E · depth / thickness`. Made by
    /// [`Hydroelastic::compliant`] (and [`Hydroelastic::with_thickness`] for a half-space).
    #[non_exhaustive]
    Compliant {
        /// Hydroelastic modulus `E` (Pa).
        modulus: f64,
        /// Edge length of the tetrahedral mesh (m); unused by a half-space.
        resolution_hint: f64,
        /// Thickness of a compliant half-space's layer (m); required for a half-space and
        /// only allowed there.
        thickness: Option<f64>,
    },
}

impl Hydroelastic {
    /// Rigid, meshed with surface edges of about `resolution_hint` (m).
    pub fn rigid(resolution_hint: f64) -> Self {
        Hydroelastic::Rigid { resolution_hint }
    }

    /// Compliant with the hydroelastic modulus `modulus` (`E`, Pa), its tetrahedral mesh with
    /// edges of about `resolution_hint` (m). A compliant half-space also needs its layer's
    /// thickness ([`Hydroelastic::with_thickness`]).
    ///
    /// ```
    /// use stiction::hydroelastic::Hydroelastic;
    /// use stiction::geometry::Shape;
    /// let ball = Hydroelastic::compliant(1e5, 0.005);
    /// assert!(ball.validate(&Shape::Sphere { radius: 0.05 }).is_ok());
    /// let floor = Hydroelastic::compliant(1e6, 0.01).with_thickness(0.02);
    /// assert!(floor.validate(&Shape::HalfSpace).is_ok());
    /// ```
    pub fn compliant(modulus: f64, resolution_hint: f64) -> Self {
        Hydroelastic::Compliant {
            modulus,
            resolution_hint,
            thickness: None,
        }
    }

    /// These properties with a compliant half-space's layer `thickness` (m) when compliant;
    /// unchanged when rigid.
    pub fn with_thickness(self, thickness: f64) -> Self {
        match self {
            Hydroelastic::Compliant {
                modulus,
                resolution_hint,
                ..
            } => Hydroelastic::Compliant {
                modulus,
                resolution_hint,
                thickness: Some(thickness),
            },
            rigid => rigid,
        }
    }

    /// The modulus `E` (Pa) of a compliant geometry, `None` when rigid.
    pub fn modulus(&self) -> Option<f64> {
        match self {
            Hydroelastic::Rigid { .. } => None,
            Hydroelastic::Compliant { modulus, .. } => Some(*modulus),
        }
    }

    /// These properties with the modulus `modulus` (Pa) when compliant; unchanged when rigid.
    pub fn with_modulus(self, modulus: f64) -> Self {
        match self {
            Hydroelastic::Compliant {
                resolution_hint,
                thickness,
                ..
            } => Hydroelastic::Compliant {
                modulus,
                resolution_hint,
                thickness,
            },
            rigid => rigid,
        }
    }

    /// The resolution hint (m).
    pub fn resolution_hint(&self) -> f64 {
        match self {
            Hydroelastic::Rigid { resolution_hint }
            | Hydroelastic::Compliant {
                resolution_hint, ..
            } => *resolution_hint,
        }
    }

    /// Checks ranges for a geometry of `shape`: `E > 0`, hint > 0, a thickness > 0 exactly when
    /// the shape is a compliant half-space.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming the offending property.
    pub fn validate(&self, shape: &Shape) -> Result<()> {
        let positive = |name: &str, x: f64| {
            if x > 0.0 && x.is_finite() {
                Ok(())
            } else {
                Err(Error::invalid(name, x, "must be positive and finite"))
            }
        };
        positive("resolution_hint", self.resolution_hint())?;
        if let Hydroelastic::Compliant {
            modulus, thickness, ..
        } = self
        {
            positive("modulus", *modulus)?;
            match (shape, thickness) {
                (Shape::HalfSpace, Some(h)) => positive("thickness", *h)?,
                (Shape::HalfSpace, None) => {
                    return Err(Error::invalid(
                        "thickness",
                        "none",
                        "a compliant half-space needs the thickness of its layer (m)",
                    ))
                }
                (_, Some(h)) => {
                    return Err(Error::invalid(
                        "thickness",
                        h,
                        "only a compliant half-space has a layer thickness",
                    ))
                }
                (_, None) => {}
            }
        }
        Ok(())
    }
}
