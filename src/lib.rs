//! stiction: differentiable simulation of multibody systems with frictional contact.
//!
//! `use stiction::prelude::*;` brings what the examples below and the README use
//! ([`prelude`]: problems, scenes, the step, derivatives, optimization and identification entry
//! points, [`Error`](error::Error) and [`Result`](error::Result)); vectors and matrices are
//! nalgebra's, re-exported as [`nalgebra`] so that they always match the crate's version.
//!
//! # Cargo features
//!
//! - `plot` (default): PNG/SVG figures and GIF animations (`report::{plot, animate, fit,
//!   optimization}`, through plotters);
//! - `cli` (default, implies `plot`): the `stiction` command (clap, indicatif).
//!
//! A library or a Python extension that needs neither builds with `default-features = false`:
//! simulation, derivatives, optimization, identification and the CSV reports are all there.
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
//!
//! # Contact patches
//!
//! Geometries with hydroelastic properties ([`hydroelastic::Hydroelastic`]: rigid, or compliant
//! with a modulus `E`) touch through pressure-field contact patches ([`hydroelastic`], Elandt's
//! thesis Ch. 4-5, Masterjohn et al. 2022): each polygon of a patch is one contact of the same
//! convex step, and every [`step::StepReport`] lists the patches with their area, force, moment
//! and pressures.
//!
//! # Optimizing through contact
//!
//! A problem file with an `[optimize]` table and actuators without a control law is a
//! trajectory optimization task; [`optimize`] solves it with contact-implicit iLQR (Kurtz & Lin,
//! IROS 2022) on the step Jacobians of [`derivatives`], re-solves it in a receding-horizon loop,
//! or runs the single-shooting L-BFGS baseline:
//!
//! ```no_run
//! use std::path::Path;
//! # fn main() -> stiction::error::Result<()> {
//! let run = stiction::optimize::optimize_file(Path::new("problems/push-ball.toml"), |_| {})?;
//! println!("{} after {} iterations, ball {:.4} m from its target",
//!     run.report.status.name(), run.report.iterations.len(), run.outcome.error);
//! # Ok(())
//! # }
//! ```
//!
//! # Identifying parameters
//!
//! [`identify`] estimates named parameters (μ, k, d, masses, …) from trajectory CSVs, with
//! 95 % confidence intervals:
//!
//! ```no_run
//! use std::path::Path;
//! # fn main() -> stiction::error::Result<()> {
//! let file = stiction::identify::load_identification(Path::new("problems/identify/identify-all.toml"), None)?;
//! let report = stiction::identify::identify(&file.problem, &file.settings)?;
//! for e in &report.estimates {
//!     println!("{}: {:?} in {:?}", e.name, e.estimate, e.ci95);
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # Layers
//!
//! Each module imports only the ones before it in this list (`tests/architecture.rs` checks
//! it on the source): [`scalar`], [`error`], [`budget`] (the sizes a run may allocate),
//! [`math`], [`multibody`], [`geometry`] (shapes), [`hydroelastic`] (pressure fields), [`contact`] (laws and models), [`collision`]
//! (geometries on bodies and the queries), [`solver`], [`step`], [`control`], [`simulate`],
//! [`ncp`], [`derivatives`], [`report`], [`scene`], [`import`] (URDF and MJCF), [`problem`],
//! [`optimize`], [`identify`], `figures` (the papers' figures, with the `plot` feature).
//! Two imports run back up, both from [`error`], whose errors carry the statistics of the
//! solve that failed.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub use nalgebra;

pub mod budget;
pub mod collision;
pub mod contact;
pub mod control;
pub mod derivatives;
pub mod error;
#[cfg(feature = "plot")]
pub mod figures;
pub mod geometry;
pub mod hydroelastic;
pub mod identify;
pub mod import;
pub mod math;
pub mod multibody;
pub mod ncp;
pub mod optimize;
pub mod prelude;
pub mod problem;
pub mod report;
pub mod scalar;
pub mod scene;
pub mod simulate;
pub mod solver;
pub mod step;

/// The README's Rust examples, compiled and run as doctests (`cargo test --doc`), so that the
/// README cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The Rust examples of `docs/library.md`, run as doctests like the README's.
#[cfg(doctest)]
#[doc = include_str!("../docs/library.md")]
pub struct LibraryDoctests;
