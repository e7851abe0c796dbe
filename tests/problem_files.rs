//! Problem files: every shipped file loads, and so does a minimal one; a missing file is an
//! error that names it. Malformed files are in `malformed_problems.rs`.

use std::path::{Path, PathBuf};

use stiction::problem::{load_problem, parse_problem};

const VALID: &str = r#"
[simulation]
dt = 1e-3
duration = 0.1

[[body]]
name = "ball"
mass = 1.0
position = [0.0, 0.0, 0.1]

[[geometry]]
name = "ball"
body = "ball"
shape = "sphere"
radius = 0.05

[[geometry]]
name = "ground"
shape = "half-space"
"#;

#[test]
fn every_shipped_problem_loads() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("problems");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let p = match load_problem(&path) {
                Ok(p) => p,
                // A robot problem whose package is not installed here (panda-push-box without
                // example-robot-data) says how to install it; tests/robots.rs runs it with it.
                Err(e)
                    if e.to_string()
                        .contains("install it with `scripts/robots/setup.sh`") =>
                {
                    continue
                }
                Err(e) => panic!("{}: {e}", path.display()),
            };
            assert!(
                !p.description.is_empty(),
                "{} has no description",
                path.display()
            );
            count += 1;
        }
    }
    assert!(count >= 5);
}

#[test]
fn valid_minimal_problem_loads() {
    let p = parse_problem(VALID, Path::new("minimal.toml")).unwrap();
    assert!(p.controller.actuators.is_empty());
    assert_eq!(p.name, "minimal");
    assert_eq!(p.initial_state.q.len(), 7);
}

/// `Problem::set_contact_stiffness` (the stiffness studies) sets the scene's default and every
/// geometry's own stiffness, and refuses a stiffness that is not positive and finite, and the
/// complementarity stepper, leaving the problem as it was.
#[test]
fn the_contact_stiffness_is_set_everywhere_or_refused() {
    let own = VALID.replace(
        "radius = 0.05\n",
        "radius = 0.05\ncontact = { stiffness = 2e5 }\n",
    );
    let mut problem = parse_problem(&own, Path::new("own.toml")).expect("a valid problem");
    // The scene's default and the ball's own stiffness (N/m).
    let stiffnesses = |p: &stiction::problem::Problem| {
        let ball = p.simulator.geometries()[0].contact.as_ref();
        (
            p.simulator.settings.contact.stiffness,
            ball.expect("its own contact").stiffness,
        )
    };
    problem
        .set_contact_stiffness(3e8)
        .expect("a valid stiffness");
    assert_eq!(stiffnesses(&problem), (3e8, 3e8));
    for k in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(problem.set_contact_stiffness(k).is_err(), "{k}");
        assert_eq!(stiffnesses(&problem), (3e8, 3e8));
    }
    let ncp = VALID.replace("duration = 0.1", "duration = 0.1\nstepper = \"ncp\"");
    let mut problem = parse_problem(&ncp, Path::new("ncp.toml")).expect("a valid ncp problem");
    let before = problem.simulator.settings.contact.stiffness;
    let e = problem
        .set_contact_stiffness(1e6)
        .expect_err("rigid contacts");
    assert!(e.to_string().contains("stepper"), "{e}");
    assert_eq!(problem.simulator.settings.contact.stiffness, before);
}

#[test]
fn a_missing_file_is_named() {
    let missing = load_problem(Path::new("/nonexistent/problem.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        missing.starts_with(
            "/nonexistent/problem.toml: field `(file)`: expected a readable problem file, found "
        ),
        "{missing}"
    );
}

#[test]
fn the_readme_problem_example_loads() {
    let readme =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("README.md"))
            .unwrap();
    let start = readme
        .find("```toml\n")
        .expect("a TOML example in README.md")
        + 8;
    let end = start + readme[start..].find("```").unwrap();
    let p = parse_problem(&readme[start..end], Path::new("README.md"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.simulator.model.nu(), 1);
    assert_eq!(p.controller.actuators[0].name, "flap");
}

