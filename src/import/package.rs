//! Resolving the file names a model gives its meshes, as ROS tools do
//! (<http://wiki.ros.org/ROS/EnvironmentVariables#ROS_PACKAGE_PATH>):
//!
//! - `package://NAME/REL`: `DIR/REL` for the first package directory `DIR` of NAME that
//!   holds REL, looking in this order at
//!   1. the `NAME=DIR` entries given in code or with `--package-path NAME=DIR` (repeatable),
//!   2. the entries of the `STICTION_PACKAGE_PATH` environment variable (`:`-separated, each
//!      `NAME=DIR`, or a plain `ROOT` in which `ROOT/NAME` is looked for, as
//!      `ROS_PACKAGE_PATH` does),
//!   3. the model file's ancestor folders called NAME (a package that ships its model inside
//!      itself, as example-robot-data does);
//! - `file:///ABS` and absolute paths: as they are;
//! - any other path: relative to the model file's folder.
//!
//! A name that resolves to no existing file is an error listing every place looked at.

use std::path::{Path, PathBuf};

/// The environment variable holding extra package search entries.
pub const PACKAGE_PATH_VARIABLE: &str = "STICTION_PACKAGE_PATH";

/// One entry of the search path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PackageEntry {
    /// Package `name` lives in `dir`.
    Named {
        /// The package name.
        name: String,
        /// Its folder.
        dir: PathBuf,
    },
    /// Packages live in sub-folders of `root` named after them.
    Root(PathBuf),
}

/// An ordered package search path (see the module doc).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PackagePath {
    /// Entries, searched in order.
    pub entries: Vec<PackageEntry>,
}

impl PackagePath {
    /// Adds `NAME=DIR` (the form of `--package-path`).
    ///
    /// # Errors
    /// A message if `entry` is not `NAME=DIR` with both parts non-empty.
    pub fn push_named(&mut self, entry: &str) -> Result<(), String> {
        match entry.split_once('=') {
            Some((name, dir)) if !name.is_empty() && !dir.is_empty() => {
                self.entries.push(PackageEntry::Named {
                    name: name.to_string(),
                    dir: PathBuf::from(dir),
                });
                Ok(())
            }
            _ => Err(format!(
                "expected NAME=DIR (a package name and its folder), found `{entry}`"
            )),
        }
    }

    /// Adds the entries of a `:`-separated list, each `NAME=DIR` or a plain root folder
    /// (empty entries are skipped).
    pub fn push_list(&mut self, list: &str) {
        for entry in list.split(':').filter(|e| !e.is_empty()) {
            if self.push_named(entry).is_err() {
                self.entries.push(PackageEntry::Root(PathBuf::from(entry)));
            }
        }
    }

    /// This path followed by the entries of `STICTION_PACKAGE_PATH`, if set.
    pub fn with_env(mut self) -> Self {
        if let Ok(list) = std::env::var(PACKAGE_PATH_VARIABLE) {
            self.push_list(&list);
        }
        self
    }

    /// A search path holding only the entries of `STICTION_PACKAGE_PATH`.
    pub fn from_env() -> Self {
        PackagePath::default().with_env()
    }

