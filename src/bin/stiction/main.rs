//! The `stiction` command line: run problem files, check derivatives, and write reports.
//!
//! ```text
//! stiction                                          a short demo into out/demo/N
//! stiction list                                     the shipped problems
//! stiction simulate falling-sphere --plot --animate
//! stiction simulate problems/falling-sphere.toml --out out/fs --plot
//! stiction gradcheck problems/sliding-box.toml --steps 10 --json
//! stiction optimize problems/push-ball.toml --out out/push-ball
//! stiction mpc problems/push-ball.toml --out out/push-ball-mpc
//! stiction identify problems/identify/identify-all.toml --out out/identify-all
//! stiction sweep problems/clutter.toml --stiffness 1e3:1e12:10 --out out/clutter-sweep
//! stiction simulate panda.urdf --package-path example-robot-data=DIR
//! stiction view out/fs                             serve the replay written with --replay
//! stiction inspect panda.urdf --json --q 0,0.3,0,-1.5,0,1.8,0.8,0.02,0.02
//! ```
//!
//! Errors print as `error: …` on stderr with exit code 1; usage errors exit with code 2; a run
//! stopped by Ctrl-C (SIGINT) writes what it computed and exits with code 130. Every output
//! folder ends with `run.json` (`run_record.rs`): complete, interrupted or failed.
//!
//! Files: `simulate.rs` (run and write), `sweep.rs` (stiffness sweeps), `gradcheck.rs`,
//! `optimize.rs` (optimize and mpc), `identify.rs`, `list.rs`, `demo.rs`, `progress.rs`
//! (the delayed progress bar), `output.rs` (output folders), `run_record.rs` (`run.json`),
//! `interrupt.rs` (Ctrl-C as a request to stop), `figures.rs` (the papers' figures),
//! `shipped.rs` (problems compiled in), `robot.rs` (robot model files as problems),
//! `inspect.rs` (a model's tree, `M` and bias forces), `replay.rs` (`--replay`), `view.rs`
//! (`stiction view`).

mod demo;
mod figures;
mod gradcheck;
mod identify;
mod inspect;
mod interrupt;
mod list;
mod optimize;
mod output;
mod progress;
mod replay;
mod robot;
mod run_record;
mod shard;
mod shipped;
mod simulate;
mod sweep;
mod view;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};

use stiction::contact::Approximation;
use stiction::problem::Stepper;
use stiction::solver::linalg::LinearSolver;

