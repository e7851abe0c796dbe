//! The time step (ICF eqs. (1)-(4); DESIGN "The step"):
//!
//! 1. free motion `A (v* − v0) = δt k(q0, v0, u)`, `A = M(q0) + δt D`;
//! 2. one geometric query at `q0`: every pair with `φ0 < δ_margin` becomes a contact with frame
//!    C, `x0 = −φ0` and Jacobian `J_i` (`v_c,i = J_i v + b_i`);
//! 3. the convex solve `v = argmin ½‖v − v*‖²_A + Σ ℓ_i(J_i v + b_i)`;
//! 4. positions `q = q0 + δt N(q0) v`, quaternions renormalized.
#![allow(non_snake_case)]

use nalgebra::{DMatrix, DVector, Matrix3, Matrix3xX, Vector3};

use crate::contact::{
    contact_frame, Approximation, ContactFeature, ContactParams, ContactPoint, ContactPool,
    ContactState, NormalLawKind,
};
use crate::error::{Error, Result};
use crate::geometry::query::{find_contacts, CollisionScene, GeometricContact};
use crate::geometry::{Geometry, Shape};
use crate::hydroelastic::patch::patches;
use crate::hydroelastic::query::{modulus, FoundPolygon};
use crate::hydroelastic::{
    find_polygons_coherent, replayed_polygon, ContactPolygon, Patch, Placed, PolygonContact,
    SurfaceCache,
};
use crate::math::block::BlockDiagonalCholesky;
use crate::math::Pose;
use crate::multibody::kinematics::{forward_kinematics, MultibodyData};
use crate::multibody::model::{BodyId, MultibodyModel};
use crate::multibody::{free_motion_velocity, integrate_positions};
use crate::scalar::{is_f64, lit, Scalar};
use crate::solver::{ConvexProblem, NewtonWorkspace, SolverParams, SolverStats};

/// Default contact margin δ_margin (m): pairs closer than this become (speculative) contacts.
pub const DEFAULT_MARGIN: f64 = 0.01;

/// Settings of the time stepper.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepSettings {
    /// Time step δt (s).
    pub dt: f64,
    /// Contact approximation (default Lagged).
    pub approximation: Approximation,
    /// Contact margin δ_margin (m), default [`DEFAULT_MARGIN`].
    pub margin: f64,
    /// Newton solver parameters.
    pub solver: SolverParams,
    /// Contact parameters of pairs whose geometries have none of their own.
    pub contact: ContactParams<f64>,
}

impl Default for StepSettings {
    fn default() -> Self {
        StepSettings {
            dt: 1e-3,
            approximation: Approximation::Lagged,
            margin: DEFAULT_MARGIN,
            solver: SolverParams::default(),
            contact: ContactParams::default(),
        }
    }
}

impl StepSettings {
    /// Checks δt > 0, margin ≥ 0 (both finite) and the default contact parameters.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`].
    pub fn validate(&self) -> Result<()> {
        if !(self.dt > 0.0 && self.dt.is_finite()) {
            return Err(Error::invalid(
                "dt",
                self.dt,
                "time step must be positive and finite (s)",
            ));
        }
        if !(self.margin >= 0.0 && self.margin.is_finite()) {
            return Err(Error::invalid(
                "margin",
                self.margin,
                "margin must be ≥ 0 and finite (m)",
            ));
        }
        self.contact.validate()
    }
}

/// The state of the system at time `t`.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// Time (s).
    pub t: f64,
    /// Generalized positions (nq).
    pub q: DVector<f64>,
    /// Generalized velocities (nv).
    pub v: DVector<f64>,
}

