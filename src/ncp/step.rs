//! The geometrically implicit time step (Xie & Chakraborty Sec. III-D, IV-B): one MNCP per
//! step in the end-of-step velocities, the ECPs and the contact wrenches, solved by
//! semismooth Newton from the previous step's solution; positions follow eq. (8).
#![allow(non_snake_case)]

use std::ops::ControlFlow;

use nalgebra::{DVector, Matrix3, Quaternion, Vector3};

use crate::collision::Geometry;
use crate::error::{Error, Result};
use crate::math::Pose;
use crate::multibody::model::BodyId;
use crate::multibody::{JointKind, MultibodyModel};
use crate::ncp::ecp::{frame_helper, initial_multipliers};
use crate::ncp::friction::FrictionEllipsoid;
use crate::ncp::inequalities::ConvexInequalities;
use crate::ncp::newton::{
    scaled_levenberg_marquardt, semismooth_newton, smoothing_continuation, NcpSolverParams,
    NcpStats,
};
use crate::ncp::problem::{
    Attachment, MixedComplementarityProblem, NcpBody, NcpPair, PairSide, Scales, WorstResidual,
};
use crate::simulate::RunEnd;
use crate::step::{PairParameters, State};

/// Starting smoothing parameters ε of the fallback continuation ([`smoothing_continuation`]),
/// tried in turn: measured on the cylinder rolling into a box face (`tests/ncp_cases.rs`,
/// docs/steppers.md), 1e-2 solves most impacts and 1e-1 some of the rest.
const CONTINUATION_SMOOTHING: [f64; 2] = [1e-2, 1e-1];

/// Iterations and line-search iterations spent by a failed solve.
fn spent_iterations(error: &Error) -> (usize, usize) {
    match error {
        Error::NcpNotConverged { stats } => (stats.iterations, stats.line_search_iterations),
        _ => (0, 0),
    }
}

fn add(total: &mut (usize, usize), more: (usize, usize)) {
    total.0 += more.0;
    total.1 += more.1;
}

/// A multiplier above this counts its inequality as active (a facet in contact, Sec. VI-C).
/// The solver's tolerance (1e-10) bounds the multipliers of inactive inequalities.
pub const ACTIVE_MULTIPLIER: f64 = 1e-7;

/// An impulse applied to a body at given times (Sec. VI-B, VI-C: "we provide an impulse").
#[derive(Clone, Debug, PartialEq)]
pub struct AppliedImpulse {
    /// Model body index (a free body).
    pub body: usize,
    /// Time of the first application (s).
    pub start: f64,
    /// Repeat period (s); `None` applies once.
    pub period: Option<f64>,
    /// End of a repeating impulse (s): applications at `start + k period < until`; `None`
    /// repeats to the end. An impulse `f δt` every step from `start` to `until` is the constant
    /// generalized force `f` of a phase (Sec. VI-D: "apply a generalized force").
    pub until: Option<f64>,
    /// Angular impulse (N·m·s, world).
    pub angular: Vector3<f64>,
    /// Linear impulse (N·s, world), at the centre of mass.
    pub linear: Vector3<f64>,
}

impl AppliedImpulse {
    /// Whether an application time `start + k period` (k ≥ 0, before `until`) falls in the
    /// step `[t, t + dt)`.
    pub fn applies(&self, t: f64, dt: f64) -> bool {
        let eps = 1e-9 * dt;
        if t + dt - eps <= self.start {
            return false;
        }
        match self.period {
            None => self.start >= t - eps,
            Some(period) => {
                let k = ((t - eps - self.start) / period).ceil().max(0.0);
                let at = self.start + k * period;
                at < t + dt - eps && self.until.is_none_or(|u| at < u - eps)
            }
        }
    }
}

/// Settings of the geometrically implicit stepper.
#[derive(Clone, Debug, PartialEq)]
pub struct NcpSettings {
    /// Time step δt (s).
    pub dt: f64,
    /// Semi-axes of the friction ellipsoid (eq. (6)); its μ is replaced by each pair's.
    pub limit_surface: FrictionEllipsoid,
    /// Solver parameters.
    pub solver: NcpSolverParams,
    /// Applied impulses.
    pub impulses: Vec<AppliedImpulse>,
}

impl Default for NcpSettings {
    fn default() -> Self {
        NcpSettings {
            dt: 1e-2,
            limit_surface: FrictionEllipsoid::default(),
            solver: NcpSolverParams::default(),
            impulses: Vec::new(),
        }
    }
}

