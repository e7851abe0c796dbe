//! A progress bar for rollouts that is shown only once a command has run for a second.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a command runs before its bar appears.
const SHOW_AFTER: Duration = Duration::from_secs(1);

/// Steps done, simulated time and its rate, on stderr (never on stdout, so `--json` output
/// stays clean; indicatif also hides it when stderr is not a terminal).
pub struct Progress {
    bar: ProgressBar,
    start: Instant,
    quiet: bool,
    shown: bool,
    t_end: f64,
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
        }
    }

    /// A hidden bar over at most `iterations` solver iterations; with `quiet` it never shows.
    pub fn iterations(iterations: usize, quiet: bool) -> Self {
        let progress = Progress::new(iterations, f64::NAN, quiet);
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
/// stderr once the command has run for a second.
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
        if !quiet {
            let ticker = bar.clone();
            std::thread::spawn(move || {
                std::thread::sleep(SHOW_AFTER);
                if !ticker.is_finished() {
                    ticker.set_draw_target(ProgressDrawTarget::stderr());
                    ticker.enable_steady_tick(Duration::from_millis(120));
                }
            });
        }
        Spinner { bar }
    }

    /// Removes the spinner.
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}
