//! The library's whole jobs from Python, each returning plain Python objects (dicts of numpy
//! arrays): `gradcheck` (`stiction gradcheck`), `optimize` (`stiction optimize`), `identify`
//! (`stiction identify`). Each runs without the GIL.

use std::path::{Path, PathBuf};

use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use stiction::contact::Approximation;
use stiction::derivatives::{gradient_check, GradientCheck, Parameter};
use stiction::identify::{identify as identify_file, load_identification, Method};
use stiction::nalgebra::DMatrix;
use stiction::optimize::optimize_file;

use crate::convert::{array1, array2, array3, rows2, vector};
use crate::errors::{value_error, IntoPyResult};
use crate::rollout::write_state;
use crate::simulator::PySimulator;

/// The parameters `stiction gradcheck` checks by default: friction, stiffness, the
/// dissipation of the approximation (relaxation time for SAP), and the modulus of every
/// compliant geometry.
fn default_parameters(sim: &stiction::step::Simulator) -> Vec<String> {
    let dissipation = if sim.settings.approximation == Approximation::Sap {
        "relaxation_time"
    } else {
        "dissipation"
    };
    let mut names = vec!["friction".into(), "stiffness".into(), dissipation.into()];
    names.extend(
        sim.geometries()
            .iter()
            .filter(|g| g.hydroelastic.and_then(|h| h.modulus()).is_some())
            .map(|g| format!("modulus@{}", g.name)),
    );
    names
}

fn agreement<'py>(
    py: Python<'py>,
    names: Vec<String>,
    fd: &[f64],
    direct: &[f64],
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("names", names)?;
    d.set_item("ift_vs_fd", array1(py, fd))?;
    d.set_item("ift_vs_direct", array1(py, direct))?;
    Ok(d)
}

/// The worst of two checks of the same step layout, element by element; times summed.
fn worst(a: GradientCheck, b: GradientCheck) -> GradientCheck {
    let mut out = a;
    for (x, y) in out.blocks.iter_mut().zip(b.blocks) {
        x.ift_vs_fd = x.ift_vs_fd.max(y.ift_vs_fd);
        x.ift_vs_direct = x.ift_vs_direct.max(y.ift_vs_direct);
    }
    for (x, y) in out.rows.iter_mut().zip(b.rows) {
        x.ift_vs_fd = x.ift_vs_fd.max(y.ift_vs_fd);
        x.ift_vs_direct = x.ift_vs_direct.max(y.ift_vs_direct);
    }
    for (x, y) in out.columns.iter_mut().zip(b.columns) {
        x.ift_vs_fd = x.ift_vs_fd.max(y.ift_vs_fd);
        x.ift_vs_direct = x.ift_vs_direct.max(y.ift_vs_direct);
    }
    out.ms_step += b.ms_step;
    out.ms_ift += b.ms_ift;
    out.ms_direct += b.ms_direct;
    out.ms_fd += b.ms_fd;
    out
}