/// What one contact pair did during a step (Sec. III-A): the ECP, the wrench and the active
/// facets.
#[derive(Clone, Debug, PartialEq)]
pub struct NcpContactResult {
    /// Body A, carrying G (the wrench on it is the opposite).
    pub body_a: BodyId,
    /// Body B, carrying F (the wrench is on it).
    pub body_b: BodyId,
    /// Geometry indices (A, B).
    pub geometries: (usize, usize),
    /// The ECP `a1` on B (m, world).
    pub ecp: Vector3<f64>,
    /// The point `a2` on A (m, world); equal to the ECP in contact.
    pub point_a: Vector3<f64>,
    /// Unit normal n out of A (world).
    pub normal: Vector3<f64>,
    /// Tangent t (world).
    pub tangent: Vector3<f64>,
    /// Tangent o = n × t (world).
    pub bitangent: Vector3<f64>,
    /// Gap δ at the end of the step (m, ≥ 0).
    pub gap: f64,
    /// Impulses `(p_n, p_t, p_o, p_r)` (N·s, N·s, N·s, N·m·s) on B.
    pub impulse: [f64; 4],
    /// Friction multiplier σ (m/s): the weighted slip speed while sliding.
    pub sigma: f64,
    /// Multipliers l1 of B's inequalities.
    pub multipliers_b: Vec<f64>,
    /// Multipliers l2 of A's inequalities.
    pub multipliers_a: Vec<f64>,
    /// Active facets of B (multipliers above [`ACTIVE_MULTIPLIER`]).
    pub facets: usize,
    /// Sliding velocities `(W_tᵀν⁺, W_oᵀν⁺)` (m/s) and relative spin `W_rᵀν⁺` (rad/s).
    pub velocity: [f64; 3],
}

/// Report of one step.
#[derive(Clone, Debug, PartialEq)]
pub struct NcpStepReport {
    /// Solver statistics.
    pub stats: NcpStats,
    /// One result per pair.
    pub contacts: Vec<NcpContactResult>,
}

/// A recorded rollout of the geometrically implicit stepper.
#[derive(Clone, Debug, Default)]
pub struct NcpRecording {
    /// States at t = 0, δt, … (steps + 1).
    pub states: Vec<State>,
    /// One report per step (steps).
    pub reports: Vec<NcpStepReport>,
}

#[derive(Clone, Debug)]
struct PairTemplate {
    f: PairSide,
    g: PairSide,
    geometries: (usize, usize),
    bodies: (BodyId, BodyId),
    mu: f64,
}

/// A scene ready for geometrically implicit stepping: free bodies, their convex inequality
/// descriptions and every pair between them (and with fixed geometry).
#[derive(Clone, Debug)]
pub struct NcpSimulator {
    /// Settings.
    pub settings: NcpSettings,
    gravity: Vector3<f64>,
    masses: Vec<(f64, Matrix3<f64>)>,
    q_starts: Vec<(usize, usize)>,
    sizes: Vec<f64>,
    nq: usize,
    nv: usize,
    pairs: Vec<PairTemplate>,
    warm: Vec<Option<Vec<f64>>>,
    helpers: Vec<Vector3<f64>>,
    /// Body and geometry names, for errors that say where a solve failed.
    body_names: Vec<String>,
    geometry_names: Vec<String>,
}

