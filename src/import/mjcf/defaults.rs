//! Default classes and typed attribute access (MuJoCo XML reference, "default"): the
//! top-level `<default>` is class `main`; a nested `<default class="c">` starts from its
//! parent's values; an element takes an attribute it does not write from its `class`, else
//! from the nearest enclosing body's `childclass`, else from `main`. Values keep the place
//! they were written, so an error in a default points at the default.

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::import::mjcf::xml::{Element, Origin};

/// One attribute value and where it was written.
#[derive(Clone, Debug)]
pub(super) struct Value {
    /// The text of the value.
    pub text: String,
    /// The element it was written on.
    pub origin: Origin,
    /// How errors name that element.
    pub label: String,
}

/// The attribute values of one class: element tag → attribute → value.
pub(super) type Class = HashMap<String, HashMap<String, Value>>;

/// Every default class by name.
#[derive(Clone, Debug, Default)]
pub(super) struct Defaults {
    classes: HashMap<String, Class>,
}

/// Actuator shortcuts whose defaults share transmission and range attributes (MuJoCo keeps one
/// actuator default per class, whichever shortcut wrote it).
const ACTUATOR_TAGS: [&str; 5] = ["general", "motor", "position", "velocity", "intvelocity"];

/// Attributes that every actuator shortcut shares through its class.
const SHARED_ACTUATOR_ATTRS: [&str; 7] = [
    "gear",
    "ctrlrange",
    "ctrllimited",
    "forcerange",
    "forcelimited",
    "dyntype",
    "gaintype",
];

impl Defaults {
    /// The classes of every `<default>` child of `root`.
    ///
    /// # Errors
    /// A nested default without `class`, or a class defined twice.
    pub fn collect(root: &Element) -> Result<Self> {
        let mut defaults = Defaults::default();
        defaults.classes.insert("main".into(), Class::new());
        for d in root.children_named("default") {
            let name = d.attr("class").unwrap_or("main").to_string();
            let parent = defaults.classes.get("main").cloned().unwrap_or_default();
            defaults.add(d, name, parent, true)?;
        }
        Ok(defaults)
    }

    fn add(&mut self, d: &Element, name: String, parent: Class, top: bool) -> Result<()> {
        if !top && self.classes.contains_key(&name) {
            return Err(d.error(Some("class"), "a class name not defined before", name));
        }
        let mut class = parent;
        for child in &d.children {
            if child.tag == "default" {
                continue;
            }
            let entry = class.entry(child.tag.clone()).or_default();
            for (a, v) in &child.attrs {
                entry.insert(
                    a.clone(),
                    Value {
                        text: v.clone(),
                        origin: child.origin.clone(),
                        label: format!("default class \"{name}\" {}", child.tag),
                    },
                );
            }
        }
        self.classes.insert(name.clone(), class.clone());
        for child in d.children_named("default") {
            let child_name = child.attr("class").ok_or_else(|| {
                child.error(Some("class"), "a class name on a nested default", "nothing")
            })?;
            self.add(child, child_name.to_string(), class.clone(), false)?;
        }
        Ok(())
    }

    /// The class `name`, or an error at `element` that names the unknown class.
    pub fn class<'a>(&'a self, name: &str, element: &Element, attr: &str) -> Result<&'a Class> {
        self.classes
            .get(name)
            .ok_or_else(|| element.error(Some(attr), "a defined default class", name))
    }

    /// `element` with its class resolved: its own `class`, else `childclass` (the nearest
    /// enclosing body's), else `main`.
    pub fn resolve<'a>(&'a self, element: &'a Element, childclass: &str) -> Result<Attrs<'a>> {
        let name = element.attr("class").unwrap_or(childclass);
        let class = self.class(name, element, "class")?;
        Ok(Attrs { element, class })
    }
}

/// An element's attributes: written on it, or taken from its class.
#[derive(Clone, Copy, Debug)]
pub(super) struct Attrs<'a> {
    /// The element.
    pub element: &'a Element,
    class: &'a Class,
}

