//! CSV tables of a rollout, written into an output folder.
//!
//! All tables are comma separated with one header row and no spaces. Numbers are written at
//! full precision: the shortest text that reads back to the same `f64`, in plain decimal for
//! `10⁻⁴ ≤ |x| < 10¹⁵` and zero, in scientific notation (`1.5e-7`) otherwise. Units are SI,
//! vectors are in the world frame W.
//!
//! - [`TRAJECTORY`] (`trajectory.csv`): one row per recorded state (steps + 1, from t = 0):
//!   `t` (s), then for every body (tree bodies, then prescribed bodies, see
//!   [`body_names`]) the 13 columns `BODY.px BODY.py BODY.pz` (position of the body origin, m),
//!   `BODY.qw BODY.qx BODY.qy BODY.qz` (orientation `R_WB`, sign-continuous),
//!   `BODY.vx BODY.vy BODY.vz` (velocity of the body origin, m/s),
//!   `BODY.wx BODY.wy BODY.wz` (angular velocity, rad/s).
//! - [`CONTACTS`] (`contacts.csv`): one row per contact per step,
//!   `t,body_a,body_b,px,py,pz,nx,ny,nz,fn,ft,slip,penetration`: time at the end of the step
//!   (s), the two bodies by name, contact point (m), unit normal from A to B, normal force and
//!   tangential force magnitude on B (N), slip speed `‖v_t‖` (m/s) and penetration at the end
//!   of the step (m, > 0 overlapping).
//! - [`STATS`] (`stats.csv`): one row per step,
//!   `t,iterations,ls_iterations,contacts,residual,condition,criterion,hessian_shift,warnings`: time at
//!   the end of the step (s), Newton iterations, line-search iterations summed over them,
//!   number of contacts, the final scaled gradient norm `‖D ∇ℓ‖`, the estimate of the 1-norm
//!   condition number of the last factored Newton Hessian (empty when Newton took no step;
//!   ICF Fig. 14), what stopped Newton (`optimality`, `stagnation` for a cost that stopped
//!   decreasing at round-off level, `none` when no iteration ran), the largest relative
//!   diagonal shift `δ` the Hessian needed to be factored (`H + δ diag H`, 0 normally) and the
//!   number of warnings of the step ([`crate::step::warnings`]; their kinds and messages are in
//!   `run.json` and the summary).
//!
//! - [`PATCHES`] (`patches.csv`, scenes with pressure-field pairs, [`write_patches`]): one row
//!   per pressure-field pair in contact per step, [`PATCHES_HEADER`]
//!   `t,body_a,body_b,area,fx,fy,fz,mx,my,mz,polygons,p_max`: the patch area (m²), the total
//!   force on B (N), the moment on B about the patch's area centroid (N·m), the number of
//!   polygons and the largest polygon pressure `f_n/A` (Pa).
//! - [`PATCH_GEOMETRY`] (`patch_geometry.csv`, with `--patch-geometry`,
//!   [`write_patch_geometry`]): one row per polygon vertex, [`PATCH_GEOMETRY_HEADER`]
//!   `t,body_a,body_b,polygon,vertex,x,y,z,pressure`: the polygon's index within its step and
//!   pair, the vertex index and position (m), and the polygon's pressure `f_n/A` (Pa).
//!
//! The same files are written while a rollout runs by [`TableWriter`] (and
//! [`NcpTableWriter`]): headers first, then each step's rows as the step completes, buffered
//! and flushed every second and at the end, so that a run that fails or is interrupted leaves
//! every completed step on disk; for a complete run the bytes are those of the functions that
//! write a whole recording.
//!
//! The geometrically implicit stepper ([`write_ncp_tables`]) writes the same `trajectory.csv`
//! and a `stats.csv` without `condition` ([`NCP_STATS_HEADER`]; residual: the dimensionless
//! `‖Φ‖∞`, contacts: the number of pairs), and its
//! own `contacts.csv`, one row per pair per step ([`NCP_CONTACTS_HEADER`]):
//! `t,body_a,body_b,px,py,pz,nx,ny,nz,fn,ft,fo,mr,facets,gap`: the ECP `a1` (m), the unit
//! normal n out of A, the wrench on B at the ECP (Xie & Chakraborty Sec. III): normal force
//! `fn = p_n/δt`, friction forces `ft = p_t/δt`, `fo = p_o/δt` along the contact frame's `t`,
//! `o` (N) and the moment about the normal `mr = p_r/δt` (N·m), the number of active facets of
//! B (1 surface, 2 line, 3 point contact for a box) and the gap δ (m).