/// What one contact did during a step.
#[derive(Clone, Debug, PartialEq)]
pub struct ContactResult {
    /// Body A.
    pub body_a: BodyId,
    /// Body B (forces are on B).
    pub body_b: BodyId,
    /// Geometry indices (A, B).
    pub geometries: (usize, usize),
    /// Contact point, world frame (m).
    pub point: Vector3<f64>,
    /// Normal from A to B, world frame.
    pub normal: Vector3<f64>,
    /// Impulse γ in the contact frame (N·s, on B).
    pub impulse: Vector3<f64>,
    /// Force on B, world frame (N): `R_WC γ / δt`.
    pub force: Vector3<f64>,
    /// Normal force `γ_n/δt` (N).
    pub normal_force: f64,
    /// Tangential force magnitude `‖γ_t‖/δt` (N).
    pub tangential_force: f64,
    /// Slip speed `‖v_t‖` at the end of the step (m/s).
    pub slip: f64,
    /// Normal velocity `v_n` at the end of the step (m/s, > 0 separating).
    pub normal_velocity: f64,
    /// Penetration at the end of the step `x0 − δt v_n` (m, > 0 overlapping); for a
    /// pressure-field contact the virtual penetration `p0/g − δt v_n` of its polygon.
    pub penetration: f64,
    /// Effective stiction tolerance (m/s), ICF Sec. VIII: `v_s` for Lagged and Similar, the
    /// regularized ε of eq. (44), SAP's `R_t μ γ_n` (eq. (42)).
    pub stiction_tolerance: f64,
    /// The polygon of a pressure-field contact.
    pub polygon: Option<PolygonContact>,
}

/// Report of one step.
#[derive(Clone, Debug, PartialEq)]
pub struct StepReport {
    /// Solver statistics.
    pub stats: SolverStats,
    /// Per-contact results (one per polygon for pressure-field pairs).
    pub contacts: Vec<ContactResult>,
    /// Per-pair contact patches of the pressure-field pairs.
    pub patches: Vec<Patch>,
}

/// The assembled convex problem of a step with its contacts, before solving.
#[derive(Clone, Debug)]
pub struct StepProblem<T: Scalar> {
    /// The convex problem.
    pub problem: ConvexProblem<T>,
    /// The contacts, in the order of the problem's pool.
    pub contacts: Vec<ContactPoint<T>>,
}

/// A scene ready to step: the model, its collision geometry and the step settings.
#[derive(Debug)]
pub struct Simulator {
    /// The multibody model.
    pub model: MultibodyModel<f64>,
    /// Step settings.
    pub settings: StepSettings,
    collision: CollisionScene,
    /// The elements near the plane of each plane–mesh pressure-field pair, kept from one
    /// step to the next ([`SurfaceCache`]).
    surfaces: SurfaceCache,
    /// The contact lists of the last step, reused by the next.
    buffers: AssemblyBuffers<f64>,
    data: MultibodyData<f64>,
    newton: NewtonWorkspace,
}

impl Simulator {
    /// A simulator for `model` with `geometries`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for invalid settings, shapes or contact parameters, or a
    /// geometry attached to a body index that does not exist.
    pub fn new(
        model: MultibodyModel<f64>,
        mut geometries: Vec<Geometry>,
        settings: StepSettings,
    ) -> Result<Self> {
        settings.validate()?;
        for g in &mut geometries {
            fill_hertz_radius(g);
        }
        check_pair_laws(geometries.iter())?;
        let params = geometries.iter().filter_map(|g| g.contact.as_ref());
        check_barrier_within_margin(params.chain([&settings.contact]), settings.margin)?;
        for g in &geometries {
            let exists = match g.body {
                BodyId::World => true,
                BodyId::Body(i) => i < model.bodies.len(),
                BodyId::Prescribed(i) => i < model.prescribed.len(),
            };
            if !exists {
                return Err(Error::invalid(
                    &format!("geometry `{}` body", g.name),
                    format!("{:?}", g.body),
                    "no such body",
                ));
            }
            if let Some(c) = &g.contact {
                c.validate().map_err(|e| {
                    Error::invalid(
                        &format!("geometry `{}` contact", g.name),
                        "",
                        &e.to_string(),
                    )
                })?;
            }
        }
        let data = MultibodyData::new(&model);
        Ok(Simulator {
            model,
            settings,
            collision: CollisionScene::new(geometries)?,
            surfaces: SurfaceCache::default(),
            buffers: AssemblyBuffers::default(),
            data,
            newton: NewtonWorkspace::default(),
        })
    }

    /// The geometries.
    pub fn geometries(&self) -> &[Geometry] {
        self.collision.geometries()
    }

    /// The geometries with their parry shapes and hydroelastic representations.
    pub fn collision(&self) -> &CollisionScene {
        &self.collision
    }

