//! stiction: differentiable simulation of multibody systems with frictional contact.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod contact;
pub mod error;
pub mod math;
pub mod multibody;
pub mod scalar;
pub mod solver { #[derive(Debug, Clone, Default)] pub struct SolverStats; impl std::fmt::Display for SolverStats { fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result { write!(f, "") } } }