impl NcpSimulator {
    /// A stepper for `model` and `geometries`; each pair's μ comes from `parameters`.
    ///
    /// Every body must be a free body at the world (identity joint frame, centre of mass at
    /// the body origin), prescribed bodies are not supported, and geometries on bodies must be
    /// boxes, cylinders or spheres (half-spaces on the world).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming the body or geometry that does not fit, or invalid
    /// settings.
    pub fn new(
        model: &MultibodyModel<f64>,
        geometries: &[Geometry],
        parameters: &PairParameters<f64>,
        settings: NcpSettings,
    ) -> Result<Self> {
        if !(settings.dt > 0.0 && settings.dt.is_finite()) {
            return Err(Error::invalid(
                "dt",
                settings.dt,
                "must be positive and finite (s)",
            ));
        }
        settings.limit_surface.validate()?;
        if let Some(p) = model.prescribed.first() {
            return Err(Error::invalid(
                &format!("body `{}`", p.name),
                "prescribed",
                "the ncp stepper supports free bodies only",
            ));
        }
        for (b, (body, joint)) in model.bodies.iter().zip(&model.joints).enumerate() {
            let free = joint.kind == JointKind::Free
                && joint.parent.is_none()
                && joint.X_PJ == Pose::identity()
                && body.inertia.com.norm() == 0.0;
            if !free {
                return Err(Error::invalid(
                    &format!("body `{}`", body.name),
                    joint.kind.name(),
                    "the ncp stepper needs free bodies at the world with the centre of mass at the body origin",
                ));
            }
            for imp in settings.impulses.iter().filter(|i| i.body == b) {
                if imp.period.is_some_and(|p| !(p > 0.0 && p.is_finite())) {
                    return Err(Error::invalid(
                        "impulse period",
                        format!("{:?}", imp.period),
                        "must be positive and finite (s)",
                    ));
                }
            }
        }
        if let Some(imp) = settings
            .impulses
            .iter()
            .find(|i| i.body >= model.bodies.len())
        {
            return Err(Error::invalid("impulse body", imp.body, "no such body"));
        }
        let mut sides = Vec::with_capacity(geometries.len());
        for g in geometries {
            let shape = ConvexInequalities::from_shape(&g.shape).map_err(|e| {
                Error::invalid(
                    &format!("geometry `{}`", g.name),
                    g.shape.kind(),
                    &e.to_string(),
                )
            })?;
            let (attachment, X_BG) = match g.body {
                BodyId::World => (Attachment::World, g.X_BG),
                BodyId::Body(b) => (Attachment::Body(b), g.X_BG),
                BodyId::Prescribed(_) => {
                    return Err(Error::invalid(
                        &format!("geometry `{}`", g.name),
                        "on a prescribed body",
                        "the ncp stepper supports free bodies only",
                    ))
                }
            };
            sides.push(PairSide {
                shape,
                attachment,
                X_BG,
            });
        }
        let mut pairs = Vec::new();
        for i in 0..geometries.len() {
            for j in i + 1..geometries.len() {
                let (a, b) = (geometries[i].body, geometries[j].body);
                if a == b || (a == BodyId::World && b == BodyId::World) {
                    continue;
                }
                // G is the world geometry when there is one, else the first listed.
                let (gi, fi) = if b == BodyId::World { (j, i) } else { (i, j) };
                if sides[fi].shape == ConvexInequalities::Plane {
                    continue;
                }
                pairs.push(PairTemplate {
                    f: sides[fi].clone(),
                    g: sides[gi].clone(),
                    geometries: (gi, fi),
                    bodies: (geometries[gi].body, geometries[fi].body),
                    mu: parameters.pair(gi, fi).mu,
                });
            }
        }
        let warm = vec![None; pairs.len()];
        // A body's size: the largest of its geometries' sizes, placement included.
        let mut sizes = vec![0.0_f64; model.bodies.len()];
        for side in &sides {
            if let Attachment::Body(b) = side.attachment {
                sizes[b] = sizes[b].max(side.shape.size() + side.X_BG.p.norm());
            }
        }
        for s in &mut sizes {
            if *s == 0.0 {
                *s = 1.0;
            }
        }
        Ok(NcpSimulator {
            settings,
            gravity: model.gravity,
            masses: model
                .bodies
                .iter()
                .map(|b| (b.inertia.mass, b.inertia.inertia_com))
                .collect(),
            q_starts: model
                .joints
                .iter()
                .map(|j| (j.q_start, j.v_start))
                .collect(),
            sizes,
            nq: model.nq(),
            nv: model.nv(),
            helpers: vec![Vector3::x(); pairs.len()],
            pairs,
            warm,
            body_names: model.bodies.iter().map(|b| b.name.clone()).collect(),
            geometry_names: geometries.iter().map(|g| g.name.clone()).collect(),
        })
    }

    /// Number of contact pairs considered at every step.
    pub fn num_pairs(&self) -> usize {
        self.pairs.len()
    }

    /// Forgets the previous solution, so the next step starts from geometry alone.
    pub fn reset_warm_start(&mut self) {
        self.warm.iter_mut().for_each(|w| *w = None);
    }

