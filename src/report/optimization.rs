//! Figures of a trajectory optimization (PNG), beside the rollout figures of [`super::plot`]:
//!
//! - `cost.png`: the cost `J` after each iteration (log scale), accepted iterations marked;
//! - `controls.png`: every control `u_t` (N or N·m) over time, one line per actuator;
//! - `states.png`: generalized positions `q` (top; m, rad or quaternion components) and
//!   velocities `v` (bottom) over time.

use std::path::{Path, PathBuf};

use nalgebra::DVector;
use plotters::prelude::*;

use crate::error::{Error, Result};
use crate::step::State;

/// A named line.
type Line = (String, Vec<(f64, f64)>);

fn range(lines: &[Line], log: bool) -> (std::ops::Range<f64>, std::ops::Range<f64>) {
    let points = lines.iter().flat_map(|l| l.1.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for &(x, y) in points.filter(|p| p.1.is_finite() && (!log || p.1 > 0.0)) {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if x0 > x1 {
        return (0.0..1.0, if log { 0.1..1.0 } else { -1.0..1.0 });
    }
    if x1 - x0 < 1e-12 {
        x1 = x0 + 1.0;
    }
    if log {
        (x0..x1, y0 * 0.8..(y1 * 1.25).max(y0 * 1.5))
    } else {
        let pad = 0.05 * (y1 - y0).max(1e-9);
        (x0..x1, y0 - pad..y1 + pad)
    }
}

fn draw_panels(
    path: &Path,
    title: &str,
    panels: &[(&str, &str, Vec<Line>, bool)],
) -> Result<PathBuf> {
    let plot_err = |e: String| Error::Plot {
        path: path.to_path_buf(),
        message: e,
    };
    let root = BitMapBackend::new(path, (1024, 60 + 360 * panels.len() as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_err(e.to_string()))?;
    let root = root
        .titled(title, ("sans-serif", 24))
        .map_err(|e| plot_err(e.to_string()))?;
    for (area, (x_label, y_label, lines, log)) in
        root.split_evenly((panels.len(), 1)).iter().zip(panels)
    {
        let (xr, yr) = range(lines, *log);
        let mut builder = ChartBuilder::on(area);
        builder
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(90);
        let style = |i: usize| Palette99::pick(i).stroke_width(2);
        macro_rules! finish {
            ($chart:expr) => {{
                let mut chart = $chart;
                chart
                    .configure_mesh()
                    .x_desc(*x_label)
                    .y_desc(*y_label)
                    .axis_desc_style(("sans-serif", 18))
                    .draw()
                    .map_err(|e| plot_err(e.to_string()))?;
                for (i, (name, points)) in lines.iter().enumerate() {
                    chart
                        .draw_series(LineSeries::new(points.clone(), style(i)))
                        .map_err(|e| plot_err(e.to_string()))?
                        .label(name.as_str())
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 24, y)], style(i))
                        });
                }
                chart
                    .configure_series_labels()
                    .position(SeriesLabelPosition::UpperRight)
                    .label_font(("sans-serif", 14))
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK)
                    .draw()
                    .map_err(|e| plot_err(e.to_string()))?;
            }};
        }
        if *log {
            finish!(builder
                .build_cartesian_2d(xr, yr.log_scale())
                .map_err(|e| plot_err(e.to_string()))?);
        } else {
            finish!(builder
                .build_cartesian_2d(xr, yr)
                .map_err(|e| plot_err(e.to_string()))?);
        }
    }
    root.present().map_err(|e| plot_err(e.to_string()))?;
    Ok(path.to_path_buf())
}

/// Writes `cost.png` from the cost after each iteration (`(iteration, cost, accepted)`), and
/// `controls.png`, `states.png` of the trajectory, into `dir`. `actuators` names the controls.
///
/// # Errors
/// [`Error::Plot`] naming the figure.
pub fn write_optimization_plots(
    dir: &Path,
    name: &str,
    costs: &[(usize, f64, bool)],
    states: &[State],
    controls: &[DVector<f64>],
    actuators: &[String],
) -> Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    let all: Vec<(f64, f64)> = costs.iter().map(|c| (c.0 as f64, c.1)).collect();
    let accepted: Vec<(f64, f64)> = costs
        .iter()
        .filter(|c| c.2)
        .map(|c| (c.0 as f64, c.1))
        .collect();
    paths.push(draw_panels(
        &dir.join("cost.png"),
        &format!("{name}: cost per iteration"),
        &[(
            "iteration",
            "cost J",
            vec![
                ("all iterations".into(), all),
                ("accepted".into(), accepted),
            ],
            true,
        )],
    )?);
    let u_lines: Vec<Line> = actuators
        .iter()
        .enumerate()
        .map(|(i, a)| {
            (
                a.clone(),
                states
                    .iter()
                    .zip(controls)
                    .map(|(x, u)| (x.t, u[i]))
                    .collect(),
            )
        })
        .collect();
    paths.push(draw_panels(
        &dir.join("controls.png"),
        &format!("{name}: controls"),
        &[("time t (s)", "u (N or N·m)", u_lines, false)],
    )?);
    let nq = states.first().map_or(0, |x| x.q.len());
    let nv = states.first().map_or(0, |x| x.v.len());
    let q_lines: Vec<Line> = (0..nq)
        .map(|i| {
            (
                format!("q{i}"),
                states.iter().map(|x| (x.t, x.q[i])).collect(),
            )
        })
        .collect();
    let v_lines: Vec<Line> = (0..nv)
        .map(|i| {
            (
                format!("v{i}"),
                states.iter().map(|x| (x.t, x.v[i])).collect(),
            )
        })
        .collect();
    paths.push(draw_panels(
        &dir.join("states.png"),
        &format!("{name}: states"),
        &[
            ("time t (s)", "positions q", q_lines, false),
            ("time t (s)", "velocities v", v_lines, false),
        ],
    )?);
    Ok(paths)
}
