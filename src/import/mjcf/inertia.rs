//! Body inertias as MuJoCo's compiler makes them (src/user/user_objects.cc,
//! `mjCGeom::GetVolume`, `mjCGeom::SetInertia`, `mjCBody::InertiaFromGeom`, `mjCBody::Compile`):
//!
//! - a geom's mass is its `mass` if set, else `density` (default 1000 kg/m³) times its volume:
//!   sphere `4/3 π r³`, capsule `π r² (2h + 4r/3)` (a cylinder with two hemispheres),
//!   cylinder `2π r² h`, box `8 xyz`, ellipsoid `4/3 π abc`, plane 0;
//! - its rotational inertia is that of the uniform solid ([`Shape::solid_inertia`], whose
//!   capsule formula is MuJoCo's: hemispheres displaced along the axis);
//! - a body's inertia from its geoms (those of mass > ε in the counted groups) is the sum
//!   about the common centre of mass, `I = Σ R_g I_g R_gᵀ + m_g (‖d_g‖² 1 − d_g d_gᵀ)`;
//! - an `<inertial>` gives `pos`, its orientation, `mass` and `diaginertia` or `fullinertia`
//!   (`Ixx Iyy Izz Ixy Ixz Iyz`);
//! - `boundmass`/`boundinertia` bound the mass and the principal moments from below, and the
//!   principal moments must satisfy the triangle inequality `A + B ≥ C` (MuJoCo's "inertia
//!   must satisfy A + B >= C").
#![allow(non_snake_case)]

use std::f64::consts::PI;

use nalgebra::{Matrix3, Vector3};

use crate::error::Result;
use crate::geometry::Shape;
use crate::import::mjcf::defaults::Attrs;
use crate::import::mjcf::orientation::{orientation, Compiler};
use crate::math::SpatialInertia;

/// Geoms lighter than this take no part in a body's inertia (MuJoCo's `mjEPS`).
pub(super) const MASS_EPS: f64 = 1e-14;

/// Relative slack of the triangle inequality on principal moments, for the round-off of an
/// inertia summed from geoms and diagonalized (a flat body sits exactly on the boundary).
const TRIANGLE_SLACK: f64 = 1e-12;

/// The volume of a solid shape (m³); zero for a half-space.
pub(super) fn volume(shape: &Shape) -> f64 {
    match shape {
        Shape::Sphere { radius: r } => 4.0 / 3.0 * PI * r * r * r,
        Shape::Capsule {
            radius: r,
            half_length: h,
        } => PI * (r * r * 2.0 * h + 4.0 * r * r * r / 3.0),
        Shape::Cylinder {
            radius: r,
            half_length: h,
        } => PI * r * r * 2.0 * h,
        Shape::Box { half_extents: e } => 8.0 * e.x * e.y * e.z,
        Shape::Ellipsoid { semi_axes: a } => 4.0 / 3.0 * PI * a.x * a.y * a.z,
        Shape::HalfSpace | Shape::ConvexMesh { .. } => 0.0,
    }
}

/// A rigid mass: mass (kg), centre of mass (m) and rotational inertia about it (kg·m²), in a
/// body's frame.
pub(super) type Mass = SpatialInertia<f64>;

/// The zero mass.
pub(super) fn massless() -> Mass {
    SpatialInertia {
        mass: 0.0,
        com: Vector3::zeros(),
        inertia_com: Matrix3::zeros(),
    }
}

/// The mass of one geom of `shape` placed at `com` with rotation `R` in the body frame, from
/// its `mass` or `density` (MuJoCo's `mjCGeom::Compile`).
pub(super) fn geom_mass(
    a: &Attrs,
    shape: &Shape,
    R: &Matrix3<f64>,
    com: Vector3<f64>,
) -> Result<Mass> {
    let v = volume(shape);
    let mass = match a.f64("mass")? {
        Some(m) if m < 0.0 => return Err(a.error("mass", "a mass ≥ 0 (kg)", m.to_string())),
        Some(m) if v > MASS_EPS => m,
        Some(_) => 0.0,
        None => {
            let density = a.f64_or("density", 1000.0)?;
            if density < 0.0 {
                return Err(a.error("density", "a density ≥ 0 (kg/m³)", density.to_string()));
            }
            density * v
        }
    };
    let local = shape.solid_inertia(mass).unwrap_or_else(Matrix3::zeros);
    Ok(SpatialInertia {
        mass,
        com,
        inertia_com: R * local * R.transpose(),
    })
}

