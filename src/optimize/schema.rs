//! The `[optimize]` table of a problem file (documented in `problems/README.md`) and its
//! resolution into a [`TrajectoryProblem`], iLQR settings, a [`Task`] and MPC settings.

use std::path::Path;

use nalgebra::{DVector, Vector3};
use serde::Deserialize;

use crate::budget;
use crate::error::{Error, Result};
use crate::multibody::MultibodyModel;
use crate::optimize::cost::{
    BodyPositionCost, BodyRelativeCost, ControlCost, CostModel, Schedule, StageCost, Stages,
    StateCost,
};
use crate::optimize::ilqr::IlqrParams;
use crate::optimize::mpc::MpcSettings;
use crate::optimize::problem::{ControlBounds, TrajectoryProblem};
use crate::optimize::task::{Task, TaskCheck};
use crate::problem::exact;
use crate::problem::locate::locate;
use crate::problem::{parse_toml, Problem};
use crate::simulate::recording_bytes_per_step;

/// The tables of a problem file the optimizer reads (the reader keeps `[optimize]` raw, and
/// the others are its own).
#[derive(Debug, Deserialize)]
struct OptimizeTables {
    /// `[optimize]`.
    optimize: Option<OptimizeSpec>,
}

/// `[optimize]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptimizeSpec {
    /// Horizon (s); T = horizon / δt steps.
    pub horizon: f64,
    /// iLQR iteration limit (default 100).
    pub max_iterations: Option<usize>,
    /// Relative cost decrease that stops iLQR (default 1e-4).
    pub cost_tolerance: Option<f64>,
    /// Constant initial guess (nu; default zeros).
    pub initial_controls: Option<Vec<f64>>,
    /// Lower control bounds (nu).
    pub control_lower: Option<Vec<f64>>,
    /// Upper control bounds (nu).
    pub control_upper: Option<Vec<f64>>,
    /// Cost terms.
    #[serde(default, rename = "cost")]
    pub costs: Vec<CostSpec>,
    /// Task checks.
    #[serde(default, rename = "task")]
    pub tasks: Vec<TaskSpec>,
    /// Receding-horizon settings.
    pub mpc: Option<MpcSpec>,
}

/// `[[optimize.cost]]`, tagged by `kind`.
#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum CostSpec {
    /// `½ (u − u*)ᵀ R (u − u*)`.
    Control {
        /// Diagonal of R (nu).
        weight: Vec<f64>,
        /// u* (nu), default zeros.
        target: Option<Vec<f64>>,
        /// Window start (s).
        from: Option<f64>,
        /// Window end (s).
        to: Option<f64>,
    },
    /// `½ ‖q ⊖ q*‖²_{W_q} + ½ ‖v − v*‖²_{W_v}`.
    State {
        /// Diagonal of W_q (nv).
        q_weight: Vec<f64>,
        /// Diagonal of W_v (nv).
        v_weight: Vec<f64>,
        /// q* (nq), default the initial positions.
        q_target: Option<Vec<f64>>,
        /// v* (nv), default zeros.
        v_target: Option<Vec<f64>>,
        /// `running`, `terminal` or `all` (default `running`).
        stages: Option<String>,
        /// Window start (s).
        from: Option<f64>,
        /// Window end (s).
        to: Option<f64>,
    },
    /// `½ ‖p_WP − p*‖²_W`.
    BodyPosition {
        /// Body name.
        body: String,
        /// P in the body frame (m), default the origin.
        #[serde(default, deserialize_with = "exact::option")]
        point: Option<[f64; 3]>,
        /// p* (m, world).
        #[serde(deserialize_with = "exact::array")]
        target: [f64; 3],
        /// Diagonal of W (1/m²).
        #[serde(deserialize_with = "exact::array")]
        weight: [f64; 3],
        /// `running`, `terminal` or `all` (default `running`).
        stages: Option<String>,
        /// Window start (s).
        from: Option<f64>,
        /// Window end (s).
        to: Option<f64>,
    },
    /// `½ ‖p_WP − p_WQ − o‖²_W`.
    BodyRelative {
        /// Body of P.
        body: String,
        /// P in its body frame (m).
        #[serde(default, deserialize_with = "exact::option")]
        point: Option<[f64; 3]>,
        /// Body of Q.
        relative_to: String,
        /// Q in its body frame (m).
        #[serde(default, deserialize_with = "exact::option")]
        relative_point: Option<[f64; 3]>,
        /// o (m, world), default zero.
        #[serde(default, deserialize_with = "exact::option")]
        offset: Option<[f64; 3]>,
        /// Diagonal of W (1/m²).
        #[serde(deserialize_with = "exact::array")]
        weight: [f64; 3],
        /// `running`, `terminal` or `all` (default `running`).
        stages: Option<String>,
        /// Window start (s).
        from: Option<f64>,
        /// Window end (s).
        to: Option<f64>,
    },
}

