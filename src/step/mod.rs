//! The time step (ICF eqs. (1)-(4); DESIGN "The step"):
//!
//! 1. free motion `A (v* − v0) = δt k(q0, v0, u)`, `A = M(q0) + δt D`;
//! 2. one geometric query at `q0`: every pair with `φ0 < δ_margin` is a candidate, and the
//!    candidates [`Speculative`] admits become contacts with frame C, `x0 = −φ0` and Jacobian
//!    `J_i` (`v_c,i = J_i v + b_i`);
//! 3. the convex solve `v = argmin ½‖v − v*‖²_A + Σ ℓ_i(J_i v + b_i) + Σ ℓ_j(c_j v)`, the
//!    last sum over the constraint rows ([`constraints`]);
//! 4. positions `q = q0 + δt N(q0) v`, quaternions renormalized.
//!
//! Files, one job each:
//! - `mod.rs`: the settings, the state and the [`Simulator`], which runs steps 1-4;
//! - `assemble.rs`: the assembly of the convex problem (steps 1-2), generic in the scalar;
//! - `assembled.rs`: what an assembled step keeps of its contacts, and [`StepProblem`];
//! - `point.rs`: [`ContactPoint`], one contact of a step: frame, Jacobian, bias, parameters
//!   and what the query found;
//! - `jacobian.rs`: the contact Jacobian writes and the contact point;
//! - `constraints.rs`: the rows of joint limits, couplers, position servos and joint
//!   friction (SAP Sec. V);
//! - `delassus.rs`: the Delassus estimates of SAP and the regularized Lagged model;
//! - `pool.rs`: the contact potentials of the chosen approximation (through
//!   [`crate::contact::model`], the one factory);
//! - `laws.rs`: the checks of the geometries' normal laws when a simulator is made;
//! - `report.rs`: what a step reports per contact; `patch.rs`: per pressure-field patch;
//! - `warnings.rs`: the counted, non-fatal warnings for suspicious physics.
#![allow(non_snake_case)]

mod assemble;
mod assembled;
pub mod constraints;
mod delassus;
mod jacobian;
mod laws;
mod patch;
mod point;
mod pool;
mod report;
pub mod warnings;

pub use assemble::{assemble_problem, geometry_poses, ContactWitness, PairParameters, StepInput};
pub use assembled::StepProblem;
pub use delassus::delassus_estimates;
pub use jacobian::contact_point;
pub use patch::Patch;
pub use point::{contact_frame, contact_frame_derivative, ContactFeature, ContactPoint};
pub use report::{ConstraintResult, ContactResult, StepReport};
pub use warnings::{Warning, WarningKind, WarningTally};

use nalgebra::{DVector, Vector3};

use crate::collision::pressure::modulus;
use crate::collision::{
    find_polygons_coherent, CollisionScene, Geometry, PointQuery, SurfaceCache,
};
use crate::contact::{Approximation, ContactParams};
use crate::error::{Error, Result};
use crate::hydroelastic::{replayed_polygon, Placed};
use crate::math::Pose;
use crate::multibody::integrate_positions_into;
use crate::multibody::kinematics::{forward_kinematics, MultibodyData};
use crate::multibody::model::{BodyId, MultibodyModel};
use crate::solver::{ConvexProblem, NewtonWorkspace, SolverParams, SolverStats, WarmStart};
use assemble::{assemble_contacts, geometry_poses_into, AssemblyScratch};
use assembled::Assembled;
use report::step_report_into;

/// Default contact margin δ_margin (m): pairs closer than this are candidate contacts, which
/// [`Speculative`] admits into the step's problem or not.
pub const DEFAULT_MARGIN: f64 = 0.01;

