//! A scene to simulate from Rust code: a [`Simulator`], its actuation and the current state,
//! stepped one step at a time or for a duration, with results as typed values.
//!
//! Make one with [`SceneBuilder`] (no file needed), from a [`SceneDescription`] (the plain
//! data every front-end produces: problem files, the builder, robot importers), or from a
//! problem file ([`Scene::from`] a [`crate::problem::Problem`]):
//!
//! ```
//! use stiction::geometry::Shape;
//! use stiction::scene::{BodyDesc, SceneBuilder};
//! # fn main() -> stiction::error::Result<()> {
//! let mut scene = SceneBuilder::new()
//!     .dt(1e-3)
//!     .ground()
//!     .body(BodyDesc::free("ball", 0.5, Shape::Sphere { radius: 0.05 }).at([0.0, 0.0, 0.06]))
//!     .build()?;
//! let report = scene.step()?;                  // one step: solver stats and contacts
//! let recording = scene.run_for(0.1)?;         // 100 more steps, every state and report
//! let ball = scene.body("ball").expect("a body of the scene");
//! assert!((ball.p_WB.z - 0.05).abs() < 1e-3);  // resting on the ground
//! # let _ = (report, recording);
//! # Ok(())
//! # }
//! ```
//!
//! Files: `mod.rs` (the scene), `description.rs` ([`SceneDescription`] and the one function
//! that builds a simulator from it), `error.rs` ([`DescriptionError`]), `builder.rs`
//! ([`SceneBuilder`], [`BodyDesc`]).

mod builder;
pub mod description;
mod error;

pub use builder::{BodyDesc, SceneBuilder};
pub use description::{
    ActuatorDescription, ActuatorKind, BodyDescription, BodyMotion, BuiltScene, CollisionFilter,
    CouplerDescription, DescriptionError, GeometryDescription, JointLimits, JointedBody,
    SceneDescription,
};

use crate::control::Controller;
use crate::error::Result;
use crate::report::{body_names, body_states, BodyState};
use crate::simulate::{run_controlled, Recording};
use crate::step::{Simulator, State, StepReport};

/// A simulator with its actuation and current state.
#[derive(Debug)]
pub struct Scene {
    /// Model, geometries and step settings.
    pub simulator: Simulator,
    /// Control laws of the model's actuators, evaluated at the start of every step.
    pub controller: Controller,
    state: State,
}

impl Scene {
    /// A scene at `state`.
    pub fn new(simulator: Simulator, controller: Controller, state: State) -> Self {
        Scene {
            simulator,
            controller,
            state,
        }
    }

    /// The current state: time (s), `q` (nq) and `v` (nv).
    pub fn state(&self) -> &State {
        &self.state
    }

    /// Replaces the current state (for example to restart from a saved one).
    pub fn set_state(&mut self, state: State) {
        self.state = state;
    }

    /// Advances one step of δt with the controller's efforts; returns what the step did
    /// (solver statistics, and force, slip and penetration of every contact).
    ///
    /// # Errors
    /// The step's error ([`crate::error::Error::NotConverged`] and others) as
    /// [`crate::error::Error::Step`], the step's index taken on the time grid from t = 0
    /// (`round(t / δt)`); the state is then unchanged.
    pub fn step(&mut self) -> Result<StepReport> {
        let u = self
            .controller
            .effort(&self.state, self.simulator.model.nu());
        let t = self.state.t;
        let (next, report) = self
            .simulator
            .step(&self.state, &u)
            .map_err(|e| e.at_step((t / self.simulator.settings.dt).round() as usize, t))?;
        self.state = next;
        Ok(report)
    }

    /// Advances `duration` (s, rounded to whole steps) and returns every state (the current
    /// one first) and every step report.
    ///
    /// # Errors
    /// [`crate::error::Error::TooLarge`] when the recording would not fit in
    /// [`crate::budget::MEMORY_CAP`]; the first step error as [`crate::error::Error::Step`]
    /// (its index in this run and its time); the state is then unchanged.
    pub fn run_for(&mut self, duration: f64) -> Result<Recording> {
        let recording = run_controlled(
            &mut self.simulator,
            &self.controller,
            &self.state,
            duration,
            |_, _| {},
        )?;
        if let Some(last) = recording.states.last() {
            self.state = last.clone();
        }
        Ok(recording)
    }

    /// World-frame pose and velocity of the body `name` (tree or prescribed) now; `None` if the
    /// scene has no such body.
    pub fn body(&self, name: &str) -> Option<BodyState> {
        let model = &self.simulator.model;
        let index = body_names(model).iter().position(|n| *n == name)?;
        let now = Recording {
            states: vec![self.state.clone()],
            reports: Vec::new(),
        };
        body_states(&now, model)
            .first()
            .and_then(|row| row.get(index).copied())
    }
}
