//! SAP's output against the analytic inverse dynamics of the regularized dual form
//! (Castro 2020 note, DESIGN.md): knowing the solver's `v`, each contact impulse follows in
//! closed form, `γ_ID = P_F(−R⁻¹(J v + b − v̂))`, and momentum balance
//! `A(v − v*) = Σ J_iᵀ γ_ID,i` must hold to the solver tolerance.
#![allow(non_snake_case)]

use std::path::PathBuf;

use nalgebra::DVector;
use stiction::contact::inverse_dynamics::sap_impulse;
use stiction::contact::{Approximation, ContactPool};
use stiction::problem::load_problem;
use stiction::simulate::run;
use stiction::solver::{solve, SolverParams};

/// Which region of the friction cone an impulse is in.
#[derive(Debug, PartialEq, Eq, Hash, Clone, Copy)]
enum Region {
    Stiction,
    Sliding,
    NoContact,
}

fn region(gamma: &nalgebra::Vector3<f64>, mu: f64) -> Region {
    if gamma.z <= 0.0 {
        Region::NoContact
    } else if gamma.xy().norm() < mu * gamma.z * (1.0 - 1e-9) {
        Region::Stiction
    } else {
        Region::Sliding
    }
}

/// Relative tolerance: the solve runs at ε_r = 1e-10, so impulses agree far below it.
const RELATIVE_TOLERANCE: f64 = 1e-8;

#[test]
fn solver_impulses_match_analytic_inverse_dynamics() {
    let mut regions = std::collections::HashSet::new();
    for (name, dt) in [
        ("conveyor-oscillating", 1e-2),
        ("falling-sphere", 2e-3),
        ("sliding-box", 1e-3),
        ("conveyor-constant", 1e-3),
    ] {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("problems")
            .join(format!("{name}.toml"));
        let mut p = load_problem(&path).unwrap();
        p.simulator.settings.approximation = Approximation::Sap;
        p.simulator.settings.dt = dt;
        let rec = run(&mut p.simulator, &p.initial_state, p.duration, |_, _| {}).unwrap();
        let params = SolverParams::default()
            .with_relative_tolerance(1e-10)
            .unwrap();
        let u = DVector::zeros(p.simulator.model.nu());
        for state in rec.states.iter().step_by(7) {
            let step = p.simulator.assemble(state, &u).unwrap();
            let problem = &step.problem;
            let ContactPool::Sap(contacts) = &problem.contacts else {
                panic!("SAP pool expected")
            };
            let solution = solve(problem, &state.v, &params).unwrap();
            let mut momentum = &problem.A * (&solution.v - &problem.v_star);
            // Scale: the step's momentum changes (free motion and actual).
            let mut scale = (&problem.A * (&problem.v_star - &state.v))
                .norm()
                .max((&problem.A * (&solution.v - &state.v)).norm());
            for (i, contact) in contacts.iter().enumerate() {
                let v_c = problem.contact_velocity(i, &solution.v);
                let gamma_id = sap_impulse(contact, &v_c);
                regions.insert(region(&gamma_id, contact.mu));
                let err = (solution.gamma[i] - gamma_id).norm();
                assert!(
                    err <= RELATIVE_TOLERANCE * gamma_id.norm().max(1e-12),
                    "{name} t = {}: γ {:?} vs γ_ID {gamma_id:?}",
                    state.t,
                    solution.gamma[i]
                );
                let generalized = problem.jacobian(i).transpose() * gamma_id;
                scale = scale.max(generalized.norm());
                momentum -= generalized;
            }
            assert!(
                momentum.norm() <= RELATIVE_TOLERANCE * scale.max(1e-12),
                "{name} t = {}: momentum residual {}",
                state.t,
                momentum.norm()
            );
        }
    }
    for r in [Region::Stiction, Region::Sliding, Region::NoContact] {
        assert!(
            regions.contains(&r),
            "no {r:?} contact among the samples: {regions:?}"
        );
    }
}
