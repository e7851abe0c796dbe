//! Checks of [`feature_distance`] against the f64 query (values) and against central finite
//! differences of its own f64 evaluation (derivatives), for every supported pair of shapes.
//!
//! Files: `mod.rs` (the harness: cases, perturbations, the two checks), `pairs.rs` (named
//! configurations of every pair), `properties.rs` (feature kinds, other dual types, errors,
//! random poses), `twist.rs` (the closed-form twist derivatives against duals).

mod pairs;
mod properties;
mod twist;

use nalgebra::{Matrix3, Rotation3, Unit, Vector2, Vector3};
use num_dual::{Dual64, DualSVec64, HyperDual64};

use super::*;
use crate::collision::{find_contacts, CollisionScene, GeometricContact, Geometry};
use crate::math::skew;
use crate::multibody::model::BodyId;

/// The query's margin δ_margin (m), as in the simulator's default.
const MARGIN: f64 = 0.01;
/// Re-evaluation at the query's poses vs the query (m, and dimensionless for n̂): the same
/// arithmetic up to rounding.
const MATCH_TOL: f64 = 1e-9;
/// Finite-difference step (m for translations and sizes, rad for rotations).
const FD_STEP: f64 = 1e-7;
/// Corrected relative error allowed between dual and central-difference derivatives.
const DERIV_TOL: f64 = 1e-6;
/// Derivatives below this size are compared absolutely (to DERIV_TOL·DERIV_FLOOR = 1e-7):
/// the central difference carries a rounding error of about ε·|x|/(h·ℓ) ≈ 3e-8 for
/// coordinates |x| ≈ 0.3 m normalized over lengths ℓ ≈ 1 cm.
const DERIV_FLOOR: f64 = 0.1;

/// Two geometries, their world poses, and whether A is fixed in the world.
struct Case {
    name: &'static str,
    a: Shape,
    X_WA: Pose<f64>,
    a_in_world: bool,
    b: Shape,
    X_WB: Pose<f64>,
}

/// A differentiation direction: a pose coordinate (0-2 translation, 3-5 rotation about the
/// world axes) or a size parameter of A or B.
#[derive(Clone, Copy, Debug)]
enum Param {
    PoseA(usize),
    PoseB(usize),
    SizeA(usize),
    SizeB(usize),
}

fn rot(axis: [f64; 3], angle: f64) -> Matrix3<f64> {
    *Rotation3::from_axis_angle(&Unit::new_normalize(Vector3::from(axis)), angle).matrix()
}

fn pose(R: Matrix3<f64>, p: [f64; 3]) -> Pose<f64> {
    Pose {
        R,
        p: Vector3::from(p),
    }
}

fn at(p: [f64; 3]) -> Pose<f64> {
    pose(Matrix3::identity(), p)
}

/// Number of size parameters of a shape (radius; half extents; radius and half length).
fn num_sizes(shape: &Shape) -> usize {
    match shape {
        Shape::Sphere { .. } => 1,
        Shape::Box { .. } => 3,
        Shape::Capsule { .. } | Shape::Cylinder { .. } => 2,
        Shape::HalfSpace | Shape::ConvexMesh { .. } | Shape::Ellipsoid { .. } => 0,
    }
}

/// Sizes of `shape` with `e` added to the `k`-th size parameter.
fn bumped_size<T: Scalar>(shape: &Shape, k: usize, e: T) -> ShapeSize<T> {
    match shape.size::<T>() {
        ShapeSize::Sphere { radius } => ShapeSize::Sphere { radius: radius + e },
        ShapeSize::Box { mut half_extents } => {
            half_extents[k] += e;
            ShapeSize::Box { half_extents }
        }
        ShapeSize::Capsule {
            radius,
            half_length,
        } if k == 0 => ShapeSize::Capsule {
            radius: radius + e,
            half_length,
        },
        ShapeSize::Capsule {
            radius,
            half_length,
        } => ShapeSize::Capsule {
            radius,
            half_length: half_length + e,
        },
        ShapeSize::Cylinder {
            radius,
            half_length,
        } if k == 0 => ShapeSize::Cylinder {
            radius: radius + e,
            half_length,
        },
        ShapeSize::Cylinder {
            radius,
            half_length,
        } => ShapeSize::Cylinder {
            radius,
            half_length: half_length + e,
        },
        ShapeSize::HalfSpace | ShapeSize::ConvexMesh => unreachable!("no size parameters"),
    }
}

