//! ICF ext. Sec. XII-B, the grasp stress test with example-robot-data's Franka hand
//! (`problems/grasp-stress.toml`, the figures `grasp-time-to-failure`, `grasp-errors` and
//! `grasp-refinement`): the rod held at low frequency, its fall near the pendulum frequency,
//! the reference's refinement, dissipation's effect and the errors at larger steps, asserted
//! on the full study's numbers (the paper's set-up: Lagged at δt = 0.2 ms, 10 s per run).
//!
//! Every test is `#[ignore]`: they need example-robot-data from PyPI, and the full study takes
//! minutes (all tests share one study per process). Run them with
//!
//! ```text
//! scripts/robots/setup.sh                          # .venv-robots, or give a folder
//! STICTION_ROBOTS_VENV=DIR cargo test --test grasp_stress -- --ignored
//! ```

#[path = "common/figures.rs"]
mod figures;

use figures::{load_with_robots, made_with, n};
use stiction::figures::{PaperFigure, Quality};

/// The simulated duration of the full study (s): a rod that holds has `t_f` = this.
const DURATION: f64 = 10.0;

/// Figure `name` of the full study (the three figures share one study per process).
fn full(name: &str) -> PaperFigure {
    made_with(&load_with_robots, name, Quality::Full)
}

/// Fig. 21: the rod holds for the whole 10 s at every frequency up to 1.4 Hz, with and without
/// dissipation (the paper: "below 1.4 Hz, the grasp remains stable"); the highest frequency
/// of the grid that holds is 1.3-1.5 Hz (measured 1.4 Hz), and the rod falls within the run
/// at the pendulum frequency's neighbours 1.6 and 1.7 Hz (f_p = 1.62 Hz; measured t_f 2.38
/// and 2.13 s without dissipation, 2.44 and 2.25 s with).
#[test]
#[ignore = "needs scripts/robots/setup.sh (example-robot-data from PyPI); minutes"]
fn the_grasp_holds_at_low_frequency_and_fails_near_the_pendulum_frequency() {
    let fig = full("grasp-time-to-failure");
    for d in ["d0", "d"] {
        for f in ["0.8", "1", "1.2", "1.3", "1.4"] {
            assert_eq!(n(&fig, &format!("t_f.{d}.{f}")), DURATION, "{d}, {f} Hz");
        }
        let held = n(&fig, &format!("held.{d}"));
        assert!((1.3..=1.5).contains(&held), "{d}: held up to {held} Hz");
        for f in ["1.6", "1.7"] {
            let t_f = n(&fig, &format!("t_f.{d}.{f}"));
            assert!(t_f < DURATION, "{d}, {f} Hz: t_f {t_f}");
        }
    }
}

/// Fig. 21: above the threshold t_f falls with f: from each frequency of the grid to the next
/// it does not grow by more than 5 % (measured: it falls at every step, 3.86 → 0.41 s from
/// 1.5 to 3 Hz without dissipation, 4.05 → 0.41 s with), and at 3 Hz it is below a quarter of
/// its value at 1.5 Hz (measured 0.107 and 0.102).
#[test]
#[ignore = "needs scripts/robots/setup.sh (example-robot-data from PyPI); minutes"]
fn time_to_failure_falls_with_frequency_above_the_threshold() {
    let fig = full("grasp-time-to-failure");
    let grid = ["1.5", "1.6", "1.7", "1.8", "1.9", "2", "2.2", "2.5", "3"];
    for d in ["d0", "d"] {
        let t: Vec<f64> = grid
            .iter()
            .map(|f| n(&fig, &format!("t_f.{d}.{f}")))
            .collect();
        assert!(t.iter().all(|&x| x < DURATION), "{d}: {t:?}");
        for (k, pair) in t.windows(2).enumerate() {
            assert!(
                pair[1] < 1.05 * pair[0],
                "{d}: {} → {} Hz: {t:?}",
                grid[k],
                grid[k + 1]
            );
        }
        assert!(t[8] < 0.25 * t[0], "{d}: {t:?}");
    }
}

/// Fig. 21: dissipation does not shorten the grasp by more than 2 % at any failing frequency
/// (measured: at most 0.14 %) and lengthens it by at most 20 % (measured up to 11.7 %; the
/// paper: "increasing t_f by up to 10 %").
#[test]
#[ignore = "needs scripts/robots/setup.sh (example-robot-data from PyPI); minutes"]
fn dissipation_barely_changes_the_time_to_failure() {
    let fig = full("grasp-time-to-failure");
    let (lo, hi) = (
        n(&fig, "dissipation.min_gain"),
        n(&fig, "dissipation.max_gain"),
    );
    assert!(lo > -0.02, "least change {lo}");
    assert!(hi < 0.2, "largest change {hi}");
    // The slides keep the hand within 1 mm (3.3 % of R) of the target circle up to 3 Hz
    // (measured 0.7 mm).
    assert!(n(&fig, "tracking") < 1e-3);
}

/// The reference is validated by refinement at 1.7 Hz: halving δt from 0.2 to 0.1 ms changes
/// t_f by less than 8 % without dissipation (measured +4.9 %) and less than 2 % with
/// (measured +0.5 %); t_f grows as δt falls from 0.4 to 0.1 ms (the symplectic Euler's
/// truncation shortens the grasp: measured 2.064, 2.131, 2.235 s without dissipation; 2.234,
/// 2.247, 2.258 s with).
#[test]
#[ignore = "needs scripts/robots/setup.sh (example-robot-data from PyPI); minutes"]
fn the_reference_step_is_converged_within_a_few_percent() {
    let fig = full("grasp-refinement");
    let change_d0 = n(&fig, "change.d0.0.20-0.10ms");
    let change_d = n(&fig, "change.d.0.20-0.10ms");
    assert!(change_d0.abs() < 0.08, "d = 0: {change_d0}");
    assert!(change_d.abs() < 0.02, "with d: {change_d}");
    for d in ["d0", "d"] {
        let t: Vec<f64> = ["0.40", "0.20", "0.10"]
            .iter()
            .map(|dt| n(&fig, &format!("t_f.{d}.{dt}ms")))
            .collect();
        assert!(t[0] < t[1] && t[1] < t[2], "{d}: {t:?}");
    }
}

/// Fig. 22: without dissipation Lagged underpredicts t_f at larger steps and more so the larger
/// the step (mean errors over the failing frequencies, measured −5.1 %, −9.0 %, −13.9 % at 1,
/// 2 and 5 ms), within the paper's "up to 50 %"; Similar at the reference step is within 5 %
/// of Lagged (measured −2.1 %; the paper: less than 0.5 %) and underpredicts at 5 ms too
/// (measured −36.5 %).
#[test]
#[ignore = "needs scripts/robots/setup.sh (example-robot-data from PyPI); minutes"]
fn larger_steps_underpredict_the_time_to_failure() {
    let fig = full("grasp-errors");
    let lagged: Vec<f64> = ["1.0", "2.0", "5.0"]
        .iter()
        .map(|dt| n(&fig, &format!("lagged.d0.{dt}ms.mean")))
        .collect();
    assert!(
        lagged[0] < 0.0 && lagged[1] < lagged[0] && lagged[2] < lagged[1],
        "{lagged:?}"
    );
    assert!(lagged[2] > -0.5, "{lagged:?}");
    let similar = n(&fig, "similar.d0.0.2ms.mean");
    assert!(similar.abs() < 0.05, "Similar at 0.2 ms: {similar}");
    let similar = n(&fig, "similar.d0.5.0ms.mean");
    assert!((-0.6..0.0).contains(&similar), "Similar at 5 ms: {similar}");
}
