//! stiction's [`Error`] as Python exceptions (classes defined in `stiction/_errors.py`, so that
//! each derives from both `StictionError` and the built-in a Python user catches: `ValueError`
//! for bad input, `RuntimeError` for a solver failure). The message is the error's `Display`,
//! the text the `stiction` command prints; structured fields become attributes.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use stiction::error::Error;
use stiction::solver::SolverStats;

/// Where a failing step sits: its index in a rollout and the rollout's index in a batch.
#[derive(Clone, Copy, Debug, Default)]
pub struct Position {
    /// Step index within the rollout.
    pub step: Option<usize>,
    /// Rollout index within the batch.
    pub item: Option<usize>,
}

/// An instance of `stiction._errors.CLASS` with `message`, raised as a `PyErr`, after
/// `set` has filled its attributes.
fn raise(
    py: Python<'_>,
    class: &str,
    message: &str,
    set: impl FnOnce(&Bound<'_, PyAny>) -> PyResult<()>,
) -> PyErr {
    let made = (|| -> PyResult<PyErr> {
        let cls = py.import("stiction._errors")?.getattr(class)?;
        let exc = cls.call1((PyString::new(py, message),))?;
        set(&exc)?;
        Ok(PyErr::from_value(exc))
    })();
    made.unwrap_or_else(|e| e)
}

/// The solver statistics as attributes of a `SolverError`.
fn set_stats(exc: &Bound<'_, PyAny>, stats: &SolverStats) -> PyResult<()> {
    exc.setattr("iterations", stats.iterations)?;
    exc.setattr("line_search_iterations", stats.line_search_iterations)?;
    exc.setattr("residual", stats.residual)?;
    exc.setattr("tolerance", stats.tolerance)?;
    exc.setattr("contacts", stats.contacts)?;
    exc.setattr("cost", stats.cost)?;
    exc.setattr("criterion", format!("{:?}", stats.criterion))?;
    exc.setattr("condition", stats.condition)?;
    Ok(())
}

/// `error` as a Python exception.
pub fn to_py(py: Python<'_>, error: &Error) -> PyErr {
    to_py_at(py, error, Position::default())
}

/// `error` as a Python exception, raised at `at` (a step of a rollout, a rollout of a batch):
/// the position prefixes the message and fills the `step` and `item` attributes.
pub fn to_py_at(py: Python<'_>, error: &Error, at: Position) -> PyErr {
    if let Error::Step { step, source, .. } = error {
        let at = Position {
            step: Some(*step),
            ..at
        };
        return to_py_at(py, source, at);
    }
    let mut message = String::new();
    if let Some(item) = at.item {
        message.push_str(&format!("rollout {item}: "));
    }
    if let Some(step) = at.step {
        message.push_str(&format!("step {step}: "));
    }
    message.push_str(&error.to_string());
    // A solver error located near a body keeps the solver error's class; the message and the
    // `body` attribute name the body.
    let (inner, body) = match error {
        Error::Near { source, body, .. } => (source.as_ref(), Some(body.as_str())),
        other => (other, None),
    };
    let position = |exc: &Bound<'_, PyAny>| -> PyResult<()> {
        exc.setattr("step", at.step)?;
        exc.setattr("item", at.item)?;
        exc.setattr("body", body)
    };
    match inner {
        Error::ProblemFile {
            path,
            location,
            field,
            ..
        } => raise(py, "ProblemFileError", &message, |exc| {
            exc.setattr("path", path.display().to_string())?;
            exc.setattr("line", location.map(|l| l.line))?;
            exc.setattr("column", location.map(|l| l.column))?;
            exc.setattr("field", field)
        }),
        Error::ModelFile {
            path,
            line,
            element,
            ..
        } => raise(py, "ProblemFileError", &message, |exc| {
            exc.setattr("path", path.display().to_string())?;
            exc.setattr("line", *line)?;
            exc.setattr("field", element)
        }),
        Error::DataFile { path, .. } => raise(py, "ProblemFileError", &message, |exc| {
            exc.setattr("path", path.display().to_string())
        }),
        Error::InvalidParameter { name, value, .. } => {
            raise(py, "InvalidParameterError", &message, |exc| {
                exc.setattr("name", name)?;
                exc.setattr("value", value)
            })
        }
        Error::DimensionMismatch { what, found, .. } => {
            raise(py, "InvalidParameterError", &message, |exc| {
                exc.setattr("name", what)?;
                exc.setattr("value", found.to_string())
            })
        }
        Error::UnsupportedPair { .. } => raise(py, "InvalidParameterError", &message, |_| Ok(())),
        Error::NotConverged { stats } => raise(py, "SolverError", &message, |exc| {
            set_stats(exc, stats)?;
            position(exc)
        }),
        Error::NonFinite { stage, stats } => raise(py, "SolverError", &message, |exc| {
            set_stats(exc, stats)?;
            exc.setattr("stage", stage)?;
            position(exc)
        }),
        Error::HessianNotPositiveDefinite { stats, .. } => {
            raise(py, "SolverError", &message, |exc| {
                set_stats(exc, stats)?;
                position(exc)
            })
        }
        Error::NotPositiveDefinite { .. } | Error::NcpNotConverged { .. } => {
            raise(py, "SolverError", &message, position)
        }
        _ => raise(py, "StictionError", &message, |_| Ok(())),
    }
}

/// A `ValueError` for bad input given from Python (shapes, non-finite values).
pub fn value_error(message: impl Into<String>) -> PyErr {
    PyValueError::new_err(message.into())
}

/// A `TypeError` for input of the wrong type (a dtype that is not real, a non-array).
pub fn type_error(message: impl Into<String>) -> PyErr {
    PyTypeError::new_err(message.into())
}

/// Converts a library result into a Python one.
pub trait IntoPyResult<T> {
    /// The value, or the error as a Python exception.
    fn py_err(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for Result<T, Error> {
    fn py_err(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py(py, &e))
    }
}