/// The gradient check of `stiction gradcheck`: step Jacobians by the IFT against the direct
/// dual path and central finite differences, over `steps` steps from x (the current state if
/// None) with efforts u (the control laws if None), for the named `params` (default: friction,
/// stiffness, dissipation or relaxation_time, compliant moduli). Returns a dict:
///
/// - `blocks`: {name: {"ift_vs_fd", "ift_vs_direct"}} for `state`, `control`, each parameter,
///   the worst corrected relative error over the steps;
/// - `rows` and `columns`: {"names", "ift_vs_fd", "ift_vs_direct"} per output and per input;
/// - `ms_step`, `ms_ift`, `ms_direct`, `ms_fd`: mean milliseconds per step of each path.
///
/// Leaves the simulator's current state unchanged.
#[pyfunction]
#[pyo3(signature = (sim, x=None, u=None, params=None, steps=1))]
pub fn gradcheck<'py>(
    py: Python<'py>,
    sim: &Bound<'py, PySimulator>,
    x: Option<&Bound<'py, PyAny>>,
    u: Option<&Bound<'py, PyAny>>,
    params: Option<Vec<String>>,
    steps: usize,
) -> PyResult<Bound<'py, PyDict>> {
    if steps == 0 {
        return Err(value_error("steps must be at least 1"));
    }
    let mut sim = sim.borrow_mut();
    let inner = sim.get_mut(py)?;
    let mut state = match x {
        Some(x) if !x.is_none() => inner.state_arg(py, x, "x")?,
        _ => inner.state.clone(),
    };
    let fixed_u = match u {
        Some(u) if !u.is_none() => Some(vector(py, u, "u", "nu", inner.nu())?),
        _ => None,
    };
    let problem = &mut inner.loaded.problem;
    let names = params.unwrap_or_else(|| default_parameters(&problem.simulator));
    let params = names
        .iter()
        .map(|n| Parameter::parse(&problem.simulator, n))
        .collect::<Result<Vec<_>, _>>()
        .py_err(py)?;
    let check = py
        .detach(|| {
            let mut total: Option<GradientCheck> = None;
            for _ in 0..steps {
                let nu = problem.simulator.model.nu();
                let u = fixed_u
                    .clone()
                    .unwrap_or_else(|| problem.controller.effort(&state, nu));
                let check = gradient_check(&mut problem.simulator, &state, &u, &params)?;
                total = Some(match total {
                    None => check,
                    Some(t) => worst(t, check),
                });
                state = problem.simulator.step(&state, &u)?.0;
            }
            Ok(total.expect("invariant: at least one step"))
        })
        .py_err(py)?;
    let d = PyDict::new(py);
    let blocks = PyDict::new(py);
    for b in &check.blocks {
        let e = PyDict::new(py);
        e.set_item("ift_vs_fd", b.ift_vs_fd)?;
        e.set_item("ift_vs_direct", b.ift_vs_direct)?;
        blocks.set_item(&b.name, e)?;
    }
    d.set_item("blocks", blocks)?;
    for (key, list) in [("rows", &check.rows), ("columns", &check.columns)] {
        let names = list.iter().map(|a| a.name.clone()).collect();
        let fd: Vec<f64> = list.iter().map(|a| a.ift_vs_fd).collect();
        let direct: Vec<f64> = list.iter().map(|a| a.ift_vs_direct).collect();
        d.set_item(key, agreement(py, names, &fd, &direct)?)?;
    }
    let n = steps as f64;
    d.set_item("ms_step", check.ms_step / n)?;
    d.set_item("ms_ift", check.ms_ift / n)?;
    d.set_item("ms_direct", check.ms_direct / n)?;
    d.set_item("ms_fd", check.ms_fd / n)?;
    d.set_item("steps", steps)?;
    Ok(d)
}

