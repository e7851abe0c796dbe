//! The assembly of a step's convex problem (ICF eqs. (1)-(3); DESIGN steps 1-2), generic in
//! the scalar so that one code serves the f64 step and the dual derivative path:
//!
//! 1. free motion `A (v* − v0) = δt k(q0, v0, u)`, `A = M(q0) + δt D`;
//! 2. from the witnesses of the geometric query at `q0` ([`ContactWitness`]), each contact's
//!    frame C, point, previous penetration `x0 = −φ0`, Jacobian `J_i` (written by
//!    [`crate::step::jacobian`]) and bias `b_i` (a prescribed body's velocity);
//! 3. the potentials of the chosen approximation ([`crate::step::pool`]);
//! 4. the rows of the joint limits, couplers, servos and joint friction
//!    ([`crate::step::constraints`]).
//!
//! Consecutive contacts of one pair with one normal (a pressure-field pair's polygons) share
//! one frame and one set of body Jacobians ([`SharedFrame`]).
#![allow(non_snake_case)]

use nalgebra::{DVector, Matrix3, Vector3};

use crate::collision::{FoundPolygon, GeometricContact, Geometry, PolygonContact};
use crate::contact::{Approximation, ContactParams, NormalLawKind};
use crate::error::Result;
use crate::hydroelastic::ContactPolygon;
use crate::math::Pose;
use crate::multibody::kinematics::MultibodyData;
use crate::multibody::model::{BodyId, CliqueStructure, MultibodyModel};
use crate::multibody::FreeMotion;
use crate::scalar::{is_f64, lit, Scalar};
use crate::solver::ContactJacobians;
use crate::step::assembled::{Assembled, AssembledContact, AssembledFrame, StepProblem};
use crate::step::constraints::constraint_rows_with;
use crate::step::jacobian::{contact_point, FrameJacobian};
use crate::step::point::{contact_frame, ContactFeature};
use crate::step::pool::make_pool;
use crate::step::Speculative;

/// Witness data of one contact: which geometries, the signed distance, normal and witness
/// points at the start of the step, and the active feature pair.
#[derive(Clone, Debug)]
pub struct ContactWitness<T: Scalar> {
    /// Geometry index of A.
    pub geometry_a: usize,
    /// Geometry index of B.
    pub geometry_b: usize,
    /// Signed distance φ0 (m).
    pub phi: T,
    /// Unit normal from A to B, world.
    pub nhat_W: Vector3<T>,
    /// Witness point on A, world (m).
    pub p_WPa: Vector3<T>,
    /// Witness point on B, world (m).
    pub p_WPb: Vector3<T>,
    /// The stiffness of this contact (N/m) when it is not the pair's: `k = A·g` of a
    /// pressure-field polygon.
    pub stiffness: Option<T>,
    /// The active feature pair, or the polygon.
    pub feature: ContactFeature,
}

impl From<&GeometricContact> for ContactWitness<f64> {
    fn from(c: &GeometricContact) -> Self {
        ContactWitness {
            geometry_a: c.geometry_a,
            geometry_b: c.geometry_b,
            phi: c.phi,
            nhat_W: c.nhat_W,
            p_WPa: c.p_WPa,
            p_WPb: c.p_WPb,
            stiffness: None,
            feature: ContactFeature::Point(Box::new(c.feature)),
        }
    }
}

impl ContactWitness<f64> {
    /// Made again from `c`, as [`ContactWitness::from`] makes it, keeping the box of its
    /// feature when it holds a point contact's: a step's witnesses are written over the last
    /// step's without allocating.
    pub fn assign(&mut self, c: &GeometricContact) {
        self.geometry_a = c.geometry_a;
        self.geometry_b = c.geometry_b;
        self.phi = c.phi;
        self.nhat_W = c.nhat_W;
        self.p_WPa = c.p_WPa;
        self.p_WPb = c.p_WPb;
        self.stiffness = None;
        match &mut self.feature {
            ContactFeature::Point(feature) => **feature = c.feature,
            other => *other = ContactFeature::Point(Box::new(c.feature)),
        }
    }
}

