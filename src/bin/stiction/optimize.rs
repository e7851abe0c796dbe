//! `stiction optimize` and `stiction mpc`: trajectory optimization of a problem file's
//! `[optimize]` task (see `problems/README.md`).

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use clap::Args;

use stiction::error::{Error, Result};
use stiction::optimize::output::{
    actuator_names, recording, write_controls, write_iterations, write_states, Summary,
};
use stiction::optimize::{
    optimization, optimize_problem, run_mpc_observed, DerivativeMethod, Status as IlqrStatus, Task,
};
use stiction::problem::Problem;
use stiction::report::animate::{AnimationSettings, Projection};
use stiction::report::optimization::write_optimization_plots;
use stiction::report::replay::ReplayRecording;
use stiction::report::{csv, plot};
use stiction::step::{State, StepReport};

use crate::interrupt;
use crate::output;
use crate::progress::Progress;
use crate::replay;
use crate::run_record::{solver_stats, RunRecord, Status};
use crate::shipped;
use crate::simulate::status_of;

/// Arguments of `stiction optimize`.
#[derive(Args)]
pub struct OptimizeArgs {
    /// Problem file with an [optimize] table (TOML, see problems/README.md), or the name of a
    /// shipped problem.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    #[command(flatten)]
    output: output::OutArgs,
    /// Step Jacobians by central differences instead of the implicit function theorem.
    #[arg(long)]
    fd: bool,
    /// Iteration limit, replacing the problem file's.
    #[arg(long, value_name = "N")]
    max_iterations: Option<usize>,
    #[command(flatten)]
    animation: output::AnimationArgs,
    /// Print one JSON object instead of the summary.
    #[arg(long)]
    json: bool,
    /// No progress bar, no summary (the JSON object of --json is still printed).
    #[arg(long)]
    quiet: bool,
}

/// Arguments of `stiction mpc`.
#[derive(Args)]
pub struct MpcArgs {
    /// Problem file with an [optimize] table (TOML, see problems/README.md), or the name of a
    /// shipped problem.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    #[command(flatten)]
    output: output::OutArgs,
    #[command(flatten)]
    animation: output::AnimationArgs,
    /// Print one JSON object instead of the summary.
    #[arg(long)]
    json: bool,
    /// No progress bar, no summary (the JSON object of --json is still printed).
    #[arg(long)]
    quiet: bool,
}

/// What [`write_trajectory`] draws besides the tables and figures.
struct Extras<'a> {
    /// `animation.gif` in this projection.
    animation: Option<Projection>,
    /// `replay/`, with the targets of this task.
    replay: Option<&'a Task>,
    /// A progress bar while the animation encodes.
    progress: bool,
}

/// Writes the trajectory tables and figures shared by both commands.
fn write_trajectory(
    dir: &Path,
    problem: &Problem,
    states: &[State],
    controls: &[nalgebra::DVector<f64>],
    reports: &[StepReport],
    costs: &[(usize, f64, bool)],
    extras: Extras,
) -> Result<Vec<PathBuf>> {
    let (name, sim) = (problem.name.as_str(), &problem.simulator);
    let mut written = vec![
        write_controls(dir, &sim.model, states, controls)?,
        write_states(dir, &sim.model, states)?,
    ];
    let rec = recording(states, reports);
    written.extend(csv::write_tables(&rec, sim, dir)?);
    written.extend(plot::write_plots(
        &rec,
        sim,
        name,
        dir,
        &[plot::ImageFormat::Png],
    )?);
    written.extend(write_optimization_plots(
        dir,
        name,
        costs,
        states,
        controls,
        &actuator_names(&sim.model),
    )?);
    if let Some(projection) = extras.animation {
        let settings = AnimationSettings {
            projection,
            ..Default::default()
        };
        written.push(crate::simulate::animation(
            &rec,
            sim,
            name,
            &dir.join("animation.gif"),
            &settings,
            extras.progress,
        )?);
    }
    if let Some(task) = extras.replay {
        let names = stiction::report::body_names(&sim.model);
        written.push(replay::write(
            dir,
            &[ReplayRecording {
                name: "trajectory".into(),
                title: format!("{name}: optimized trajectory"),
                sim,
                recording: &rec,
                targets: replay::targets(task, &names),
                markers: Vec::new(),
            }],
        )?);
    }
    Ok(written)
}

