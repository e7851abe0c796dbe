//! Files of an optimized trajectory (the `stiction optimize` / `stiction mpc` outputs):
//!
//! - `controls.csv`: `t` and one column per actuator, named `BODY.u0`, `BODY.u1`, … (N or N·m);
//!   row `t` holds `u_t`, applied over `[t, t + δt)`;
//! - `states.csv`: `t`, the generalized positions `q[i]` (nq) and velocities `v[i]` (nv);
//! - `iterations.csv`: one row per iLQR iteration: `iteration, cost, alpha, mu,
//!   expected_change, gradient_norm, accepted, rollout_s, derivatives_s, backward_s`;
//! - the JSON summary [`Summary::to_json`].
//!
//! World-frame body trajectories and contacts go through [`crate::report::csv`] on
//! [`recording`].

use std::io::Write;
use std::path::{Path, PathBuf};

use nalgebra::DVector;

use crate::error::Result;
use crate::multibody::MultibodyModel;
use crate::optimize::ilqr::IterationStats;
use crate::report::csv::write_file;
use crate::simulate::Recording;
use crate::step::{State, StepReport};

/// Actuator column names `BODY.uK` (K counts the body's actuated velocities).
pub fn actuator_names(model: &MultibodyModel<f64>) -> Vec<String> {
    model
        .actuators
        .iter()
        .map(|&index| {
            let (body, joint) = model
                .joints
                .iter()
                .enumerate()
                .find(|(_, j)| (j.v_start..j.v_start + j.kind.nv()).contains(&index))
                .expect("invariant: actuators index existing velocities");
            format!("{}.u{}", model.bodies[body].name, index - joint.v_start)
        })
        .collect()
}

/// Writes `dir/controls.csv`.
///
/// # Errors
/// [`Error::Io`] naming the file.
pub fn write_controls(
    dir: &Path,
    model: &MultibodyModel<f64>,
    states: &[State],
    controls: &[DVector<f64>],
) -> Result<PathBuf> {
    write_file(dir, "controls.csv", |w| {
        writeln!(w, "t,{}", actuator_names(model).join(","))?;
        for (x, u) in states.iter().zip(controls) {
            let values: Vec<String> = u.iter().map(|v| v.to_string()).collect();
            writeln!(w, "{},{}", x.t, values.join(","))?;
        }
        Ok(())
    })
}

/// Writes `dir/states.csv`.
///
/// # Errors
/// [`Error::Io`] naming the file.
pub fn write_states(dir: &Path, model: &MultibodyModel<f64>, states: &[State]) -> Result<PathBuf> {
    write_file(dir, "states.csv", |w| {
        let q: Vec<String> = (0..model.nq()).map(|i| format!("q{i}")).collect();
        let v: Vec<String> = (0..model.nv()).map(|i| format!("v{i}")).collect();
        writeln!(w, "t,{},{}", q.join(","), v.join(","))?;
        for x in states {
            let values: Vec<String> =
                x.q.iter()
                    .chain(x.v.iter())
                    .map(|v| v.to_string())
                    .collect();
            writeln!(w, "{},{}", x.t, values.join(","))?;
        }
        Ok(())
    })
}

/// Writes `dir/iterations.csv`.
///
/// # Errors
/// [`Error::Io`] naming the file.
pub fn write_iterations(dir: &Path, iterations: &[IterationStats]) -> Result<PathBuf> {
    write_file(dir, "iterations.csv", |w| {
        writeln!(
            w,
            "iteration,cost,alpha,mu,expected_change,gradient_norm,accepted,rollout_s,derivatives_s,backward_s"
        )?;
        for s in iterations {
            writeln!(
                w,
                "{},{},{},{},{},{},{},{},{},{}",
                s.iteration,
                s.cost,
                s.alpha,
                s.mu,
                s.expected_change,
                s.gradient_norm,
                s.accepted,
                s.rollout_s,
                s.derivatives_s,
                s.backward_s
            )?;
        }
        Ok(())
    })
}

/// A [`Recording`] of a trajectory, for the world-frame tables and figures of
/// [`crate::report`].
pub fn recording(states: &[State], reports: &[StepReport]) -> Recording {
    Recording {
        states: states.to_vec(),
        reports: reports.to_vec(),
    }
}

/// The one-line result of an optimization.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Problem name.
    pub problem: String,
    /// Status name.
    pub status: String,
    /// Iterations.
    pub iterations: usize,
    /// Cost of the initial guess.
    pub initial_cost: f64,
    /// Final cost.
    pub final_cost: f64,
    /// Task error (m).
    pub task_error: f64,
    /// Wall time (s).
    pub wall_s: f64,
}

impl Summary {
    /// `{"problem": …, "status": …, "iterations": N, "initial_cost": …, "final_cost": …,
    /// "task_error": …, "wall_s": …}` on one line (non-finite numbers become `null`).
    pub fn to_json(&self) -> String {
        serde_json::json!({
            "problem": self.problem,
            "status": self.status,
            "iterations": self.iterations,
            "initial_cost": self.initial_cost,
            "final_cost": self.final_cost,
            "task_error": self.task_error,
            "wall_s": self.wall_s,
        })
        .to_string()
    }
}

/// Writes `dir/mpc_solves.csv`: `t, iterations, cost, status, wall_s` per re-solve.
///
/// # Errors
/// [`Error::Io`] naming the file.
pub fn write_mpc_solves(dir: &Path, solves: &[crate::optimize::mpc::MpcSolve]) -> Result<PathBuf> {
    write_file(dir, "mpc_solves.csv", |w| {
        writeln!(w, "t,iterations,cost,status,wall_s")?;
        for s in solves {
            writeln!(
                w,
                "{},{},{},{},{}",
                s.t,
                s.iterations,
                s.cost,
                s.status.name(),
                s.wall_s
            )?;
        }
        Ok(())
    })
}
