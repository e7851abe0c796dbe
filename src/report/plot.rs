//! Figures of a rollout, after ICF Figs. 2, 5 and 14.
//!
//! Five figures (six with joints), written as PNG and, on request, SVG:
//!
//! - `contact_velocity`: per pair of bodies in contact and per step, the largest slip speed
//!   `max_i ‖v_t,i‖` (m/s) of the pair's contacts (top) and the normal velocity `v_n` (m/s,
//!   positive when separating) of the contact carrying the largest normal force (bottom).
//!   Lines break where the pair has no contact. Lagged keeps `v_n = 0` while sliding; Similar
//!   and SAP glide (ICF Fig. 2).
//! - `contact_force`: the total normal force `Σ f_n` and total tangential force `Σ ‖f_t‖` (N)
//!   over all contacts, per step.
//! - `positions`: the x (top) and z (bottom) coordinates (m) of the origin of every tree body.
//! - `joints`, for scenes with revolute or prismatic joints: each joint's coordinate `q`, angles
//!   (rad) and positions (m) in separate panels, named after the body the joint moves.
//! - `velocities`: the velocity components `v_x`, `v_z` (m/s) of the origin of every tree body,
//!   and its angular speed `‖ω‖` (rad/s), world frame.
//! - `solver`: Newton and line-search iterations per step, the number of contacts, the log10
//!   of the condition estimate of the Newton Hessian (ICF Fig. 14) and the log10 of the
//!   effective stiction tolerance (m/s) over the contacts that push: min, mean of the logs,
//!   max (ICF Fig. 15).
//!
//! Time (s) is on the horizontal axis, at the end of each step. Every panel is drawn by one
//! routine from a list of named series; each figure's title names the problem, the contact
//! approximation and δt.

use std::ops::Range;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::{Error, Result};
use crate::multibody::model::BodyId;
use crate::report::{body_states, BodyState};
use crate::simulate::{Recording, SweepRow};
use crate::step::Simulator;

/// Image file formats of the figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageFormat {
    /// Raster image (`.png`), 1024 px wide.
    Png,
    /// Vector image (`.svg`).
    Svg,
}

impl ImageFormat {
    /// The file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            ImageFormat::Png => "png",
            ImageFormat::Svg => "svg",
        }
    }
}

/// A panel whose values span less than this fraction of their magnitude (or less than
/// [`FLAT_FLOOR`] in its unit near zero) is drawn as a flat line in a window of ±10 % of the
/// value (±[`FLAT_FLOOR`] at least): Lagged's `v_n` while sliding, a body at rest. Its ticks
/// then read like the value, not like magnified round-off.
const FLAT_RELATIVE: f64 = 1e-6;

/// See [`FLAT_RELATIVE`] (in the panel's unit).
const FLAT_FLOOR: f64 = 1e-3;

/// Panels with more series than this get a note naming the count and the file with the data
/// instead of a legend that would not fit.
pub const MAX_LEGEND: usize = 10;

/// Draws the five figures of `recording` into the existing folder `dir`, once per format in
/// `formats`, replacing files of the same names; `name` (the problem's) heads every title.
/// Returns the paths written, figure by figure.
///
/// # Errors
/// [`Error::Plot`] naming the figure that could not be drawn or written.
pub fn write_plots(
    recording: &Recording,
    sim: &Simulator,
    name: &str,
    dir: &Path,
    formats: &[ImageFormat],
) -> Result<Vec<PathBuf>> {
    let title = format!(
        "{name}: {}, δt = {} s",
        sim.settings.approximation, sim.settings.dt
    );
    let t_end = recording.states.last().map_or(0.0, |s| s.t);
    let time = 0.0..t_end.max(sim.settings.dt);
    let figures = [
        contact_velocity(recording, sim),
        contact_force(recording),
        positions(recording, sim),
        velocities(recording, sim),
        solver(recording),
    ]
    .into_iter()
    .chain(joints(recording, sim));
    save_all(figures, &title, &time, dir, formats)
}

/// Saves every figure of a rollout (time on the horizontal axis) in every format.
fn save_all(
    figures: impl IntoIterator<Item = Figure>,
    title: &str,
    time: &Range<f64>,
    dir: &Path,
    formats: &[ImageFormat],
) -> Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    for figure in figures {
        for &format in formats {
            paths.push(save(&figure, title, (time, TIME_AXIS, false), dir, format)?);
        }
    }
    Ok(paths)
}