use std::fmt;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::ncp::{NcpRecording, NcpStepReport};
use crate::report::{body_names, BodyState, BodyStateTracker};
use crate::simulate::Recording;
use crate::solver::SolverStats;
use crate::step::{Simulator, State, StepReport};

/// File name of the trajectory table.
pub const TRAJECTORY: &str = "trajectory.csv";
/// File name of the contact table.
pub const CONTACTS: &str = "contacts.csv";
/// File name of the solver statistics table.
pub const STATS: &str = "stats.csv";

/// Header of [`CONTACTS`].
pub const CONTACTS_HEADER: &str = "t,body_a,body_b,px,py,pz,nx,ny,nz,fn,ft,slip,penetration";
/// Header of [`CONTACTS`] for the geometrically implicit stepper.
pub const NCP_CONTACTS_HEADER: &str = "t,body_a,body_b,px,py,pz,nx,ny,nz,fn,ft,fo,mr,facets,gap";
/// File name of the contact-patch table.
pub const PATCHES: &str = "patches.csv";
/// Header of [`PATCHES`].
pub const PATCHES_HEADER: &str = "t,body_a,body_b,area,fx,fy,fz,mx,my,mz,polygons,p_max";
/// File name of the patch polygon table.
pub const PATCH_GEOMETRY: &str = "patch_geometry.csv";
/// Header of [`PATCH_GEOMETRY`].
pub const PATCH_GEOMETRY_HEADER: &str = "t,body_a,body_b,polygon,vertex,x,y,z,pressure";
/// Header of [`STATS`].
pub const STATS_HEADER: &str =
    "t,iterations,ls_iterations,contacts,residual,condition,criterion,hessian_shift,warnings";
/// Header of [`STATS`] for the geometrically implicit stepper.
pub const NCP_STATS_HEADER: &str = "t,iterations,ls_iterations,contacts,residual";

/// Suffixes of the 13 per-body columns of [`TRAJECTORY`], in order.
pub const BODY_COLUMNS: [&str; 13] = [
    "px", "py", "pz", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz",
];

/// Writes [`TRAJECTORY`], [`CONTACTS`] and [`STATS`] into the existing folder `dir`,
/// replacing files of the same names; returns their paths in that order.
///
/// # Errors
/// [`Error::Io`] naming the file that could not be created or written.
pub fn write_tables(recording: &Recording, sim: &Simulator, dir: &Path) -> Result<[PathBuf; 3]> {
    Ok([
        write_trajectory(recording, sim, dir)?,
        write_contacts(recording, sim, dir)?,
        write_stats(recording, dir)?,
    ])
}

/// Writes `dir/trajectory.csv` (format in the module docs) and returns its path.
///
/// # Errors
/// [`Error::Io`] naming the file.
pub fn write_trajectory(recording: &Recording, sim: &Simulator, dir: &Path) -> Result<PathBuf> {
    let mut bodies = BodyStateTracker::new(&sim.model);
    write_file(dir, TRAJECTORY, |w| {
        trajectory_header(w, sim)?;
        for state in &recording.states {
            trajectory_row(w, state.t, &bodies.next(&sim.model, state))?;
        }
        Ok(())
    })
}