/// `X` moved by `e` along pose coordinate `k`: `p + e e_k` (k < 3), or
/// `R ← exp([e e_{k−3}]×) R` (k ≥ 3).
fn moved<T: Scalar>(X: &Pose<f64>, k: usize, e: T) -> Pose<T> {
    let mut X_T: Pose<T> = X.cast();
    if k < 3 {
        X_T.p[k] += e;
    } else {
        let K = skew(&Vector3::ith(k - 3, T::one()));
        let E = Matrix3::identity() + K * e.sin() + K * K * (T::one() - e.cos());
        X_T.R = E * X_T.R;
    }
    X_T
}

/// The re-evaluation with `e` added along `param` (nothing added for `None`).
fn eval<T: Scalar>(
    case: &Case,
    feature: &ActiveFeature,
    param: Option<(Param, T)>,
) -> Result<FeatureDistance<T>> {
    let mut X_WA: Pose<T> = case.X_WA.cast();
    let mut X_WB: Pose<T> = case.X_WB.cast();
    let mut size_a = case.a.size::<T>();
    let mut size_b = case.b.size::<T>();
    match param {
        Some((Param::PoseA(k), e)) => X_WA = moved(&case.X_WA, k, e),
        Some((Param::PoseB(k), e)) => X_WB = moved(&case.X_WB, k, e),
        Some((Param::SizeA(k), e)) => size_a = bumped_size(&case.a, k, e),
        Some((Param::SizeB(k), e)) => size_b = bumped_size(&case.b, k, e),
        None => {}
    }
    feature_distance(&case.a, &size_a, &X_WA, &case.b, &size_b, &X_WB, feature)
}

/// The query's contacts for `case` (margin [`MARGIN`]).
fn query(case: &Case) -> Vec<GeometricContact> {
    let geometry = |name: &str, body, shape: &Shape| {
        Geometry::new(name, body, Pose::identity(), shape.clone())
    };
    let body_a = if case.a_in_world {
        BodyId::World
    } else {
        BodyId::Body(0)
    };
    let scene = CollisionScene::new(vec![
        geometry("a", body_a, &case.a),
        geometry("b", BodyId::Body(1), &case.b),
    ])
    .expect("valid scene");
    let found = find_contacts(&scene, &[case.X_WA, case.X_WB], MARGIN).expect("supported pair");
    for c in &found {
        assert_eq!((c.geometry_a, c.geometry_b), (0, 1), "{}", case.name);
    }
    found
}

/// The query's contacts for `case`, at least one.
fn contacts(case: &Case) -> Vec<GeometricContact> {
    let found = query(case);
    assert!(!found.is_empty(), "{}: no contact", case.name);
    found
}

/// MuJoCo's corrected relative error, with a floor for derivatives near zero.
fn relative_error(a: f64, b: f64) -> f64 {
    (a - b).abs() / a.abs().max(b.abs()).max(DERIV_FLOOR)
}

/// Value check (test 1) and derivative check (test 2) of every contact of `case`.
fn check(case: &Case) {
    let params: Vec<Param> = (0..6)
        .map(Param::PoseA)
        .chain((0..6).map(Param::PoseB))
        .chain((0..num_sizes(&case.a)).map(Param::SizeA))
        .chain((0..num_sizes(&case.b)).map(Param::SizeB))
        .collect();
    for c in contacts(case) {
        let f = &c.feature;
        let what = format!(
            "{} ({} against {}): {:?} {:?} {:?}",
            case.name,
            case.a.kind(),
            case.b.kind(),
            f.kind,
            f.point_a,
            f.point_b
        );
        // 1. At the query's poses and sizes, the query's numbers.
        let d = eval::<f64>(case, f, None).expect("re-evaluation");
        assert!(
            (d.phi - c.phi).abs() <= MATCH_TOL,
            "{what}: φ {} vs {}",
            d.phi,
            c.phi
        );
        assert!(
            (d.nhat_W - c.nhat_W).norm() <= MATCH_TOL,
            "{what}: n̂ {} vs {}",
            d.nhat_W,
            c.nhat_W
        );
        // The witness points satisfy p_WPb − p_WPa = φ n̂ (eq. 4); the query's do up to its own
        // inconsistency (rounding, except GJK on a curved shape).
        let inconsistency = (c.p_WPb - c.p_WPa - c.nhat_W * c.phi).norm();
        for (x, y, name) in [(d.p_WPa, c.p_WPa, "p_WPa"), (d.p_WPb, c.p_WPb, "p_WPb")] {
            assert!(
                (x - y).norm() <= MATCH_TOL + inconsistency,
                "{what}: {name} {x} vs {y}"
            );
        }
        // 2. Dual derivatives against central differences of the f64 re-evaluation.
        for &param in &params {
            let dual = eval(case, f, Some((param, Dual64::new(0.0, 1.0)))).expect("dual");
            assert!(
                (dual.phi.re - d.phi).abs() <= 1e-14,
                "{what}: dual real part"
            );
            let plus = eval(case, f, Some((param, FD_STEP))).expect("+h");
            let minus = eval(case, f, Some((param, -FD_STEP))).expect("-h");
            let fd = |x: f64, y: f64| (x - y) / (2.0 * FD_STEP);
            let mut pairs = vec![(dual.phi.eps, fd(plus.phi, minus.phi), "φ".to_string())];
            for i in 0..3 {
                for (name, du, p, m) in [
                    ("n̂", dual.nhat_W[i].eps, plus.nhat_W[i], minus.nhat_W[i]),
                    ("p_WPa", dual.p_WPa[i].eps, plus.p_WPa[i], minus.p_WPa[i]),
                    ("p_WPb", dual.p_WPb[i].eps, plus.p_WPb[i], minus.p_WPb[i]),
                ] {
                    pairs.push((du, fd(p, m), format!("{name}[{i}]")));
                }
            }
            for (du, fd, name) in pairs {
                assert!(
                    relative_error(du, fd) <= DERIV_TOL,
                    "{what}: ∂{name}/∂{param:?}: dual {du:e} vs FD {fd:e}"
                );
            }
        }
    }
}

