//! Dense and supernodal sparse Cholesky behind the Newton solver give the same step (ICF ext.
//! Sec. X; DESIGN "equivalence tests"): random piles of spheres and boxes, every contact
//! model, the converged velocities agree to 1e-10 relative.

use std::path::Path;

use nalgebra::DVector;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use stiction::contact::Approximation;
use stiction::problem::{parse_problem, Problem};
use stiction::solver::linalg::LinearSolver;
use stiction::solver::{solve, SolverParams};

/// Dense and sparse solutions differ only by round-off in the factorization, amplified by the
/// conditioning of H and by the Newton iterations: 1e-10 relative (the bound).
const SAME_STEP: f64 = 1e-10;
/// The simulator's own tolerance (ε_r = 1e-5): both runs stop on the optimality test, so
/// what differs is the round-off of the factorizations along the Newton path. (Solved to
/// round-off instead, the cost-stagnation stop lands anywhere on the flat bottom of an
/// ill-conditioned step: 4e-10 apart on seed 3 with Similar, κ₁ ≈ 3e8.)
const TOLERANCE: f64 = 1e-5;

/// A random pile: `n` spheres and boxes (10 cm) in layers of a 4 × 3 grid with 4-6 mm gaps
/// (inside the 1 cm contact margin, so every neighbour is a contact), the bottom layer 0.1 mm
/// into the ground, tilted by up to 2° and moving at up to 5 cm/s as in a settling pile.
/// (Thrown together with centimetre overlaps instead, steps take 60-90 Newton iterations
/// through the kinks of the potentials, and any two factorizations drift apart to ~1e-9.)
fn random_pile(seed: u64, n: usize) -> Problem {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut text = String::from(
        "[simulation]\ndt = 2e-3\nduration = 0.1\n\n[contact]\nfriction = 1.0\nstiffness = 1e7\n\n\
         [[geometry]]\nname = \"ground\"\nshape = \"half-space\"\n\n",
    );
    let pitch = 0.105;
    for i in 0..n {
        let (cell, layer) = (i % 12, i / 12);
        let mut jitter = || rng.random_range(-0.001..0.001);
        let x = pitch * (cell % 4) as f64 + jitter();
        let y = pitch * (cell / 4) as f64 + jitter();
        let z = 0.0499 + pitch * layer as f64;
        let (vx, vz) = (rng.random_range(-0.05..0.05), rng.random_range(-0.05..0.0));
        text += &format!(
            "[[body]]\nname = \"b{i}\"\nmass = 1.0\nposition = [{x}, {y}, {z}]\nvelocity = [{vx}, 0.0, {vz}]\n\
             rpy_deg = [{}, {}, {}]\n\n[[geometry]]\nname = \"g{i}\"\nbody = \"b{i}\"\n",
            rng.random_range(-2.0..2.0),
            rng.random_range(-2.0..2.0),
            rng.random_range(-2.0..2.0),
        );
        text += if (i + layer) % 2 == 0 {
            "shape = \"sphere\"\nradius = 0.05\n\n"
        } else {
            "shape = \"box\"\nsize = [0.1, 0.1, 0.1]\n\n"
        };
    }
    parse_problem(&text, Path::new("random-pile.toml")).expect("valid pile")
}

#[test]
fn dense_and_sparse_give_the_same_step_on_random_piles() {
    let mut checked = 0;
    for seed in 0..4 {
        for approximation in Approximation::ALL {
            let mut p = random_pile(seed, 24);
            p.simulator.settings.approximation = approximation;
            let state = p.initial_state.clone();
            let problem = p
                .simulator
                .assemble(&state, &DVector::zeros(0))
                .expect("assembles")
                .problem;
            assert!(problem.nc() > 10, "a pile has contacts: {}", problem.nc());
            let params = |linear_solver| {
                SolverParams::default()
                    .with_linear_solver(linear_solver)
                    .with_relative_tolerance(TOLERANCE)
                    .expect("valid tolerance")
                    .with_factor_at_solution(true)
            };
            let dense = solve(&problem, &state.v, &params(LinearSolver::Dense)).expect("dense");
            let sparse = solve(&problem, &state.v, &params(LinearSolver::Sparse)).expect("sparse");
            assert!(sparse.factor.as_ref().unwrap().cholesky.is_sparse());
            assert!(!dense.factor.as_ref().unwrap().cholesky.is_sparse());
            let error = (&dense.v - &sparse.v).norm() / dense.v.norm();
            assert!(
                error <= SAME_STEP,
                "seed {seed}, {approximation}: relative difference {error:e}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 16);
}

#[test]
fn auto_picks_sparse_for_many_bodies_and_dense_for_few() {
    let solved = |n: usize| {
        let mut p = random_pile(7, n);
        let state = p.initial_state.clone();
        let problem = p
            .simulator
            .assemble(&state, &DVector::zeros(0))
            .unwrap()
            .problem;
        let params = SolverParams::default().with_factor_at_solution(true);
        let solution = solve(&problem, &state.v, &params).unwrap();
        solution.factor.unwrap().cholesky.is_sparse()
    };
    assert!(solved(20), "120 velocities: sparse");
    assert!(!solved(4), "24 velocities: dense");
}

/// Step Jacobians by the IFT on a dense and on a sparse factor of the same `H`
/// (many-right-hand-side solves, ICF ext. Sec. X-B): the same to round-off amplified by
/// `κ(H)` ≈ 1e7 on a pile, hence 1e-8 relative (4.5e-13 measured).
const SAME_JACOBIAN: f64 = 1e-8;

#[test]
fn ift_jacobians_are_the_same_on_a_sparse_factor() {
    let jacobian = |linear_solver| {
        let mut p = random_pile(11, 16);
        p.simulator.settings.solver.linear_solver = linear_solver;
        let state = p.initial_state.clone();
        stiction::derivatives::ift::step_jacobians(
            &mut p.simulator,
            &state,
            &DVector::zeros(0),
            &[],
        )
        .expect("IFT Jacobians")
        .state
    };
    let (dense, sparse) = (
        jacobian(LinearSolver::Dense),
        jacobian(LinearSolver::Sparse),
    );
    assert_eq!(dense.shape(), (192, 192));
    let error = (&dense - &sparse).norm() / dense.norm();
    assert!(error <= SAME_JACOBIAN, "relative difference {error:e}");
}
