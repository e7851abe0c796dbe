//! What an assembled step keeps (DESIGN steps 1-2): the convex problem and its contacts, each
//! contact kept as what it does not share with the other contacts of its frame (a
//! pressure-field pair's polygons share one frame, bodies and parameters). The forward step
//! reads its reports from this and keeps it for the next step to write over ([`Assembled`]);
//! [`StepProblem`] is the public form, each contact a full [`ContactPoint`].
#![allow(non_snake_case)]

use nalgebra::{Matrix3, Vector3};

use crate::contact::{ContactParams, NormalLawKind};
use crate::multibody::model::BodyId;
use crate::scalar::Scalar;
use crate::solver::ConvexProblem;
use crate::step::point::{ContactFeature, ContactPoint};

/// The assembled convex problem of a step with its contacts, before solving.
#[derive(Clone, Debug)]
pub struct StepProblem<T: Scalar> {
    /// The convex problem.
    pub problem: ConvexProblem<T>,
    /// The contacts, in the order of the problem's pool.
    pub contacts: Vec<ContactPoint<T>>,
}

impl<T: Scalar> Default for StepProblem<T> {
    /// No problem: the storage [`crate::step::Simulator::assemble_into`] writes over.
    fn default() -> Self {
        StepProblem {
            problem: ConvexProblem::default(),
            contacts: Vec::new(),
        }
    }
}

/// A step's convex problem with its contacts, each kept as what it does not share with the
/// other contacts of its frame: a pressure-field pair's polygons, a contact each, share one
/// frame, bodies and parameters, which are kept once. The forward step reads its results from
/// this, and the simulator keeps it for the next step to write over (its storage reused);
/// [`Assembled::take_step_problem`] makes the full [`ContactPoint`]s.
#[derive(Debug)]
pub(super) struct Assembled<T: Scalar> {
    pub(super) problem: ConvexProblem<T>,
    /// The contacts, in the order of the problem's pool.
    pub(super) contacts: Vec<AssembledContact<T>>,
    /// The frames the contacts refer to.
    pub(super) frames: Vec<AssembledFrame<T>>,
}

impl<T: Scalar> Default for Assembled<T> {
    /// Nothing assembled: the storage a step's assembly fills.
    fn default() -> Self {
        Assembled {
            problem: ConvexProblem::default(),
            contacts: Vec::new(),
            frames: Vec::new(),
        }
    }
}

/// One contact of an [`Assembled`] step.
#[derive(Debug)]
pub(super) struct AssembledContact<T: Scalar> {
    /// Its frame in [`Assembled::frames`].
    pub(super) frame: usize,
    /// Contact point, world frame (m), see [`contact_point`](crate::step::contact_point).
    pub(super) p_WC: Vector3<T>,
    /// Signed distance at the start of the step φ0 (m).
    pub(super) phi0: T,
    /// Normal velocity at the start of the step `v_n0` (m/s).
    pub(super) v_n0: T,
    /// Its stiffness (N/m): the pair's, or a polygon's `k = A·g`.
    pub(super) stiffness: T,
    /// The active feature pair, or the polygon.
    pub(super) feature: ContactFeature,
}

/// What the contacts of one frame of an [`Assembled`] step share.
#[derive(Clone, Debug)]
pub(super) struct AssembledFrame<T: Scalar> {
    /// Geometries A and B.
    pub(super) geometries: (usize, usize),
    /// Their bodies.
    pub(super) bodies: (BodyId, BodyId),
    /// The contact frame ([`contact_frame`](crate::step::contact_frame)).
    pub(super) R_WC: Matrix3<T>,
    /// The pair's contact parameters.
    pub(super) params: ContactParams<T>,
}

impl<T: Scalar> Assembled<T> {
    /// The parameters of `contact`: its frame's, with its own stiffness; a pressure-field
    /// polygon's law is Hunt & Crossley in `f0 = A·p0`, `k = A·g` whatever the pair's.
    pub(super) fn params(
        frames: &[AssembledFrame<T>],
        contact: &AssembledContact<T>,
    ) -> ContactParams<T> {
        let frame = &frames[contact.frame].params;
        ContactParams {
            stiffness: contact.stiffness,
            law: match contact.feature {
                ContactFeature::Polygon(_) => NormalLawKind::HuntCrossley,
                ContactFeature::Point(_) => frame.law,
            },
            ..*frame
        }
    }

    /// The step problem, each contact a [`ContactPoint`] with a copy of its Jacobian: the
    /// convex problem taken out, the contacts' and frames' lists kept for the next assembly
    /// to write over.
    pub(super) fn take_step_problem(&mut self) -> StepProblem<T> {
        let mut out = StepProblem::default();
        self.step_problem_into(&mut out);
        out
    }

    /// [`Assembled::take_step_problem`] into `out`, whose storage is reused: the convex
    /// problem swapped with `out`'s (the next assembly writes over that one), the contacts
    /// written over `out`'s (their Jacobians' and features' storage kept).
    pub(super) fn step_problem_into(&mut self, out: &mut StepProblem<T>) {
        std::mem::swap(&mut self.problem, &mut out.problem);
        let (frames, problem) = (&self.frames, &out.problem);
        out.contacts.truncate(self.contacts.len());
        for (i, c) in self.contacts.iter().enumerate() {
            let frame = &frames[c.frame];
            let params = Self::params(frames, c);
            match out.contacts.get_mut(i) {
                Some(point) => {
                    point.geometry_a = frame.geometries.0;
                    point.geometry_b = frame.geometries.1;
                    point.body_a = frame.bodies.0;
                    point.body_b = frame.bodies.1;
                    point.p_WC = c.p_WC;
                    point.R_WC = frame.R_WC;
                    point.phi0 = c.phi0;
                    problem.J.dense_into(i, &mut point.J);
                    point.b = problem.b[i];
                    point.v_n0 = c.v_n0;
                    point.params = params;
                    point.feature.clone_from(&c.feature);
                }
                None => out.contacts.push(ContactPoint {
                    geometry_a: frame.geometries.0,
                    geometry_b: frame.geometries.1,
                    body_a: frame.bodies.0,
                    body_b: frame.bodies.1,
                    p_WC: c.p_WC,
                    R_WC: frame.R_WC,
                    phi0: c.phi0,
                    J: problem.J.dense(i),
                    b: problem.b[i],
                    v_n0: c.v_n0,
                    params,
                    feature: c.feature.clone(),
                }),
            }
        }
    }
}