/// Writes `dir/contacts.csv` (format in the module docs) and returns its path.
///
/// # Errors
/// [`Error::Io`] naming the file.
pub fn write_contacts(recording: &Recording, sim: &Simulator, dir: &Path) -> Result<PathBuf> {
    write_file(dir, CONTACTS, |w| {
        writeln!(w, "{CONTACTS_HEADER}")?;
        for (report, end) in recording.reports.iter().zip(&recording.states[1..]) {
            contact_rows(w, sim, end.t, report)?;
        }
        Ok(())
    })
}

/// Writes `dir/patches.csv` (format in the module docs) and returns its path.
///
/// # Errors
/// [`Error::Io`] naming the file.
pub fn write_patches(recording: &Recording, sim: &Simulator, dir: &Path) -> Result<PathBuf> {
    write_file(dir, PATCHES, |w| {
        writeln!(w, "{PATCHES_HEADER}")?;
        for (report, end) in recording.reports.iter().zip(&recording.states[1..]) {
            patch_rows(w, sim, end.t, report)?;
        }
        Ok(())
    })
}

/// Writes `dir/patch_geometry.csv` (format in the module docs) and returns its path.
///
/// # Errors
/// [`Error::Io`] naming the file.
pub fn write_patch_geometry(recording: &Recording, sim: &Simulator, dir: &Path) -> Result<PathBuf> {
    write_file(dir, PATCH_GEOMETRY, |w| {
        writeln!(w, "{PATCH_GEOMETRY_HEADER}")?;
        for (report, states) in recording.reports.iter().zip(recording.states.windows(2)) {
            patch_geometry_rows(w, sim, &states[0], &states[1], report)?;
        }
        Ok(())
    })
}

/// Writes `dir/stats.csv` (format in the module docs) and returns its path.
///
/// # Errors
/// [`Error::Io`] naming the file.
pub fn write_stats(recording: &Recording, dir: &Path) -> Result<PathBuf> {
    write_file(dir, STATS, |w| {
        writeln!(w, "{STATS_HEADER}")?;
        for (report, end) in recording.reports.iter().zip(&recording.states[1..]) {
            stats_row(w, end.t, &report.stats, report.warnings.len())?;
        }
        Ok(())
    })
}

/// Writes [`TRAJECTORY`], [`CONTACTS`] (ncp columns) and [`STATS`] of a rollout of the
/// geometrically implicit stepper into the existing folder `dir`; `sim` gives the model and
/// the body names. Returns the paths in that order.
///
/// # Errors
/// [`Error::Io`] naming the file that could not be created or written.
pub fn write_ncp_tables(
    recording: &NcpRecording,
    sim: &Simulator,
    dir: &Path,
) -> Result<[PathBuf; 3]> {
    let first = recording
        .states
        .first()
        .expect("invariant: a recording holds its initial state");
    let mut tables = NcpTableWriter::create(sim, dir, first)?;
    for (report, end) in recording.reports.iter().zip(&recording.states[1..]) {
        tables.step(end, report)?;
    }
    let [trajectory, contacts, stats] = tables.finish()?;
    Ok([trajectory, contacts, stats])
}

/// Which tables a [`TableWriter`] writes besides [`TRAJECTORY`], [`CONTACTS`] and [`STATS`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExtraTables {
    /// [`PATCHES`] (scenes with pressure-field pairs).
    pub patches: bool,
    /// [`PATCH_GEOMETRY`].
    pub patch_geometry: bool,
}

/// How often a [`TableWriter`] flushes its buffers to disk while a rollout runs (s of wall
/// time): a killed process (SIGKILL) loses at most the rows of about this long.
const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// One table being written: its path and buffered file.
struct Table {
    path: PathBuf,
    w: BufWriter<File>,
}

impl Table {
    fn create(dir: &Path, name: &str) -> Result<Self> {
        let path = dir.join(name);
        let file = File::create(&path).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        Ok(Table {
            path,
            w: BufWriter::new(file),
        })
    }

    /// Runs `write` on the buffer, naming this table in an error.
    fn write(&mut self, write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>) -> Result<()> {
        write(&mut self.w).map_err(|source| Error::Io {
            path: self.path.clone(),
            source,
        })
    }

