//! The analytic state and control columns of `∂r/∂θ` ([`state_residual_jacobian`]) against the
//! dual-number reference ([`residual_jacobian`], the step re-assembled in chunked duals), and
//! the IFT step Jacobians built on them against the same Jacobians from the dual reference, on
//! every shipped problem and every contact approximation.

use std::path::PathBuf;

use nalgebra::{DMatrix, DVector};
use num_dual::Dual64;
use stiction::contact::Approximation;
use stiction::derivatives::analytic::state_residual_jacobian;
use stiction::derivatives::ift::{
    nominal_step, position_jacobian, residual_jacobian, workspace_factor,
};
use stiction::derivatives::lifted::{Directions, NominalStep};
use stiction::derivatives::step_jacobians;
use stiction::multibody::integrate_positions;
use stiction::problem::{load_problem, Problem};
use stiction::simulate::run;
use stiction::solver::linalg::SpdSolver;
use stiction::step::{Simulator, State};

/// Both paths compute the same derivative, analytically and by duals: round-off apart.
const TOLERANCE: f64 = 1e-10;

/// The step Jacobians: `∂v/∂θ = −H⁻¹ ∂r/∂θ` spreads a column's round-off over all its entries,
/// and rolling contacts (slip speed ~1e-9 m/s against the soft norm's 1e-4 m/s) make the
/// friction entries sensitive to the round-off of the slip velocity, which the two paths
/// compute in different orders (observed up to 3e-10). The bound of the IFT-vs-direct tests.
const STEP_TOLERANCE: f64 = 1e-9;

const PROBLEMS: [&str; 6] = [
    "falling-sphere",
    "sliding-rod",
    "conveyor-oscillating",
    "conveyor-constant",
    "sliding-box",
    "arm-push-sphere",
];

fn load(name: &str, approximation: Approximation) -> Problem {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("problems")
        .join(format!("{name}.toml"));
    let mut p = load_problem(&path).expect("shipped problem loads");
    p.simulator.settings.approximation = approximation;
    p
}

/// Up to four states of the problem's rollout with contacts, spread over its duration.
fn contact_states(p: &mut Problem) -> Vec<State> {
    let duration = p.duration;
    let u = DVector::zeros(p.simulator.model.nu());
    let rec = run(&mut p.simulator, &p.initial_state, duration, |_, _| {}).expect("rollout");
    let with_contacts: Vec<State> = rec
        .states
        .into_iter()
        .filter(|s| {
            p.simulator
                .assemble(s, &u)
                .is_ok_and(|problem| !problem.contacts.is_empty())
        })
        .collect();
    let n = with_contacts.len();
    assert!(n > 0, "no state with contacts");
    (0..4)
        .map(|i| with_contacts[(i * (n - 1)) / 3].clone())
        .collect()
}

/// Fraction ρ of the matrix's largest entry below which a column is compared absolutely.
const COLUMN_FLOOR: f64 = 1e-4;

/// Worst column-wise relative difference `max_j ‖a_j − b_j‖∞ / max(‖b_j‖∞, ρ ‖b‖max)`, with
/// ρ = [`COLUMN_FLOOR`].
/// Column-wise, because a column is one right-hand side of `H δv = −∂r/∂θ_j`; with a floor,
/// because entries that vanish in exact arithmetic (a free sphere's residual along its own
/// horizontal translation) come out as round-off of the terms that cancel in them (stiffness
/// times spin times lever arm), and a column of such entries has no scale of its own.
fn worst(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    let floor = COLUMN_FLOOR * b.amax().max(1e-300);
    (0..b.ncols())
        .map(|j| (a.column(j) - b.column(j)).amax() / b.column(j).amax().max(floor))
        .fold(0.0, f64::max)
}

/// The largest differences, for failure messages: `(row, column): a vs b`.
fn worst_entries(a: &DMatrix<f64>, b: &DMatrix<f64>) -> String {
    let mut entries: Vec<(usize, usize, f64)> = (0..b.ncols())
        .flat_map(|j| (0..b.nrows()).map(move |i| (i, j, (a[(i, j)] - b[(i, j)]).abs())))
        .collect();
    entries.sort_by(|x, y| y.2.total_cmp(&x.2));
    entries
        .iter()
        .take(3)
        .map(|&(i, j, _)| format!("({i}, {j}): {:.6e} vs {:.6e}", a[(i, j)], b[(i, j)]))
        .collect::<Vec<_>>()
        .join("; ")
        + &(0..b.ncols())
            .map(|j| {
                format!(
                    "\ncolumn {j}: max |Δ| {:.2e}, max |b| {:.2e}",
                    (a.column(j) - b.column(j)).amax(),
                    b.column(j).amax()
                )
            })
            .collect::<String>()
}