/// `[[optimize.task]]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// Body name.
    pub body: String,
    /// Point in the body frame (m), default the origin.
    #[serde(default, deserialize_with = "exact::option")]
    pub point: Option<[f64; 3]>,
    /// Target (m, world).
    #[serde(deserialize_with = "exact::array")]
    pub target: [f64; 3],
    /// Axes compared (1/0), default all.
    #[serde(default, deserialize_with = "exact::option")]
    pub axes: Option<[f64; 3]>,
    /// Time (s), default the end of the horizon.
    pub time: Option<f64>,
    /// Tolerance (m).
    pub tolerance: f64,
}

/// `[optimize.mpc]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MpcSpec {
    /// Horizon of each re-solve (s).
    pub horizon: f64,
    /// iLQR iterations per re-solve (default 5).
    pub iterations: Option<usize>,
    /// Closed-loop duration (s), default the `[optimize]` horizon.
    pub duration: Option<f64>,
    /// End every horizon with the loop (shrinking horizon; default false).
    pub shrink: Option<bool>,
}

/// Everything needed to optimize a problem file's task.
#[derive(Debug)]
pub struct Optimization {
    /// The trajectory problem from the file's initial state.
    pub problem: TrajectoryProblem,
    /// The initial guess (T × nu).
    pub initial_controls: Vec<DVector<f64>>,
    /// iLQR settings.
    pub params: IlqrParams,
    /// Task checks.
    pub task: Task,
    /// Receding-horizon settings.
    pub mpc: MpcSettings,
}

struct Resolver<'a> {
    path: &'a Path,
    source: &'a str,
    model: &'a MultibodyModel<f64>,
}