    /// Replaces geometry `index` (shape, placement or contact parameters), rebuilding only its
    /// own representations ([`CollisionScene::replace`]: a new modulus or new contact
    /// parameters keep its pressure-field mesh).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for an index out of range or an invalid shape or contact
    /// parameters; the simulator is unchanged then.
    pub fn replace_geometry(&mut self, index: usize, mut geometry: Geometry) -> Result<()> {
        fill_hertz_radius(&mut geometry);
        if let Some(c) = &geometry.contact {
            c.validate()?;
        }
        if let Some(c) = &geometry.contact {
            check_barrier_within_margin([c].into_iter(), self.settings.margin)?;
        }
        let geometries = self.collision.geometries().iter().enumerate();
        check_pair_laws(geometries.map(|(i, g)| if i == index { &geometry } else { g }))?;
        self.collision.replace(index, geometry)?;
        // Its lists of elements were of the old mesh.
        self.surfaces = SurfaceCache::default();
        Ok(())
    }

    /// Assembles the convex problem of the step from `state` with actuation `u` (nu):
    /// free motion, one geometric query, contact points and potentials (steps 1-2).
    ///
    /// # Errors
    /// Size mismatches, non-finite states, an unsupported geometry pair.
    pub fn assemble(&mut self, state: &State, u: &DVector<f64>) -> Result<StepProblem<f64>> {
        self.assemble_contacts(state, u)
            .map(Assembled::into_step_problem)
    }

    /// [`Simulator::assemble`], the contacts kept as [`Assembled`].
    fn assemble_contacts(&mut self, state: &State, u: &DVector<f64>) -> Result<Assembled<f64>> {
        if !(state.q.iter().chain(state.v.iter()).all(|x| x.is_finite()) && state.t.is_finite()) {
            return Err(Error::invalid(
                "state",
                "non-finite",
                "positions, velocities and time must be finite",
            ));
        }
        let pairs = self.pair_parameters();
        let input = StepInput {
            model: &self.model,
            geometries: self.collision.geometries(),
            pairs: &pairs,
            approximation: self.settings.approximation,
            t: state.t,
            dt: self.settings.dt,
            q: &state.q,
            v: &state.v,
            u,
        };
        let (collision, margin) = (&self.collision, self.settings.margin);
        let surfaces = &mut self.surfaces;
        // Room for as many contacts as the last solve had: a pressure-field pair adds a
        // contact per polygon, about as many from one step to the next.
        let last_contacts = self.newton.v_c().len();
        let witnesses = |model: &MultibodyModel<f64>, data: &MultibodyData<f64>| {
            let X_WG = geometry_poses(model, data, collision.geometries(), state.t);
            let points = find_contacts(collision, &X_WG, margin)?;
            let mut witnesses = Vec::with_capacity(points.len().max(last_contacts));
            witnesses.extend(points.iter().map(ContactWitness::from));
            find_polygons_coherent(collision, &X_WG, surfaces, |p| {
                witnesses.push(ContactWitness::from(p))
            })?;
            Ok(witnesses)
        };
        let buffers = std::mem::take(&mut self.buffers);
        assemble_contacts(&input, &mut self.data, witnesses, buffers)
    }

    /// The pair parameters of this scene: the default and each geometry's own.
    pub fn pair_parameters(&self) -> PairParameters<f64> {
        PairParameters {
            default: self.settings.contact,
            geometry: self
                .collision
                .geometries()
                .iter()
                .map(|g| g.contact)
                .collect(),
        }
    }

    /// Solves `problem` from `v_guess` with `params` in the simulator's own Newton workspace,
    /// which keeps the solution and the last factor of `H` ([`Simulator::newton`]) until the
    /// next solve: no allocation once the contact pattern has been seen.
    ///
    /// # Errors
    /// As [`crate::solver::solve`].
    pub fn solve(
        &mut self,
        problem: &ConvexProblem<f64>,
        v_guess: &DVector<f64>,
        params: &SolverParams,
    ) -> Result<SolverStats> {
        self.newton.prepare(problem);
        self.newton.iterate(problem, v_guess, params)
    }

    /// The Newton workspace of the last [`Simulator::solve`] or [`Simulator::step`]: its
    /// velocities, impulses and factor.
    pub fn newton(&self) -> &NewtonWorkspace {
        &self.newton
    }