/// Draws the figures of a rollout of the geometrically implicit (ncp) stepper into `dir`:
/// `positions` and `velocities` as for the convex stepper (`sim` is the same scene), and
///
/// - `contact_velocity`: per pair of bodies in contact (`p_n > 0`), the slip speed
///   `‖(W_tᵀν, W_oᵀν)‖` (m/s, top) and the gap δ (m, bottom) at the end of each step;
/// - `contact_force`: `Σ p_n/δt` and `Σ ‖(p_t, p_o)‖/δt` (N) over the pairs;
/// - `solver`: semismooth Newton and line-search iterations, the pairs in contact and the
///   final `log10 ‖Φ‖∞` per step.
///
/// Returns the paths written.
///
/// # Errors
/// [`Error::Plot`] naming the figure that could not be drawn or written.
pub fn write_ncp_plots(
    recording: &crate::ncp::NcpRecording,
    sim: &Simulator,
    (name, dt): (&str, f64),
    dir: &Path,
    formats: &[ImageFormat],
) -> Result<Vec<PathBuf>> {
    let title = format!("{name}: ncp, δt = {dt} s");
    let t_end = recording.states.last().map_or(0.0, |s| s.t);
    let time = 0.0..t_end.max(dt);
    let states = Recording {
        states: recording.states.clone(),
        reports: Vec::new(),
    };
    let figures = [
        ncp_contacts(recording, sim),
        ncp_forces(recording, dt),
        positions(&states, sim),
        velocities(&states, sim),
        ncp_solver(recording),
    ];
    save_all(figures, &title, &time, dir, formats)
}

/// Slip speed and gap per body pair in contact (ncp).
fn ncp_contacts(recording: &crate::ncp::NcpRecording, sim: &Simulator) -> Figure {
    let mut pairs: Vec<((BodyId, BodyId), Series, Series, usize)> = Vec::new();
    for (k, (report, end)) in recording
        .reports
        .iter()
        .zip(&recording.states[1..])
        .enumerate()
    {
        for c in report.contacts.iter().filter(|c| c.impulse[0] > 0.0) {
            let key = (c.body_a, c.body_b);
            let index = match pairs.iter().position(|p| p.0 == key) {
                Some(i) => i,
                None => {
                    let name = format!(
                        "{} – {}",
                        sim.model.name_of(c.body_a),
                        sim.model.name_of(c.body_b)
                    );
                    pairs.push((
                        key,
                        Series::new(name.clone()),
                        Series::new(name),
                        usize::MAX,
                    ));
                    pairs.len() - 1
                }
            };
            let (_, slip, gap, last) = &mut pairs[index];
            let continues = last.wrapping_add(1) == k;
            slip.push((end.t, c.velocity[0].hypot(c.velocity[1])), continues);
            gap.push((end.t, c.gap), continues);
            *last = k;
        }
    }
    let (slip, gap) = pairs.into_iter().map(|(_, s, g, _)| (s, g)).unzip();
    Figure {
        stem: "contact_velocity",
        series_are: "body pairs in contact, see contacts.csv",
        panels: vec![
            Panel {
                y_label: "slip speed ‖v_t‖ (m/s)",
                series: slip,
            },
            Panel {
                y_label: "gap δ (m)",
                series: gap,
            },
        ],
    }
}

/// Total normal and tangential contact force per step (ncp impulses over δt).
fn ncp_forces(recording: &crate::ncp::NcpRecording, dt: f64) -> Figure {
    let mut normal = Series::new("Σ p_n / δt".into());
    let mut tangential = Series::new("Σ ‖(p_t, p_o)‖ / δt".into());
    for (report, end) in recording.reports.iter().zip(&recording.states[1..]) {
        let (n, t) = report.contacts.iter().fold((0.0, 0.0), |(n, t), c| {
            (n + c.impulse[0], t + c.impulse[1].hypot(c.impulse[2]))
        });
        normal.push((end.t, n / dt), true);
        tangential.push((end.t, t / dt), true);
    }
    Figure {
        stem: "contact_force",
        series_are: "series",
        panels: vec![
            Panel {
                y_label: "normal force (N)",
                series: vec![normal],
            },
            Panel {
                y_label: "tangential force (N)",
                series: vec![tangential],
            },
        ],
    }
}

