//! `stiction.Simulator`: a loaded problem with a current state, stepped from Python.
//!
//! The state vector is `x = [q, v]` (nx = nq + nv): generalized positions (a free body's
//! position then unit quaternion w, x, y, z) and velocities (a free body's angular velocity
//! then linear velocity). Like MuJoCo's `mjData`, the simulator keeps a current state and time:
//! `step` takes `x` at the simulator's time, advances the time and makes the result current;
//! `rollout` and `step_jacobians` leave both unchanged.

use numpy::{PyArray1, PyArray2, PyArray3};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use stiction::derivatives::{step_jacobians, Parameter};
use stiction::nalgebra::DVector;
use stiction::report::{body_names, body_states as report_body_states};
use stiction::simulate::Recording;
use stiction::solver::SolverStats;
use stiction::step::{State, StepReport};

use crate::convert::{
    array1, array2, array3, checked, new_vector, out_vector, rows2, vector, with_vector,
    write_into, zeros, Dim,
};
use crate::errors::{to_py_at, value_error, IntoPyResult, Position};
use crate::load::{load, Loaded, Overrides};
use crate::rollout::{rollout_into, state_of, write_state, Controls};

/// A loaded simulator, its current state and the report of its last step.
#[derive(Debug)]
pub struct Inner {
    /// The problem: simulator, controller, initial state, duration.
    pub loaded: Loaded,
    /// The current state.
    pub state: State,
    /// The report of the last `step`.
    pub last: Option<StepReport>,
    /// The parameters set with `set_parameter`, in order (replayed when unpickled).
    pub changed: Vec<(String, f64)>,
    /// The argument x of `step`, copied here: a buffer reused by every call.
    input: State,
    /// The efforts u given to `step` (nu), copied here: a buffer reused by every call.
    effort: DVector<f64>,
}

impl Inner {
    /// A simulator at the problem's initial state.
    fn new(loaded: Loaded) -> Self {
        let state = loaded.problem.initial_state.clone();
        let nu = loaded.problem.simulator.model.nu();
        Inner {
            input: state.clone(),
            effort: DVector::zeros(nu),
            loaded,
            state,
            last: None,
            changed: Vec::new(),
        }
    }

    /// nq.
    pub fn nq(&self) -> usize {
        self.loaded.problem.simulator.model.nq()
    }
    /// nv.
    pub fn nv(&self) -> usize {
        self.loaded.problem.simulator.model.nv()
    }
    /// nu.
    pub fn nu(&self) -> usize {
        self.loaded.problem.simulator.model.nu()
    }
    /// nx = nq + nv.
    pub fn nx(&self) -> usize {
        self.nq() + self.nv()
    }

    /// `x` checked (shape (nx,), finite) as a state at the current time.
    pub fn state_arg(&self, py: Python<'_>, x: &Bound<'_, PyAny>, what: &str) -> PyResult<State> {
        let (nq, t) = (self.nq(), self.state.t);
        with_vector(py, x, what, "nx", self.nx(), |x| state_of(x, nq, t))
    }

    /// `u` checked (shape (nu,), finite), or the control laws' efforts at `state`.
    pub fn effort_arg(
        &self,
        py: Python<'_>,
        u: Option<&Bound<'_, PyAny>>,
        state: &State,
    ) -> PyResult<DVector<f64>> {
        match u {
            Some(u) if !u.is_none() => vector(py, u, "u", "nu", self.nu()),
            _ => Ok(self.loaded.problem.controller.effort(state, self.nu())),
        }
    }
}

/// `[q, v]` of `state` as a new array (nx,).
fn x_array<'py>(py: Python<'py>, state: &State) -> PyResult<Bound<'py, PyArray1<f64>>> {
    new_vector(py, state.q.len() + state.v.len(), |x| write_state(state, x))
}

