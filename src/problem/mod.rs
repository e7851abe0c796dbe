//! Problem files: a scene and a simulation task as TOML (`problems/*.toml`).
//!
//! The schema (`schema`) is documented field by field in `problems/README.md`; unknown
//! fields are rejected. [`load_problem`] turns a file into a ready [`Problem`]; every error
//! names the file, the line and column, the field, what was expected and what was found:
//!
//! ```text
//! problems/bad.toml:12:8: field `body[0].mass`: expected a positive finite number, found -2
//! ```
//!
//! The reader turns a file into a [`crate::scene::SceneDescription`] (the data every scene
//! front-end produces) and builds it; the `[optimize]` table it keeps as written, for
//! [`crate::optimize`] to read with [`parse_toml`].
//!
//! Files: `schema.rs` (the serde structures), `build.rs` (the file's settings and the whole
//! reading), `description.rs` (`[[body]]`, `[[geometry]]` → the description's bodies and
//! geometries; the description's errors → located fields), `actuation.rs` (`[[actuator]]` →
//! the description's actuators and their control laws), `locate.rs` (field path → line and
//! column).

mod actuation;
pub(crate) mod build;
mod description;
pub(crate) mod exact;
pub(crate) mod locate;
pub(crate) mod schema;

pub use build::{load_problem, parse_problem, parse_toml, OutputSettings, Problem, Stepper};
pub use locate::TextLocation;

/// The shipped `problems/NAME.toml`, for the unit tests that run a scene.
#[cfg(test)]
pub(crate) fn shipped(name: &str) -> Problem {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("problems")
        .join(format!("{name}.toml"));
    load_problem(&path).expect("shipped problem loads")
}
