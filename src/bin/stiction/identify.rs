//! `stiction identify`: estimate contact parameters from measured trajectories (see
//! `problems/identify/`).

use std::path::{Path, PathBuf};

use clap::Args;
use nalgebra::Vector3;

use stiction::error::{Error, Result};
use stiction::identify::{
    identify_until, load_identification, IdentificationProblem, IdentificationReport,
    MeasuredTrajectory, Method, Status as FitStatus,
};
use stiction::report::fit::{write_identification, FitTable, HistoryRow, IdentificationRun};
use stiction::report::replay::{Marker, ReplayRecording};

use crate::interrupt;
use crate::output;
use crate::progress::Spinner;
use crate::replay;
use crate::run_record::RunRecord;
use crate::shipped;

/// Arguments of `stiction identify`.
#[derive(Args)]
pub struct IdentifyArgs {
    /// Identification problem file (TOML, see problems/README.md and problems/identify/), or
    /// the name of a shipped one (identify-all, identify-friction, identify-stiffness-damping;
    /// found in the source checkout the binary was built from).
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
    /// Print one JSON object instead of a table (the object `estimates.json` holds): "problem",
    /// "status" (converged, stalled, max-iterations, failed, or interrupted by Ctrl-C), "iterations", "wall_s", "parameters" (each "name",
    /// "initial", "estimate" (null if not identifiable), "ci95" [lo, hi] (an end null where
    /// the data do not bound it), "identifiable", "final"), "reduced_chi2", "gradient_norm",
    /// "starts" (count), "best_basin" (starts that reached the best loss), "status_reason",
    /// "chi2_flagged", "chi2_range", "noise_known", "variance_factor", "start_costs",
    /// "shooting", "unidentifiable_directions" (docs/identification.md).
    #[arg(long)]
    json: bool,
    /// No progress display, no table (the JSON object of --json is still printed).
    #[arg(long)]
    quiet: bool,
}