/// Differentiable simulation of multibody systems with frictional contact.
///
/// Without a command, runs a short demo (a sphere lands, slides and rolls) and writes its
/// tables, figures and animation into a new folder out/demo/N.
#[derive(Parser)]
#[command(
    name = "stiction",
    version,
    after_help = "Examples:\n  \
        stiction                                         run the demo, writing out/demo/1 (then 2, 3, …)\n  \
        stiction list                                    the shipped problems\n  \
        stiction simulate falling-sphere --plot --animate\n  \
        stiction sweep clutter --stiffness 1e3:1e12:10 --out out/clutter-sweep\n  \
        stiction simulate --help                         every option of a command"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a problem; write trajectory.csv, contacts.csv and stats.csv, and on request
    /// figures and an animation.
    #[command(after_help = "Examples:\n  \
        stiction simulate problems/falling-sphere.toml --out out/falling-sphere --plot\n  \
        stiction simulate falling-sphere --animate --projection xy\n  \
        stiction simulate problems/conveyor-oscillating.toml --out out/conveyor-sap --approximation sap --dt 2e-3 --svg\n  \
        stiction simulate problems/cube-topple.toml --out out/cube-topple --stepper ncp\n  \
        stiction simulate problems/clutter.toml --model sap --linear-solver sparse --plot\n  \
        stiction simulate falling-sphere sliding-box clutter --quiet      three rollouts in parallel\n  \
        stiction simulate panda.urdf --package-path example-robot-data=DIR   a robot on the ground, fixed base\n  \
        stiction simulate solo12.urdf --floating                             a floating-base robot dropped on the ground\n\n\
        A robot model (.urdf; .xml for MJCF) runs with a fixed base unless --floating, on a ground plane unless\n\
        --no-ground, for 2 s at δt = 1 ms (lagged approximation) unless --duration/--dt say otherwise, unactuated.\n\n\
        Files written: trajectory.csv, contacts.csv, stats.csv (while the run goes); with --plot (PNG) or --svg (SVG):\n\
        contact_velocity, contact_force, positions, velocities, solver; with --animate: animation.gif; with --replay:\n\
        replay/ (a 3-D replay in the browser: stiction view DIR; docs/viewer.md); run.json last\n\
        (status complete, interrupted or failed). Ctrl-C stops the run, keeping what was computed (exit code 130).\n\
        Columns and run.json fields are in docs/outputs.md.")]
    Simulate(SimulateArgs),
    /// Compare step Jacobians by the implicit function theorem, by the whole step in dual
    /// numbers and by central differences, at each of the first N steps of a problem.
    #[command(after_help = "Examples:\n  \
        stiction gradcheck problems/falling-sphere.toml --steps 50 --params friction,radius@sphere\n  \
        stiction gradcheck problems/sliding-box.toml --steps 10 --json\n\n\
        Parameters: friction, stiffness, dissipation, relaxation_time, stiction_tolerance (optionally @GEOMETRY),\n\
        mass@BODY, inertia.x@BODY (.y, .z), radius@GEOMETRY, half_length@GEOMETRY, half_extent.x@GEOMETRY (.y, .z).")]
    Gradcheck(GradcheckArgs),
    /// Print a robot model's tree (bodies with mass, centre of mass and inertia; joints with
    /// kind, limits and their indices in q and v; geometries; actuators) and, at a
    /// configuration, the mass matrix M and the bias forces (Coriolis, centrifugal and
    /// gravity; M v̇ + bias = τ, MuJoCo's qfrc_bias).
    #[command(after_help = "Examples:\n  \
        stiction inspect panda.urdf\n  \
        stiction inspect panda.urdf --json --q 0,0.3,0,-1.5,0,1.8,0.8,0.02,0.02 --v 0.1,0,0,0,0,0,0,0,0\n  \
        stiction inspect solo12.urdf --floating --json\n\n\
        JSON fields: nq, nv, bodies [{name, parent, mass, com, inertia}], joints [{name, body, type, axis, q_index,\n\
        v_index, nq, nv, limits {lower, upper, velocity, effort} (null: none), damping, friction}], geometries,\n\
        actuators, couplers, not_in_step, q, v, M and bias (row-major nested lists).")]
    Inspect(inspect::InspectArgs),
    /// Optimize a problem file's [optimize] task with contact-implicit iLQR; write the optimal
    /// trajectory, controls, iteration statistics and figures.
    #[command(after_help = "Examples:\n  \
        stiction optimize problems/push-ball.toml --out out/push-ball\n  \
        stiction optimize hopper --json\n  \
        stiction optimize box-pivot --animate --projection xz\n\n\
        Files written: trajectory.csv, controls.csv, states.csv, iterations.csv, contacts.csv, stats.csv, and PNG figures\n\
        (cost per iteration, states, controls, contact forces, solver); with --animate: animation.gif; with --replay:\n\
        replay/, the optimal trajectory in 3-D with the task's targets (stiction view DIR). Columns are in docs/outputs.md.")]
    Optimize(optimize::OptimizeArgs),
    /// Run a problem file's [optimize] task in closed loop: re-solve iLQR from the simulated
    /// state at every step (receding horizon, warm started); write the closed-loop trajectory.
    #[command(
        after_help = "Example:\n  stiction mpc problems/push-ball.toml --out out/push-ball-mpc"
    )]
    Mpc(optimize::MpcArgs),
    /// Identify contact parameters (μ, k, d, …) from measured trajectories: print the estimates
    /// with 95 % intervals, write the fit (measured vs simulated) as CSV and PNG.
    #[command(after_help = "Examples:\n  \
        stiction identify problems/identify/identify-all.toml --out out/identify-all\n  \
        stiction identify problems/identify/identify-friction.toml --data run1/trajectory.csv run2/trajectory.csv --out out/mu --json\n\n\
        Files written: fit-TRAJECTORY.csv and fit-TRAJECTORY.png per data file (measured vs simulated), history.csv;\n\
        with --replay: replay/, each trajectory simulated at the estimate in 3-D with the measured positions (stiction view DIR).\n\
        A parameter the data cannot identify (near-singular Gauss-Newton matrix) is reported as such, with no estimate.\n\n\
        Unknowns: the scene's parameters (as for gradcheck), and per data file its initial velocities\n\
        (velocity.x@BODY, angular_velocity.x@BODY for a free body; v0@BODY, v0.i@BODY for other joints) and its\n\
        clock offset time_offset (s); docs/identification.md.")]
    Identify(identify::IdentifyArgs),
    /// Run a problem at several contact stiffnesses in parallel (ICF Sec. X-A, Figs. 17-18):
    /// mean steady penetration over the last --settle seconds, Newton iterations and
    /// condition estimate per stiffness, into sweep.csv and sweep.png.
    #[command(after_help = "Examples:\n  \
        stiction sweep problems/clutter.toml --stiffness 1e3:1e12:10 --out out/clutter-sweep\n  \
        stiction sweep clutter --stiffness 1e5,1e7,1e9 --model sap --duration 1.5 --settle 0.5\n\n\
        --stiffness takes START:STOP:FACTOR (START, START·FACTOR, … up to STOP) or a comma-separated list (N/m);\n\
        it replaces k of [contact] and of every geometry's own contact table. sweep.csv columns: stiffness (N/m),\n\
        mean_penetration (m, over contacts that push in the steady window), mean_iterations, max_iterations,\n\
        mean_log10_condition, steps.")]
    Sweep(SweepArgs),
    /// Recompute the seed papers' figures (ICF Sec. IX-X, Castro 2020) from the shipped
    /// problems: per figure a PNG, its points as CSV and its numbers beside the paper's, and
    /// an index.md listing them with the commands that made them.
    #[command(after_help = "Examples:\n  \
        stiction figures --list\n  \
        stiction figures --quick --out out/figures-quick        every figure, coarse (seconds)\n  \
        stiction figures falling-sphere sliding-rod --out out/figures\n\n\
        Files written: NAME.png, NAME.csv (panel, curve, x, y), NAME-numbers.csv (key, what, paper, measured, unit)\n\
        per figure, and index.md. What each figure shows: docs/figures.md.")]
    Figures(figures::FiguresArgs),
    /// List the shipped problems, or the problem files (*.toml) of a folder, with their
    /// descriptions.
    #[command(after_help = "Examples:\n  \
        stiction list\n  \
        stiction list --dir my-problems")]
    List {
        /// Folder to list instead of the shipped problems.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Serve a run's 3-D replay (written with --replay) on localhost and print its address;
    /// --open also opens it in the browser.
    #[command(after_help = "Examples:\n  \
        stiction simulate clutter --replay --out out/clutter && stiction view out/clutter\n  \
        stiction view out/push-ball --port 8000 --open\n\n\
        The replay (RUN_DIR/replay/replay.html) shows the bodies in 3-D over time, contact forces, pressure-field\n\
        patches and targets, with a timeline and an orbit camera; see docs/viewer.md.")]
    View(view::ViewArgs),
    /// Join the parts of a sweep run as a job array (`sweep --shard I/N`, one folder each)
    /// into the sweep.csv and sweep.png one process would have written.
    #[command(after_help = "Examples:\n  \
        stiction sweep clutter --stiffness 1e5:1e9:10 --shard 1/2 --out part1\n  \
        stiction sweep clutter --stiffness 1e5:1e9:10 --shard 2/2 --out part2\n  \
        stiction merge part1 part2 --out clutter-sweep")]
    Merge {
        /// The parts' output folders, each with sweep.csv and shard.json.
        #[arg(value_name = "DIR", required = true, num_args = 1..)]
        dirs: Vec<PathBuf>,
        #[command(flatten)]
        output: output::OutArgs,
        /// Print nothing but errors.
        #[arg(long)]
        quiet: bool,
    },
}