    /// The MNCP of the step from `state` (with this simulator's warm start).
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] for a state of the wrong size.
    pub fn problem(&self, state: &State) -> Result<MixedComplementarityProblem> {
        for (what, expected, found) in
            [("q", self.nq, state.q.len()), ("v", self.nv, state.v.len())]
        {
            if expected != found {
                return Err(Error::DimensionMismatch {
                    what: what.into(),
                    expected,
                    found,
                });
            }
        }
        let dt = self.settings.dt;
        let g = self.gravity.norm();
        let bodies: Vec<NcpBody> = self
            .masses
            .iter()
            .zip(&self.q_starts)
            .enumerate()
            .map(|(b, ((mass, inertia_B), (qs, vs)))| {
                let q = &state.q;
                let v = &state.v;
                let mut applied = [Vector3::zeros(); 2];
                for imp in &self.settings.impulses {
                    if imp.body == b && imp.applies(state.t, dt) {
                        applied[0] += imp.angular;
                        applied[1] += imp.linear;
                    }
                }
                NcpBody {
                    mass: *mass,
                    inertia_B: *inertia_B,
                    x: Vector3::new(q[*qs], q[qs + 1], q[qs + 2]),
                    q: Quaternion::new(q[qs + 3], q[qs + 4], q[qs + 5], q[qs + 6]),
                    w: Vector3::new(v[*vs], v[vs + 1], v[vs + 2]),
                    v: Vector3::new(v[vs + 3], v[vs + 4], v[vs + 5]),
                    applied,
                    scales: Scales::new(*mass, self.sizes[b], g, dt),
                }
            })
            .collect();
        let mut problem = MixedComplementarityProblem {
            dt,
            gravity: self.gravity,
            bodies,
            pairs: Vec::with_capacity(self.pairs.len()),
        };
        for p in &self.pairs {
            problem.pairs.push(NcpPair {
                f: p.f.clone(),
                g: p.g.clone(),
                friction: FrictionEllipsoid {
                    mu: p.mu,
                    ..self.settings.limit_surface
                },
                helper: Vector3::x(),
                scales: match p.f.attachment {
                    Attachment::Body(b) => problem.bodies[b].scales,
                    Attachment::World => Scales::new(1.0, p.f.shape.size(), g, dt),
                },
            });
        }
        Ok(problem)
    }

    /// The start point of the solve: free-motion velocities and, per pair, the previous
    /// solution (unless `cold`) or a geometric guess (support points along the normal,
    /// Sec. IV-A).
    fn initial_guess(&self, problem: &MixedComplementarityProblem, cold: bool) -> DVector<f64> {
        let warm: &[Option<Vec<f64>>] = if cold { &[] } else { &self.warm };
        let mut z = DVector::zeros(problem.unknowns());
        let dt = problem.dt;
        for (b, body) in problem.bodies.iter().enumerate() {
            // A body resting on a loaded pair of the previous step starts at its velocity;
            // any other in free fall.
            let loaded = self.pairs.iter().zip(warm).any(|(p, w)| {
                let on_b =
                    p.f.attachment == Attachment::Body(b) || p.g.attachment == Attachment::Body(b);
                on_b && w.as_ref().is_some_and(|w| w[7] > 0.0)
            });
            let fall = if loaded { 0.0 } else { dt };
            z.fixed_rows_mut::<3>(6 * b).copy_from(&body.w);
            let v = body.v + problem.gravity * fall + body.applied[1] / body.mass;
            z.fixed_rows_mut::<3>(6 * b + 3).copy_from(&v);
        }
        let start: Vec<f64> = z.iter().copied().collect();
        for c in 0..problem.pairs.len() {
            let o = problem.pair_offset(c);
            let size = problem.pairs[c].unknowns();
            let mut values = match warm.get(c) {
                Some(Some(w)) => w.clone(),
                _ => geometric_guess(problem, c, &start),
            };
            // An unloaded pair starts with σ at the speed scale: with p_n = 0 the friction
            // conditions `p σ = 0` only pin p = 0 quickly when σ > 0 (at p = σ = 0 their
            // Jacobian vanishes and Newton converges linearly).
            if values[7] <= 0.0 {
                values[11] = values[11].max(problem.pairs[c].scales.speed);
            }
            z.rows_mut(o, size).copy_from_slice(&values);
        }
        z
    }

    /// Advances `state` by one step.
    ///
    /// # Errors
    /// [`Error::NcpNotConverged`] with the solver statistics when the MNCP is not solved to
    /// tolerance (the state is not advanced); [`Error::DimensionMismatch`] for a state of the
    /// wrong size.
    pub fn step(&mut self, state: &State) -> Result<(State, NcpStepReport)> {
        let mut problem = self.problem(state)?;
        let mut z = self.initial_guess(&problem, false);
        // The frame helper is fixed for the solve, away from the starting normal, and kept
        // from step to step while it stays away, so that warm-started (p_t, p_o) keep their
        // meaning.
        for c in 0..problem.pairs.len() {
            let n = start_normal(&problem, c, z.as_slice());
            if self.helpers[c].dot(&n).abs() > 0.8 {
                self.helpers[c] = frame_helper(&n);
            }
            problem.pairs[c].helper = self.helpers[c];
        }
        let params = &self.settings.solver;
        let solve = |z: &mut DVector<f64>| {
            semismooth_newton(z, problem.pairs.len(), params, |z| {
                problem.fischer_burmeister_system(z)
            })
        };
        // A warm start from the last step can sit in a basin of the merit with no solution
        // (a cube dropped 5 mm onto an edge: ψ stationary at ‖Φ‖∞ = 2.8e-3); the cold,
        // geometric start is then tried, then the smoothing continuation from both starts
        // with their separated pairs' ECPs recentred (a cylinder rolling into a box face
        // parallel to its axis, docs/steppers.md), and last Marquardt-scaled
        // Levenberg–Marquardt, before the step fails.
        let stats = match solve(&mut z) {
            Ok(stats) => stats,
            Err(first_error) => {
                let mut spent = spent_iterations(&first_error);
                let mut solved = None;
                let mut starts = vec![];
                if self.warm.iter().any(Option::is_some) {
                    let mut cold = self.initial_guess(&problem, true);
                    match solve(&mut cold) {
                        Ok(stats) => solved = Some((cold, stats)),
                        Err(e) => {
                            add(&mut spent, spent_iterations(&e));
                            starts.push(z.clone());
                            starts.push(self.initial_guess(&problem, true));
                        }
                    }
                } else {
                    starts.push(z.clone());
                }
                'fallback: for smoothing in CONTINUATION_SMOOTHING {
                    if solved.is_some() {
                        break;
                    }
                    for start in &starts {
                        let mut candidate = start.clone();
                        recentre_separated(&problem, &mut candidate);
                        match smoothing_continuation(
                            &mut candidate,
                            problem.pairs.len(),
                            params,
                            smoothing,
                            |z, e| problem.smoothed_fischer_burmeister_system(z, e),
                        ) {
                            Ok(stats) => {
                                solved = Some((candidate, stats));
                                break 'fallback;
                            }
                            Err(e) => add(&mut spent, spent_iterations(&e)),
                        }
                    }
                }
                // Last, Marquardt-scaled Levenberg–Marquardt from the unmodified warm and cold
                // starts and their recentred versions (a cylinder against a box face at rest or
                // after the impact, where the continuation fails: docs/steppers.md).
                if solved.is_none() {
                    let warm = self.initial_guess(&problem, false);
                    let cold = self.initial_guess(&problem, true);
                    let mut starts = vec![warm.clone(), cold.clone()];
                    for mut start in [warm, cold] {
                        recentre_separated(&problem, &mut start);
                        if !starts.contains(&start) {
                            starts.push(start);
                        }
                    }
                    for mut candidate in starts {
                        match scaled_levenberg_marquardt(
                            &mut candidate,
                            problem.pairs.len(),
                            params,
                            |z| problem.fischer_burmeister_system(z),
                        ) {
                            Ok(stats) => {
                                solved = Some((candidate, stats));
                                break;
                            }
                            Err(e) => add(&mut spent, spent_iterations(&e)),
                        }
                    }
                }
                match solved {
                    Some((solution, mut stats)) => {
                        add(&mut spent, (stats.iterations, stats.line_search_iterations));
                        (stats.iterations, stats.line_search_iterations) = spent;
                        z = solution;
                        stats
                    }
                    None => return Err(self.locate(first_error, &problem, z.as_slice())),
                }
            }
        };
        let zs = z.as_slice();
        let mut q = state.q.clone();
        let mut v = state.v.clone();
        for (b, (qs, vs)) in self.q_starts.iter().enumerate() {
            let end = problem.body_pose(b, zs);
            let w = Vector3::new(zs[6 * b], zs[6 * b + 1], zs[6 * b + 2]);
            let quat = crate::math::integrate_quaternion(&problem.bodies[b].q, &w, problem.dt);
            q.rows_mut(*qs, 3).copy_from(&end.p);
            q.rows_mut(qs + 3, 4)
                .copy_from_slice(&[quat.w, quat.i, quat.j, quat.k]);
            v.rows_mut(*vs, 6).copy_from_slice(&zs[6 * b..6 * b + 6]);
        }
        let mut contacts = Vec::with_capacity(problem.pairs.len());
        for (c, template) in self.pairs.iter().enumerate() {
            let o = problem.pair_offset(c);
            let size = problem.pairs[c].unknowns();
            self.warm[c] = Some(zs[o..o + size].to_vec());
            contacts.push(contact_result(&problem, c, zs, template));
        }
        let next = State {
            t: state.t + problem.dt,
            q,
            v,
        };
        Ok((next, NcpStepReport { stats, contacts }))
    }
}

