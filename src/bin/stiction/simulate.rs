//! `stiction simulate`: run a problem and write its tables (while it runs), figures and
//! animation, and `run.json` last (see `run_record.rs`). A failure or Ctrl-C leaves every
//! completed step on disk.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use stiction::error::{Error, Result};
use stiction::problem::{Problem, Stepper};
use stiction::report::animate::{
    write_animation_observed, write_ncp_animation, AnimationSettings, Projection,
};
use stiction::report::csv::{ExtraTables, NcpTableWriter, TableWriter};
use stiction::report::plot;
use stiction::report::replay::ReplayRecording;
use stiction::simulate::{recording_steps, run_steps, Recording, RunEnd};
use stiction::step::WarningTally;

use crate::interrupt;
use crate::output;
use crate::progress::{Progress, Spinner};
use crate::replay;
use crate::robot;
use crate::run_record::{self, solver_stats, RunRecord, Status, StepEffort};
use crate::shipped;
use crate::SimulateArgs;

/// Which files to write besides the CSV tables.
#[derive(Clone, Copy)]
pub struct Outputs {
    /// PNG figures.
    pub png: bool,
    /// SVG figures.
    pub svg: bool,
    /// `animation.gif`, in this projection.
    pub animation: Option<Projection>,
    /// `patch_geometry.csv`.
    pub patch_geometry: bool,
    /// The 3-D replay, `replay/`.
    pub replay: bool,
    /// Show a progress bar while the animation encodes (after a second).
    pub progress: bool,
}

impl Outputs {
    /// The image formats of the figures asked for.
    fn formats(&self) -> Vec<plot::ImageFormat> {
        [
            (self.png, plot::ImageFormat::Png),
            (self.svg, plot::ImageFormat::Svg),
        ]
        .into_iter()
        .filter_map(|(on, format)| on.then_some(format))
        .collect()
    }
}

/// Runs `simulate` as the command line asked.
pub fn simulate(args: &SimulateArgs) -> Result<()> {
    let files: Vec<&Path> = args
        .files
        .iter()
        .enumerate()
        .filter(|(k, _)| args.shard.is_none_or(|s| s.takes(*k)))
        .map(|(_, f)| f.as_path())
        .collect();
    let Some(&first) = files.first() else {
        if !args.quiet {
            println!(
                "this part has none of the {} files: nothing to do",
                args.files.len()
            );
        }
        return Ok(());
    };
    replay::prepare(args.animation.replay)?;
    if files.len() > 1 || args.shard.is_some() && args.files.len() > 1 {
        return simulate_batch(args, &files);
    }
    let mut problem = load(args, first)?;
    if problem.stepper == Stepper::Ncp {
        return simulate_ncp(args, &problem);
    }
    let out = output_folder(args, &problem)?;
    let outputs = outputs(args, &problem);
    interrupt::install();
    let steps = num_steps(args, &problem)?;
    let mut progress = Progress::new(steps, problem.duration, args.quiet);
    let finished = run_into(&mut problem, &out, outputs, |t| progress.step(t))?;
    let wall = progress.finish();
    if !args.quiet {
        summarize(&problem, &finished.recording, wall, &out, &finished.written);
    }
    finished.end
}

/// The figures, animation and extra tables the flags and the problem's `[output]` table ask
/// for (flags add to the table).
fn outputs(args: &SimulateArgs, problem: &Problem) -> Outputs {
    let wanted = problem.output;
    Outputs {
        png: args.plot || wanted.plot,
        svg: args.svg || wanted.svg,
        animation: args.animation.wanted(problem),
        patch_geometry: args.patch_geometry,
        replay: args.animation.replay,
        // Several rollouts at once share one spinner instead.
        progress: !args.quiet && args.files.len() == 1,
    }
}

/// The problem `file` with the command line's overrides applied; its step count checked
/// against the memory budget, naming the flag that set it.
fn load(args: &SimulateArgs, file: &Path) -> Result<Problem> {
    let mut problem = if robot::is_model(file) {
        robot::robot_problem(file, &args.robot, args.no_ground, args.quiet)?
    } else {
        shipped::load(file)?
    };
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
    settings.validate()?;
    if let Some(duration) = args.duration {
        problem.duration = checked_duration(duration)?;
    }
    if let Some(stepper) = args.stepper {
        problem.stepper = stepper;
    }
    num_steps(args, &problem)?;
    Ok(problem)
}