    /// Advances `state` by one step with actuation `u` (nu).
    ///
    /// # Errors
    /// Everything [`Simulator::assemble`] and [`crate::solver::solve`] can return; the state is not
    /// advanced on error.
    pub fn step(&mut self, state: &State, u: &DVector<f64>) -> Result<(State, StepReport)> {
        let dt = self.settings.dt;
        let Assembled {
            problem,
            contacts,
            frames,
        } = self.assemble_contacts(state, u)?;
        let params = self.settings.solver;
        let stats = self.solve(&problem, &state.v, &params)?;
        let v = self.newton.v();
        let q = integrate_positions(&self.model, &state.q, v, dt);
        if !q.iter().all(|x| x.is_finite()) {
            return Err(Error::NonFinite {
                stage: "position update".into(),
                stats,
            });
        }
        // By reference: moving each contact out would copy it whole.
        let inv_dt = 1.0 / dt;
        let results = contacts
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let (gamma, v_c) = (self.newton.gamma()[i], self.newton.v_c()[i]);
                let frame = &frames[c.frame];
                ContactResult {
                    body_a: frame.bodies.0,
                    body_b: frame.bodies.1,
                    geometries: frame.geometries,
                    point: c.p_WC,
                    normal: frame.R_WC.column(2).into_owned(),
                    impulse: gamma,
                    force: frame.R_WC * (gamma * inv_dt),
                    normal_force: gamma.z * inv_dt,
                    tangential_force: gamma.xy().norm() * inv_dt,
                    slip: v_c.xy().norm(),
                    normal_velocity: v_c.z,
                    penetration: -c.phi0 - dt * v_c.z,
                    stiction_tolerance: problem.contacts.stiction_tolerance(i, &v_c),
                    polygon: c.feature.polygon().copied(),
                }
            })
            .collect::<Vec<_>>();
        self.buffers = AssemblyBuffers { contacts, frames };
        let next = State {
            t: state.t + dt,
            q,
            v: v.clone(),
        };
        Ok((
            next,
            StepReport {
                stats,
                patches: patches(&results),
                contacts: results,
            },
        ))
    }

    /// The vertices (world, m, in cyclic order) of the polygon of each pressure-field contact
    /// among `contacts`, the results of a step from `state`; an empty list for a point
    /// contact. Each polygon is clipped again at `state` with its recorded element pair and
    /// topology ([`crate::hydroelastic::replayed_polygon`]): the step itself keeps no vertex
    /// lists.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] when `state` does not fit the model or a polygon does not
    /// replay at `state` (`contacts` from another state or scene).
    pub fn polygon_vertices(
        &self,
        state: &State,
        contacts: &[ContactResult],
    ) -> Result<Vec<Vec<Vector3<f64>>>> {
        if state.q.len() != self.model.nq() || state.v.len() != self.model.nv() {
            return Err(Error::invalid(
                "state",
                format!("nq = {}, nv = {}", state.q.len(), state.v.len()),
                "the model's numbers of positions and velocities",
            ));
        }
        let mut data = MultibodyData::new(&self.model);
        forward_kinematics(&self.model, &mut data, &state.q, &state.v);
        let X_WG = geometry_poses(&self.model, &data, self.collision.geometries(), state.t);
        let side = |i: usize| {
            self.collision.hydro(i).map(|geometry| Placed {
                geometry,
                X_WG: X_WG[i],
                modulus: modulus(&self.collision, i),
            })
        };
        contacts
            .iter()
            .map(|c| {
                let Some(polygon) = &c.polygon else {
                    return Ok(Vec::new());
                };
                let (a, b) = c.geometries;
                side(a)
                    .zip(side(b))
                    .and_then(|(a, b)| replayed_polygon(&a, &b, polygon.elements, polygon.topology))
                    .map(|p| p.vertices)
                    .ok_or_else(|| {
                        Error::invalid(
                            "contacts",
                            format!("polygon {:?} of geometries {a} and {b}", polygon.elements),
                            "a polygon of a step from this state",
                        )
                    })
            })
            .collect()
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
    geometries
        .iter()
        .map(|g| {
            let X_WB = match g.body {
                BodyId::World => Pose::identity(),
                BodyId::Body(i) => data.X_WB[i],
                BodyId::Prescribed(i) => model.prescribed[i].pose(t).cast(),
            };
            X_WB.compose(&g.X_BG.cast())
        })
        .collect()
}

