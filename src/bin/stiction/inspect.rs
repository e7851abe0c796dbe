//! `stiction inspect MODEL`: the model tree of a robot model file (bodies with mass, centre of
//! mass and inertia; joints with kind, axis, limits and their indices in `q` and `v`;
//! geometries; actuators; couplers) and, at a configuration, the mass matrix `M(q)` (CRBA)
//! and the bias forces `bias(q, v) = C(q, v) v + g(q)` (RNEA with v̇ = 0; MuJoCo's
//! `qfrc_bias` sign: `M v̇ + bias = τ`).
#![allow(non_snake_case)]

use std::path::PathBuf;

use clap::Args;
use nalgebra::{DMatrix, DVector};
use serde_json::{json, Value};

use stiction::error::{Error, Result};
use stiction::multibody::dynamics::{bias_forces, mass_matrix};
use stiction::multibody::kinematics::{forward_kinematics, MultibodyData};
use stiction::multibody::JointKind;
use stiction::scene::{BodyMotion, JointLimits, SceneDescription};

use crate::robot::RobotArgs;

/// Options of `stiction inspect`.
#[derive(Args)]
pub struct InspectArgs {
    /// Robot model file: URDF (.urdf) or MJCF (.xml).
    #[arg(value_name = "MODEL")]
    file: PathBuf,
    #[command(flatten)]
    robot: RobotArgs,
    /// Configuration q (nq values, comma separated; a free joint's as x,y,z,w,i,j,k with a
    /// unit quaternion). Default: the model's initial q.
    #[arg(
        long,
        value_name = "Q0,Q1,…",
        value_delimiter = ',',
        allow_negative_numbers = true
    )]
    q: Option<Vec<f64>>,
    /// Velocities v (nv values, comma separated; a free joint's as ω, then v, parent frame).
    /// Default: zero.
    #[arg(
        long,
        value_name = "V0,V1,…",
        value_delimiter = ',',
        allow_negative_numbers = true
    )]
    v: Option<Vec<f64>>,
    /// Print one JSON object (fields nq, nv, bodies, joints, geometries, actuators,
    /// couplers, q, v, M, bias; matrices as row-major nested lists) instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs `inspect` as the command line asked.
pub fn inspect(args: &InspectArgs) -> Result<()> {
    let model = args.robot.load(&args.file, args.json)?;
    let report = report(&model.description, args.q.as_deref(), args.v.as_deref())?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|e| Error::invalid(
                "--json",
                &e,
                "the report could not be written as JSON"
            ))?
        );
    } else {
        print_text(&args.file, &report);
    }
    Ok(())
}

