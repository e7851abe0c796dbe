//! Progress on stderr: on a terminal, a bar shown only once a command has run for a second;
//! in a log (stderr not a terminal: a file, a job array's output), plain lines at most every
//! five seconds, so that a long run is never silent.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a command runs before its bar appears.
const SHOW_AFTER: Duration = Duration::from_secs(1);

/// Steps done, simulated time and its rate, on stderr (never on stdout, so `--json` output
/// stays clean): a bar on a terminal, plain lines in a log.
pub struct Progress {
    bar: ProgressBar,
    start: Instant,
    quiet: bool,
    shown: bool,
    t_end: f64,
    plain: Option<PlainLines>,
    /// What is counted: `steps` or `iterations`.
    unit: &'static str,
}

impl Progress {
    /// A hidden bar over `steps` steps ending at simulated time `t_end` (s); with `quiet` it
    /// never shows.
    pub fn new(steps: usize, t_end: f64, quiet: bool) -> Self {
        let bar = ProgressBar::with_draw_target(Some(steps as u64), ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template("{bar:32} {pos}/{len} steps  {msg}  ETA {eta}")
                .expect("invariant: the progress template is valid"),
        );
        Progress {
            bar,
            start: Instant::now(),
            quiet,
            shown: false,
            t_end,
            plain: (!quiet && !stderr_is_terminal()).then(PlainLines::new),
            unit: "steps",
        }
    }

    /// A hidden bar over at most `iterations` solver iterations; with `quiet` it never shows.
    pub fn iterations(iterations: usize, quiet: bool) -> Self {
        let mut progress = Progress::new(iterations, f64::NAN, quiet);
        progress.unit = "iterations";
        progress.bar.set_style(
            ProgressStyle::with_template("{bar:32} {pos}/{len} iterations  {msg}  {elapsed}")
                .expect("invariant: the progress template is valid"),
        );
        progress
    }

    /// A hidden bar over the `frames` frames of an animation being encoded; with `quiet` it
    /// never shows.
    pub fn frames(frames: usize, quiet: bool) -> Self {
        let progress = Progress::new(frames, f64::NAN, quiet);
        progress.bar.set_style(
            ProgressStyle::with_template("{bar:32} {pos}/{len} GIF frames encoded  {elapsed}")
                .expect("invariant: the progress template is valid"),
        );
        progress
    }

    /// Records one finished step that reached simulated time `t` (s).
    pub fn step(&mut self, t: f64) {
        if self.tick() {
            let rate = t / self.start.elapsed().as_secs_f64();
            self.bar.set_message(format!(
                "t = {t:.4} of {:.4} s, {rate:.3} simulated s per wall s",
                self.t_end
            ));
        }
    }

    /// Records one more frame encoded.
    pub fn frame(&mut self) {
        self.tick();
    }

    /// Records one finished iteration, described by `message` (e.g. its cost).
    pub fn iteration(&mut self, message: impl FnOnce() -> String) {
        if self.tick() {
            self.bar.set_message(message());
        }
    }

    /// Advances the bar, showing it once the command has run for [`SHOW_AFTER`]; whether it
    /// is shown.
    fn tick(&mut self) -> bool {
        self.bar.inc(1);
        if let Some(plain) = &self.plain {
            plain.offer(|| {
                format!(
                    "{}/{} {}  {}  {:.0} s",
                    self.bar.position(),
                    self.bar.length().unwrap_or(0),
                    self.unit,
                    self.bar.message(),
                    self.start.elapsed().as_secs_f64()
                )
            });
            // The message is always kept up to date for the next plain line.
            return true;
        }
        if !self.quiet && !self.shown && self.start.elapsed() >= SHOW_AFTER {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown = true;
        }
        self.shown
    }

    /// Removes the bar; returns the wall time since it was made.
    pub fn finish(self) -> Duration {
        self.bar.finish_and_clear();
        self.start.elapsed()
    }
}

/// A spinner with the elapsed time, for work that reports no progress of its own; shown on
/// stderr once the command has run for a second, or in a log as a plain line every
/// [`PLAIN_EVERY`].
pub struct Spinner {
    bar: ProgressBar,
}