    fn flush(&mut self) -> Result<()> {
        self.write(|w| w.flush())
    }
}

/// The tables of a rollout written while it runs: the headers and the initial state at
/// [`TableWriter::create`], one step's rows at each [`TableWriter::step`], buffered and flushed
/// at least every second and at [`TableWriter::finish`]. A rollout that fails or is
/// interrupted leaves every completed step on disk. The files are byte-identical to
/// [`write_tables`], [`write_patches`] and [`write_patch_geometry`] of the whole recording.
pub struct TableWriter {
    bodies: BodyStateTracker,
    trajectory: Table,
    contacts: Table,
    stats: Table,
    patches: Option<Table>,
    patch_geometry: Option<Table>,
    /// The state at the start of the next step (its polygons are clipped there).
    previous: State,
    flushed: Instant,
}

impl TableWriter {
    /// Creates the tables of a rollout of `sim` in the existing folder `dir` (replacing files
    /// of the same names) and writes their headers and the trajectory's first row, `initial`.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file that could not be created or written.
    pub fn create(
        sim: &Simulator,
        dir: &Path,
        initial: &State,
        extra: ExtraTables,
    ) -> Result<Self> {
        let headed = |name: &str, header: &str| -> Result<Table> {
            let mut table = Table::create(dir, name)?;
            table.write(|w| writeln!(w, "{header}"))?;
            Ok(table)
        };
        let mut trajectory = Table::create(dir, TRAJECTORY)?;
        let mut bodies = BodyStateTracker::new(&sim.model);
        let first = bodies.next(&sim.model, initial);
        trajectory.write(|w| {
            trajectory_header(w, sim)?;
            trajectory_row(w, initial.t, &first)
        })?;
        Ok(TableWriter {
            bodies,
            trajectory,
            contacts: headed(CONTACTS, CONTACTS_HEADER)?,
            stats: headed(STATS, STATS_HEADER)?,
            patches: extra
                .patches
                .then(|| headed(PATCHES, PATCHES_HEADER))
                .transpose()?,
            patch_geometry: extra
                .patch_geometry
                .then(|| headed(PATCH_GEOMETRY, PATCH_GEOMETRY_HEADER))
                .transpose()?,
            previous: initial.clone(),
            flushed: Instant::now(),
        })
    }

    /// Writes the rows of one step of `sim` (the simulator the tables were created for) that
    /// ended at `end` and reported `report`.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file that could not be written.
    pub fn step(&mut self, sim: &Simulator, end: &State, report: &StepReport) -> Result<()> {
        let bodies = self.bodies.next(&sim.model, end);
        self.trajectory
            .write(|w| trajectory_row(w, end.t, &bodies))?;
        self.contacts
            .write(|w| contact_rows(w, sim, end.t, report))?;
        self.stats
            .write(|w| stats_row(w, end.t, &report.stats, report.warnings.len()))?;
        if let Some(table) = &mut self.patches {
            table.write(|w| patch_rows(w, sim, end.t, report))?;
        }
        if let Some(table) = &mut self.patch_geometry {
            let start = &self.previous;
            table.write(|w| patch_geometry_rows(w, sim, start, end, report))?;
        }
        self.previous.clone_from(end);
        if self.flushed.elapsed() >= FLUSH_EVERY {
            self.flush()?;
        }
        Ok(())
    }

    /// Flushes every table's buffer to its file.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file that could not be written.
    pub fn flush(&mut self) -> Result<()> {
        self.flushed = Instant::now();
        for table in [&mut self.trajectory, &mut self.contacts, &mut self.stats]
            .into_iter()
            .chain(self.patches.as_mut())
            .chain(self.patch_geometry.as_mut())
        {
            table.flush()?;
        }
        Ok(())
    }

    /// Flushes the tables and returns their paths: trajectory, contacts, stats, then the
    /// extra tables asked for.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file that could not be written.
    pub fn finish(mut self) -> Result<Vec<PathBuf>> {
        self.flush()?;
        Ok([self.trajectory, self.contacts, self.stats]
            .into_iter()
            .chain(self.patches)
            .chain(self.patch_geometry)
            .map(|t| t.path)
            .collect())
    }
}

