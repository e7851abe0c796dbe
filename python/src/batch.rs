//! `stiction.rollout(sim, X0, U)`: a batch of independent rollouts of one simulator, in
//! parallel over rayon's threads with the GIL released. Each worker steps its own copy of the
//! simulator (same model, geometry, excluded pairs, settings and parameters), and each rollout
//! runs the loop of `Simulator.rollout` ([`rollout_into`]): a step depends only on its state,
//! efforts and time, so the batch equals a serial loop bit for bit, whatever the thread count.

use numpy::PyArray3;
use pyo3::prelude::*;
use rayon::prelude::*;
use stiction::error::Error;
use stiction::optimize::ilqr::clone_simulator;

use crate::convert::{array3, checked, zeros, Dim};
use crate::errors::{to_py, to_py_at, value_error, Position};
use crate::rollout::{rollout_into, Controls, Failed};
use crate::simulator::PySimulator;

/// Rollouts of `sim` from each row of X0 (batch, nx) at the simulator's current time: with
/// efforts U (batch, horizon, nu), or, with U=None, `steps` steps under the problem's control
/// laws (default: the problem's duration). Returns X (batch, steps + 1, nx), X[i, 0] = X0[i].
/// `threads` sets the number of worker threads (default: rayon's, one per core).
///
/// Raises SolverError with `item` and `step` set for the first rollout that fails.
#[pyfunction]
#[pyo3(signature = (sim, X0, U=None, *, steps=None, threads=None))]
#[allow(non_snake_case)]
pub fn rollout<'py>(
    py: Python<'py>,
    sim: &Bound<'py, PySimulator>,
    X0: &Bound<'py, PyAny>,
    U: Option<&Bound<'py, PyAny>>,
    steps: Option<usize>,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyArray3<f64>>> {
    let sim = sim.borrow();
    let inner = sim.get(py)?;
    let (nx, nu) = (inner.nx(), inner.nu());
    let x0 = checked(py, X0, "X0", &[Dim("batch", None), Dim("nx", Some(nx))])?;
    let batch = x0.shape[0];
    let controls = match U {
        Some(u) if !u.is_none() => {
            if steps.is_some() {
                return Err(value_error("give either U or steps, not both"));
            }
            Some(checked(
                py,
                u,
                "U",
                &[
                    Dim("batch", Some(batch)),
                    Dim("horizon", None),
                    Dim("nu", Some(nu)),
                ],
            )?)
        }
        _ => None,
    };
    let problem = &inner.loaded.problem;
    let steps = match &controls {
        Some(c) => c.shape[1],
        None => match steps {
            Some(n) => n,
            None => stiction::simulate::recording_steps(
                &problem.simulator,
                "duration",
                problem.duration,
            )
            .map_err(|e| to_py(py, &e))?,
        },
    };
    if threads == Some(0) {
        return Err(value_error("threads must be at least 1"));
    }
    let t0 = inner.state.t;
    let mut out = zeros(&[batch, steps.saturating_add(1), nx])?;
    let row = (steps + 1) * nx;
    let run = |out: &mut [f64]| -> Result<(), (usize, Failed)> {
        out.par_chunks_mut(row.max(1))
            .enumerate()
            .map_init(
                || clone_simulator(&problem.simulator),
                |worker, (i, out)| {
                    let worker = worker.as_mut().map_err(|e| {
                        let error = Box::new(Error::invalid("simulator copy", "", &e.to_string()));
                        (i, Failed { step: 0, error })
                    })?;
                    let controls = match &controls {
                        Some(c) => Controls::Given(&c.values[i * steps * nu..(i + 1) * steps * nu]),
                        None => Controls::Laws,
                    };
                    rollout_into(
                        worker,
                        &problem.controller,
                        &x0.values[i * nx..(i + 1) * nx],
                        t0,
                        controls,
                        steps,
                        out,
                    )
                    .map_err(|f| (i, f))
                },
            )
            .collect::<Vec<_>>()
            .into_iter()
            .collect()
    };
    let result = py.detach(|| match threads {
        None => Ok(run(&mut out)),
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .map(|pool| pool.install(|| run(&mut out))),
    });
    let result =
        result.map_err(|e| value_error(format!("cannot start {threads:?} threads: {e}")))?;
    result.map_err(|(item, f)| {
        to_py_at(
            py,
            &f.error,
            Position {
                step: Some(f.step),
                item: Some(item),
            },
        )
    })?;
    Ok(array3(py, (batch, steps + 1, nx), out))
}
