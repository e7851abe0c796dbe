//! The trajectory problem: minimize `J(u_0 … u_{T−1}) = Σ_{t<T} ℓ_t(x_t, u_t) + ℓ_T(x_T)` over
//! controls within bounds `u_lo ≤ u_t ≤ u_hi`, where `x_0` is given and
//! `x_{t+1} = f(x_t, u_t)` is one [`Simulator::step`] (ICF ext. Sec. XII-D).

use nalgebra::DVector;

use crate::error::{Error, Result};
use crate::multibody::MultibodyData;
use crate::optimize::cost::CostModel;
use crate::step::{Simulator, State, StepReport};

/// Box bounds on every control `u_t` (nu each; N or N·m).
#[derive(Clone, Debug, PartialEq)]
pub struct ControlBounds {
    /// Lower bounds (nu).
    pub lower: DVector<f64>,
    /// Upper bounds (nu).
    pub upper: DVector<f64>,
}

impl ControlBounds {
    /// Bounds checked for `lower ≤ upper`, sizes equal, no NaN (infinite bounds allowed).
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] or [`Error::InvalidParameter`].
    pub fn new(lower: DVector<f64>, upper: DVector<f64>) -> Result<Self> {
        if lower.len() != upper.len() {
            return Err(Error::DimensionMismatch {
                what: "control bounds (upper vs lower)".into(),
                expected: lower.len(),
                found: upper.len(),
            });
        }
        for i in 0..lower.len() {
            if lower[i].is_nan() || upper[i].is_nan() || lower[i] > upper[i] {
                return Err(Error::invalid(
                    &format!("control bounds[{i}]"),
                    format!("[{}, {}]", lower[i], upper[i]),
                    "need lower ≤ upper, no NaN",
                ));
            }
        }
        Ok(ControlBounds { lower, upper })
    }

    /// `u` clamped into the box.
    pub fn clamp(&self, u: &DVector<f64>) -> DVector<f64> {
        DVector::from_fn(u.len(), |i, _| u[i].clamp(self.lower[i], self.upper[i]))
    }
}

/// A trajectory optimization problem over a simulator's step.
#[derive(Debug)]
pub struct TrajectoryProblem {
    /// Initial state `x_0`.
    pub x0: State,
    /// Number of steps T (the horizon is T δt).
    pub num_steps: usize,
    /// Running and terminal costs.
    pub cost: CostModel,
    /// Control bounds, if any.
    pub bounds: Option<ControlBounds>,
}

/// A rolled-out trajectory with its cost.
#[derive(Clone, Debug)]
pub struct Trajectory {
    /// `x_0 … x_T` (T + 1).
    pub states: Vec<State>,
    /// `u_0 … u_{T−1}` (T).
    pub controls: Vec<DVector<f64>>,
    /// One step report per step (T): contacts and solver statistics.
    pub reports: Vec<StepReport>,
    /// `J` of this trajectory.
    pub cost: f64,
}

impl TrajectoryProblem {
    /// Checks the sizes of `x_0`, the bounds and `controls` (T × nu) against `sim`.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`].
    pub fn check(&self, sim: &Simulator, controls: &[DVector<f64>]) -> Result<()> {
        let (nq, nv, nu) = (sim.model.nq(), sim.model.nv(), sim.model.nu());
        let sizes = [
            ("x0.q", nq, self.x0.q.len()),
            ("x0.v", nv, self.x0.v.len()),
            ("controls (one per step)", self.num_steps, controls.len()),
        ];
        for (what, expected, found) in sizes {
            if expected != found {
                return Err(Error::DimensionMismatch {
                    what: what.into(),
                    expected,
                    found,
                });
            }
        }
        if let Some(u) = controls.iter().find(|u| u.len() != nu) {
            return Err(Error::DimensionMismatch {
                what: "control".into(),
                expected: nu,
                found: u.len(),
            });
        }
        if let Some(b) = &self.bounds {
            if b.lower.len() != nu {
                return Err(Error::DimensionMismatch {
                    what: "control bounds".into(),
                    expected: nu,
                    found: b.lower.len(),
                });
            }
        }
        Ok(())
    }

    /// `J` of the states and controls of a trajectory.
    pub fn total_cost(
        &self,
        sim: &Simulator,
        data: &mut MultibodyData<f64>,
        states: &[State],
        controls: &[DVector<f64>],
    ) -> f64 {
        let model = &sim.model;
        let zero = DVector::zeros(model.nu());
        let running: f64 = states
            .iter()
            .zip(controls)
            .map(|(x, u)| self.cost.calc(model, data, x, u, false))
            .sum();
        let last = states.last().expect("invariant: a trajectory has x_0");
        running + self.cost.calc(model, data, last, &zero, true)
    }

    /// Rolls out `controls` (clamped into the bounds) from `x_0` and evaluates `J`.
    ///
    /// # Errors
    /// Size mismatches, and the first step failure as [`crate::error::Error::Step`] (its
    /// index and time, around the step's error with the solver statistics).
    pub fn rollout(&self, sim: &mut Simulator, controls: &[DVector<f64>]) -> Result<Trajectory> {
        self.check(sim, controls)?;
        let mut states = Vec::with_capacity(self.num_steps + 1);
        let mut reports = Vec::with_capacity(self.num_steps);
        let mut applied = Vec::with_capacity(self.num_steps);
        states.push(self.x0.clone());
        for (k, u) in controls.iter().enumerate() {
            let u = match &self.bounds {
                Some(b) => b.clamp(u),
                None => u.clone(),
            };
            let x = states.last().expect("invariant: x_0 pushed");
            let (next, report) = sim.step(x, &u).map_err(|e| e.at_step(k, x.t))?;
            states.push(next);
            reports.push(report);
            applied.push(u);
        }
        let mut data = MultibodyData::new(&sim.model);
        let cost = self.total_cost(sim, &mut data, &states, &applied);
        Ok(Trajectory {
            states,
            controls: applied,
            reports,
            cost,
        })
    }
}
