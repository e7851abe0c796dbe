//! Castro 2020 note: the gliding artifact. A box free to move vertically only rests on a belt
//! running at constant speed `‖v_t‖`.
//!
//! Lagged rests at the penetration `m g / (n k)` on its `n` corners. Similar and SAP couple
//! the slip into the normal direction and glide above the belt, at the gap
//! `φ → μ δt ‖v_t‖` (Similar) and `φ → μ (δt + τ_d) ‖v_t‖` (SAP).
//!
//! `cargo run --release --example conveyor_constant`

mod common;

use stiction::contact::Approximation;
use stiction::error::Result;
use stiction::problem::Problem;
use stiction::simulate::Recording;

fn main() {
    common::table(
        "conveyor-constant",
        "final gap φ (m)  predicted φ (m)  prediction",
        row,
    );
}

/// The columns of one approximation's row.
fn row(problem: &Problem, rec: &Recording) -> Result<String> {
    let settings = problem.simulator.settings;
    let model = &problem.simulator.model;
    let weight = model.bodies[0].inertia.mass * model.gravity.norm();
    let last = rec.reports.last().expect("at least one step");
    let n = last.contacts.len() as f64;
    // The gap φ is minus the penetration; all corners behave alike.
    let gap = -last.contacts.iter().map(|c| c.penetration).sum::<f64>() / n;
    let slip = last.contacts.iter().map(|c| c.slip).sum::<f64>() / n;
    let (mu, k, tau_d, dt) = (
        settings.contact.mu,
        settings.contact.stiffness,
        settings.contact.relaxation_time,
        settings.dt,
    );
    let (predicted, formula) = match settings.approximation {
        Approximation::Lagged | Approximation::RegularizedLagged => {
            (-weight / (n * k), "−m g / (n k)")
        }
        Approximation::Similar => (mu * dt * slip, "μ δt ‖v_t‖"),
        Approximation::Sap => (mu * (dt + tau_d) * slip, "μ (δt + τ_d) ‖v_t‖"),
    };
    Ok(format!("{gap:>15.4e}  {predicted:>15.4e}  {formula}"))
}