impl From<FoundPolygon> for ContactWitness<f64> {
    fn from(f: FoundPolygon) -> Self {
        let found = PolygonContact::from(&f.polygon);
        ContactWitness::polygon(f.geometry_a, f.geometry_b, &f.polygon, found)
    }
}

impl<T: Scalar> ContactWitness<T> {
    /// The contact point of a pressure-field polygon (Masterjohn et al. Sec. IV): at the
    /// centroid, along the normal, with stiffness `k = A·g` and previous penetration
    /// `x0 = f0/k = p0/g` (so `φ0 = −p0/g`), where `f0 = A·p0`.
    pub fn polygon(
        geometry_a: usize,
        geometry_b: usize,
        polygon: &ContactPolygon<T>,
        found: PolygonContact,
    ) -> Self {
        ContactWitness {
            geometry_a,
            geometry_b,
            phi: -polygon.pressure / polygon.gradient,
            nhat_W: polygon.nhat,
            p_WPa: polygon.centroid,
            p_WPb: polygon.centroid,
            stiffness: Some(polygon.area * polygon.gradient),
            feature: ContactFeature::Polygon(found),
        }
    }
}

/// Contact parameters of a scene: the default for pairs without their own, and each
/// geometry's own parameters.
#[derive(Clone, Debug)]
pub struct PairParameters<T: Scalar> {
    /// Parameters of pairs whose geometries have none.
    pub default: ContactParams<T>,
    /// Each geometry's own parameters, if any.
    pub geometry: Vec<Option<ContactParams<T>>>,
}

impl<T: Scalar> PairParameters<T> {
    /// The parameters of the pair of geometries `a`, `b`: combined when both have their own
    /// ([`ContactParams::combine`]), the one given when one has, the default otherwise.
    pub fn pair(&self, a: usize, b: usize) -> ContactParams<T> {
        match (&self.geometry[a], &self.geometry[b]) {
            (Some(a), Some(b)) => ContactParams::combine(a, b),
            (Some(p), None) | (None, Some(p)) => *p,
            (None, None) => self.default,
        }
    }
}

/// The state, inputs and model of one step in the scalar `T`.
pub struct StepInput<'a, T: Scalar> {
    /// The model.
    pub model: &'a MultibodyModel<T>,
    /// The geometries (f64 shapes and placements).
    pub geometries: &'a [Geometry],
    /// Contact parameters.
    pub pairs: &'a PairParameters<T>,
    /// Contact approximation.
    pub approximation: Approximation,
    /// Which candidates apart enter the problem ([`Speculative::admits`], on real parts).
    pub speculative: Speculative,
    /// Time at the start of the step (s).
    pub t: f64,
    /// Step δt (s).
    pub dt: f64,
    /// Positions at the start of the step (nq).
    pub q: &'a DVector<T>,
    /// Velocities at the start of the step (nv).
    pub v: &'a DVector<T>,
    /// Actuation (nu).
    pub u: &'a DVector<T>,
}

/// Drops the candidates that `input.speculative` does not admit into the problem of
/// `input.approximation` ([`Speculative::admits`], decided on real parts), with their biases
/// `b` and their Jacobians in `J`, keeping the order of the rest.
/// Their frames stay, unreferenced. Pressure-field polygons (overlaps by construction) and
/// barrier-law contacts (which push across their gap d̂ by design, ICF eq. (12)) always enter.
fn admit<T: Scalar>(
    input: &StepInput<'_, T>,
    frames: &[AssembledFrame<T>],
    contacts: &mut Vec<AssembledContact<T>>,
    b: &mut Vec<Vector3<T>>,
    J: &mut ContactJacobians<T>,
) {
    let admits = |c: &AssembledContact<T>| {
        c.feature.polygon().is_some()
            || frames[c.frame].params.law == NormalLawKind::Barrier
            || input
                .speculative
                .admits(input.approximation, c.phi0.re(), c.v_n0.re(), input.dt)
    };
    if contacts.iter().all(admits) {
        return;
    }
    let mut kept = 0;
    J.retain(|i| {
        let admitted = admits(&contacts[i]);
        if admitted {
            contacts.swap(kept, i);
            b.swap(kept, i);
            kept += 1;
        }
        admitted
    });
    contacts.truncate(kept);
    b.truncate(kept);
}

