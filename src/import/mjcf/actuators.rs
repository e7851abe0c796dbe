//! `<actuator>` and `<equality>`: joint actuators and joint couplings.
//!
//! MuJoCo's actuator force is `f = gain·u + bias(q, v)` on the actuator length `l = gear·q`,
//! and the joint effort is `gear·f` (src/engine/engine_forward.c, `mj_fwdActuation`):
//!
//! - `motor`: gain 1, no bias — an [`ActuatorKind::Effort`] with `gear`;
//! - `position`: gain `kp`, bias `−kp l − kv l̇` — an [`ActuatorKind::Servo`];
//! - `general` with `dyntype="none"`, `gaintype="fixed"` and `biastype` `none` (an effort
//!   with gear `gear·gainprm₀`) or `affine` with `biasprm = (0, −kp, −kv)` and
//!   `gainprm₀ = kp` (a servo).
//!
//! The effort limit is `|gear|·min(max |forcerange|, |gain|·max |ctrlrange|)` where limited.
//! Everything else (tendon, site or body transmissions, activation dynamics, velocity,
//! muscle, cylinder, damper, adhesion actuators) is refused with its file and line.
//!
//! `<equality><joint joint1 joint2 polycoef="c0 c1 0 0 0"/>` keeps
//! `q₁ − ref₁ = c0 + c1 (q₂ − ref₂)`: a [`CouplerDescription`] with gear `c1` and offset
//! `ref₁ + c0 − c1 ref₂`. Higher polynomial terms, a joint locked without `joint2`, and the
//! other equality kinds (connect, weld, tendon, flex, distance) are refused.

use crate::error::Result;
use crate::import::mjcf::defaults::{Attrs, Defaults};
use crate::import::mjcf::joint::limited;
use crate::import::mjcf::orientation::Compiler;
use crate::import::mjcf::tree::Tree;
use crate::import::mjcf::xml::Element;
use crate::scene::{ActuatorDescription, ActuatorKind, CouplerDescription};

/// The actuators of every `<actuator>` section of `root`.
pub(super) fn actuators(
    root: &Element,
    tree: &Tree,
    defaults: &Defaults,
    compiler: &Compiler,
) -> Result<Vec<ActuatorDescription>> {
    let mut out = Vec::new();
    for section in root.children_named("actuator") {
        for el in &section.children {
            let a = defaults.resolve(el, "main")?;
            out.push(actuator(&a, tree, compiler)?);
        }
    }
    Ok(out)
}

fn actuator(a: &Attrs, tree: &Tree, compiler: &Compiler) -> Result<ActuatorDescription> {
    let el = a.element;
    for transmission in [
        "tendon",
        "site",
        "body",
        "jointinparent",
        "cranksite",
        "refsite",
    ] {
        if a.has(transmission) {
            return Err(a.error(
                transmission,
                "a joint transmission (`joint=`); tendon, site and body transmissions are not supported",
                a.str(transmission).unwrap_or_default(),
            ));
        }
    }
    let joint_name = a
        .str("joint")
        .ok_or_else(|| el.error(Some("joint"), "the joint the actuator drives", "nothing"))?;
    let joint = tree
        .joint_index
        .get(joint_name)
        .map(|&i| &tree.joints[i])
        .ok_or_else(|| a.error("joint", "the name of a joint of the model", joint_name))?;
    if joint.kind.nv() != 1 {
        return Err(a.error(
            "joint",
            "a hinge or slide joint (free- and ball-joint actuators are not supported)",
            joint_name,
        ));
    }
    let gear = a
        .floats("gear")?
        .and_then(|g| g.first().copied())
        .unwrap_or(1.0);
    let (gain, kind) = match el.tag.as_str() {
        "motor" => (1.0, ActuatorKind::Effort),
        "position" => {
            for unsupported in ["dampratio", "timeconst", "inheritrange"] {
                if a.f64_or(unsupported, 0.0)? != 0.0 {
                    return Err(a.error(unsupported, "0 (not supported: give kv instead)", a.str(unsupported).unwrap_or_default()));
                }
            }
            let kp = a.f64_or("kp", 1.0)?;
            let kv = a.f64_or("kv", 0.0)?;
            if kp < 0.0 || kv < 0.0 {
                return Err(el.error(Some("kp"), "gains kp, kv ≥ 0", format!("kp {kp}, kv {kv}")));
            }
            (kp, ActuatorKind::Servo { kp, kv })
        }
        "general" => general(a)?,
        other => {
            return Err(el.error(
                None,
                "a motor, position or general actuator",
                format!("<{other}> (velocity, intvelocity, damper, cylinder, muscle, adhesion and plugin actuators are not supported)"),
            ))
        }
    };
    let ctrl = limited(a, "ctrllimited", "ctrlrange", compiler)?;
    let force = limited(a, "forcelimited", "forcerange", compiler)?;
    let bound = |r: [f64; 2]| r[0].abs().max(r[1].abs());
    let mut force_limit = force.map_or(f64::INFINITY, bound);
    if let (ActuatorKind::Effort, Some(c)) = (kind, ctrl) {
        force_limit = force_limit.min(gain.abs() * bound(c));
    }
    let effort_limit = gear.abs() * force_limit;
    if effort_limit.is_nan() || effort_limit <= 0.0 {
        return Err(el.error(
            Some("forcerange"),
            "a positive effort bound |gear|·max |force|",
            effort_limit.to_string(),
        ));
    }
    let gear = match kind {
        ActuatorKind::Effort => gear * gain,
        ActuatorKind::Servo { .. } => gear,
    };
    Ok(ActuatorDescription {
        name: el.attr("name").map(str::to_string),
        body: joint.body.clone(),
        dof: 0,
        effort_limit,
        control: None,
        kind,
        gear,
        ctrl_range: ctrl,
    })
}