/// `stiction optimize FILE --out DIR`.
pub fn optimize(args: &OptimizeArgs) -> Result<()> {
    if args.max_iterations == Some(0) {
        return Err(Error::invalid("--max-iterations", 0, "need at least 1"));
    }
    let problem = shipped::load(&args.file)?;
    // The [optimize] table and the replay's three.js are checked before a folder is made.
    optimization(&problem)?;
    replay::prepare(args.animation.replay)?;
    let out = output::explicit_or_numbered(args.output.prepare_explicit()?, &problem.name)?;
    // Made once the iteration limit is known; `adjust` runs before the first iteration.
    let progress: RefCell<Option<Progress>> = RefCell::new(None);
    let planned = std::cell::Cell::new(0);
    interrupt::install();
    let run = optimize_problem(
        problem,
        |o| {
            if args.fd {
                o.params.derivatives = DerivativeMethod::FiniteDifference;
            }
            if let Some(n) = args.max_iterations {
                o.params.max_iterations = n;
            }
            planned.set(o.params.max_iterations);
            *progress.borrow_mut() =
                Some(Progress::iterations(o.params.max_iterations, args.quiet));
        },
        &mut |s| {
            if let Some(p) = progress.borrow_mut().as_mut() {
                p.iteration(|| format!("cost {:.6e}", s.cost));
            }
            interrupt::flow()
        },
    );
    if let Some(p) = progress.into_inner() {
        p.finish();
    }
    let run = match run {
        Ok(run) => run,
        Err(e) => return Err(failed(&out, planned.get(), e)),
    };
    let report = &run.report;
    let costs: Vec<(usize, f64, bool)> = std::iter::once((0, report.initial_cost, true))
        .chain(
            report
                .iterations
                .iter()
                .map(|s| (s.iteration, s.cost, s.accepted)),
        )
        .collect();
    let traj = &report.trajectory;
    let mut written = vec![write_iterations(&out, &report.iterations)?];
    written.extend(write_trajectory(
        &out,
        &run.problem,
        &traj.states,
        &traj.controls,
        &traj.reports,
        &costs,
        Extras {
            animation: args.animation.wanted(&run.problem),
            replay: args.animation.replay.then_some(&run.optimization.task),
            progress: !args.quiet && !args.json,
        },
    )?);
    let end = if report.status == IlqrStatus::Interrupted {
        Err(Error::Interrupted {
            steps_completed: report.iterations.len(),
            t: traj.states.last().map_or(0.0, |s| s.t),
        })
    } else {
        Ok(())
    };
    RunRecord {
        steps_planned: planned.get(),
        steps_completed: report.iterations.len(),
        t: traj.states.last().map(|s| s.t),
        solver_stats: solver_stats(
            traj.reports
                .iter()
                .map(|r| (r.stats.iterations, r.stats.line_search_iterations)),
            None,
        ),
        ..RunRecord::new(status_of(&end), None)
    }
    .write(&out)?;
    if end.is_err() && !args.quiet {
        eprintln!(
            "interrupted: the best trajectory after {} iterations is in {}",
            report.iterations.len(),
            out.display()
        );
    }
    end?;
    let summary = Summary {
        problem: run.problem.name.clone(),
        status: report.status.name().into(),
        iterations: report.iterations.len(),
        initial_cost: report.initial_cost,
        final_cost: traj.cost,
        task_error: run.outcome.error,
        wall_s: report.wall_s,
    };
    if args.json {
        println!("{}", summary.to_json());
        return Ok(());
    }
    if args.quiet {
        return Ok(());
    }
    let (rollout, derivatives, backward) = report.time_split();
    println!(
        "{}: {} after {} iterations ({} accepted), cost {:.6} → {:.6}",
        summary.problem,
        summary.status,
        summary.iterations,
        report.iterations.iter().filter(|s| s.accepted).count(),
        summary.initial_cost,
        summary.final_cost
    );
    println!(
        "wall time {:.2} s: rollout {:.2} s, derivatives ({}) {:.2} s, backward pass {:.3} s",
        report.wall_s,
        rollout,
        if args.fd {
            "central differences"
        } else {
            "IFT"
        },
        derivatives,
        backward
    );
    for (check, e) in run.optimization.task.checks.iter().zip(&run.outcome.errors) {
        println!(
            "task: {} at t = {:.3} s is {:.4} m from its target (tolerance {} m){}",
            run.problem.simulator.model.bodies[check.body].name,
            check.time,
            e,
            check.tolerance,
            if *e <= check.tolerance {
                ""
            } else {
                ", NOT achieved"
            }
        );
    }
    println!(
        "task error {:.4} m: {}",
        summary.task_error,
        if run.outcome.achieved {
            "achieved"
        } else {
            "not achieved"
        }
    );
    println!("wrote {} files to {}", written.len(), out.display());
    Ok(())
}

