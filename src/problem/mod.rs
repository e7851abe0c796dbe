//! Problem files: a scene and a simulation task as TOML (`problems/*.toml`).
//!
//! The schema ([`schema`]) is documented field by field in `problems/README.md`; unknown
//! fields are rejected. [`load_problem`] turns a file into a ready [`Problem`]; every error
//! names the file, the field, what was expected and what was found.

pub mod build;
pub mod schema;

pub use build::{load_problem, parse_problem, Problem, Stepper};