/// Iterations, contacts and residual per step (ncp).
fn ncp_solver(recording: &crate::ncp::NcpRecording) -> Figure {
    let mut newton = Series::new("semismooth Newton iterations".into());
    let mut line_search = Series::new("line-search iterations".into());
    let mut contacts = Series::new("pairs in contact".into());
    let mut residual = Series::new("log10 ‖Φ‖∞".into());
    for (report, end) in recording.reports.iter().zip(&recording.states[1..]) {
        newton.push((end.t, report.stats.iterations as f64), true);
        line_search.push((end.t, report.stats.line_search_iterations as f64), true);
        let touching = report
            .contacts
            .iter()
            .filter(|c| c.impulse[0] > 0.0)
            .count();
        contacts.push((end.t, touching as f64), true);
        if report.stats.residual > 0.0 {
            residual.push((end.t, report.stats.residual.log10()), true);
        }
    }
    Figure {
        stem: "solver",
        series_are: "series, see stats.csv",
        panels: vec![
            Panel {
                y_label: "iterations per step (count)",
                series: vec![newton, line_search],
            },
            Panel {
                y_label: "pairs in contact (count)",
                series: vec![contacts],
            },
            Panel {
                y_label: "log10 ‖Φ‖∞ (dimensionless)",
                series: vec![residual],
            },
        ],
    }
}

/// A named curve; a new segment starts wherever the data has a gap.
struct Series {
    name: String,
    segments: Vec<Vec<(f64, f64)>>,
}

impl Series {
    fn new(name: String) -> Self {
        Series {
            name,
            segments: Vec::new(),
        }
    }

    /// Appends `point`, continuing the last segment if `continues`, else starting a new one.
    fn push(&mut self, point: (f64, f64), continues: bool) {
        match self.segments.last_mut() {
            Some(segment) if continues => segment.push(point),
            _ => self.segments.push(vec![point]),
        }
    }
}

/// One chart: a vertical-axis label with its unit and the series drawn in it.
struct Panel {
    y_label: &'static str,
    series: Vec<Series>,
}

/// A figure: panels stacked vertically, saved as `stem.png` / `stem.svg`.
struct Figure {
    stem: &'static str,
    panels: Vec<Panel>,
    /// What each series is and where its data are, for the note that replaces a legend of
    /// more than [`MAX_LEGEND`] entries (`bodies, see trajectory.csv`).
    series_are: &'static str,
}

/// Label of the horizontal axis of the time-series figures.
const TIME_AXIS: &str = "time t (s)";

/// Draws a stiffness sweep (ICF Figs. 17-18) as `dir/sweep.png` / `.svg`: against log10 k,
/// the log10 of the mean steady penetration (m), the mean Newton iterations per step and the
/// mean log10 condition estimate.
///
/// # Errors
/// [`Error::Plot`] naming the figure that could not be drawn or written.
pub fn write_sweep_plot(
    rows: &[SweepRow],
    title: &str,
    dir: &Path,
    formats: &[ImageFormat],
) -> Result<Vec<PathBuf>> {
    let mut penetration = Series::new("mean steady penetration".into());
    let mut iterations = Series::new("mean Newton iterations per step".into());
    let mut condition = Series::new("mean log10 condition estimate".into());
    for row in rows {
        let x = row.stiffness.log10();
        if let Some(p) = row.mean_penetration.filter(|p| *p > 0.0) {
            penetration.push((x, p.log10()), true);
        }
        iterations.push((x, row.mean_iterations), true);
        if let Some(c) = row.mean_log10_condition {
            condition.push((x, c), true);
        }
    }
    let figure = Figure {
        stem: "sweep",
        series_are: "series",
        panels: vec![
            Panel {
                y_label: "log10 penetration (m)",
                series: vec![penetration],
            },
            Panel {
                y_label: "iterations per step (count)",
                series: vec![iterations],
            },
            Panel {
                y_label: "log10 κ₁(H) (dimensionless)",
                series: vec![condition],
            },
        ],
    };
    let xs = rows.iter().map(|r| r.stiffness.log10());
    let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let range = if lo < hi { lo..hi } else { lo - 1.0..lo + 1.0 };
    formats
        .iter()
        .map(|&format| {
            save(
                &figure,
                title,
                (&range, "log10 stiffness k (N/m)", false),
                dir,
                format,
            )
        })
        .collect()
}

