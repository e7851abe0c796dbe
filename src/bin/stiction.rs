//! The `stiction` command line: run problem files and write their reports.
//!
//! ```text
//! stiction simulate problems/falling-sphere.toml --out out/falling-sphere --plot
//! stiction list --dir problems
//! ```
//!
//! Errors print as `error: …` on stderr with exit code 1; usage errors (and a bare `stiction`,
//! which prints the help) exit with code 2.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use stiction::contact::Approximation;
use stiction::error::{Error, Result};
use stiction::problem::load_problem;
use stiction::report::{csv, plot};
use stiction::simulate::{num_steps, run};

/// Differentiable simulation of multibody systems with frictional contact.
#[derive(Parser)]
#[command(name = "stiction", version, arg_required_else_help = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a problem file; write trajectory.csv, contacts.csv and stats.csv (and figures).
    #[command(after_help = "Example:\n  \
        stiction simulate problems/falling-sphere.toml --out out/falling-sphere --plot\n  \
        stiction simulate problems/conveyor-oscillating.toml --out out/conveyor-sap --approximation sap --dt 2e-3")]
    Simulate(SimulateArgs),
    /// List the problem files (*.toml) in a folder with their descriptions.
    #[command(after_help = "Example:\n  stiction list --dir problems")]
    List {
        /// Folder to look in.
        #[arg(long, value_name = "DIR", default_value = "problems")]
        dir: PathBuf,
    },
}

#[derive(Args)]
struct SimulateArgs {
    /// Problem file (TOML, see problems/).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Output folder; created if missing, refused if not empty unless --force.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Contact approximation, replacing the problem file's.
    #[arg(long, value_parser = PossibleValuesParser::new(Approximation::ALL.map(|a| a.name()))
        .try_map(|name| name.parse::<Approximation>()))]
    approximation: Option<Approximation>,
    /// Time step (s), replacing the problem file's.
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    dt: Option<f64>,
    /// Simulated duration (s), replacing the problem file's.
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    duration: Option<f64>,
    /// Also draw contact_velocity, contact_force and positions figures (PNG).
    #[arg(long)]
    plot: bool,
    /// With --plot, also write each figure as SVG.
    #[arg(long, requires = "plot")]
    svg: bool,
    /// Print nothing but errors: no progress bar, no summary.
    #[arg(long)]
    quiet: bool,
    /// Write into a non-empty output folder, replacing files of the same names.
    #[arg(long)]
    force: bool,
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Simulate(args) => simulate(&args),
        Command::List { dir } => list(&dir),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn simulate(args: &SimulateArgs) -> Result<()> {
    let mut problem = load_problem(&args.file)?;
    let settings = &mut problem.simulator.settings;
    if let Some(approximation) = args.approximation {
        settings.approximation = approximation;
    }
    if let Some(dt) = args.dt {
        settings.dt = dt;
    }
    settings.validate()?;
    if let Some(duration) = args.duration {
        if !(duration > 0.0 && duration.is_finite()) {
            return Err(Error::invalid(
                "duration",
                duration,
                "the simulated duration must be positive and finite (s)",
            ));
        }
        problem.duration = duration;
    }
    prepare_output_folder(&args.out, args.force)?;

    let dt = problem.simulator.settings.dt;
    let steps = num_steps(problem.duration, dt);
    let progress = if args.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(steps as u64)
    };
    progress.set_style(
        ProgressStyle::with_template("{elapsed_precise} {wide_bar} {pos}/{len} steps, {msg}")
            .expect("invariant: the progress template is valid"),
    );
    let start = Instant::now();
    let recording = run(
        &mut problem.simulator,
        &problem.initial_state,
        problem.duration,
        |state, _| {
            progress.inc(1);
            let rate = state.t / start.elapsed().as_secs_f64();
            progress.set_message(format!("t = {:.4} s, {rate:.3} simulated s per s", state.t));
        },
    );
    progress.finish_and_clear();
    let recording = recording?;
    let wall = start.elapsed();

    let mut written = csv::write_tables(&recording, &problem.simulator, &args.out)?.to_vec();
    if args.plot {
        let formats: &[plot::ImageFormat] = if args.svg {
            &[plot::ImageFormat::Png, plot::ImageFormat::Svg]
        } else {
            &[plot::ImageFormat::Png]
        };
        written.extend(plot::write_plots(
            &recording,
            &problem.simulator,
            &problem.name,
            &args.out,
            formats,
        )?);
    }

    if !args.quiet {
        let steps = recording.reports.len();
        let iterations: usize = recording.reports.iter().map(|r| r.stats.iterations).sum();
        let max_iterations = recording
            .reports
            .iter()
            .map(|r| r.stats.iterations)
            .max()
            .unwrap_or(0);
        let t_end = recording.states.last().map_or(0.0, |s| s.t);
        println!(
            "{} ({}, δt = {dt} s): {steps} steps to t = {t_end:.6} s in {:.3} s wall time",
            problem.name,
            problem.simulator.settings.approximation,
            wall.as_secs_f64()
        );
        println!(
            "Newton iterations per step: mean {:.2}, max {max_iterations}",
            iterations as f64 / steps.max(1) as f64
        );
        println!("wrote {}:", args.out.display());
        for path in &written {
            println!("  {}", path.display());
        }
    }
    Ok(())
}

/// Creates `dir` if missing; refuses a non-empty one unless `force`.
fn prepare_output_folder(dir: &Path, force: bool) -> Result<()> {
    let io_error = |source| Error::Io {
        path: dir.to_path_buf(),
        source,
    };
    if dir.is_dir() && !force {
        let mut entries = std::fs::read_dir(dir).map_err(io_error)?;
        if entries.next().is_some() {
            return Err(io_error(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "output folder is not empty (pass --force to write into it, replacing files of the same names)",
            )));
        }
    }
    std::fs::create_dir_all(dir).map_err(io_error)
}

/// Prints every `*.toml` in `dir` with its description; a file that does not load is listed
/// with its error, and makes the command fail after the listing.
fn list(dir: &Path) -> Result<()> {
    let io_error = |source| Error::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io_error)? {
        let path = entry.map_err(io_error)?.path();
        if path.extension().is_some_and(|e| e == "toml") {
            files.push(path);
        }
    }
    files.sort();
    let width = files
        .iter()
        .map(|f| f.display().to_string().len())
        .max()
        .unwrap_or(0);
    let mut first_error = None;
    for path in files {
        match load_problem(&path) {
            Ok(problem) => println!("{:width$}  {}", path.display(), problem.description),
            Err(e) => {
                println!("{:width$}  (does not load: {e})", path.display());
                first_error.get_or_insert(e);
            }
        }
    }
    first_error.map_or(Ok(()), Err)
}
