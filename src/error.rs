//! The crate's error type: every failure carries the context needed to act on it.
//!
//! This file sits below every other module, with two imports that run back up: the
//! statistics of the convex solver ([`crate::solver`]: [`SolverStats`], [`FactorGeneration`])
//! and of the complementarity solver ([`crate::ncp`]: [`NcpStats`]), because an error of a
//! solve carries the statistics of that solve (plain data, no behaviour). [`TextLocation`],
//! where in a file a reader's error applies, lives here so that every reader (problem files,
//! robot descriptions) shares it.

use std::fmt;
use std::path::PathBuf;

use crate::ncp::NcpStats;
use crate::solver::{FactorGeneration, SolverStats};

/// Everything that can go wrong in stiction.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A problem file could not be read or did not describe a valid problem. Printed as
    /// `FILE:LINE:COLUMN: field `FIELD`: expected …, found …`, the form editors jump to.
    #[error("{}{}: field `{field}`: expected {expected}, found {found}", path.display(), location.map_or(String::new(), |l| format!(":{l}")))]
    ProblemFile {
        /// The file that was read.
        path: PathBuf,
        /// Where in the file: the offending value, or the table that lacks a required field;
        /// `None` when the file could not be read or the error concerns the whole model.
        location: Option<TextLocation>,
        /// Dotted path of the offending field (`body[1].mass`), or `(file)`.
        field: String,
        /// What a valid value looks like.
        expected: String,
        /// What was found instead.
        found: String,
    },
    /// A robot model file (URDF, MJCF) or a mesh it names could not be read or does not
    /// describe a valid model. Printed as `FILE:LINE: ELEMENT: MESSAGE`, the form editors
    /// jump to; the message says what was expected (and, for a missing file, where it was
    /// looked for).
    #[error("{}{}: {element}: {message}", path.display(), line.map_or(String::new(), |l| format!(":{l}")))]
    ModelFile {
        /// The model file.
        path: PathBuf,
        /// Line of the offending element (from 1); `None` when the file could not be read or
        /// the error concerns the whole model.
        line: Option<usize>,
        /// The element, as `<joint name="elbow">`.
        element: String,
        /// What is wrong and what was expected.
        message: String,
    },
    /// A model or solver parameter is out of its valid range.
    #[error("invalid parameter `{name}` = {value}: {reason}")]
    InvalidParameter {
        /// Parameter name.
        name: String,
        /// Offending value, printed.
        value: String,
        /// Why it is invalid.
        reason: String,
    },
    /// Two sizes that must agree do not.
    #[error("dimension mismatch for {what}: expected {expected}, found {found}")]
    DimensionMismatch {
        /// What was being sized.
        what: String,
        /// Expected size.
        expected: usize,
        /// Given size.
        found: usize,
    },
    /// A Cholesky factorization met a non-positive pivot.
    #[error("matrix is not positive definite (pivot {index})")]
    NotPositiveDefinite {
        /// Index of the failing pivot.
        index: usize,
    },
    /// The Newton Hessian of the convex step could not be factored: a non-positive pivot
    /// (indefinite in floating point, or ill-conditioned beyond f64), with the statistics of
    /// the solve up to that iteration.
    #[error("matrix is not positive definite (pivot {pivot}) in the Newton Hessian: {stats}")]
    HessianNotPositiveDefinite {
        /// Index of the failing pivot (in the factorization's ordering).
        pivot: usize,
        /// Statistics of the solve when the factorization failed (`iterations`: the Newton
        /// iterations completed before it).
        stats: Box<SolverStats>,
    },
    /// The convex solver did not reach its tolerance.
    #[error("contact solver did not converge: {stats}")]
    NotConverged {
        /// Statistics of the failed solve.
        stats: Box<SolverStats>,
    },
    /// The geometrically implicit (MNCP) step did not reach its tolerance.
    #[error("complementarity (ncp) solver did not converge: {stats}")]
    NcpNotConverged {
        /// Statistics of the failed semismooth Newton solve.
        stats: NcpStats,
    },
    /// A non-finite value appeared.
    #[error("non-finite value in {stage}: {stats}")]
    NonFinite {
        /// Where it was detected.
        stage: String,
        /// Statistics of the solve at that point.
        stats: Box<SolverStats>,
    },
    /// The factor of the Newton Hessian handed to the implicit-function-theorem derivatives
    /// is not the one of the step they differentiate: a factor of another factorization (its
    /// generation differs from the one the step recorded) or at other velocities.
    #[error("stale Newton factor for the step derivatives: {reason} (factor generation {found}, the step expects {})", expected.map_or_else(|| "none".to_string(), |g| g.to_string()))]
    StaleFactor {
        /// The generation the step recorded for its factor; `None` when it kept none.
        expected: Option<FactorGeneration>,
        /// The generation of the factor handed over.
        found: FactorGeneration,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A geometry pair that the narrow phase cannot handle.
    #[error("unsupported geometry pair: {a} vs {b}")]
    UnsupportedPair {
        /// First shape kind.
        a: String,
        /// Second shape kind.
        b: String,
    },
    /// A time step of a rollout failed: where (the step's index in the rollout and its
    /// start time) and why (the step's own error, with its solver statistics).
    #[error("step {step} (from t = {t} s): {source}")]
    Step {
        /// Index of the failing step in the rollout (0: the step from its first state).
        step: usize,
        /// Time at the start of the failing step (s).
        t: f64,
        /// The step's error.
        source: Box<Error>,
    },
    /// A solve failed furthest from optimality at the velocities of `body` (the convex step)
    /// or furthest from a solution in its momentum balance or one of its contacts (the ncp
    /// step), which was in contact with `contacts` (geometry names) during the step.
    #[error("near body `{body}`{}: {source}", if contacts.is_empty() { String::new() } else { format!(" (in contact with {})", contacts.join(", ")) })]
    Near {
        /// The body whose velocities carry the largest scaled gradient component.
        body: String,
        /// The other geometries of its contacts in the step, by name.
        contacts: Vec<String>,
        /// The solver's error, with its statistics.
        source: Box<Error>,
    },
    /// A request would allocate more memory than [`crate::budget::MEMORY_CAP`], or more items
    /// than a documented count cap allows: refused before anything is allocated.
    #[error("`{field}`: {request} {}; the cap is {limit}: {advice}", if *bytes > 0.0 { format!("would need {}", format_bytes(*bytes)) } else { "are too many".into() })]
    TooLarge {
        /// The field, flag or argument that sets the size (`simulation.duration`, `--dt`,
        /// `geometry[2].hydroelastic.resolution_hint`).
        field: String,
        /// What would be allocated (`a recording of 1e12 steps of 72 B`).
        request: String,
        /// Memory the request would need, at least (bytes); 0 when the cap is on a count.
        bytes: f64,
        /// The cap it exceeds, in words.
        limit: String,
        /// How to make the request fit.
        advice: String,
    },
    /// The run was interrupted (SIGINT, Ctrl-C) after `steps_completed` steps; what was
    /// computed up to then was kept.
    #[error("interrupted after {steps_completed} steps (t = {t} s)")]
    Interrupted {
        /// Steps completed before the interrupt.
        steps_completed: usize,
        /// Simulated time reached (s).
        t: f64,
    },
    /// Some runs of a batch (several problems, the stiffnesses of a sweep) failed; the others
    /// completed and were written.
    #[error("{} of {total} runs failed: {}", failures.len(), failures.join("; "))]
    RunsFailed {
        /// Number of runs in the batch.
        total: usize,
        /// `NAME: error` of every failed run.
        failures: Vec<String>,
    },
    /// An output file could not be written.
    #[error("{path}: {source}")]
    Io {
        /// File or folder involved.
        path: PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// A measured-data file (CSV) could not be read or does not fit the scene.
    #[error("{path}: {message}")]
    DataFile {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the line and column where it applies.
        message: String,
    },
    /// Plot rendering failed.
    #[error("plot {path}: {message}")]
    Plot {
        /// Figure file.
        path: PathBuf,
        /// Backend message.
        message: String,
    },
    /// A trajectory optimizer could not continue (the initial rollout failed, derivatives
    /// failed, or a non-finite value appeared).
    #[error("trajectory optimization failed at iteration {iteration} (cost {cost:.6e}): {reason}")]
    TrajectoryOptimization {
        /// What went wrong, with the underlying error.
        reason: String,
        /// Iterations completed before the failure.
        iteration: usize,
        /// Cost of the last accepted trajectory (`NaN` if there was none).
        cost: f64,
    },
}

/// Result with [`Error`] by default.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// This error as the failure of step `step` of a rollout, which started at `t` (s).
    pub fn at_step(self, step: usize, t: f64) -> Self {
        Error::Step {
            step,
            t,
            source: Box::new(self),
        }
    }

    /// The error of the step itself when this is an [`Error::Step`] or an [`Error::Near`], else
    /// this error.
    pub fn root(&self) -> &Error {
        match self {
            Error::Step { source, .. } | Error::Near { source, .. } => source.root(),
            other => other,
        }
    }

    /// The statistics of the convex solve this error reports, if it carries them.
    pub fn solver_stats(&self) -> Option<&SolverStats> {
        match self.root() {
            Error::NotConverged { stats }
            | Error::NonFinite { stats, .. }
            | Error::HessianNotPositiveDefinite { stats, .. } => Some(stats),
            _ => None,
        }
    }

    /// Shorthand for [`Error::InvalidParameter`].
    pub fn invalid(name: &str, value: impl std::fmt::Display, reason: &str) -> Self {
        Error::InvalidParameter {
            name: name.to_string(),
            value: value.to_string(),
            reason: reason.to_string(),
        }
    }
}