/// One named curve of a [`write_line_figure`] panel: points `(x, y)` in order; a non-finite
/// `y` breaks the line.
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    /// Legend entry.
    pub name: String,
    /// The points, in the panel's units.
    pub points: Vec<(f64, f64)>,
}

/// One panel of a [`write_line_figure`]: the vertical axis's label (with its unit) and curves.
#[derive(Clone, Debug, PartialEq)]
pub struct LinePanel {
    /// Vertical-axis label with its unit.
    pub y_label: &'static str,
    /// The curves drawn in it.
    pub curves: Vec<Curve>,
}

/// Draws `panels` stacked under `title` as `dir/stem.ext`, the horizontal axis `x_label` over
/// `x_range` in every panel, with the routine of the rollout figures (for the papers' figures,
/// `stiction figures`). With `equal_aspect` a unit across is as long as a unit up (a top
/// view): each panel's ranges grow about their middles until they fit. Returns the path
/// written.
///
/// # Errors
/// [`Error::Plot`] naming the file that could not be drawn or written.
pub fn write_line_figure(
    (stem, title): (&'static str, &str),
    (x_label, x_range, equal_aspect): (&str, Range<f64>, bool),
    panels: &[LinePanel],
    dir: &Path,
    format: ImageFormat,
) -> Result<PathBuf> {
    let panels = panels
        .iter()
        .map(|p| Panel {
            y_label: p.y_label,
            series: p
                .curves
                .iter()
                .map(|c| {
                    let mut series = Series::new(c.name.clone());
                    let mut continues = false;
                    for &(x, y) in &c.points {
                        if y.is_finite() {
                            series.push((x, y), continues);
                        }
                        continues = y.is_finite();
                    }
                    series
                })
                .collect(),
        })
        .collect();
    let figure = Figure {
        stem,
        panels,
        series_are: "curves",
    };
    save(
        &figure,
        title,
        (&x_range, x_label, equal_aspect),
        dir,
        format,
    )
}

/// Slip and normal velocity per body pair (see the module docs).
fn contact_velocity(recording: &Recording, sim: &Simulator) -> Figure {
    // Pairs in order of first contact, each with its two series and the last step it was seen.
    let mut pairs: Vec<((BodyId, BodyId), Series, Series, usize)> = Vec::new();
    for (k, (report, end)) in recording
        .reports
        .iter()
        .zip(&recording.states[1..])
        .enumerate()
    {
        for c in &report.contacts {
            let key = (c.body_a, c.body_b);
            if !pairs.iter().any(|p| p.0 == key) {
                let name = format!(
                    "{} – {}",
                    sim.model.name_of(c.body_a),
                    sim.model.name_of(c.body_b)
                );
                pairs.push((
                    key,
                    Series::new(name.clone()),
                    Series::new(name),
                    usize::MAX,
                ));
            }
        }
        for (key, slip, normal, last) in &mut pairs {
            let contacts = report
                .contacts
                .iter()
                .filter(|c| (c.body_a, c.body_b) == *key);
            let max_slip = contacts.clone().map(|c| c.slip).reduce(f64::max);
            let loaded = contacts.max_by(|a, b| a.normal_force.total_cmp(&b.normal_force));
            if let (Some(max_slip), Some(loaded)) = (max_slip, loaded) {
                let continues = last.wrapping_add(1) == k;
                slip.push((end.t, max_slip), continues);
                normal.push((end.t, loaded.normal_velocity), continues);
                *last = k;
            }
        }
    }
    let (slip, normal) = pairs.into_iter().map(|(_, s, n, _)| (s, n)).unzip();
    Figure {
        stem: "contact_velocity",
        series_are: "body pairs in contact, see contacts.csv",
        panels: vec![
            Panel {
                y_label: "max slip speed ‖v_t‖ (m/s)",
                series: slip,
            },
            Panel {
                y_label: "normal velocity v_n (m/s)",
                series: normal,
            },
        ],
    }
}

/// Total normal and tangential force per step.
fn contact_force(recording: &Recording) -> Figure {
    let mut normal = Series::new("Σ f_n".into());
    let mut tangential = Series::new("Σ ‖f_t‖".into());
    for (report, end) in recording.reports.iter().zip(&recording.states[1..]) {
        let sum =
            |f: fn(&crate::step::ContactResult) -> f64| report.contacts.iter().map(f).sum::<f64>();
        normal.push((end.t, sum(|c| c.normal_force)), true);
        tangential.push((end.t, sum(|c| c.tangential_force)), true);
    }
    Figure {
        stem: "contact_force",
        series_are: "series",
        panels: vec![
            Panel {
                y_label: "normal force (N)",
                series: vec![normal],
            },
            Panel {
                y_label: "tangential force (N)",
                series: vec![tangential],
            },
        ],
    }
}

/// One series per tree body of `value(state of the body)` at every recorded state.
fn per_body(
    recording: &Recording,
    sim: &Simulator,
    states: &[Vec<BodyState>],
    value: impl Fn(&BodyState) -> f64,
) -> Vec<Series> {
    sim.model
        .bodies
        .iter()
        .enumerate()
        .map(|(b, body)| Series {
            name: body.name.clone(),
            segments: vec![recording
                .states
                .iter()
                .zip(states)
                .map(|(s, row)| (s.t, value(&row[b])))
                .collect()],
        })
        .collect()
}

/// The coordinate of every revolute joint (rad) and every prismatic joint (m), named after
/// the body it moves; `None` for a scene without such joints (free bodies only).
fn joints(recording: &Recording, sim: &Simulator) -> Option<Figure> {
    use crate::multibody::JointKind;
    let model = &sim.model;
    let series = |revolute: bool| -> Vec<Series> {
        model
            .joints
            .iter()
            .zip(&model.bodies)
            .filter(|(j, _)| match j.kind {
                JointKind::Revolute { .. } => revolute,
                JointKind::Prismatic { .. } => !revolute,
                _ => false,
            })
            .map(|(j, body)| Series {
                name: body.name.clone(),
                segments: vec![recording
                    .states
                    .iter()
                    .map(|s| (s.t, s.q[j.q_start]))
                    .collect()],
            })
            .collect()
    };
    let panels: Vec<Panel> = [
        ("joint angle q (rad)", series(true)),
        ("joint position q (m)", series(false)),
    ]
    .into_iter()
    .filter(|(_, series)| !series.is_empty())
    .map(|(y_label, series)| Panel { y_label, series })
    .collect();
    (!panels.is_empty()).then_some(Figure {
        stem: "joints",
        series_are: "joints, see trajectory.csv",
        panels,
    })
}

/// x and z of every tree body's origin.
fn positions(recording: &Recording, sim: &Simulator) -> Figure {
    let states = body_states(recording, &sim.model);
    Figure {
        stem: "positions",
        series_are: "bodies, see trajectory.csv",
        panels: vec![
            Panel {
                y_label: "x (m)",
                series: per_body(recording, sim, &states, |b| b.p_WB.x),
            },
            Panel {
                y_label: "z (m)",
                series: per_body(recording, sim, &states, |b| b.p_WB.z),
            },
        ],
    }
}

/// v_x, v_z and ‖ω‖ of every tree body.
fn velocities(recording: &Recording, sim: &Simulator) -> Figure {
    let states = body_states(recording, &sim.model);
    Figure {
        stem: "velocities",
        series_are: "bodies, see trajectory.csv",
        panels: vec![
            Panel {
                y_label: "velocity v_x (m/s)",
                series: per_body(recording, sim, &states, |b| b.v_WB.x),
            },
            Panel {
                y_label: "velocity v_z (m/s)",
                series: per_body(recording, sim, &states, |b| b.v_WB.z),
            },
            Panel {
                y_label: "angular speed ‖ω‖ (rad/s)",
                series: per_body(recording, sim, &states, |b| b.w_WB.norm()),
            },
        ],
    }
}

/// Iterations, contacts, condition estimate and effective stiction tolerance per step (ICF
/// Figs. 14-15).
fn solver(recording: &Recording) -> Figure {
    let mut newton = Series::new("Newton iterations".into());
    let mut line_search = Series::new("line-search iterations".into());
    let mut contacts = Series::new("contacts".into());
    let mut condition = Series::new("log10 condition estimate of H".into());
    let mut tolerance = [
        Series::new("min over contacts".into()),
        Series::new("mean (of the logs)".into()),
        Series::new("max".into()),
    ];
    let mut last_condition = None;
    let mut last_tolerance = None;
    for (step, (report, end)) in recording
        .reports
        .iter()
        .zip(&recording.states[1..])
        .enumerate()
    {
        newton.push((end.t, report.stats.iterations as f64), true);
        line_search.push((end.t, report.stats.line_search_iterations as f64), true);
        contacts.push((end.t, report.contacts.len() as f64), true);
        if let Some(c) = report.stats.condition {
            condition.push((end.t, c.log10()), last_condition == Some(step));
            last_condition = Some(step + 1);
        }
        // Only contacts that push: separated ones have no friction to regularize.
        let eps: Vec<f64> = report
            .contacts
            .iter()
            .filter(|c| c.normal_force > 0.0)
            .map(|c| c.stiction_tolerance.log10())
            .collect();
        if !eps.is_empty() {
            let continues = last_tolerance == Some(step);
            let mean = eps.iter().sum::<f64>() / eps.len() as f64;
            let (lo, hi) = eps
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
                    (a.min(*x), b.max(*x))
                });
            for (series, y) in tolerance.iter_mut().zip([lo, mean, hi]) {
                series.push((end.t, y), continues);
            }
            last_tolerance = Some(step + 1);
        }
    }
    Figure {
        stem: "solver",
        series_are: "series, see stats.csv",
        panels: vec![
            Panel {
                y_label: "iterations per step (count)",
                series: vec![newton, line_search],
            },
            Panel {
                y_label: "contacts (count)",
                series: vec![contacts],
            },
            Panel {
                y_label: "log10 κ₁(H) (dimensionless)",
                series: vec![condition],
            },
            Panel {
                y_label: "log10 stiction tolerance (m/s)",
                series: tolerance.into(),
            },
        ],
    }
}