/// A simulator loaded from a problem file or a robot model (see `stiction.load`).
#[pyclass(module = "stiction._stiction", name = "Simulator")]
pub struct PySimulator {
    /// `None` once closed.
    pub inner: Option<Inner>,
    /// The file it was loaded from.
    pub path: String,
    /// The overrides it was loaded with (keyword arguments of `load`).
    pub overrides: Py<PyDict>,
}

impl PySimulator {
    /// Loads `path` with the keyword arguments `overrides`.
    pub fn open(
        py: Python<'_>,
        path: String,
        overrides: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let parsed = Overrides::from_kwargs(py, overrides)?;
        let loaded = py
            .detach(|| load(std::path::Path::new(&path), &parsed))
            .py_err(py)?;
        let kwargs = match overrides {
            Some(d) => d.copy()?,
            None => PyDict::new(py),
        };
        Ok(PySimulator {
            inner: Some(Inner::new(loaded)),
            path,
            overrides: kwargs.unbind(),
        })
    }

    /// The open simulator.
    pub fn get(&self, py: Python<'_>) -> PyResult<&Inner> {
        self.inner.as_ref().ok_or_else(|| closed(py))
    }

    /// The open simulator, mutably.
    pub fn get_mut(&mut self, py: Python<'_>) -> PyResult<&mut Inner> {
        self.inner.as_mut().ok_or_else(|| closed(py))
    }
}