impl NcpSimulator {
    /// `error` as [`Error::Near`], naming the body whose momentum balance or contact is
    /// furthest from solved at the failed iterate `z` ([`MixedComplementarityProblem::worst_residual`])
    /// and the geometries it touches there (pairs with a gap below a tenth of its size).
    fn locate(&self, error: Error, problem: &MixedComplementarityProblem, z: &[f64]) -> Error {
        let touching = |b: usize| -> Vec<String> {
            let mut names: Vec<String> = (0..problem.pairs.len())
                .filter(|&c| problem.pair_solution(z, c).gap <= 0.1 * self.sizes[b])
                .filter_map(|c| match self.pairs[c].bodies {
                    (BodyId::Body(g), _) if g == b => {
                        Some(self.geometry_names[self.pairs[c].geometries.1].clone())
                    }
                    (_, BodyId::Body(f)) if f == b => {
                        Some(self.geometry_names[self.pairs[c].geometries.0].clone())
                    }
                    _ => None,
                })
                .collect();
            names.sort();
            names.dedup();
            names
        };
        let (body, contacts) = match problem.worst_residual(z) {
            Some(WorstResidual::Body(b)) => (b, touching(b)),
            Some(WorstResidual::Pair(c)) => match self.pairs[c].bodies {
                // F is always on a body; G is the world or another body.
                (_, BodyId::Body(f)) => (
                    f,
                    vec![self.geometry_names[self.pairs[c].geometries.0].clone()],
                ),
                _ => return error,
            },
            None => return error,
        };
        Error::Near {
            body: self.body_names[body].clone(),
            contacts,
            source: Box::new(error),
        }
    }
}