/// Where a contact's force acts (m, world): on the surface of B (its witness point) when A is
/// the world or a prescribed body, midway between the witness points for two tree bodies.
///
/// On a static or prescribed A the force acts on B's material surface, so friction has B's own
/// moment arm even while SAP or Similar glide at a gap `φ > 0` (ICF eq. (41)); a midpoint would
/// lengthen the arm by `φ/2` and break the conservation of angular momentum about the contact
/// point (a sliding sphere would roll faster than 5/7 of its touchdown speed).
pub fn contact_point<T: Scalar>(
    body_a: BodyId,
    p_WPa: Vector3<T>,
    p_WPb: Vector3<T>,
) -> Vector3<T> {
    match body_a {
        BodyId::Body(_) => (p_WPa + p_WPb) * lit::<T>(0.5),
        BodyId::World | BodyId::Prescribed(_) => p_WPb,
    }
}

/// The columns `(k, ω_k, v_k)` (body frame) of tree body `i`'s Jacobian for the joints that
/// support it, from the body to the root; the others are zero.
fn supporting_columns<'a, T: Scalar>(
    model: &'a MultibodyModel<T>,
    data: &'a MultibodyData<T>,
    i: usize,
) -> impl Iterator<Item = (usize, Vector3<T>, Vector3<T>)> + 'a {
    std::iter::successors(Some(i), |&j| model.joints[j].parent)
        .flat_map(|j| {
            let start = model.joints[j].v_start;
            start..start + model.joints[j].kind.nv()
        })
        .map(move |k| {
            let col = data.J_B[i].column(k);
            (
                k,
                Vector3::new(col[0], col[1], col[2]),
                Vector3::new(col[3], col[4], col[5]),
            )
        })
}

/// The point Jacobian of a body seen in a contact frame C, for any point of the body, times a
/// sign (+1 for body B, −1 for body A): for each column `k` of the joints supporting it,
/// `±R_CB v_k` and `±R_CB ω_k` (its body Jacobian's columns in C). A point `p_W` then has the
/// column `±(R_CB v_k + R_CB ω_k × p_C)` with `p_C = R_CW (p_W − p_WB)`
/// (`R_CW R_WB (v_k + ω_k × p_B)`): the polygons of one patch share one frame and one body, so
/// this is made once for all of them.
struct FrameJacobian<T: Scalar> {
    /// `R_CW` it was made for.
    R_CW: Matrix3<T>,
    /// The body's origin `p_WB` (m, world).
    p_WB: Vector3<T>,
    /// `(k, ±R_CB v_k, ±R_CB ω_k)` per supporting joint column.
    columns: Vec<(usize, Vector3<T>, Vector3<T>)>,
    /// The body's velocity in C at the step's start velocities, times the sign:
    /// `±Σ_k R_CB v_k v[k]` and `±Σ_k R_CB ω_k v[k]`, so a point's is `V + Ω × p_C`.
    V: Vector3<T>,
    Omega: Vector3<T>,
}

impl<T: Scalar> FrameJacobian<T> {
    /// Made again for `body` in the frame `R_CW` with `sign`, keeping its allocation: no
    /// columns for the world and prescribed bodies.
    fn remake(
        &mut self,
        model: &MultibodyModel<T>,
        data: &MultibodyData<T>,
        (body, sign): (BodyId, T),
        R_CW: &Matrix3<T>,
        v: &DVector<T>,
    ) {
        self.columns.clear();
        self.R_CW = *R_CW;
        if let BodyId::Body(i) = body {
            let R_CB = R_CW * data.X_WB[i].R * sign;
            self.p_WB = data.X_WB[i].p;
            self.columns.extend(
                supporting_columns(model, data, i).map(|(k, w, v)| (k, R_CB * v, R_CB * w)),
            );
        }
        (self.V, self.Omega) = self.columns.iter().fold(
            (Vector3::zeros(), Vector3::zeros()),
            |(V, Omega), (k, Rv, Rw)| (V + Rv * v[*k], Omega + Rw * v[*k]),
        );
    }