/// Options of `stiction simulate`.
#[derive(Args)]
pub struct SimulateArgs {
    /// Problem files (TOML, see problems/README.md), names of shipped problems, or robot
    /// models (URDF .urdf, MJCF .xml). Several run in parallel (convex stepper only), each
    /// into its own folder out/PROBLEM/N.
    #[arg(value_name = "FILE", required = true, num_args = 1..)]
    files: Vec<PathBuf>,
    /// Run only part I of N of the files, interleaved (files I, I+N, …; a job array's task):
    /// each still writes its own folder out/PROBLEM/N.
    #[arg(long, value_name = "I/N")]
    shard: Option<shard::Shard>,
    #[command(flatten)]
    robot: robot::RobotArgs,
    /// Robot models: no ground plane (the half-space z ≤ 0).
    #[arg(long)]
    no_ground: bool,
    #[command(flatten)]
    output: output::OutArgs,
    /// Contact approximation (model), replacing the problem file's; `--model` is the same
    /// option.
    #[arg(long, visible_alias = "model", value_parser = PossibleValuesParser::new(Approximation::ALL.map(|a| a.name()))
        .try_map(|name| name.parse::<Approximation>()))]
    approximation: Option<Approximation>,
    /// Time step (s), replacing the problem file's.
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    dt: Option<f64>,
    /// Factorization of the Newton Hessian, replacing the problem file's `[solver]
    /// linear_solver`: `auto` (sparse from 60 velocities on), `dense` or `sparse`.
    #[arg(long, value_parser = PossibleValuesParser::new(LinearSolver::ALL.map(|l| l.name()))
        .try_map(|name| name.parse::<LinearSolver>()))]
    linear_solver: Option<LinearSolver>,
    /// Time stepper, replacing the problem file's `[simulation] stepper`: `convex`
    /// (compliant point contact) or `ncp` (geometrically implicit line and surface contact).
    #[arg(long, value_parser = PossibleValuesParser::new(Stepper::ALL.map(|s| s.name()))
        .try_map(|name| name.parse::<Stepper>()))]
    stepper: Option<Stepper>,
    /// Simulated duration (s), replacing the problem file's.
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    duration: Option<f64>,
    /// Draw the figures as PNG: contact velocities, contact forces, positions, velocities and
    /// solver iterations. (The problem's [output] table can ask for figures too.)
    #[arg(long)]
    plot: bool,
    /// Draw the same figures as SVG.
    #[arg(long)]
    svg: bool,
    #[command(flatten)]
    animation: output::AnimationArgs,
    /// Write patch_geometry.csv: every pressure-field contact polygon, vertex by vertex, with
    /// its pressure.
    #[arg(long)]
    patch_geometry: bool,
    /// Print nothing but errors: no progress bar, no summary.
    #[arg(long)]
    quiet: bool,
}

