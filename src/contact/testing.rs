//! Shared checks for contact potentials: impulse = −gradient of the cost (hyper-duals),
//! Hessian = hyper-dual second derivative, Hessian symmetric positive semi-definite, on many
//! random contact velocities and on the clamp `v̂`.

use nalgebra::{Matrix3, Vector3};
use num_dual::{first_derivative, Dual64, HyperDual64};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::contact::law::{HuntCrossley, NormalEval};
use crate::contact::params::ContactParams;
use crate::contact::potential::ContactPotential;
use crate::scalar::Scalar;

/// The Hunt & Crossley law of `params` at previous penetration `x0` and step `dt`.
pub fn hunt_crossley<T: Scalar>(params: &ContactParams<T>, x0: T, dt: T) -> HuntCrossley<T> {
    HuntCrossley::from_params(params, x0, dt)
}

/// Relative tolerance on impulse vs gradient: both come from the same closed forms, so only
/// round-off separates them.
const GRADIENT_TOL: f64 = 1e-9;
/// Relative tolerance on Hessian vs hyper-dual second derivative.
const HESSIAN_TOL: f64 = 1e-8;
/// Smallest eigenvalue allowed, relative to ‖G‖ (round-off of a PSD matrix).
const PSD_TOL: f64 = 1e-10;

/// Parameter sets spanning soft/stiff contact, with and without dissipation, low and
/// Painlevé-high friction, two time steps.
fn parameter_sets() -> Vec<(ContactParams<f64>, f64)> {
    let mut sets = Vec::new();
    for &k in &[1e3, 1e7] {
        for &d in &[0.0, 500.0] {
            for &mu in &[0.3, 2.3] {
                for &dt in &[1e-3, 1e-2] {
                    let p = ContactParams {
                        mu,
                        stiffness: k,
                        dissipation: d,
                        relaxation_time: if d > 0.0 { 1e-3 } else { 0.0 },
                        stiction_tolerance: 1e-4,
                        sigma: 1e-3,
                        ..Default::default()
                    };
                    sets.push((p, dt));
                }
            }
        }
    }
    sets
}

/// Runs [`check_potential_on_random_velocities`] with one constructor expression written once
/// and instantiated for `f64` and `HyperDual64`: `check_potential!(x0, |p, dt| expr)`, where
/// `p: &ContactParams<f64>` and `dt` is the step in the scalar type.
macro_rules! check_potential {
    ($x0:expr, |$p:ident, $dt:ident| $make:expr) => {
        $crate::contact::testing::check_potential_on_random_velocities(
            $x0,
            |$p: &$crate::contact::ContactParams<f64>, $dt: f64| $make,
            |$p: &$crate::contact::ContactParams<f64>, $dt: num_dual::HyperDual64| $make,
        )
    };
}
pub(crate) use check_potential;

/// Start-of-step penetrations `x0` (m) and dissipations `d` (s/m) at which the laws with Hunt &
/// Crossley dissipation are checked: penetrating, separated, undamped, deep.
pub const DISSIPATIVE_CASES: [(f64, f64); 4] =
    [(1e-4, 500.0), (-2e-4, 10.0), (3e-5, 0.0), (1e-3, 50.0)];

/// Normal velocities (m/s) across which those laws are checked, both sides of `v̂`.
pub fn dissipative_velocities() -> impl Iterator<Item = f64> {
    (0..41).map(|i| -0.4 + 0.02 * i as f64)
}

/// Checks a discretized law at each velocity of `velocities`: its impulse is the derivative of
/// its antiderivative (to 1e-9 relative), its impulse derivative that of its impulse (to
/// `derivative_tol` relative), the impulse ≥ 0 and its derivative ≤ 0 (a convex potential).
pub fn check_discrete_law(
    law: impl Fn(Dual64) -> NormalEval<Dual64>,
    velocities: impl Iterator<Item = f64>,
    derivative_tol: f64,
    ctx: &str,
) {
    for v in velocities {
        let (_, dn) = first_derivative(|v| law(v).antiderivative, v);
        let (_, dimp) = first_derivative(|v| law(v).impulse, v);
        let e = law(Dual64::from(v));
        assert!(
            (dn - e.impulse.re).abs() <= 1e-9 * (1.0 + dn.abs()),
            "{ctx} v {v}"
        );
        assert!(
            (dimp - e.impulse_derivative.re).abs() <= derivative_tol * (1.0 + dimp.abs()),
            "{ctx} v {v}"
        );
        assert!(
            e.impulse.re >= 0.0 && e.impulse_derivative.re <= 0.0,
            "{ctx} v {v}"
        );
    }
}

