//! The MJCF element tree: every file parsed with `roxmltree`, `<include file="…"/>` replaced by
//! the children of the included file's `<mujoco>` root (MuJoCo's include semantics; the path
//! is relative to the including file), each element keeping the file, line and column it
//! came from so that every later error can point at it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::TextLocation;
use crate::error::{Error, Result};

/// Where a piece of text came from.
#[derive(Clone, Debug)]
pub(super) struct Origin {
    /// The file.
    pub file: Arc<PathBuf>,
    /// Line and column of the element (from 1).
    pub at: TextLocation,
}

impl Origin {
    /// An error at this place: `field` names the element and attribute.
    pub fn error(
        &self,
        field: String,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Error {
        Error::ProblemFile {
            path: self.file.as_ref().clone(),
            location: Some(self.at),
            field,
            expected: expected.into(),
            found: found.into(),
        }
    }
}

/// One XML element with its attributes (in file order) and children, includes expanded.
#[derive(Clone, Debug)]
pub(super) struct Element {
    /// Tag name (`body`, `geom`, …).
    pub tag: String,
    /// Attributes, name and value.
    pub attrs: Vec<(String, String)>,
    /// Child elements (text and comments dropped).
    pub children: Vec<Element>,
    /// Where the element starts.
    pub origin: Origin,
}

impl Element {
    /// The attribute `name` written on this element.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// How errors name this element: its tag, with its name if it has one
    /// (`geom "thigh"`).
    pub fn label(&self) -> String {
        match self.attr("name") {
            Some(name) => format!("{} \"{name}\"", self.tag),
            None => self.tag.clone(),
        }
    }

    /// An error about attribute `attr` of this element (or the element itself for `None`).
    pub fn error(
        &self,
        attr: Option<&str>,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Error {
        let field = match attr {
            Some(a) => format!("{} @{a}", self.label()),
            None => self.label(),
        };
        self.origin.error(field, expected, found)
    }

    /// Children with tag `tag`.
    pub fn children_named<'a>(&'a self, tag: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.tag == tag)
    }
}

/// Reads the MJCF file at `path` (its root must be `<mujoco>`), includes expanded.
///
/// # Errors
/// [`Error::Io`] for a file that cannot be read, [`Error::ProblemFile`] for malformed XML, a
/// root other than `<mujoco>`, an include without `file` or an include cycle.
pub(super) fn read_file(path: &Path) -> Result<Element> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
        path: path.to_path_buf(),
        source: e,
    })?;
    parse_text(&text, path, &mut Vec::new())
}

/// Parses MJCF `text` as if read from `path` (includes resolve next to it).
pub(super) fn parse_text(text: &str, path: &Path, stack: &mut Vec<PathBuf>) -> Result<Element> {
    let file = Arc::new(path.to_path_buf());
    let doc = roxmltree::Document::parse(text).map_err(|e| {
        let pos = e.pos();
        Error::ProblemFile {
            path: path.to_path_buf(),
            location: Some(TextLocation {
                line: pos.row as usize,
                column: pos.col as usize,
            }),
            field: "(file)".into(),
            expected: "well-formed XML".into(),
            found: e.to_string(),
        }
    })?;
    let root = doc.root_element();
    let origin = origin_of(&doc, &root, &file);
    if root.tag_name().name() != "mujoco" {
        return Err(origin.error(
            format!("<{}>", root.tag_name().name()),
            "an MJCF file whose root element is <mujoco>",
            format!("<{}>", root.tag_name().name()),
        ));
    }
    stack.push(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()));
    let element = convert(&doc, root, &file, stack)?;
    stack.pop();
    Ok(element)
}

fn origin_of(doc: &roxmltree::Document, node: &roxmltree::Node, file: &Arc<PathBuf>) -> Origin {
    let pos = doc.text_pos_at(node.range().start);
    Origin {
        file: file.clone(),
        at: TextLocation {
            line: pos.row as usize,
            column: pos.col as usize,
        },
    }
}

fn convert(
    doc: &roxmltree::Document,
    node: roxmltree::Node,
    file: &Arc<PathBuf>,
    stack: &mut Vec<PathBuf>,
) -> Result<Element> {
    let mut element = Element {
        tag: node.tag_name().name().to_string(),
        attrs: node
            .attributes()
            .map(|a| (a.name().to_string(), a.value().to_string()))
            .collect(),
        children: Vec::new(),
        origin: origin_of(doc, &node, file),
    };
    for child in node.children().filter(|c| c.is_element()) {
        if child.tag_name().name() == "include" {
            let include = convert(doc, child, file, stack)?;
            element.children.extend(expand_include(&include, stack)?);
        } else {
            element.children.push(convert(doc, child, file, stack)?);
        }
    }
    Ok(element)
}

/// The children of the `<mujoco>` root of the file an `<include>` names.
fn expand_include(include: &Element, stack: &mut Vec<PathBuf>) -> Result<Vec<Element>> {
    let name = include
        .attr("file")
        .ok_or_else(|| include.error(Some("file"), "the path of the file to include", "nothing"))?;
    let base = include.origin.file.parent().unwrap_or(Path::new(""));
    let path = base.join(name);
    let canonical = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
    if stack.contains(&canonical) {
        return Err(include.error(
            Some("file"),
            "a file not already being included (no include cycle)",
            path.display().to_string(),
        ));
    }
    let text = std::fs::read_to_string(&path).map_err(|e| {
        include.error(
            Some("file"),
            "a readable file, relative to the including file",
            format!("{}: {e}", path.display()),
        )
    })?;
    Ok(parse_text(&text, &path, stack)?.children)
}

/// Counts of skipped elements by kind, for the one-line summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct SkipCounter {
    counts: HashMap<String, usize>,
    order: Vec<String>,
}

impl SkipCounter {
    /// Counts one more skipped `what`.
    pub fn add(&mut self, what: &str) {
        let n = self.counts.entry(what.to_string()).or_insert(0);
        if *n == 0 {
            self.order.push(what.to_string());
        }
        *n += 1;
    }

    /// `(what, count)` in the order first seen.
    pub fn entries(&self) -> Vec<(String, usize)> {
        self.order
            .iter()
            .map(|w| (w.clone(), self.counts[w]))
            .collect()
    }
}