/// [`TableWriter`] for the geometrically implicit stepper: [`TRAJECTORY`], [`CONTACTS`] (ncp
/// columns) and [`STATS`] (ncp columns), byte-identical to [`write_ncp_tables`].
pub struct NcpTableWriter<'a> {
    sim: &'a Simulator,
    bodies: BodyStateTracker,
    trajectory: Table,
    contacts: Table,
    stats: Table,
    previous_t: f64,
    flushed: Instant,
}

impl<'a> NcpTableWriter<'a> {
    /// Creates the tables in the existing folder `dir`; `sim` gives the model and the body
    /// names.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file that could not be created or written.
    pub fn create(sim: &'a Simulator, dir: &Path, initial: &State) -> Result<Self> {
        let mut trajectory = Table::create(dir, TRAJECTORY)?;
        let mut bodies = BodyStateTracker::new(&sim.model);
        let first = bodies.next(&sim.model, initial);
        trajectory.write(|w| {
            trajectory_header(w, sim)?;
            trajectory_row(w, initial.t, &first)
        })?;
        let mut contacts = Table::create(dir, CONTACTS)?;
        contacts.write(|w| writeln!(w, "{NCP_CONTACTS_HEADER}"))?;
        let mut stats = Table::create(dir, STATS)?;
        stats.write(|w| writeln!(w, "{NCP_STATS_HEADER}"))?;
        Ok(NcpTableWriter {
            sim,
            bodies,
            trajectory,
            contacts,
            stats,
            previous_t: initial.t,
            flushed: Instant::now(),
        })
    }

    /// Writes the rows of one step that ended at `end` and reported `report`.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file that could not be written.
    pub fn step(&mut self, end: &State, report: &NcpStepReport) -> Result<()> {
        let sim = self.sim;
        let bodies = self.bodies.next(&sim.model, end);
        self.trajectory
            .write(|w| trajectory_row(w, end.t, &bodies))?;
        let dt = end.t - self.previous_t;
        self.contacts
            .write(|w| ncp_contact_rows(w, sim, end.t, dt, report))?;
        self.stats.write(|w| {
            let s = &report.stats;
            writeln!(
                w,
                "{},{},{},{},{}",
                Num(end.t),
                s.iterations,
                s.line_search_iterations,
                s.contacts,
                Num(s.residual)
            )
        })?;
        self.previous_t = end.t;
        if self.flushed.elapsed() >= FLUSH_EVERY {
            self.flush()?;
        }
        Ok(())
    }

    /// Flushes every table's buffer to its file.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file that could not be written.
    pub fn flush(&mut self) -> Result<()> {
        self.flushed = Instant::now();
        for table in [&mut self.trajectory, &mut self.contacts, &mut self.stats] {
            table.flush()?;
        }
        Ok(())
    }

    /// Flushes the tables and returns their paths: trajectory, contacts, stats.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file that could not be written.
    pub fn finish(mut self) -> Result<[PathBuf; 3]> {
        self.flush()?;
        Ok([self.trajectory.path, self.contacts.path, self.stats.path])
    }
}

/// The header of [`TRAJECTORY`]: `t`, then the 13 columns of every body.
fn trajectory_header(w: &mut impl Write, sim: &Simulator) -> io::Result<()> {
    write!(w, "t")?;
    for name in body_names(&sim.model) {
        for column in BODY_COLUMNS {
            write!(w, ",{name}.{column}")?;
        }
    }
    writeln!(w)
}

/// One row of [`TRAJECTORY`]: time `t` (s) and the world-frame states of every body.
fn trajectory_row(w: &mut impl Write, t: f64, bodies: &[BodyState]) -> io::Result<()> {
    write!(w, "{}", Num(t))?;
    for b in bodies {
        let q = b.q_WB.quaternion();
        let values = [
            b.p_WB.as_slice(),
            &[q.w, q.i, q.j, q.k],
            b.v_WB.as_slice(),
            b.w_WB.as_slice(),
        ];
        for x in values.concat() {
            write!(w, ",{}", Num(x))?;
        }
    }
    writeln!(w)
}

