//! Measured trajectories read from CSV, in the column format `stiction simulate` writes
//! (`trajectory.csv`, see [`crate::report::csv`]): a time column `t` (s), then any of the
//! per-body columns `BODY.px … BODY.wz`.
//!
//! A measured trajectory may hold any subset of those columns, in any order (positions alone
//! will do), and rows at any strictly increasing times `t_k ≥ 0`, not necessarily uniform nor
//! on the simulation grid. A sample at `t_k = (n_k + α_k) δt` is compared with the linear
//! interpolation between the simulated states after `n_k` and `n_k + 1` steps from the
//! scene's initial state; a missing sample is simply a row that is not there.

use std::path::{Path, PathBuf};

use nalgebra::DMatrix;

use crate::error::{Error, Result};
use crate::step::State;

/// Relative tolerance on `t/δt` being an integer: the times written by `stiction simulate`
/// are sums of δt, off the grid by a few ulps per step.
const GRID_TOLERANCE: f64 = 1e-6;

/// The position of time `t` on the grid `t0 + n δt`: `(n, α)` with `t = t0 + (n + α) δt`,
/// `0 ≤ α < 1`, and `α = 0` within `GRID_TOLERANCE` (1e-6) of a step (for `t ≥ t0`).
pub fn grid_position(t: f64, t0: f64, dt: f64) -> (usize, f64) {
    let x = ((t - t0) / dt).max(0.0);
    let n = x.round();
    if (x - n).abs() <= GRID_TOLERANCE {
        (n as usize, 0.0)
    } else {
        let n = x.floor();
        (n as usize, x - n)
    }
}

/// One measured trajectory.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasuredTrajectory {
    /// Where it came from (a file path, or a name for data made in code).
    pub source: PathBuf,
    /// Measured columns (nc), e.g. `box.px`; `t` is not among them.
    pub columns: Vec<String>,
    /// Sample times (ns, s), strictly increasing.
    pub times: Vec<f64>,
    /// Step index `n_k = ⌊t_k/δt⌋` of each sample (ns).
    pub steps: Vec<usize>,
    /// Where each sample lies between steps `n_k` and `n_k + 1`: `α_k = t_k/δt − n_k ∈ [0, 1)`,
    /// 0 on the grid (ns). The simulated value is interpolated linearly between the two.
    pub fractions: Vec<f64>,
    /// Values (ns × nc), in the units of each column.
    pub values: DMatrix<f64>,
    /// Standard deviation of the measurement noise, in the unit of each column (`None`:
    /// unknown, estimated from the residuals after the fit).
    pub noise: Option<f64>,
    /// The state the record starts from at its step 0 (`None`: the scene's initial state).
    /// Set on the segments of multiple shooting (`super::shooting`), each restarted from the
    /// state measured at its first sample.
    pub initial_state: Option<State>,
    /// The record this is a segment of (index into the problem's records; `None`: a record
    /// itself, at its own index). Per-record unknowns ([`super::Unknown`]) follow it.
    pub record: Option<usize>,
}

impl MeasuredTrajectory {
    /// A trajectory from samples at `times` (ns) of `columns` (`values` is ns × nc), placed on
    /// the grid of step `dt` (s).
    ///
    /// # Errors
    /// [`Error::DataFile`] naming `source` for sizes that do not agree, non-finite values, times
    /// that are negative or not strictly increasing, a duplicate column, or a noise level that
    /// is not positive. Times off the grid of `dt` are fine: they are interpolated.
    pub fn new(
        source: PathBuf,
        columns: Vec<String>,
        times: Vec<f64>,
        values: DMatrix<f64>,
        dt: f64,
        noise: Option<f64>,
    ) -> Result<Self> {
        let bad = |message: String| Error::DataFile {
            path: source.clone(),
            message,
        };
        if values.nrows() != times.len() || values.ncols() != columns.len() {
            return Err(bad(format!(
                "{} × {} values for {} times and {} columns",
                values.nrows(),
                values.ncols(),
                times.len(),
                columns.len()
            )));
        }
        if times.is_empty() {
            return Err(bad("no samples".into()));
        }
        for (i, c) in columns.iter().enumerate() {
            if columns[..i].contains(c) {
                return Err(bad(format!("column `{c}` appears twice")));
            }
        }
        if let Some(sigma) = noise {
            if !(sigma > 0.0 && sigma.is_finite()) {
                return Err(bad(format!(
                    "noise level {sigma}: expected a positive standard deviation"
                )));
            }
        }
        let mut steps = Vec::with_capacity(times.len());
        let mut fractions = Vec::with_capacity(times.len());
        for (k, &t) in times.iter().enumerate() {
            if let Some(c) = (0..columns.len()).find(|&c| !values[(k, c)].is_finite()) {
                return Err(bad(format!(
                    "sample {k} (t = {t}): column `{}` is {}",
                    columns[c],
                    values[(k, c)]
                )));
            }
            if !(t >= 0.0 && t.is_finite()) {
                return Err(bad(format!("sample {k}: time {t} is not a finite t ≥ 0")));
            }
            if k > 0 && t <= times[k - 1] {
                return Err(bad(format!(
                    "time is not increasing: t = {t} at sample {k} follows t = {}",
                    times[k - 1]
                )));
            }
            let (n, alpha) = grid_position(t, 0.0, dt);
            steps.push(n);
            fractions.push(alpha);
        }
        Ok(MeasuredTrajectory {
            source,
            columns,
            times,
            steps,
            fractions,
            values,
            noise,
            initial_state: None,
            record: None,
        })
    }