/// `stiction mpc FILE --out DIR`.
pub fn mpc(args: &MpcArgs) -> Result<()> {
    let mut problem = shipped::load(&args.file)?;
    let mut opt = optimization(&problem)?;
    replay::prepare(args.animation.replay)?;
    let out = output::explicit_or_numbered(
        args.output.prepare_explicit()?,
        &format!("{}-mpc", problem.name),
    )?;
    let mut progress = Progress::new(opt.mpc.steps, f64::NAN, args.quiet);
    interrupt::install();
    let report = run_mpc_observed(
        &mut problem.simulator,
        &mut opt.problem,
        &opt.initial_controls,
        &opt.mpc,
        &opt.params,
        &mut |s| {
            progress.iteration(|| {
                format!(
                    "t = {:.3} s, {} iterations, plan cost {:.6e}",
                    s.t, s.iterations, s.cost
                )
            });
            interrupt::flow()
        },
    );
    progress.finish();
    let report = match report {
        Ok(report) => report,
        Err(e) => return Err(failed(&out, opt.mpc.steps, e)),
    };
    let outcome = opt.task.evaluate(&problem.simulator.model, &report.states);
    let costs: Vec<(usize, f64, bool)> = report
        .solves
        .iter()
        .enumerate()
        .map(|(k, s)| (k, s.cost, true))
        .collect();
    let mut written = write_trajectory(
        &out,
        &problem,
        &report.states,
        &report.controls,
        &report.reports,
        &costs,
        Extras {
            animation: args.animation.wanted(&problem),
            replay: args.animation.replay.then_some(&opt.task),
            progress: !args.quiet && !args.json,
        },
    )?;
    written.push(stiction::optimize::output::write_mpc_solves(
        &out,
        &report.solves,
    )?);
    let mut data = stiction::multibody::MultibodyData::new(&problem.simulator.model);
    opt.problem.num_steps = report.controls.len();
    let closed_loop_cost = opt.problem.total_cost(
        &problem.simulator,
        &mut data,
        &report.states,
        &report.controls,
    );
    let end = if report.controls.len() < opt.mpc.steps {
        Err(Error::Interrupted {
            steps_completed: report.controls.len(),
            t: report.states.last().map_or(0.0, |s| s.t),
        })
    } else {
        Ok(())
    };
    RunRecord {
        steps_planned: opt.mpc.steps,
        steps_completed: report.controls.len(),
        t: report.states.last().map(|s| s.t),
        solver_stats: solver_stats(
            report
                .reports
                .iter()
                .map(|r| (r.stats.iterations, r.stats.line_search_iterations)),
            None,
        ),
        ..RunRecord::new(status_of(&end), None)
    }
    .write(&out)?;
    end?;
    let summary = Summary {
        problem: problem.name.clone(),
        status: "closed-loop".into(),
        iterations: report.solves.iter().map(|s| s.iterations).sum(),
        initial_cost: report.solves.first().map_or(f64::NAN, |s| s.cost),
        final_cost: closed_loop_cost,
        task_error: outcome.error,
        wall_s: report.wall_s,
    };
    if args.json {
        println!("{}", summary.to_json());
        return Ok(());
    }
    if args.quiet {
        return Ok(());
    }
    println!(
        "{}: {} closed-loop steps, {} re-solves ({} iLQR iterations in all, horizon {} steps), {:.2} s wall",
        summary.problem,
        report.controls.len(),
        report.solves.len(),
        summary.iterations,
        opt.mpc.horizon,
        report.wall_s
    );
    println!(
        "closed-loop cost {:.6} (first plan {:.6}); task error {:.4} m: {}",
        closed_loop_cost,
        summary.initial_cost,
        outcome.error,
        if outcome.achieved {
            "achieved"
        } else {
            "not achieved"
        }
    );
    println!("wrote {} files to {}", written.len(), out.display());
    Ok(())
}

/// Records the failure `e` of a run planned for `planned` iterations (or steps) in
/// `dir/run.json` and returns `e` (an error writing the record is printed).
pub fn failed(dir: &Path, planned: usize, e: Error) -> Error {
    let record = RunRecord {
        steps_planned: planned,
        ..RunRecord::new(
            if matches!(e, Error::Interrupted { .. }) {
                Status::Interrupted
            } else {
                Status::Failed
            },
            Some(&e),
        )
    };
    if let Err(write) = record.write(dir) {
        eprintln!("error (while recording the failure): {write}");
    }
    e
}