/// Solves the trajectory optimization task of the problem file `path` (its `[optimize]`
/// table) with contact-implicit iLQR, as `stiction optimize` does; `max_iterations` replaces
/// the file's iteration limit. Returns a dict:
///
/// - `times` (T+1,) s, `states` (T+1, nx) = [q, v], `controls` (T, nu), `gains` (T, nu, 2nv);
/// - `cost`, `initial_cost`, `status` (`converged-cost`, `converged-gradient`,
///   `max-iterations`, `no-further-decrease`), `wall_s`;
/// - `iterations`: {"cost", "alpha", "mu", "gradient_norm", "expected_change", "accepted"}
///   arrays, one entry per iLQR iteration;
/// - `task_errors` (one distance per check of the file, m), `task_error` (the largest),
///   `achieved` (every check within its tolerance).
#[pyfunction]
#[pyo3(signature = (path, *, max_iterations=None))]
pub fn optimize<'py>(
    py: Python<'py>,
    path: PathBuf,
    max_iterations: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    if max_iterations == Some(0) {
        return Err(value_error("max_iterations must be at least 1"));
    }
    let run = py
        .detach(|| {
            optimize_file(&path, |o| {
                if let Some(n) = max_iterations {
                    o.params.max_iterations = n;
                }
            })
        })
        .py_err(py)?;
    let trajectory = &run.report.trajectory;
    let nx = run.problem.simulator.model.nq() + run.problem.simulator.model.nv();
    let nu = run.problem.simulator.model.nu();
    let steps = trajectory.controls.len();
    let mut states = vec![0.0; trajectory.states.len() * nx];
    for (s, out) in trajectory.states.iter().zip(states.chunks_mut(nx.max(1))) {
        write_state(s, out);
    }
    let times: Vec<f64> = trajectory.states.iter().map(|s| s.t).collect();
    let controls: Vec<f64> = trajectory
        .controls
        .iter()
        .flat_map(|u| u.iter().copied())
        .collect();
    let ndx = 2 * run.problem.simulator.model.nv();
    let gains: Vec<f64> = run
        .report
        .gains
        .iter()
        .flat_map(|k: &DMatrix<f64>| {
            (0..k.nrows()).flat_map(move |i| (0..k.ncols()).map(move |j| k[(i, j)]))
        })
        .collect();
    let d = PyDict::new(py);
    d.set_item("times", array1(py, &times))?;
    d.set_item("states", rows2(py, trajectory.states.len(), nx, states))?;
    d.set_item("controls", rows2(py, steps, nu, controls))?;
    d.set_item(
        "gains",
        array3(py, (run.report.gains.len(), nu, ndx), gains),
    )?;
    d.set_item("cost", trajectory.cost)?;
    d.set_item("initial_cost", run.report.initial_cost)?;
    d.set_item("status", run.report.status.name())?;
    d.set_item("wall_s", run.report.wall_s)?;
    let it = &run.report.iterations;
    let iterations = PyDict::new(py);
    let column = |f: &dyn Fn(&stiction::optimize::ilqr::IterationStats) -> f64| {
        array1(py, &it.iter().map(f).collect::<Vec<_>>())
    };
    iterations.set_item("cost", column(&|s| s.cost))?;
    iterations.set_item("alpha", column(&|s| s.alpha))?;
    iterations.set_item("mu", column(&|s| s.mu))?;
    iterations.set_item("gradient_norm", column(&|s| s.gradient_norm))?;
    iterations.set_item("expected_change", column(&|s| s.expected_change))?;
    iterations.set_item(
        "accepted",
        PyArray1::from_vec(py, it.iter().map(|s| s.accepted).collect()),
    )?;
    d.set_item("iterations", iterations)?;
    d.set_item("task_errors", array1(py, &run.outcome.errors))?;
    d.set_item("task_error", run.outcome.error)?;
    d.set_item("achieved", run.outcome.achieved)?;
    Ok(d)
}