/// Writes `figure` as `dir/stem.ext` and returns the path.
fn save(
    figure: &Figure,
    title: &str,
    x: (&Range<f64>, &str, bool),
    dir: &Path,
    format: ImageFormat,
) -> Result<PathBuf> {
    let path = dir.join(format!("{}.{}", figure.stem, format.extension()));
    let size = (1024, 60 + 360 * figure.panels.len() as u32);
    let drawn = match format {
        ImageFormat::Png => draw(
            BitMapBackend::new(&path, size).into_drawing_area(),
            figure,
            title,
            x,
        )
        .map_err(|e| e.to_string()),
        ImageFormat::Svg => draw(
            SVGBackend::new(&path, size).into_drawing_area(),
            figure,
            title,
            x,
        )
        .map_err(|e| e.to_string()),
    };
    drawn.map_err(|message| Error::Plot {
        path: path.clone(),
        message,
    })?;
    Ok(path)
}

/// The margins of a panel's plot (pixels): around it, right of it (half the last tick label),
/// the horizontal and the vertical axis' label areas.
const MARGIN: u32 = 12;
const MARGIN_RIGHT: u32 = 36;
const X_LABEL_AREA: u32 = 45;
const Y_LABEL_AREA: u32 = 110;

/// `x` and `y` grown about their middles to the same units per pixel on a plot of `pixels`
/// (width, height).
fn equal_aspect(x: Range<f64>, y: Range<f64>, pixels: (u32, u32)) -> (Range<f64>, Range<f64>) {
    let (w, h) = (f64::from(pixels.0.max(1)), f64::from(pixels.1.max(1)));
    let per_pixel = ((x.end - x.start) / w).max((y.end - y.start) / h);
    let grow = |r: Range<f64>, n: f64| {
        let (mid, half) = (0.5 * (r.start + r.end), 0.5 * per_pixel * n);
        mid - half..mid + half
    };
    (grow(x, w), grow(y, h))
}

