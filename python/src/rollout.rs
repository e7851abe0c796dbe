//! Rollouts in flat arrays: the loop that `Simulator.rollout` and the batched
//! `stiction.rollout` share, so that a batch computes every rollout exactly as a serial call
//! does (bit for bit).

use stiction::control::Controller;
use stiction::error::Error;
use stiction::nalgebra::DVector;
use stiction::step::{Simulator, State};

/// Where the efforts of each step come from.
#[derive(Clone, Copy, Debug)]
pub enum Controls<'a> {
    /// Given efforts, `steps × nu` numbers, row-major.
    Given(&'a [f64]),
    /// The problem's control laws, evaluated at the start of each step (zero for actuators
    /// without a law), as `stiction simulate` runs a problem.
    Laws,
}

/// A step that failed within a rollout: its index and its error (boxed: it carries statistics).
#[derive(Debug)]
pub struct Failed {
    /// Index of the failing step (from 0).
    pub step: usize,
    /// The step's error.
    pub error: Box<Error>,
}

/// `x = [q, v]` (nq + nv values) at time `t` (s) as a [`State`].
pub fn state_of(x: &[f64], nq: usize, t: f64) -> State {
    State {
        t,
        q: DVector::from_column_slice(&x[..nq]),
        v: DVector::from_column_slice(&x[nq..]),
    }
}

/// Writes `[q, v]` of `state` into `out` (nq + nv).
pub fn write_state(state: &State, out: &mut [f64]) {
    let nq = state.q.len();
    out[..nq].copy_from_slice(state.q.as_slice());
    out[nq..].copy_from_slice(state.v.as_slice());
}

/// Steps `sim` from `x0` at time `t0` (s) with `controls`, writing `x0` and every following
/// state into `out` ((steps + 1) × nx, row-major).
///
/// # Errors
/// The failing step.
pub fn rollout_into(
    sim: &mut Simulator,
    controller: &Controller,
    x0: &[f64],
    t0: f64,
    controls: Controls<'_>,
    steps: usize,
    out: &mut [f64],
) -> Result<(), Failed> {
    let (nq, nx, nu) = (sim.model.nq(), x0.len(), sim.model.nu());
    out[..nx].copy_from_slice(x0);
    let mut state = state_of(x0, nq, t0);
    let mut u = DVector::zeros(nu);
    for k in 0..steps {
        match controls {
            Controls::Given(values) => u
                .as_mut_slice()
                .copy_from_slice(&values[k * nu..(k + 1) * nu]),
            Controls::Laws => u = controller.effort(&state, nu),
        }
        let (next, _) = sim.step(&state, &u).map_err(|e| Failed {
            step: k,
            error: Box::new(e),
        })?;
        write_state(&next, &mut out[(k + 1) * nx..(k + 2) * nx]);
        state = next;
    }
    Ok(())
}
