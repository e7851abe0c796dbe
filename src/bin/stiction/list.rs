//! `stiction list`: the shipped problems, or the problem files of a folder, one line each.

use std::path::{Path, PathBuf};

use stiction::error::{Error, Result};
use stiction::identify::load_identification;
use stiction::import::package::PACKAGE_PATH_VARIABLE;
use stiction::import::PackagePath;
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
            for (name, text) in SHIPPED {
                let path = PathBuf::from(format!("problems/{name}.toml"));
                let row = match not_installed(text, &path) {
                    Some(note) => Ok(note),
                    None => shipped(name)
                        .expect("invariant: the name is in SHIPPED")
                        .map(|p| describe(&p)),
                };
                rows.push((name.to_string(), row));
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
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let description = if let Some(note) = not_installed(&text, &path) {
                    Ok(note)
                } else if is_identification(&path) {
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
        println!("`stiction optimize NAME` solves the tasks; `stiction identify identify-all` fits friction, stiffness and");
        println!("dissipation to measured data (in a source checkout, `stiction list --dir problems/identify` lists those problems).");
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

/// For a problem whose `[[model]]` names a `package://` file that is not installed: its
/// description and what to install, listed instead of a load error (the robot problems need
/// a package from outside the repository).
fn not_installed(text: &str, path: &Path) -> Option<String> {
    let table: toml::Table = text.parse().ok()?;
    let search = PackagePath::from_env();
    let (file, install) = table
        .get("model")?
        .as_array()?
        .iter()
        .filter_map(|m| Some((m.get("file")?.as_str()?, m.get("install"))))
        .find(|(file, _)| file.starts_with("package://") && search.resolve(file, path).is_err())?;
    let description = table.get("description").and_then(|d| d.as_str());
    let install = install
        .and_then(|i| i.as_str())
        .map_or(String::new(), |i| format!(": install it with `{i}`"));
    Some(format!(
        "{} (needs {file}, not found through {PACKAGE_PATH_VARIABLE}{install})",
        description.unwrap_or_default()
    ))
}

/// Whether `path` is an identification file (a top-level `scene` names the simulated scene).
fn is_identification(path: &Path) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok())
        .is_some_and(|table| table.contains_key("scene"))
}
