//! `--replay`: the 3-D replay of a run, written into `RUN_DIR/replay/` (the format and the
//! page are `stiction::report::replay`'s; `stiction view RUN_DIR` serves it, `view.rs`).
//!
//! three.js comes from `viewer/node_modules/three` of the checkout the binary was built from
//! (`scripts/viewer/setup.sh`) or from `$STICTION_THREE_JS`; a run that asks for a replay
//! checks it is there before it starts, so a missing install costs nothing.

use std::path::{Path, PathBuf};

use stiction::error::Result;
use stiction::optimize::Task;
use stiction::report::replay::{
    three_js_dir, write_replay, ReplayRecording, ReplaySettings, Target, PAGE, REPLAY_DIR,
};

/// The three.js package folder when a replay is `wanted`, checked before any work.
///
/// # Errors
/// The missing install, with the command that fixes it.
pub fn prepare(wanted: bool) -> Result<Option<PathBuf>> {
    wanted.then(three_js_dir).transpose()
}

/// Writes `out/replay/` with `recordings` and three.js (located again: [`prepare`] checked it
/// before the run); returns the page's path, the one file a user opens.
pub fn write(out: &Path, recordings: &[ReplayRecording]) -> Result<PathBuf> {
    let dir = out.join(REPLAY_DIR);
    write_replay(
        &dir,
        &three_js_dir()?,
        recordings,
        &ReplaySettings::default(),
    )?;
    Ok(dir.join(PAGE))
}

/// The targets of an optimization task: one per check of its tree bodies (`body_names` in
/// model order), at its target position with its
/// tolerance.
pub fn targets(task: &Task, body_names: &[&str]) -> Vec<Target> {
    task.checks
        .iter()
        .map(|c| Target {
            label: format!(
                "{} at t = {} s (tolerance {} m)",
                body_names.get(c.body).copied().unwrap_or("?"),
                c.time,
                c.tolerance
            ),
            position: c.target,
            radius: c.tolerance,
            time: Some(c.time),
        })
        .collect()
}
