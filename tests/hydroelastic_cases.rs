//! The pressure-field cases of `shared/CASES.md` (Elandt Ch. 4-5; Masterjohn et al.), run from
//! the shipped problem files, asserting the physics each must show.

mod common;
use common::problem;

use nalgebra::{Rotation3, Vector3};
use stiction::contact::Approximation;
use stiction::hydroelastic::{contact_surface, Placed};
use stiction::math::Pose;
use stiction::problem::Problem;
use stiction::simulate::{run, Recording};

const G: f64 = 9.81;

fn simulate(name: &str, approximation: Approximation, dt: f64) -> (Problem, Recording) {
    let mut p = problem(name, approximation, dt);
    let rec = run(&mut p.simulator, &p.initial_state, p.duration, |_, _| {})
        .unwrap_or_else(|e| panic!("{name} with {approximation} at δt = {dt}: {e}"));
    (p, rec)
}

fn geometry(p: &Problem, name: &str) -> usize {
    p.simulator
        .geometries()
        .iter()
        .position(|g| g.name == name)
        .expect("geometry of the problem")
}

mod compliant_ball_rest {
    use super::*;

    const RADIUS: f64 = 0.05;

    /// At rest the patch carries the weight, and its radius is the sphere–plane intersection's
    /// `sqrt(2Rδ)` for the ball's penetration δ = R − z.
    #[test]
    fn patch_carries_the_weight_and_its_radius_is_sqrt_2_r_delta() {
        for approximation in [Approximation::Lagged, Approximation::Sap] {
            let (_, rec) = simulate("compliant-ball-rest", approximation, 1e-3);
            let last = rec.reports.last().expect("steps");
            assert_eq!(last.patches.len(), 1);
            let patch = &last.patches[0];
            assert!(
                (patch.force.z / G - 1.0).abs() < 1e-3,
                "{approximation}: force {} vs weight {G}",
                patch.force.z
            );
            assert!(patch.force.xy().norm() < 1e-4 * G, "{}", patch.force);
            let state = rec.states.last().expect("states");
            // Settled vertically. (The faceted field is not exactly round: the ball may still
            // rock slowly about its equilibrium orientation, ω ~ 1e-3 rad/s.)
            assert!(state.v[5].abs() < 1e-4, "{approximation}: not at rest {}", state.v);
            let delta = RADIUS - state.q[2];
            let radius = (patch.area / std::f64::consts::PI).sqrt();
            let predicted = (2.0 * RADIUS * delta).sqrt();
            println!(
                "{approximation}: δ = {delta:.3e} m, patch radius {radius:.4e} m vs sqrt(2Rδ) = {predicted:.4e} m ({} polygons, p_max {:.3e} Pa)",
                patch.polygons, patch.max_pressure
            );
            assert!(
                (radius / predicted - 1.0).abs() < 0.05,
                "{approximation}: radius {radius} vs {predicted}"
            );
        }
    }

    /// Rolling the ball sweeps its elements through the patch: the force is a continuous
    /// function of the orientation (its largest difference quotient does not grow as the
    /// increment shrinks) and varies by only a few percent with the mesh.
    #[test]
    fn force_is_continuous_as_elements_cross_the_patch() {
        let p = problem("compliant-ball-rest", Approximation::Lagged, 1e-3);
        let collision = p.simulator.collision();
        let (ground, ball) = (geometry(&p, "ground"), geometry(&p, "ball"));
        let force = |theta: f64| {
            let R = *Rotation3::from_axis_angle(&Vector3::x_axis(), theta).matrix();
            let a = Placed {
                geometry: collision.hydro(ground).expect("rigid ground"),
                X_WG: Pose::identity(),
                modulus: 0.0,
            };
            let b = Placed {
                geometry: collision.hydro(ball).expect("compliant ball"),
                X_WG: Pose {
                    R,
                    p: Vector3::new(0.0, 0.0, RADIUS - 0.0028),
                },
                modulus: 4e5,
            };
            contact_surface(&a, &b)
                .expect("surface")
                .iter()
                .map(|q| q.area * q.pressure * q.nhat.z)
                .sum::<f64>()
        };
        let quotient = |step: f64, n: usize| {
            let values: Vec<f64> = (0..=n).map(|k| force(k as f64 * step)).collect();
            let steepest = values
                .windows(2)
                .map(|w| (w[1] - w[0]).abs() / step)
                .fold(0.0, f64::max);
            let (lo, hi) = values
                .iter()
                .fold((f64::INFINITY, 0.0f64), |(l, h), &v| (l.min(v), h.max(v)));
            (steepest, lo, hi)
        };
        let (coarse, lo, hi) = quotient(1e-3, 100);
        let (fine, _, _) = quotient(1e-4, 1000);
        println!("max |dF/dθ|: {coarse:.3} N/rad (Δθ = 1e-3), {fine:.3} N/rad (Δθ = 1e-4); F ∈ [{lo:.4}, {hi:.4}] N");
        assert!(fine < 1.5 * coarse, "a jump: {fine} vs {coarse}");
        assert!((hi - lo) / hi < 0.05, "{lo} … {hi}");
    }
}
