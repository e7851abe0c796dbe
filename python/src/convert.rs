//! numpy arrays in and out: input arrays are checked for dtype (real numbers, converted to
//! float64), shape and finiteness with messages that name the argument and the expected shape,
//! and a contiguous float64 vector is read in place; outputs are new float64 arrays in C order,
//! or a vector the caller passes as `out`.

use numpy::ndarray::{Array2, Array3};
use numpy::npyffi::{_PyArray_GET_ITEM_DATA, NPY_ARRAY_WRITEABLE};
use numpy::{PyArray1, PyArray2, PyArray3, PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::PyMemoryError;
use pyo3::prelude::*;
use stiction::nalgebra::{DMatrix, DVector};

use crate::errors::{type_error, value_error};

/// One axis of an expected shape: its name in messages and its size, `None` for any.
#[derive(Clone, Copy)]
pub struct Dim<'a>(pub &'a str, pub Option<usize>);

/// An input array checked against an expected shape: its shape and its values in C order.
pub struct Checked {
    /// The array's shape.
    pub shape: Vec<usize>,
    /// The values, row-major.
    pub values: Vec<f64>,
}

/// `obj`'s shape and values (C order) as float64: copied straight out of a float64 ndarray
/// (without rust-numpy's borrow tracking, which costs more than a small copy), or from numpy's
/// conversion of any other array-like of real numbers (integers, float32, nested lists).
fn real_values(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    what: &str,
) -> PyResult<(Vec<usize>, Vec<f64>)> {
    let copy = |a: &Bound<'_, PyArrayDyn<f64>>| {
        let values = a
            .to_vec()
            .unwrap_or_else(|_| a.to_owned_array().iter().copied().collect());
        (a.shape().to_vec(), values)
    };
    if let Ok(a) = obj.cast::<PyArrayDyn<f64>>() {
        return Ok(copy(a));
    }
    let np = py.import("numpy")?;
    let arr = np
        .call_method1("asarray", (obj,))
        .map_err(|e| type_error(format!("{what} must be an array of real numbers: {e}")))?;
    let dtype = arr.getattr("dtype")?;
    let kind: String = dtype.getattr("kind")?.extract()?;
    if !matches!(kind.as_str(), "f" | "i" | "u") {
        return Err(type_error(format!(
            "{what} must be an array of real numbers (float64), found dtype {}",
            dtype.str()?
        )));
    }
    let converted = arr.call_method1("astype", ("float64",))?;
    let a = converted.cast::<PyArrayDyn<f64>>()?;
    Ok(copy(a))
}