/// The number of steps of `problem`, checked against the memory budget; an error names
/// `--dt` or `--duration` when the command line set them.
fn num_steps(args: &SimulateArgs, problem: &Problem) -> Result<usize> {
    let field = match (args.dt, args.duration) {
        (Some(_), _) => "--dt",
        (None, Some(_)) => "--duration",
        (None, None) => "simulation.duration",
    };
    if problem.stepper == Stepper::Ncp {
        let sim = problem.ncp_simulator()?;
        stiction::ncp::recording_steps(&sim, field, problem.duration)
    } else {
        recording_steps(&problem.simulator, field, problem.duration)
    }
}

/// What [`run_into`] did: the recording of the completed steps, the files written (not
/// counting `run.json`), and how the run ended (`Ok`, [`Error::Interrupted`] or the error
/// that stopped it).
pub struct Finished {
    /// States and reports of the completed steps.
    pub recording: Recording,
    /// Files written, tables first.
    pub written: Vec<PathBuf>,
    /// How the run ended.
    pub end: Result<()>,
}

/// Runs `problem` with its controller, writing its tables into `out` while it runs (rows of
/// every completed step on disk, whatever happens), stopping at SIGINT; then the figures and
/// animation asked for (from the steps completed), and `run.json` last. `on_step` gets the
/// time of every completed step.
///
/// # Errors
/// Only when the tables cannot be created (before the first step); every later failure is in
/// [`Finished::end`], with `run.json` written.
pub fn run_into(
    problem: &mut Problem,
    out: &Path,
    outputs: Outputs,
    mut on_step: impl FnMut(f64),
) -> Result<Finished> {
    let steps = recording_steps(&problem.simulator, "duration", problem.duration)?;
    let extra = ExtraTables {
        patches: problem
            .simulator
            .geometries()
            .iter()
            .any(|g| g.hydroelastic.is_some()),
        patch_geometry: outputs.patch_geometry,
    };
    let mut tables = TableWriter::create(&problem.simulator, out, &problem.initial_state, extra)?;
    let mut write_error = None;
    let run = run_steps(
        &mut problem.simulator,
        &problem.controller,
        &problem.initial_state,
        steps,
        |sim, state, report| {
            on_step(state.t);
            if let Err(e) = tables.step(sim, state, report) {
                write_error = Some(e);
                return ControlFlow::Break(());
            }
            interrupt::flow()
        },
    );
    let recording = run.recording;
    let t = recording.states.last().map_or(0.0, |s| s.t);
    let mut end = ended(write_error, run.end, recording.reports.len(), t);
    let mut written = Vec::new();
    match tables.finish() {
        Ok(paths) => written.extend(paths),
        Err(e) => keep_first(&mut end, e),
    }
    if !recording.reports.is_empty() {
        match write_figures(&recording, problem, out, outputs) {
            Ok(paths) => written.extend(paths),
            Err(e) => keep_first(&mut end, e),
        }
    }
    let efforts = recording
        .reports
        .iter()
        .map(|r| (r.stats.iterations, r.stats.line_search_iterations));
    let shifted = recording
        .reports
        .iter()
        .filter(|r| r.stats.hessian_shift > 0.0)
        .count();
    write_record(
        out,
        steps,
        efforts,
        shifted,
        &tally(&recording),
        t,
        &mut end,
    );
    Ok(Finished {
        recording,
        written,
        end,
    })
}

/// How a rollout that completed `completed` steps up to `t` (s) ended: the error that
/// stopped writing its tables first, else the rollout's own end.
fn ended(write_error: Option<Error>, end: RunEnd, completed: usize, t: f64) -> Result<()> {
    match (write_error, end) {
        (Some(e), _) | (None, RunEnd::Failed(e)) => Err(e),
        (None, RunEnd::Interrupted) => Err(Error::Interrupted {
            steps_completed: completed,
            t,
        }),
        (None, RunEnd::Complete) => Ok(()),
    }
}

