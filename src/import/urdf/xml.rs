//! The URDF's XML as `roxmltree` parses it: the line of every element an error names, and
//! the checks `urdf-rs` makes without saying where (numbers that do not parse, missing
//! attributes and elements, unknown joint types).

use std::path::Path;

use roxmltree::{Document, Node};

use crate::error::{Error, Result};
use crate::import::model_error;

/// The file's name and parsed XML, for errors with lines.
pub(super) struct Source<'a, 'input> {
    /// The URDF file.
    pub(super) path: &'a Path,
    /// Its parsed text.
    pub(super) doc: &'a Document<'input>,
}

impl<'a, 'input> Source<'a, 'input> {
    /// An error at `node`: its line and `<tag name="…">`.
    pub(super) fn error(&self, node: Node, message: impl Into<String>) -> Error {
        let line = self.doc.text_pos_at(node.range().start).row as usize;
        let element = match node.attribute("name") {
            Some(name) => format!("<{} name=\"{name}\">", node.tag_name().name()),
            None => format!("<{}>", node.tag_name().name()),
        };
        model_error(self.path, Some(line), &element, message)
    }

    /// `FILE:LINE` of `node`.
    pub(super) fn location(&self, node: Node) -> String {
        let line = self.doc.text_pos_at(node.range().start).row;
        format!("{}:{line}", self.path.display())
    }

    /// The top-level `<tag name="name">` element.
    pub(super) fn named(&self, tag: &str, name: &str) -> Node<'a, 'input> {
        self.doc
            .root_element()
            .children()
            .find(|n| n.has_tag_name(tag) && n.attribute("name") == Some(name))
            .unwrap_or(self.doc.root_element())
    }

    /// The first child `<tag>` of `node`.
    pub(super) fn child(node: Node<'a, 'input>, tag: &str) -> Option<Node<'a, 'input>> {
        node.children().find(|n| n.has_tag_name(tag))
    }

    /// Every numeric attribute parses (with the right count), every link and joint has a
    /// name, every joint a known type, a parent and a child: the checks `urdf-rs` makes
    /// without saying where.
    pub(super) fn check_attributes(&self, root: Node) -> Result<()> {
        for node in root.descendants().filter(|n| n.is_element()) {
            let skipped = node
                .ancestors()
                .any(|a| a.has_tag_name("gazebo") || a.has_tag_name("transmission"));
            if skipped {
                continue;
            }
            let tag = node.tag_name().name();
            let numbers: &[(&str, usize)] = match tag {
                "origin" => &[("xyz", 3), ("rpy", 3)],
                "axis" => &[("xyz", 3)],
                "mass" => &[("value", 1)],
                "inertia" => &[
                    ("ixx", 1),
                    ("ixy", 1),
                    ("ixz", 1),
                    ("iyy", 1),
                    ("iyz", 1),
                    ("izz", 1),
                ],
                "box" => &[("size", 3)],
                "cylinder" | "capsule" => &[("radius", 1), ("length", 1)],
                "sphere" => &[("radius", 1)],
                "mesh" => &[("scale", 3)],
                "limit" => &[("lower", 1), ("upper", 1), ("effort", 1), ("velocity", 1)],
                "dynamics" => &[("damping", 1), ("friction", 1)],
                "mimic" => &[("multiplier", 1), ("offset", 1)],
                _ => &[],
            };
            for &(attribute, count) in numbers {
                let Some(value) = node.attribute(attribute) else {
                    continue;
                };
                let parsed: Vec<Option<f64>> = value
                    .split_whitespace()
                    .map(|x| x.parse::<f64>().ok().filter(|x| x.is_finite()))
                    .collect();
                if parsed.len() != count || parsed.iter().any(Option::is_none) {
                    let expected = if count == 1 {
                        "a finite number".to_string()
                    } else {
                        format!("{count} finite numbers separated by spaces")
                    };
                    return Err(self.error(
                        node,
                        format!("attribute `{attribute}`: expected {expected}, found \"{value}\""),
                    ));
                }
            }
            let required: &[&str] = match tag {
                "mass" => &["value"],
                "inertia" => &["ixx", "ixy", "ixz", "iyy", "iyz", "izz"],
                "box" => &["size"],
                "cylinder" | "capsule" => &["radius", "length"],
                "sphere" => &["radius"],
                "mesh" => &["filename"],
                "limit" => &["velocity"],
                "mimic" => &["joint"],
                _ => &[],
            };
            if let Some(missing) = required.iter().find(|a| node.attribute(**a).is_none()) {
                return Err(self.error(node, format!("expected attribute `{missing}`")));
            }
        }
        for node in root.children().filter(|n| n.is_element()) {
            match node.tag_name().name() {
                "link" | "joint" if node.attribute("name").is_none_or(str::is_empty) => {
                    return Err(self.error(node, "expected a non-empty `name` attribute"));
                }
                "link" => {
                    if let Some(inertial) = Source::child(node, "inertial") {
                        for part in ["mass", "inertia"] {
                            if Source::child(inertial, part).is_none() {
                                return Err(
                                    self.error(inertial, format!("expected a <{part}> element"))
                                );
                            }
                        }
                    }
                }
                "joint" => {
                    const TYPES: [&str; 7] = [
                        "revolute",
                        "continuous",
                        "prismatic",
                        "fixed",
                        "floating",
                        "planar",
                        "spherical",
                    ];
                    let kind = node.attribute("type").unwrap_or("");
                    if !TYPES.contains(&kind) {
                        return Err(self.error(
                            node,
                            format!(
                                "attribute `type`: expected one of revolute, continuous, \
                                 prismatic, fixed, floating, planar; found \"{kind}\""
                            ),
                        ));
                    }
                    for part in ["parent", "child"] {
                        let link = Source::child(node, part).and_then(|n| n.attribute("link"));
                        if link.is_none_or(str::is_empty) {
                            return Err(
                                self.error(node, format!("expected a <{part} link=\"…\"> element"))
                            );
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}
