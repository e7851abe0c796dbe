//! Where a field of a problem file is written: dotted field paths (`body[1].mass`,
//! `geometry[0].contact.friction`, `body[0].position[2]`) → line and column in the text.
//!
//! serde reports spans for syntax and type errors only. Errors found while building the model
//! (a negative mass, an unknown body name) name a field path instead; this module finds that
//! path in the document parsed by `toml_edit`, which keeps the span of every key, value and
//! table. A field that is absent (a missing `mass`) resolves to the nearest enclosing table
//! that is present, usually its `[[body]]` header.

use toml_edit::{ImDocument, Item, Table, Value};

pub use crate::error::TextLocation;

/// The location of `field` (a path as in [`crate::error::Error::ProblemFile`]) in `text`, or of
/// its nearest enclosing table; `None` if `text` is not TOML or nothing of the path is present.
pub fn locate(text: &str, field: &str) -> Option<TextLocation> {
    let document = ImDocument::parse(text).ok()?;
    let mut node = Node::Table(document.as_table());
    let mut best = None;
    for segment in segments(field) {
        let next = match segment {
            Segment::Key(key) => node.child(key),
            Segment::Index(i) => node.index(i),
        };
        match next {
            Some(n) => {
                node = n;
                best = node.span().or(best);
            }
            None => break,
        }
    }
    best.map(|span| TextLocation::of_offset(text, span.start))
}

/// One step of a field path.
enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

/// Splits `a.b[2].c` into `a`, `b`, `[2]`, `c`; malformed indices end the path.
fn segments(field: &str) -> Vec<Segment<'_>> {
    let mut out = Vec::new();
    for part in field.split('.') {
        let (key, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        if !key.is_empty() {
            out.push(Segment::Key(key));
        }
        while let Some(close) = rest.find(']') {
            match rest[1..close].parse() {
                Ok(i) => out.push(Segment::Index(i)),
                Err(_) => return out,
            }
            rest = &rest[close + 1..];
        }
    }
    out
}

/// A node of the parsed document: the three kinds `toml_edit` hands out while descending.
#[derive(Clone, Copy)]
enum Node<'a> {
    Item(&'a Item),
    Table(&'a Table),
    Value(&'a Value),
}

impl<'a> Node<'a> {
    fn child(self, key: &str) -> Option<Node<'a>> {
        match self {
            Node::Item(item) => item.as_table_like()?.get(key).map(Node::Item),
            Node::Table(table) => table.get(key).map(Node::Item),
            Node::Value(Value::InlineTable(table)) => table.get(key).map(Node::Value),
            Node::Value(_) => None,
        }
    }

    fn index(self, i: usize) -> Option<Node<'a>> {
        match self {
            Node::Item(Item::ArrayOfTables(tables)) => tables.get(i).map(Node::Table),
            Node::Item(Item::Value(Value::Array(values))) | Node::Value(Value::Array(values)) => {
                values.get(i).map(Node::Value)
            }
            _ => None,
        }
    }

    fn span(self) -> Option<std::ops::Range<usize>> {
        match self {
            Node::Item(item) => item.span(),
            Node::Table(table) => table.span(),
            Node::Value(value) => value.span(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "[simulation]\ndt = 0.0\n\n[[body]]\nname = \"a\"\n\n[[body]]\nname = \"b\"\nposition = [0.0, 1.0, nan]\nprescribed = { type = \"sinusoid\", amplitude = -1 }\n";

    fn at(field: &str) -> Option<(usize, usize)> {
        locate(TEXT, field).map(|l| (l.line, l.column))
    }

    #[test]
    fn values_tables_arrays_and_inline_tables_are_found() {
        assert_eq!(at("simulation.dt"), Some((2, 6)));
        assert_eq!(at("body[1].name"), Some((8, 8)));
        assert_eq!(at("body[1].position[2]"), Some((9, 23)));
        assert_eq!(at("body[1].prescribed.amplitude"), Some((10, 47)));
    }

    #[test]
    fn absent_fields_resolve_to_the_enclosing_table() {
        assert_eq!(at("body[0].mass"), Some((4, 1)));
        assert_eq!(at("simulation.duration"), Some((1, 1)));
        assert_eq!(at("solver.max_iterations"), None);
    }

    #[test]
    fn columns_count_characters() {
        assert_eq!(
            TextLocation::of_offset("δt = x", 5),
            TextLocation { line: 1, column: 5 }
        );
    }
}
