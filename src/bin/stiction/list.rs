//! `stiction list`: the shipped problems, or the problem files of a folder, one line each.

use std::path::Path;

use stiction::error::{Error, Result};
use stiction::problem::load_problem;

use crate::shipped::{shipped, SHIPPED};

/// Prints the shipped problems (`dir` = `None`) or every `*.toml` in `dir`, with their
/// descriptions. A file that does not load is listed with its error and makes the command fail
/// after the listing.
pub fn list(dir: Option<&Path>) -> Result<()> {
    let mut rows = Vec::new();
    match dir {
        None => {
            for (name, _) in SHIPPED {
                let problem = shipped(name).expect("invariant: the name is in SHIPPED");
                rows.push((name.to_string(), problem));
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
                let problem = load_problem(&path);
                rows.push((path.display().to_string(), problem));
            }
        }
    }
    let width = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0);
    let mut first_error = None;
    for (name, problem) in rows {
        match problem {
            Ok(p) => println!("{name:width$}  {}", p.description),
            Err(e) => {
                println!("{name:width$}  (does not load: {e})");
                first_error.get_or_insert(e);
            }
        }
    }
    if dir.is_none() {
        println!();
        println!(
            "Run one with `stiction simulate NAME --plot --animate` (the files are in problems/)."
        );
    }
    first_error.map_or(Ok(()), Err)
}
