//! `stiction sweep`: the same problem at several contact stiffnesses, run in parallel; mean
//! steady penetration and solver cost per stiffness (ICF Sec. X-A, Figs. 17-18).

use std::io::Write;
use std::time::Instant;

use stiction::error::{Error, Result};
use stiction::problem::{Problem, Stepper};
use stiction::report::plot::{write_sweep_plot, ImageFormat};
use stiction::simulate::{run_batch, Rollout, SweepRow};

use crate::output;
use crate::progress::Spinner;
use crate::shard::write_sweep_shard;
use crate::shipped;
use crate::SweepArgs;

/// File name of the sweep table.
pub const SWEEP_CSV: &str = "sweep.csv";

/// Header of [`SWEEP_CSV`].
pub const SWEEP_HEADER: &str =
    "stiffness,mean_penetration,mean_iterations,max_iterations,mean_log10_condition,steps";

/// Stiffness values (N/m) of `spec`: `START:STOP:FACTOR` (START, START·FACTOR, … up to STOP)
/// or a comma-separated list.
pub fn parse_stiffness(spec: &str) -> Result<Vec<f64>> {
    let bad = |why: &str| Error::invalid("--stiffness", spec, why);
    let number = |s: &str| {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x > 0.0)
            .ok_or_else(|| bad("values must be positive finite numbers (N/m)"))
    };
    let values = match spec.split(':').collect::<Vec<_>>().as_slice() {
        [start, stop, factor] => {
            let (start, stop, factor) = (number(start)?, number(stop)?, number(factor)?);
            if factor <= 1.0 || stop < start {
                return Err(bad(
                    "expected START:STOP:FACTOR with START ≤ STOP and FACTOR > 1",
                ));
            }
            let n = ((stop / start).ln() / factor.ln() + 1e-9).floor() as i32;
            (0..=n).map(|i| start * factor.powi(i)).collect()
        }
        [list] => list.split(',').map(number).collect::<Result<Vec<_>>>()?,
        _ => return Err(bad("expected START:STOP:FACTOR or a comma-separated list")),
    };
    Ok(values)
}

/// The problem of `args` with its overrides applied and the stiffness of every pair set to `k`.
fn problem_at(args: &SweepArgs, k: f64) -> Result<Problem> {
    let mut problem = shipped::load(&args.file)?;
    if problem.stepper != Stepper::Convex {
        return Err(Error::invalid(
            "stepper",
            "ncp",
            "the sweep runs the convex stepper; its contacts have no stiffness",
        ));
    }
    let sim = &mut problem.simulator;
    if let Some(approximation) = args.approximation {
        sim.settings.approximation = approximation;
    }
    if let Some(dt) = args.dt {
        sim.settings.dt = dt;
    }
    if let Some(linear_solver) = args.linear_solver {
        sim.settings.solver.linear_solver = linear_solver;
    }
    sim.settings.contact.stiffness = k;
    sim.settings.validate()?;
    let own: Vec<_> = sim
        .geometries()
        .iter()
        .enumerate()
        .filter(|(_, g)| g.contact.is_some())
        .map(|(i, g)| (i, g.clone()))
        .collect();
    for (i, mut g) in own {
        if let Some(c) = &mut g.contact {
            c.stiffness = k;
        }
        sim.replace_geometry(i, g)?;
    }
    if let Some(duration) = args.duration {
        problem.duration = crate::simulate::checked_duration(duration)?;
    }
    Ok(problem)
}