fn closed(py: Python<'_>) -> PyErr {
    match py
        .import("stiction._errors")
        .and_then(|m| m.getattr("ClosedError"))
        .and_then(|c| c.call1(("this Simulator is closed",)))
    {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

#[pymethods]
impl PySimulator {
    /// Number of generalized positions nq.
    #[getter]
    fn nq(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.get(py)?.nq())
    }

    /// Number of generalized velocities nv (the tangent-space size of q).
    #[getter]
    fn nv(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.get(py)?.nv())
    }

    /// Number of actuators nu.
    #[getter]
    fn nu(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.get(py)?.nu())
    }

    /// Size of the state vector x = [q, v]: nx = nq + nv.
    #[getter]
    fn nx(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.get(py)?.nx())
    }

    /// Time step δt (s).
    #[getter]
    fn dt(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(self.get(py)?.loaded.problem.simulator.settings.dt)
    }

    /// The current time t (s) of the current state.
    #[getter]
    fn time(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(self.get(py)?.state.t)
    }

    /// The problem's simulated duration (s): `stiction simulate` runs round(duration / dt) steps.
    #[getter]
    fn duration(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(self.get(py)?.loaded.problem.duration)
    }

    /// The number of steps `stiction simulate` runs: round(duration / dt).
    #[getter]
    fn num_steps(&self, py: Python<'_>) -> PyResult<usize> {
        let p = &self.get(py)?.loaded.problem;
        stiction::simulate::recording_steps(&p.simulator, "duration", p.duration)
            .map_err(|e| crate::errors::to_py(py, &e))
    }

    /// The problem's name (the file's stem).
    #[getter]
    fn name(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.get(py)?.loaded.problem.name.clone())
    }

    /// The file this simulator was loaded from.
    #[getter]
    fn path(&self) -> String {
        self.path.clone()
    }

    /// The keyword arguments it was loaded with (a copy).
    #[getter]
    fn overrides<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.overrides.bind(py).copy()
    }

    /// The names of the bodies of the multibody tree, in the order of their joints in q and v.
    #[getter]
    fn body_names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let model = &self.get(py)?.loaded.problem.simulator.model;
        Ok(model.bodies.iter().map(|b| b.name.clone()).collect())
    }

    /// One name per joint, in the order of `body_names` (joint i moves body i); a joint without
    /// a name of its own (every joint of a problem file) is known by its body's name.
    #[getter]
    fn joint_names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        Ok(self.get(py)?.loaded.joint_names.clone())
    }

    /// The names of the collision geometries, in the order of `contacts()["geometries"]`.
    #[getter]
    fn geometry_names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let sim = &self.get(py)?.loaded.problem.simulator;
        Ok(sim.geometries().iter().map(|g| g.name.clone()).collect())
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner.is_none()
    }

    /// The current state x = [q, v] (nx,), a copy.
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        x_array(py, &self.get(py)?.state)
    }

    /// Makes x (nx,) the current state, at time t (s; the current time if None).
    #[pyo3(signature = (x, t=None))]
    fn set_state(&mut self, py: Python<'_>, x: &Bound<'_, PyAny>, t: Option<f64>) -> PyResult<()> {
        let inner = self.get_mut(py)?;
        let mut state = inner.state_arg(py, x, "x")?;
        if let Some(t) = t {
            if !t.is_finite() {
                return Err(value_error(format!(
                    "t is {t}: the time must be finite (s)"
                )));
            }
            state.t = t;
        }
        inner.state = state;
        Ok(())
    }

    /// The problem's initial state x0 = [q0, v0] (nx,), at t = 0.
    fn initial_state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        x_array(py, &self.get(py)?.loaded.problem.initial_state)
    }

    /// Makes the initial state current again, at t = 0, and forgets the last step.
    fn reset(&mut self, py: Python<'_>) -> PyResult<()> {
        let inner = self.get_mut(py)?;
        inner.state = inner.loaded.problem.initial_state.clone();
        inner.last = None;
        Ok(())
    }

    /// One step from x (nx,) at the current time with efforts u (nu,); u=None applies the
    /// problem's control laws (zero for actuators without one), as `stiction simulate` does.
    /// Returns x_next (nx,), which becomes the current state one δt later: a new array, or
    /// `out` (a writeable, contiguous float64 array of shape (nx,), which may be x itself)
    /// filled with it. On error nothing changes: neither the current state nor `out`.
    ///
    /// A contiguous float64 x is read in place; x and u are copied into buffers the simulator
    /// keeps, so that a call allocates nothing but the returned array (none with `out`) and
    /// what the step itself allocates. The GIL stays held: releasing and taking it again would
    /// cost more than other Python threads gain during one step (docs/python.md, Speed).
    #[pyo3(signature = (x, u=None, *, out=None))]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        u: Option<&Bound<'py, PyAny>>,
        out: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let inner = self.get_mut(py)?;
        let (nq, nx, nu) = (inner.nq(), inner.nx(), inner.nu());
        let out = match out {
            Some(o) if !o.is_none() => Some(out_vector(o, "out", "nx", nx)?),
            _ => None,
        };
        let Inner {
            loaded,
            state,
            last,
            input,
            effort,
            ..
        } = inner;
        with_vector(py, x, "x", "nx", nx, |x| {
            input.q.as_mut_slice().copy_from_slice(&x[..nq]);
            input.v.as_mut_slice().copy_from_slice(&x[nq..]);
        })?;
        input.t = state.t;
        let laws;
        let u = match u {
            Some(u) if !u.is_none() => {
                with_vector(py, u, "u", "nu", nu, |u| {
                    effort.as_mut_slice().copy_from_slice(u)
                })?;
                &*effort
            }
            _ => {
                laws = loaded.problem.controller.effort(input, nu);
                &laws
            }
        };
        let (next, report) = loaded
            .problem
            .simulator
            .step(input, u)
            .map_err(|e| to_py_at(py, &e, Position::default()))?;
        let x_next = match out {
            Some(out) => {
                write_into(&out, |x| write_state(&next, x))?;
                out
            }
            None => x_array(py, &next)?,
        };
        *state = next;
        *last = Some(report);
        Ok(x_next)
    }

    /// Jacobians of one step from x at the current time with efforts u (control laws if None)
    /// by the implicit function theorem, in the tangent space: returns (A, B, dparams) with
    ///
    /// - A = ∂x'/∂x (2nv × 2nv): rows [δq', δv'], columns [δq, δv];
    /// - B = ∂x'/∂u (2nv × nu);
    /// - dparams = ∂x'/∂θ (2nv × len(params)), one column per named parameter.
    ///
    /// Positions are perturbed on the manifold: q ⊕ δq = `retract(q, δq)` (δq has nv
    /// coordinates, a free body's rotation as a rotation vector), and δq' = `difference(q', q'₀)`.
    /// Parameters are named as in `stiction gradcheck --params`: `friction`, `stiffness`,
    /// `dissipation`, `relaxation_time`, `stiction_tolerance` (scene default) or `NAME@GEOMETRY`,
    /// `mass@BODY`, `inertia.x@BODY`, `radius@GEOMETRY`, `modulus@GEOMETRY`, ….
    /// `out` (a writeable, contiguous float64 array of shape (nx,)) receives x', the step the
    /// Jacobians are taken along (what `step(x, u)` returns), so that a rollout with its
    /// derivatives takes one call per step. Leaves the current state unchanged.
    #[pyo3(signature = (x, u=None, params=Vec::new(), *, out=None))]
    fn step_jacobians<'py>(
        &mut self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        u: Option<&Bound<'py, PyAny>>,
        params: Vec<String>,
        out: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let inner = self.get_mut(py)?;
        let out = match out {
            Some(o) if !o.is_none() => Some(out_vector(o, "out", "nx", inner.nx())?),
            _ => None,
        };
        let state = inner.state_arg(py, x, "x")?;
        let u = inner.effort_arg(py, u, &state)?;
        let sim = &mut inner.loaded.problem.simulator;
        let params = params
            .iter()
            .map(|n| Parameter::parse(sim, n))
            .collect::<Result<Vec<_>, _>>()
            .py_err(py)?;
        let j = step_jacobians(sim, &state, &u, &params).py_err(py)?;
        if let Some(out) = out {
            write_into(&out, |x| write_state(&j.next, x))?;
        }
        PyTuple::new(
            py,
            [
                array2(py, &j.state),
                array2(py, &j.control),
                array2(py, &j.parameters),
            ],
        )
    }

    /// The retraction q ⊕ δq (nq,) of positions q (nq,) by a tangent vector δq (nv,).
    fn retract<'py>(
        &self,
        py: Python<'py>,
        q: &Bound<'py, PyAny>,
        dq: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let inner = self.get(py)?;
        let q = vector(py, q, "q", "nq", inner.nq())?;
        let dq = vector(py, dq, "dq", "nv", inner.nv())?;
        let out = inner.loaded.problem.simulator.model.retract(&q, &dq);
        Ok(array1(py, out.as_slice()))
    }

    /// The tangent difference q1 ⊖ q0 (nv,), the inverse of `retract`.
    fn difference<'py>(
        &self,
        py: Python<'py>,
        q1: &Bound<'py, PyAny>,
        q0: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let inner = self.get(py)?;
        let q1 = vector(py, q1, "q1", "nq", inner.nq())?;
        let q0 = vector(py, q0, "q0", "nq", inner.nq())?;
        let out = inner.loaded.problem.simulator.model.difference(&q1, &q0);
        Ok(array1(py, out.as_slice()))
    }

    /// A rollout from x0 (nx,) at the current time: with efforts U (horizon, nu), or, with
    /// U=None, `steps` steps under the problem's control laws (default: the problem's
    /// duration, as `stiction simulate`). Returns X (steps + 1, nx) with X[0] = x0 and X[k+1]
    /// the state after step k. Runs without the GIL; leaves the current state unchanged.
    ///
    /// Raises SolverError with `step` set if a step fails.
    #[pyo3(signature = (x0, U=None, *, steps=None))]
    #[allow(non_snake_case)]
    fn rollout<'py>(
        &mut self,
        py: Python<'py>,
        x0: &Bound<'py, PyAny>,
        U: Option<&Bound<'py, PyAny>>,
        steps: Option<usize>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let inner = self.get_mut(py)?;
        let (nx, nu) = (inner.nx(), inner.nu());
        let x0 = vector(py, x0, "x0", "nx", nx)?;
        let controls = match U {
            Some(u) if !u.is_none() => {
                if steps.is_some() {
                    return Err(value_error("give either U or steps, not both"));
                }
                Some(checked(
                    py,
                    u,
                    "U",
                    &[Dim("horizon", None), Dim("nu", Some(nu))],
                )?)
            }
            _ => None,
        };
        let steps = match &controls {
            Some(c) => c.shape[0],
            None => match steps {
                Some(n) => n,
                None => {
                    let p = &inner.loaded.problem;
                    stiction::simulate::recording_steps(&p.simulator, "duration", p.duration)
                        .map_err(|e| crate::errors::to_py(py, &e))?
                }
            },
        };
        let t0 = inner.state.t;
        let mut out = zeros(&[steps.saturating_add(1), nx])?;
        let problem = &mut inner.loaded.problem;
        let result = py.detach(|| {
            let controls = match &controls {
                Some(c) => Controls::Given(&c.values),
                None => Controls::Laws,
            };
            rollout_into(
                &mut problem.simulator,
                &problem.controller,
                x0.as_slice(),
                t0,
                controls,
                steps,
                &mut out,
            )
        });
        result.map_err(|f| {
            to_py_at(
                py,
                &f.error,
                Position {
                    step: Some(f.step),
                    item: None,
                },
            )
        })?;
        Ok(rows2(py, steps + 1, nx, out))
    }

    /// Names of the bodies of `body_states`: the tree bodies (`body_names`), then the bodies
    /// with prescribed motion.
    #[getter]
    fn body_state_names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let model = &self.get(py)?.loaded.problem.simulator.model;
        Ok(body_names(model).into_iter().map(String::from).collect())
    }

    /// World-frame pose and velocity of every body (`body_state_names`) along a trajectory X
    /// (n, nx) whose first row is at time t0 (default: the current time) and each following
    /// row one δt later: an array (n, nbodies, 13) with the columns px, py, pz (m), qw, qx, qy,
    /// qz (orientation, sign kept continuous along the rows), vx, vy, vz (velocity of the body
    /// origin, m/s), wx, wy, wz (angular velocity, rad/s): the columns of the trajectory.csv
    /// that `stiction simulate` writes, computed by the same code.
    #[pyo3(signature = (X, t0=None))]
    #[allow(non_snake_case)]
    fn body_states<'py>(
        &self,
        py: Python<'py>,
        X: &Bound<'py, PyAny>,
        t0: Option<f64>,
    ) -> PyResult<Bound<'py, PyArray3<f64>>> {
        let inner = self.get(py)?;
        let (nq, nx) = (inner.nq(), inner.nx());
        let x = checked(py, X, "X", &[Dim("n", None), Dim("nx", Some(nx))])?;
        let n = x.shape[0];
        let model = &inner.loaded.problem.simulator.model;
        let dt = inner.loaded.problem.simulator.settings.dt;
        let mut t = t0.unwrap_or(inner.state.t);
        let mut recording = Recording::default();
        for row in x.values.chunks(nx.max(1)).take(n) {
            recording.states.push(state_of(row, nq, t));
            // The times a rollout reaches, summed step by step as `Simulator::step` does.
            t += dt;
        }
        let states = report_body_states(&recording, model);
        let nb = body_names(model).len();
        let values: Vec<f64> = states
            .iter()
            .flat_map(|row| {
                row.iter().flat_map(|b| {
                    let q = b.q_WB.into_inner();
                    [
                        b.p_WB.x, b.p_WB.y, b.p_WB.z, q.w, q.i, q.j, q.k, b.v_WB.x, b.v_WB.y,
                        b.v_WB.z, b.w_WB.x, b.w_WB.y, b.w_WB.z,
                    ]
                })
            })
            .collect();
        Ok(array3(py, (n, nb, 13), values))
    }

    /// The value of a named parameter (see `step_jacobians` for the names).
    fn parameter(&self, py: Python<'_>, name: &str) -> PyResult<f64> {
        let sim = &self.get(py)?.loaded.problem.simulator;
        let p = Parameter::parse(sim, name).py_err(py)?;
        Ok(p.value(sim))
    }

    /// Sets a named parameter (see `step_jacobians` for the names) to a finite value.
    fn set_parameter(&mut self, py: Python<'_>, name: &str, value: f64) -> PyResult<()> {
        if !value.is_finite() {
            return Err(value_error(format!(
                "{name} = {value}: parameters must be finite"
            )));
        }
        let inner = self.get_mut(py)?;
        let sim = &mut inner.loaded.problem.simulator;
        let p = Parameter::parse(sim, name).py_err(py)?;
        let before = p.value(sim);
        p.set(sim, value).py_err(py)?;
        // The scene's default contact parameters are checked with the settings (μ ≥ 0, k > 0,
        // …); a geometry's own are checked by `set`.
        if let Err(e) = sim.settings.validate() {
            p.set(sim, before).py_err(py)?;
            return Err(crate::errors::to_py(py, &e));
        }
        inner.changed.push((name.to_string(), value));
        Ok(())
    }

    /// The contacts of the last `step` (empty arrays before the first), as a dict of arrays
    /// over its nc contacts and np pressure-field patches; world frame, forces on body B:
    ///
    /// - `points` (nc, 3) m, `normals` (nc, 3) from A to B, `forces` (nc, 3) N,
    ///   `impulses` (nc, 3) N·s in the contact frame (z normal);
    /// - `normal_forces`, `tangential_forces` (N), `slips` (m/s), `normal_velocities` (m/s,
    ///   > 0 separating), `penetrations` (m), `stiction_tolerances` (m/s), each (nc,);
    /// - `bodies` (list of nc (A, B) name pairs), `geometries` (nc, 2) indices into
    ///   `geometry_names`;
    /// - `patches`: a dict with `bodies`, `geometries` (np, 2), `areas` (np,) m², `centroids`,
    ///   `forces` (N), `moments` (N·m, about the centroid) (np, 3), `polygons` (np,),
    ///   `mean_pressures`, `max_pressures` (np,) Pa;
    /// - `solver`: the step's solver statistics (iterations, line_search_iterations,
    ///   residual, tolerance, contacts, cost, criterion, condition).
    fn contacts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let inner = self.get(py)?;
        let model = &inner.loaded.problem.simulator.model;
        // Before the first step: no contacts, no patches, default statistics.
        let (c, p, stats) = match &inner.last {
            Some(r) => (&r.contacts[..], &r.patches[..], r.stats.clone()),
            None => (&[][..], &[][..], SolverStats::default()),
        };
        let nc = c.len();
        let v3 = |f: &dyn Fn(usize) -> [f64; 3], n: usize| {
            let values: Vec<f64> = (0..n).flat_map(f).collect();
            rows2(py, n, 3, values)
        };
        let s = |f: &dyn Fn(usize) -> f64, n: usize| {
            let values: Vec<f64> = (0..n).map(f).collect();
            array1(py, &values)
        };
        let pairs = |f: &dyn Fn(usize) -> (usize, usize), n: usize| {
            let values: Vec<i64> = (0..n)
                .flat_map(|i| {
                    let (a, b) = f(i);
                    [a as i64, b as i64]
                })
                .collect();
            let a = numpy::ndarray::Array2::from_shape_vec((n, 2), values)
                .expect("invariant: n × 2 values");
            numpy::PyArray2::from_owned_array(py, a)
        };
        let d = PyDict::new(py);
        d.set_item("points", v3(&|i| c[i].point.into(), nc))?;
        d.set_item("normals", v3(&|i| c[i].normal.into(), nc))?;
        d.set_item("forces", v3(&|i| c[i].force.into(), nc))?;
        d.set_item("impulses", v3(&|i| c[i].impulse.into(), nc))?;
        d.set_item("normal_forces", s(&|i| c[i].normal_force, nc))?;
        d.set_item("tangential_forces", s(&|i| c[i].tangential_force, nc))?;
        d.set_item("slips", s(&|i| c[i].slip, nc))?;
        d.set_item("normal_velocities", s(&|i| c[i].normal_velocity, nc))?;
        d.set_item("penetrations", s(&|i| c[i].penetration, nc))?;
        d.set_item("stiction_tolerances", s(&|i| c[i].stiction_tolerance, nc))?;
        let bodies: Vec<(String, String)> = c
            .iter()
            .map(|r| {
                (
                    model.name_of(r.body_a).to_string(),
                    model.name_of(r.body_b).to_string(),
                )
            })
            .collect();
        d.set_item("bodies", bodies)?;
        d.set_item("geometries", pairs(&|i| c[i].geometries, nc))?;
        let np = p.len();
        let patches = PyDict::new(py);
        let bodies: Vec<(String, String)> = p
            .iter()
            .map(|r| {
                (
                    model.name_of(r.body_a).to_string(),
                    model.name_of(r.body_b).to_string(),
                )
            })
            .collect();
        patches.set_item("bodies", bodies)?;
        patches.set_item("geometries", pairs(&|i| p[i].geometries, np))?;
        patches.set_item("areas", s(&|i| p[i].area, np))?;
        patches.set_item("centroids", v3(&|i| p[i].centroid.into(), np))?;
        patches.set_item("forces", v3(&|i| p[i].force.into(), np))?;
        patches.set_item("moments", v3(&|i| p[i].moment.into(), np))?;
        patches.set_item("polygons", s(&|i| p[i].polygons as f64, np))?;
        patches.set_item("mean_pressures", s(&|i| p[i].mean_pressure, np))?;
        patches.set_item("max_pressures", s(&|i| p[i].max_pressure, np))?;
        d.set_item("patches", patches)?;
        let solver = PyDict::new(py);
        solver.set_item("iterations", stats.iterations)?;
        solver.set_item("line_search_iterations", stats.line_search_iterations)?;
        solver.set_item("residual", stats.residual)?;
        solver.set_item("tolerance", stats.tolerance)?;
        solver.set_item("contacts", stats.contacts)?;
        solver.set_item("cost", stats.cost)?;
        solver.set_item("criterion", format!("{:?}", stats.criterion))?;
        solver.set_item("condition", stats.condition)?;
        d.set_item("solver", solver)?;
        Ok(d)
    }

    /// Releases the simulator's memory; any later call raises ClosedError.
    fn close(&mut self) {
        self.inner = None;
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&mut self, _exc: &Bound<'_, PyTuple>) -> bool {
        self.inner = None;
        false
    }

    fn __repr__(&self) -> String {
        match &self.inner {
            None => format!("<stiction.Simulator {:?} (closed)>", self.path),
            Some(i) => format!(
                "<stiction.Simulator {:?}: nq={}, nv={}, nu={}, dt={}, t={}>",
                i.loaded.problem.name,
                i.nq(),
                i.nv(),
                i.nu(),
                i.loaded.problem.simulator.settings.dt,
                i.state.t
            ),
        }
    }

    /// Pickling (Ray, multiprocessing): a simulator travels as its path, overrides and the
    /// parameters set on it, and is loaded again where it lands, at the same current state and
    /// time (the file must be readable there).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let inner = self.get(py)?;
        let rebuild = py.import("stiction")?.getattr("_rebuild")?;
        let args = PyTuple::new(
            py,
            [
                self.path.clone().into_pyobject(py)?.into_any(),
                self.overrides.bind(py).copy()?.into_any(),
                x_array(py, &inner.state)?.into_any(),
                inner.state.t.into_pyobject(py)?.into_any(),
                inner.changed.clone().into_pyobject(py)?.into_any(),
            ],
        )?;
        PyTuple::new(py, [rebuild, args.into_any()])
    }
}
