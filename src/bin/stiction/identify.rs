//! `stiction identify`: estimate contact parameters from measured trajectories (see
//! `problems/identify/`).

use std::path::{Path, PathBuf};

use clap::Args;
use nalgebra::Vector3;

use stiction::error::Result;
use stiction::identify::{
    identify, load_identification, IdentificationProblem, IdentificationReport, MeasuredTrajectory,
    Method,
};
use stiction::report::fit::{write_identification, FitTable, HistoryRow, IdentificationRun};
use stiction::report::replay::{Marker, ReplayRecording};

use crate::output;
use crate::progress::Spinner;
use crate::replay;
use crate::run_record::{RunRecord, Status};

/// Arguments of `stiction identify`.
#[derive(Args)]
pub struct IdentifyArgs {
    /// Identification problem file (TOML, see problems/README.md and problems/identify/).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Trajectory CSVs (as written by `stiction simulate` for the problem's scene), replacing
    /// the data files the problem names.
    #[arg(long, value_name = "CSV", num_args = 1..)]
    data: Option<Vec<PathBuf>>,
    #[command(flatten)]
    output: output::OutArgs,
    /// Optimizer, replacing the problem file's.
    #[arg(long, value_parser = ["levenberg-marquardt", "lbfgs"])]
    method: Option<String>,
    /// Also write a 3-D replay into replay/: each trajectory simulated at the estimate, with
    /// the measured body positions as markers (`stiction view DIR`; needs three.js from
    /// scripts/viewer/setup.sh or $STICTION_THREE_JS).
    #[arg(long)]
    replay: bool,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// No progress display, no table (the JSON object of --json is still printed).
    #[arg(long)]
    quiet: bool,
}

/// `stiction identify FILE [--data CSV...] --out DIR`.
pub fn identify_command(args: &IdentifyArgs) -> Result<()> {
    let file = load_identification(&args.file, args.data.as_deref())?;
    let mut settings = file.settings;
    match args.method.as_deref() {
        Some("lbfgs") => settings.method = Method::Lbfgs,
        Some(_) => settings.method = Method::LevenbergMarquardt,
        None => {}
    }
    replay::prepare(args.replay)?;
    let out = output::explicit_or_numbered(args.output.prepare_explicit()?, &file.problem.name)?;
    let spinner = Spinner::new(
        &format!("identifying {}", file.problem.name),
        args.quiet || args.json,
    );
    let report = identify(&file.problem, &settings);
    spinner.finish();
    let report = report.map_err(|e| crate::optimize::failed(&out, 0, e))?;
    let mut written = write_identification(&identification_run(&report, &file.problem), &out)?;
    if args.replay {
        written.push(write_replay(&report, &file.problem, &out)?);
    }
    RunRecord {
        steps_planned: report.iterations,
        steps_completed: report.iterations,
        ..RunRecord::new(Status::Complete, None)
    }
    .write(&out)?;
    if args.json {
        println!("{}", to_json(&report));
    } else if !args.quiet {
        print_table(&report, &out, &written);
    }
    Ok(())
}

/// Writes `out/replay/`: one recording per measured trajectory, simulated at the estimate
/// over the measured span, with the measured positions of every body whose `px, py, pz` are
/// all measured as markers. Returns the page's path.
fn write_replay(
    report: &IdentificationReport,
    problem: &IdentificationProblem,
    out: &Path,
) -> Result<PathBuf> {
    let s = report
        .history
        .last()
        .map_or_else(|| problem.initial_coordinates(), |h| h.s.clone());
    let mut sim = problem.simulator_at(&s)?;
    let mut rollouts = Vec::new();
    for m in &problem.trajectories {
        let duration = m.times.last().copied().unwrap_or(0.0);
        let recording = if duration > 0.0 {
            stiction::simulate::run(&mut sim, &problem.initial_state, duration, |_, _| {})?
        } else {
            stiction::simulate::Recording {
                states: vec![problem.initial_state.clone()],
                reports: Vec::new(),
            }
        };
        rollouts.push((m, recording));
    }
    let recordings: Vec<ReplayRecording> = rollouts
        .iter()
        .enumerate()
        .map(|(k, (m, recording))| ReplayRecording {
            name: format!("fit-{}", k + 1),
            title: format!(
                "{}: {} simulated at the estimate",
                problem.name,
                m.source.file_name().map_or_else(
                    || m.source.display().to_string(),
                    |f| f.to_string_lossy().into()
                )
            ),
            sim: &sim,
            recording,
            targets: Vec::new(),
            markers: measured_markers(m),
        })
        .collect();
    replay::write(out, &recordings)
}

/// The measured positions of every body whose `BODY.px`, `BODY.py` and `BODY.pz` columns are
/// all in `m`.
fn measured_markers(m: &MeasuredTrajectory) -> Vec<Marker> {
    let column = |name: &str| m.columns.iter().position(|c| c == name);
    m.columns
        .iter()
        .filter_map(|c| c.strip_suffix(".px"))
        .filter_map(|body| {
            let [x, y, z] = ["px", "py", "pz"].map(|a| column(&format!("{body}.{a}")));
            let (x, y, z) = (x?, y?, z?);
            Some(Marker {
                label: format!("{body} (measured)"),
                samples: m
                    .times
                    .iter()
                    .enumerate()
                    .map(|(i, &t)| {
                        let v = &m.values;
                        (t, Vector3::new(v[(i, x)], v[(i, y)], v[(i, z)]))
                    })
                    .collect(),
            })
        })
        .collect()
}

/// The report's fits and history as the plain data the fit files are written from.
fn identification_run<'a>(
    report: &'a IdentificationReport,
    problem: &'a IdentificationProblem,
) -> IdentificationRun<'a> {
    IdentificationRun {
        problem: &report.problem,
        fits: report
            .fits
            .iter()
            .map(|fit| FitTable {
                source: &fit.source,
                columns: &fit.columns,
                times: &fit.times,
                measured: &fit.measured,
                simulated: &fit.simulated,
            })
            .collect(),
        parameters: problem.parameters.iter().map(|p| p.name.as_str()).collect(),
        history: report
            .history
            .iter()
            .map(|h| HistoryRow {
                iteration: h.iteration,
                horizon: h.horizon,
                cost: h.cost,
                gradient_norm: h.gradient_norm,
                damping: h.damping,
                values: problem.values(&h.s),
            })
            .collect(),
    }
}

/// `{"problem", "status", "iterations", "wall_s", "parameters": [{"name", "initial",
/// "estimate", "ci95"}]}`, in that order; `estimate` and `ci95` are `null` for a parameter
/// the data do not identify.
fn to_json(report: &IdentificationReport) -> serde_json::Value {
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
    serde_json::json!({
        "problem": report.problem, "status": report.status.name(),
        "iterations": report.iterations, "wall_s": report.wall_s, "parameters": parameters,
    })
}

/// The estimates with their intervals, the fit per trajectory and the files written.
fn print_table(report: &IdentificationReport, out: &Path, written: &[PathBuf]) {
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
    println!("wrote {}:", out.display());
    for path in written {
        println!("  {}", path.display());
    }
}