    /// Number of samples.
    pub fn num_samples(&self) -> usize {
        self.times.len()
    }

    /// The last step the simulation must reach: that of the last sample, or the one after it
    /// when the sample lies between steps.
    pub fn last_step(&self) -> usize {
        match (self.steps.last(), self.fractions.last()) {
            (Some(&n), Some(&alpha)) if alpha > 0.0 => n + 1,
            (Some(&n), _) => n,
            _ => 0,
        }
    }

    /// The samples that need no step beyond `max_step` (at least the first sample).
    pub fn up_to_step(&self, max_step: usize) -> Self {
        let n = self
            .steps
            .iter()
            .zip(&self.fractions)
            .filter(|(&n, &alpha)| n + usize::from(alpha > 0.0) <= max_step)
            .count()
            .max(1);
        MeasuredTrajectory {
            times: self.times[..n].to_vec(),
            steps: self.steps[..n].to_vec(),
            fractions: self.fractions[..n].to_vec(),
            values: self.values.rows(0, n).into_owned(),
            ..self.clone()
        }
    }

    /// This trajectory with only `columns`, in that order.
    ///
    /// # Errors
    /// [`Error::DataFile`] for a column the data does not have, listing those it has.
    pub fn select(&self, columns: &[String]) -> Result<Self> {
        let index = columns
            .iter()
            .map(|c| {
                self.columns
                    .iter()
                    .position(|x| x == c)
                    .ok_or_else(|| Error::DataFile {
                        path: self.source.clone(),
                        message: format!(
                            "no column `{c}`; the columns are t,{}",
                            self.columns.join(",")
                        ),
                    })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(MeasuredTrajectory {
            columns: columns.to_vec(),
            values: self.values.select_columns(&index),
            ..self.clone()
        })
    }
}

/// Reads a trajectory CSV (through the `csv` crate, fields trimmed): a header row naming the
/// columns (one must be `t`), then one row of numbers per sample. Blank lines are skipped.
///
/// # Errors
/// [`Error::DataFile`] naming the file, and the line for a malformed row: unreadable file, no
/// `t` column, a column named twice, a row with the wrong number of fields or a field that is
/// not a number, and everything [`MeasuredTrajectory::new`] checks.
pub fn read_trajectory_csv(path: &Path, dt: f64, noise: Option<f64>) -> Result<MeasuredTrajectory> {
    let bad = |message: String| Error::DataFile {
        path: path.to_path_buf(),
        message,
    };
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .flexible(true)
        .from_path(path)
        .map_err(|e| bad(format!("cannot read: {e}")))?;
    let names: Vec<String> = reader
        .headers()
        .map_err(|e| bad(format!("cannot read the header: {e}")))?
        .iter()
        .map(str::to_string)
        .collect();
    if names.iter().all(String::is_empty) {
        return Err(bad("empty file: expected a header row `t,BODY.px,…`".into()));
    }
    let time_column = names.iter().position(|n| n == "t").ok_or_else(|| {
        bad(format!(
            "missing column `t` (time, s) in the header `{}`",
            names.join(",")
        ))
    })?;
    if let Some((k, name)) = names
        .iter()
        .enumerate()
        .find(|(k, n)| names[..*k].contains(n))
    {
        return Err(bad(format!(
            "column `{name}` is named twice (columns {} and {})",
            names.iter().position(|n| n == name).map_or(0, |i| i + 1),
            k + 1
        )));
    }
    let mut times = Vec::new();
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| bad(format!("cannot read: {e}")))?;
        let line = record.position().map_or(0, csv::Position::line);
        if record.len() != names.len() {
            return Err(bad(format!(
                "line {line}: {} fields, expected {} as in the header",
                record.len(),
                names.len()
            )));
        }
        let mut row = Vec::with_capacity(names.len() - 1);
        for (c, field) in record.iter().enumerate() {
            let x: f64 = field.parse().map_err(|_| {
                bad(format!(
                    "line {line}, column `{}`: `{field}` is not a number",
                    names[c]
                ))
            })?;
            if !x.is_finite() {
                return Err(bad(format!(
                    "line {line}, column `{}`: `{field}` is not a finite number",
                    names[c]
                )));
            }
            if c == time_column {
                times.push(x);
            } else {
                row.push(x);
            }
        }
        rows.push(row);
    }
    let mut columns = names;
    columns.remove(time_column);
    let values = DMatrix::from_fn(rows.len(), columns.len(), |k, c| rows[k][c]);
    MeasuredTrajectory::new(path.to_path_buf(), columns, times, values, dt, noise)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(name: &str, text: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("stiction-identify-data-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn message(r: Result<MeasuredTrajectory>) -> String {
        match r {
            Err(Error::DataFile { message, .. }) => message,
            other => panic!("expected a data file error, got {other:?}"),
        }
    }

    #[test]
    fn reads_a_subset_of_columns_sampled_every_other_step() {
        let path = write(
            "ok.csv",
            "t,box.px,box.vx\n0,0,1\n0.020000000000000004,0.02,0.9\n0.04,0.04,0.8\n\n",
        );
        let m = read_trajectory_csv(&path, 0.01, Some(1e-3)).unwrap();
        assert_eq!(m.columns, ["box.px", "box.vx"]);
        assert_eq!(m.steps, [0, 2, 4]);
        assert_eq!(m.values[(2, 1)], 0.8);
        let s = m.select(&["box.vx".to_string()]).unwrap();
        assert_eq!(s.values.column(0).as_slice(), [1.0, 0.9, 0.8]);
        assert!(message(m.select(&["box.pz".to_string()])).contains("no column `box.pz`"));
    }

    #[test]
    fn clear_errors_for_bad_files() {
        let no_time = write("no-time.csv", "time,box.px\n0,0\n");
        assert!(message(read_trajectory_csv(&no_time, 0.01, None)).contains("missing column `t`"));
        let backwards = write("backwards.csv", "t,box.px\n0,0\n0.02,0\n0.01,0\n");
        assert!(message(read_trajectory_csv(&backwards, 0.01, None)).contains("not increasing"));
        let off_grid = write("off-grid.csv", "t,box.px\n0,0\n0.015,0\n0.03,0\n");
        let m = read_trajectory_csv(&off_grid, 0.01, None).unwrap();
        assert_eq!(m.steps, [0, 1, 3]);
        assert!((m.fractions[1] - 0.5).abs() < 1e-12 && m.fractions[2] == 0.0);
        assert_eq!(m.last_step(), 3);
        let short = write("short.csv", "t,box.px\n0,0\n0.01\n");
        assert!(message(read_trajectory_csv(&short, 0.01, None)).contains("line 3"));
        let infinite = write("inf.csv", "t,box.px\n0,0\n0.01,inf\n");
        assert!(message(read_trajectory_csv(&infinite, 0.01, None))
            .contains("line 3, column `box.px`: `inf` is not a finite number"));
        let text = write("text.csv", "t,box.px\n0,abc\n");
        assert!(message(read_trajectory_csv(&text, 0.01, None)).contains("`abc` is not a number"));
        let twice = write("twice.csv", "t,box.px,box.px\n0,0,1\n");
        assert!(message(read_trajectory_csv(&twice, 0.01, None))
            .contains("column `box.px` is named twice (columns 2 and 3)"));
        let empty = write("empty.csv", "");
        assert!(message(read_trajectory_csv(&empty, 0.01, None)).contains("empty file"));
    }
}
