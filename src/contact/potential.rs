//! The contact potential interface and the per-approximation pools.
#![allow(non_snake_case)]

use nalgebra::{Matrix3, Vector3};

use crate::contact::{Lagged, Sap, Similar};
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
}

/// The potentials of all contacts of one step, one homogeneous pool per approximation
/// (static dispatch; the runtime choice is the enum variant).
#[derive(Clone, Debug)]
pub enum ContactPool<T: Scalar> {
    /// Lagged or regularized Lagged contacts.
    Lagged(Vec<Lagged<T>>),
    /// Similar contacts.
    Similar(Vec<Similar<T>>),
    /// SAP contacts.
    Sap(Vec<Sap<T>>),
}

impl<T: Scalar> ContactPool<T> {
    /// Number of contacts `nc`.
    pub fn len(&self) -> usize {
        match self {
            ContactPool::Lagged(p) => p.len(),
            ContactPool::Similar(p) => p.len(),
            ContactPool::Sap(p) => p.len(),
        }
    }

    /// True when there are no contacts.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Evaluates contact `i` at `v_c`. Always inlined: the line search, called once per
    /// contact, reads the result straight from registers, not through a returned struct.
    #[inline(always)]
    pub fn eval(&self, i: usize, v_c: &Vector3<T>) -> PotentialEval<T> {
        match self {
            ContactPool::Lagged(p) => p[i].eval(v_c),
            ContactPool::Similar(p) => p[i].eval(v_c),
            ContactPool::Sap(p) => p[i].eval(v_c),
        }
    }

    /// The effective stiction tolerance of contact `i` (m/s), ICF Sec. VIII: the soft-norm ε
    /// for Lagged and Similar, `R_t μ γ_n` at `v_c` for SAP (eq. (42)).
    #[inline(always)]
    pub fn stiction_tolerance(&self, i: usize, v_c: &Vector3<T>) -> T {
        match self {
            ContactPool::Lagged(p) => p[i].eps,
            ContactPool::Similar(p) => p[i].eps,
            ContactPool::Sap(p) => p[i].stiction_tolerance(v_c),
        }
    }
}