    /// Writes the signed point Jacobian at `p_W` (in C) into `J_C` (3 × nv, column-major):
    /// added to it when `ADD`, over it otherwise (the first body of a contact, its other
    /// columns zero). Returns what it adds to the normal velocity `(J_C v)_z`. Only the
    /// columns of the supporting joints are touched (the others are zero), so a contact costs
    /// O(depth) instead of O(nv).
    #[inline(always)]
    fn write<const ADD: bool>(&self, p_W: &Vector3<T>, J_C: &mut [T]) -> T {
        let p_C = self.R_CW * (p_W - self.p_WB);
        for (k, Rv, Rw) in &self.columns {
            let column = Rv + Rw.cross(&p_C);
            let out = &mut J_C[3 * k..3 * k + 3];
            if ADD {
                out.iter_mut()
                    .zip(column.iter())
                    .for_each(|(o, c)| *o += *c);
            } else {
                out.copy_from_slice(column.as_slice());
            }
        }
        (self.V + self.Omega.cross(&p_C)).z
    }
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
        let empty = || FrameJacobian {
            R_CW: Matrix3::identity(),
            p_WB: Vector3::zeros(),
            columns: Vec::new(),
            V: Vector3::zeros(),
            Omega: Vector3::zeros(),
        };
        let mut frame = SharedFrame {
            kept: AssembledFrame {
                geometries: pair,
                bodies: (BodyId::World, BodyId::World),
                R_WC: Matrix3::identity(),
                params: input.pairs.default,
            },
            nhat_W: *nhat_W,
            jacobian_a: empty(),
            jacobian_b: empty(),
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

/// Gives a geometry with Hertz contact and no radius of its own its shape's radius of
/// curvature: a sphere's or a capsule's radius (flat shapes have none).
fn fill_hertz_radius(geometry: &mut Geometry) {
    let Some(params) = &mut geometry.contact else {
        return;
    };
    if params.law != NormalLawKind::Hertz || params.hertz_radius.is_finite() {
        return;
    }
    if let Shape::Sphere { radius } | Shape::Capsule { radius, .. } = geometry.shape {
        params.hertz_radius = radius;
    }
}

/// Refuses a barrier that acts farther than the margin: its pairs would only become contacts
/// inside its range, and start pushing with a jump.
fn check_barrier_within_margin<'a>(
    mut params: impl Iterator<Item = &'a ContactParams<f64>>,
    margin: f64,
) -> Result<()> {
    match params.find(|p| p.law == NormalLawKind::Barrier && p.barrier_distance > margin) {
        Some(p) => Err(Error::invalid(
            "barrier_distance",
            p.barrier_distance,
            &format!("must not exceed the contact margin ({margin} m)"),
        )),
        None => Ok(()),
    }
}

/// Refuses two geometries whose own contact parameters name different normal laws (other than
/// the default Hunt & Crossley, which yields): their pair would have none.
fn check_pair_laws<'a>(geometries: impl Iterator<Item = &'a Geometry>) -> Result<()> {
    let with_law: Vec<(&Geometry, &ContactParams<f64>)> = geometries
        .filter_map(|g| g.contact.as_ref().map(|c| (g, c)))
        .filter(|(_, c)| c.law != NormalLawKind::HuntCrossley)
        .collect();
    for (i, (a, pa)) in with_law.iter().enumerate() {
        for (b, pb) in &with_law[i + 1..] {
            ContactParams::law_of_pair(pa, pb).map_err(|e| {
                Error::invalid(
                    &format!("geometries `{}` and `{}` contact", a.name, b.name),
                    "",
                    &e.to_string(),
                )
            })?;
        }
    }
    Ok(())
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
    assemble_contacts(input, data, witnesses, AssemblyBuffers::default())
        .map(Assembled::into_step_problem)
}

/// A step's convex problem with its contacts, each kept as what it does not share with the
/// other contacts of its frame: a pressure-field pair's polygons, a contact each, share one
/// frame, bodies and parameters, which are kept once. The forward step reads its results from
/// this; [`Assembled::into_step_problem`] makes the full [`ContactPoint`]s.
struct Assembled<T: Scalar> {
    problem: ConvexProblem<T>,
    /// The contacts, in the order of the problem's pool.
    contacts: Vec<AssembledContact<T>>,
    /// The frames the contacts refer to.
    frames: Vec<AssembledFrame<T>>,
}

/// The lists of an [`Assembled`] step, kept by the simulator from one step to the next, so
/// that a step allocates them only to grow them.
#[derive(Debug)]
struct AssemblyBuffers<T: Scalar> {
    contacts: Vec<AssembledContact<T>>,
    frames: Vec<AssembledFrame<T>>,
}

impl<T: Scalar> Default for AssemblyBuffers<T> {
    fn default() -> Self {
        AssemblyBuffers {
            contacts: Vec::new(),
            frames: Vec::new(),
        }
    }
}