impl Spinner {
    /// Starts a spinner labelled `message`; with `quiet` it never shows.
    pub fn new(message: &str, quiet: bool) -> Self {
        let bar = ProgressBar::hidden();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg}  {elapsed}")
                .expect("invariant: the spinner template is valid"),
        );
        bar.set_message(message.to_string());
        let ticker = bar.clone();
        let terminal = stderr_is_terminal();
        if !quiet && terminal {
            std::thread::spawn(move || {
                std::thread::sleep(SHOW_AFTER);
                if !ticker.is_finished() {
                    ticker.set_draw_target(ProgressDrawTarget::stderr());
                    ticker.enable_steady_tick(Duration::from_millis(120));
                }
            });
        } else if !quiet {
            // In a log: a plain line every PLAIN_EVERY until the work is done.
            let (start, message) = (Instant::now(), message.to_string());
            std::thread::spawn(move || loop {
                std::thread::sleep(PLAIN_EVERY);
                if ticker.is_finished() {
                    break;
                }
                eprintln!("{message}  {:.0} s", start.elapsed().as_secs_f64());
            });
        }
        Spinner { bar }
    }

    /// Removes the spinner.
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}

/// How often a plain progress line is written when stderr is not a terminal (a log file, a
/// job array's output): at most once per this interval.
const PLAIN_EVERY: Duration = Duration::from_secs(5);

/// Whether stderr is a terminal (a bar), or a log (plain lines at most every [`PLAIN_EVERY`]).
fn stderr_is_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// Plain progress lines for a log: one line at most every [`PLAIN_EVERY`], thread-safe.
struct PlainLines {
    last: Mutex<Instant>,
}

impl PlainLines {
    fn new() -> Self {
        PlainLines {
            last: Mutex::new(Instant::now()),
        }
    }

    /// Writes `line()` on stderr if the last line is [`PLAIN_EVERY`] old.
    fn offer(&self, line: impl FnOnce() -> String) {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if last.elapsed() >= PLAIN_EVERY {
            *last = Instant::now();
            eprintln!("{}", line());
        }
    }
}

/// Progress over the independent jobs of a parallel batch (a sweep's rollouts), shared by
/// rayon's threads: a bar on a terminal once the batch has run for a second, plain lines at
/// most every [`PLAIN_EVERY`] in a log; nothing with `quiet`.
pub struct BatchProgress {
    bar: ProgressBar,
    plain: Option<PlainLines>,
    label: String,
    start: Instant,
}

impl BatchProgress {
    /// Progress over `jobs` jobs, each line starting with `label`.
    pub fn new(jobs: usize, label: &str, quiet: bool) -> Self {
        let terminal = stderr_is_terminal();
        let bar = ProgressBar::with_draw_target(Some(jobs as u64), ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template("{bar:32} {pos}/{len} {msg}  {elapsed}")
                .expect("invariant: the progress template is valid"),
        );
        bar.set_message(label.to_string());
        if !quiet && terminal {
            let ticker = bar.clone();
            std::thread::spawn(move || {
                std::thread::sleep(SHOW_AFTER);
                if !ticker.is_finished() {
                    ticker.set_draw_target(ProgressDrawTarget::stderr());
                    ticker.enable_steady_tick(Duration::from_millis(500));
                }
            });
        }
        BatchProgress {
            bar,
            plain: (!quiet && !terminal).then(PlainLines::new),
            label: label.to_string(),
            start: Instant::now(),
        }
    }

    /// Records one finished job, described by `what`.
    pub fn done(&self, what: impl FnOnce() -> String) {
        self.bar.inc(1);
        if let Some(plain) = &self.plain {
            plain.offer(|| {
                format!(
                    "{}: {}/{} done ({}), {:.0} s",
                    self.label,
                    self.bar.position(),
                    self.bar.length().unwrap_or(0),
                    what(),
                    self.start.elapsed().as_secs_f64()
                )
            });
        }
    }

    /// Removes the bar.
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}
