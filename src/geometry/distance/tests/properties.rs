//! Feature kinds, other dual types, errors, and random poses of every pair.

use super::*;

/// The feature kinds chosen for representative contacts: the forms of the module doc.
#[test]
fn representative_feature_kinds() {
    let kinds = |case: &Case| -> Vec<FeatureKind> {
        contacts(case).iter().map(|c| c.feature.kind).collect()
    };
    let lying = rot([0.0, 1.0, 0.0], std::f64::consts::FRAC_PI_2);
    let upright = rot([1.0, 0.0, 0.0], std::f64::consts::FRAC_PI_2);
    // Flat box on the ground: four vertices against the plane (2a), scaled by the half extents.
    let flat = contacts(&ground(
        "box flat",
        cuboid(0.1, 0.05, 0.025),
        at([0.0, 0.0, 0.0249]),
    ));
    assert_eq!(flat.len(), 4);
    for c in &flat {
        assert!(matches!(c.feature.kind, FeatureKind::FaceA { .. }));
        assert_eq!(c.feature.point_b.base, Vector3::zeros());
        assert!(c.feature.point_b.scale.iter().all(|s| s.abs() == 1.0));
    }
    // A box below a box: B's face is the plane, A's vertices the points (2b).
    assert!(kinds(&pair(
        "box under box",
        cuboid(0.05, 0.05, 0.05),
        at([0.0, 0.05, -0.099]),
        cuboid(0.2, 0.2, 0.05),
        Pose::identity(),
    ))
    .iter()
    .all(|k| matches!(k, FeatureKind::FaceB { .. })));
    // Crossed capsules and crossed lying cylinders: edge–edge (2c), on rounded cores.
    let crossed = [
        pair(
            "capsules",
            capsule(0.02, 0.1),
            pose(lying, [0.0, 0.0, 0.0]),
            capsule(0.02, 0.1),
            pose(upright, [0.0, 0.0, 0.039]),
        ),
        pair(
            "cylinders",
            cylinder(0.05, 0.1),
            pose(lying, [0.0, 0.0, 0.0]),
            cylinder(0.05, 0.1),
            pose(upright, [0.0, 0.0, 0.099]),
        ),
    ];
    for case in &crossed {
        for c in contacts(case) {
            assert!(matches!(c.feature.kind, FeatureKind::EdgeEdge { .. }));
            assert!(c.feature.point_a.rounded && c.feature.point_b.rounded);
        }
    }
    // A sphere's centre inside a cylinder, near its side: line–point (2d) from the axis.
    let inside = contacts(&pair(
        "inside",
        cylinder(0.05, 0.1),
        Pose::identity(),
        sphere(0.02),
        at([0.0, 0.045, 0.0]),
    ));
    assert!(matches!(inside[0].feature.kind, FeatureKind::EdgeA { .. }));
    assert!(inside[0].feature.point_a.rounded);
    // A sphere near a box edge: line–point (2d); two spheres: point–point (2e).
    let h = Vector3::new(0.1, 0.05, 0.025);
    let centre = Vector3::new(h.x, 0.0, h.z) + Vector3::new(1.0, 0.0, 1.0).normalize() * 0.019;
    assert!(matches!(
        kinds(&pair(
            "edge",
            cuboid(h.x, h.y, h.z),
            Pose::identity(),
            sphere(0.02),
            at(centre.into())
        ))[..],
        [FeatureKind::EdgeA { .. }]
    ));
    assert!(matches!(
        kinds(&pair(
            "spheres",
            sphere(0.1),
            Pose::identity(),
            sphere(0.1),
            at([0.1, 0.1, 0.1])
        ))[..],
        [FeatureKind::PointPoint]
    ));
}

/// The same evaluation in multi-direction duals and hyper-duals: values and first
/// derivatives agree with `Dual64`, and hyper-dual second derivatives are finite.
#[test]
fn other_dual_types() {
    let case = pair(
        "capsule-sphere side",
        capsule(0.02, 0.1),
        pose(rot([1.0, 2.0, 0.5], 0.7), [0.1, 0.0, 0.0]),
        sphere(0.03),
        at([0.1, 0.049, 0.02]),
    );
    let c = contacts(&case)[0];
    let f = &c.feature;
    let d_x = eval(&case, f, Some((Param::PoseB(0), Dual64::new(0.0, 1.0)))).expect("dual");
    let d_r = eval(&case, f, Some((Param::SizeA(0), Dual64::new(0.0, 1.0)))).expect("dual");
    // DualSVec64<2>: direction 0 = x of B, direction 1 = radius of A, in one evaluation.
    let seed =
        |i: usize| DualSVec64::<2>::new(0.0, num_dual::Derivative::some(Vector2::ith(i, 1.0)));
    let mut X_WB: Pose<DualSVec64<2>> = case.X_WB.cast();
    X_WB.p.x += seed(0);
    let size_a = bumped_size(&case.a, 0, seed(1));
    let v = feature_distance(
        &case.a,
        &size_a,
        &case.X_WA.cast(),
        &case.b,
        &case.b.size(),
        &X_WB,
        f,
    )
    .expect("dual vector");
    let eps = v.phi.eps.unwrap_generic(nalgebra::U2, nalgebra::U1);
    assert!((v.phi.re - c.phi).abs() <= 1e-14);
    assert!((eps[0] - d_x.phi.eps).abs() <= 1e-14 && (eps[1] - d_r.phi.eps).abs() <= 1e-14);
    // HyperDual64: ∂²φ/∂x_B² of a sphere beside a capsule's segment is finite and positive
    // (the distance to a line is convex).
    let h = eval(
        &case,
        f,
        Some((Param::PoseB(0), HyperDual64::new(0.0, 1.0, 1.0, 0.0))),
    )
    .expect("hyper-dual");
    assert!((h.phi.eps1 - d_x.phi.eps).abs() <= 1e-14);
    assert!(h.phi.eps1eps2.is_finite() && h.phi.eps1eps2 > 0.0);
}

