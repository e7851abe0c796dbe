//! The one contact factory: a contact's parameters and state → its potential, for the forward
//! step ([`ContactPool::build`]) and the derivative path ([`potential`]) alike.
//!
//! [`potential`] discretizes the pair's normal law ([`Law::new`]) and hands it to the
//! approximation's potential (ICF Sec. VI; SAP). The pool keeps the potentials of one step in
//! one homogeneous vector (static dispatch in the solver's loops); a step whose contacts all
//! use Hunt & Crossley (every shipped scene) gets the variants that store that law directly.
//!
//! Adding a model touches at most three files: its own (the potential and its unit tests,
//! through `contact/testing.rs`), this one (a [`Potential`] variant, its arm in [`potential`],
//! its pool variants and its [`Approximation`] name), and a scene test in `tests/`.

mod lagged;
mod sap;
mod similar;

use std::fmt;
use std::str::FromStr;

use nalgebra::Vector3;

pub use lagged::Lagged;
pub use sap::{Sap, NEAR_RIGID_BETA};
pub use similar::Similar;

use crate::contact::law::Law;
use crate::contact::params::ContactParams;
use crate::contact::potential::{ContactPotential, PotentialEval};
use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// Which convex approximation of contact the step uses (ICF Table I).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Approximation {
    /// Lagged normal force in friction (ICF Sec. VI-B): consistent, no gliding. Default.
    #[default]
    Lagged,
    /// Lagged with the impulse-dependent stiction tolerance of ICF eq. (44).
    RegularizedLagged,
    /// Similar model (ICF Sec. VI-C): strongly coupled, glides at `μ δt ‖v_t‖`.
    Similar,
    /// SAP (Castro et al. 2022): linear dissipation `τ_d`, glides at `μ (δt + τ_d) ‖v_t‖`.
    Sap,
}

impl Approximation {
    /// All approximations, in documentation order.
    pub const ALL: [Approximation; 4] = [
        Approximation::Lagged,
        Approximation::RegularizedLagged,
        Approximation::Similar,
        Approximation::Sap,
    ];

    /// The command-line / problem-file name (`lagged`, `regularized-lagged`, `similar`, `sap`).
    pub fn name(&self) -> &'static str {
        match self {
            Approximation::Lagged => "lagged",
            Approximation::RegularizedLagged => "regularized-lagged",
            Approximation::Similar => "similar",
            Approximation::Sap => "sap",
        }
    }
}

impl fmt::Display for Approximation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Approximation {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Approximation::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| {
                Error::invalid(
                    "approximation",
                    s,
                    "expected one of lagged, regularized-lagged, similar, sap",
                )
            })
    }
}

/// What a contact's potential needs besides its pair's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactState<T: Scalar> {
    /// Previous penetration `x0 = −φ0` (m).
    pub x0: T,
    /// Normal velocity at the start of the step `v_n0` (m/s), for the Lagged model.
    pub v_n0: T,
    /// Time step δt (s).
    pub dt: T,
    /// Delassus estimate `w` (1/kg), for SAP and regularized Lagged (unused otherwise).
    pub w: T,
}

/// One contact's potential, as [`potential`] makes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Potential<T: Scalar> {
    /// Lagged or regularized Lagged.
    Lagged(Lagged<T, Law<T>>),
    /// Similar.
    Similar(Similar<T, Law<T>>),
    /// SAP (its compliance linearized from the law at construction).
    Sap(Sap<T>),
}

/// The potential of a contact with pair parameters `params` in `state` under `approximation`.
#[inline(always)]
pub fn potential<T: Scalar>(
    approximation: Approximation,
    params: &ContactParams<T>,
    state: &ContactState<T>,
) -> Potential<T> {
    let law = Law::new(params, state.x0, state.dt);
    match approximation {
        Approximation::Lagged => Potential::Lagged(Lagged::new(law, params, state.v_n0, state.dt)),
        Approximation::RegularizedLagged => Potential::Lagged(Lagged::regularized(
            law, params, state.v_n0, state.dt, state.w,
        )),
        Approximation::Similar => Potential::Similar(Similar::new(law, params)),
        Approximation::Sap => Potential::Sap(Sap::new(&law, params, state.dt, state.w)),
    }
}

impl<T: Scalar> Potential<T> {
    /// The effective stiction tolerance at `v_c` (m/s), as [`ContactPool::stiction_tolerance`].
    pub fn stiction_tolerance(&self, v_c: &Vector3<T>) -> T {
        match self {
            Potential::Lagged(p) => p.eps,
            Potential::Similar(p) => p.eps,
            Potential::Sap(p) => p.stiction_tolerance(v_c),
        }
    }
}

impl<T: Scalar> ContactPotential<T> for Potential<T> {
    #[inline(always)]
    fn eval(&self, v_c: &Vector3<T>) -> PotentialEval<T> {
        match self {
            Potential::Lagged(p) => p.eval(v_c),
            Potential::Similar(p) => p.eval(v_c),
            Potential::Sap(p) => p.eval(v_c),
        }
    }

