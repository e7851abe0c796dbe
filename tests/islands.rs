//! Contact islands (issue 27, item 2; `stiction::solver::islands`): bodies that share no
//! contact or constraint are solved as separate Newton problems, in parallel. The split solve
//! agrees with the monolithic one within the solver tolerance, does not depend on the number
//! of threads bit for bit, takes no more iterations per step on the clutter, and leaves the
//! implicit-function derivatives unchanged.

mod common;

use std::path::Path;

use nalgebra::DVector;

use stiction::contact::Approximation;
use stiction::derivatives::step_jacobians;
use stiction::problem::{parse_problem, Problem};
use stiction::simulate::{run, Recording};
use stiction::solver::ConvexProblem;
use stiction::step::State;

/// Two piles of three 10 cm boxes, 1 m apart on the ground, each box dropped from 1 cm above
/// the one below (Lagged, k = 1e7, δt = 2 ms, the clutter's contact parameters).
const TWO_PILES: &str = r#"
[simulation]
dt = 2e-3
duration = 0.4
approximation = "lagged"

[contact]
friction = 1.0
stiffness = 1e7
dissipation = 10.0

[[geometry]]
name = "ground"
shape = "half-space"
"#;

/// The piles' boxes: `(name, x, z, yaw)` (m, m, degrees).
const BOXES: [(&str, f64, f64, f64); 6] = [
    ("a0", -0.5, 0.055, 0.0),
    ("a1", -0.49, 0.165, 20.0),
    ("a2", -0.505, 0.275, 40.0),
    ("b0", 0.5, 0.052, 10.0),
    ("b1", 0.51, 0.162, -15.0),
    ("b2", 0.495, 0.272, 30.0),
];

fn two_piles(islands: bool) -> Problem {
    let mut text = TWO_PILES.to_string();
    for (name, x, z, yaw) in BOXES {
        text += &format!(
            "\n[[body]]\nname = \"{name}\"\nmass = 1.0\nposition = [{x}, 0.0, {z}]\n\
             rpy_deg = [0.0, 0.0, {yaw}]\n\n[[geometry]]\nname = \"{name}\"\nbody = \"{name}\"\n\
             shape = \"box\"\nsize = [0.1, 0.1, 0.1]\n"
        );
    }
    let mut p = parse_problem(&text, Path::new("two-piles.toml")).expect("two piles parse");
    p.simulator.settings.solver.islands = islands;
    p
}

fn rollout(p: &mut Problem, duration: f64) -> Recording {
    run(
        &mut p.simulator,
        &p.initial_state.clone(),
        duration,
        |_, _| (),
    )
    .expect("runs")
}

/// `‖D x‖`, `D = diag(A)^{-1/2}`: the scaled norm of SAP's criterion.
fn scaled_norm(x: &DVector<f64>, problem: &ConvexProblem<f64>) -> f64 {
    x.iter()
        .enumerate()
        .map(|(i, xi)| xi * xi / problem.A[(i, i)])
        .sum::<f64>()
        .sqrt()
}

/// Each island converges on its own momentum scale; the whole problem's residual at the
/// islands' solution is then within twice the whole problem's tolerance, plus `√(2K) ε_a`
/// (`crate::solver::islands`, "Convergence per island").
const ISLAND_TOLERANCE_FACTOR: f64 = 2.0;

/// The positions of the split and the monolithic rollouts of the two piles: each step agrees
/// within the tolerance (1e-5 of the step's momentum change, a velocity error of order
/// 1e-5 · g δt = 2e-7 m/s, far less once the boxes rest), and the stacks are stable, so the
/// rollouts stay close over 0.4 s (measured 5.1e-10 m; 20× that).
const POSITION_AGREEMENT: f64 = 1e-8;

