//! The contact potential interface.
#![allow(non_snake_case)]

use nalgebra::{Matrix3, Vector3};

use crate::scalar::Scalar;

/// Cost, impulse and Hessian of one contact potential at a contact velocity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PotentialEval<T: Scalar> {
    /// Cost ℓ_i (J = N·m).
    pub cost: T,
    /// Impulse `γ_i = −∂ℓ_i/∂v_c` (N·s), contact frame (t1, t2, n), on body B.
    pub gamma: Vector3<T>,
    /// Hessian `G_i = ∂²ℓ_i/∂v_c²` (N·s²/m), symmetric positive semi-definite.
    pub G: Matrix3<T>,
}

/// A convex contact potential `ℓ_i(v_c)` (ICF eqs. (3)-(4)).
pub trait ContactPotential<T: Scalar> {
    /// Cost, impulse and Hessian at contact velocity `v_c = (v_t1, v_t2, v_n)` (m/s).
    fn eval(&self, v_c: &Vector3<T>) -> PotentialEval<T>;

    /// The normal velocity (m/s) at and above which the potential is constant whatever the
    /// tangential velocity (zero impulse and Hessian: a contact apart at the start of the
    /// step that stays apart), if it has one. The solver leaves such a contact out of its
    /// islands while it stays open (`solver/workspace/islands.rs`).
    fn open_above(&self) -> Option<T> {
        None
    }
}