/// Assembles the convex problem of a step generically (DESIGN steps 1-2): free motion, then
/// contact points from the `witnesses` of the active pairs (given the kinematics at `q`),
/// then the potentials of the chosen approximation.
///
/// # Errors
/// Size mismatches, a singular `A`, and whatever `witnesses` returns.
pub fn assemble_problem<T: Scalar>(
    input: &StepInput<'_, T>,
    data: &mut MultibodyData<T>,
    witnesses: impl FnOnce(&MultibodyModel<T>, &MultibodyData<T>) -> Result<Vec<ContactWitness<T>>>,
) -> Result<StepProblem<T>> {
    let mut assembled = Assembled::default();
    assemble_contacts(
        input,
        data,
        |model, data, list| {
            *list = witnesses(model, data)?;
            Ok(())
        },
        &mut AssemblyScratch::default(),
        &mut assembled,
    )?;
    Ok(assembled.take_step_problem())
}

/// What the assembly of a step computes on the way and keeps for the next step, so that a
/// step allocates nothing once it has seen its contact pattern: the free motion's buffers and
/// factor, the model's cliques, the witnesses of the geometric query and the last frame's
/// body Jacobians.
pub(super) struct AssemblyScratch<T: Scalar> {
    free: FreeMotion<T>,
    structure: CliqueStructure,
    /// The witnesses of the step under way; after it, what the contacts of the last step
    /// held (the boxes of their features, written over by the next step's witnesses).
    witnesses: Vec<ContactWitness<T>>,
    shared: Option<SharedFrame<T>>,
}

impl<T: Scalar> std::fmt::Debug for AssemblyScratch<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AssemblyScratch")
            .field("witnesses", &self.witnesses.len())
            .finish_non_exhaustive()
    }
}

impl<T: Scalar> Default for AssemblyScratch<T> {
    fn default() -> Self {
        AssemblyScratch {
            free: FreeMotion::default(),
            structure: CliqueStructure::default(),
            witnesses: Vec::new(),
            shared: None,
        }
    }
}

