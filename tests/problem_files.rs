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
    assert!(p.controller.actuators.is_empty());
    assert_eq!(p.name, "minimal");
    assert_eq!(p.initial_state.q.len(), 7);
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
