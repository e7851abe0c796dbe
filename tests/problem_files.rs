//! Problem files: every shipped file loads; malformed files give errors that name the file,
//! the field and what was expected, and never panic.

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
            let p = load_problem(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
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
    assert_eq!(p.name, "minimal");
    assert_eq!(p.initial_state.q.len(), 7);
}

/// Replaces `from` in the valid file (which must occur) with `to`, parses, and checks that the
/// error message names the file and contains every fragment.
fn assert_error(from: &str, to: &str, fragments: &[&str]) {
    assert!(
        VALID.contains(from),
        "test setup: `{from}` not in the valid file"
    );
    let text = VALID.replacen(from, to, 1);
    let err = match parse_problem(&text, Path::new("broken.toml")) {
        Ok(_) => panic!("`{to}` was accepted"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("broken.toml"), "no file name in: {err}");
    for f in fragments {
        assert!(err.contains(f), "`{f}` missing from: {err}");
    }
}

#[test]
fn malformed_files_name_the_field_and_what_was_expected() {
    assert_error("dt = 1e-3", "dt = 0.0", &["simulation.dt", "positive"]);
    assert_error("dt = 1e-3", "dt = -1e-3", &["simulation.dt", "positive"]);
    assert_error(
        "dt = 1e-3",
        "dt = nan",
        &["simulation.dt", "positive finite"],
    );
    assert_error(
        "dt = 1e-3",
        "dt = \"fast\"",
        &["simulation.dt", "f64", "line 3"],
    );
    assert_error("duration = 0.1", "duration = inf", &["simulation.duration"]);
    assert_error("mass = 1.0", "mass = -2.0", &["body[0].mass", "positive"]);
    assert_error("mass = 1.0", "mass = [1.0]", &["body[0].mass"]);
    assert_error("mass = 1.0", "mas = 1.0", &["mas", "expected one of"]);
    assert_error(
        "radius = 0.05",
        "radius = 0.0",
        &["geometry[0].radius", "positive"],
    );
    assert_error("radius = 0.05", "", &["geometry[0].radius", "radius"]);
    assert_error(
        "shape = \"sphere\"",
        "shape = \"blob\"",
        &["geometry[0].shape", "one of sphere"],
    );
    assert_error(
        "body = \"ball\"",
        "body = \"bal\"",
        &["geometry[0].body", "`bal`"],
    );
    assert_error(
        "position = [0.0, 0.0, 0.1]",
        "position = [0.0, 0.1]",
        &["body[0].position"],
    );
    assert_error(
        "position = [0.0, 0.0, 0.1]",
        "position = [0.0, 0.0, nan]",
        &["body[0].position[2]", "finite"],
    );
    assert_error(
        "[simulation]",
        "[simulation]\napproximation = \"anitescu\"",
        &["simulation.approximation", "lagged"],
    );
    assert_error(
        "mass = 1.0",
        "mass = 1.0\njoint = \"hinge\"",
        &["body[0].joint", "revolute"],
    );
    assert_error(
        "mass = 1.0",
        "mass = 1.0\njoint = \"revolute\"",
        &["body[0].axis"],
    );
    assert_error(
        "mass = 1.0",
        "mass = 1.0\nparent = \"ghost\"",
        &["body[0].parent", "`ghost`"],
    );
    assert_error(
        "mass = 1.0",
        "mass = 1.0\ninertia = [0.1, -0.1, 0.1]",
        &["body[0].inertia[1]", "positive"],
    );
    assert_error(
        "shape = \"half-space\"",
        "shape = \"half-space\"\ncontact = { friction = -0.5 }",
        &["geometry[1].contact.friction"],
    );
    assert_error(
        "shape = \"half-space\"",
        "shape = \"half-space\"\ncontact = { stiffness = 0.0 }",
        &["geometry[1].contact.stiffness", "positive"],
    );
    assert_error(
        "name = \"ground\"",
        "name = \"ball\"",
        &["geometry[1].name", "unique"],
    );
    assert_error("[simulation]", "[simulation\n", &["TOML"]);
}

#[test]
fn unreadable_and_non_toml_files_are_errors() {
    let missing = load_problem(Path::new("/nonexistent/problem.toml"))
        .unwrap_err()
        .to_string();
    assert!(missing.contains("/nonexistent/problem.toml"), "{missing}");
    let dir = std::env::temp_dir().join(format!("stiction-problem-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let binary = dir.join("binary.toml");
    std::fs::write(&binary, [0xff, 0xfe, 0x00, 0x41]).unwrap();
    let err = load_problem(&binary).unwrap_err().to_string();
    assert!(
        err.contains("binary.toml") && err.contains("UTF-8"),
        "{err}"
    );
    let empty = dir.join("empty.toml");
    std::fs::write(&empty, "").unwrap();
    let err = load_problem(&empty).unwrap_err().to_string();
    assert!(
        err.contains("empty.toml") && err.contains("simulation"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
