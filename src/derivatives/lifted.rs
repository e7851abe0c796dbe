//! A step re-assembled in a dual scalar `T`, with directions θ seeded: the state in the tangent
//! space, the actuation, and named parameters. The contacts are those of the f64 step (one
//! geometric query), their feature pairs re-evaluated in `T`; a pressure-field polygon is
//! clipped again from its element pair, replaying the topology the f64 step decided on real
//! parts ([`crate::hydroelastic::replayed_polygon`]), so it keeps its vertices and their
//! derivatives even where one lies within rounding of a clipping plane. The IFT path uses it
//! for named parameters; for the state and controls it is the reference of the analytic
//! columns ([`crate::derivatives::analytic`]).
#![allow(non_snake_case)]

use nalgebra::DVector;

use crate::collision::{FoundPolygon, PolygonContact};
use crate::derivatives::parameters::{lift_scene, LiftedScene, Parameter};
use crate::error::{Error, Result};
use crate::geometry::distance::feature_distance;
use crate::hydroelastic::{replayed_polygon, Placed};
use crate::multibody::MultibodyData;
use crate::scalar::{lit, Scalar};
use crate::solver::FactorGeneration;
use crate::step::{
    assemble_problem, geometry_poses, ContactWitness, Simulator, State, StepInput, StepProblem,
};
use crate::step::{ContactFeature, Speculative};

/// The f64 step everything is differentiated around.
pub struct NominalStep {
    /// State at the start of the step.
    pub state: State,
    /// Actuation (nu).
    pub u: DVector<f64>,
    /// The f64 problem of the step.
    pub problem: StepProblem<f64>,
    /// Converged velocities (nv).
    pub v: DVector<f64>,
    /// Positions after the step (nq).
    pub q_next: DVector<f64>,
    /// The generation of the factor of `H(v)` the derivatives expect: the nominal solve's
    /// own, or that of a refactorization at `v`; `None` when the solve kept no factor.
    pub factor_generation: Option<FactorGeneration>,
}

impl Default for NominalStep {
    /// No step: the storage [`crate::derivatives::ift::nominal_step_into`] writes over.
    fn default() -> Self {
        NominalStep {
            state: State {
                t: 0.0,
                q: DVector::zeros(0),
                v: DVector::zeros(0),
            },
            u: DVector::zeros(0),
            problem: StepProblem::default(),
            v: DVector::zeros(0),
            q_next: DVector::zeros(0),
            factor_generation: None,
        }
    }
}

/// Layout of the directions θ = [δq (nv, tangent), δv (nv), δu (nu), parameters (np)].
#[derive(Clone, Copy, Debug)]
pub struct Directions {
    /// Number of velocities.
    pub nv: usize,
    /// Number of actuators.
    pub nu: usize,
    /// Number of named parameters.
    pub np: usize,
}

impl Directions {
    /// Total number of directions `2 nv + nu + np`.
    pub fn len(&self) -> usize {
        2 * self.nv + self.nu + self.np
    }

