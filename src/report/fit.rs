//! Files of an identification run (`stiction identify … --out DIR`):
//!
//! - `fit-STEM.csv`, one per trajectory (`STEM` the data file's stem, made unique with an
//!   index when two share it): `t` (s), then for every measured column `c` the pair
//!   `c.measured,c.simulated` at the sample times, the simulation at the estimate;
//! - `fit-STEM.png`: one panel per measured column, measured samples as dots and the
//!   simulation at the estimate as a line, time on the horizontal axis;
//! - `history.csv`: one row per iterate,
//!   `iteration,horizon,cost,gradient_norm,damping,NAME…` (the loss `L`, `‖∇L‖_∞` in the
//!   coordinates `s`, Levenberg–Marquardt's λ, then each parameter's value θ).
//!
//! Numbers are written as in [`super::csv`] (shortest round-trip text).
//!
//! The writer takes plain data ([`IdentificationRun`]): the caller copies it out of its
//! identification report, so this module knows nothing of [`crate::identify`] and
//! `identify` nothing of the files.

use std::io::Write;
use std::path::{Path, PathBuf};

use nalgebra::DMatrix;
use plotters::prelude::*;

use crate::error::{Error, Result};
use crate::report::csv::{write_file, Num};

/// One trajectory as its fit files show it: measured and simulated columns at the sample
/// times.
#[derive(Clone, Copy, Debug)]
pub struct FitTable<'a> {
    /// The data file (its stem names `fit-STEM.*`, its path titles the figure).
    pub source: &'a Path,
    /// Measured column names (nc), e.g. `box.p.x`.
    pub columns: &'a [String],
    /// Sample times (ns, s).
    pub times: &'a [f64],
    /// Measured values (ns × nc, in each column's unit).
    pub measured: &'a DMatrix<f64>,
    /// Simulated values at the estimate (ns × nc).
    pub simulated: &'a DMatrix<f64>,
}

/// One row of `history.csv`: an iterate of the optimizer.
#[derive(Clone, Debug, PartialEq)]
pub struct HistoryRow {
    /// Iteration number (0: the initial point).
    pub iteration: usize,
    /// Last step of the data the cost covers (horizon continuation).
    pub horizon: usize,
    /// Loss `L` at the iterate.
    pub cost: f64,
    /// `‖∇L‖_∞` in the coordinates `s`.
    pub gradient_norm: f64,
    /// Levenberg–Marquardt's damping λ used to reach the iterate (0 for other methods).
    pub damping: f64,
    /// Each parameter's value θ at the iterate (np), in the order of the names.
    pub values: Vec<f64>,
}

/// What an identification run writes: the fit of every trajectory and the iteration history.
#[derive(Clone, Debug)]
pub struct IdentificationRun<'a> {
    /// The problem's name (figure titles).
    pub problem: &'a str,
    /// One per trajectory, in order.
    pub fits: Vec<FitTable<'a>>,
    /// Parameter names (np), the columns of `history.csv` after `damping`.
    pub parameters: Vec<&'a str>,
    /// Iterates, the initial point first.
    pub history: Vec<HistoryRow>,
}

/// File name of the iteration history.
pub const HISTORY: &str = "history.csv";

/// Height of one panel of a fit figure (px).
const PANEL_HEIGHT: u32 = 220;

/// Writes the fit of every trajectory (CSV and PNG) and the iteration history into the
/// existing folder `dir`; returns the paths written.
///
/// # Errors
/// [`Error::Io`] or [`Error::Plot`] naming the file.
pub fn write_identification(run: &IdentificationRun, dir: &Path) -> Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    let mut stems: Vec<String> = Vec::new();
    for (j, fit) in run.fits.iter().enumerate() {
        let base = fit
            .source
            .file_stem()
            .map_or_else(|| format!("{j}"), |s| s.to_string_lossy().into_owned());
        let stem = if stems.contains(&base) {
            format!("fit-{base}-{j}")
        } else {
            format!("fit-{base}")
        };
        stems.push(base);
        paths.push(write_fit_csv(fit, dir, &stem)?);
        paths.push(write_fit_png(fit, dir, &stem, run.problem)?);
    }
    paths.push(write_history(run, dir)?);
    Ok(paths)
}