#[test]
fn analytic_residual_jacobian_matches_duals_on_every_problem_and_model() {
    for name in PROBLEMS {
        for approximation in Approximation::ALL {
            let mut p = load(name, approximation);
            let label = format!("{name} {approximation}");
            for state in contact_states(&mut p) {
                let sim = &mut p.simulator;
                let u = DVector::zeros(sim.model.nu());
                let nominal = nominal_step(sim, &state, &u).expect("nominal step");
                let dirs = Directions {
                    nv: sim.model.nv(),
                    nu: sim.model.nu(),
                    np: 0,
                };
                let duals = residual_jacobian(sim, &nominal, &[], dirs).expect("dual ∂r/∂θ");
                let analytic = state_residual_jacobian(sim, &nominal).expect("analytic ∂r/∂θ");
                let e = worst(&analytic, &duals);
                assert!(
                    e <= TOLERANCE,
                    "{label} t = {}: ∂r/∂θ differs by {e:.2e}; {}",
                    state.t,
                    worst_entries(&analytic, &duals)
                );
            }
        }
    }
}

/// `∂q'/∂θ` (tangent) of `q' = (q0 ⊕ δq0) ⊕ δt (v + δv)` by one `Dual64` per column, the
/// reference for [`position_jacobian`].
fn dual_position_jacobian(
    sim: &Simulator,
    nominal: &NominalStep,
    dv: &DMatrix<f64>,
    nv: usize,
) -> DMatrix<f64> {
    let model = sim.model.cast::<Dual64>();
    let lift = |x: &DVector<f64>| x.map(Dual64::from);
    DMatrix::from_columns(
        &(0..dv.ncols())
            .map(|k| {
                let delta = DVector::from_fn(nv, |i, _| Dual64::new(0.0, f64::from(i == k)));
                let v = DVector::from_fn(nv, |i, _| Dual64::new(nominal.v[i], dv[(i, k)]));
                let q0 = model.retract(&lift(&nominal.state.q), &delta);
                let q = integrate_positions(&model, &q0, &v, Dual64::from(sim.settings.dt));
                model.difference(&q, &lift(&nominal.q_next)).map(|x| x.eps)
            })
            .collect::<Vec<_>>(),
    )
}

/// The dual reference for the whole IFT step Jacobian `[∂x'/∂x, ∂x'/∂u]`: duals for `∂r/∂θ`
/// and for the positions, on the same factor.
fn dual_step_jacobian(p: &mut Problem, state: &State) -> DMatrix<f64> {
    let sim = &mut p.simulator;
    let u = DVector::zeros(sim.model.nu());
    let nominal = nominal_step(sim, state, &u).expect("nominal step");
    let factor = workspace_factor(sim, &nominal).expect("factor at the solution");
    let dirs = Directions {
        nv: sim.model.nv(),
        nu: sim.model.nu(),
        np: 0,
    };
    let mut dv = -residual_jacobian(sim, &nominal, &[], dirs).expect("dual ∂r/∂θ");
    factor.cholesky.solve_many_in_place(&mut dv);
    let dq = dual_position_jacobian(sim, &nominal, &dv, dirs.nv);
    let nv = dirs.nv;
    let mut full = DMatrix::zeros(2 * nv, dirs.len());
    full.rows_mut(0, nv).copy_from(&dq);
    full.rows_mut(nv, nv).copy_from(&dv);
    full
}

#[test]
fn ift_step_jacobians_match_the_dual_reference_on_every_problem_and_model() {
    for name in PROBLEMS {
        for approximation in Approximation::ALL {
            let mut p = load(name, approximation);
            let label = format!("{name} {approximation}");
            for state in contact_states(&mut p) {
                let reference = dual_step_jacobian(&mut p, &state);
                let u = DVector::zeros(p.simulator.model.nu());
                let jac = step_jacobians(&mut p.simulator, &state, &u, &[]).expect("IFT");
                let e = worst(&jac.full(), &reference);
                assert!(
                    e <= STEP_TOLERANCE,
                    "{label} t = {}: step Jacobian differs by {e:.2e}; {}",
                    state.t,
                    worst_entries(&jac.full(), &reference)
                );
            }
        }
    }
}

#[test]
fn position_jacobian_matches_duals_with_free_and_revolute_joints() {
    for name in ["arm-push-sphere", "sliding-box"] {
        let mut p = load(name, Approximation::Lagged);
        let state = contact_states(&mut p).remove(1);
        let sim = &mut p.simulator;
        let u = DVector::zeros(sim.model.nu());
        let nominal = nominal_step(sim, &state, &u).expect("nominal step");
        let nv = sim.model.nv();
        let dirs = Directions {
            nv,
            nu: sim.model.nu(),
            np: 0,
        };
        let dv = DMatrix::from_fn(nv, dirs.len(), |i, j| ((i * 7 + j * 3) % 11) as f64 - 5.0);
        let fast = position_jacobian(sim, &nominal, &dv, dirs);
        let reference = dual_position_jacobian(sim, &nominal, &dv, nv);
        let e = worst(&fast, &reference);
        assert!(e <= TOLERANCE, "{name}: ∂q'/∂θ differs by {e:.2e}");
    }
}
