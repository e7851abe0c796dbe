//! `stiction sweep`: the same problem at several contact stiffnesses, run in parallel; mean
//! steady penetration and solver cost per stiffness (ICF Sec. X-A, Figs. 17-18). A stiffness
//! whose rollout fails is named with its error; the rows of the others are written all the
//! same (and the command fails); `run.json` counts rollouts.

use std::io::Write;
use std::time::Instant;

use rayon::prelude::*;
use stiction::budget;
use stiction::error::{Error, Result};
use stiction::problem::Problem;
use stiction::report::plot::{write_sweep_plot, ImageFormat};
use stiction::simulate::{recording_steps, run_steps, Rollout, RunEnd, SweepRow};

use crate::interrupt;
use crate::output;
use crate::progress::BatchProgress;
use crate::run_record::{solver_stats, RunRecord};
use crate::shard::write_sweep_shard;
use crate::shipped;
use crate::simulate::status_of;
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
            let n = ((stop / start).ln() / factor.ln() + 1e-9).floor();
            let count = budget::count("--stiffness", "rollouts", n + 1.0)?;
            (0..count).map(|i| start * factor.powi(i as i32)).collect()
        }
        [list] => {
            budget::count("--stiffness", "rollouts", list.split(',').count() as f64)?;
            list.split(',').map(number).collect::<Result<Vec<_>>>()?
        }
        _ => return Err(bad("expected START:STOP:FACTOR or a comma-separated list")),
    };
    Ok(values)
}

/// The problem of `args` with its overrides applied and the stiffness of every pair set to `k`.
fn problem_at(args: &SweepArgs, k: f64) -> Result<Problem> {
    let mut problem = shipped::load(&args.file)?;
    let settings = &mut problem.simulator.settings;
    if let Some(approximation) = args.approximation {
        settings.approximation = approximation;
    }
    if let Some(dt) = args.dt {
        settings.dt = dt;
    }
    if let Some(linear_solver) = args.linear_solver {
        settings.solver.linear_solver = linear_solver;
    }
    problem.set_contact_stiffness(k)?;
    if let Some(duration) = args.duration {
        problem.duration = crate::simulate::checked_duration(duration)?;
    }
    let field = match (args.dt, args.duration) {
        (Some(_), _) => "--dt",
        (None, Some(_)) => "--duration",
        (None, None) => "simulation.duration",
    };
    recording_steps(&problem.simulator, field, problem.duration)?;
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
    interrupt::install();
    let start = Instant::now();
    let progress = BatchProgress::new(batch.len(), "rollouts", args.quiet);
    let t_from = duration - args.settle;
    // Each rollout is reduced to its row as soon as it ends, so that only the rollouts under
    // way hold a recording; each is computed exactly as alone (`simulate::run_batch`).
    let outcomes: Vec<Result<SweepRow>> = batch
        .par_iter_mut()
        .zip(&stiffness)
        .map(|(r, &k)| {
            let steps = recording_steps(&r.simulator, "duration", r.duration)?;
            let run = run_steps(
                &mut r.simulator,
                &r.controller,
                &r.initial,
                steps,
                |_, _, _| interrupt::flow(),
            );
            progress.done(|| format!("k = {k:e} N/m"));
            match run.end {
                RunEnd::Complete => Ok(SweepRow::new(k, &run.recording, t_from)),
                RunEnd::Interrupted => Err(Error::Interrupted {
                    steps_completed: run.recording.reports.len(),
                    t: run.recording.states.last().map_or(0.0, |s| s.t),
                }),
                RunEnd::Failed(e) => Err(e),
            }
        })
        .collect();
    progress.finish();
    let wall = start.elapsed().as_secs_f64();
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    let mut first_error = None;
    let mut interrupted = None;
    for (k, outcome) in stiffness.iter().zip(outcomes) {
        match outcome {
            Ok(row) => rows.push(row),
            Err(e @ Error::Interrupted { .. }) => interrupted = interrupted.or(Some(e)),
            Err(e) => {
                failures.push(format!("stiffness {k:e} N/m: {e}"));
                first_error = first_error.or(Some(e));
            }
        }
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
    let plots = if rows.is_empty() {
        Vec::new()
    } else {
        write_sweep_plot(&rows, &title, &out, &[ImageFormat::Png])?
    };
    if let Some(shard) = args.shard {
        write_sweep_shard(&out, shard, &name, &all, &title)?;
    }
    let end = match (interrupted, failures.is_empty()) {
        (Some(e), _) => Err(e),
        (None, true) => Ok(()),
        (None, false) => Err(Error::RunsFailed {
            total: stiffness.len(),
            failures,
        }),
    };
    let record = RunRecord {
        steps_planned: stiffness.len(),
        steps_completed: rows.len(),
        solver_stats: solver_stats(std::iter::empty(), first_error.as_ref()),
        ..RunRecord::new(status_of(&end), end.as_ref().err())
    };
    record.write(&out)?;
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
    end
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