    fn open_above(&self) -> Option<T> {
        match self {
            Potential::Lagged(p) => p.open_above(),
            Potential::Similar(p) => p.open_above(),
            Potential::Sap(p) => p.open_above(),
        }
    }
}

/// The potentials of all contacts of one step, in one homogeneous vector per approximation
/// with the Hunt & Crossley law (static dispatch; the runtime choice is the enum variant), or
/// as [`Potential`]s when a contact uses another law.
#[derive(Clone, Debug)]
pub enum ContactPool<T: Scalar> {
    /// Lagged or regularized Lagged contacts, all Hunt & Crossley.
    Lagged(Vec<Lagged<T>>),
    /// Similar contacts, all Hunt & Crossley.
    Similar(Vec<Similar<T>>),
    /// SAP contacts.
    Sap(Vec<Sap<T>>),
    /// Contacts with any laws.
    Any(Vec<Potential<T>>),
}

/// Calls `$body` with `$p` bound to the pool's vector, whatever its potential type.
macro_rules! each_pool {
    ($pool:expr, $p:ident => $body:expr) => {
        match $pool {
            ContactPool::Lagged($p) => $body,
            ContactPool::Similar($p) => $body,
            ContactPool::Sap($p) => $body,
            ContactPool::Any($p) => $body,
        }
    };
}

/// `out` ← `pool[indices]`, in order.
fn gather<P: Copy>(pool: &[P], indices: &[usize], out: &mut Vec<P>) {
    out.clear();
    out.extend(indices.iter().map(|&i| pool[i]));
}

/// A computation over a pool's potentials with their concrete type: what the solver runs in
/// its loops ([`ContactPool::visit`]).
pub trait PoolVisitor<T: Scalar> {
    /// What the computation returns.
    type Output;
    /// Runs on the potentials `p`.
    fn visit<P: ContactPotential<T>>(self, p: &[P]) -> Self::Output;
}

impl<T: Scalar> ContactPool<T> {
    /// The pool of `approximation` for the contacts `contacts` yields (their parameters and
    /// states), each made by [`potential`].
    pub fn build(
        approximation: Approximation,
        contacts: impl ExactSizeIterator<Item = (ContactParams<T>, ContactState<T>)>,
    ) -> Self {
        let mut pool = ContactPool::Any(Vec::new());
        pool.build_into(approximation, contacts);
        pool
    }

    /// [`ContactPool::build`] into this pool, reusing its vector when it is of the kind
    /// `approximation` makes (no allocation then, once it has held as many contacts).
    pub fn build_into(
        &mut self,
        approximation: Approximation,
        contacts: impl ExactSizeIterator<Item = (ContactParams<T>, ContactState<T>)>,
    ) {
        let n = contacts.len();
        match (approximation, &mut *self) {
            (Approximation::Lagged | Approximation::RegularizedLagged, ContactPool::Lagged(v)) => {
                v.clear()
            }
            (Approximation::Similar, ContactPool::Similar(v)) => v.clear(),
            (Approximation::Sap, ContactPool::Sap(v)) => v.clear(),
            (Approximation::Lagged | Approximation::RegularizedLagged, _) => {
                *self = ContactPool::Lagged(Vec::with_capacity(n))
            }
            (Approximation::Similar, _) => *self = ContactPool::Similar(Vec::with_capacity(n)),
            (Approximation::Sap, _) => *self = ContactPool::Sap(Vec::with_capacity(n)),
        }
        for (params, state) in contacts {
            self.push(potential(approximation, &params, &state));
        }
    }

    /// Appends `p`: to the pool's own vector when `p` is of its kind with the Hunt & Crossley
    /// law, else to the pool as [`ContactPool::Any`], which it becomes then.
    fn push(&mut self, p: Potential<T>) {
        match (&mut *self, p) {
            (ContactPool::Lagged(v), Potential::Lagged(c)) => {
                if let Law::HuntCrossley(law) = c.normal {
                    return v.push(c.with_law(law));
                }
            }
            (ContactPool::Similar(v), Potential::Similar(c)) => {
                if let Law::HuntCrossley(law) = c.normal {
                    return v.push(c.with_law(law));
                }
            }
            (ContactPool::Sap(v), Potential::Sap(c)) => return v.push(c),
            (ContactPool::Any(v), p) => return v.push(p),
            _ => {}
        }
        let mut any = self.potentials();
        any.push(p);
        *self = ContactPool::Any(any);
    }

    /// The pool's contacts as [`Potential`]s.
    fn potentials(&self) -> Vec<Potential<T>> {
        let hunt_crossley = Law::HuntCrossley;
        match self {
            ContactPool::Lagged(v) => v
                .iter()
                .map(|c| Potential::Lagged(c.with_law(hunt_crossley(c.normal))))
                .collect(),
            ContactPool::Similar(v) => v
                .iter()
                .map(|c| Potential::Similar(c.with_law(hunt_crossley(c.normal))))
                .collect(),
            ContactPool::Sap(v) => v.iter().copied().map(Potential::Sap).collect(),
            ContactPool::Any(v) => v.clone(),
        }
    }