impl Resolver<'_> {
    /// An error at `optimize.FIELD`.
    fn err(&self, field: &str, expected: &str, found: impl std::fmt::Display) -> Error {
        self.err_at(&format!("optimize.{field}"), expected, found)
    }

    /// An error at the dotted path `field` of the file, located in its text.
    fn err_at(&self, field: &str, expected: &str, found: impl std::fmt::Display) -> Error {
        Error::ProblemFile {
            path: self.path.to_path_buf(),
            location: locate(self.source, field),
            field: field.to_string(),
            expected: expected.to_string(),
            found: found.to_string(),
        }
    }

    fn vector(&self, field: &str, values: &[f64], n: usize, what: &str) -> Result<DVector<f64>> {
        if values.len() != n {
            return Err(self.err(
                field,
                &format!("{n} values ({what})"),
                format!("{} values", values.len()),
            ));
        }
        if let Some(x) = values.iter().find(|x| x.is_nan()) {
            return Err(self.err(field, "numbers", x));
        }
        Ok(DVector::from_column_slice(values))
    }

    fn weights(&self, field: &str, values: &[f64], n: usize, what: &str) -> Result<DVector<f64>> {
        let w = self.vector(field, values, n, what)?;
        if let Some(x) = w.iter().find(|x| !(x.is_finite() && **x >= 0.0)) {
            return Err(self.err(field, "weights ≥ 0", x));
        }
        Ok(w)
    }

    fn vec3(&self, field: &str, a: [f64; 3]) -> Result<Vector3<f64>> {
        if let Some(x) = a.iter().find(|x| !x.is_finite()) {
            return Err(self.err(field, "finite numbers", x));
        }
        Ok(Vector3::from(a))
    }

    fn body(&self, field: &str, name: &str) -> Result<usize> {
        self.model
            .body_index(name)
            .ok_or_else(|| self.err(field, "the name of a tree body", format!("`{name}`")))
    }

    fn schedule(
        &self,
        field: &str,
        stages: Option<&str>,
        from: Option<f64>,
        to: Option<f64>,
    ) -> Result<Schedule> {
        let stages = match stages.unwrap_or("running") {
            "running" => Stages::Running,
            "terminal" => Stages::Terminal,
            "all" => Stages::All,
            other => {
                return Err(self.err(
                    &format!("{field}.stages"),
                    "one of running, terminal, all",
                    format!("`{other}`"),
                ))
            }
        };
        let from = from.unwrap_or(f64::NEG_INFINITY);
        let to = to.unwrap_or(f64::INFINITY);
        if from.is_nan() || to.is_nan() || from > to {
            return Err(self.err(
                &format!("{field}.from"),
                "from ≤ to (s)",
                format!("from = {from}, to = {to}"),
            ));
        }
        Ok(Schedule { stages, from, to })
    }

    fn cost(&self, field: &str, spec: &CostSpec, q0: &DVector<f64>) -> Result<Box<dyn StageCost>> {
        let (nv, nu) = (self.model.nv(), self.model.nu());
        Ok(match spec {
            CostSpec::Control {
                weight,
                target,
                from,
                to,
            } => Box::new(ControlCost {
                weight: self.weights(&format!("{field}.weight"), weight, nu, "one per actuator")?,
                target: match target {
                    Some(t) => {
                        self.vector(&format!("{field}.target"), t, nu, "one per actuator")?
                    }
                    None => DVector::zeros(nu),
                },
                schedule: self.schedule(field, None, *from, *to)?,
            }),
            CostSpec::State {
                q_weight,
                v_weight,
                q_target,
                v_target,
                stages,
                from,
                to,
            } => Box::new(StateCost {
                q_weight: self.weights(
                    &format!("{field}.q_weight"),
                    q_weight,
                    nv,
                    "one per velocity",
                )?,
                v_weight: self.weights(
                    &format!("{field}.v_weight"),
                    v_weight,
                    nv,
                    "one per velocity",
                )?,
                q_target: match q_target {
                    Some(q) => self.vector(
                        &format!("{field}.q_target"),
                        q,
                        q0.len(),
                        "one per position",
                    )?,
                    None => q0.clone(),
                },
                v_target: match v_target {
                    Some(v) => {
                        self.vector(&format!("{field}.v_target"), v, nv, "one per velocity")?
                    }
                    None => DVector::zeros(nv),
                },
                schedule: self.schedule(field, stages.as_deref(), *from, *to)?,
            }),
            CostSpec::BodyPosition {
                body,
                point,
                target,
                weight,
                stages,
                from,
                to,
            } => Box::new(BodyPositionCost {
                body: self.body(&format!("{field}.body"), body)?,
                p_BP: self.vec3(&format!("{field}.point"), point.unwrap_or([0.0; 3]))?,
                target: self.vec3(&format!("{field}.target"), *target)?,
                weight: self.vec3(&format!("{field}.weight"), *weight)?,
                schedule: self.schedule(field, stages.as_deref(), *from, *to)?,
            }),
            CostSpec::BodyRelative {
                body,
                point,
                relative_to,
                relative_point,
                offset,
                weight,
                stages,
                from,
                to,
            } => Box::new(BodyRelativeCost {
                body_a: self.body(&format!("{field}.body"), body)?,
                p_AP: self.vec3(&format!("{field}.point"), point.unwrap_or([0.0; 3]))?,
                body_b: self.body(&format!("{field}.relative_to"), relative_to)?,
                p_BQ: self.vec3(
                    &format!("{field}.relative_point"),
                    relative_point.unwrap_or([0.0; 3]),
                )?,
                offset: self.vec3(&format!("{field}.offset"), offset.unwrap_or([0.0; 3]))?,
                weight: self.vec3(&format!("{field}.weight"), *weight)?,
                schedule: self.schedule(field, stages.as_deref(), *from, *to)?,
            }),
        })
    }
}