/// A two-link arm in URDF for `[[model]]` tests: a continuous shoulder and a limited elbow.
const ARM_URDF: &str = include_str!("common/two_link_arm.urdf");

/// A problem with a box, the ground, the arm of [`ARM_URDF`] as `[[model]]` (`model` is the
/// entry's extra lines) and a PD actuator on the arm's shoulder.
fn arm_problem(model: &str) -> String {
    format!(
        r#"
[simulation]
dt = 1e-3
duration = 0.05

[[body]]
name = "box"
mass = 0.5
position = [0.0, 0.0, 0.05]

[[geometry]]
name = "box"
body = "box"
shape = "box"
size = [0.1, 0.1, 0.1]

[[geometry]]
name = "ground"
shape = "half-space"

[[model]]
file = "arm.urdf"
{model}

[[actuator]]
body = "arm_upper"
control = {{ type = "pd", kp = 20.0, kd = 1.0, position = 0.5 }}
"#
    )
}

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stiction-model-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    std::fs::write(dir.join("arm.urdf"), ARM_URDF).expect("the arm");
    dir
}

/// `[[model]] hydroelastic = { resolution_hint = … }` makes every collision geometry of the
/// model a rigid pressure-field geometry and leaves the file's own as they are; a hint that is
/// not positive is an error at its field.
#[test]
fn model_hydroelastic_makes_its_geometries_rigid_pressure_field_meshes() {
    use stiction::hydroelastic::Hydroelastic;
    let dir = scratch("hydroelastic");
    let path = dir.join("arm.toml");
    let text = arm_problem("prefix = \"arm_\"\nhydroelastic = { resolution_hint = 0.05 }");
    std::fs::write(&path, &text).expect("a problem");
    let p = load_problem(&path).unwrap_or_else(|e| panic!("{e}"));
    let geometries = p.simulator.collision().geometries();
    let (arm, own): (Vec<_>, Vec<_>) = geometries.iter().partition(|g| g.name.starts_with("arm_"));
    assert!(!arm.is_empty());
    for g in arm {
        assert_eq!(
            g.hydroelastic,
            Some(Hydroelastic::rigid(0.05)),
            "{}",
            g.name
        );
    }
    assert!(own.iter().all(|g| g.hydroelastic.is_none()));
    let bad = arm_problem("hydroelastic = { resolution_hint = -1.0 }");
    std::fs::write(&path, &bad).expect("a problem");
    let e = load_problem(&path)
        .expect_err("a negative hint")
        .to_string();
    assert!(e.contains("model[0].hydroelastic.resolution_hint"), "{e}");
}

/// `[[model]]` brings a URDF into a problem: its bodies follow the file's (q = the box's 7
/// coordinates, then the shoulder's and the elbow's), prefixed, placed at `position`, and a
/// problem actuator drives one of its joints; the scene runs.
#[test]
fn a_model_joins_the_problem_scene_after_its_own_bodies() {
    let dir = scratch("joins");
    let path = dir.join("arm.toml");
    let text = arm_problem("prefix = \"arm_\"\nposition = [1.0, 0.0, 1.5]");
    std::fs::write(&path, &text).expect("a problem");
    let mut p = load_problem(&path).unwrap_or_else(|e| panic!("{e}"));
    let model = &p.simulator.model;
    assert_eq!((model.nq(), model.nv(), model.nu()), (9, 8, 1));
    let names: Vec<&str> = model.bodies.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["box", "arm_upper", "arm_lower"]);
    // The shoulder sits at `position`: the upper link's joint frame in the world.
    assert!((model.joints[1].X_PJ.p - nalgebra::Vector3::new(1.0, 0.0, 1.5)).norm() < 1e-12);
    let geometries = p.simulator.collision().geometries();
    assert!(geometries.iter().any(|g| g.name.starts_with("arm_")));
    let recording = stiction::simulate::run_controlled(
        &mut p.simulator,
        &p.controller,
        &p.initial_state,
        p.duration,
        |_, _| {},
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let last = recording.states.last().expect("states");
    // The PD law lifts the shoulder toward its 0.5 rad target from 0.
    assert!(last.q[7] > 0.0, "shoulder at {}", last.q[7]);
}

