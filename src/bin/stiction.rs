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
use stiction::derivatives::{gradient_check, Parameter};
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
    /// Compare step Jacobians by the implicit function theorem, by the whole step in dual
    /// numbers and by central differences, at each of the first N steps of a problem.
    #[command(after_help = "Example:\n  \
        stiction gradcheck problems/falling-sphere.toml --steps 50 --params friction,radius@sphere\n  \
        stiction gradcheck problems/sliding-box.toml --steps 10 --json\n\n\
        Parameters: friction, stiffness, dissipation, relaxation_time, stiction_tolerance (optionally @GEOMETRY),\n\
        mass@BODY, inertia.x@BODY (.y, .z), radius@GEOMETRY, half_length@GEOMETRY, half_extent.x@GEOMETRY (.y, .z).")]
    Gradcheck(GradcheckArgs),
    /// Identify contact parameters (μ, k, d, …) from measured trajectories: print the estimates
    /// with 95 % intervals, write the fit (measured vs simulated) as CSV and PNG.
    #[command(after_help = "Example:\n  \
        stiction identify problems/identify/identify-all.toml --out out/identify-all\n  \
        stiction identify problems/identify/identify-friction.toml --data run1/trajectory.csv run2/trajectory.csv --out out/mu --json")]
    Identify(IdentifyArgs),
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

#[derive(Args)]
struct GradcheckArgs {
    /// Problem file (TOML, see problems/).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Number of steps to check, from the problem's initial state.
    #[arg(long, value_name = "N", default_value_t = 10)]
    steps: usize,
    /// Named parameters, comma separated (default: friction, stiffness and the dissipation of
    /// the approximation).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    params: Option<Vec<String>>,
    /// Contact approximation, replacing the problem file's.
    #[arg(long, value_parser = PossibleValuesParser::new(Approximation::ALL.map(|a| a.name()))
        .try_map(|name| name.parse::<Approximation>()))]
    approximation: Option<Approximation>,
    /// Time step (s), replacing the problem file's.
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    dt: Option<f64>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct IdentifyArgs {
    /// Identification problem file (TOML, see problems/identify/).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Trajectory CSVs (as written by `stiction simulate` for the problem's scene), replacing
    /// the data files the problem names.
    #[arg(long, value_name = "CSV", num_args = 1..)]
    data: Option<Vec<PathBuf>>,
    /// Output folder; created if missing, refused if not empty unless --force.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Optimizer, replacing the problem file's.
    #[arg(long, value_parser = ["levenberg-marquardt", "lbfgs"])]
    method: Option<String>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Write into a non-empty output folder, replacing files of the same names.
    #[arg(long)]
    force: bool,
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Simulate(args) => simulate(&args),
        Command::Gradcheck(args) => gradcheck(&args),
        Command::Identify(args) => identify(&args),
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

/// Worst errors of one block over all checked steps.
struct BlockSummary {
    name: String,
    ift_vs_fd: f64,
    ift_vs_direct: f64,
}

fn gradcheck(args: &GradcheckArgs) -> Result<()> {
    let mut problem = load_problem(&args.file)?;
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
    let names = args
        .params
        .clone()
        .unwrap_or_else(|| vec!["friction".into(), "stiffness".into(), dissipation.into()]);
    let params = names
        .iter()
        .map(|n| Parameter::parse(sim, n))
        .collect::<Result<Vec<_>>>()?;
    let u = nalgebra::DVector::zeros(sim.model.nu());
    let mut state = problem.initial_state.clone();
    let mut blocks: Vec<BlockSummary> = Vec::new();
    let (mut ms_step, mut ms_ift, mut ms_direct, mut ms_fd) = (0.0, 0.0, 0.0, 0.0);
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
    }
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

fn identify(args: &IdentifyArgs) -> Result<()> {
    use stiction::identify::{identify, load_identification, Method};
    let file = load_identification(&args.file, args.data.as_deref())?;
    let mut settings = file.settings;
    match args.method.as_deref() {
        Some("lbfgs") => settings.method = Method::Lbfgs,
        Some(_) => settings.method = Method::LevenbergMarquardt,
        None => {}
    }
    prepare_output_folder(&args.out, args.force)?;
    let report = identify(&file.problem, &settings)?;
    let written = stiction::report::fit::write_identification(&report, &file.problem, &args.out)?;
    if args.json {
        let parameters: Vec<_> = report
            .estimates
            .iter()
            .map(|e| {
                serde_json::json!({
                    "name": e.name, "initial": e.initial, "estimate": e.estimate,
                    "ci95": e.ci95.map(|(lo, hi)| [lo, hi]),
                })
            })
            .collect();
        let out = serde_json::json!({
            "problem": report.problem, "status": report.status.name(),
            "iterations": report.iterations, "wall_s": report.wall_s, "parameters": parameters,
        });
        println!("{out}");
        return Ok(());
    }
    println!(
        "{} ({}): {} after {} iterations in {:.3} s wall time",
        report.problem,
        report.method.name(),
        report.status.name(),
        report.iterations,
        report.wall_s
    );
    println!(
        "{:<24}{:>14}{:>14}{:>32}",
        "parameter", "initial", "estimate", "95 % interval"
    );
    for e in &report.estimates {
        match (e.estimate, e.ci95) {
            (Some(x), Some((lo, hi))) => println!(
                "{:<24}{:>14.6e}{:>14.6e}    [{lo:.6e}, {hi:.6e}]",
                e.name, e.initial, x
            ),
            _ => println!(
                "{:<24}{:>14.6e}  not identifiable from this data (near-singular Gauss-Newton matrix; last iterate {:.6e})",
                e.name, e.initial, e.final_value
            ),
        }
    }
    for fit in &report.fits {
        let rms: Vec<String> = fit
            .columns
            .iter()
            .zip(&fit.rms)
            .map(|(c, r)| format!("{c} {r:.2e}"))
            .collect();
        println!(
            "{}: loss {:.4e}; RMS residual per column: {}",
            fit.source.display(),
            fit.cost,
            rms.join(", ")
        );
    }
    println!("wrote {}:", args.out.display());
    for path in &written {
        println!("  {}", path.display());
    }
    Ok(())
}
