//! Real robots nobody here wrote: example-robot-data's Franka Panda (with its hand), UR5 and
//! Solo12 (a quadruped, floating base), installed from PyPI by `scripts/robots/setup.sh`.
//!
//! For each: the mass matrix `M(q)` and the bias forces `bias(q, v)` agree with Pinocchio's
//! `crba` and `rnea(q, v, 0)` at 20 random configurations (written by
//! `scripts/robots/pinocchio_reference.py`, fixed seed) to 1e-8 relative to the norm, and a
//! 2 s drop or hold on the ground runs at the default δt without error. The Panda with
//! position servos at its joint limits and its coupled fingers, and the UR5, pass the
//! gradient check (IFT, direct duals, central differences) on 10 steps with contact. The
//! shipped problem `panda-push-box` runs by name with the package found through
//! `STICTION_PACKAGE_PATH`, and its Panda pushes the box.
//!
//! Every test is `#[ignore]`: they need the Python packages. Run them with
//!
//! ```text
//! scripts/robots/setup.sh                          # .venv-robots, or give a folder
//! STICTION_ROBOTS_VENV=DIR cargo test --test robots -- --ignored
//! ```
//!
//! Conventions mapped here: joints by name (Pinocchio orders them its own way; the free
//! flyer is `root_joint`); Pinocchio's free flyer has `q = [x, y, z, qx, qy, qz, qw]` and
//! `v = [v_B, ω_B]` in the body frame, ours `q = [x, y, z, w, i, j, k]` and `v = [ω_W, v_W]`
//! in the world frame, so `v = T ν` with `T = [[0, R], [R, 0]]` on the free joint's block
//! (identity elsewhere): `M = T M_pin Tᵀ` and `bias = T bias_pin − M Ṫ ν`, where
//! `Ṫ ν = [0; ω_W × v_W]` on the free joint's block; a continuous joint's `[cos θ, sin θ]`
//! is `θ`.
#![allow(non_snake_case)]

#[path = "common/smooth.rs"]
mod smooth;

use std::path::{Path, PathBuf};
use std::process::Command;

use nalgebra::{DMatrix, DVector, Quaternion, UnitQuaternion, Vector3};
use serde_json::Value;

use stiction::import::{load_model, Base, ImportOptions};
use stiction::multibody::dynamics::{bias_forces, mass_matrix};
use stiction::multibody::kinematics::{forward_kinematics, MultibodyData};
use stiction::multibody::JointKind;
use stiction::scene::{BodyMotion, Scene, SceneDescription};

/// Agreement with Pinocchio, relative to the norm of its matrix (or vector): both are CRBA
/// and RNEA in f64 on the same inertias, so they differ by rounding only.
const REL_TOL: f64 = 1e-8;

/// Configurations compared per robot.
const SAMPLES: usize = 20;

/// The virtual environment of `scripts/robots/setup.sh`.
fn venv() -> PathBuf {
    let dir = std::env::var_os("STICTION_ROBOTS_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv-robots"));
    assert!(
        dir.join("bin/python").exists(),
        "no robot venv at {}: run scripts/robots/setup.sh (or set STICTION_ROBOTS_VENV)",
        dir.display()
    );
    dir
}

/// example-robot-data's `robots` folder in the venv.
fn robots() -> PathBuf {
    let lib = venv().join("lib");
    let entries = std::fs::read_dir(&lib).expect("the venv's lib folder");
    entries
        .filter_map(|e| e.ok())
        .map(|e| {
            e.path()
                .join("site-packages/cmeel.prefix/share/example-robot-data/robots")
        })
        .find(|p| p.is_dir())
        .unwrap_or_else(|| panic!("example-robot-data is not installed in {}", lib.display()))
}

