//! What the tree walk and the element readers share: the compiler settings, the default
//! classes, the count of skipped elements and the `<option>` flags.

use crate::import::mjcf::defaults::Defaults;
use crate::import::mjcf::mesh::MeshAssets;
use crate::import::mjcf::orientation::Compiler;
use crate::import::mjcf::xml::SkipCounter;

/// The settings the walk reads.
pub(super) struct Context<'a> {
    /// `<compiler>`.
    pub compiler: &'a Compiler,
    /// Default classes.
    pub defaults: &'a Defaults,
    /// Skipped elements.
    pub skipped: &'a mut SkipCounter,
    /// The mesh assets.
    pub meshes: &'a MeshAssets,
    /// `false` when `option/flag` disables contact: no collision geometry.
    pub contact: bool,
    /// `false` when `option/flag` disables limits.
    pub limits: bool,
    /// `false` when `option/flag` disables passive forces (damping, springs).
    pub passive: bool,
}