/// Writes `out/run.json` for a rollout of `planned` steps that ended as `end` at `t` (s),
/// with the solver effort of every completed step; an error writing it becomes the run's
/// error if it had none.
fn write_record(
    out: &Path,
    planned: usize,
    efforts: impl ExactSizeIterator<Item = StepEffort>,
    shifted: usize,
    tally: &WarningTally,
    t: f64,
    end: &mut Result<()>,
) {
    let completed = efforts.len();
    let mut stats = solver_stats(efforts, end.as_ref().err());
    stats["hessian_shifted_steps"] = shifted.into();
    let record = RunRecord {
        steps_planned: planned,
        steps_completed: completed,
        t: Some(t),
        solver_stats: stats,
        warnings: run_record::warnings(tally),
        ..RunRecord::new(status_of(end), end.as_ref().err())
    };
    if let Err(e) = record.write(out) {
        keep_first(end, e);
    }
}

/// The status `run.json` records for a run that ended as `end`.
pub fn status_of(end: &Result<()>) -> Status {
    match end {
        Ok(()) => Status::Complete,
        Err(Error::Interrupted { .. }) => Status::Interrupted,
        Err(_) => Status::Failed,
    }
}

/// Keeps the first error of a run: `e` replaces a success; after an earlier error it is only
/// printed (the first one is what stopped the run).
fn keep_first(end: &mut Result<()>, e: Error) {
    if end.is_ok() {
        *end = Err(e);
    } else {
        eprintln!("error (while writing what was computed): {e}");
    }
}

/// Several problems: independent rollouts in parallel (rayon), each written into a new
/// numbered folder `out/PROBLEM/N` while it runs, with the figures the flags and its
/// `[output]` table ask for. A file that cannot be loaded or a rollout that fails is named
/// with its error; the others are written all the same, and the command then fails.
fn simulate_batch(args: &SimulateArgs, files: &[&Path]) -> Result<()> {
    if args.output.out.is_some() {
        return Err(Error::invalid(
            "--out",
            args.files.len(),
            "--out takes one problem; several each write a new folder out/PROBLEM/N",
        ));
    }
    let mut failures = Vec::new();
    let mut problems = Vec::new();
    for file in files {
        match load(args, file) {
            Ok(p) if p.stepper == Stepper::Ncp => failures.push(format!(
                "{}: several problems run the convex stepper only; simulate ncp problems one at a time",
                file.display()
            )),
            Ok(p) => problems.push((file, p)),
            Err(e) => failures.push(format!("{}: {e}", file.display())),
        }
    }
    // Folders are numbered one after the other before the rollouts start (two rollouts of
    // one problem must not race for a number).
    let mut jobs = Vec::new();
    for (file, problem) in problems {
        match output::numbered(&Path::new("out").join(&problem.name)) {
            Ok(out) => jobs.push((file, problem, out)),
            Err(e) => failures.push(format!("{}: {e}", file.display())),
        }
    }
    interrupt::install();
    // Each rollout owns its problem (simulator and solver data): independent, and each
    // computed exactly as alone (see `stiction::simulate::run_batch`).
    let start = Instant::now();
    let spinner = Spinner::new(&format!("{} rollouts in parallel", jobs.len()), args.quiet);
    let results: Vec<Result<Finished>> = jobs
        .par_iter_mut()
        .map(|(_, problem, out)| {
            let outputs = outputs(args, problem);
            run_into(problem, out, outputs, |_| ())
        })
        .collect();
    spinner.finish();
    let wall = start.elapsed();
    if !args.quiet {
        println!(
            "{} rollouts in parallel in {:.3} s wall time ({:.2} rollouts/s)",
            jobs.len(),
            wall.as_secs_f64(),
            jobs.len() as f64 / wall.as_secs_f64()
        );
    }
    let mut interrupted = None;
    for ((file, problem, out), result) in jobs.iter().zip(results) {
        let finished = match result {
            Ok(f) => f,
            Err(e) => {
                failures.push(format!("{}: {e}", file.display()));
                continue;
            }
        };
        if !args.quiet {
            summarize(problem, &finished.recording, wall, out, &finished.written);
        }
        match finished.end {
            Ok(()) => {}
            Err(e @ Error::Interrupted { .. }) => interrupted = Some(e),
            Err(e) => failures.push(format!(
                "{}: {e} (the steps before it are in {})",
                file.display(),
                out.display()
            )),
        }
    }
    match (interrupted, failures.is_empty()) {
        (Some(e), _) => Err(e),
        (None, true) => Ok(()),
        (None, false) => Err(Error::RunsFailed {
            total: files.len(),
            failures,
        }),
    }
}

/// The `--out` folder, prepared, or a new numbered folder `out/PROBLEM/N`.
fn output_folder(args: &SimulateArgs, problem: &Problem) -> Result<PathBuf> {
    output::explicit_or_numbered(args.output.prepare_explicit()?, &problem.name)
}