/// Resolves the `[optimize]` table of `problem` against its model.
///
/// # Errors
/// [`Error::ProblemFile`] naming the `optimize.*` field when the table is missing, a size
/// does not match the model (nu, nq, nv), a body name is unknown, or a value is invalid.
pub fn optimization(problem: &Problem) -> Result<Optimization> {
    let model = &problem.simulator.model;
    let r = Resolver {
        path: &problem.path,
        source: &problem.source,
        model,
    };
    let tables: OptimizeTables = parse_toml(&problem.source, &problem.path)?;
    let spec = tables
        .optimize
        .ok_or_else(|| r.err_at("optimize", "an [optimize] table", "nothing"))?;
    let nu = model.nu();
    if nu == 0 {
        return Err(r.err_at(
            "(model)",
            "at least one `[[actuator]]` for the optimizer to drive",
            "no actuators",
        ));
    }
    if let Some(a) = problem.controller.actuators.first() {
        return Err(r.err_at(
            &format!("actuator[{}].control", a.actuator),
            "no control law on an actuator the optimizer drives (leave `control` out)",
            format!("a law on `{}`", a.name),
        ));
    }
    let dt = problem.simulator.settings.dt;
    if !(spec.horizon >= dt && spec.horizon.is_finite()) {
        return Err(r.err(
            "horizon",
            &format!("a duration ≥ δt = {dt} s"),
            spec.horizon,
        ));
    }
    let per_step = trajectory_bytes_per_step(model.nq(), model.nv(), nu);
    let checked_steps = |field: &str, duration: f64| {
        budget::steps(field, duration, dt, per_step).map_err(|e| {
            r.err(
                field,
                "a duration whose trajectory buffers fit in memory",
                e,
            )
        })
    };
    let num = checked_steps("horizon", spec.horizon)?;
    let mut params = IlqrParams::default();
    if let Some(n) = spec.max_iterations {
        params = params
            .with_max_iterations(n)
            .map_err(|_| r.err("max_iterations", "an integer ≥ 1", n))?;
    }
    if let Some(tol) = spec.cost_tolerance {
        params = params
            .with_cost_tolerance(tol)
            .map_err(|_| r.err("cost_tolerance", "a number in (0, 1)", tol))?;
    }
    let u0 = match &spec.initial_controls {
        Some(u) => r.vector("initial_controls", u, nu, "one per actuator")?,
        None => DVector::zeros(nu),
    };
    let limited = problem.effort_limits.iter().any(|l| l.is_finite());
    let bounds = match (&spec.control_lower, &spec.control_upper) {
        (None, None) if !limited => None,
        (lo, hi) => {
            let limits = DVector::from_column_slice(&problem.effort_limits);
            let lo = match lo {
                Some(l) => r.vector("control_lower", l, nu, "one per actuator")?,
                None => -limits.clone(),
            };
            let hi = match hi {
                Some(h) => r.vector("control_upper", h, nu, "one per actuator")?,
                None => limits,
            };
            Some(
                ControlBounds::new(lo, hi)
                    .map_err(|e| r.err("control_lower", "lower ≤ upper", e))?,
            )
        }
    };
    let q0 = &problem.initial_state.q;
    let terms = spec
        .costs
        .iter()
        .enumerate()
        .map(|(i, c)| r.cost(&format!("cost[{i}]"), c, q0))
        .collect::<Result<Vec<_>>>()?;
    if terms.is_empty() {
        return Err(r.err("cost", "at least one [[optimize.cost]] term", "none"));
    }
    let horizon = num as f64 * dt;
    let checks = spec
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let field = format!("task[{i}]");
            if !(t.tolerance > 0.0 && t.tolerance.is_finite()) {
                return Err(r.err(
                    &format!("{field}.tolerance"),
                    "a positive distance (m)",
                    t.tolerance,
                ));
            }
            Ok(TaskCheck {
                body: r.body(&format!("{field}.body"), &t.body)?,
                p_BP: r.vec3(&format!("{field}.point"), t.point.unwrap_or([0.0; 3]))?,
                target: r.vec3(&format!("{field}.target"), t.target)?,
                axes: r.vec3(&format!("{field}.axes"), t.axes.unwrap_or([1.0; 3]))?,
                time: t.time.unwrap_or(horizon),
                tolerance: t.tolerance,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let mpc = match &spec.mpc {
        None => MpcSettings::new(num.min(20), 5, num, false),
        Some(m) => {
            if !(m.horizon >= dt && m.horizon.is_finite()) {
                return Err(r.err(
                    "mpc.horizon",
                    &format!("a duration ≥ δt = {dt} s"),
                    m.horizon,
                ));
            }
            let duration = m.duration.unwrap_or(horizon);
            if !(duration >= dt && duration.is_finite()) {
                return Err(r.err(
                    "mpc.duration",
                    &format!("a duration ≥ δt = {dt} s"),
                    duration,
                ));
            }
            MpcSettings::new(
                checked_steps("mpc.horizon", m.horizon)?,
                m.iterations.unwrap_or(5).max(1),
                checked_steps("mpc.duration", duration)?,
                m.shrink.unwrap_or(false),
            )
        }
    };
    Ok(Optimization {
        problem: TrajectoryProblem {
            x0: problem.initial_state.clone(),
            num_steps: num,
            cost: CostModel { terms },
            bounds,
        },
        initial_controls: vec![u0; num],
        params,
        task: Task { checks },
        mpc,
    })
}

/// Memory an iLQR trajectory keeps per step (bytes, a lower bound): the states and controls
/// of the trajectory and of its line-search candidate, the step report, the step Jacobians
/// `A_t` (2nv × 2nv) and `B_t` (2nv × nu), the gains and the value function's Hessian.
fn trajectory_bytes_per_step(nq: usize, nv: usize, nu: usize) -> usize {
    let ndx = 2 * nv;
    recording_bytes_per_step(nq, nv)
        + std::mem::size_of::<crate::step::State>()
        + 8 * (nq + nv + 3 * nu + 2 * ndx * ndx + 2 * ndx * nu)
}