/// Runs [`check_potential!`] on Lagged, Similar and SAP with the law of the parameters
/// `$law(p)` makes from each parameter set `p`, at previous penetration `$x0`.
macro_rules! check_models_with_law {
    ($x0:expr, $law:expr) => {{
        use $crate::contact::law::Law;
        use $crate::contact::{Lagged, Sap, Similar};
        use $crate::scalar::lit;
        let x0: f64 = $x0;
        $crate::contact::testing::check_potential!(x0, |p, dt| {
            let p = $law(p);
            Lagged::new(Law::new(&p.cast(), lit(x0), dt), &p.cast(), lit(-0.1), dt)
        });
        $crate::contact::testing::check_potential!(x0, |p, dt| {
            let p = $law(p);
            Similar::new(Law::new(&p.cast(), lit(x0), dt), &p.cast())
        });
        $crate::contact::testing::check_potential!(x0, |p, dt| {
            let p = $law(p);
            Sap::new(&Law::new(&p.cast(), lit(x0), dt), &p.cast(), dt, lit(3.0))
        });
    }};
}
pub(crate) use check_models_with_law;

/// Checks a potential on every parameter set at ~150 random contact velocities each, plus
/// the clamp velocities `v̂ = x0/δt`, `x0/(δt + τ_d)`, `1/d` and `v_t = 0` exactly.
pub fn check_potential_on_random_velocities<P, Q>(
    x0: f64,
    make_f64: impl Fn(&ContactParams<f64>, f64) -> P,
    make_hd: impl Fn(&ContactParams<f64>, HyperDual64) -> Q,
) where
    P: ContactPotential<f64>,
    Q: ContactPotential<HyperDual64>,
{
    let mut rng = StdRng::seed_from_u64(7);
    for (params, dt) in parameter_sets() {
        let mut edges = vec![x0 / dt, x0 / (dt + params.relaxation_time)];
        if params.dissipation > 0.0 {
            edges.push(1.0 / params.dissipation);
        }
        let mut samples: Vec<Vector3<f64>> = Vec::new();
        for &e in &edges {
            samples.push(Vector3::new(0.0, 0.0, e));
            samples.push(Vector3::new(0.3, -0.1, e));
            samples.push(Vector3::new(1e-5, 2e-5, e * (1.0 - 1e-9) - 1e-12));
        }
        for _ in 0..150 {
            let mag = |rng: &mut StdRng| {
                let sign = if rng.random::<bool>() { 1.0 } else { -1.0 };
                sign * 10f64.powf(rng.random_range(-7.0..0.5))
            };
            let base = edges[rng.random_range(0..edges.len())];
            let t1 = mag(&mut rng);
            let t2 = if rng.random::<f64>() < 0.1 {
                0.0
            } else {
                mag(&mut rng)
            };
            samples.push(Vector3::new(t1, t2, base + mag(&mut rng)));
        }
        let p64 = make_f64(&params, dt);
        let phd = make_hd(&params, HyperDual64::from(dt));
        for v in &samples {
            let e = p64.eval(v);
            let mut grad = Vector3::zeros();
            let mut hess = Matrix3::zeros();
            for i in 0..3 {
                for j in 0..3 {
                    let vh = Vector3::from_fn(|k, _| {
                        HyperDual64::new(
                            v[k],
                            if k == i { 1.0 } else { 0.0 },
                            if k == j { 1.0 } else { 0.0 },
                            0.0,
                        )
                    });
                    let c = phd.eval(&vh).cost;
                    assert!(
                        (c.re - e.cost).abs() <= 1e-12 * (1.0 + e.cost.abs()),
                        "cost differs between f64 and hyper-dual"
                    );
                    grad[i] = c.eps1;
                    hess[(i, j)] = c.eps1eps2;
                }
            }
            let ctx = format!(
                "params {params:?} dt {dt} x0 {x0} v_c {v:?}: γ {:?} G {:?}",
                e.gamma, e.G
            );
            assert!(
                e.gamma.iter().chain(e.G.iter()).all(|x| x.is_finite()),
                "non-finite at {ctx}"
            );
            assert!(
                (e.gamma + grad).norm() <= GRADIENT_TOL * (1.0 + e.gamma.norm()),
                "γ ≠ −∇ℓ ({grad:?}) at {ctx}"
            );
            assert!(
                (e.G - hess).norm() <= HESSIAN_TOL * (1.0 + e.G.norm()),
                "G ≠ ∇²ℓ ({hess:?}) at {ctx}"
            );
            assert!(
                (e.G - e.G.transpose()).norm() <= 1e-12 * (1.0 + e.G.norm()),
                "G not symmetric at {ctx}"
            );
            let min_eig = e.G.symmetric_eigenvalues().min();
            assert!(
                min_eig >= -PSD_TOL * e.G.norm(),
                "G not PSD (λ_min {min_eig}) at {ctx}"
            );
        }
    }
}