/// [`assemble_problem`] into `out`, whose storage it reuses, with the buffers of `scratch`;
/// `witnesses` writes the witnesses of the step into the list it is given, which holds the
/// last step's (written over in place, or replaced).
pub(super) fn assemble_contacts<T: Scalar>(
    input: &StepInput<'_, T>,
    data: &mut MultibodyData<T>,
    witnesses: impl FnOnce(
        &MultibodyModel<T>,
        &MultibodyData<T>,
        &mut Vec<ContactWitness<T>>,
    ) -> Result<()>,
    scratch: &mut AssemblyScratch<T>,
    out: &mut Assembled<T>,
) -> Result<()> {
    let model = input.model;
    let dt: T = lit(input.dt);
    model.clique_structure_into(&mut scratch.structure);
    let Assembled {
        problem,
        contacts,
        frames,
    } = out;
    scratch.free.compute(
        model,
        data,
        input.q,
        input.v,
        input.u,
        dt,
        &scratch.structure.cliques,
        &mut problem.v_star,
        &mut problem.A,
    )?;
    let nv = model.nv();
    witnesses(model, data, &mut scratch.witnesses)?;
    let n = scratch.witnesses.len();
    problem.J.clear(nv);
    let b = &mut problem.b;
    b.clear();
    frames.clear();
    // The polygons of a pressure-field pair against a plane share its normal, so one frame; in
    // f64 only, where equal normals are equal in everything (dual normals equal in their real
    // parts can differ in their derivatives: the polygons of two compliant spheres head-on).
    let share_frames = is_f64::<T>();
    // The last step's frame, made again for this step's first contact (its lists kept).
    let mut spare = scratch.shared.take();
    let mut shared: Option<SharedFrame<T>> = None;
    // By reference: moving each witness out copies it whole. Each contact is written over
    // the last step's in place, the two swapping their features' boxes; a contact beyond the
    // last step's takes a copy.
    for (i, c) in scratch.witnesses.iter_mut().enumerate() {
        let pair = (c.geometry_a, c.geometry_b);
        let same = |f: &SharedFrame<T>| f.kept.geometries == pair && f.nhat_W == c.nhat_W;
        let frame = match shared.as_mut() {
            Some(f) if share_frames && same(f) => f,
            Some(f) => {
                f.remake(input, data, pair, &c.nhat_W);
                frames.push(f.kept.clone());
                f
            }
            None => {
                let f = match spare.take() {
                    Some(mut f) => {
                        f.remake(input, data, pair, &c.nhat_W);
                        shared.insert(f)
                    }
                    None => shared.insert(SharedFrame::new(input, data, pair, &c.nhat_W)),
                };
                frames.push(f.kept.clone());
                f
            }
        };
        let p_WC = contact_point(frame.kept.bodies.0, c.p_WPa, c.p_WPb);
        // B's columns, then A's added (a tree shares its root's columns).
        problem.J.push_contact();
        let v_n = frame.jacobian_b.add_to(&p_WC, &mut problem.J)
            + frame.jacobian_a.add_to(&p_WC, &mut problem.J);
        let v_n0 = if frame.prescribed {
            let R_CW = frame.kept.R_WC.transpose();
            let (ga, gb) = frame.kept.bodies;
            let rel = |t: f64| {
                prescribed_point_velocity(model, gb, &p_WC, t)
                    - prescribed_point_velocity(model, ga, &p_WC, t)
            };
            b.push(R_CW * rel(input.t + input.dt));
            v_n + (R_CW * rel(input.t)).z
        } else {
            b.push(Vector3::zeros());
            v_n
        };
        let stiffness = c.stiffness.unwrap_or(frame.kept.params.stiffness);
        let frame = frames.len() - 1;
        if let Some(contact) = contacts.get_mut(i) {
            contact.frame = frame;
            contact.p_WC = p_WC;
            contact.phi0 = c.phi;
            contact.v_n0 = v_n0;
            contact.stiffness = stiffness;
            std::mem::swap(&mut contact.feature, &mut c.feature);
        } else {
            contacts.push(AssembledContact {
                frame,
                p_WC,
                phi0: c.phi,
                v_n0,
                stiffness,
                // A copy: the witness keeps its box for the next step to write into.
                feature: c.feature.clone(),
            });
        }
    }
    contacts.truncate(n);
    scratch.shared = shared.or(spare);
    admit(input, frames, contacts, b, &mut problem.J);
    scratch.structure.cliques.clone_into(&mut problem.cliques);
    let factor = &mut scratch.free.factor;
    make_pool(
        &mut problem.contacts,
        input.approximation,
        contacts,
        frames,
        &problem.J,
        factor,
        dt,
    )?;
    problem.constraints = constraint_rows_with(model, factor, input.q, input.u, dt)?;
    if problem.v0.len() == nv {
        problem.v0.copy_from(input.v);
    } else {
        problem.v0 = input.v.clone();
    }
    Ok(())
}

/// What the consecutive contacts of one geometry pair with one normal share: the contact
/// frame, the bodies' point Jacobians in it, the pair's parameters and whether a prescribed
/// body moves them. The polygons of a pressure-field pair against a plane are all such.
struct SharedFrame<T: Scalar> {
    /// The geometries, bodies, frame and parameters, as an [`Assembled`] step keeps them.
    kept: AssembledFrame<T>,
    /// The unit normal from A into B (world).
    nhat_W: Vector3<T>,
    /// The point Jacobians of A's and B's bodies in the frame.
    jacobian_a: FrameJacobian<T>,
    jacobian_b: FrameJacobian<T>,
    /// Whether A or B is a prescribed body (a bias velocity).
    prescribed: bool,
}