/// Pinocchio's reference for `urdf`, computed now by the reference script.
fn pinocchio_reference(urdf: &Path, floating: bool) -> Value {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "{}-{}.json",
        urdf.file_stem().and_then(|s| s.to_str()).unwrap_or("robot"),
        if floating { "floating" } else { "fixed" }
    ));
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/robots/pinocchio_reference.py");
    let mut command = Command::new(venv().join("bin/python"));
    command.arg(&script).arg(urdf).arg("--out").arg(&out);
    command.args(["--samples", &SAMPLES.to_string()]);
    if floating {
        command.arg("--floating");
    }
    let status = command.status().expect("the reference script runs");
    assert!(status.success(), "{command:?} failed");
    serde_json::from_str(&std::fs::read_to_string(&out).expect("its JSON")).expect("valid JSON")
}

fn import(urdf: &Path, base: Base) -> SceneDescription {
    let options = ImportOptions {
        base,
        ..ImportOptions::default()
    };
    load_model(urdf, &options)
        .unwrap_or_else(|e| panic!("{e}"))
        .description
}

fn numbers(value: &Value) -> Vec<f64> {
    value
        .as_array()
        .expect("a list")
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

/// Our joint's `(kind, q_start, v_start)` for each of Pinocchio's joints, by name.
fn joint_map(d: &SceneDescription, reference: &Value) -> Vec<(Value, JointKind, usize, usize)> {
    let built = d.build().expect("a valid description");
    let model = &built.simulator.model;
    let ours: Vec<(String, JointKind, usize, usize)> = d
        .bodies
        .iter()
        .filter_map(|b| match &b.motion {
            BodyMotion::Jointed(j) => Some((b, j)),
            BodyMotion::Prescribed { .. } => None,
        })
        .zip(&model.joints)
        .map(|((b, j), joint)| {
            let name = match (j.joint, &j.joint_name) {
                (JointKind::Free, None) => "root_joint".to_string(),
                (_, Some(n)) => n.clone(),
                (_, None) => b.name.clone(),
            };
            (name, joint.kind, joint.q_start, joint.v_start)
        })
        .collect();
    let pin_joints = reference["joints"].as_array().expect("joints");
    let moving = ours.iter().filter(|o| o.1.nv() > 0).count();
    assert_eq!(pin_joints.len(), moving, "the same moving joints");
    pin_joints
        .iter()
        .map(|pj| {
            let name = pj["name"].as_str().expect("a name");
            let (_, kind, qs, vs) = ours
                .iter()
                .find(|o| o.0 == name)
                .unwrap_or_else(|| panic!("no joint `{name}` here"));
            assert_eq!(pj["nv"].as_u64(), Some(kind.nv() as u64), "nv of {name}");
            (pj.clone(), *kind, *qs, *vs)
        })
        .collect()
}

/// Compares `M` and `bias` with Pinocchio's at every reference configuration; returns the
/// largest relative differences.
fn compare(urdf: &Path, base: Base) -> (f64, f64) {
    let floating = base == Base::Floating;
    let reference = pinocchio_reference(urdf, floating);
    let d = import(urdf, base);
    let built = d.build().expect("a valid description");
    let model = &built.simulator.model;
    assert_eq!(reference["nv"].as_u64(), Some(model.nv() as u64));
    let map = joint_map(&d, &reference);
    let mut data = MultibodyData::new(model);
    let (mut worst_M, mut worst_bias) = (0.0_f64, 0.0_f64);
    let samples = reference["samples"].as_array().expect("samples");
    assert_eq!(samples.len(), SAMPLES);
    for sample in samples {
        let q_pin = numbers(&sample["q"]);
        let v_pin = numbers(&sample["v"]);
        let nv = model.nv();
        let mut q = built.initial_state.q.clone();
        let mut v = DVector::zeros(nv);
        // v = T ν, and Ṫ ν (see the module doc).
        let mut T = DMatrix::zeros(nv, nv);
        let mut Tdot_nu = DVector::zeros(nv);
        for (pj, kind, qs, vs) in &map {
            let iq = pj["idx_q"].as_u64().expect("idx_q") as usize;
            let iv = pj["idx_v"].as_u64().expect("idx_v") as usize;
            let nq_pin = pj["nq"].as_u64().expect("nq") as usize;
            match kind {
                JointKind::Free => {
                    let p = &q_pin[iq..iq + 3];
                    let [x, y, z, w] = [q_pin[iq + 3], q_pin[iq + 4], q_pin[iq + 5], q_pin[iq + 6]];
                    q.rows_mut(*qs, 7)
                        .copy_from_slice(&[p[0], p[1], p[2], w, x, y, z]);
                    let R = UnitQuaternion::from_quaternion(Quaternion::new(w, x, y, z))
                        .to_rotation_matrix()
                        .into_inner();
                    let v_B = Vector3::from_column_slice(&v_pin[iv..iv + 3]);
                    let w_B = Vector3::from_column_slice(&v_pin[iv + 3..iv + 6]);
                    let (w_W, v_W) = (R * w_B, R * v_B);
                    v.rows_mut(*vs, 3).copy_from(&w_W);
                    v.rows_mut(*vs + 3, 3).copy_from(&v_W);
                    T.view_mut((*vs, iv + 3), (3, 3)).copy_from(&R);
                    T.view_mut((*vs + 3, iv), (3, 3)).copy_from(&R);
                    Tdot_nu.rows_mut(*vs + 3, 3).copy_from(&w_W.cross(&v_W));
                }
                _ if nq_pin == 2 => {
                    q[*qs] = q_pin[iq + 1].atan2(q_pin[iq]);
                    v[*vs] = v_pin[iv];
                    T[(*vs, iv)] = 1.0;
                }
                _ => {
                    q[*qs] = q_pin[iq];
                    v[*vs] = v_pin[iv];
                    T[(*vs, iv)] = 1.0;
                }
            }
        }
        let M_pin = DMatrix::from_row_iterator(
            nv,
            nv,
            sample["M"].as_array().expect("M").iter().flat_map(numbers),
        );
        let bias_pin = DVector::from_vec(numbers(&sample["bias"]));
        let M_expected = &T * M_pin * T.transpose();
        let bias_expected = &T * bias_pin - &M_expected * Tdot_nu;

        forward_kinematics(model, &mut data, &q, &v);
        let M = mass_matrix(model, &data);
        let bias = bias_forces(model, &data, &v);
        let rel_M = (&M - &M_expected).norm() / M_expected.norm();
        let rel_bias = (&bias - &bias_expected).norm() / bias_expected.norm().max(1e-12);
        worst_M = worst_M.max(rel_M);
        worst_bias = worst_bias.max(rel_bias);
    }
    println!(
        "{}: largest relative difference to Pinocchio over {SAMPLES} configurations: M {worst_M:.2e}, bias {worst_bias:.2e}",
        urdf.display()
    );
    assert!(
        worst_M < REL_TOL,
        "M differs from Pinocchio's by {worst_M:.2e} (relative)"
    );
    assert!(
        worst_bias < REL_TOL,
        "bias differs from Pinocchio's by {worst_bias:.2e} (relative)"
    );
    (worst_M, worst_bias)
}

/// Runs `d` on a ground plane for 2 s at the default δt; returns the final state's height of
/// the first body's origin.
fn run_on_ground(mut d: SceneDescription) -> Scene {
    assert!(d.add_ground(), "the robot has no geometry called ground");
    let mut scene = Scene::from(d.build().expect("a valid description"));
    let recording = scene
        .run_for(2.0)
        .unwrap_or_else(|e| panic!("the 2 s run failed: {e}"));
    let contacts = recording
        .reports
        .iter()
        .filter(|r| !r.contacts.is_empty())
        .count();
    assert!(contacts > 0, "the robot never touched anything");
    assert!(scene.state().q.iter().all(|x| x.is_finite()));
    scene
}

fn panda() -> PathBuf {
    robots().join("panda_description/urdf/panda.urdf")
}

fn ur5() -> PathBuf {
    robots().join("ur_description/urdf/ur5_robot.urdf")
}

fn solo12() -> PathBuf {
    robots().join("solo_description/robots/solo12.urdf")
}

#[test]
#[ignore = "needs scripts/robots/setup.sh (example-robot-data and Pinocchio from PyPI)"]
fn panda_with_hand_matches_pinocchio() {
    compare(&panda(), Base::Fixed);
}

#[test]
#[ignore = "needs scripts/robots/setup.sh (example-robot-data and Pinocchio from PyPI)"]
fn ur5_matches_pinocchio() {
    compare(&ur5(), Base::Fixed);
}

#[test]
#[ignore = "needs scripts/robots/setup.sh (example-robot-data and Pinocchio from PyPI)"]
fn solo12_floating_matches_pinocchio() {
    compare(&solo12(), Base::Floating);
}

#[test]
#[ignore = "needs scripts/robots/setup.sh (example-robot-data from PyPI)"]
fn panda_holds_on_the_ground_for_2_s() {
    run_on_ground(import(&panda(), Base::Fixed));
}

#[test]
#[ignore = "needs scripts/robots/setup.sh (example-robot-data from PyPI)"]
fn ur5_holds_on_the_ground_for_2_s() {
    run_on_ground(import(&ur5(), Base::Fixed));
}

#[test]
#[ignore = "needs scripts/robots/setup.sh (example-robot-data from PyPI)"]
fn solo12_drops_onto_the_ground_and_comes_to_rest() {
    let options = ImportOptions {
        base: Base::Floating,
        pose: stiction::math::Pose::translation(Vector3::new(0.0, 0.0, 0.4)),
        ..ImportOptions::default()
    };
    let d = load_model(&solo12(), &options)
        .unwrap_or_else(|e| panic!("{e}"))
        .description;
    let scene = run_on_ground(d);
    // Down from 0.4 m: the base lies below its start and above the ground.
    let z = scene.state().q[2];
    assert!(z > 0.0 && z < 0.4, "base height {z} m");
}

/// Keeps the links of `d` from touching each other, as robot controllers commonly run: a
/// robot's links rest against each other face to face, where the active features of two
/// hulls are not unique and the step is not differentiable (central differences and the
/// derivative of the chosen feature pair disagree at 1e-4).
fn without_self_collision(d: &mut SceneDescription) {
    let names: Vec<String> = d.bodies.iter().map(|b| b.name.clone()).collect();
    for (i, a) in names.iter().enumerate() {
        for b in &names[i + 1..] {
            d.excluded_collisions.push((a.clone(), b.clone()));
        }
    }
}

/// Gradient checks on 10 steps with contact of `d` on the ground from its initial state with
/// the constant input `u`: IFT against the direct dual path on every step (1e-9), and against
/// central differences to [`FD_BAR`] on the steps where nothing is at a transition
/// ([`smooth::smooth`]) and the differences resolve the derivative to the bar
/// (`fd_resolution`: on Solo12 standing on four feet, the estimates of weakly responding
/// velocity columns scatter by 1e-6 to 4e-6 across steps from 1e-9 to 1e-3 m/s, while IFT and
/// the direct duals agree to 1e-12). Returns the number of smooth steps and the worst
/// IFT-vs-FD error on them.
fn gradient_check_on_contact_steps(
    mut d: SceneDescription,
    u: &[f64],
    seconds: f64,
) -> (usize, f64) {
    use stiction::derivatives::gradient_check;
    assert!(d.add_ground(), "the robot has no geometry called ground");
    let built = d.build().expect("a valid description");
    let mut sim = built.simulator;
    let v_s = sim.settings.contact.stiction_tolerance;
    let u = DVector::from_column_slice(u);
    let mut state = built.initial_state;
    let mut with_contact = Vec::new();
    for _ in 0..(seconds / sim.settings.dt).round() as usize {
        let (next, report) = sim.step(&state, &u).expect("a step");
        if !report.contacts.is_empty() {
            with_contact.push((state.clone(), smooth::smooth(&report, v_s)));
        }
        state = next;
    }
    assert!(
        with_contact.len() >= 10,
        "{} steps with contact",
        with_contact.len()
    );
    let every = with_contact.len() / 10;
    let (mut smooth_steps, mut worst_fd, mut worst_resolution) = (0, 0.0f64, 0.0f64);
    let (mut compared, mut unresolved) = (0, Vec::new());
    for (state, is_smooth) in with_contact.iter().step_by(every).take(10) {
        let check = gradient_check(&mut sim, state, &u, &[])
            .unwrap_or_else(|e| panic!("t = {}: {e}", state.t));
        for b in &check.blocks {
            assert!(
                b.ift_vs_direct <= 1e-9,
                "t = {}: {} IFT vs direct {:.2e}",
                state.t,
                b.name,
                b.ift_vs_direct
            );
            // Differences that do not resolve a block to the bar cannot judge it there.
            if *is_smooth && b.fd_resolution <= FD_BAR {
                assert!(
                    b.ift_vs_fd <= FD_BAR,
                    "t = {}: {} IFT vs FD {:.2e} (resolution {:.1e})",
                    state.t,
                    b.name,
                    b.ift_vs_fd,
                    b.fd_resolution
                );
                worst_fd = worst_fd.max(b.ift_vs_fd);
                worst_resolution = worst_resolution.max(b.fd_resolution);
                compared += 1;
            } else if *is_smooth {
                unresolved.push(format!("t = {:.3} s ({:.1e})", state.t, b.fd_resolution));
            }
        }
        smooth_steps += usize::from(*is_smooth);
    }
    println!(
        "{compared} blocks compared with central differences (resolved to {worst_resolution:.1e}); \
         not resolved to {FD_BAR:.0e}: {unresolved:?}"
    );
    assert!(
        compared >= 1,
        "no smooth step that central differences resolve"
    );
    (smooth_steps, worst_fd)
}

/// Agreement of the IFT with central differences where those resolve the derivative to it.
const FD_BAR: f64 = 1e-6;

/// The Panda (no self-collision) at rest with joint 4 on its upper limit (−0.0698 rad) and
/// the fingers half open,
/// the second coupled to the first: position servos (kp = 400 N·m/rad, kv = 40 N·m·s/rad,
/// MJCF's `position` semantics) on the seven arm joints hold q = 0, so joint 4's servo
/// pushes it into its limit. Step Jacobians through the limit, coupler and servo rows and
/// the contacts agree three ways on 10 steps.
#[test]
#[ignore = "needs scripts/robots/setup.sh (example-robot-data from PyPI)"]
fn panda_with_servos_at_its_limits_passes_the_gradient_check() {
    use stiction::scene::description::{ActuatorDescription, ActuatorKind};
    // 2 mm up: the base link rests clear of the ground.
    let options = ImportOptions {
        pose: stiction::math::Pose::translation(Vector3::new(0.0, 0.0, 0.002)),
        ..ImportOptions::default()
    };
    let mut d = load_model(&panda(), &options)
        .unwrap_or_else(|e| panic!("{e}"))
        .description;
    d.actuators = (1..=7)
        .map(|i| ActuatorDescription {
            name: None,
            body: format!("panda_link{i}"),
            dof: 0,
            effort_limit: 87.0,
            control: None,
            kind: ActuatorKind::Servo {
                kp: 400.0,
                kv: 40.0,
            },
            gear: 1.0,
            ctrl_range: None,
        })
        .collect();
    assert_eq!(d.couplers.len(), 1, "the fingers' mimic joint");
    without_self_collision(&mut d);
    for b in &mut d.bodies {
        if let BodyMotion::Jointed(j) = &mut b.motion {
            match b.name.as_str() {
                "panda_link4" => j.q0 = vec![-0.0698],
                "panda_leftfinger" | "panda_rightfinger" => j.q0 = vec![0.02],
                _ => {}
            }
        }
    }
    let (smooth, worst) = gradient_check_on_contact_steps(d, &[0.0; 7], 0.5);
    println!(
        "Panda: 10 contact steps, IFT vs direct ≤ 1e-9; {smooth} smooth, IFT vs FD ≤ {worst:.1e}"
    );
}

/// UR5 held by nothing, falling onto its limits and the ground: the gradient check on 10
/// steps with contact.
#[test]
#[ignore = "needs scripts/robots/setup.sh (example-robot-data from PyPI)"]
fn ur5_passes_the_gradient_check_on_contact_steps() {
    let (smooth, worst) = gradient_check_on_contact_steps(import(&ur5(), Base::Fixed), &[], 1.0);
    println!("UR5: {smooth} smooth steps, IFT vs FD ≤ {worst:.1e}");
}

/// Solo12 (floating base, no self-collision) dropped from 0.35 m onto its four feet: the
/// gradient check on 10 steps with contact, through the free joint's quaternion block.
#[test]
#[ignore = "needs scripts/robots/setup.sh (example-robot-data from PyPI)"]
fn solo12_passes_the_gradient_check_on_contact_steps() {
    let options = ImportOptions {
        base: Base::Floating,
        pose: stiction::math::Pose::translation(Vector3::new(0.0, 0.0, 0.35)),
        ..ImportOptions::default()
    };
    let mut d = load_model(&solo12(), &options)
        .unwrap_or_else(|e| panic!("{e}"))
        .description;
    without_self_collision(&mut d);
    let (smooth, worst) = gradient_check_on_contact_steps(d, &[], 1.0);
    println!("Solo12: {smooth} smooth steps, IFT vs FD ≤ {worst:.1e}");
}

/// The `trajectory.csv` of a run: column names and rows.
fn read_trajectory(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(path).expect("trajectory.csv");
    let mut lines = text.lines();
    let header = lines
        .next()
        .expect("a header")
        .split(',')
        .map(String::from)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(|x| x.parse().expect("a number")).collect())
        .collect();
    (header, rows)
}

