//! Derivatives of a contact step and of a rollout (ICF ext. Sec. X-B).
//!
//! The falling sphere is run to t = 0.08 s (sliding after touchdown). There we take the step
//! Jacobians by the implicit function theorem with respect to the state, the friction
//! coefficient and the sphere's radius, and check them against the whole step in dual numbers
//! and central differences. Then we take the gradient of the final horizontal position after
//! 100 steps with respect to μ, by the adjoint of the rollout.
//!
//! `cargo run --release --example gradients`

use std::path::Path;

use nalgebra::DVector;
use stiction::derivatives::rollout::rollout_jacobians;
use stiction::derivatives::{gradient_check, step_jacobians, Parameter};
use stiction::error::Result;
use stiction::problem::load_problem;
use stiction::simulate::run;

fn main() -> Result<()> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/falling-sphere.toml");
    let mut problem = load_problem(&path)?;
    let sim = &mut problem.simulator;
    let params = vec![
        Parameter::parse(sim, "friction")?,
        Parameter::parse(sim, "radius@sphere")?,
    ];
    let state = run(sim, &problem.initial_state, 0.08, |_, _| {})?
        .states
        .pop()
        .expect("states recorded");
    let u = DVector::zeros(0);

    let j = step_jacobians(sim, &state, &u, &params)?;
    let nv = sim.model.nv();
    println!(
        "step at t = {:.3} s: ∂v_x'/∂v_x = {:.6}, ∂v_x'/∂μ = {:.6} m/s, ∂ω_y'/∂r = {:.3} rad/s/m",
        state.t,
        j.state[(nv + 3, nv + 3)],
        j.parameters[(nv + 3, 0)],
        j.parameters[(nv + 1, 1)]
    );

    let check = gradient_check(sim, &state, &u, &params)?;
    for b in &check.blocks {
        println!(
            "{:<16} IFT vs direct {:.1e}, IFT vs central differences {:.1e}",
            b.name, b.ift_vs_direct, b.ift_vs_fd
        );
    }

    let controls = vec![u.clone(); 100];
    let rollout = rollout_jacobians(sim, &problem.initial_state, &controls, &params)?;
    let mut dl_dx = vec![DVector::zeros(2 * nv); controls.len() + 1];
    dl_dx[controls.len()][3] = 1.0; // L = p_x after 100 steps (tangent coordinate 3).
    let gradient = rollout.adjoint_gradient(&dl_dx)?;
    println!(
        "after 100 steps: ∂p_x/∂μ = {:.6} m, ∂p_x/∂r = {:.6}",
        gradient.parameters[0], gradient.parameters[1]
    );
    Ok(())
}