#[test]
fn a_model_entry_with_a_bad_base_or_a_missing_file_is_refused_where_it_is_written() {
    let dir = scratch("refused");
    let path = dir.join("bad-base.toml");
    std::fs::write(&path, arm_problem("base = \"wobbly\"\nprefix = \"arm_\"")).expect("a problem");
    let e = load_problem(&path).expect_err("a bad base").to_string();
    assert!(
        e.contains("field `model[0].base`: expected `fixed` or `floating`, found `wobbly`"),
        "{e}"
    );
    let path = dir.join("missing.toml");
    let text = arm_problem("prefix = \"arm_\"").replace("arm.urdf", "missing.urdf");
    std::fs::write(&path, text).expect("a problem");
    let e = load_problem(&path)
        .expect_err("a missing model")
        .to_string();
    assert!(e.contains("missing.urdf"), "{e}");
}

/// `q0` of a `[[model]]` entry sets its joints' initial coordinates by joint name (prefixed
/// as the model's names are); an unknown joint and a non-finite value are refused at their
/// field.
#[test]
fn a_model_starts_at_its_q0_and_bad_entries_are_refused_where_they_are_written() {
    let dir = scratch("q0");
    let path = dir.join("q0.toml");
    let text = arm_problem("prefix = \"arm_\"\nq0 = { arm_shoulder = 0.3, arm_elbow = -0.2 }");
    std::fs::write(&path, text).expect("a problem");
    let p = load_problem(&path).unwrap_or_else(|e| panic!("{e}"));
    // The box's 7 coordinates, then the shoulder's and the elbow's.
    assert_eq!(p.initial_state.q.len(), 9);
    assert_eq!((p.initial_state.q[7], p.initial_state.q[8]), (0.3, -0.2));
    let path = dir.join("unknown.toml");
    let text = arm_problem("prefix = \"arm_\"\nq0 = { shoulder = 0.3 }");
    std::fs::write(&path, text).expect("a problem");
    let e = load_problem(&path)
        .expect_err("an unprefixed name")
        .to_string();
    assert!(
        e.contains("field `model[0].q0.shoulder`: expected the name of a joint of the model, found shoulder"),
        "{e}"
    );
    let path = dir.join("nan.toml");
    let text = arm_problem("q0 = { elbow = nan }");
    std::fs::write(&path, text).expect("a problem");
    let e = load_problem(&path).expect_err("a NaN").to_string();
    assert!(
        e.contains("field `model[0].q0.elbow`: expected a finite number"),
        "{e}"
    );
}

/// A V-shaped trough along y, `z = |x| tan α` for |x| ≤ 0.5 m, as an OBJ of four
/// triangles with upward faces.
const TROUGH_SLOPE_DEG: f64 = 30.0;

fn trough_obj() -> String {
    let h = 0.5 * TROUGH_SLOPE_DEG.to_radians().tan();
    format!(
        "v -0.5 -0.5 {h}\nv 0 -0.5 0\nv 0.5 -0.5 {h}\nv -0.5 0.5 {h}\nv 0 0.5 0\nv 0.5 0.5 {h}\n\
         f 1 2 5\nf 1 5 4\nf 2 3 6\nf 2 6 5\n"
    )
}