/// The rows of [`CONTACTS`] of one step that ended at `t` (s).
fn contact_rows(
    w: &mut impl Write,
    sim: &Simulator,
    t: f64,
    report: &StepReport,
) -> io::Result<()> {
    for c in &report.contacts {
        write!(
            w,
            "{},{},{}",
            Num(t),
            sim.model.name_of(c.body_a),
            sim.model.name_of(c.body_b)
        )?;
        let values = [
            c.point.as_slice(),
            c.normal.as_slice(),
            &[c.normal_force, c.tangential_force, c.slip, c.penetration],
        ];
        for x in values.concat() {
            write!(w, ",{}", Num(x))?;
        }
        writeln!(w)?;
    }
    Ok(())
}

/// The rows of [`PATCHES`] of one step that ended at `t` (s).
fn patch_rows(w: &mut impl Write, sim: &Simulator, t: f64, report: &StepReport) -> io::Result<()> {
    for p in &report.patches {
        write!(
            w,
            "{},{},{},{}",
            Num(t),
            sim.model.name_of(p.body_a),
            sim.model.name_of(p.body_b),
            Num(p.area)
        )?;
        for x in p.force.iter().chain(p.moment.iter()) {
            write!(w, ",{}", Num(*x))?;
        }
        writeln!(w, ",{},{}", p.polygons, Num(p.max_pressure))?;
    }
    Ok(())
}

/// The rows of [`PATCH_GEOMETRY`] of one step from `start` to `end`: its polygons, clipped
/// at its start.
fn patch_geometry_rows(
    w: &mut impl Write,
    sim: &Simulator,
    start: &State,
    end: &State,
    report: &StepReport,
) -> io::Result<()> {
    if report.patches.is_empty() {
        return Ok(());
    }
    let vertices = sim
        .polygon_vertices(start, &report.contacts)
        .map_err(io::Error::other)?;
    let mut index: Vec<((usize, usize), usize)> = Vec::new();
    for (c, vertices) in report.contacts.iter().zip(&vertices) {
        let Some(polygon) = &c.polygon else {
            continue;
        };
        let k = match index.iter_mut().find(|(g, _)| *g == c.geometries) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                index.push((c.geometries, 0));
                0
            }
        };
        let pressure = c.normal_force / polygon.area;
        for (i, v) in vertices.iter().enumerate() {
            writeln!(
                w,
                "{},{},{},{k},{i},{},{},{},{}",
                Num(end.t),
                sim.model.name_of(c.body_a),
                sim.model.name_of(c.body_b),
                Num(v.x),
                Num(v.y),
                Num(v.z),
                Num(pressure)
            )?;
        }
    }
    Ok(())
}

/// One row of [`STATS`] for a step that ended at `t` (s) with solver statistics `s` and
/// `warnings` warnings.
fn stats_row(w: &mut impl Write, t: f64, s: &SolverStats, warnings: usize) -> io::Result<()> {
    writeln!(
        w,
        "{},{},{},{},{},{},{},{},{}",
        Num(t),
        s.iterations,
        s.line_search_iterations,
        s.contacts,
        Num(s.residual),
        s.condition.map(|c| Num(c).to_string()).unwrap_or_default(),
        s.criterion,
        Num(s.hessian_shift),
        warnings
    )
}

