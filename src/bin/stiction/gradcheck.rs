//! `stiction gradcheck`: step Jacobians by three paths, compared over the first steps of a
//! problem. The flags and the `--json` output are a user contract: keep them stable.

use stiction::contact::Approximation;
use stiction::derivatives::{gradient_check, Parameter};
use stiction::error::Result;

use crate::progress::Progress;
use crate::shipped;
use crate::GradcheckArgs;

/// Worst errors of one block over all checked steps.
struct BlockSummary {
    name: String,
    ift_vs_fd: f64,
    ift_vs_direct: f64,
}

/// Runs `gradcheck` as the command line asked.
pub fn gradcheck(args: &GradcheckArgs) -> Result<()> {
    let mut problem = shipped::load(&args.file)?;
    let sim = &mut problem.simulator;
    if let Some(approximation) = args.approximation {
        sim.settings.approximation = approximation;
    }
    if let Some(dt) = args.dt {
        sim.settings.dt = dt;
    }
    sim.settings.validate()?;
    let dissipation = if sim.settings.approximation == Approximation::Sap {
        "relaxation_time"
    } else {
        "dissipation"
    };
    // Pressure-field pairs take their stiffness from the moduli of their compliant geometries.
    let moduli: Vec<String> = sim
        .geometries()
        .iter()
        .filter(|g| g.hydroelastic.and_then(|h| h.modulus()).is_some())
        .map(|g| format!("modulus@{}", g.name))
        .collect();
    let names = args.params.clone().unwrap_or_else(|| {
        let mut names = vec!["friction".into(), "stiffness".into(), dissipation.into()];
        names.extend(moduli);
        names
    });
    let params = names
        .iter()
        .map(|n| Parameter::parse(sim, n))
        .collect::<Result<Vec<_>>>()?;
    let u = nalgebra::DVector::zeros(sim.model.nu());
    let mut state = problem.initial_state.clone();
    let mut blocks: Vec<BlockSummary> = Vec::new();
    let (mut ms_step, mut ms_ift, mut ms_direct, mut ms_fd) = (0.0, 0.0, 0.0, 0.0);
    let mut progress = Progress::new(args.steps, args.steps as f64 * sim.settings.dt, args.quiet);
    for _ in 0..args.steps {
        let check = gradient_check(sim, &state, &u, &params)?;
        for b in check.blocks {
            match blocks.iter_mut().find(|s| s.name == b.name) {
                Some(s) => {
                    s.ift_vs_fd = s.ift_vs_fd.max(b.ift_vs_fd);
                    s.ift_vs_direct = s.ift_vs_direct.max(b.ift_vs_direct);
                }
                None => blocks.push(BlockSummary {
                    name: b.name,
                    ift_vs_fd: b.ift_vs_fd,
                    ift_vs_direct: b.ift_vs_direct,
                }),
            }
        }
        ms_step += check.ms_step;
        ms_ift += check.ms_ift;
        ms_direct += check.ms_direct;
        ms_fd += check.ms_fd;
        state = sim.step(&state, &u)?.0;
        progress.step(state.t);
    }
    progress.finish();
    let n = args.steps.max(1) as f64;
    let (ms_step, ms_ift, ms_direct, ms_fd) = (ms_step / n, ms_ift / n, ms_direct / n, ms_fd / n);
    if args.json {
        let blocks: Vec<_> = blocks
            .iter()
            .map(|b| {
                serde_json::json!({
                    "name": b.name, "ift_vs_fd": b.ift_vs_fd, "ift_vs_direct": b.ift_vs_direct,
                    "ms_ift": ms_ift, "ms_direct": ms_direct, "ms_fd": ms_fd,
                })
            })
            .collect();
        let out = serde_json::json!({ "problem": problem.name, "steps": args.steps, "ms_step": ms_step, "blocks": blocks });
        println!("{out}");
    } else {
        println!(
            "{}: worst corrected relative errors over {} steps ({}, δt = {} s)",
            problem.name, args.steps, sim.settings.approximation, sim.settings.dt
        );
        println!("{:<24}{:>14}{:>16}", "block", "IFT vs FD", "IFT vs direct");
        for b in &blocks {
            println!(
                "{:<24}{:>14.2e}{:>16.2e}",
                b.name, b.ift_vs_fd, b.ift_vs_direct
            );
        }
        println!("ms per step: forward {ms_step:.3}, IFT Jacobian {ms_ift:.3}, direct duals {ms_direct:.3}, central differences {ms_fd:.3}");
        println!("(all blocks of a path come from one pass, so the times are per path)");
    }
    Ok(())
}