/// A number for JSON: infinite values (no limit) as `null`.
fn finite(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

fn limits_json(limits: &Option<JointLimits>) -> Value {
    match limits {
        None => Value::Null,
        Some(l) => json!({
            "lower": finite(l.lower),
            "upper": finite(l.upper),
            "velocity": finite(l.velocity),
            "effort": finite(l.effort),
        }),
    }
}

fn rows(M: &DMatrix<f64>) -> Value {
    Value::Array(
        M.row_iter()
            .map(|r| Value::Array(r.iter().map(|&x| json!(x)).collect()))
            .collect(),
    )
}

/// The whole report as JSON (the text form prints from it too).
fn report(d: &SceneDescription, q: Option<&[f64]>, v: Option<&[f64]>) -> Result<Value> {
    let built = d.build()?;
    let model = &built.simulator.model;
    let (nq, nv) = (model.nq(), model.nv());
    let q = match q {
        None => built.initial_state.q.clone(),
        Some(q) => checked("--q", q, nq)?,
    };
    let v = match v {
        None => DVector::zeros(nv),
        Some(v) => checked("--v", v, nv)?,
    };
    for (i, joint) in model.joints.iter().enumerate() {
        if let Some(k) = joint.kind.quaternion_start() {
            let start = joint.q_start + k;
            let quat = q.rows(start, 4);
            if (quat.norm() - 1.0).abs() > 1e-9 {
                return Err(Error::invalid(
                    "--q",
                    format!("{:?}", quat.as_slice()),
                    &format!(
                        "the quaternion of body `{}`'s {} joint (q[{}..{}]) must have norm 1",
                        model.bodies[i].name,
                        joint.kind.name(),
                        start,
                        start + 4
                    ),
                ));
            }
        }
    }
    let mut data = MultibodyData::new(model);
    forward_kinematics(model, &mut data, &q, &v);
    let M = mass_matrix(model, &data);
    let bias = bias_forces(model, &data, &v);

    let mut bodies = Vec::new();
    let mut joints = Vec::new();
    // The model's bodies are the description's jointed ones, in order.
    let jointed_bodies = d.bodies.iter().filter_map(|body| match &body.motion {
        BodyMotion::Jointed(jointed) => Some((body, jointed)),
        BodyMotion::Prescribed { .. } => None,
    });
    for (b, (body, jointed)) in jointed_bodies.enumerate() {
        let joint = &model.joints[b];
        let inertia = &model.bodies[b].inertia;
        bodies.push(json!({
            "name": body.name,
            "parent": jointed.parent.as_deref().unwrap_or("world"),
            "mass": inertia.mass,
            "com": inertia.com.as_slice(),
            "inertia": rows(&DMatrix::from_iterator(3, 3, inertia.inertia_com.iter().copied())),
        }));
        let axis = match joint.kind {
            JointKind::Revolute { axis } | JointKind::Prismatic { axis } => {
                json!(axis.as_slice())
            }
            _ => Value::Null,
        };
        joints.push(json!({
            "name": jointed.joint_name.as_deref().unwrap_or(&body.name),
            "body": body.name,
            "type": joint.kind.name(),
            "axis": axis,
            "q_index": joint.q_start,
            "v_index": joint.v_start,
            "nq": joint.kind.nq(),
            "nv": joint.kind.nv(),
            "limits": limits_json(&jointed.limits),
            "damping": jointed.damping,
            "friction": jointed.friction,
        }));
    }
    let geometries: Vec<Value> = d
        .geometries
        .iter()
        .map(|g| {
            let size = match &g.shape {
                stiction::geometry::Shape::ConvexMesh { vertices } => {
                    json!({ "vertices": vertices.len() })
                }
                shape => json!(format!("{shape:?}")),
            };
            json!({
                "name": g.name,
                "body": g.body,
                "shape": g.shape.kind(),
                "size": size,
                "position": g.X_BG.p.as_slice(),
            })
        })
        .collect();
    let actuators: Vec<Value> = d
        .actuators
        .iter()
        .zip(&built.effort_limits)
        .map(|(a, &limit)| {
            json!({
                "name": a.name.as_deref().unwrap_or(&a.body),
                "body": a.body,
                "dof": a.dof,
                "effort_limit": finite(limit),
            })
        })
        .collect();
    let couplers: Vec<Value> = d
        .couplers
        .iter()
        .map(|c| {
            json!({
                "follower": c.follower,
                "leader": c.leader,
                "multiplier": c.multiplier,
                "offset": c.offset,
            })
        })
        .collect();
    Ok(json!({
        "nq": nq,
        "nv": nv,
        "bodies": bodies,
        "joints": joints,
        "geometries": geometries,
        "actuators": actuators,
        "couplers": couplers,
        "not_in_step": d.constraints_not_in_step(),
        "q": q.as_slice(),
        "v": v.as_slice(),
        "M": rows(&M),
        "bias": bias.as_slice(),
    }))
}

/// `values` as a vector of length `n`.
fn checked(flag: &str, values: &[f64], n: usize) -> Result<DVector<f64>> {
    if values.len() != n {
        return Err(Error::DimensionMismatch {
            what: format!(
                "{flag} (the model's {})",
                if flag == "--q" { "nq" } else { "nv" }
            ),
            expected: n,
            found: values.len(),
        });
    }
    if let Some(x) = values.iter().find(|x| !x.is_finite()) {
        return Err(Error::invalid(flag, x, "values must be finite"));
    }
    Ok(DVector::from_column_slice(values))
}

/// A JSON number list as `[a, b, …]` with 6 significant digits.
fn list(value: &Value) -> String {
    let items: Vec<String> = value
        .as_array()
        .map(|a| {
            a.iter()
                .map(|x| match x.as_f64() {
                    Some(x) => format!("{x:.6}"),
                    None => "—".into(),
                })
                .collect()
        })
        .unwrap_or_default();
    format!("[{}]", items.join(", "))
}

fn print_text(file: &std::path::Path, r: &Value) {
    let count = |key: &str| r[key].as_array().map_or(0, Vec::len);
    println!(
        "{}: nq = {}, nv = {}; {} bodies, {} geometries, {} actuators",
        file.display(),
        r["nq"],
        r["nv"],
        count("bodies"),
        count("geometries"),
        count("actuators")
    );
    println!("bodies (mass kg, centre of mass m in the body frame, inertia kg·m² about it):");
    for b in r["bodies"].as_array().into_iter().flatten() {
        let inertia: Vec<String> = b["inertia"]
            .as_array()
            .into_iter()
            .flatten()
            .map(list)
            .collect();
        println!(
            "  {} (on {}): mass {:.6}, com {}, inertia [{}]",
            b["name"].as_str().unwrap_or(""),
            b["parent"].as_str().unwrap_or(""),
            b["mass"].as_f64().unwrap_or(f64::NAN),
            list(&b["com"]),
            inertia.join(", ")
        );
    }
    println!("joints (indices in q and v; limits in rad or m, rad/s or m/s, N·m or N):");
    for j in r["joints"].as_array().into_iter().flatten() {
        let limits = &j["limits"];
        let bound = |key: &str| {
            limits[key]
                .as_f64()
                .map_or("none".to_string(), |x| format!("{x}"))
        };
        let limits = if limits.is_null() {
            "no limits".to_string()
        } else {
            format!(
                "position [{}, {}], velocity {}, effort {}",
                bound("lower"),
                bound("upper"),
                bound("velocity"),
                bound("effort")
            )
        };
        let axis = if j["axis"].is_null() {
            String::new()
        } else {
            format!(" axis {}", list(&j["axis"]))
        };
        println!(
            "  {} ({}{axis}) of body {}: q[{}..{}], v[{}..{}]; {limits}",
            j["name"].as_str().unwrap_or(""),
            j["type"].as_str().unwrap_or(""),
            j["body"].as_str().unwrap_or(""),
            j["q_index"],
            j["q_index"].as_u64().unwrap_or(0) + j["nq"].as_u64().unwrap_or(0),
            j["v_index"],
            j["v_index"].as_u64().unwrap_or(0) + j["nv"].as_u64().unwrap_or(0),
        );
    }
    println!("geometries:");
    for g in r["geometries"].as_array().into_iter().flatten() {
        println!(
            "  {} on {}: {} {}",
            g["name"].as_str().unwrap_or(""),
            g["body"].as_str().unwrap_or(""),
            g["shape"].as_str().unwrap_or(""),
            g["size"]
        );
    }
    println!(
        "actuators: {}",
        if count("actuators") == 0 { "none" } else { "" }
    );
    for a in r["actuators"].as_array().into_iter().flatten() {
        println!("  {}", a);
    }
    for c in r["couplers"].as_array().into_iter().flatten() {
        println!(
            "coupler: q({}) = {} · q({}) + {}",
            c["follower"].as_str().unwrap_or(""),
            c["multiplier"],
            c["leader"].as_str().unwrap_or(""),
            c["offset"]
        );
    }
    for pending in r["not_in_step"].as_array().into_iter().flatten() {
        println!("not in the step: {}", pending.as_str().unwrap_or(""));
    }
    println!("q = {}", list(&r["q"]));
    println!("v = {}", list(&r["v"]));
    println!("M (mass matrix, kg·m² / kg):");
    for row in r["M"].as_array().into_iter().flatten() {
        println!("  {}", list(row));
    }
    println!(
        "bias (C(q, v) v + g(q): M v̇ + bias = τ; N·m / N) = {}",
        list(&r["bias"])
    );
}