impl<T: Scalar> SharedFrame<T> {
    /// Made for the geometries `(a, b)` and the normal `nhat_W`.
    fn new(
        input: &StepInput<'_, T>,
        data: &MultibodyData<T>,
        pair: (usize, usize),
        nhat_W: &Vector3<T>,
    ) -> Self {
        let mut frame = SharedFrame {
            kept: AssembledFrame {
                geometries: pair,
                bodies: (BodyId::World, BodyId::World),
                R_WC: Matrix3::identity(),
                params: input.pairs.default,
            },
            nhat_W: *nhat_W,
            jacobian_a: FrameJacobian::empty(),
            jacobian_b: FrameJacobian::empty(),
            prescribed: false,
        };
        frame.remake(input, data, pair, nhat_W);
        frame
    }

    /// Made again for the geometries `(a, b)` and the normal `nhat_W`, keeping its
    /// allocations (one contact after another of a point-contact scene each has its own).
    fn remake(
        &mut self,
        input: &StepInput<'_, T>,
        data: &MultibodyData<T>,
        (a, b): (usize, usize),
        nhat_W: &Vector3<T>,
    ) {
        let bodies = (input.geometries[a].body, input.geometries[b].body);
        let R_WC = contact_frame(nhat_W);
        let R_CW = R_WC.transpose();
        self.jacobian_a
            .remake(input.model, data, (bodies.0, -T::one()), &R_CW, input.v);
        self.jacobian_b
            .remake(input.model, data, (bodies.1, T::one()), &R_CW, input.v);
        let prescribed = |body| matches!(body, BodyId::Prescribed(_));
        self.prescribed = prescribed(bodies.0) || prescribed(bodies.1);
        self.kept = AssembledFrame {
            geometries: (a, b),
            bodies,
            R_WC,
            params: input.pairs.pair(a, b),
        };
        self.nhat_W = *nhat_W;
    }
}

/// Velocity (m/s, world) at `p_W` of a prescribed body at time `t`; zero for other bodies.
fn prescribed_point_velocity<T: Scalar>(
    model: &MultibodyModel<T>,
    body: BodyId,
    p_W: &Vector3<T>,
    t: f64,
) -> Vector3<T> {
    match body {
        BodyId::Prescribed(i) => {
            let (w, v) = model.prescribed[i].velocity(t);
            let p_WB = model.prescribed[i].pose(t).p.map(lit::<T>);
            v.map(lit::<T>) + w.map(lit::<T>).cross(&(p_W - p_WB))
        }
        _ => Vector3::zeros(),
    }
}

/// World poses `X_WG` of all geometries at time `t` (bodies from `data`, prescribed bodies
/// from their motion).
pub fn geometry_poses<T: Scalar>(
    model: &MultibodyModel<T>,
    data: &MultibodyData<T>,
    geometries: &[Geometry],
    t: f64,
) -> Vec<Pose<T>> {
    let mut X_WG = Vec::with_capacity(geometries.len());
    geometry_poses_into(model, data, geometries, t, &mut X_WG);
    X_WG
}

/// [`geometry_poses`] written into `X_WG`, keeping its storage.
pub fn geometry_poses_into<T: Scalar>(
    model: &MultibodyModel<T>,
    data: &MultibodyData<T>,
    geometries: &[Geometry],
    t: f64,
    X_WG: &mut Vec<Pose<T>>,
) {
    X_WG.clear();
    X_WG.extend(geometries.iter().map(|g| {
        let X_WB = match g.body {
            BodyId::World => Pose::identity(),
            BodyId::Body(i) => data.X_WB[i],
            BodyId::Prescribed(i) => model.prescribed[i].pose(t).cast(),
        };
        X_WB.compose(&g.X_BG.cast())
    }));
}