/// Which candidate pairs apart at the start of the step (`φ0 > 0`, within the margin) enter
/// the problems of SAP and Similar.
///
/// Lagged and regularized Lagged take every candidate: a pair apart pushes only if it would
/// penetrate by the end of the step (`x0 − δt v_n > 0`, ICF eq. (13) discretized) and its
/// friction lags the previous step's normal impulse, zero across a gap, so the margin only
/// keeps bodies from tunnelling. SAP and Similar couple friction into the normal direction: a
/// sliding contact in their problem pushes across a gap up to `μ (δt + τ_d) ‖v_t‖` (SAP) or
/// `μ δt ‖v_t‖` (Similar) wide (gliding, ICF Sec. VII-A, eq. (41)). With the whole margin in
/// their problems a falling, sliding sphere is caught millimetres above the ground and never
/// bounces, and a box on an oscillating belt never lifts, where ICF Fig. 2 shows spurious
/// normal-force peaks (docs/contact-models.md, "Contact margin", has the measurements).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Speculative {
    /// Only touching pairs (`φ0 ≤ 0`) enter SAP's and Similar's problems: a margin of 0 for
    /// them, as Drake's point contact (penetration queries only). Default.
    #[default]
    Touching,
    /// A pair apart also enters SAP's and Similar's problems if, at its normal velocity at the
    /// start of the step, it would penetrate within the step (`φ0 + δt v_n0 < 0`): gliding then
    /// acts for the step before touchdown, and never holds a body above the ground.
    Approaching,
    /// Every pair within the margin enters every problem: SAP and Similar act across the gap
    /// whenever the contact slides (ICF eq. (41)), touching down early (ICF Fig. 5's "action
    /// at a distance") and gliding at a steady height.
    All,
}

impl Speculative {
    /// All modes, in documentation order.
    pub const ALL: [Speculative; 3] = [
        Speculative::Touching,
        Speculative::Approaching,
        Speculative::All,
    ];

    /// The problem-file name (`touching`, `approaching`, `all`).
    pub fn name(&self) -> &'static str {
        match self {
            Speculative::Approaching => "approaching",
            Speculative::Touching => "touching",
            Speculative::All => "all",
        }
    }

    /// Whether a candidate with signed distance `phi0` (m) and normal velocity `v_n0` (m/s,
    /// positive when separating) at the start of a step of `dt` (s) enters the problem of
    /// `approximation`.
    pub fn admits(&self, approximation: Approximation, phi0: f64, v_n0: f64, dt: f64) -> bool {
        let glides = matches!(approximation, Approximation::Sap | Approximation::Similar);
        match self {
            _ if !glides || phi0 <= 0.0 => true,
            Speculative::Approaching => phi0 + dt * v_n0 < 0.0,
            Speculative::Touching => false,
            Speculative::All => true,
        }
    }
}

impl std::fmt::Display for Speculative {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Speculative {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Speculative::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                Error::invalid(
                    "speculative",
                    s,
                    "expected one of touching, approaching, all",
                )
            })
    }
}

/// Settings of the time stepper.
///
/// Made from the defaults and the `with_*` methods (the struct is `#[non_exhaustive]`, so a
/// new setting never breaks code that builds settings); checked by
/// [`StepSettings::validate`] when a simulator is made.
///
/// ```
/// use stiction::prelude::*;
/// let settings = StepSettings::default()
///     .with_dt(5e-4)
///     .with_approximation(Approximation::Sap)
///     .with_contact(ContactParams::default().with_mu(0.3));
/// assert_eq!((settings.dt, settings.contact.mu), (5e-4, 0.3));
/// assert_eq!(settings.margin, stiction::step::DEFAULT_MARGIN);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct StepSettings {
    /// Time step δt (s).
    pub dt: f64,
    /// Contact approximation (default Lagged).
    pub approximation: Approximation,
    /// Contact margin δ_margin (m), default [`DEFAULT_MARGIN`]: the distance within which pairs
    /// are candidate contacts.
    pub margin: f64,
    /// Which candidates apart enter SAP's and Similar's problems (default
    /// [`Speculative::Touching`]).
    pub speculative: Speculative,
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
            speculative: Speculative::default(),
            solver: SolverParams::default(),
            contact: ContactParams::default(),
        }
    }
}

