//! Output folders: never overwrite a previous run without being told to.

use std::path::{Path, PathBuf};

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;

use stiction::error::{Error, Result};
use stiction::problem::Problem;
use stiction::report::Projection;

/// `--out DIR` and `--force`, for the commands that write a run folder.
#[derive(Args)]
pub struct OutArgs {
    /// Output folder; created if missing, refused if not empty unless --force. Without it, a
    /// new numbered folder under out/ (out/PROBLEM/N).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write into a non-empty output folder, replacing files of the same names.
    #[arg(long)]
    pub force: bool,
}

impl OutArgs {
    /// The `--out` folder, prepared before any work so that a refusal costs nothing.
    pub fn prepare_explicit(&self) -> Result<Option<PathBuf>> {
        self.out
            .as_ref()
            .map(|dir| prepare(dir, self.force).map(|()| dir.clone()))
            .transpose()
    }
}

/// `explicit`, or a new numbered folder `out/NAME/N`.
pub fn explicit_or_numbered(explicit: Option<PathBuf>, name: &str) -> Result<PathBuf> {
    match explicit {
        Some(dir) => Ok(dir),
        None => numbered(&Path::new("out").join(name)),
    }
}

/// `--animate`, `--projection` and `--replay`.
#[derive(Args)]
pub struct AnimationArgs {
    /// Also write animation.gif: the bodies seen in --projection, contact forces as arrows.
    #[arg(long)]
    pub animate: bool,
    /// World plane of the animation: xz (side, the default), xy (top) or yz (front).
    #[arg(long, value_parser = PossibleValuesParser::new(Projection::ALL.map(|p| p.name()))
        .try_map(|name| name.parse::<Projection>()))]
    pub projection: Option<Projection>,
    /// Also write a 3-D replay into replay/ (bodies, contact forces, pressure-field patches,
    /// targets; timeline and orbit camera): `stiction view DIR` serves it. Needs three.js,
    /// installed by scripts/viewer/setup.sh (or $STICTION_THREE_JS).
    #[arg(long)]
    pub replay: bool,
}

impl AnimationArgs {
    /// The animation's projection when `--animate` or the problem's `[output]` table asks for
    /// one; an explicit `--projection` wins over the table's.
    pub fn wanted(&self, problem: &Problem) -> Option<Projection> {
        (self.animate || problem.output.animate)
            .then(|| self.projection.unwrap_or(problem.output.projection))
    }
}

/// Creates `dir` if missing and checks that it is writable. A non-empty `dir` is refused
/// unless `force`, with a message that says how to proceed.
pub fn prepare(dir: &Path, force: bool) -> Result<()> {
    let io_error = |source| Error::Io {
        path: dir.to_path_buf(),
        source,
    };
    if dir.exists() && !dir.is_dir() {
        return Err(io_error(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "--out names a file, not a folder, and nothing was written. --out takes a folder \
             (created if missing) for the run's files; choose another path",
        )));
    }
    if dir.is_dir() && !force {
        let mut entries = std::fs::read_dir(dir).map_err(io_error)?;
        if entries.next().is_some() {
            return Err(io_error(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "the output folder is not empty, and nothing was written. Pass --force to write \
                 into it (replacing files of the same names), choose another --out, or leave \
                 --out out to write a new numbered folder under out/PROBLEM/",
            )));
        }
    }
    std::fs::create_dir_all(dir).map_err(io_error)?;
    check_writable(dir)
}

/// Checks that files can be created in the folder `dir` (a probe file, removed at once), so
/// that a read-only `--out` is refused before the run rather than after it.
///
/// # Errors
/// [`Error::Io`] naming the folder.
pub fn check_writable(dir: &Path) -> Result<()> {
    let probe = dir.join(".stiction-write-check");
    std::fs::write(&probe, b"")
        .and_then(|()| std::fs::remove_file(&probe))
        .map_err(|source| Error::Io {
            path: dir.to_path_buf(),
            source: std::io::Error::new(
                source.kind(),
                format!("the output folder is not writable ({source}), and nothing was run"),
            ),
        })
}

/// Creates and returns `base/N`, N one more than the largest number already in `base`
/// (starting at 1), so earlier runs are kept.
pub fn numbered(base: &Path) -> Result<PathBuf> {
    let io_error = |path: &Path, source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(base).map_err(|e| io_error(base, e))?;
    let mut last = 0;
    for entry in std::fs::read_dir(base).map_err(|e| io_error(base, e))? {
        let entry = entry.map_err(|e| io_error(base, e))?;
        if let Some(n) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u64>().ok())
        {
            last = last.max(n);
        }
    }
    let dir = base.join((last + 1).to_string());
    // create_dir (not _all) fails if another run took the number meanwhile.
    std::fs::create_dir(&dir).map_err(|e| io_error(&dir, e))?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_folders_count_up_and_non_empty_folders_are_refused() {
        let base = std::env::temp_dir().join(format!("stiction-output-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        assert_eq!(numbered(&base).unwrap(), base.join("1"));
        std::fs::create_dir(base.join("7")).unwrap();
        assert_eq!(numbered(&base).unwrap(), base.join("8"));
        assert!(prepare(&base, false).is_err());
        assert!(prepare(&base, true).is_ok());
        assert!(prepare(&base.join("fresh"), false).is_ok());
        let file = base.join("a-file");
        std::fs::write(&file, "x").unwrap();
        for force in [false, true] {
            let e = prepare(&file, force).unwrap_err().to_string();
            assert!(e.contains("--out names a file, not a folder"), "{e}");
        }
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "x",
            "the file is untouched"
        );
        std::fs::remove_dir_all(&base).unwrap();
    }
}
