//! Robot importers: robot description files become a [`crate::scene::SceneDescription`], the
//! plain data every front-end produces, so that a robot joins the same build, step and
//! derivatives as a hand-written scene.
//!
//! Files: `mjcf/` (MuJoCo's MJCF XML format, [`mjcf::load`]).

pub mod mjcf;