impl StepSettings {
    /// These settings with time step δt (s).
    pub fn with_dt(mut self, dt: f64) -> Self {
        self.dt = dt;
        self
    }

    /// These settings with contact approximation `approximation`.
    pub fn with_approximation(mut self, approximation: Approximation) -> Self {
        self.approximation = approximation;
        self
    }

    /// These settings with contact margin δ_margin (m).
    pub fn with_margin(mut self, margin: f64) -> Self {
        self.margin = margin;
        self
    }

    /// These settings with speculative mode `speculative`.
    pub fn with_speculative(mut self, speculative: Speculative) -> Self {
        self.speculative = speculative;
        self
    }

    /// These settings with Newton solver parameters `solver`.
    pub fn with_solver(mut self, solver: SolverParams) -> Self {
        self.solver = solver;
        self
    }

    /// These settings with `contact` for pairs whose geometries have no parameters of their
    /// own.
    pub fn with_contact(mut self, contact: ContactParams<f64>) -> Self {
        self.contact = contact;
        self
    }

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
    /// The last step's problem and contacts, written over by the next step (their storage
    /// reused), with the buffers the assembly computes in.
    assembled: Assembled<f64>,
    scratch: AssemblyScratch<f64>,
    /// The point-contact query with its lists, the geometries' poses and the pair parameters
    /// of the last step, reused by the next.
    query: PointQuery,
    X_WG: Vec<Pose<f64>>,
    pairs: PairParameters<f64>,
    data: MultibodyData<f64>,
    /// The positions of the kinematics in `data`, the last assembly's; `data_current` is
    /// false before one and after a failed one. Kept apart so that a step does not allocate.
    data_q: DVector<f64>,
    data_current: bool,
    newton: NewtonWorkspace,
    /// The bodies' and geometries' sizes for the warnings.
    extents: warnings::Extents,
    /// The model's own warnings (inertia), not yet reported: they go with the next step.
    pending_warnings: Vec<Warning>,
    /// What the last step leaves for the next one's first Newton iterate.
    warm: WarmMemory,
    /// Buffers a layer above keeps in the simulator from one call to the next (the step
    /// Jacobians', [`crate::derivatives::step_jacobians`], which moves them out and back):
    /// typed there and opaque here, so that the step does not depend on its derivatives.
    pub(crate) kept_buffers: Option<Box<dyn std::any::Any + Send + Sync>>,
}

/// The first Newton iterate of a step ([`SolverParams::warm_start`]) and what the last step
/// left for it: the state it returned and its velocity change `v − v*` from the free motion.
#[derive(Debug, Default)]
struct WarmMemory {
    /// Whether `t`, `q`, `v` and `change` hold the last step's result.
    valid: bool,
    t: f64,
    q: DVector<f64>,
    v: DVector<f64>,
    change: DVector<f64>,
    /// The first iterate of the step under way.
    guess: DVector<f64>,
}

/// `dst = src`, reusing `dst`'s storage when the sizes agree.
pub(crate) fn assign(dst: &mut DVector<f64>, src: &DVector<f64>) {
    if dst.len() == src.len() {
        dst.copy_from(src);
    } else {
        *dst = src.clone();
    }
}

impl WarmMemory {
    /// Whether a step from `state` continues the last one (`state` is what it returned, bit
    /// for bit): only then does the last step's velocity change predict this one's.
    fn continues(&self, state: &State) -> bool {
        self.valid && self.t == state.t && self.q == state.q && self.v == state.v
    }

    /// Writes `v* + (v − v*)` of the last step into `self.guess` for a step from `state`
    /// with free motion `v_star`, if that step continues the last; whether it did.
    fn predict(&mut self, state: &State, v_star: &DVector<f64>) -> bool {
        let continues = self.continues(state) && self.change.len() == v_star.len();
        if continues {
            assign(&mut self.guess, v_star);
            self.guess += &self.change;
        }
        continues
    }

