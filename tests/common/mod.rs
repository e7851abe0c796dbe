//! Shared by the integration tests: the shipped problem files, the clutter with a solver
//! setting changed, and the bound within which two converged solves of one step agree.
#![allow(dead_code, non_snake_case)]

use std::path::PathBuf;

use nalgebra::{DMatrix, DVector};

use stiction::contact::Approximation;
use stiction::problem::{load_problem, Problem};
use stiction::simulate::run;
use stiction::solver::{SolverParams, SolverStats};
use stiction::step::{Simulator, State};

/// Loads `problems/NAME.toml` with the given approximation and time step (s).
pub fn problem(name: &str, approximation: Approximation, dt: f64) -> Problem {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("problems")
        .join(format!("{name}.toml"));
    let mut p = load_problem(&path).expect("shipped problem loads");
    p.simulator.settings.approximation = approximation;
    p.simulator.settings.dt = dt;
    p
}

/// The bound on two converged solves of one step with momentum matrix `A`: `ℓ(v) = ½‖v −
/// v*‖²_A + (convex)` is A-strongly convex, so two iterates with gradients `g₁`, `g₂` satisfy
/// `‖v₁ − v₂‖_A ≤ ‖g₁‖_{A⁻¹} + ‖g₂‖_{A⁻¹}`, and `‖g‖_{A⁻¹} ≤ ‖D g‖ / √λ_min(D A D)` with
/// `D = diag(A)^{-1/2}`; a converged solve has `‖D g‖` at most its tolerance. Returns
/// `(‖v₁ − v₂‖_A, bound)` after checking that both solves met their tolerance.
pub fn distance_and_bound(
    A: &DMatrix<f64>,
    (v1, stats1): (&DVector<f64>, &SolverStats),
    (v2, stats2): (&DVector<f64>, &SolverStats),
) -> (f64, f64) {
    assert!(stats1.residual <= stats1.tolerance, "{stats1}");
    assert!(stats2.residual <= stats2.tolerance, "{stats2}");
    let D = A.diagonal().map(|a| 1.0 / a.sqrt());
    let DAD = DMatrix::from_diagonal(&D) * A * DMatrix::from_diagonal(&D);
    let lambda_min = DAD.symmetric_eigenvalues().min();
    let dv = v1 - v2;
    let distance = dv.dot(&(A * &dv)).sqrt();
    let bound = (stats1.tolerance + stats2.tolerance) / lambda_min.sqrt();
    (distance, bound)
}

/// The clutter of ICF Sec. X-A at δt = 2 ms, its solver parameters changed by `solver`.
pub fn clutter(
    approximation: Approximation,
    solver: impl FnOnce(SolverParams) -> SolverParams,
) -> (Simulator, State) {
    let mut p = problem("clutter", approximation, 2e-3);
    p.simulator.settings.solver = solver(p.simulator.settings.solver);
    (p.simulator, p.initial_state)
}

/// Total Newton iterations of `sim` from `x0` over `duration` (s).
pub fn total_iterations(sim: &mut Simulator, x0: &State, duration: f64) -> usize {
    let rec = run(sim, x0, duration, |_, _| ()).unwrap_or_else(|e| panic!("{e}"));
    rec.reports.iter().map(|r| r.stats.iterations).sum()
}

/// Steps `a` and `b` from the same states, those of `a`'s trajectory from `x0`, for
/// `duration` (s), and checks that each step's velocities agree within
/// [`distance_and_bound`]. Returns the number of steps whose velocities differ and of steps
/// with contacts.
pub fn compare_steps(
    label: &str,
    a: &mut Simulator,
    b: &mut Simulator,
    x0: State,
    duration: f64,
) -> (usize, usize) {
    let u = DVector::zeros(0);
    let mut state = x0;
    let (mut differing, mut with_contacts) = (0, 0);
    while state.t < duration {
        let A = b.assemble(&state, &u).unwrap().problem.A;
        let (next_a, ra) = a.step(&state, &u).unwrap();
        let (next_b, rb) = b.step(&state, &u).unwrap();
        let (distance, bound) =
            distance_and_bound(&A, (&next_a.v, &ra.stats), (&next_b.v, &rb.stats));
        assert!(
            distance <= bound * (1.0 + 1e-9) + 1e-15,
            "{label}, t = {}: ‖Δv‖_A = {distance:e} > {bound:e}",
            state.t
        );
        differing += usize::from(next_a.v != next_b.v);
        with_contacts += usize::from(!rb.contacts.is_empty());
        state = next_a;
    }
    (differing, with_contacts)
}