    /// Writes this pool's contacts `indices`, in that order, into `out` as a pool of this
    /// pool's kind, reusing `out`'s vector when it is of the same kind.
    pub fn gather_into(&self, indices: &[usize], out: &mut ContactPool<T>) {
        match (self, &mut *out) {
            (ContactPool::Lagged(p), ContactPool::Lagged(o)) => gather(p, indices, o),
            (ContactPool::Similar(p), ContactPool::Similar(o)) => gather(p, indices, o),
            (ContactPool::Sap(p), ContactPool::Sap(o)) => gather(p, indices, o),
            (ContactPool::Any(p), ContactPool::Any(o)) => gather(p, indices, o),
            (pool, out) => {
                *out = match pool {
                    ContactPool::Lagged(_) => ContactPool::Lagged(Vec::new()),
                    ContactPool::Similar(_) => ContactPool::Similar(Vec::new()),
                    ContactPool::Sap(_) => ContactPool::Sap(Vec::new()),
                    ContactPool::Any(_) => ContactPool::Any(Vec::new()),
                };
                pool.gather_into(indices, out);
            }
        }
    }

    /// Runs `visitor` on the potentials with their concrete type.
    #[inline(always)]
    pub fn visit<V: PoolVisitor<T>>(&self, visitor: V) -> V::Output {
        each_pool!(self, p => visitor.visit(p))
    }

    /// Number of contacts `nc`.
    pub fn len(&self) -> usize {
        each_pool!(self, p => p.len())
    }

    /// True when there are no contacts.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Evaluates contact `i` at `v_c`. Always inlined: the line search, called once per
    /// contact, reads the result straight from registers, not through a returned struct.
    #[inline(always)]
    pub fn eval(&self, i: usize, v_c: &Vector3<T>) -> PotentialEval<T> {
        each_pool!(self, p => p[i].eval(v_c))
    }

    /// Contact `i`'s [`ContactPotential::open_above`].
    #[inline(always)]
    pub fn open_above(&self, i: usize) -> Option<T> {
        each_pool!(self, p => p[i].open_above())
    }

    /// The effective stiction tolerance of contact `i` (m/s), ICF Sec. VIII: the soft-norm ε
    /// for Lagged and Similar, `R_t μ γ_n` at `v_c` for SAP (eq. (42)).
    #[inline(always)]
    pub fn stiction_tolerance(&self, i: usize, v_c: &Vector3<T>) -> T {
        match self {
            ContactPool::Lagged(p) => p[i].eps,
            ContactPool::Similar(p) => p[i].eps,
            ContactPool::Sap(p) => p[i].stiction_tolerance(v_c),
            ContactPool::Any(p) => p[i].stiction_tolerance(v_c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for a in Approximation::ALL {
            assert_eq!(a.name().parse::<Approximation>().unwrap(), a);
        }
        assert!("anitescu".parse::<Approximation>().is_err());
    }
    use crate::contact::NormalLawKind;

    fn state(x0: f64) -> ContactState<f64> {
        ContactState {
            x0,
            v_n0: -0.2,
            dt: 1e-3,
            w: 2.0,
        }
    }

    #[test]
    fn pools_of_hunt_crossley_contacts_store_the_law_directly() {
        let p = ContactParams::<f64>::default();
        for a in Approximation::ALL {
            let pool = ContactPool::build(a, [(p, state(1e-4)), (p, state(-1e-3))].into_iter());
            assert_eq!(pool.len(), 2);
            assert!(matches!(
                pool,
                ContactPool::Lagged(_) | ContactPool::Similar(_) | ContactPool::Sap(_)
            ));
            for (i, x0) in [1e-4, -1e-3].into_iter().enumerate() {
                let v = Vector3::new(0.01, -0.02, -0.05);
                assert_eq!(pool.eval(i, &v), potential(a, &p, &state(x0)).eval(&v));
            }
        }
    }

    #[test]
    fn a_contact_with_another_law_moves_the_pool_to_any_keeping_every_contact() {
        let hc = ContactParams::<f64>::default();
        let hertz = ContactParams {
            law: NormalLawKind::Hertz,
            stiffness: 1e9,
            hertz_radius: 0.05,
            ..hc
        };
        let contacts = [(hc, state(1e-4)), (hertz, state(2e-5)), (hc, state(3e-5))];
        for a in [Approximation::Lagged, Approximation::Similar] {
            let pool = ContactPool::build(a, contacts.into_iter());
            assert!(matches!(pool, ContactPool::Any(_)));
            let v = Vector3::new(0.0, 0.01, -0.01);
            for (i, (p, s)) in contacts.iter().enumerate() {
                assert_eq!(pool.eval(i, &v), potential(a, p, s).eval(&v));
            }
        }
    }
}
