//! `stiction list`: the shipped problems, or the problem files of a folder, one line each.

use std::path::Path;

use stiction::error::{Error, Result};
use stiction::identify::load_identification;
use stiction::problem::{load_problem, Problem};

use crate::shipped::{shipped, SHIPPED};

/// Prints the shipped problems (`dir` = `None`) or every `*.toml` in `dir`, with their
/// descriptions; problems with an `[optimize]` task and identification files say which command
/// runs them. A file that does not load is listed with its error and makes the command fail
/// after the listing.
pub fn list(dir: Option<&Path>) -> Result<()> {
    let mut rows = Vec::new();
    match dir {
        None => {
            for (name, _) in SHIPPED {
                let problem = shipped(name).expect("invariant: the name is in SHIPPED");
                rows.push((name.to_string(), problem.map(|p| describe(&p))));
            }
        }
        Some(dir) => {
            let io_error = |source| Error::Io {
                path: dir.to_path_buf(),
                source,
            };
            let mut files = Vec::new();
            for entry in std::fs::read_dir(dir).map_err(io_error)? {
                let path = entry.map_err(io_error)?.path();
                if path.extension().is_some_and(|e| e == "toml") {
                    files.push(path);
                }
            }
            files.sort();
            for path in files {
                let description = if is_identification(&path) {
                    load_identification(&path, None)
                        .map(|f| format!("{} (stiction identify)", f.description))
                } else {
                    load_problem(&path).map(|p| describe(&p))
                };
                rows.push((path.display().to_string(), description));
            }
        }
    }
    let width = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    let mut first_error = None;
    for (name, description) in rows {
        match description {
            Ok(d) => println!("{name:width$}  {d}"),
            Err(e) => {
                println!("{name:width$}  (does not load: {e})");
                first_error.get_or_insert(e);
            }
        }
    }
    if dir.is_none() {
        println!();
        println!(
            "Run one with `stiction simulate NAME --plot --animate` (the files are in problems/);"
        );
        println!("`stiction optimize NAME` solves the tasks, and `stiction list --dir problems/identify` lists the identification problems.");
    }
    first_error.map_or(Ok(()), Err)
}

/// The problem's description, with the command for an `[optimize]` task.
fn describe(problem: &Problem) -> String {
    match problem.optimize {
        Some(_) => format!("{} (stiction optimize)", problem.description),
        None => problem.description.clone(),
    }
}

/// Whether `path` is an identification file (a top-level `scene` names the simulated scene).
fn is_identification(path: &Path) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok())
        .is_some_and(|table| table.contains_key("scene"))
}