fn shape_text(dims: &[Dim<'_>]) -> String {
    let parts: Vec<String> = dims
        .iter()
        .map(|Dim(name, size)| match size {
            Some(n) => format!("{name}={n}"),
            None => name.to_string(),
        })
        .collect();
    if parts.len() == 1 {
        format!("({},)", parts[0])
    } else {
        format!("({})", parts.join(", "))
    }
}

/// `obj` checked against `dims`: real numbers, that shape, every value finite.
///
/// # Errors
/// `TypeError` for a dtype that is not real, `ValueError` for another shape or a non-finite
/// value (its index is named).
pub fn checked(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    what: &str,
    dims: &[Dim<'_>],
) -> PyResult<Checked> {
    let (shape, values) = real_values(py, obj, what)?;
    let fits = shape.len() == dims.len()
        && shape
            .iter()
            .zip(dims)
            .all(|(n, Dim(_, want))| want.is_none_or(|w| w == *n));
    if !fits {
        return Err(value_error(format!(
            "{what} must have shape {}, found {:?}",
            shape_text(dims),
            shape
        )));
    }
    if let Some(flat) = values.iter().position(|x| !x.is_finite()) {
        let mut index = Vec::with_capacity(shape.len());
        let mut rest = flat;
        for n in shape.iter().rev() {
            index.push(rest % n.max(&1));
            rest /= n.max(&1);
        }
        index.reverse();
        let index: Vec<String> = index.iter().map(usize::to_string).collect();
        return Err(value_error(format!(
            "{what}[{}] is {}: {what} must be finite",
            index.join(", "),
            values[flat]
        )));
    }
    Ok(Checked { shape, values })
}

/// `f` of `obj` read as a vector of `len` finite real numbers: `f` borrows a contiguous float64
/// ndarray's own memory (no copy), or the values that [`checked`] converts from any other
/// array-like; [`checked`] also gives the errors (shape, dtype, a non-finite value).
///
/// `f` must not call into Python: the slice is valid while the GIL is held and nothing else
/// runs.
pub fn with_vector<R>(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    what: &str,
    name: &str,
    len: usize,
    f: impl FnOnce(&[f64]) -> R,
) -> PyResult<R> {
    if let Ok(a) = obj.cast::<PyArray1<f64>>() {
        // SAFETY: the GIL is held from here until `f` returns and neither this function nor `f`
        // runs Python code, so no Python code can write to the array meanwhile; this module
        // holds no mutable view of an array while it reads one (`step`'s `out` is written after
        // its input has been copied). The same guarantee as `to_vec`, which reads through
        // `as_slice` too.
        if let Ok(values) = unsafe { a.as_slice() } {
            if values.len() == len && values.iter().all(|v| v.is_finite()) {
                return Ok(f(values));
            }
        }
    }
    let c = checked(py, obj, what, &[Dim(name, Some(len))])?;
    Ok(f(&c.values))
}

/// A vector of `len` finite real numbers.
pub fn vector(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    what: &str,
    name: &str,
    len: usize,
) -> PyResult<DVector<f64>> {
    with_vector(py, obj, what, name, len, DVector::from_column_slice)
}

/// `obj` checked as an output array for a result of `len` values: a writeable, contiguous
/// float64 ndarray of shape (`len`,) (`name` = `len` in messages).
///
/// # Errors
/// `TypeError` for anything but a float64 ndarray, `ValueError` for another shape, a read-only
/// or a non-contiguous array.
pub fn out_vector<'py>(
    obj: &Bound<'py, PyAny>,
    what: &str,
    name: &str,
    len: usize,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let Ok(a) = obj.cast::<PyArrayDyn<f64>>() else {
        return Err(type_error(format!(
            "{what} must be a numpy array of float64, found {}",
            describe(obj)
        )));
    };
    if a.shape() != [len] {
        return Err(value_error(format!(
            "{what} must have shape ({name}={len},), found {:?}",
            a.shape()
        )));
    }
    // SAFETY: `a` is a live ndarray (checked above), so its fields may be read.
    let flags = unsafe { (*_PyArray_GET_ITEM_DATA(a.as_array_ptr())).flags };
    if flags & NPY_ARRAY_WRITEABLE == 0 {
        return Err(value_error(format!("{what} is read-only")));
    }
    if len > 0 && !(a.is_contiguous() && a.is_aligned()) {
        return Err(value_error(format!(
            "{what} must be contiguous (a view with strides cannot receive the result)"
        )));
    }
    Ok(a.cast::<PyArray1<f64>>()?.clone())
}

/// `obj`'s type, and its dtype for an ndarray, for messages.
fn describe(obj: &Bound<'_, PyAny>) -> String {
    let class = obj
        .get_type()
        .name()
        .map_or_else(|_| "an object".to_string(), |n| n.to_string());
    match obj.getattr("dtype") {
        Ok(dtype) => format!("{class} of dtype {dtype}"),
        Err(_) => class,
    }
}

/// A new 1-D array of `len` values, filled by `fill` (which must write every value).
pub fn new_vector<'py>(
    py: Python<'py>,
    len: usize,
    fill: impl FnOnce(&mut [f64]),
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    // SAFETY: a new array, seen by nothing else; `fill` writes every value before it is
    // returned to Python.
    let a = unsafe { PyArray1::<f64>::new(py, len, false) };
    write_into(&a, fill)?;
    Ok(a)
}

/// `fill` writes the values of `a`, an array that [`out_vector`] checked or [`new_vector`] made.
pub fn write_into(a: &Bound<'_, PyArray1<f64>>, fill: impl FnOnce(&mut [f64])) -> PyResult<()> {
    // SAFETY: the GIL is held and no Python code runs until `fill` returns; `a` is contiguous
    // (checked by `out_vector`, or new) and no other view of it is alive in this module.
    let values = unsafe { a.as_slice_mut() }
        .map_err(|_| value_error("the output array must be contiguous"))?;
    fill(values);
    Ok(())
}

/// A zeroed buffer of `dims` (their product) values for a result, or `MemoryError` when the
/// product overflows or the allocation is refused (a horizon of 10¹² steps), instead of the
/// abort an infallible allocation would be.
pub fn zeros(dims: &[usize]) -> PyResult<Vec<f64>> {
    let too_large = || {
        PyMemoryError::new_err(format!(
            "a result of shape {dims:?} does not fit in memory (8 bytes per value)"
        ))
    };
    let n = dims
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .ok_or_else(too_large)?;
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| too_large())?;
    v.resize(n, 0.0);
    Ok(v)
}

/// A new 1-D array.
pub fn array1<'py>(py: Python<'py>, values: &[f64]) -> Bound<'py, PyArray1<f64>> {
    PyArray1::from_slice(py, values)
}

/// A new 2-D array of `m`.
pub fn array2<'py>(py: Python<'py>, m: &DMatrix<f64>) -> Bound<'py, PyArray2<f64>> {
    PyArray2::from_owned_array(py, Array2::from_shape_fn(m.shape(), |(i, j)| m[(i, j)]))
}

/// A new 2-D array from rows of equal length `cols`, concatenated.
pub fn rows2<'py>(
    py: Python<'py>,
    rows: usize,
    cols: usize,
    values: Vec<f64>,
) -> Bound<'py, PyArray2<f64>> {
    let a = Array2::from_shape_vec((rows, cols), values).expect("invariant: rows × cols values");
    PyArray2::from_owned_array(py, a)
}

/// A new 3-D array of shape `shape` from its values in C order.
pub fn array3<'py>(
    py: Python<'py>,
    shape: (usize, usize, usize),
    values: Vec<f64>,
) -> Bound<'py, PyArray3<f64>> {
    let a = Array3::from_shape_vec(shape, values).expect("invariant: values of the shape");
    PyArray3::from_owned_array(py, a)
}
