//! Newton's secant friction curvature at slip reversals (`SolverParams::reversal_secant`,
//! `src/solver/slip_reversal.rs`) on the clutter of ICF Sec. X-A: it cuts Lagged's Newton
//! iterations through the impacts, and every step's result stays within the solver's tolerance
//! of the solve with Newton's exact Hessian ([`common::distance_and_bound`]).

mod common;

use stiction::contact::Approximation;
use stiction::step::{Simulator, State};

/// The first 0.5 s of the clutter: the columns fall and the lowest layers land, where contacts
/// slide and come to stick.
const DURATION: f64 = 0.5;

fn clutter(approximation: Approximation, secant: bool) -> (Simulator, State) {
    common::clutter(approximation, |solver| solver.with_reversal_secant(secant))
}

fn total_iterations(approximation: Approximation, secant: bool) -> usize {
    let (mut sim, x0) = clutter(approximation, secant);
    common::total_iterations(&mut sim, &x0, DURATION)
}

/// Lagged: 1,982 iterations against 2,693 with the exact Hessian (26 % fewer); the
/// regularized Lagged, whose stiction tolerance grows in the impacts, gains less.
#[test]
fn the_secant_cuts_lagged_iterations_through_the_impacts() {
    let exact = total_iterations(Approximation::Lagged, false);
    let secant = total_iterations(Approximation::Lagged, true);
    assert!(
        (secant as f64) < 0.8 * exact as f64,
        "Lagged: {secant} iterations with the secant, {exact} exact"
    );
    let exact = total_iterations(Approximation::RegularizedLagged, false);
    let secant = total_iterations(Approximation::RegularizedLagged, true);
    assert!(
        secant < exact,
        "regularized Lagged: {secant} iterations with the secant, {exact} exact"
    );
}

/// Each step of the first 0.5 s, solved from the same state both ways, Lagged and the
/// regularized Lagged:
/// the velocities agree within the bound of the two solves' tolerances, and the secant did
/// change the result of most steps with contacts, so the bound is not met trivially (measured:
/// 172 and 158 of 218).
#[test]
fn every_step_stays_within_the_tolerance_of_the_exact_hessians_solve() {
    for approximation in [Approximation::Lagged, Approximation::RegularizedLagged] {
        let (mut secant, x0) = clutter(approximation, true);
        let (mut exact, _) = clutter(approximation, false);
        let (changed_steps, contact_steps) = common::compare_steps(
            &approximation.to_string(),
            &mut secant,
            &mut exact,
            x0,
            DURATION,
        );
        assert!(
            contact_steps > 50 && 4 * changed_steps > contact_steps,
            "{approximation}: {changed_steps} of {contact_steps} steps with contacts changed"
        );
    }
}
