//! Hinge, slide and ball joints (MuJoCo XML reference, "joint"; src/user/user_objects.cc,
//! `mjCJoint::Compile`, `checklimited`, `islimited`): `type`, `pos`, `axis` (normalized),
//! `ref`, `range` with `limited` and the compiler's `autolimits` (angles in the compiler's
//! unit), `margin` (the limits moved inward by it, where MuJoCo's limit rows settle),
//! `damping`, `armature`, `stiffness`/`springref`, `frictionloss` and `actuatorfrcrange`.
//!
//! A ball joint turns its body about `pos` with a quaternion (`qpos0 = 1 0 0 0`; `axis` and
//! `ref` do not apply); its damping and armature act on each of its three velocities, as in
//! MuJoCo, where they do not depend on the frame. Its angular velocity is in the parent's
//! frame here and in the body's in MuJoCo ([`crate::multibody::JointKind`]). A ball joint's
//! cone limit (`range`), rotational spring (`stiffness`) and `frictionloss` (a box in the
//! body's axes) are refused at their line: none is modelled.

use nalgebra::{Unit, UnitQuaternion, Vector3};

use crate::error::Result;
use crate::import::mjcf::context::Context;
use crate::import::mjcf::defaults::Attrs;
use crate::import::mjcf::orientation::{pose, Compiler};
use crate::math::Pose;
use crate::multibody::{JointKind, JointSpring};
use crate::scene::JointLimits;

pub(super) fn non_negative(a: &Attrs, name: &str) -> Result<f64> {
    let x = a.f64_or(name, 0.0)?;
    if x < 0.0 {
        return Err(a.error(name, "a value ≥ 0", x.to_string()));
    }
    Ok(x)
}

/// A hinge, slide or ball joint read. `damping`, `armature` and `friction_loss` apply to each
/// of the joint's velocities.
pub(super) struct Joint {
    pub kind: JointKind,
    /// MuJoCo's `qpos0`: `ref` for hinges and slides, the identity quaternion for a ball.
    pub q0: Vec<f64>,
    pub anchor: Vector3<f64>,
    /// `J(−ref)`: rotation or translation that makes the coordinate MuJoCo's `qpos`.
    pub rest_offset: Pose<f64>,
    pub reference: f64,
    pub limits: Option<JointLimits>,
    pub damping: f64,
    pub armature: f64,
    pub spring: Option<JointSpring<f64>>,
    pub friction_loss: f64,
}

/// Whether a `limited`/`range` pair is active (MuJoCo's `checklimited` and `islimited`).
pub(super) fn limited(
    a: &Attrs,
    flag: &str,
    range: &str,
    compiler: &Compiler,
) -> Result<Option<[f64; 2]>> {
    let value = a.array::<2>(range, "lower, upper")?;
    let mode = a.keyword(flag, &["auto", "true", "false"], "auto")?;
    if mode == "auto" && value.is_some() && !compiler.autolimits {
        return Err(a.error(
            flag,
            format!("`{flag}` beside `{range}` (compiler autolimits is false)"),
            "nothing",
        ));
    }
    let range_value = value.unwrap_or([0.0, 0.0]);
    let on = mode == "true" || (mode == "auto" && range_value[0] < range_value[1]);
    if on && range_value[0] > range_value[1] {
        return Err(a.error(
            range,
            "lower ≤ upper",
            format!("{} {}", range_value[0], range_value[1]),
        ));
    }
    Ok(on.then_some(range_value))
}