    /// True when there are no directions.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A step in `T`: the problem, the lifted start positions and the lifted scene.
pub struct LiftedStep<T: Scalar> {
    /// The step problem.
    pub problem: StepProblem<T>,
    /// Start positions `q0 ⊕ δq`.
    pub q0: DVector<T>,
    /// Start velocities `v0 + δv`.
    pub v0: DVector<T>,
    /// Scene with parameters seeded.
    pub scene: LiftedScene<T>,
}

/// Assembles the step of `nominal` in `T` with `theta[k]` added to direction `k` (derivative
/// parts seed the directions; real parts zero, or a move along a direction whose polygons
/// change topology at first order, `crate::derivatives::topology`).
///
/// The contacts are the nominal step's, its pressure-field polygons replaced by `polygons`
/// when given (the polygons the f64 query found at the moved configuration).
pub fn lifted_step<T: Scalar>(
    sim: &Simulator,
    nominal: &NominalStep,
    params: &[Parameter],
    theta: &[T],
    polygons: Option<&[FoundPolygon]>,
) -> Result<LiftedStep<T>> {
    let nv = sim.model.nv();
    let nu = sim.model.nu();
    let values: Vec<T> = params
        .iter()
        .enumerate()
        .map(|(k, p)| lit::<T>(p.value(sim)) + theta[2 * nv + nu + k])
        .collect();
    let scene = lift_scene::<T>(sim, params, &values);
    let dq = DVector::from_fn(nv, |i, _| theta[i]);
    let q0 = scene.model.retract(&nominal.state.q.map(lit::<T>), &dq);
    let v0 = DVector::from_fn(nv, |i, _| lit::<T>(nominal.state.v[i]) + theta[nv + i]);
    let u = DVector::from_fn(nu, |i, _| lit::<T>(nominal.u[i]) + theta[2 * nv + i]);
    let input = StepInput {
        model: &scene.model,
        geometries: sim.geometries(),
        pairs: &scene.pairs,
        approximation: sim.settings.approximation,
        // The nominal step's contacts, already admitted: replayed as they are.
        speculative: Speculative::All,
        t: nominal.state.t,
        dt: sim.settings.dt,
        q: &q0,
        v: &v0,
        u: &u,
    };
    let mut data = MultibodyData::new(&scene.model);
    let geometries = sim.geometries();
    let problem = assemble_problem(&input, &mut data, |model, data| {
        let X_WG = geometry_poses(model, data, geometries, nominal.state.t);
        let side = |i: usize| {
            sim.collision().hydro(i).map(|geometry| Placed {
                geometry,
                X_WG: X_WG[i],
                modulus: scene.moduli[i],
            })
        };
        let polygon = |a: usize, b: usize, found: PolygonContact| {
            let (pa, pb) = side(a).zip(side(b)).ok_or_else(|| {
                Error::invalid(
                    "hydroelastic polygon",
                    format!("{:?}", found.elements),
                    "a polygon between geometries without pressure-field meshes",
                )
            })?;
            let polygon =
                replayed_polygon(&pa, &pb, found.elements, found.topology).ok_or_else(|| {
                    Error::invalid(
                        "hydroelastic polygon",
                        format!("{:?}", found.elements),
                        "a clip topology that does not replay on its elements",
                    )
                })?;
            Ok(ContactWitness::polygon(a, b, &polygon, found))
        };
        let nominal_contacts = nominal
            .problem
            .contacts
            .iter()
            .filter(|c| polygons.is_none() || c.feature.polygon().is_none());
        let moved = polygons
            .unwrap_or_default()
            .iter()
            .map(|f| polygon(f.geometry_a, f.geometry_b, PolygonContact::from(&f.polygon)));
        nominal_contacts
            .map(|c| {
                let (a, b) = (c.geometry_a, c.geometry_b);
                match &c.feature {
                    ContactFeature::Point(feature) => {
                        let d = feature_distance(
                            &geometries[a].shape,
                            &scene.sizes[a],
                            &X_WG[a],
                            &geometries[b].shape,
                            &scene.sizes[b],
                            &X_WG[b],
                            feature,
                        )?;
                        Ok(ContactWitness {
                            geometry_a: a,
                            geometry_b: b,
                            phi: with_value(d.phi, c.phi0),
                            nhat_W: d.nhat_W,
                            p_WPa: d.p_WPa,
                            p_WPb: d.p_WPb,
                            stiffness: None,
                            feature: c.feature.clone(),
                        })
                    }
                    ContactFeature::Polygon(found) => polygon(a, b, *found),
                }
            })
            .chain(moved)
            .collect()
    })?;
    Ok(LiftedStep {
        problem,
        q0,
        v0,
        scene,
    })
}

/// `x` with its real part replaced by `value` and its derivative parts kept.
///
/// The feature pair re-evaluated in `T` reproduces the f64 query's signed distance only to
/// round-off (1e-18 m), and where the impulse `δt (f0 − δt k z)` is a small difference of
/// large terms (Similar's force at a distance: 0.085 N from f0 = −6e4 N on the sliding box)
/// that round-off moves the impulse by 1e-9 of its size. Keeping the f64 φ0 makes the lifted
/// step differentiate the very problem the f64 step solved, as the IFT does.
fn with_value<T: Scalar>(x: T, value: f64) -> T {
    x - lit::<T>(x.re()) + lit::<T>(value)
}
