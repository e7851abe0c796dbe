//! `stiction simulate`: run a problem and write its tables, figures and animation.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rayon::prelude::*;
use stiction::error::{Error, Result};
use stiction::problem::{Problem, Stepper};
use stiction::report::animate::{write_animation, AnimationSettings, Projection};
use stiction::report::{csv, plot};
use stiction::simulate::{num_steps, run_controlled, Recording};

use crate::output;
use crate::progress::{Progress, Spinner};
use crate::robot;
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
    if files.len() > 1 || args.shard.is_some() && args.files.len() > 1 {
        return simulate_batch(args, &files);
    }
    let mut problem = load(args, first)?;
    if problem.stepper == Stepper::Ncp {
        return simulate_ncp(args, &problem);
    }
    let out = output_folder(args, &problem)?;
    let (recording, wall) = rollout(&mut problem, args.quiet)?;
    // Flags add to the problem's [output] table.
    let wanted = problem.output;
    let outputs = Outputs {
        png: args.plot || wanted.plot,
        svg: args.svg || wanted.svg,
        animation: args.animation.wanted(&problem),
        patch_geometry: args.patch_geometry,
    };
    let written = write_outputs(&recording, &problem, &out, outputs)?;
    if !args.quiet {
        summarize(&problem, &recording, wall, &out, &written);
    }
    Ok(())
}

/// The problem `file` with the command line's overrides applied.
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
    Ok(problem)
}

/// Several problems: independent rollouts in parallel (rayon), each written into a new
/// numbered folder `out/PROBLEM/N` with the figures the flags and its `[output]` table ask for.
fn simulate_batch(args: &SimulateArgs, files: &[&Path]) -> Result<()> {
    if args.output.out.is_some() {
        return Err(Error::invalid(
            "--out",
            args.files.len(),
            "--out takes one problem; several each write a new folder out/PROBLEM/N",
        ));
    }
    let mut problems = files
        .iter()
        .map(|f| load(args, f))
        .collect::<Result<Vec<_>>>()?;
    if let Some(p) = problems.iter().find(|p| p.stepper == Stepper::Ncp) {
        return Err(Error::invalid(
            "stepper",
            &p.name,
            "several problems run the convex stepper only; simulate ncp problems one at a time",
        ));
    }
    // Each rollout owns its problem (simulator and solver data): independent, and each
    // computed exactly as alone (see `stiction::simulate::run_batch`).
    let start = Instant::now();
    let spinner = Spinner::new(
        &format!("{} rollouts in parallel", problems.len()),
        args.quiet,
    );
    let recordings: Vec<Result<Recording>> = problems
        .par_iter_mut()
        .map(|p| {
            run_controlled(
                &mut p.simulator,
                &p.controller,
                &p.initial_state,
                p.duration,
                |_, _| (),
            )
        })
        .collect();
    spinner.finish();
    let wall = start.elapsed();
    if !args.quiet {
        println!(
            "{} rollouts in parallel in {:.3} s wall time ({:.2} rollouts/s)",
            problems.len(),
            wall.as_secs_f64(),
            problems.len() as f64 / wall.as_secs_f64()
        );
    }
    for (problem, recording) in problems.iter().zip(recordings) {
        let recording = recording?;
        let out = output::numbered(&Path::new("out").join(&problem.name))?;
        let wanted = problem.output;
        let outputs = Outputs {
            png: args.plot || wanted.plot,
            svg: args.svg || wanted.svg,
            animation: args.animation.wanted(problem),
            patch_geometry: args.patch_geometry,
        };
        let written = write_outputs(&recording, problem, &out, outputs)?;
        if !args.quiet {
            summarize(problem, &recording, wall, &out, &written);
        }
    }
    Ok(())
}

/// The `--out` folder, prepared, or a new numbered folder `out/PROBLEM/N`.
fn output_folder(args: &SimulateArgs, problem: &Problem) -> Result<PathBuf> {
    output::explicit_or_numbered(args.output.prepare_explicit()?, &problem.name)
}

/// `simulate` with the geometrically implicit stepper: trajectory, ncp contacts and stats.
fn simulate_ncp(args: &SimulateArgs, problem: &Problem) -> Result<()> {
    let refused = [
        (args.plot || args.svg, "--plot/--svg", "figures are drawn for the convex stepper only; plot trajectory.csv and contacts.csv instead"),
        (args.animation.animate, "--animate", "the animation is drawn for the convex stepper only"),
        (args.patch_geometry, "--patch-geometry", "pressure-field patches belong to the convex stepper"),
        (args.approximation.is_some(), "--approximation", "contact approximations belong to the convex stepper"),
    ];
    if let Some((_, flag, why)) = refused.iter().find(|(on, _, _)| *on) {
        return Err(Error::invalid(flag, "ncp", why));
    }
    let mut sim = problem.ncp_simulator()?;
    let out = output_folder(args, problem)?;
    let dt = sim.settings.dt;
    let mut progress = Progress::new(
        num_steps(problem.duration, dt),
        problem.duration,
        args.quiet,
    );
    let recording = stiction::ncp::run(
        &mut sim,
        &problem.initial_state,
        problem.duration,
        |state, _| progress.step(state.t),
    );
    let wall = progress.finish();
    let recording = recording?;
    let written = csv::write_ncp_tables(&recording, &problem.simulator, &out)?;
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
    Ok(())
}

/// Runs the problem with its controller, with a progress bar unless `quiet`.
pub fn rollout(problem: &mut Problem, quiet: bool) -> Result<(Recording, Duration)> {
    let steps = num_steps(problem.duration, problem.simulator.settings.dt);
    let mut progress = Progress::new(steps, problem.duration, quiet);
    let recording = run_controlled(
        &mut problem.simulator,
        &problem.controller,
        &problem.initial_state,
        problem.duration,
        |state, _| progress.step(state.t),
    );
    let wall = progress.finish();
    Ok((recording?, wall))
}

/// Writes the CSV tables and the requested figures into the existing folder `dir`; returns
/// the files written.
pub fn write_outputs(
    recording: &Recording,
    problem: &Problem,
    dir: &Path,
    outputs: Outputs,
) -> Result<Vec<PathBuf>> {
    let sim = &problem.simulator;
    let mut written = csv::write_tables(recording, sim, dir)?.to_vec();
    let hydroelastic = sim.geometries().iter().any(|g| g.hydroelastic.is_some());
    if hydroelastic {
        written.push(csv::write_patches(recording, sim, dir)?);
    }
    if outputs.patch_geometry {
        written.push(csv::write_patch_geometry(recording, sim, dir)?);
    }
    let formats: Vec<_> = [
        (outputs.png, plot::ImageFormat::Png),
        (outputs.svg, plot::ImageFormat::Svg),
    ]
    .into_iter()
    .filter_map(|(on, format)| on.then_some(format))
    .collect();
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
        written.push(write_animation(
            recording,
            sim,
            &problem.name,
            &dir.join("animation.gif"),
            &settings,
        )?);
    }
    Ok(written)
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
    println!("wrote {} files to {}:", written.len(), dir.display());
    for path in written {
        println!("  {}", path.display());
    }
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
