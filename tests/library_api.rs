//! The README's library example, compiled and checked: a ball dropped on the ground comes to
//! rest with its weight balanced.
#![allow(non_snake_case)]

use nalgebra::{DVector, Matrix3, Vector3};
use stiction::contact::{Approximation, ContactParams};
use stiction::geometry::{Geometry, Shape};
use stiction::math::{Pose, SpatialInertia};
use stiction::multibody::{model::BodyId, JointKind, JointSpec, MultibodyModel};
use stiction::step::{Simulator, State, StepSettings};

#[test]
fn readme_example_ball_comes_to_rest() -> stiction::error::Result<()> {
    let mut model = MultibodyModel::new(Vector3::new(0.0, 0.0, -9.81));
    let inertia = SpatialInertia {
        mass: 0.5,
        com: Vector3::zeros(),
        inertia_com: Matrix3::identity() * 1.25e-4,
    };
    let ball = model.add_body("ball", inertia, JointSpec::new(JointKind::Free))?;
    let geometries = vec![
        Geometry {
            name: "ball".into(),
            body: BodyId::Body(ball),
            X_BG: Pose::identity(),
            shape: Shape::Sphere { radius: 0.025 },
            contact: None,
        },
        Geometry {
            name: "ground".into(),
            body: BodyId::World,
            X_BG: Pose::identity(),
            shape: Shape::HalfSpace,
            contact: None,
        },
    ];
    let settings = StepSettings {
        dt: 1e-3,
        approximation: Approximation::Lagged,
        contact: ContactParams {
            stiffness: 1e7,
            ..Default::default()
        },
        ..Default::default()
    };
    let mut sim = Simulator::new(model, geometries, settings)?;
    let mut state = State {
        t: 0.0,
        q: DVector::from_vec(vec![0.0, 0.0, 0.05, 1.0, 0.0, 0.0, 0.0]),
        v: DVector::zeros(6),
    };
    let mut last = None;
    for _ in 0..1000 {
        let (next, report) = sim.step(&state, &DVector::zeros(0))?;
        state = next;
        last = Some(report);
    }
    let report = last.unwrap();
    let weight = 0.5 * 9.81;
    let fn_total: f64 = report.contacts.iter().map(|c| c.normal_force).sum();
    // The default solver tolerance ε_r = 1e-5 bounds the force error at rest.
    assert!(
        (fn_total - weight).abs() < 1e-4 * weight,
        "Σfn = {fn_total}"
    );
    assert!(state.v.norm() < 1e-6, "v = {}", state.v);
    assert!(
        (state.q[2] - (0.025 - weight / 1e7)).abs() < 1e-9,
        "rests at z = {}",
        state.q[2]
    );
    Ok(())
}
