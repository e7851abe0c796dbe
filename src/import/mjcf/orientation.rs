//! The `<compiler>` settings and frames: `pos` and the five orientation forms of MuJoCo's
//! `ResolveOrientation` (src/user/user_objects.cc) and `mjuu_z2quat`/`mjuu_frame2quat`
//! (src/user/user_util.cc):
//!
//! - `quat = "w x y z"`, normalized;
//! - `axisangle = "x y z a"`: rotation by `a` about the normalized axis;
//! - `euler = "a b c"` with `compiler/@eulerseq` (default `xyz`): one rotation per letter,
//!   post-multiplied for lower case (rotating axes), pre-multiplied for upper case (fixed
//!   axes);
//! - `xyaxes = "x1 x2 x3 y1 y2 y3"`: x normalized, y made orthogonal to x and normalized,
//!   z = x × y;
//! - `zaxis = "x y z"`: the minimal rotation taking (0, 0, 1) to the axis.
//!
//! Angles are in degrees unless `compiler/@angle="radian"` (MuJoCo's default is degrees).

#![allow(non_snake_case)]

use nalgebra::{Matrix3, Quaternion, Rotation3, Unit, UnitQuaternion, Vector3};

use crate::error::Result;
use crate::import::mjcf::defaults::Attrs;
use crate::math::Pose;

/// Below this norm an axis is degenerate (MuJoCo's `mjEPS`).
const EPS: f64 = 1e-14;

/// How `inertiafromgeom` chooses between `<inertial>` and the geoms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum InertiaFromGeom {
    /// Geoms only where a body has no `<inertial>` (MuJoCo's default).
    Auto,
    /// Always from the geoms, `<inertial>` ignored.
    Always,
    /// Never: bodies without `<inertial>` are massless.
    Never,
}

/// The `<compiler>` settings that change the model.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Compiler {
    /// Angles in degrees (`angle="degree"`, the default) rather than radians.
    pub degree: bool,
    /// The Euler sequence, three of `xyzXYZ`.
    pub eulerseq: [u8; 3],
    /// Where body inertias come from.
    pub inertia_from_geom: InertiaFromGeom,
    /// `range` alone makes a joint limited (`autolimits`, default true).
    pub autolimits: bool,
    /// Lower bound on every body's mass (kg).
    pub boundmass: f64,
    /// Lower bound on every body's principal moments (kg·m²).
    pub boundinertia: f64,
    /// Scale all masses and inertias to this total (kg), when set.
    pub settotalmass: Option<f64>,
    /// Visual geoms (contype = conaffinity = 0) take no part in inertia.
    pub discardvisual: bool,
    /// Geom groups that count in inertia, inclusive.
    pub inertia_groups: [i64; 2],
    /// Folder of the mesh files (`meshdir`, else `assetdir`), relative to the model file.
    pub meshdir: Option<String>,
}

impl Default for Compiler {
    fn default() -> Self {
        Compiler {
            degree: true,
            eulerseq: *b"xyz",
            inertia_from_geom: InertiaFromGeom::Auto,
            autolimits: true,
            boundmass: 0.0,
            boundinertia: 0.0,
            settotalmass: None,
            discardvisual: false,
            inertia_groups: [0, 5],
            meshdir: None,
        }
    }
}

