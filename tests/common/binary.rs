//! Running the `stiction` binary from a test, shared by `tests/cli.rs` and
//! `tests/fault_tolerance.rs`: scratch folders, the command, its output as text, and the
//! paths of shipped problems.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh, empty folder for one test, named after the test file and `test`.
pub fn scratch(test: &str) -> PathBuf {
    let suite = module_path!().split("::").next().unwrap_or("test");
    let dir = std::env::temp_dir().join(format!("stiction-{suite}-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

/// The binary with `args`, to run in the folder `cwd`.
pub fn command(cwd: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_stiction"));
    c.args(args).current_dir(cwd);
    c
}

/// Runs the binary with `args` in the folder `cwd`.
pub fn stiction(cwd: &Path, args: &[&str]) -> Output {
    command(cwd, args).output().expect("the binary runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The path of the shipped problem `problems/NAME.toml`.
pub fn problem(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("problems")
        .join(format!("{name}.toml"))
        .display()
        .to_string()
}