/// `stiction identify FILE [--data CSV...] --out DIR`.
pub fn identify_command(args: &IdentifyArgs) -> Result<()> {
    let path = shipped::identification(&args.file)?;
    let file = load_identification(&path, args.data.as_deref())?;
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
    interrupt::install();
    let report = identify_until(&file.problem, &settings, interrupt::flag());
    spinner.finish();
    let report = report.map_err(|e| crate::optimize::failed(&out, 0, e))?;
    let mut written = write_identification(&identification_run(&report, &file.problem), &out)?;
    let json = to_json(&report);
    let estimates = out.join("estimates.json");
    let text = serde_json::to_string_pretty(&json).expect("invariant: plain JSON values");
    std::fs::write(&estimates, text + "\n").map_err(|source| Error::Io {
        path: estimates.clone(),
        source,
    })?;
    written.push(estimates);
    if args.replay {
        written.push(write_replay(&report, &file.problem, &out)?);
    }
    let end = if report.status == FitStatus::Interrupted {
        Err(Error::Interrupted {
            steps_completed: report.iterations,
            t: 0.0,
        })
    } else {
        Ok(())
    };
    RunRecord {
        steps_planned: report.iterations,
        steps_completed: report.iterations,
        ..RunRecord::new(crate::simulate::status_of(&end), None)
    }
    .write(&out)?;
    if args.json {
        println!("{json}");
    } else if !args.quiet {
        print_table(&report, &out, &written);
    }
    end
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
/// "estimate", "ci95", "identifiable", "final"}], "reduced_chi2", "gradient_norm", "starts",
/// "best_basin", "status_reason", "chi2_flagged", "chi2_range", "noise_known",
/// "variance_factor", "start_costs", "shooting", "unidentifiable_directions"}`, in that
/// order (keys after `parameters` and after `ci95` were added later, at the end);
/// `estimate` is `null` for a parameter the data do not identify, and either end of `ci95`
/// is `null` where the data do not bound the parameter on that side. Non-finite numbers
/// (none is expected: a non-finite loss is an error) would print as `null`.
fn to_json(report: &IdentificationReport) -> serde_json::Value {
    let parameters: Vec<_> = report
        .estimates
        .iter()
        .map(|e| {
            serde_json::json!({
                "name": e.name, "initial": e.initial, "estimate": e.estimate,
                "ci95": [e.ci95.0, e.ci95.1], "identifiable": e.identifiable,
                "final": e.final_value,
            })
        })
        .collect();
    let g = &report.goodness;
    let names: Vec<&str> = report.estimates.iter().map(|e| e.name.as_str()).collect();
    let directions: Vec<_> = report
        .covariance
        .null_directions
        .iter()
        .map(|(eigenvalue, v)| {
            let components: serde_json::Map<String, serde_json::Value> = names
                .iter()
                .zip(v)
                .map(|(n, x)| ((*n).to_string(), serde_json::json!(x)))
                .collect();
            serde_json::json!({"eigenvalue": eigenvalue, "direction": components})
        })
        .collect();
    serde_json::json!({
        "problem": report.problem, "status": report.status.name(),
        "iterations": report.iterations, "wall_s": report.wall_s, "parameters": parameters,
        "reduced_chi2": g.reduced_chi2, "gradient_norm": report.gradient_norm,
        "starts": report.starts.len(), "best_basin": report.best_basin,
        "status_reason": report.status_reason, "chi2_flagged": g.flagged,
        "chi2_range": [g.range.0, g.range.1], "noise_known": g.noise_known,
        "variance_factor": g.variance_factor,
        "start_costs": report.starts.iter().map(|s| s.cost).collect::<Vec<_>>(),
        "shooting": report.shooting.1,
        "unidentifiable_directions": directions,
    })
}

/// The estimates with their intervals, the fit per trajectory and the files written.
fn print_table(report: &IdentificationReport, out: &Path, written: &[PathBuf]) {
    println!(
        "{} ({}): {} after {} iterations in {:.3} s wall time ({})",
        report.problem,
        report.method.name(),
        report.status.name(),
        report.iterations,
        report.wall_s,
        report.status_reason
    );
    let g = &report.goodness;
    if g.noise_known {
        println!(
            "reduced chi-square {:.4} over {} degrees of freedom (99.9 % range for a right model [{:.4}, {:.4}]){}",
            g.reduced_chi2,
            g.dof,
            g.range.0,
            g.range.1,
            match (g.flagged, g.reduced_chi2 > g.range.1) {
                (true, true) => format!(
                    ": MODEL MISMATCH, the residuals exceed the noise; intervals widened by {:.3}",
                    g.variance_factor.sqrt()
                ),
                (true, false) => ": the residuals are smaller than the given noise level".into(),
                _ => String::new(),
            }
        );
    } else {
        println!(
            "noise level estimated from the residuals (sigma-hat^2 = {:.4e} in the data's units): give `noise` for a goodness-of-fit test",
            g.variance_factor
        );
    }
    println!(
        "{} starts, {} reached the best loss (start {}); multiple shooting: {}",
        report.starts.len(),
        report.best_basin,
        report.best_start,
        report.shooting.1
    );
    for (k, s) in report.starts.iter().enumerate() {
        let show = |v: &[f64]| {
            v.iter()
                .map(|x| format!("{x:.4e}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        match (&s.cost, &s.error) {
            (Some(c), _) => println!(
                "  start {k}: from [{}]{} to [{}], loss {c:.6e}",
                show(&s.initial),
                s.shooting_estimate
                    .as_ref()
                    .map_or(String::new(), |m| format!(
                        " by multiple shooting to [{}], then",
                        show(m)
                    )),
                show(&s.estimate)
            ),
            (None, e) => println!(
                "  start {k}: from [{}] failed: {}",
                show(&s.initial),
                e.as_deref().unwrap_or("non-finite loss")
            ),
        }
    }
    println!(
        "{:<24}{:>14}{:>14}{:>32}",
        "parameter", "initial", "estimate", "95 % interval"
    );
    let end = |x: Option<f64>, open: &str| x.map_or(open.to_string(), |x| format!("{x:.6e}"));
    for e in &report.estimates {
        let interval = format!("[{}, {}]", end(e.ci95.0, "-inf"), end(e.ci95.1, "+inf"));
        match e.estimate {
            Some(x) => println!(
                "{:<24}{:>14.6e}{:>14.6e}    {interval}",
                e.name, e.initial, x
            ),
            None => println!(
                "{:<24}{:>14.6e}  not identifiable from this data: 95 % region {interval} within the search bounds (last iterate {:.6e})",
                e.name, e.initial, e.final_value
            ),
        }
    }
    for (eigenvalue, v) in &report.covariance.null_directions {
        let direction: Vec<String> = report
            .estimates
            .iter()
            .zip(v)
            .filter(|(_, x)| x.abs() >= 1e-3)
            .map(|(e, x)| format!("{x:+.3} {}", e.name))
            .collect();
        println!(
            "the data do not see the direction {} (eigenvalue {eigenvalue:.1e} of the scaled Gauss-Newton matrix)",
            direction.join(" ")
        );
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
