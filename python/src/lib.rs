//! `stiction._stiction`: the compiled half of the `stiction` Python package (PyO3, numpy
//! arrays through rust-numpy), wrapped by the pure-Python `stiction/__init__.py`.
//!
//! It exposes the library's curated entry points to Python with the names the Python API
//! promises (see `stiction/_stiction.pyi` and `docs/python.md`):
//!
//! - `Simulator` (`simulator.rs`): a problem file or robot model loaded as `stiction simulate`
//!   loads it (`load.rs`), stepped from numpy state vectors x = [q, v], with step Jacobians by
//!   the implicit function theorem (ICF ext. Sec. X-B) and the last step's contacts;
//! - `rollout` (`batch.rs`): batches of rollouts in parallel over rayon with the GIL released,
//!   bit-identical to the serial loop (`rollout.rs`, shared by both);
//! - `gradcheck`, `optimize`, `identify` (`tasks.rs`): the command line's jobs, returning dicts
//!   of arrays;
//! - errors (`errors.rs`): the library's errors as the exceptions of `stiction/_errors.py`,
//!   with the messages the command line prints; input arrays checked by `convert.rs`.
//!
//! PyO3's macros expand to `unsafe` code, so this crate cannot `forbid(unsafe_code)` as the
//! library does; it writes none itself.
#![warn(missing_docs)]

mod batch;
mod convert;
mod errors;
mod load;
mod rollout;
mod simulator;
mod tasks;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::simulator::PySimulator;

/// Loads a problem file (`problems/*.toml`) or a robot model (URDF `.urdf`, MJCF `.xml`) as a
/// Simulator; keyword arguments override the file as the command line's flags do (`dt`,
/// `approximation`, `linear_solver`, `duration`; for robot models `floating`, `package_path`,
/// `position`, `ground`).
#[pyfunction(name = "load")]
#[pyo3(signature = (path, **overrides))]
fn load_file(
    py: Python<'_>,
    path: std::path::PathBuf,
    overrides: Option<&Bound<'_, PyDict>>,
) -> PyResult<PySimulator> {
    PySimulator::open(py, path.to_string_lossy().into_owned(), overrides)
}

/// The extension module.
#[pymodule]
fn _stiction(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySimulator>()?;
    m.add_function(wrap_pyfunction!(load_file, m)?)?;
    m.add_function(wrap_pyfunction!(batch::rollout, m)?)?;
    m.add_function(wrap_pyfunction!(tasks::gradcheck, m)?)?;
    m.add_function(wrap_pyfunction!(tasks::optimize, m)?)?;
    m.add_function(wrap_pyfunction!(tasks::identify, m)?)?;
    Ok(())
}
