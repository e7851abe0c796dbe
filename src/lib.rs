//! stiction: differentiable simulation of multibody systems with frictional contact.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod contact;
pub mod error;
pub mod geometry;
pub mod math;
pub mod multibody;
pub mod problem;
pub mod scalar;
pub mod simulate;
pub mod solver;
pub mod step;