fn write_fit_csv(fit: &FitTable, dir: &Path, stem: &str) -> Result<PathBuf> {
    write_file(dir, &format!("{stem}.csv"), |w| {
        write!(w, "t")?;
        for c in fit.columns {
            write!(w, ",{c}.measured,{c}.simulated")?;
        }
        writeln!(w)?;
        for (k, t) in fit.times.iter().enumerate() {
            write!(w, "{}", Num(*t))?;
            for c in 0..fit.columns.len() {
                write!(
                    w,
                    ",{},{}",
                    Num(fit.measured[(k, c)]),
                    Num(fit.simulated[(k, c)])
                )?;
            }
            writeln!(w)?;
        }
        Ok(())
    })
}

fn write_history(run: &IdentificationRun, dir: &Path) -> Result<PathBuf> {
    write_file(dir, HISTORY, |w| {
        write!(w, "iteration,horizon,cost,gradient_norm,damping")?;
        for name in &run.parameters {
            write!(w, ",{name}")?;
        }
        writeln!(w)?;
        for h in &run.history {
            write!(
                w,
                "{},{},{},{},{}",
                h.iteration,
                h.horizon,
                Num(h.cost),
                Num(h.gradient_norm),
                Num(h.damping)
            )?;
            for value in &h.values {
                write!(w, ",{}", Num(*value))?;
            }
            writeln!(w)?;
        }
        Ok(())
    })
}

fn write_fit_png(fit: &FitTable, dir: &Path, stem: &str, problem: &str) -> Result<PathBuf> {
    let path = dir.join(format!("{stem}.png"));
    let height = 60 + PANEL_HEIGHT * fit.columns.len().max(1) as u32;
    let root = BitMapBackend::new(&path, (1024, height)).into_drawing_area();
    draw_fit(root, fit, problem).map_err(|e| Error::Plot {
        path: path.clone(),
        message: e.to_string(),
    })?;
    Ok(path)
}

/// The unit of a trajectory column, from its suffix.
fn unit(column: &str) -> &'static str {
    match column.rsplit('.').next().and_then(|c| c.chars().next()) {
        Some('p') => "(m)",
        Some('v') => "(m/s)",
        Some('w') => "(rad/s)",
        _ => "",
    }
}

fn draw_fit<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    fit: &FitTable,
    problem: &str,
) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let title = format!(
        "{problem}: {} measured (dots) vs simulated at the estimate (line)",
        fit.source.display()
    );
    let root = root.titled(&title, ("sans-serif", 20))?;
    let t_end = fit.times.last().copied().unwrap_or(0.0).max(1e-9);
    for (c, area) in root
        .split_evenly((fit.columns.len().max(1), 1))
        .iter()
        .enumerate()
        .take(fit.columns.len())
    {
        let measured: Vec<(f64, f64)> = fit
            .times
            .iter()
            .enumerate()
            .map(|(k, &t)| (t, fit.measured[(k, c)]))
            .collect();
        let simulated: Vec<(f64, f64)> = fit
            .times
            .iter()
            .enumerate()
            .map(|(k, &t)| (t, fit.simulated[(k, c)]))
            .collect();
        let (lo, hi) = measured
            .iter()
            .chain(&simulated)
            .map(|p| p.1)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| {
                (lo.min(y), hi.max(y))
            });
        let half = 0.55 * (hi - lo).max(1e-9);
        let mid = 0.5 * (lo + hi);
        let mut chart = ChartBuilder::on(area)
            .margin(8)
            .x_label_area_size(35)
            .y_label_area_size(90)
            .build_cartesian_2d(0.0..t_end, mid - half..mid + half)?;
        chart
            .configure_mesh()
            .x_desc("time t (s)")
            .y_desc(format!("{} {}", fit.columns[c], unit(&fit.columns[c])))
            .draw()?;
        chart.draw_series(measured.iter().map(|&p| Circle::new(p, 2, BLACK.filled())))?;
        chart.draw_series(LineSeries::new(simulated, RED.stroke_width(2)))?;
    }
    root.present()
}