/// One contact of an [`Assembled`] step.
#[derive(Debug)]
struct AssembledContact<T: Scalar> {
    /// Its frame in [`Assembled::frames`].
    frame: usize,
    /// Contact point, world frame (m), see [`contact_point`].
    p_WC: Vector3<T>,
    /// Signed distance at the start of the step φ0 (m).
    phi0: T,
    /// Normal velocity at the start of the step `v_n0` (m/s).
    v_n0: T,
    /// Its stiffness (N/m): the pair's, or a polygon's `k = A·g`.
    stiffness: T,
    /// The active feature pair, or the polygon.
    feature: ContactFeature,
}

/// What the contacts of one frame of an [`Assembled`] step share.
#[derive(Clone, Debug)]
struct AssembledFrame<T: Scalar> {
    /// Geometries A and B.
    geometries: (usize, usize),
    /// Their bodies.
    bodies: (BodyId, BodyId),
    /// The contact frame ([`contact_frame`]).
    R_WC: Matrix3<T>,
    /// The pair's contact parameters.
    params: ContactParams<T>,
}

impl<T: Scalar> Assembled<T> {
    /// The parameters of `contact`: its frame's, with its own stiffness; a pressure-field
    /// polygon's law is Hunt & Crossley in `f0 = A·p0`, `k = A·g` whatever the pair's.
    fn params(frames: &[AssembledFrame<T>], contact: &AssembledContact<T>) -> ContactParams<T> {
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

    /// The step problem, each contact a [`ContactPoint`] with a copy of its Jacobian.
    fn into_step_problem(self) -> StepProblem<T> {
        let Assembled {
            problem,
            contacts,
            frames,
        } = self;
        let nv = problem.nv();
        let contacts = contacts
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let frame = &frames[c.frame];
                ContactPoint {
                    geometry_a: frame.geometries.0,
                    geometry_b: frame.geometries.1,
                    body_a: frame.bodies.0,
                    body_b: frame.bodies.1,
                    p_WC: c.p_WC,
                    R_WC: frame.R_WC,
                    phi0: c.phi0,
                    J: Matrix3xX::from_column_slice(
                        &problem.J.as_slice()[3 * nv * i..3 * nv * (i + 1)],
                    ),
                    b: problem.b[i],
                    v_n0: c.v_n0,
                    params: Self::params(&frames, &c),
                    feature: c.feature,
                }
            })
            .collect();
        StepProblem { problem, contacts }
    }
}

/// [`assemble_problem`], the contacts kept as [`Assembled`].
fn assemble_contacts<T: Scalar>(
    input: &StepInput<'_, T>,
    data: &mut MultibodyData<T>,
    witnesses: impl FnOnce(&MultibodyModel<T>, &MultibodyData<T>) -> Result<Vec<ContactWitness<T>>>,
    buffers: AssemblyBuffers<T>,
) -> Result<Assembled<T>> {
    let model = input.model;
    let dt: T = lit(input.dt);
    let (v_star, A) = free_motion_velocity(model, data, input.q, input.v, input.u, dt)?;
    let nv = model.nv();
    let mut witnesses = witnesses(model, data)?;
    let mut J_all = Matrix3xX::zeros(nv * witnesses.len());
    let mut b = Vec::with_capacity(witnesses.len());
    let AssemblyBuffers {
        mut contacts,
        mut frames,
    } = buffers;
    contacts.clear();
    frames.clear();
    // The polygons of a pressure-field pair against a plane share its normal, so one frame; in
    // f64 only, where equal normals are equal in everything (dual normals equal in their real
    // parts can differ in their derivatives: the polygons of two compliant spheres head-on).
    let share_frames = is_f64::<T>();
    let mut shared: Option<SharedFrame<T>> = None;
    // By reference (the feature taken out): moving each witness out copies it whole. Mapped
    // and extended, each contact is written in place.
    contacts.extend(witnesses.iter_mut().enumerate().map(|(i, c)| {
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
                let f = shared.insert(SharedFrame::new(input, data, pair, &c.nhat_W));
                frames.push(f.kept.clone());
                f
            }
        };
        let p_WC = contact_point(frame.kept.bodies.0, c.p_WPa, c.p_WPb);
        let J_C = &mut J_all.as_mut_slice()[3 * nv * i..3 * nv * (i + 1)];
        // B's columns over zeros, then A's added (a tree shares its root's columns).
        let v_n = frame.jacobian_b.write::<false>(&p_WC, J_C)
            + frame.jacobian_a.write::<true>(&p_WC, J_C);
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
        AssembledContact {
            frame: frames.len() - 1,
            p_WC,
            phi0: c.phi,
            v_n0,
            stiffness: c.stiffness.unwrap_or(frame.kept.params.stiffness),
            feature: std::mem::replace(
                &mut c.feature,
                ContactFeature::Polygon(PolygonContact::default()),
            ),
        }
    }));
    let (cliques, body_clique) = model.clique_structure();
    let pool = make_pool(
        input.approximation,
        &contacts,
        &frames,
        &J_all,
        &A,
        &cliques,
        &body_clique,
        dt,
    )?;
    Ok(Assembled {
        problem: ConvexProblem {
            A,
            cliques,
            v_star,
            v0: input.v.clone(),
            J: J_all,
            b,
            contacts: pool,
        },
        contacts,
        frames,
    })
}