/// Options of `stiction sweep`.
#[derive(Args)]
pub struct SweepArgs {
    /// Problem file (TOML, see problems/README.md), or the name of a shipped problem.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Stiffness values (N/m): START:STOP:FACTOR or a comma-separated list.
    #[arg(long, value_name = "SPEC")]
    stiffness: String,
    /// Run only part I of N of the stiffnesses, interleaved (a job array's task); the part's
    /// folder gets its rows of sweep.csv and a shard.json for `stiction merge`.
    #[arg(long, value_name = "I/N")]
    shard: Option<shard::Shard>,
    /// Length of the steady window at the end of the rollout (s) over which the penetration
    /// is averaged (ICF: the last 1.25 s).
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 1.25,
        allow_negative_numbers = true
    )]
    settle: f64,
    /// Contact approximation (model), replacing the problem file's.
    #[arg(long, visible_alias = "model", value_parser = PossibleValuesParser::new(Approximation::ALL.map(|a| a.name()))
        .try_map(|name| name.parse::<Approximation>()))]
    approximation: Option<Approximation>,
    /// Time step (s), replacing the problem file's.
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    dt: Option<f64>,
    /// Simulated duration (s), replacing the problem file's.
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    duration: Option<f64>,
    /// Factorization of the Newton Hessian: auto, dense or sparse.
    #[arg(long, value_parser = PossibleValuesParser::new(LinearSolver::ALL.map(|l| l.name()))
        .try_map(|name| name.parse::<LinearSolver>()))]
    linear_solver: Option<LinearSolver>,
    #[command(flatten)]
    output: output::OutArgs,
    /// Print nothing but errors.
    #[arg(long)]
    quiet: bool,
}

/// Options of `stiction gradcheck`.
#[derive(Args)]
pub struct GradcheckArgs {
    /// Problem file (TOML, see problems/README.md), or the name of a shipped problem.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Number of steps to check, from the problem's initial state.
    #[arg(long, value_name = "N", default_value_t = 10)]
    steps: usize,
    /// Named parameters, comma separated (default: friction, stiffness and the dissipation of
    /// the approximation, and `modulus@G` for every compliant geometry G).
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
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        None => demo::demo(),
        Some(Command::Simulate(args)) => simulate::simulate(&args),
        Some(Command::Gradcheck(args)) => gradcheck::gradcheck(&args),
        Some(Command::Inspect(args)) => inspect::inspect(&args),
        Some(Command::Optimize(args)) => optimize::optimize(&args),
        Some(Command::Mpc(args)) => optimize::mpc(&args),
        Some(Command::Identify(args)) => identify::identify_command(&args),
        Some(Command::Sweep(args)) => sweep::sweep(&args),
        Some(Command::Figures(args)) => figures::figures(&args),
        Some(Command::View(args)) => view::view(&args),
        Some(Command::List { dir }) => list::list(dir.as_deref()),
        Some(Command::Merge {
            dirs,
            output,
            quiet,
        }) => shard::merge(&dirs, &output, quiet),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e @ stiction::error::Error::Interrupted { .. }) => {
            eprintln!("{e}: what was computed is written, run.json says \"interrupted\"");
            ExitCode::from(interrupt::EXIT_CODE)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