/// Estimates the parameters of the identification problem file `path` from its measured
/// trajectories (or the CSVs `data`, as `stiction identify --data`), as `stiction identify`
/// does. `method` is `levenberg-marquardt` or `lbfgs` (the file's if None); `initial` maps
/// parameter names to starting values (a multi-start); `max_iterations` replaces the
/// optimizer's limit. Returns a dict:
///
/// - `problem`, `method`, `status` (`converged`, `stalled`, `max-iterations`, `failed`),
///   `iterations`, `wall_s`, `cost`;
/// - `names` (np), `initial`, `estimate` (NaN where not identifiable), `final` (the last
///   iterate), `std_dev` (NaN where unknown), `identifiable` (bool), each (np,);
///   `ci95` (np, 2, NaN at an open end); `covariance` (np, np) in the optimizer's coordinates;
/// - `history`: {"iteration", "horizon", "cost", "gradient_norm", "damping"} (n,) and
///   `values` (n, np);
/// - `fits`: one dict per trajectory: `source`, `columns`, `times` (ns,), `measured` and
///   `simulated` (ns, nc), `cost`, `rms` (nc,).
#[pyfunction]
#[pyo3(signature = (path, *, data=None, method=None, initial=None, max_iterations=None))]
pub fn identify<'py>(
    py: Python<'py>,
    path: PathBuf,
    data: Option<Vec<PathBuf>>,
    method: Option<String>,
    initial: Option<Bound<'py, PyDict>>,
    max_iterations: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let method = match method.as_deref() {
        None => None,
        Some("levenberg-marquardt") => Some(Method::LevenbergMarquardt),
        Some("lbfgs") => Some(Method::Lbfgs),
        Some(other) => {
            return Err(value_error(format!(
                "method must be `levenberg-marquardt` or `lbfgs`, found `{other}`"
            )))
        }
    };
    let starts: Vec<(String, f64)> = match &initial {
        None => Vec::new(),
        Some(d) => d
            .iter()
            .map(|(k, v)| Ok((k.extract::<String>()?, v.extract::<f64>()?)))
            .collect::<PyResult<_>>()?,
    };
    let mut file = py
        .detach(|| load_identification(Path::new(&path), data.as_deref()))
        .py_err(py)?;
    let known: Vec<String> = file
        .problem
        .parameters
        .iter()
        .map(|p| p.name.clone())
        .collect();
    for (name, value) in &starts {
        let spec = file
            .problem
            .parameters
            .iter_mut()
            .find(|p| &p.name == name)
            .ok_or_else(|| {
                value_error(format!(
                    "initial: `{name}` is not a parameter of {} (its parameters: {})",
                    path.display(),
                    known.join(", ")
                ))
            })?;
        spec.transform.to_coordinate(name, *value).py_err(py)?;
        spec.initial = *value;
    }
    let mut settings = file.settings;
    if let Some(m) = method {
        settings.method = m;
    }
    if let Some(n) = max_iterations {
        settings.lm.max_iterations = n;
        settings.lbfgs.max_iterations = n as u64;
    }
    let problem = &file.problem;
    let report = py.detach(|| identify_file(problem, &settings)).py_err(py)?;
    let d = PyDict::new(py);
    d.set_item("problem", &report.problem)?;
    d.set_item("method", report.method.name())?;
    d.set_item("status", report.status.name())?;
    d.set_item("iterations", report.iterations)?;
    d.set_item("wall_s", report.wall_s)?;
    d.set_item("cost", report.cost)?;
    let e = &report.estimates;
    let np = e.len();
    d.set_item(
        "names",
        e.iter().map(|x| x.name.clone()).collect::<Vec<_>>(),
    )?;
    let col = |f: &dyn Fn(&stiction::identify::report::Estimate) -> f64| {
        array1(py, &e.iter().map(f).collect::<Vec<_>>())
    };
    d.set_item("initial", col(&|x| x.initial))?;
    d.set_item("estimate", col(&|x| x.estimate.unwrap_or(f64::NAN)))?;
    d.set_item("final", col(&|x| x.final_value))?;
    d.set_item("std_dev", col(&|x| x.std_dev.unwrap_or(f64::NAN)))?;
    d.set_item(
        "identifiable",
        PyArray1::from_vec(py, e.iter().map(|x| x.identifiable).collect()),
    )?;
    let ci: Vec<f64> = e
        .iter()
        .flat_map(|x| [x.ci95.0.unwrap_or(f64::NAN), x.ci95.1.unwrap_or(f64::NAN)])
        .collect();
    d.set_item("ci95", rows2(py, np, 2, ci))?;
    d.set_item("covariance", array2(py, &report.covariance.matrix))?;
    let h = &report.history;
    let history = PyDict::new(py);
    let hcol = |values: Vec<f64>| array1(py, &values);
    history.set_item(
        "iteration",
        hcol(h.iter().map(|x| x.iteration as f64).collect()),
    )?;
    history.set_item(
        "horizon",
        hcol(h.iter().map(|x| x.horizon as f64).collect()),
    )?;
    history.set_item("cost", hcol(h.iter().map(|x| x.cost).collect()))?;
    history.set_item(
        "gradient_norm",
        hcol(h.iter().map(|x| x.gradient_norm).collect()),
    )?;
    history.set_item("damping", hcol(h.iter().map(|x| x.damping).collect()))?;
    let values: Vec<f64> = h.iter().flat_map(|x| problem.values(&x.s)).collect();
    history.set_item("values", rows2(py, h.len(), np, values))?;
    d.set_item("history", history)?;
    let fits = PyList::empty(py);
    for fit in &report.fits {
        let f = PyDict::new(py);
        f.set_item("source", fit.source.display().to_string())?;
        f.set_item("columns", fit.columns.clone())?;
        f.set_item("times", array1(py, &fit.times))?;
        f.set_item("measured", array2(py, &fit.measured))?;
        f.set_item("simulated", array2(py, &fit.simulated))?;
        f.set_item("cost", fit.cost)?;
        f.set_item("rms", array1(py, &fit.rms))?;
        fits.append(f)?;
    }
    d.set_item("fits", fits)?;
    Ok(d)
}