/// The normal `n = Σ_j l2_j ∇g_j(a2)` of pair `c` at `z`, or the vertical if it vanishes.
fn start_normal(problem: &MixedComplementarityProblem, c: usize, z: &[f64]) -> Vector3<f64> {
    let pair = &problem.pairs[c];
    let s = problem.pair_solution(z, c);
    let X_WG = problem.side_pose(&pair.g, z);
    let n: Vector3<f64> =
        s.l2.iter()
            .enumerate()
            .map(|(j, l)| pair.g.shape.world(j, &X_WG, &s.a2).1 * *l)
            .sum();
    if n.norm() > 1e-12 {
        n.normalize()
    } else {
        Vector3::z()
    }
}

/// A geometric start for pair `c` (12 + m + n values): the normal n0 out of G (the plane's
/// normal, or the direction between the geometry origins), `a1` the support point of F along
/// −n0, `a2` that of G along n0 (the projection of a1 on a plane), δ = n0ᵀ(a1 − a2), the
/// multipliers of the active inequalities for those normals, and zero impulses.
fn geometric_guess(problem: &MixedComplementarityProblem, c: usize, z: &[f64]) -> Vec<f64> {
    let pair = &problem.pairs[c];
    let X_WF = problem.side_pose(&pair.f, z);
    let X_WG = problem.side_pose(&pair.g, z);
    let n0 = if pair.g.shape == ConvexInequalities::Plane {
        X_WG.R.column(2).into_owned()
    } else {
        separating_direction(&pair.f.shape, &X_WF, &pair.g.shape, &X_WG)
    };
    let dF = X_WF.R.transpose() * (-n0);
    let a1_F = pair.f.shape.support(&dF);
    let a1 = X_WF.transform_point(&a1_F);
    let a2 = if pair.g.shape == ConvexInequalities::Plane {
        a1 - n0 * n0.dot(&(a1 - X_WG.p))
    } else {
        X_WG.transform_point(&pair.g.shape.support(&(X_WG.R.transpose() * n0)))
    };
    let a2_G = X_WG.R.transpose() * (a2 - X_WG.p);
    let scale_f = a1_F.norm().max(1e-3);
    let scale_g = a2_G.norm().max(1e-3);
    let l1 = initial_multipliers(&pair.f.shape, &a1_F, &dF, scale_f);
    let l2 = initial_multipliers(&pair.g.shape, &a2_G, &(X_WG.R.transpose() * n0), scale_g);
    let mut values = Vec::with_capacity(pair.unknowns());
    values.extend(a1.iter());
    values.extend(a2.iter());
    let gap = n0.dot(&(a1 - a2));
    values.push(gap);
    // A pair within one step of free fall of touching starts by carrying the part of F's
    // weight along its normal (none against a wall).
    let dt = problem.dt;
    let g = problem.gravity.norm();
    let p_n = match pair.f.attachment {
        Attachment::Body(b) if gap <= g * dt * dt => {
            problem.bodies[b].mass * (-problem.gravity.dot(&n0)).max(0.0) * dt
        }
        _ => 0.0,
    };
    values.extend([p_n, 0.0, 0.0, 0.0, 0.0]);
    values.extend(l1);
    values.extend(l2);
    values
}

/// The direction n (out of G) of largest separation `min_F nᵀξ − max_G nᵀξ` among the
/// face normals of both bodies and the direction between their origins: the separating-axis
/// test restricted to faces, a start for the normal of a convex-convex pair.
fn separating_direction(
    F: &ConvexInequalities,
    X_WF: &Pose<f64>,
    G: &ConvexInequalities,
    X_WG: &Pose<f64>,
) -> Vector3<f64> {
    let faces = |shape: &ConvexInequalities, X: &Pose<f64>, sign: f64| -> Vec<Vector3<f64>> {
        match shape {
            ConvexInequalities::HalfSpaces { normals, .. } => {
                normals.iter().map(|n| X.R * n * sign).collect()
            }
            _ => Vec::new(),
        }
    };
    let centre = X_WF.p - X_WG.p;
    let mut candidates = faces(G, X_WG, 1.0);
    candidates.extend(faces(F, X_WF, -1.0));
    if centre.norm() > 1e-12 {
        candidates.push(centre.normalize());
    }
    let separation = |n: &Vector3<f64>| {
        let lowest_F = X_WF.transform_point(&F.support(&(X_WF.R.transpose() * -n)));
        let highest_G = X_WG.transform_point(&G.support(&(X_WG.R.transpose() * n)));
        n.dot(&(lowest_F - highest_G))
    };
    candidates
        .into_iter()
        .map(|n| (separation(&n), n))
        .fold((f64::NEG_INFINITY, Vector3::z()), |best, c| {
            if c.0 > best.0 {
                c
            } else {
                best
            }
        })
        .1
}

