//! stiction: differentiable simulation of multibody systems with frictional contact.
//!
//! # Running a problem
//!
//! A problem file (`problems/*.toml`) describes a scene and how long to simulate it.
//! [`problem::load_problem`] builds it, [`simulate::run`] steps it and returns a
//! [`simulate::Recording`], and [`report`] writes that recording as CSV tables and figures:
//!
//! ```no_run
//! use std::path::Path;
//! # fn main() -> stiction::error::Result<()> {
//! let mut problem = stiction::problem::load_problem(Path::new("problems/falling-sphere.toml"))?;
//! let recording = stiction::simulate::run(&mut problem.simulator, &problem.initial_state, problem.duration, |_, _| {})?;
//! let out = Path::new("out/falling-sphere");
//! std::fs::create_dir_all(out).expect("output folder");
//! stiction::report::csv::write_tables(&recording, &problem.simulator, out)?;
//! # Ok(())
//! # }
//! ```
//!
//! The `stiction` binary does the same from the command line
//! (`stiction simulate problems/falling-sphere.toml --out out/falling-sphere --plot`), and
//! `examples/` runs each reference case under every contact approximation.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod contact;
pub mod control;
pub mod derivatives;
pub mod error;
pub mod geometry;
pub mod hydroelastic;
pub mod math;
pub mod multibody;
pub mod ncp;
pub mod problem;
pub mod report;
pub mod scalar;
pub mod scene;
pub mod simulate;
pub mod solver;
pub mod step;
