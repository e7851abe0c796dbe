//! Problem files: a scene and a simulation task as TOML (`problems/*.toml`).
//!
//! The schema ([`schema`]) is documented field by field in `problems/README.md`; unknown
//! fields are rejected. [`load_problem`] turns a file into a ready [`Problem`]; every error
//! names the file, the line and column, the field, what was expected and what was found:
//!
//! ```text
//! problems/bad.toml:12:8: field `body[0].mass`: expected a positive finite number, found -2
//! ```
//!
//! Files: `schema.rs` (the serde structures), `build.rs` (checks and model building),
//! `actuation.rs` (`[[actuator]]` → [`crate::control::Controller`]), `locate.rs` (field path →
//! line and column).

mod actuation;
pub mod build;
pub mod locate;
pub mod schema;

pub use build::{load_problem, parse_problem, OutputSettings, Problem, Stepper};
pub use locate::TextLocation;