/// The sum of `parts` about their common centre of mass (MuJoCo's `InertiaFromGeom`); the
/// zero mass for none.
pub(super) fn combine(parts: &[Mass]) -> Mass {
    let parts: Vec<&Mass> = parts.iter().filter(|p| p.mass > MASS_EPS).collect();
    let mass: f64 = parts.iter().map(|p| p.mass).sum();
    match parts.as_slice() {
        [] => massless(),
        [one] => **one,
        _ => {
            let com = parts.iter().map(|p| p.com * p.mass).sum::<Vector3<f64>>() / mass;
            let inertia_com = parts
                .iter()
                .map(|p| {
                    let d = p.com - com;
                    p.inertia_com + (Matrix3::identity() * d.dot(&d) - d * d.transpose()) * p.mass
                })
                .sum();
            SpatialInertia {
                mass,
                com,
                inertia_com,
            }
        }
    }
}

/// The mass an `<inertial>` element writes.
///
/// # Errors
/// A missing `pos` or `mass`, both or neither of `diaginertia` and `fullinertia`, an
/// orientation with `fullinertia`, or a malformed number.
pub(super) fn inertial(a: &Attrs, compiler: &Compiler) -> Result<Mass> {
    let pos = a
        .array::<3>("pos", "centre of mass x y z")?
        .ok_or_else(|| a.error("pos", "the centre of mass (MuJoCo requires it)", "nothing"))?;
    let mass = a
        .f64("mass")?
        .ok_or_else(|| a.error("mass", "the mass (kg; MuJoCo requires it)", "nothing"))?;
    let q = orientation(a, compiler)?;
    let local = match (
        a.array::<3>("diaginertia", "Ixx Iyy Izz")?,
        a.array::<6>("fullinertia", "Ixx Iyy Izz Ixy Ixz Iyz")?,
    ) {
        (Some(d), None) => Matrix3::from_diagonal(&Vector3::from(d)),
        (None, Some([xx, yy, zz, xy, xz, yz])) => {
            if ["quat", "axisangle", "euler", "xyaxes", "zaxis"]
                .iter()
                .any(|f| a.has(f))
            {
                return Err(a.error(
                    "fullinertia",
                    "no orientation beside fullinertia (MuJoCo refuses both)",
                    "an orientation",
                ));
            }
            Matrix3::new(xx, xy, xz, xy, yy, yz, xz, yz, zz)
        }
        (Some(_), Some(_)) => {
            return Err(a.error(
                "fullinertia",
                "diaginertia or fullinertia, not both",
                "both",
            ))
        }
        (None, None) => {
            return Err(a.error(
                "diaginertia",
                "diaginertia or fullinertia (kg·m²)",
                "neither",
            ))
        }
    };
    let R = q.to_rotation_matrix().into_inner();
    Ok(SpatialInertia {
        mass,
        com: Vector3::from(pos),
        inertia_com: R * local * R.transpose(),
    })
}

/// Applies `boundmass` and `boundinertia` and checks what MuJoCo's `mjCBody::Compile` checks:
/// no negative mass or moment, and principal moments satisfying `A + B ≥ C`. Returns the
/// bounded mass, or what is wrong.
pub(super) fn bound_and_check(m: &Mass, compiler: &Compiler) -> std::result::Result<Mass, String> {
    let mass = m.mass.max(compiler.boundmass);
    let eigen = m.inertia_com.symmetric_eigen();
    let moments = eigen.eigenvalues.map(|x| x.max(compiler.boundinertia));
    if mass < 0.0
        || moments
            .iter()
            .any(|x| *x < -TRIANGLE_SLACK * moments.abs().sum())
    {
        return Err(format!(
            "mass {mass} kg and principal moments {:?} kg·m² (negative)",
            moments.as_slice()
        ));
    }
    let slack = TRIANGLE_SLACK * moments.sum();
    let [a, b, c] = [moments[0], moments[1], moments[2]];
    if a + b < c - slack || a + c < b - slack || b + c < a - slack {
        return Err(format!(
            "principal moments {a}, {b}, {c} kg·m², which violate the triangle inequality \
             A + B ≥ C"
        ));
    }
    let inertia_com = if compiler.boundinertia > 0.0 {
        eigen.eigenvectors * Matrix3::from_diagonal(&moments) * eigen.eigenvectors.transpose()
    } else {
        m.inertia_com
    };
    Ok(SpatialInertia {
        mass,
        com: m.com,
        inertia_com,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn two_offset_spheres_follow_the_parallel_axis_theorem() {
        let s = Shape::Sphere { radius: 0.1 };
        let one = |x: f64| SpatialInertia {
            mass: 2.0,
            com: Vector3::new(x, 0.0, 0.0),
            inertia_com: s.solid_inertia(2.0).expect("a sphere"),
        };
        let both = combine(&[one(-0.5), one(0.5)]);
        let i_own = 0.4 * 2.0 * 0.01;
        assert_relative_eq!(both.mass, 4.0);
        assert_relative_eq!(both.com, Vector3::zeros());
        assert_relative_eq!(both.inertia_com[(0, 0)], 2.0 * i_own, epsilon = 1e-15);
        assert_relative_eq!(
            both.inertia_com[(1, 1)],
            2.0 * (i_own + 2.0 * 0.25),
            epsilon = 1e-15
        );
    }
}