/// A convex mesh has no size to seed; sizes of the wrong kind are rejected.
#[test]
fn sizes_must_match_shapes() {
    let case = ground("tet", tet_apex_down(), at([0.0, 0.0, -0.001]));
    let c = contacts(&case)[0];
    assert_eq!(case.b.size::<f64>(), ShapeSize::ConvexMesh);
    assert_eq!(num_sizes(&case.b), 0);
    let wrong = ShapeSize::Sphere { radius: 0.1 };
    let err = feature_distance(
        &case.a,
        &ShapeSize::HalfSpace,
        &case.X_WA,
        &case.b,
        &wrong,
        &case.X_WB,
        &c.feature,
    );
    assert!(matches!(err, Err(Error::InvalidParameter { .. })));
}

/// Point–point with coincident points has no normal: an error, not a NaN.
#[test]
fn degenerate_normal_is_an_error() {
    let case = pair(
        "spheres",
        sphere(0.1),
        Pose::identity(),
        sphere(0.1),
        at([0.1, 0.0, 0.0]),
    );
    let c = contacts(&case)[0];
    let err = feature_distance(
        &case.a,
        &case.a.size(),
        &case.X_WA,
        &case.b,
        &case.b.size(),
        &Pose::identity(),
        &c.feature,
    );
    assert!(matches!(err, Err(Error::InvalidParameter { .. })));
}

/// Random poses for every pair of shapes (seeded): B approaches A along a random direction
/// until the query reports contact (within the margin), then moves a random 0-13 mm further
/// in, from separated to penetrating by a few millimetres.
#[test]
fn random_poses_of_every_pair() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let shapes = every_shape();
    let mut checked = 0;
    for (i, a) in shapes.iter().enumerate() {
        for b in &shapes[i..] {
            for _ in 0..12 {
                let X_WA = pose(random_rotation(&mut rng), [0.0, 0.0, 0.0]);
                let R_WB = random_rotation(&mut rng);
                let u = Vector3::new(
                    rng.random::<f64>() - 0.5,
                    rng.random::<f64>() - 0.5,
                    rng.random::<f64>() - 0.5,
                )
                .normalize();
                let mut s = 0.4;
                let case = |s: f64| {
                    pair(
                        "random",
                        a.clone(),
                        X_WA,
                        b.clone(),
                        pose(R_WB, (u * s).into()),
                    )
                };
                while query(&case(s)).is_empty() {
                    s -= 0.001;
                }
                s -= rng.random::<f64>() * 0.013;
                check(&case(s));
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 15 * 12);
}

/// A cylinder rolled about its own axis, lying on the ground and standing tilted on its rim:
/// the rim point against the plane (eq. 1′) stays the rim's lowest point, as the query's
/// witness does, to second order in the roll angle; a material rim point would run around
/// the rim by `r δ` (5e-5 m at δ = 1e-3).
#[test]
fn rim_points_against_a_plane_follow_the_query_when_the_cylinder_rolls() {
    let lying = rot([0.0, 1.0, 0.0], std::f64::consts::FRAC_PI_2);
    let tilt = rot([1.0, 0.0, 0.0], 0.3);
    let (r, h) = (0.05, 0.1);
    let cases = [
        ground("lying", cylinder(r, h), pose(lying, [0.0, 0.0, r - 0.001])),
        ground(
            "on its rim",
            cylinder(r, h),
            pose(
                tilt,
                [0.0, 0.0, h * 0.3f64.cos() + r * 0.3f64.sin() - 0.001],
            ),
        ),
    ];
    for case in &cases {
        let found = contacts(case);
        assert!(found.iter().all(|c| c.feature.point_b.rim), "{}", case.name);
        let axis = case.X_WB.R * Vector3::z();
        for delta in [1e-3, -1e-3] {
            let rolled = Case {
                X_WB: Pose {
                    R: rot(axis.into(), delta) * case.X_WB.R,
                    p: case.X_WB.p,
                },
                ..ground(case.name, case.b.clone(), case.X_WB)
            };
            for (c, q) in found.iter().zip(query(&rolled)) {
                let d = eval::<f64>(&rolled, &c.feature, None).expect("re-evaluation");
                // Across the axis: GJK may place a witness anywhere along a lying
                // cylinder's bottom line, not across it.
                let across = |p: Vector3<f64>| p - axis * axis.dot(&p);
                let gap = (across(d.p_WPb) - across(q.p_WPb)).norm();
                assert!(
                    gap <= r * delta * delta,
                    "{}: rolled by {delta}, witness {} vs query {} ({gap:e} m)",
                    case.name,
                    d.p_WPb,
                    q.p_WPb
                );
                assert!((d.phi - q.phi).abs() <= 1e-9, "{}: φ", case.name);
            }
        }
    }
}