fn contact_result(
    problem: &MixedComplementarityProblem,
    c: usize,
    z: &[f64],
    template: &PairTemplate,
) -> NcpContactResult {
    let pair = &problem.pairs[c];
    let s = problem.pair_solution(z, c);
    let n = start_normal(problem, c, z);
    let (t, o) = crate::ncp::ecp::contact_frame(&n, &pair.helper);
    let velocity_of = |a: Attachment| match a {
        Attachment::World => (Vector3::zeros(), Vector3::zeros()),
        Attachment::Body(b) => {
            let x = problem.body_pose(b, z);
            let w = Vector3::new(z[6 * b], z[6 * b + 1], z[6 * b + 2]);
            let v = Vector3::new(z[6 * b + 3], z[6 * b + 4], z[6 * b + 5]);
            (v + w.cross(&(s.a1 - x.p)), w)
        }
    };
    let (vf, wf) = velocity_of(pair.f.attachment);
    let (vg, wg) = velocity_of(pair.g.attachment);
    let v_rel = vf - vg;
    NcpContactResult {
        body_a: template.bodies.0,
        body_b: template.bodies.1,
        geometries: template.geometries,
        ecp: s.a1,
        point_a: s.a2,
        normal: n,
        tangent: t,
        bitangent: o,
        gap: s.gap,
        impulse: s.p,
        sigma: s.sigma,
        multipliers_b: s.l1.to_vec(),
        multipliers_a: s.l2.to_vec(),
        facets: s.l1.iter().filter(|l| **l > ACTIVE_MULTIPLIER).count(),
        velocity: [t.dot(&v_rel), o.dot(&v_rel), n.dot(&(wf - wg))],
    }
}

/// Number of steps of `sim`'s δt in `duration` (s), checked by [`crate::budget::steps`] for
/// the recording; `field` names what set the duration in errors.
///
/// # Errors
/// [`Error::TooLarge`] when the recording would not fit in memory;
/// [`Error::InvalidParameter`] for a negative or non-finite duration.
pub fn recording_steps(sim: &NcpSimulator, field: &str, duration: f64) -> Result<usize> {
    let per_step = std::mem::size_of::<State>()
        + 8 * (sim.nq + sim.nv)
        + std::mem::size_of::<NcpStepReport>()
        + sim.pairs.len() * std::mem::size_of::<NcpContactResult>();
    crate::budget::steps(field, duration, sim.settings.dt, per_step)
}

/// A rollout of the geometrically implicit stepper that may have stopped early: every
/// completed step is in `recording`.
#[derive(Debug)]
pub struct NcpPartialRun {
    /// States and reports of the steps completed (at least the initial state).
    pub recording: NcpRecording,
    /// Steps planned.
    pub steps_planned: usize,
    /// How it ended.
    pub end: RunEnd,
}

/// Runs `sim` from `initial` for `duration` (s), calling `on_step` after every step.
///
/// # Errors
/// [`recording_steps`]' errors; the first step error as [`Error::Step`] (its index and time,
/// around the step's error with the solver statistics).
pub fn run(
    sim: &mut NcpSimulator,
    initial: &State,
    duration: f64,
    mut on_step: impl FnMut(&State, &NcpStepReport),
) -> Result<NcpRecording> {
    let steps = recording_steps(sim, "duration", duration)?;
    let run = run_steps(sim, initial, steps, |state, report| {
        on_step(state, report);
        ControlFlow::Continue(())
    });
    match run.end {
        RunEnd::Failed(e) => Err(e),
        RunEnd::Complete | RunEnd::Interrupted => Ok(run.recording),
    }
}

/// Runs `steps` steps of `sim` from `initial`, calling `on_step` after every step; `on_step`
/// returning [`ControlFlow::Break`] stops the rollout ([`RunEnd::Interrupted`]), a failing
/// step ends it ([`RunEnd::Failed`]); either way the completed steps are kept.
pub fn run_steps(
    sim: &mut NcpSimulator,
    initial: &State,
    steps: usize,
    mut on_step: impl FnMut(&State, &NcpStepReport) -> ControlFlow<()>,
) -> NcpPartialRun {
    let mut rec = NcpRecording {
        states: Vec::with_capacity(steps + 1),
        reports: Vec::with_capacity(steps),
    };
    rec.states.push(initial.clone());
    let mut end = RunEnd::Complete;
    for k in 0..steps {
        let state = rec.states.last().expect("invariant: initial state pushed");
        let (next, report) = match sim.step(state) {
            Ok(step) => step,
            Err(e) => {
                end = RunEnd::Failed(e.at_step(k, state.t));
                break;
            }
        };
        let flow = on_step(&next, &report);
        rec.states.push(next);
        rec.reports.push(report);
        if flow.is_break() {
            if k + 1 < steps {
                end = RunEnd::Interrupted;
            }
            break;
        }
    }
    NcpPartialRun {
        recording: rec,
        steps_planned: steps,
        end,
    }
}