impl<'a> Attrs<'a> {
    /// An element read without defaults (compiler, option, …).
    pub fn plain(element: &'a Element, empty: &'a Class) -> Self {
        Attrs {
            element,
            class: empty,
        }
    }

    /// The value of `name` and the error context for it.
    fn value(&self, name: &str) -> Option<(&'a str, Origin, String)> {
        if let Some(v) = self.element.attr(name) {
            return Some((v, self.element.origin.clone(), self.element.label()));
        }
        let from_class = |tag: &str| {
            self.class
                .get(tag)
                .and_then(|attrs| attrs.get(name))
                .map(|v| (v.text.as_str(), v.origin.clone(), v.label.clone()))
        };
        if let Some(v) = from_class(&self.element.tag) {
            return Some(v);
        }
        if ACTUATOR_TAGS.contains(&self.element.tag.as_str())
            && SHARED_ACTUATOR_ATTRS.contains(&name)
        {
            return ACTUATOR_TAGS.iter().find_map(|t| from_class(t));
        }
        None
    }

    /// Whether `name` is set (on the element or by its class).
    pub fn has(&self, name: &str) -> bool {
        self.value(name).is_some()
    }

    /// The text of `name`.
    pub fn str(&self, name: &str) -> Option<&'a str> {
        self.value(name).map(|(v, _, _)| v)
    }

    /// An error about attribute `name` at the place its value was written.
    pub fn error(
        &self,
        name: &str,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> Error {
        match self.value(name) {
            Some((_, origin, label)) => origin.error(format!("{label} @{name}"), expected, found),
            None => self.element.error(Some(name), expected, found),
        }
    }

    /// The numbers of `name`, however many.
    pub fn floats(&self, name: &str) -> Result<Option<Vec<f64>>> {
        let Some(text) = self.str(name) else {
            return Ok(None);
        };
        text.split_whitespace()
            .map(|t| {
                t.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| self.error(name, "finite numbers separated by spaces", text))
            })
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }

    /// Exactly `N` numbers.
    pub fn array<const N: usize>(&self, name: &str, what: &str) -> Result<Option<[f64; N]>> {
        match self.floats(name)? {
            None => Ok(None),
            Some(v) => <[f64; N]>::try_from(v.as_slice()).map(Some).map_err(|_| {
                self.error(
                    name,
                    format!("{N} numbers ({what})"),
                    self.str(name).unwrap_or_default(),
                )
            }),
        }
    }

    /// One number.
    pub fn f64(&self, name: &str) -> Result<Option<f64>> {
        Ok(self.array::<1>(name, "one value")?.map(|[x]| x))
    }

    /// One number, `default` when unset.
    pub fn f64_or(&self, name: &str, default: f64) -> Result<f64> {
        Ok(self.f64(name)?.unwrap_or(default))
    }

    /// `true` or `false`.
    pub fn bool(&self, name: &str) -> Result<Option<bool>> {
        match self.str(name) {
            None => Ok(None),
            Some("true") => Ok(Some(true)),
            Some("false") => Ok(Some(false)),
            Some(other) => Err(self.error(name, "true or false", other)),
        }
    }

    /// A non-negative integer (bit masks, groups).
    pub fn int(&self, name: &str, default: i64) -> Result<i64> {
        match self.str(name) {
            None => Ok(default),
            Some(t) => t
                .trim()
                .parse::<i64>()
                .map_err(|_| self.error(name, "an integer", t)),
        }
    }

    /// One of `choices`, `default` when unset.
    pub fn keyword(&self, name: &str, choices: &[&'a str], default: &'a str) -> Result<&'a str> {
        match self.str(name) {
            None => Ok(default),
            Some(t) => choices
                .iter()
                .find(|c| **c == t)
                .copied()
                .ok_or_else(|| self.error(name, format!("one of {}", choices.join(", ")), t)),
        }
    }
}