/// `stiction simulate panda-push-box` (the shipped problem, by name) with example-robot-data
/// given through `STICTION_PACKAGE_PATH`: 2.5 s at δt = 1 ms without error; the hand sweeps
/// into the box, which slides about 0.2 m along +y and stays on the ground (its centre at its
/// half height, upright), and `stiction list` shows the problem's own description.
#[test]
#[ignore = "needs scripts/robots/setup.sh (example-robot-data from PyPI)"]
fn panda_pushes_the_box_of_the_shipped_problem() {
    let package = format!(
        "example-robot-data={}",
        robots().parent().expect("the package folder").display()
    );
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("panda-push-box");
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(env!("CARGO_BIN_EXE_stiction"))
        .args(["simulate", "panda-push-box", "--quiet", "--out"])
        .arg(&out)
        .env("STICTION_PACKAGE_PATH", &package)
        .output()
        .expect("stiction runs");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let (header, rows) = read_trajectory(&out.join("trajectory.csv"));
    let column = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    };
    let (t, x, y, z) = (
        column("t"),
        column("box.px"),
        column("box.py"),
        column("box.pz"),
    );
    let (qx, qy) = (column("box.qx"), column("box.qy"));
    let (first, last) = (&rows[0], &rows[rows.len() - 1]);
    assert!((last[t] - 2.5).abs() < 1e-9, "ran to t = {}", last[t]);
    let (dx, dy) = (last[x] - first[x], last[y] - first[y]);
    assert!(
        dy > 0.15 && dx.abs() < 0.06,
        "box displaced by ({dx:.4}, {dy:.4}) m, expected about 0.2 m along +y"
    );
    for row in &rows {
        // On the ground: 5 cm up within the contact's compliance, not tipped over.
        assert!(
            (row[z] - 0.05).abs() < 1e-3,
            "box centre at {} m at t = {}",
            row[z],
            row[t]
        );
        assert!(
            row[qx].abs() < 0.05 && row[qy].abs() < 0.05,
            "box tilted at t = {}",
            row[t]
        );
    }
    // It is the hand that moves it: still before the sweep reaches it (about 0.5 s).
    let early = rows.iter().find(|r| r[t] >= 0.4).expect("a row at 0.4 s");
    assert!(
        (early[y] - first[y]).abs() < 1e-4,
        "box moved before the hand arrived"
    );
    let list = Command::new(env!("CARGO_BIN_EXE_stiction"))
        .arg("list")
        .env("STICTION_PACKAGE_PATH", &package)
        .output()
        .expect("stiction runs");
    let listing = String::from_utf8_lossy(&list.stdout);
    let line = listing
        .lines()
        .find(|l| l.starts_with("panda-push-box "))
        .unwrap_or_else(|| panic!("not listed:\n{listing}"));
    assert!(
        line.contains("Franka Panda") && !line.contains("not found"),
        "{line}"
    );
}
