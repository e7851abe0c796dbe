//! The library's layers, checked on its source: every module imports only the modules below it
//! in [`LAYERS`] (the order `src/lib.rs` documents), except the imports named in
//! [`BACK_EDGES`], and no two files import each other.
//!
//! An import is any `crate::module` path in code (doc comments and unit-test modules excluded:
//! a doc link or a test may look anywhere).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The top-level modules, lowest first.
const LAYERS: &[&str] = &[
    "scalar",
    "error",
    "budget",
    "math",
    "multibody",
    "geometry",
    "hydroelastic",
    "contact",
    "collision",
    "solver",
    "step",
    "control",
    "simulate",
    "ncp",
    "derivatives",
    "report",
    "scene",
    "import",
    "problem",
    "optimize",
    "identify",
    "figures",
];

/// The imports that run back up, `(file, module it imports)`, each explained in the file's
/// module doc.
const BACK_EDGES: &[(&str, &str)] = &[("error.rs", "ncp"), ("error.rs", "solver")];

fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("readable src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            // The binary is the top of the stack; `tests/` folders hold unit tests.
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name != "bin" && name != "tests" {
                source_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a file: `collision/point.rs` → `collision::point`.
fn module_of(relative: &str) -> String {
    relative
        .trim_end_matches(".rs")
        .trim_end_matches("/mod")
        .replace('/', "::")
}

/// The code of a file without its unit-test module and comments.
fn code_of(text: &str) -> String {
    let text = text
        .find("#[cfg(test)]\nmod tests")
        .map_or(text, |i| &text[..i]);
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::a::b::…` path in `code`, as its segments.
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        if code[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
        {
            continue;
        }
        let rest = &code[i + "crate::".len()..];
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        paths.push(
            rest[..end]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
        );
    }
    paths
}

struct Crate {
    /// Module path → the modules it imports (the longest prefix of each path that is a file).
    imports: BTreeMap<String, BTreeSet<String>>,
}

fn read_crate() -> Crate {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    source_files(&src, &mut files);
    let mut texts = BTreeMap::new();
    for f in &files {
        let relative = f.strip_prefix(&src).expect("under src");
        let relative = relative.to_string_lossy().replace('\\', "/");
        if relative == "lib.rs" || relative == "prelude.rs" || relative.ends_with("testing.rs") {
            continue;
        }
        texts.insert(
            module_of(&relative),
            code_of(&fs::read_to_string(f).expect("readable")),
        );
    }
    let modules: BTreeSet<String> = texts.keys().cloned().collect();
    let mut imports = BTreeMap::new();
    for (module, code) in &texts {
        let mut targets = BTreeSet::new();
        for path in crate_paths(code) {
            let target = (1..=path.len())
                .rev()
                .map(|k| path[..k].join("::"))
                .find(|m| modules.contains(m));
            if let Some(t) = target {
                if &t != module {
                    targets.insert(t);
                }
            }
        }
        imports.insert(module.clone(), targets);
    }
    Crate { imports }
}

fn top(module: &str) -> &str {
    module.split("::").next().unwrap_or(module)
}

fn file_of(module: &str, modules: &BTreeMap<String, BTreeSet<String>>) -> String {
    let is_folder = modules
        .keys()
        .any(|m| m.starts_with(&format!("{module}::")));
    let path = module.replace("::", "/");
    if is_folder {
        format!("{path}/mod.rs")
    } else {
        format!("{path}.rs")
    }
}

#[test]
fn every_module_is_in_a_layer() {
    let c = read_crate();
    let unknown: BTreeSet<&str> = c
        .imports
        .keys()
        .map(|m| top(m))
        .filter(|t| !LAYERS.contains(t))
        .collect();
    assert!(
        unknown.is_empty(),
        "modules missing from LAYERS: {unknown:?}"
    );
}

#[test]
fn imports_run_down_the_layers_except_the_named_ones() {
    let c = read_crate();
    let rank = |m: &str| LAYERS.iter().position(|l| *l == top(m));
    let mut back = BTreeSet::new();
    for (module, targets) in &c.imports {
        for t in targets {
            if let (Some(a), Some(b)) = (rank(module), rank(t)) {
                if b > a {
                    back.insert((file_of(module, &c.imports), top(t).to_string()));
                }
            }
        }
    }
    let allowed: BTreeSet<(String, String)> = BACK_EDGES
        .iter()
        .map(|(f, m)| (f.to_string(), m.to_string()))
        .collect();
    assert_eq!(back, allowed, "imports that run back up a layer");
    assert!(BACK_EDGES.len() <= 3);
}

#[test]
fn no_two_files_import_each_other() {
    let c = read_crate();
    let mut circles = Vec::new();
    for (a, targets) in &c.imports {
        for b in targets {
            let nested = a.starts_with(&format!("{b}::")) || b.starts_with(&format!("{a}::"));
            if a < b && !nested && c.imports.get(b).is_some_and(|t| t.contains(a)) {
                circles.push(format!("{a} <-> {b}"));
            }
        }
    }
    assert!(circles.is_empty(), "import circles: {circles:?}");
}

#[test]
fn the_checker_sees_imports_and_skips_comments_and_tests() {
    let code = code_of(
        "use crate::step::{Simulator, StepSettings};\n/// [`crate::report`]\nfn f() { crate::math::skew(); }\n#[cfg(test)]\nmod tests {\n use crate::problem;\n}\n",
    );
    let paths = crate_paths(&code);
    assert_eq!(
        paths,
        vec![
            vec!["step".to_string()],
            vec!["math".to_string(), "skew".to_string()]
        ]
    );
    assert_eq!(module_of("collision/mod.rs"), "collision");
    assert_eq!(module_of("collision/point.rs"), "collision::point");
}