/// The two piles give the same trajectories solved by islands as solved whole, and at every
/// state the islands' solution passes the whole problem's convergence test within
/// [`ISLAND_TOLERANCE_FACTOR`].
#[test]
fn two_separated_piles_match_the_monolithic_solve() {
    let (mut split, mut whole) = (two_piles(true), two_piles(false));
    let (a, b) = (rollout(&mut split, 0.4), rollout(&mut whole, 0.4));
    let two_islands = a.reports.iter().filter(|r| r.stats.islands == 2).count();
    assert!(two_islands > 100, "{two_islands} steps with two islands");
    assert!(b.reports.iter().all(|r| r.stats.islands <= 1));
    let gap = a
        .states
        .iter()
        .zip(&b.states)
        .map(|(x, y)| (&x.q - &y.q).amax())
        .fold(0.0, f64::max);
    assert!(gap < POSITION_AGREEMENT, "positions differ by {gap:e} m");
    // Both piles stand: the top boxes rest near 0.25 m.
    let last = a.states.last().expect("states");
    for k in [2, 5] {
        let z = last.q[7 * k + 2];
        assert!((z - 0.25).abs() < 2e-3, "box {k} at z = {z}");
    }
    let params = split.simulator.settings.solver;
    let u = DVector::zeros(0);
    for state in b.states.iter().step_by(10) {
        let problem = split
            .simulator
            .assemble(state, &u)
            .expect("assembles")
            .problem;
        let stats = split
            .simulator
            .solve(&problem, &state.v, &params)
            .expect("solves");
        let v = split.simulator.newton().v();
        let r = problem.residual(v);
        let momentum = &problem.A * (v - &problem.v0);
        let impulse = &problem.A * (v - &problem.v_star) - &r;
        let tolerance = params.absolute_tolerance * (2.0 * stats.islands.max(1) as f64).sqrt()
            + ISLAND_TOLERANCE_FACTOR
                * params.relative_tolerance
                * scaled_norm(&momentum, &problem).max(scaled_norm(&impulse, &problem));
        let residual = scaled_norm(&r, &problem);
        assert!(
            residual <= tolerance,
            "t = {}: residual {residual:e} > {tolerance:e} ({stats})",
            state.t
        );
    }
}

/// Bodies in free flight take `v = v*` exactly, with no Newton iteration: the clutter's
/// first step, every body in the air.
#[test]
fn free_bodies_take_the_free_motion_without_iterating() {
    let mut p = common::problem("clutter", Approximation::Lagged, 2e-3);
    p.simulator.settings.solver.islands = true;
    let u = DVector::zeros(0);
    let state = p.initial_state.clone();
    let v_star = p
        .simulator
        .assemble(&state, &u)
        .expect("assembles")
        .problem
        .v_star;
    let (next, report) = p.simulator.step(&state, &u).expect("steps");
    assert!(report.contacts.is_empty());
    assert_eq!((report.stats.iterations, report.stats.islands), (0, 0));
    assert_eq!(next.v, v_star);
}

/// The clutter's steps are bit-identical on one and on two threads: islands are solved
/// sequentially each, written back by index, and the statistics reduced in island order.
#[test]
fn islands_are_bit_identical_across_thread_counts() {
    let on = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("thread pool");
        pool.install(|| {
            let mut p = common::problem("clutter", Approximation::Lagged, 2e-3);
            p.simulator.settings.solver.islands = true;
            rollout(&mut p, 0.4)
        })
    };
    let (one, two) = (on(1), on(2));
    let many = one.reports.iter().filter(|r| r.stats.islands >= 2).count();
    assert!(many > 50, "{many} steps with two islands or more");
    for (a, b) in one.states.iter().zip(&two.states) {
        assert_eq!(a, b, "t = {}", a.t);
    }
    for (a, b) in one.reports.iter().zip(&two.reports) {
        assert_eq!(a.stats, b.stats);
    }
}

/// On the clutter's landing (0.5 s, Lagged), a step solved by islands takes no more Newton
/// iterations than the whole problem, on average and at worst: the step waits only for its
/// hardest island.
#[test]
fn clutter_iterations_per_step_do_not_exceed_the_monolithic_solve() {
    let iterations = |islands: bool| {
        let mut p = common::problem("clutter", Approximation::Lagged, 2e-3);
        p.simulator.settings.solver.islands = islands;
        let rec = rollout(&mut p, 0.5);
        let it: Vec<usize> = rec.reports.iter().map(|r| r.stats.iterations).collect();
        let mean = it.iter().sum::<usize>() as f64 / it.len() as f64;
        (mean, it.iter().copied().max().unwrap_or(0))
    };
    let (split, whole) = (iterations(true), iterations(false));
    assert!(
        split.0 <= whole.0 && split.1 <= whole.1,
        "islands {split:?} against the whole problem {whole:?}"
    );
}

/// The step Jacobians (IFT on the factor of the whole `H` at the islands' solution, block
/// diagonal over the islands) agree with those of the monolithic solve on the two piles at
/// rest, within the solver tolerance.
#[test]
fn step_jacobians_agree_with_the_monolithic_solve() {
    let mut p = two_piles(true);
    let state: State = rollout(&mut p, 0.2).states.pop().expect("states");
    let u = DVector::zeros(0);
    let split = step_jacobians(&mut p.simulator, &state, &u, &[]).expect("IFT by islands");
    assert!(p.simulator.newton().by_islands());
    p.simulator.settings.solver.islands = false;
    let whole = step_jacobians(&mut p.simulator, &state, &u, &[]).expect("IFT whole");
    let scale = whole.state.amax();
    let gap = (&split.state - &whole.state).amax();
    assert!(
        gap <= 1e-4 * scale,
        "state Jacobians differ by {gap:e} (scale {scale:e})"
    );
    assert_eq!(split.state.shape(), whole.state.shape());
}