/// Draws `figure` under `title` on `root`, one panel per row, `x` (range, label, whether at
/// equal aspect) on the horizontal axes.
fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    figure: &Figure,
    title: &str,
    (time, x_label, equal): (&Range<f64>, &str, bool),
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 24))?;
    for (area, panel) in root
        .split_evenly((figure.panels.len(), 1))
        .iter()
        .zip(&figure.panels)
    {
        let (time, values) = if equal {
            let (w, h) = area.dim_in_pixel();
            let plot = (
                w.saturating_sub(MARGIN + MARGIN_RIGHT + Y_LABEL_AREA),
                h.saturating_sub(2 * MARGIN + X_LABEL_AREA),
            );
            equal_aspect(time.clone(), value_range(panel), plot)
        } else {
            (time.clone(), value_range(panel))
        };
        // Enough decimals to tell apart ticks about a tenth of the range apart.
        let decimals = (-(0.1 * (values.end - values.start)).log10())
            .ceil()
            .max(0.0) as usize;
        // The right margin holds the half of the last tick label past the axis end.
        let mut chart = ChartBuilder::on(area)
            .margin(MARGIN)
            .margin_right(MARGIN_RIGHT)
            .x_label_area_size(X_LABEL_AREA)
            .y_label_area_size(Y_LABEL_AREA)
            .build_cartesian_2d(time, values)?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(panel.y_label)
            .y_label_formatter(&|y| {
                // A tick at zero reached from below would print as "-0.00".
                let zero = y.abs() < 0.5 * 10f64.powi(-(decimals as i32));
                format!("{:.decimals$}", if zero { 0.0 } else { *y })
            })
            .axis_desc_style(("sans-serif", 18))
            .draw()?;
        for (i, series) in panel.series.iter().enumerate() {
            let style = Palette99::pick(i).stroke_width(2);
            chart
                // Each pair of points its own path: plotters joins a thick path's pieces with
                // unlimited miters, which draw long spikes where a curve turns back sharply
                // (a jump followed by a small drop).
                .draw_series(series.segments.iter().flat_map(|segment| {
                    let single = (segment.len() == 1).then(|| segment.clone());
                    segment
                        .windows(2)
                        .map(<[(f64, f64)]>::to_vec)
                        .chain(single)
                        .map(move |pair| PathElement::new(pair, style))
                }))?
                .label(series.name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], style));
        }
        if panel.series.len() > MAX_LEGEND {
            let (w, _) = area.dim_in_pixel();
            area.draw(&Text::new(
                format!("{} {}", panel.series.len(), figure.series_are),
                (w as i32 - 20, 20),
                ("sans-serif", 16)
                    .into_font()
                    .into_text_style(area)
                    .pos(Pos::new(HPos::Right, VPos::Top)),
            ))?;
        } else if !panel.series.is_empty() {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .label_font(("sans-serif", 16))
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()?;
        }
    }
    root.present()
}