    /// The candidate folders of package `name` for a model file at `model`, in search order
    /// (existing or not).
    fn package_dirs(&self, name: &str, model: &Path) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = self
            .entries
            .iter()
            .filter_map(|e| match e {
                PackageEntry::Named { name: n, dir } => (n == name).then(|| dir.clone()),
                PackageEntry::Root(root) => Some(root.join(name)),
            })
            .collect();
        let absolute = model.canonicalize().unwrap_or_else(|_| model.to_path_buf());
        dirs.extend(
            absolute
                .ancestors()
                .skip(1)
                .filter(|a| a.file_name().is_some_and(|f| f == name))
                .map(Path::to_path_buf),
        );
        dirs
    }

    /// The file that `uri` names in the model file at `model` (see the module doc).
    ///
    /// # Errors
    /// A message naming the package or file that was not found and every place looked at.
    pub fn resolve(&self, uri: &str, model: &Path) -> Result<PathBuf, String> {
        if let Some(rest) = uri.strip_prefix("package://") {
            let (name, relative) = rest.split_once('/').unwrap_or((rest, ""));
            if name.is_empty() || relative.is_empty() {
                return Err(format!("expected package://NAME/PATH, found `{uri}`"));
            }
            let dirs = self.package_dirs(name, model);
            if let Some(found) = dirs
                .iter()
                .map(|d| d.join(relative))
                .find(|candidate| candidate.is_file())
            {
                return Ok(found);
            }
            let existing: Vec<&PathBuf> = dirs.iter().filter(|d| d.is_dir()).collect();
            let searched = if dirs.is_empty() {
                "no entry names it".to_string()
            } else {
                dirs.iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(if existing.is_empty() {
                format!(
                    "package `{name}` not found (searched: {searched}); give its folder with \
                     --package-path {name}=DIR or {PACKAGE_PATH_VARIABLE}"
                )
            } else {
                format!(
                    "file `{relative}` not found in package `{name}` (searched: {})",
                    existing
                        .iter()
                        .map(|d| d.join(relative).display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            });
        }
        let path = match uri.strip_prefix("file://") {
            Some(absolute) => PathBuf::from(absolute),
            None if Path::new(uri).is_absolute() => PathBuf::from(uri),
            None => model.parent().unwrap_or(Path::new("")).join(uri),
        };
        if path.is_file() {
            Ok(path)
        } else {
            Err(format!("file not found: {}", path.display()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder under the system's temporary folder.
    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("stiction-package-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch folder");
        dir
    }

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("folders");
        std::fs::write(path, "solid x\nendsolid x\n").expect("a file");
    }

    #[test]
    fn package_uris_resolve_through_named_entries_roots_and_ancestors() {
        let dir = scratch("resolve");
        let model = dir.join("robots/arm_pkg/urdf/arm.urdf");
        touch(&model);
        touch(&dir.join("robots/arm_pkg/meshes/link.stl"));
        touch(&dir.join("elsewhere/gripper/meshes/finger.stl"));
        touch(&dir.join("named/meshes/palm.stl"));

        // The model's ancestor called `arm_pkg`.
        let none = PackagePath::default();
        assert_eq!(
            none.resolve("package://arm_pkg/meshes/link.stl", &model),
            Ok(dir
                .join("robots/arm_pkg/meshes/link.stl")
                .canonicalize()
                .expect("exists"))
        );
        // A root entry and a named entry, as STICTION_PACKAGE_PATH spells them.
        let mut path = PackagePath::default();
        path.push_list(&format!(
            "{}:palm_pkg={}",
            dir.join("elsewhere").display(),
            dir.join("named").display()
        ));
        assert_eq!(
            path.resolve("package://gripper/meshes/finger.stl", &model),
            Ok(dir.join("elsewhere/gripper/meshes/finger.stl"))
        );
        assert_eq!(
            path.resolve("package://palm_pkg/meshes/palm.stl", &model),
            Ok(dir.join("named/meshes/palm.stl"))
        );
        // Relative to the model's folder, and file://.
        assert_eq!(
            none.resolve("../meshes/link.stl", &model),
            Ok(dir.join("robots/arm_pkg/urdf/../meshes/link.stl"))
        );
        let absolute = dir.join("named/meshes/palm.stl");
        assert_eq!(
            none.resolve(&format!("file://{}", absolute.display()), &model),
            Ok(absolute)
        );
    }

    #[test]
    fn a_missing_package_or_file_lists_the_places_searched() {
        let dir = scratch("missing");
        let model = dir.join("arm.urdf");
        touch(&model);
        std::fs::create_dir_all(dir.join("pkgs/tool")).expect("a package folder");
        let mut path = PackagePath::default();
        path.push_named(&format!("tool={}", dir.join("pkgs/tool").display()))
            .expect("NAME=DIR");
        let e = path
            .resolve("package://hand/meshes/palm.stl", &model)
            .expect_err("no package `hand`");
        assert!(
            e.starts_with("package `hand` not found (searched: no entry names it)"),
            "{e}"
        );
        let e = path
            .resolve("package://tool/meshes/tip.stl", &model)
            .expect_err("no such file");
        assert_eq!(
            e,
            format!(
                "file `meshes/tip.stl` not found in package `tool` (searched: {})",
                dir.join("pkgs/tool/meshes/tip.stl").display()
            )
        );
        let e = path
            .resolve("meshes/base.stl", &model)
            .expect_err("no file");
        assert_eq!(
            e,
            format!("file not found: {}", dir.join("meshes/base.stl").display())
        );
        assert!(path.push_named("tool").is_err());
        assert!(PackagePath::default()
            .resolve("package://tool", &model)
            .is_err());
    }
}