/// `simulate` with the geometrically implicit stepper: trajectory, ncp contacts and stats,
/// written while the rollout runs, and `run.json` last.
fn simulate_ncp(args: &SimulateArgs, problem: &Problem) -> Result<()> {
    let refused = [
        (
            args.animation.replay,
            "--replay",
            "the replay is written for the convex stepper only",
        ),
        (
            args.patch_geometry,
            "--patch-geometry",
            "pressure-field patches belong to the convex stepper",
        ),
        (
            args.approximation.is_some(),
            "--approximation",
            "contact approximations belong to the convex stepper",
        ),
    ];
    if let Some((_, flag, why)) = refused.iter().find(|(on, _, _)| *on) {
        return Err(Error::invalid(flag, "ncp", why));
    }
    let mut sim = problem.ncp_simulator()?;
    let steps = num_steps(args, problem)?;
    let out = output_folder(args, problem)?;
    let dt = sim.settings.dt;
    interrupt::install();
    let mut tables = NcpTableWriter::create(&problem.simulator, &out, &problem.initial_state)?;
    let mut progress = Progress::new(steps, problem.duration, args.quiet);
    let mut write_error = None;
    let run = stiction::ncp::run_steps(&mut sim, &problem.initial_state, steps, |state, report| {
        progress.step(state.t);
        if let Err(e) = tables.step(state, report) {
            write_error = Some(e);
            return ControlFlow::Break(());
        }
        interrupt::flow()
    });
    let wall = progress.finish();
    let recording = run.recording;
    let t = recording.states.last().map_or(0.0, |s| s.t);
    let mut end = ended(write_error, run.end, recording.reports.len(), t);
    let mut written = match tables.finish() {
        Ok(paths) => paths.to_vec(),
        Err(e) => {
            keep_first(&mut end, e);
            Vec::new()
        }
    };
    // Figures of what exists, whether the run completed or not.
    match write_ncp_figures(&recording, problem, dt, &out, outputs(args, problem)) {
        Ok(paths) => written.extend(paths),
        Err(e) => keep_first(&mut end, e),
    }
    let efforts = recording
        .reports
        .iter()
        .map(|r| (r.stats.iterations, r.stats.line_search_iterations));
    write_record(
        &out,
        steps,
        efforts,
        0,
        &WarningTally::default(),
        t,
        &mut end,
    );
    if !args.quiet {
        let steps = recording.reports.len();
        let iterations = recording.reports.iter().map(|r| r.stats.iterations);
        let max_iterations = iterations.clone().max().unwrap_or(0);
        let t_end = recording.states.last().map_or(0.0, |s| s.t);
        println!(
            "{} (ncp, δt = {dt} s): {steps} steps to t = {t_end:.6} s in {:.3} s wall time",
            problem.name,
            wall.as_secs_f64()
        );
        println!(
            "semismooth Newton iterations per step: mean {:.2}, max {max_iterations}",
            iterations.sum::<usize>() as f64 / steps.max(1) as f64
        );
        println!("wrote {}:", out.display());
        for path in &written {
            println!("  {}", path.display());
        }
    }
    end
}

/// Writes the figures, the animation and the replay asked for into the existing folder `dir` (the tables
/// are written while the rollout runs); returns the files written.
pub fn write_figures(
    recording: &Recording,
    problem: &Problem,
    dir: &Path,
    outputs: Outputs,
) -> Result<Vec<PathBuf>> {
    let sim = &problem.simulator;
    let mut written = Vec::new();
    let formats = outputs.formats();
    if !formats.is_empty() {
        written.extend(plot::write_plots(
            recording,
            sim,
            &problem.name,
            dir,
            &formats,
        )?);
    }
    if let Some(projection) = outputs.animation {
        let settings = AnimationSettings {
            projection,
            ..Default::default()
        };
        written.push(animation(
            recording,
            sim,
            &problem.name,
            &dir.join("animation.gif"),
            &settings,
            outputs.progress,
        )?);
    }
    if outputs.replay {
        written.push(replay::write(
            dir,
            &[ReplayRecording {
                name: "rollout".into(),
                title: format!(
                    "{} ({}, δt = {} s)",
                    problem.name, sim.settings.approximation, sim.settings.dt
                ),
                sim,
                recording,
                targets: Vec::new(),
                markers: Vec::new(),
            }],
        )?);
    }
    Ok(written)
}