pub(super) fn read_joint(a: &Attrs, cx: &Context) -> Result<Joint> {
    let el = a.element;
    let kind = a.keyword("type", &["hinge", "slide", "ball", "free"], "hinge")?;
    if kind == "ball" {
        return read_ball(a, cx);
    }
    if kind == "free" {
        return Err(el.error(
            None,
            "a free joint alone in its body",
            "a free joint beside other joints",
        ));
    }
    let axis = Vector3::from(a.array::<3>("axis", "x y z")?.unwrap_or([0.0, 0.0, 1.0]));
    if axis.norm() < 1e-14 {
        return Err(a.error("axis", "a non-zero axis", a.str("axis").unwrap_or_default()));
    }
    let axis = axis.normalize();
    let hinge = kind == "hinge";
    let angle = |x: f64| if hinge { cx.compiler.angle(x) } else { x };
    let reference = angle(a.f64_or("ref", 0.0)?);
    let (kind, rest_offset) = if hinge {
        let r = UnitQuaternion::from_axis_angle(&Unit::new_unchecked(axis), -reference);
        (JointKind::Revolute { axis }, pose(Vector3::zeros(), &r))
    } else {
        (
            JointKind::Prismatic { axis },
            Pose::translation(-reference * axis),
        )
    };
    let range = if cx.limits {
        limited(a, "limited", "range", cx.compiler)?.map(|r| r.map(angle))
    } else {
        None
    };
    // MuJoCo activates a limit within `margin` of it and drives the joint to `margin` from it
    // (`aref = −b v − k (dist − margin)`): the limit moved inward by the margin.
    let margin = non_negative(a, "margin")?;
    let range = match range {
        Some([lo, hi]) if margin > 0.0 => {
            if lo + margin > hi - margin {
                return Err(a.error(
                    "margin",
                    "at most half the width of `range`",
                    margin.to_string(),
                ));
            }
            Some([lo + margin, hi - margin])
        }
        range => range,
    };
    let effort = limited(a, "actuatorfrclimited", "actuatorfrcrange", cx.compiler)?
        .map(|[lo, hi]| lo.abs().max(hi.abs()));
    let limits = (range.is_some() || effort.is_some()).then(|| JointLimits {
        lower: range.map_or(f64::NEG_INFINITY, |r| r[0]),
        upper: range.map_or(f64::INFINITY, |r| r[1]),
        effort: effort.unwrap_or(f64::INFINITY),
        ..JointLimits::default()
    });
    if let Some(sd) = a.floats("springdamper")? {
        if sd.iter().any(|x| *x != 0.0) {
            return Err(a.error(
                "springdamper",
                "0 0 (set stiffness and damping instead)",
                a.str("springdamper").unwrap_or_default(),
            ));
        }
    }
    let stiffness = non_negative(a, "stiffness")?;
    let spring = (cx.passive && stiffness > 0.0).then(|| -> Result<JointSpring<f64>> {
        Ok(JointSpring {
            stiffness,
            reference: angle(a.f64_or("springref", 0.0)?),
        })
    });
    let spring = spring.transpose()?;
    let damping = non_negative(a, "damping")?;
    Ok(Joint {
        kind,
        q0: vec![reference],
        anchor: Vector3::from(a.array::<3>("pos", "x y z")?.unwrap_or_default()),
        rest_offset,
        reference,
        limits,
        damping: if cx.passive { damping } else { 0.0 },
        armature: non_negative(a, "armature")?,
        spring,
        friction_loss: non_negative(a, "frictionloss")?,
    })
}

/// A ball joint: the rotation about `pos`, with its damping, armature and frictionloss.
fn read_ball(a: &Attrs, cx: &Context) -> Result<Joint> {
    if cx.limits && limited(a, "limited", "range", cx.compiler)?.is_some() {
        return Err(a.error(
            "range",
            "no cone limit on a ball joint (not modelled)",
            a.str("range").unwrap_or_default(),
        ));
    }
    if cx.passive && non_negative(a, "stiffness")? > 0.0 {
        return Err(a.error(
            "stiffness",
            "0 on a ball joint (its rotational spring is not modelled)",
            a.str("stiffness").unwrap_or_default(),
        ));
    }
    if non_negative(a, "frictionloss")? > 0.0 {
        return Err(a.error(
            "frictionloss",
            "0 on a ball joint (MuJoCo's per-axis box in the body frame is not modelled)",
            a.str("frictionloss").unwrap_or_default(),
        ));
    }
    let damping = non_negative(a, "damping")?;
    Ok(Joint {
        kind: JointKind::Ball,
        q0: vec![1.0, 0.0, 0.0, 0.0],
        anchor: Vector3::from(a.array::<3>("pos", "x y z")?.unwrap_or_default()),
        rest_offset: Pose::identity(),
        reference: 0.0,
        limits: None,
        damping: if cx.passive { damping } else { 0.0 },
        armature: non_negative(a, "armature")?,
        spring: None,
        friction_loss: 0.0,
    })
}