/// The vertical range of `panel`: its finite values padded by 5 %, or the window of a flat
/// series ([`FLAT_RELATIVE`]); `[-1, 1]` when it has none.
fn value_range(panel: &Panel) -> Range<f64> {
    let values = panel
        .series
        .iter()
        .flat_map(|s| s.segments.iter().flatten())
        .map(|p| p.1)
        .filter(|y| y.is_finite());
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| {
        (lo.min(y), hi.max(y))
    });
    if lo > hi {
        return -1.0..1.0;
    }
    let mid = 0.5 * (lo + hi);
    let magnitude = lo.abs().max(hi.abs());
    if hi - lo <= FLAT_RELATIVE * magnitude || hi - lo <= FLAT_RELATIVE * FLAT_FLOOR {
        let half = (0.1 * mid.abs()).max(FLAT_FLOOR);
        return mid - half..mid + half;
    }
    let half = 0.5 * (hi - lo) * 1.05;
    mid - half..mid + half
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_aspect_grows_the_short_range_to_the_same_scale() {
        // 2 m across 800 px, 0.1 m up 400 px: the vertical range grows to 1 m, the
        // horizontal stays.
        let (x, y) = equal_aspect(-1.0..1.0, 0.2..0.3, (800, 400));
        assert!((x.start + 1.0).abs() < 1e-12 && (x.end - 1.0).abs() < 1e-12);
        assert!((y.start + 0.25).abs() < 1e-12 && (y.end - 0.75).abs() < 1e-12);
        let (x, y) = equal_aspect(0.0..0.1, 0.0..4.0, (800, 400));
        assert!(((x.end - x.start) / 800.0 - (y.end - y.start) / 400.0).abs() < 1e-12);
        assert!(x.start <= 0.0 && x.end >= 0.1 && (y.end - y.start - 4.0).abs() < 1e-12);
    }
}