impl Compiler {
    /// Applies one `<compiler>` element.
    ///
    /// # Errors
    /// Unknown keywords, a malformed `eulerseq`, `coordinate="global"` (removed from MuJoCo)
    /// and `balanceinertia` (which MuJoCo applies silently; here inertias must be physical).
    pub fn apply(&mut self, a: &Attrs) -> Result<()> {
        self.degree = a.keyword(
            "angle",
            &["degree", "radian"],
            if self.degree { "degree" } else { "radian" },
        )? == "degree";
        if let Some(seq) = a.str("eulerseq") {
            let bytes = seq.as_bytes();
            if bytes.len() != 3 || !bytes.iter().all(|b| b"xyzXYZ".contains(b)) {
                return Err(a.error("eulerseq", "three letters of x, y, z, X, Y, Z", seq));
            }
            self.eulerseq = [bytes[0], bytes[1], bytes[2]];
        }
        if a.has("inertiafromgeom") {
            self.inertia_from_geom =
                match a.keyword("inertiafromgeom", &["auto", "true", "false"], "auto")? {
                    "true" => InertiaFromGeom::Always,
                    "false" => InertiaFromGeom::Never,
                    _ => InertiaFromGeom::Auto,
                };
        }
        if let Some(v) = a.bool("autolimits")? {
            self.autolimits = v;
        }
        if let Some(v) = a.bool("discardvisual")? {
            self.discardvisual = v;
        }
        if a.keyword("coordinate", &["local", "global"], "local")? == "global" {
            return Err(a.error(
                "coordinate",
                "local (MuJoCo removed global coordinates)",
                "global",
            ));
        }
        if a.bool("balanceinertia")? == Some(true) {
            return Err(a.error(
                "balanceinertia",
                "false: inertias must satisfy the triangle inequality as written",
                "true",
            ));
        }
        if let Some(dir) = a.str("meshdir").or(a.str("assetdir")) {
            self.meshdir = Some(dir.to_string());
        }
        self.boundmass = non_negative(a, "boundmass", self.boundmass)?;
        self.boundinertia = non_negative(a, "boundinertia", self.boundinertia)?;
        if let Some(total) = a.f64("settotalmass")? {
            self.settotalmass = (total > 0.0).then_some(total);
        }
        if let Some(range) = a.str("inertiagrouprange") {
            let parts: Vec<i64> = range
                .split_whitespace()
                .map(|t| t.parse::<i64>())
                .collect::<std::result::Result<_, _>>()
                .map_err(|_| a.error("inertiagrouprange", "two integers", range))?;
            self.inertia_groups = <[i64; 2]>::try_from(parts.as_slice())
                .map_err(|_| a.error("inertiagrouprange", "two integers", range))?;
        }
        Ok(())
    }

    /// An angle attribute's value in radians.
    pub fn angle(&self, x: f64) -> f64 {
        if self.degree {
            x.to_radians()
        } else {
            x
        }
    }
}

fn non_negative(a: &Attrs, name: &str, default: f64) -> Result<f64> {
    match a.f64(name)? {
        None => Ok(default),
        Some(x) if x >= 0.0 => Ok(x),
        Some(x) => Err(a.error(name, "a value ≥ 0", x.to_string())),
    }
}

/// The orientation of an element: identity if none of the five forms is given.
///
/// # Errors
/// More than one form, a form with the wrong count of numbers, a degenerate axis.
pub(super) fn orientation(a: &Attrs, compiler: &Compiler) -> Result<UnitQuaternion<f64>> {
    let forms = ["quat", "axisangle", "euler", "xyaxes", "zaxis"];
    let given: Vec<&str> = forms.iter().copied().filter(|f| a.has(f)).collect();
    if given.len() > 1 {
        return Err(a.error(
            given[1],
            "one orientation form (quat, axisangle, euler, xyaxes or zaxis)",
            given.join(" and "),
        ));
    }
    let Some(&form) = given.first() else {
        return Ok(UnitQuaternion::identity());
    };
    let degenerate = |what: &str| {
        a.error(
            form,
            format!("a non-degenerate {what}"),
            a.str(form).unwrap_or_default(),
        )
    };
    match form {
        "quat" => {
            let [w, x, y, z] = a
                .array::<4>("quat", "w x y z")?
                .unwrap_or([1.0, 0.0, 0.0, 0.0]);
            let q = Quaternion::new(w, x, y, z);
            if q.norm() < EPS {
                return Err(degenerate("quaternion"));
            }
            Ok(UnitQuaternion::from_quaternion(q))
        }
        "axisangle" => {
            let [x, y, z, angle] = a
                .array::<4>("axisangle", "axis x y z, angle")?
                .unwrap_or_default();
            let axis = Vector3::new(x, y, z);
            if axis.norm() < EPS {
                return Err(degenerate("axis"));
            }
            Ok(UnitQuaternion::from_axis_angle(
                &Unit::new_normalize(axis),
                compiler.angle(angle),
            ))
        }
        "euler" => {
            let angles = a.array::<3>("euler", "three angles")?.unwrap_or_default();
            Ok(euler(angles.map(|x| compiler.angle(x)), &compiler.eulerseq))
        }
        "xyaxes" => {
            let v = a
                .array::<6>("xyaxes", "x axis, then y axis")?
                .unwrap_or_default();
            let x = Vector3::new(v[0], v[1], v[2]);
            if x.norm() < EPS {
                return Err(degenerate("x axis"));
            }
            let x = x.normalize();
            let y = Vector3::new(v[3], v[4], v[5]);
            let y = y - x * x.dot(&y);
            if y.norm() < EPS {
                return Err(degenerate("y axis, not parallel to x"));
            }
            let y = y.normalize();
            let z = x.cross(&y);
            let R = Matrix3::from_columns(&[x, y, z]);
            Ok(UnitQuaternion::from_rotation_matrix(
                &Rotation3::from_matrix_unchecked(R),
            ))
        }
        _ => {
            let [x, y, z] = a.array::<3>("zaxis", "x y z")?.unwrap_or_default();
            let v = Vector3::new(x, y, z);
            if v.norm() < EPS {
                return Err(degenerate("z axis"));
            }
            Ok(z_to(&v))
        }
    }
}