/// The figures and the animation asked for, of a rollout of the ncp stepper.
fn write_ncp_figures(
    recording: &stiction::ncp::NcpRecording,
    problem: &Problem,
    dt: f64,
    dir: &Path,
    outputs: Outputs,
) -> Result<Vec<PathBuf>> {
    let sim = &problem.simulator;
    let mut written = Vec::new();
    let formats = outputs.formats();
    if !formats.is_empty() && !recording.reports.is_empty() {
        written.extend(plot::write_ncp_plots(
            recording,
            sim,
            (&problem.name, dt),
            dir,
            &formats,
        )?);
    }
    if let Some(projection) = outputs.animation {
        let settings = AnimationSettings {
            projection,
            ..Default::default()
        };
        // The force on B of each pair: its impulses over δt, in the contact frame.
        let forces: Vec<Vec<_>> = recording
            .reports
            .iter()
            .map(|r| {
                r.contacts
                    .iter()
                    .filter(|c| c.impulse[0] > 0.0)
                    .map(|c| {
                        let [p_n, p_t, p_o, _] = c.impulse;
                        (
                            c.ecp,
                            (c.normal * p_n + c.tangent * p_t + c.bitangent * p_o) / dt,
                        )
                    })
                    .collect()
            })
            .collect();
        let frames = settings.max_frames.clamp(1, recording.states.len().max(1));
        let bar = std::cell::RefCell::new(Progress::frames(frames, !outputs.progress));
        written.push(write_ncp_animation(
            &recording.states,
            &forces,
            sim,
            (&problem.name, dt),
            &dir.join("animation.gif"),
            &settings,
            &|_, _| bar.borrow_mut().frame(),
        )?);
        bar.into_inner().finish();
    }
    Ok(written)
}

/// [`write_animation_observed`] with a progress bar of the frames encoded, shown once the
/// encoding has taken a second, unless `!progress`.
pub fn animation(
    recording: &Recording,
    sim: &stiction::step::Simulator,
    name: &str,
    path: &Path,
    settings: &AnimationSettings,
    progress: bool,
) -> Result<PathBuf> {
    let frames = settings.max_frames.clamp(1, recording.states.len().max(1));
    let bar = std::cell::RefCell::new(Progress::frames(frames, !progress));
    let written = write_animation_observed(recording, sim, name, path, settings, &|_, _| {
        bar.borrow_mut().frame()
    });
    bar.into_inner().finish();
    written
}

/// Prints what was simulated, how hard the solver worked and the files written.
pub fn summarize(
    problem: &Problem,
    recording: &Recording,
    wall: Duration,
    dir: &Path,
    written: &[PathBuf],
) {
    let settings = &problem.simulator.settings;
    let steps = recording.reports.len();
    let iterations = recording.reports.iter().map(|r| r.stats.iterations);
    let max_iterations = iterations.clone().max().unwrap_or(0);
    let mean_iterations = iterations.sum::<usize>() as f64 / steps.max(1) as f64;
    let t_end = recording.states.last().map_or(0.0, |s| s.t);
    println!(
        "{} ({}, δt = {} s): {steps} steps to t = {t_end:.6} s in {:.3} s wall time",
        problem.name,
        settings.approximation,
        settings.dt,
        wall.as_secs_f64()
    );
    println!("Newton iterations per step: mean {mean_iterations:.2}, max {max_iterations}");
    let warnings = tally(recording);
    if !warnings.is_empty() {
        print!("warnings (suspicious physics, counted; see run.json):\n{warnings}");
    }
    println!("wrote {} files to {}:", written.len(), dir.display());
    for path in written {
        println!("  {}", path.display());
    }
}

/// The warnings of every step of `recording`, counted by kind.
pub fn tally(recording: &Recording) -> WarningTally {
    let mut tally = WarningTally::default();
    for (state, report) in recording.states[1..].iter().zip(&recording.reports) {
        tally.add(state.t, &report.warnings);
    }
    tally
}

/// A `--duration` (s): positive and finite.
pub fn checked_duration(duration: f64) -> Result<f64> {
    if duration > 0.0 && duration.is_finite() {
        Ok(duration)
    } else {
        Err(Error::invalid(
            "duration",
            duration,
            "the simulated duration must be positive and finite (s)",
        ))
    }
}