/// A size in bytes as people read it: `72 TB`, `3.2 GB`, `512 kB`, `40 B` (decimal units,
/// three significant digits); used by [`Error::TooLarge`] and [`crate::budget`].
pub fn format_bytes(bytes: f64) -> String {
    const UNITS: [&str; 7] = ["B", "kB", "MB", "GB", "TB", "PB", "EB"];
    if !bytes.is_finite() {
        return "more than any memory".into();
    }
    let mut value = bytes;
    for unit in UNITS {
        if value < 999.5 {
            return format!("{} {unit}", Significant(value));
        }
        value /= 1000.0;
    }
    format!("{bytes:.2e} B")
}

/// A number printed with three significant digits, without trailing zeros.
struct Significant(f64);

impl fmt::Display for Significant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let decimals = if self.0 >= 99.95 {
            0
        } else if self.0 >= 9.995 {
            1
        } else {
            2
        };
        let text = format!("{:.*}", decimals, self.0);
        let text = if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.')
        } else {
            &text
        };
        f.write_str(text)
    }
}

/// A position in a text file, both counted from 1 as editors do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextLocation {
    /// Line number (from 1).
    pub line: usize,
    /// Column number in characters (from 1).
    pub column: usize,
}

impl fmt::Display for TextLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

impl TextLocation {
    /// The location of byte `offset` in `text` (clamped to the text's end).
    pub fn of_offset(text: &str, offset: usize) -> Self {
        let mut end = offset.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let before = &text[..end];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        TextLocation {
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
        }
    }
}
