//! Shared by the integration tests: the shipped problem files, and the bound within which two
//! converged solves of one step agree.
#![allow(dead_code, non_snake_case)]

use std::path::PathBuf;

use nalgebra::{DMatrix, DVector};

use stiction::contact::Approximation;
use stiction::problem::{load_problem, Problem};
use stiction::solver::SolverStats;

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