/// Moves the points `a1, a2` of every separated, unloaded pair of `z` to the centre of the
/// pair's set of closest points (along two directions normal to n, the middle of the overlap
/// of F's support feature along −n and G's along n), with the multipliers of the inequalities
/// active there. Any pair of closest points solves such a pair's conditions (the wrench is
/// zero, Xie & Chakraborty Sec. V); the centre is the start farthest from the ends of a line or
/// face, where the ECP of an impact must usually move.
fn recentre_separated(problem: &MixedComplementarityProblem, z: &mut DVector<f64>) {
    const PERTURBATION: f64 = 1e-6;
    for c in 0..problem.pairs.len() {
        let pair = &problem.pairs[c];
        let s = problem.pair_solution(z.as_slice(), c);
        if s.p[0] > 1e-9 * pair.scales.impulse || s.gap <= 0.0 {
            continue;
        }
        let n = start_normal(problem, c, z.as_slice());
        let X_WF = problem.side_pose(&pair.f, z.as_slice());
        let X_WG = problem.side_pose(&pair.g, z.as_slice());
        let extent = |shape: &ConvexInequalities,
                      X: &Pose<f64>,
                      d: Vector3<f64>,
                      w: &Vector3<f64>| {
            if *shape == ConvexInequalities::Plane {
                None
            } else {
                Some(w.dot(&X.transform_point(&shape.support(&(X.R.transpose() * d.normalize())))))
            }
        };
        let (u, _) = crate::ncp::ecp::contact_frame(&n, &frame_helper(&n));
        let v = n.cross(&u);
        let support = |shape: &ConvexInequalities, X: &Pose<f64>, d: Vector3<f64>| {
            X.transform_point(&shape.support(&(X.R.transpose() * d)))
        };
        let mut a1 = support(&pair.f.shape, &X_WF, -n);
        let mut a2 = if pair.g.shape == ConvexInequalities::Plane {
            a1 - n * n.dot(&(a1 - X_WG.p))
        } else {
            support(&pair.g.shape, &X_WG, n)
        };
        for w in [u, v] {
            let hi_f = extent(&pair.f.shape, &X_WF, -n + w * PERTURBATION, &w);
            let lo_f = extent(&pair.f.shape, &X_WF, -n - w * PERTURBATION, &w);
            let hi_g = extent(&pair.g.shape, &X_WG, n + w * PERTURBATION, &w);
            let lo_g = extent(&pair.g.shape, &X_WG, n - w * PERTURBATION, &w);
            let hi = [hi_f, hi_g]
                .into_iter()
                .flatten()
                .fold(f64::INFINITY, f64::min);
            let lo = [lo_f, lo_g]
                .into_iter()
                .flatten()
                .fold(f64::NEG_INFINITY, f64::max);
            if hi.is_finite() && lo.is_finite() && hi >= lo {
                let mid = 0.5 * (hi + lo);
                a1 += w * (mid - w.dot(&a1));
                a2 += w * (mid - w.dot(&a2));
            }
        }
        let gap = n.dot(&(a1 - a2));
        let a1_F = X_WF.R.transpose() * (a1 - X_WF.p);
        let a2_G = X_WG.R.transpose() * (a2 - X_WG.p);
        let size_f = pair.f.shape.size();
        if pair.f.shape.max_value(&a1_F).abs() > 1e-6 * size_f {
            continue;
        }
        let l1 = initial_multipliers(&pair.f.shape, &a1_F, &(X_WF.R.transpose() * -n), size_f);
        let l2 = initial_multipliers(
            &pair.g.shape,
            &a2_G,
            &(X_WG.R.transpose() * n),
            pair.g.shape.size(),
        );
        let o = problem.pair_offset(c);
        z.rows_mut(o, 3).copy_from(&a1);
        z.rows_mut(o + 3, 3).copy_from(&a2);
        z[o + 6] = gap;
        let m = l1.len();
        z.rows_mut(o + 12, m).copy_from_slice(&l1);
        z.rows_mut(o + 12 + m, l2.len()).copy_from_slice(&l2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A force of a phase: an impulse every 10 ms step from 0.5 s to 0.8 s is applied in the
    /// 30 steps of [0.5, 0.8) and in no other.
    #[test]
    fn a_repeating_impulse_stops_at_until() {
        let imp = AppliedImpulse {
            body: 0,
            start: 0.5,
            period: Some(0.01),
            until: Some(0.8),
            angular: Vector3::zeros(),
            linear: Vector3::x(),
        };
        let dt = 0.01;
        let steps: Vec<usize> = (0..200)
            .filter(|k| imp.applies(*k as f64 * dt, dt))
            .collect();
        assert_eq!(steps, (50..80).collect::<Vec<_>>());
        let forever = AppliedImpulse { until: None, ..imp };
        assert!(forever.applies(1.5, dt));
    }
}
