//! [`twist_derivative`] against [`feature_distance`] in width-6 duals with one geometry's pose
//! moved by a seeded twist about a point.

use std::collections::BTreeSet;

use super::*;

type Twist = DualSVec64<6>;

/// The closed form against the duals for every contact of `case`, moving A and then B about a
/// point off the contact; returns the feature kinds checked (rim points are left to the duals
/// and must say so).
fn check_twist(case: &Case, kinds: &mut BTreeSet<&'static str>) {
    let (size_a, size_b) = (case.a.size::<f64>(), case.b.size::<f64>());
    for c in contacts(case) {
        let f = &c.feature;
        let o = c.p_WPa + Vector3::new(0.03, -0.02, 0.05);
        for moving_a in [true, false] {
            let closed = twist_derivative(
                &case.a, &size_a, &case.X_WA, &case.b, &size_b, &case.X_WB, f, moving_a, &o,
            )
            .expect("closed form");
            let Some(closed) = closed else {
                assert!(
                    f.point_a.rim || f.point_b.rim,
                    "{}: no derivative",
                    case.name
                );
                continue;
            };
            let constant = |X: &Pose<f64>| -> Pose<Twist> { X.cast() };
            let (X_WA, X_WB) = if moving_a {
                (twisted_pose(&case.X_WA, &o), constant(&case.X_WB))
            } else {
                (constant(&case.X_WA), twisted_pose(&case.X_WB, &o))
            };
            let dual = feature_distance(
                &case.a,
                &case.a.size::<Twist>(),
                &X_WA,
                &case.b,
                &case.b.size::<Twist>(),
                &X_WB,
                f,
            )
            .expect("dual");
            let eps = |x: &Twist| x.eps.unwrap_generic(nalgebra::Const::<6>, nalgebra::U1);
            let rows = |v: &Vector3<Twist>| TwistJacobian::from_fn(|r, s| eps(&v[r])[s]);
            let what = format!("{} {:?} moving A: {moving_a}", case.name, f.kind);
            let scale = 1.0 + rows(&dual.p_WPa).amax() + rows(&dual.nhat_W).amax();
            for (name, x, y) in [
                ("n̂", closed.nhat_W, rows(&dual.nhat_W)),
                ("p_WPa", closed.p_WPa, rows(&dual.p_WPa)),
                ("p_WPb", closed.p_WPb, rows(&dual.p_WPb)),
            ] {
                assert!(
                    (x - y).amax() <= 1e-12 * scale,
                    "{what}: ∂{name} {x} vs {y}"
                );
            }
            let dphi = eps(&dual.phi).transpose();
            assert!(
                (closed.phi - dphi).amax() <= 1e-12 * scale,
                "{what}: ∂φ {} vs {dphi}",
                closed.phi
            );
            let value = eval::<f64>(case, f, None).expect("f64");
            assert_eq!(closed.value, value, "{what}: values");
            kinds.insert(match f.kind {
                FeatureKind::FaceA { .. } => "FaceA",
                FeatureKind::FaceB { .. } => "FaceB",
                FeatureKind::EdgeEdge { .. } => "EdgeEdge",
                FeatureKind::EdgeA { .. } => "EdgeA",
                FeatureKind::EdgeB { .. } => "EdgeB",
                FeatureKind::PointPoint => "PointPoint",
            });
        }
    }
}

/// Random poses of every pair of shapes (as `random_poses_of_every_pair`): the closed-form
/// twist derivatives equal the duals' to round-off, for every feature kind.
#[test]
fn twist_derivatives_match_dual_numbers() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let shapes = every_shape();
    let mut kinds = BTreeSet::new();
    for (i, a) in shapes.iter().enumerate() {
        for b in &shapes[i..] {
            for _ in 0..6 {
                let X_WA = pose(random_rotation(&mut rng), [0.0, 0.1, -0.2]);
                let R_WB = random_rotation(&mut rng);
                let u = Vector3::new(
                    rng.random::<f64>() - 0.5,
                    rng.random::<f64>() - 0.5,
                    rng.random::<f64>() - 0.5,
                )
                .normalize();
                let mut s = 0.4;
                let case = |s: f64| {
                    let p = Vector3::new(0.0, 0.1, -0.2) + u * s;
                    pair("random", a.clone(), X_WA, b.clone(), pose(R_WB, p.into()))
                };
                while query(&case(s)).is_empty() {
                    s -= 0.001;
                }
                s -= rng.random::<f64>() * 0.013;
                check_twist(&case(s), &mut kinds);
            }
        }
    }
    // A plane of a half-space against the shapes (its plane is A's, then B's).
    for b in &shapes {
        let case = |z: f64| {
            ground(
                "ground",
                b.clone(),
                pose(rot([0.3, -0.2, 0.5], 0.7), [0.01, 0.02, z]),
            )
        };
        let mut z = 0.2;
        while query(&case(z)).is_empty() {
            z -= 0.001;
        }
        check_twist(&case(z - 0.002), &mut kinds);
    }
    let expected = ["EdgeA", "EdgeB", "EdgeEdge", "FaceA", "FaceB", "PointPoint"];
    for kind in expected {
        assert!(kinds.contains(kind), "{kind} not covered: {kinds:?}");
    }
}