fn trough_problem(extra: &str) -> String {
    format!(
        r#"
[simulation]
dt = 1e-3
duration = 1.5

[[body]]
name = "ball"
mass = 0.2
position = [0.12, 0.0, 0.2]

[[geometry]]
name = "ball"
body = "ball"
shape = "sphere"
radius = 0.05

[[geometry]]
name = "trough"
shape = "mesh"
file = "trough.obj"
{extra}
"#
    )
}

/// A static mesh keeps its concavity: a ball released off-centre in a V-shaped trough settles
/// on both faces at the bottom, its centre at `x = 0`, `z = r / cos α` (the trough's convex
/// hull would hold it up at the rim instead), with one contact on each face.
#[test]
fn a_ball_settles_at_the_bottom_of_a_static_mesh_trough() {
    let dir = std::env::temp_dir().join(format!("stiction-trough-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    std::fs::write(dir.join("trough.obj"), trough_obj()).expect("the mesh");
    let path = dir.join("trough.toml");
    std::fs::write(&path, trough_problem("")).expect("a problem");
    let mut p = load_problem(&path).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<String> = p
        .simulator
        .collision()
        .geometries()
        .iter()
        .map(|g| g.name.clone())
        .collect();
    assert_eq!(
        names,
        ["ball", "trough#0", "trough#1", "trough#2", "trough#3"]
    );
    let recording = stiction::simulate::run_controlled(
        &mut p.simulator,
        &p.controller,
        &p.initial_state,
        p.duration,
        |_, _| {},
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let last = recording.states.last().expect("states");
    let (r, alpha) = (0.05, TROUGH_SLOPE_DEG.to_radians());
    // Stiff contact: the ball sinks into each face by well under 1e-4 m.
    assert!(last.q[0].abs() < 1e-4, "x = {}", last.q[0]);
    assert!(
        (last.q[2] - r / alpha.cos()).abs() < 1e-4,
        "z = {}",
        last.q[2]
    );
    assert!(last.v.norm() < 1e-2, "still moving: {}", last.v.norm());
    let report = recording.reports.last().expect("reports");
    let loaded = report
        .contacts
        .iter()
        .filter(|c| c.normal_force > 0.0)
        .count();
    assert!(loaded >= 2, "{loaded} loaded contacts");
    // The two faces carry the weight between them: Σ f_n cos α = m g.
    let support: f64 = report.contacts.iter().map(|c| c.normal_force).sum::<f64>() * alpha.cos();
    assert!(
        (support - 0.2 * 9.81).abs() < 0.02 * 0.2 * 9.81,
        "support {support} N"
    );
}

/// A static mesh on a moving body, a missing file and a mesh field on another shape are each
/// refused at the field.
#[test]
fn static_mesh_entries_are_refused_where_they_are_wrong() {
    let dir = std::env::temp_dir().join(format!("stiction-trough-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    std::fs::write(dir.join("trough.obj"), trough_obj()).expect("the mesh");
    let cases = [
        ("body = \"ball\"", "geometry[1].body"),
        ("depth = -1.0", "geometry[1].depth"),
    ];
    for (extra, field) in cases {
        let path = dir.join("bad.toml");
        std::fs::write(&path, trough_problem(extra)).expect("a problem");
        let e = load_problem(&path).expect_err("refused").to_string();
        assert!(e.contains(field), "{field}: {e}");
    }
    let path = dir.join("missing.toml");
    std::fs::write(
        &path,
        trough_problem("").replace("trough.obj", "nowhere.obj"),
    )
    .expect("a problem");
    let e = load_problem(&path).expect_err("refused").to_string();
    assert!(
        e.contains("geometry[1].file") && e.contains("nowhere.obj"),
        "{e}"
    );
    let path = dir.join("sphere-file.toml");
    std::fs::write(
        &path,
        VALID.replace("radius = 0.05", "radius = 0.05\nfile = \"x.obj\""),
    )
    .expect("a problem");
    let e = load_problem(&path).expect_err("refused").to_string();
    assert!(e.contains("geometry[0].file"), "{e}");
}