/// The rows of the ncp [`CONTACTS`] of one step of length `dt` (s) that ended at `t` (s).
fn ncp_contact_rows(
    w: &mut impl Write,
    sim: &Simulator,
    t: f64,
    dt: f64,
    report: &NcpStepReport,
) -> io::Result<()> {
    for c in &report.contacts {
        write!(
            w,
            "{},{},{}",
            Num(t),
            sim.model.name_of(c.body_a),
            sim.model.name_of(c.body_b)
        )?;
        let [p_n, p_t, p_o, p_r] = c.impulse;
        let values = [
            c.ecp.as_slice(),
            c.normal.as_slice(),
            &[p_n / dt, p_t / dt, p_o / dt, p_r / dt],
        ];
        for x in values.concat() {
            write!(w, ",{}", Num(x))?;
        }
        writeln!(w, ",{},{}", c.facets, Num(c.gap))?;
    }
    Ok(())
}

/// Creates `dir/name`, lets `body` fill it through a buffer and flushes it.
pub(crate) fn write_file(
    dir: &Path,
    name: &str,
    body: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> Result<PathBuf> {
    let path = dir.join(name);
    let io_error = |source| Error::Io {
        path: path.clone(),
        source,
    };
    let mut w = BufWriter::new(File::create(&path).map_err(io_error)?);
    body(&mut w).and_then(|()| w.flush()).map_err(io_error)?;
    Ok(path)
}

/// An `f64` printed at full precision (shortest round-trip text), plain or scientific.
pub(crate) struct Num(pub(crate) f64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = self.0.abs();
        if a == 0.0 || (1e-4..1e15).contains(&a) || !a.is_finite() {
            write!(f, "{}", self.0)
        } else {
            write!(f, "{:e}", self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::parse_problem;
    use crate::simulate::run;

    /// A 1 kg box resting on a belt that moves at 0.1 m/s: one tree body, one prescribed body,
    /// four corner contacts per step.
    const BOX_ON_BELT: &str = r#"
        description = "box on a moving belt"
        [simulation]
        dt = 1e-3
        duration = 0.005
        [contact]
        friction = 0.5
        stiffness = 1e7
        [[body]]
        name = "belt"
        prescribed = { type = "constant-velocity", velocity = [0.1, 0.0, 0.0] }
        [[body]]
        name = "box"
        mass = 1.0
        position = [0.0, 0.0, 0.025]
        [[geometry]]
        name = "box"
        body = "box"
        shape = "box"
        size = [0.05, 0.05, 0.05]
        [[geometry]]
        name = "belt"
        body = "belt"
        shape = "half-space"
    "#;

    /// A fresh, empty folder under the system temp dir, unique per test and process.
    fn temp_folder(test: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("stiction-report-{}-{test}", std::process::id()));
        // A leftover from an aborted run of the same process id is stale.
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn read_lines(path: &Path) -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn tables_have_exact_headers_and_one_row_per_record() {
        let mut problem = parse_problem(BOX_ON_BELT, Path::new("box-on-belt.toml")).unwrap();
        let rec = run(
            &mut problem.simulator,
            &problem.initial_state,
            problem.duration,
            |_, _| {},
        )
        .unwrap();
        let steps = rec.reports.len();
        assert_eq!(steps, 5);
        let dir = temp_folder("tables");
        let [trajectory, contacts, stats] = write_tables(&rec, &problem.simulator, &dir).unwrap();

        let lines = read_lines(&trajectory);
        let expected_header = "t,\
            box.px,box.py,box.pz,box.qw,box.qx,box.qy,box.qz,box.vx,box.vy,box.vz,box.wx,box.wy,box.wz,\
            belt.px,belt.py,belt.pz,belt.qw,belt.qx,belt.qy,belt.qz,belt.vx,belt.vy,belt.vz,belt.wx,belt.wy,belt.wz";
        assert_eq!(lines[0], expected_header);
        assert_eq!(lines.len(), 1 + steps + 1);
        assert!(lines.iter().all(|l| l.split(',').count() == 1 + 2 * 13));
        // Row 0 is the initial state: box at rest at z = 0.025 with the identity orientation;
        // the belt at its initial pose moving at 0.1 m/s.
        let row0: Vec<f64> = lines[1].split(',').map(|x| x.parse().unwrap()).collect();
        assert_eq!(row0[..8], [0.0, 0.0, 0.0, 0.025, 1.0, 0.0, 0.0, 0.0]);
        assert_eq!(row0[14 + 7], 0.1);
        // The last row's time reads back exactly as the recorded f64.
        let last: f64 = lines[steps + 1].split(',').next().unwrap().parse().unwrap();
        assert_eq!(last, rec.states[steps].t);

        let lines = read_lines(&contacts);
        assert_eq!(lines[0], CONTACTS_HEADER);
        let num_contacts: usize = rec.reports.iter().map(|r| r.contacts.len()).sum();
        assert_eq!(num_contacts, 4 * steps, "four corners per step");
        assert_eq!(lines.len(), 1 + num_contacts);
        assert!(lines[1..].iter().all(|l| l.split(',').count() == 13));
        assert!(lines[1].starts_with(&format!("{},belt,box,", Num(rec.states[1].t))));

        let lines = read_lines(&stats);
        assert_eq!(lines[0], STATS_HEADER);
        assert_eq!(lines.len(), 1 + steps);
        assert!(lines[1..].iter().all(|l| l.split(',').nth(3) == Some("4")));

        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The tables written step by step while a rollout runs are byte-identical to the tables
    /// of the whole recording.
    #[test]
    fn tables_written_while_running_equal_the_recordings_tables() {
        let mut problem = parse_problem(BOX_ON_BELT, Path::new("box-on-belt.toml")).unwrap();
        let rec = run(
            &mut problem.simulator,
            &problem.initial_state,
            problem.duration,
            |_, _| {},
        )
        .unwrap();
        let whole = temp_folder("whole");
        let [trajectory, contacts, stats] = write_tables(&rec, &problem.simulator, &whole).unwrap();
        let patch_geometry = write_patch_geometry(&rec, &problem.simulator, &whole).unwrap();
        let running = temp_folder("running");
        let extra = ExtraTables {
            patches: false,
            patch_geometry: true,
        };
        let sim = &problem.simulator;
        let mut tables = TableWriter::create(sim, &running, &rec.states[0], extra).unwrap();
        for (report, end) in rec.reports.iter().zip(&rec.states[1..]) {
            tables.step(sim, end, report).unwrap();
        }
        let written = tables.finish().unwrap();
        assert_eq!(written.len(), 4);
        for (path, name) in [trajectory, contacts, stats, patch_geometry].iter().zip([
            TRAJECTORY,
            CONTACTS,
            STATS,
            PATCH_GEOMETRY,
        ]) {
            let expected = std::fs::read(path).unwrap();
            assert!(expected.len() > 40, "{name}");
            assert_eq!(
                std::fs::read(running.join(name)).unwrap(),
                expected,
                "{name}"
            );
        }
        std::fs::remove_dir_all(&whole).unwrap();
        std::fs::remove_dir_all(&running).unwrap();
    }

    #[test]
    fn missing_folder_is_an_io_error_naming_the_file() {
        let problem = parse_problem(BOX_ON_BELT, Path::new("box-on-belt.toml")).unwrap();
        let rec = Recording {
            states: vec![problem.initial_state.clone()],
            reports: vec![],
        };
        let base = temp_folder("missing");
        let dir = base.join("does-not-exist");
        match write_trajectory(&rec, &problem.simulator, &dir) {
            Err(Error::Io { path, .. }) => assert_eq!(path, dir.join(TRAJECTORY)),
            other => panic!("expected an I/O error, got {other:?}"),
        }
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn numbers_round_trip() {
        for x in [
            0.0,
            -0.0,
            0.1,
            0.30000000000000004,
            1e-4,
            9.99e-5,
            1.5e-12,
            -2.5e20,
            1e15,
            123456.789,
        ] {
            let text = Num(x).to_string();
            assert_eq!(text.parse::<f64>().unwrap(), x, "{text}");
            assert!(!text.contains(' '));
        }
        assert_eq!(Num(1.5e-7).to_string(), "1.5e-7");
        assert_eq!(Num(0.002).to_string(), "0.002");
    }
}