    /// Keeps the result `next` of a step whose free motion was `v_star` for the prediction
    /// of the next ([`WarmStart::PreviousChange`], [`WarmStart::LeastCost`]); forgets it
    /// for the other predictors.
    fn record(&mut self, warm_start: WarmStart, next: &State, v_star: &DVector<f64>) {
        self.valid = matches!(warm_start, WarmStart::PreviousChange | WarmStart::LeastCost);
        if self.valid {
            self.t = next.t;
            assign(&mut self.q, &next.q);
            assign(&mut self.v, &next.v);
            assign(&mut self.change, &next.v);
            self.change -= v_star;
        }
    }
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
            laws::fill_hertz_radius(g);
        }
        laws::check_pair_laws(geometries.iter())?;
        let params = geometries.iter().filter_map(|g| g.contact.as_ref());
        laws::check_barrier_within_margin(params.chain([&settings.contact]), settings.margin)?;
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
        let extents = warnings::Extents::new(&model, &geometries);
        let pending_warnings = warnings::inertia_warnings(&model, &extents);
        Ok(Simulator {
            model,
            settings,
            collision: CollisionScene::new(geometries)?,
            surfaces: SurfaceCache::default(),
            assembled: Assembled::default(),
            scratch: AssemblyScratch::default(),
            query: PointQuery::default(),
            X_WG: Vec::new(),
            pairs: PairParameters {
                default: settings.contact,
                geometry: Vec::new(),
            },
            data,
            data_q: DVector::zeros(0),
            data_current: false,
            newton: NewtonWorkspace::default(),
            extents,
            pending_warnings,
            warm: WarmMemory::default(),
            kept_buffers: None,
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

    /// Keeps the geometries of bodies `a` and `b` from touching each other
    /// ([`CollisionScene::exclude`]).
    pub fn exclude_collisions(&mut self, a: BodyId, b: BodyId) {
        self.collision.exclude(a, b);
    }

    /// Replaces geometry `index` (shape, placement or contact parameters), rebuilding only its
    /// own representations ([`CollisionScene::replace`]: a new modulus or new contact
    /// parameters keep its pressure-field mesh).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for an index out of range or an invalid shape or contact
    /// parameters; the simulator is unchanged then.
    pub fn replace_geometry(&mut self, index: usize, mut geometry: Geometry) -> Result<()> {
        laws::fill_hertz_radius(&mut geometry);
        if let Some(c) = &geometry.contact {
            c.validate()?;
            laws::check_barrier_within_margin([c].into_iter(), self.settings.margin)?;
        }
        let geometries = self.collision.geometries().iter().enumerate();
        laws::check_pair_laws(geometries.map(|(i, g)| if i == index { &geometry } else { g }))?;
        self.collision.replace(index, geometry)?;
        // Its lists of elements were of the old mesh.
        self.surfaces = SurfaceCache::default();
        self.extents = warnings::Extents::new(&self.model, self.collision.geometries());
        Ok(())
    }

    /// Assembles the convex problem of the step from `state` with actuation `u` (nu):
    /// free motion, one geometric query, contact points and potentials (steps 1-2).
    ///
    /// # Errors
    /// Size mismatches, non-finite states, an unsupported geometry pair.
    pub fn assemble(&mut self, state: &State, u: &DVector<f64>) -> Result<StepProblem<f64>> {
        self.assemble_contacts(state, u)?;
        Ok(self.assembled.take_step_problem())
    }

    /// [`Simulator::assemble`] into `out`, whose storage is reused: its convex problem is
    /// swapped with the simulator's (the next assembly writes over the one `out` held, as it
    /// writes over a forward step's) and its contacts are written over. Once the contact
    /// pattern has been seen, the step derivatives assemble their nominal step this way
    /// without allocating.
    ///
    /// # Errors
    /// As [`Simulator::assemble`]; `out` is unchanged then.
    pub fn assemble_into(
        &mut self,
        state: &State,
        u: &DVector<f64>,
        out: &mut StepProblem<f64>,
    ) -> Result<()> {
        self.assemble_contacts(state, u)?;
        self.assembled.step_problem_into(out);
        Ok(())
    }

    /// [`Simulator::assemble`] into `self.assembled`, written over the last step's (no
    /// allocation once the contact pattern has been seen, for point contacts).
    fn assemble_contacts(&mut self, state: &State, u: &DVector<f64>) -> Result<()> {
        if !(state.q.iter().chain(state.v.iter()).all(|x| x.is_finite()) && state.t.is_finite()) {
            return Err(Error::invalid(
                "state",
                "non-finite",
                "positions, velocities and time must be finite",
            ));
        }
        self.pairs.default = self.settings.contact;
        self.pairs.geometry.clear();
        let geometries = self.collision.geometries();
        self.pairs
            .geometry
            .extend(geometries.iter().map(|g| g.contact));
        let input = StepInput {
            model: &self.model,
            geometries,
            pairs: &self.pairs,
            approximation: self.settings.approximation,
            speculative: self.settings.speculative,
            t: state.t,
            dt: self.settings.dt,
            q: &state.q,
            v: &state.v,
            u,
        };
        self.data_current = false;
        let (collision, margin) = (&self.collision, self.settings.margin);
        let (surfaces, query, X_WG) = (&mut self.surfaces, &mut self.query, &mut self.X_WG);
        let witnesses = |model: &MultibodyModel<f64>,
                         data: &MultibodyData<f64>,
                         list: &mut Vec<ContactWitness<f64>>| {
            geometry_poses_into(model, data, collision.geometries(), state.t, X_WG);
            query.find(collision, X_WG, margin)?;
            // Each witness written over the last step's, keeping its feature's box.
            for (i, c) in query.contacts.iter().enumerate() {
                match list.get_mut(i) {
                    Some(w) => w.assign(c),
                    None => list.push(ContactWitness::from(c)),
                }
            }
            list.truncate(query.contacts.len());
            find_polygons_coherent(collision, X_WG, surfaces, |p| {
                list.push(ContactWitness::from(p))
            })
        };
        assemble_contacts(
            &input,
            &mut self.data,
            witnesses,
            &mut self.scratch,
            &mut self.assembled,
        )?;
        assign(&mut self.data_q, &state.q);
        self.data_current = true;
        Ok(())
    }

    /// The body kinematics (poses and motion subspaces) the last assembly computed, if it was
    /// at positions `q`: the derivatives of a step reuse them.
    pub(crate) fn kinematics_at(&self, q: &DVector<f64>) -> Option<&MultibodyData<f64>> {
        (self.data_current && self.data_q == *q).then_some(&self.data)
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
    /// next solve: no allocation once the contact pattern has been seen. With
    /// [`SolverParams::islands`], each contact island is solved apart
    /// ([`NewtonWorkspace::prepare_islands`]).
    ///
    /// # Errors
    /// As [`crate::solver::solve`].
    pub fn solve(
        &mut self,
        problem: &ConvexProblem<f64>,
        v_guess: &DVector<f64>,
        params: &SolverParams,
    ) -> Result<SolverStats> {
        self.prepare_newton(problem, params);
        self.newton.iterate(problem, v_guess, params)
    }

    /// Prepares the Newton workspace for `problem`, split into its contact islands when
    /// `params` asks for them.
    fn prepare_newton(&mut self, problem: &ConvexProblem<f64>, params: &SolverParams) {
        if params.islands {
            self.newton.prepare_islands(problem);
        } else {
            self.newton.prepare(problem);
        }
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
        let mut next = State {
            t: state.t,
            q: DVector::zeros(0),
            v: DVector::zeros(0),
        };
        let mut report = StepReport::default();
        self.step_into(state, u, &mut next, &mut report)?;
        Ok((next, report))
    }

    /// [`Simulator::step`] into `next` and `report`, whose storage is reused: once the
    /// simulator has seen the contact pattern (and `next` and `report` have held a step of
    /// it), a step of point contacts with the Lagged approximation allocates nothing
    /// (`tests/newton_no_alloc.rs`; docs/benchmarks.md, "What a step allocates", lists what
    /// still does). The results are those of [`Simulator::step`], bit
    /// for bit.
    ///
    /// # Errors
    /// As [`Simulator::step`]; `next` and `report` hold no step then.
    pub fn step_into(
        &mut self,
        state: &State,
        u: &DVector<f64>,
        next: &mut State,
        report: &mut StepReport,
    ) -> Result<()> {
        self.assemble_contacts(state, u)?;
        // Out of `self` while the solve borrows it mutably; back before returning.
        let assembled = std::mem::take(&mut self.assembled);
        let stepped = self.step_assembled(&assembled, state, next, report);
        self.assembled = assembled;
        stepped
    }

    /// Steps 3-4 of a step from `state` whose problem is `assembled`, into `next` and
    /// `report`.
    fn step_assembled(
        &mut self,
        assembled: &Assembled<f64>,
        state: &State,
        next: &mut State,
        report: &mut StepReport,
    ) -> Result<()> {
        let dt = self.settings.dt;
        let params = self.settings.solver;
        let problem = &assembled.problem;
        let predicted = self.warm.predict(state, &problem.v_star);
        let guess = std::mem::take(&mut self.warm.guess);
        let solved = match params.warm_start {
            WarmStart::Start => self.solve(problem, &state.v, &params),
            WarmStart::Free => self.solve(problem, &problem.v_star, &params),
            WarmStart::PreviousChange if predicted => self.solve(problem, &guess, &params),
            WarmStart::PreviousChange => self.solve(problem, &state.v, &params),
            WarmStart::LeastCost => {
                let candidates = [&state.v, &problem.v_star, &guess];
                let n = if predicted { 3 } else { 2 };
                self.prepare_newton(problem, &params);
                self.newton
                    .iterate_from_least_cost(problem, &candidates[..n], &params)
            }
        };
        self.warm.guess = guess;
        self.warm.valid = false;
        let stats = solved.map_err(|e| self.locate(e, assembled))?;
        let v = self.newton.v();
        integrate_positions_into(&self.model, &state.q, v, dt, &mut next.q);
        if !next.q.iter().all(|x| x.is_finite()) {
            return Err(Error::NonFinite {
                stage: "position update".into(),
                stats: Box::new(stats),
            });
        }
        step_report_into(
            assembled,
            self.newton.gamma(),
            self.newton.v_c(),
            v,
            self.newton.row_impulses(),
            dt,
            stats,
            report,
        );
        report.warnings.append(&mut self.pending_warnings);
        warnings::step_warnings(
            &self.model,
            &self.data,
            self.collision.geometries(),
            &self.extents,
            &report.contacts,
            dt,
            &mut report.warnings,
        );
        next.t = state.t + dt;
        assign(&mut next.v, v);
        self.warm
            .record(params.warm_start, next, &assembled.problem.v_star);
        Ok(())
    }

    /// `error` of a solve on `assembled` as [`Error::Near`] the body of its worst velocity
    /// ([`SolverStats::worst_velocity`]) with the geometries that body touched in the step;
    /// unchanged when it names no velocity.
    fn locate(&self, error: Error, assembled: &Assembled<f64>) -> Error {
        let Some(k) = error.solver_stats().and_then(|s| s.worst_velocity) else {
            return error;
        };
        let Some(b) = self
            .model
            .joints
            .iter()
            .position(|j| j.v_start <= k && k < j.v_start + j.kind.nv())
        else {
            return error;
        };
        let (body, geometries) = (BodyId::Body(b), self.collision.geometries());
        let mut contacts: Vec<String> = assembled
            .frames
            .iter()
            .filter_map(|f| match f.bodies {
                (a, _) if a == body => Some(geometries[f.geometries.1].name.clone()),
                (_, b) if b == body => Some(geometries[f.geometries.0].name.clone()),
                _ => None,
            })
            .collect();
        contacts.sort();
        contacts.dedup();
        Error::Near {
            body: self.model.bodies[b].name.clone(),
            contacts,
            source: Box::new(error),
        }
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