/// The rotation of an Euler sequence (MuJoCo's loop in `ResolveOrientation`).
pub(super) fn euler(angles: [f64; 3], seq: &[u8; 3]) -> UnitQuaternion<f64> {
    let mut q = UnitQuaternion::identity();
    for (angle, axis) in angles.iter().zip(seq) {
        let unit = match axis.to_ascii_lowercase() {
            b'x' => Vector3::x_axis(),
            b'y' => Vector3::y_axis(),
            _ => Vector3::z_axis(),
        };
        let r = UnitQuaternion::from_axis_angle(&unit, *angle);
        q = if axis.is_ascii_lowercase() {
            q * r
        } else {
            r * q
        };
    }
    q
}

/// The minimal rotation taking (0, 0, 1) to the direction of `v` (MuJoCo's `mjuu_z2quat`):
/// about x by π when `v` points along −z.
pub(super) fn z_to(v: &Vector3<f64>) -> UnitQuaternion<f64> {
    let cross = Vector3::z().cross(v);
    let s = cross.norm();
    let axis = if s < 1e-10 { Vector3::x() } else { cross / s };
    let angle = s.atan2(v.z);
    UnitQuaternion::from_axis_angle(&Unit::new_unchecked(axis), angle)
}

/// `pos` and the orientation of an element as a pose in its parent's frame.
pub(super) fn frame(a: &Attrs, compiler: &Compiler) -> Result<Pose<f64>> {
    let p = a.array::<3>("pos", "x y z")?.unwrap_or_default();
    Ok(pose(Vector3::from(p), &orientation(a, compiler)?))
}

/// The pose with translation `p` and rotation `q`.
pub(super) fn pose(p: Vector3<f64>, q: &UnitQuaternion<f64>) -> Pose<f64> {
    Pose {
        R: q.to_rotation_matrix().into_inner(),
        p,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    #[test]
    fn lower_case_euler_rotates_with_the_axes_upper_case_stays_fixed() {
        let (a, b) = (0.3, -0.8);
        let rx = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), a);
        let ry = UnitQuaternion::from_axis_angle(&Vector3::y_axis(), b);
        // Intrinsic x then y is R_x R_y; extrinsic X then Y is R_y R_x.
        assert_relative_eq!(euler([a, b, 0.0], b"xyz"), rx * ry, epsilon = 1e-15);
        assert_relative_eq!(euler([a, b, 0.0], b"XYZ"), ry * rx, epsilon = 1e-15);
    }

    #[test]
    fn z_to_is_minimal_and_handles_minus_z() {
        let v = Vector3::new(1.0, 2.0, -0.5);
        assert_relative_eq!(z_to(&v) * Vector3::z(), v.normalize(), epsilon = 1e-14);
        let down = z_to(&Vector3::new(0.0, 0.0, -3.0));
        assert_relative_eq!(down * Vector3::z(), -Vector3::z(), epsilon = 1e-14);
        assert_relative_eq!(down * Vector3::x(), Vector3::x(), epsilon = 1e-14);
    }
}