/// Delassus estimates `w_i = ‖J_i A⁻¹ J_iᵀ‖_F / 3` (1/kg), SAP paper Sec. V, of the contact
/// Jacobians `J` side by side (3 × nv each, as [`ConvexProblem::J`]); A is
/// block-diagonal over trees, so this is the per-tree estimate. `touched[i]` lists the cliques
/// (trees) whose velocities contact `i` moves: `J_i` is zero elsewhere, so only those blocks
/// are solved.
pub fn delassus_estimates<T: Scalar>(
    A: &DMatrix<T>,
    cliques: &[Vec<usize>],
    J: &Matrix3xX<T>,
    touched: &[Vec<usize>],
) -> Result<Vec<T>> {
    let chol =
        BlockDiagonalCholesky::new(A, cliques).ok_or(Error::NotPositiveDefinite { index: 0 })?;
    let nv = A.nrows();
    Ok(touched
        .iter()
        .enumerate()
        .map(|(i, touched)| {
            let Jt = J.columns(i * nv, nv).transpose();
            let Jt = DMatrix::from_column_slice(Jt.nrows(), 3, Jt.as_slice());
            chol.quadratic_form(&Jt, touched).norm() / lit::<T>(3.0)
        })
        .collect())
}

/// Builds the potentials of `contacts` (their frames in `frames`), whose Jacobians are `J`
/// (side by side, as [`ConvexProblem::J`]), for the chosen approximation (ICF Sec. VI);
/// `body_clique[i]` is the clique of tree body `i` ([`MultibodyModel::clique_structure`]).
///
/// # Errors
/// [`Error::NotPositiveDefinite`] if `A` is singular (needed for Delassus estimates).
#[allow(clippy::too_many_arguments)]
fn make_pool<T: Scalar>(
    approximation: Approximation,
    contacts: &[AssembledContact<T>],
    frames: &[AssembledFrame<T>],
    J: &Matrix3xX<T>,
    A: &DMatrix<T>,
    cliques: &[Vec<usize>],
    body_clique: &[Option<usize>],
    dt: T,
) -> Result<ContactPool<T>> {
    let needs_w = matches!(
        approximation,
        Approximation::Sap | Approximation::RegularizedLagged
    );
    let w = if needs_w {
        // The cliques each contact's Jacobian touches.
        let touched: Vec<Vec<usize>> = contacts
            .iter()
            .map(|c| {
                let (a, b) = frames[c.frame].bodies;
                let mut t: Vec<usize> = [a, b]
                    .iter()
                    .filter_map(|b| match b {
                        BodyId::Body(i) => body_clique[*i],
                        _ => None,
                    })
                    .collect();
                t.dedup();
                t
            })
            .collect();
        delassus_estimates(A, cliques, J, &touched)?
    } else {
        // Not read by Lagged or Similar.
        Vec::new()
    };
    Ok(ContactPool::build(
        approximation,
        contacts.iter().enumerate().map(|(i, c)| {
            let state = ContactState {
                x0: -c.phi0,
                v_n0: c.v_n0,
                dt,
                // Not read by Lagged or Similar.
                w: w.get(i).copied().unwrap_or_else(T::zero),
            };
            (Assembled::params(frames, c), state)
        }),
    ))
}