/// A `general` actuator that is a motor or a position servo: its gain and kind.
fn general(a: &Attrs) -> Result<(f64, ActuatorKind)> {
    let dyntype = a.str("dyntype").unwrap_or("none");
    if dyntype != "none" {
        return Err(a.error(
            "dyntype",
            "none (activation dynamics are not supported)",
            dyntype,
        ));
    }
    let gaintype = a.str("gaintype").unwrap_or("fixed");
    if gaintype != "fixed" {
        return Err(a.error("gaintype", "fixed", gaintype));
    }
    let gain = a
        .floats("gainprm")?
        .and_then(|g| g.first().copied())
        .unwrap_or(1.0);
    let bias = a.floats("biasprm")?.unwrap_or_default();
    let b = |i: usize| bias.get(i).copied().unwrap_or(0.0);
    match a.str("biastype").unwrap_or("none") {
        "none" => Ok((gain, ActuatorKind::Effort)),
        "affine" if b(0) == 0.0 && b(1) == -gain && b(2) <= 0.0 => Ok((
            gain,
            ActuatorKind::Servo {
                kp: gain,
                kv: -b(2),
            },
        )),
        other => Err(a.error(
            "biastype",
            "none, or affine with biasprm = \"0 −kp −kv\" and gainprm = \"kp\" (a position servo)",
            format!("{other} with gainprm {gain}, biasprm {bias:?}"),
        )),
    }
}

/// The joint couplings of every `<equality>` section of `root`.
pub(super) fn couplers(
    root: &Element,
    tree: &Tree,
    defaults: &Defaults,
) -> Result<Vec<CouplerDescription>> {
    let mut out = Vec::new();
    for section in root.children_named("equality") {
        for el in &section.children {
            if el.tag != "joint" {
                return Err(el.error(
                    None,
                    "a joint equality (connect, weld, tendon, flex and distance equalities are not supported)",
                    format!("<{}>", el.tag),
                ));
            }
            let a = defaults.resolve(el, "main")?;
            if a.bool("active")? == Some(false) {
                continue;
            }
            let find = |attr: &str| -> Result<Option<&crate::import::mjcf::tree::MjcfJoint>> {
                let Some(name) = a.str(attr) else {
                    return Ok(None);
                };
                let joint = tree
                    .joint_index
                    .get(name)
                    .map(|&i| &tree.joints[i])
                    .ok_or_else(|| a.error(attr, "the name of a joint of the model", name))?;
                if joint.kind.nq() != 1 {
                    return Err(a.error(attr, "a hinge or slide joint", name));
                }
                Ok(Some(joint))
            };
            let follower = find("joint1")?
                .ok_or_else(|| el.error(Some("joint1"), "the coupled joint", "nothing"))?;
            let leader = find("joint2")?.ok_or_else(|| {
                el.error(
                    Some("joint2"),
                    "a leading joint (locking a joint alone is not supported)",
                    "nothing",
                )
            })?;
            let c = a
                .floats("polycoef")?
                .unwrap_or_else(|| vec![0.0, 1.0, 0.0, 0.0, 0.0]);
            if c.len() > 5 || c.iter().skip(2).any(|x| *x != 0.0) {
                return Err(a.error(
                    "polycoef",
                    "a linear coupling \"c0 c1 0 0 0\"",
                    a.str("polycoef").unwrap_or_default(),
                ));
            }
            let (c0, c1) = (
                c.first().copied().unwrap_or(0.0),
                c.get(1).copied().unwrap_or(0.0),
            );
            out.push(CouplerDescription {
                follower: follower.body.clone(),
                leader: leader.body.clone(),
                multiplier: c1,
                offset: follower.reference + c0 - c1 * leader.reference,
            });
        }
    }
    Ok(out)
}