/// Runs `sweep` as the command line asked.
pub fn sweep(args: &SweepArgs) -> Result<()> {
    let stiffness = parse_stiffness(&args.stiffness)?;
    if !(args.settle > 0.0 && args.settle.is_finite()) {
        return Err(Error::invalid(
            "--settle",
            args.settle,
            "the steady window must be positive and finite (s)",
        ));
    }
    let all = stiffness;
    let stiffness: Vec<f64> = match args.shard {
        Some(shard) => all
            .iter()
            .enumerate()
            .filter(|(k, _)| shard.takes(*k))
            .map(|(_, &k)| k)
            .collect(),
        None => all.clone(),
    };
    if stiffness.is_empty() {
        if !args.quiet {
            println!(
                "part {} has no stiffness of the {} given: nothing to do",
                args.shard.map_or(0, |s| s.index),
                all.len()
            );
        }
        return Ok(());
    }
    let problems = stiffness
        .iter()
        .map(|&k| problem_at(args, k))
        .collect::<Result<Vec<_>>>()?;
    let name = problems[0].name.clone();
    let (duration, approximation, dt) = (
        problems[0].duration,
        problems[0].simulator.settings.approximation,
        problems[0].simulator.settings.dt,
    );
    let out =
        output::explicit_or_numbered(args.output.prepare_explicit()?, &format!("{name}-sweep"))?;
    let mut batch: Vec<Rollout> = problems
        .into_iter()
        .map(|p| Rollout {
            simulator: p.simulator,
            controller: p.controller,
            initial: p.initial_state,
            duration: p.duration,
        })
        .collect();
    if !args.quiet {
        println!(
            "{name} ({approximation}, δt = {dt} s, {duration} s): {} stiffnesses on {} threads …",
            batch.len(),
            rayon::current_num_threads()
        );
    }
    let start = Instant::now();
    let spinner = Spinner::new(&format!("{} rollouts in parallel", batch.len()), args.quiet);
    let recordings = run_batch(&mut batch);
    spinner.finish();
    let wall = start.elapsed().as_secs_f64();
    let t_from = duration - args.settle;
    let mut rows = Vec::new();
    for (k, recording) in stiffness.iter().zip(recordings) {
        let recording = recording
            .map_err(|e| Error::invalid("stiffness", k, &format!("the rollout failed: {e}")))?;
        rows.push(SweepRow::new(*k, &recording, t_from));
    }
    let csv = out.join(SWEEP_CSV);
    let io_error = |source| Error::Io {
        path: csv.clone(),
        source,
    };
    let mut file = std::fs::File::create(&csv).map_err(io_error)?;
    let mut text = format!("{SWEEP_HEADER}\n");
    let opt = |x: Option<f64>| x.map(|v| format!("{v:e}")).unwrap_or_default();
    for r in &rows {
        text += &format!(
            "{:e},{},{},{},{},{}\n",
            r.stiffness,
            opt(r.mean_penetration),
            r.mean_iterations,
            r.max_iterations,
            opt(r.mean_log10_condition),
            r.steps
        );
    }
    file.write_all(text.as_bytes()).map_err(io_error)?;
    let title = format!(
        "{name}: {approximation}, δt = {dt} s, steady window {} s",
        args.settle
    );
    let plots = write_sweep_plot(&rows, &title, &out, &[ImageFormat::Png])?;
    if let Some(shard) = args.shard {
        write_sweep_shard(&out, shard, &name, &all, &title)?;
    }
    if !args.quiet {
        println!(
            "{} rollouts in {wall:.2} s wall time ({:.2} rollouts/s)",
            rows.len(),
            rows.len() as f64 / wall
        );
        println!("      k (N/m)  penetration (m)  iterations/step (max)  log10 κ₁");
        for r in &rows {
            println!(
                "{:>13.3e}  {:>15}  {:>13.2} ({:>4})  {:>8}",
                r.stiffness,
                r.mean_penetration
                    .map_or("-".into(), |p| format!("{p:.3e}")),
                r.mean_iterations,
                r.max_iterations,
                r.mean_log10_condition
                    .map_or("-".into(), |c| format!("{c:.2}"))
            );
        }
        println!("wrote {}:", out.display());
        println!("  {}", csv.display());
        for p in plots {
            println!("  {}", p.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stiffness_ranges_and_lists() {
        assert_eq!(parse_stiffness("1e3:1e5:10").unwrap(), vec![1e3, 1e4, 1e5]);
        assert_eq!(parse_stiffness("1e3, 2e3").unwrap(), vec![1e3, 2e3]);
        assert_eq!(parse_stiffness("1e3:1e12:10").unwrap().len(), 10);
        assert!(parse_stiffness("1e3:1e2:10").is_err());
        assert!(parse_stiffness("1e3:1e5:1").is_err());
        assert!(parse_stiffness("-1").is_err());
        assert!(parse_stiffness("a:b").is_err());
    }
}