fn check_all(cases: &[Case]) {
    for case in cases {
        check(case);
    }
}

fn sphere(radius: f64) -> Shape {
    Shape::Sphere { radius }
}

fn cuboid(x: f64, y: f64, z: f64) -> Shape {
    Shape::Box {
        half_extents: Vector3::new(x, y, z),
    }
}

fn capsule(radius: f64, half_length: f64) -> Shape {
    Shape::Capsule {
        radius,
        half_length,
    }
}

fn cylinder(radius: f64, half_length: f64) -> Shape {
    Shape::Cylinder {
        radius,
        half_length,
    }
}

/// A tetrahedron with its apex down at the origin.
fn tet_apex_down() -> Shape {
    Shape::ConvexMesh {
        vertices: vec![
            Vector3::new(0.0, 0.0, 0.0),
            Vector3::new(0.1, 0.0, 0.1),
            Vector3::new(0.0, 0.1, 0.1),
            Vector3::new(-0.1, -0.1, 0.1),
        ],
    }
}

/// A tetrahedron standing on a face in the plane z = 0.
fn tet_face_down() -> Shape {
    Shape::ConvexMesh {
        vertices: vec![
            Vector3::new(-0.05, -0.05, 0.0),
            Vector3::new(0.08, -0.03, 0.0),
            Vector3::new(-0.02, 0.07, 0.0),
            Vector3::new(0.0, 0.0, 0.1),
        ],
    }
}

/// One shape of each kind, the tetrahedron face down: the random-pose tests pair each with each.
fn every_shape() -> [Shape; 5] {
    [
        sphere(0.04),
        cuboid(0.05, 0.03, 0.02),
        capsule(0.02, 0.05),
        cylinder(0.03, 0.04),
        tet_face_down(),
    ]
}

/// A rotation by a random angle in [0, π) about a random axis.
fn random_rotation(rng: &mut rand::rngs::StdRng) -> Matrix3<f64> {
    use rand::Rng;
    let axis = [
        rng.random::<f64>() - 0.5,
        rng.random::<f64>() - 0.5,
        rng.random::<f64>() - 0.5,
    ];
    rot(axis, rng.random::<f64>() * std::f64::consts::PI)
}

/// World z of the lowest point of a box with half extents `h` and rotation `R` centred at 0.
fn box_bottom(h: [f64; 3], R: &Matrix3<f64>) -> f64 {
    let h = Vector3::from(h);
    (0..8)
        .map(|i| {
            let s = Vector3::new(
                if i & 1 == 0 { 1.0 } else { -1.0 },
                if i & 2 == 0 { 1.0 } else { -1.0 },
                if i & 4 == 0 { 1.0 } else { -1.0 },
            );
            (R * s.component_mul(&h)).z
        })
        .fold(f64::INFINITY, f64::min)
}

fn ground(name: &'static str, b: Shape, X_WB: Pose<f64>) -> Case {
    Case {
        name,
        a: Shape::HalfSpace,
        X_WA: Pose::identity(),
        a_in_world: true,
        b,
        X_WB,
    }
}

fn pair(name: &'static str, a: Shape, X_WA: Pose<f64>, b: Shape, X_WB: Pose<f64>) -> Case {
    Case {
        name,
        a,
        X_WA,
        a_in_world: false,
        b,
        X_WB,
    }
}
