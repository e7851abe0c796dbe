//! Tests of the URDF importer on small robots written here: a double pendulum (mass matrix
//! and bias forces against their closed forms), a 3-link arm with limits, friction, a mimic
//! joint and a massless tool frame, and files broken one way each.

use std::path::{Path, PathBuf};

use nalgebra::{DVector, Matrix3, Vector3};

use super::*;
use crate::error::Error;
use crate::multibody::dynamics::{bias_forces, mass_matrix};
use crate::multibody::kinematics::{forward_kinematics, MultibodyData};

/// Closed forms against CRBA/RNEA in f64: a few ulps of the largest entry.
const TOL: f64 = 1e-12;

/// Standard gravity of [`SceneDescription::default`] (m/s²).
const G: f64 = 9.81;

fn parse(text: &str, options: &ImportOptions) -> Result<ImportedModel> {
    parse_urdf(text, Path::new("test.urdf"), options)
}

/// Link masses (kg), lengths (m), centre-of-mass distances (m) and inertias about y at the
/// centre (kg·m²) of the double pendulum.
const M1: f64 = 1.5;
const M2: f64 = 0.8;
const L1: f64 = 0.6;
const C1: f64 = 0.25;
const C2: f64 = 0.3;
const I1: f64 = 0.04;
const I2: f64 = 0.02;

/// A double pendulum swinging about y in the xz-plane, hanging along −z from a massless base
/// with a collision box. Link 2's inertia is written in an inertial frame turned 90° about z
/// (its ixx is the link's Iyy).
fn double_pendulum() -> String {
    format!(
        r#"<?xml version="1.0"?>
<robot name="double_pendulum">
  <link name="base">
    <collision><origin xyz="0 0 0.05"/><geometry><box size="0.2 0.2 0.1"/></geometry></collision>
  </link>
  <joint name="shoulder" type="continuous">
    <parent link="base"/>
    <child link="upper"/>
    <axis xyz="0 2 0"/>
    <dynamics damping="0.1"/>
  </joint>
  <link name="upper">
    <inertial>
      <origin xyz="0 0 -{C1}"/>
      <mass value="{M1}"/>
      <inertia ixx="0.05" ixy="0" ixz="0" iyy="{I1}" iyz="0" izz="0.03"/>
    </inertial>
    <collision><origin xyz="0 0 -{C1}"/><geometry><cylinder radius="0.02" length="0.5"/></geometry></collision>
  </link>
  <joint name="elbow" type="revolute">
    <origin xyz="0 0 -{L1}"/>
    <parent link="upper"/>
    <child link="lower"/>
    <axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="5" velocity="3"/>
  </joint>
  <link name="lower">
    <inertial>
      <origin xyz="0 0 -{C2}" rpy="0 0 1.5707963267948966"/>
      <mass value="{M2}"/>
      <inertia ixx="{I2}" ixy="0" ixz="0" iyy="0.05" iyz="0" izz="0.06"/>
    </inertial>
    <collision><origin xyz="0 0 -{C2}"/><geometry><sphere radius="0.05"/></geometry></collision>
    <collision><geometry><sphere radius="0.03"/></geometry></collision>
  </link>
</robot>
"#
    )
}

/// `M(q)` and `bias(q, v)` of a built description.
fn dynamics(description: &SceneDescription, q: &[f64], v: &[f64]) -> (DMatrix, DVector<f64>) {
    let built = description.build().expect("a valid description");
    let model = &built.simulator.model;
    let mut data = MultibodyData::new(model);
    let (q, v) = (DVector::from_column_slice(q), DVector::from_column_slice(v));
    forward_kinematics(model, &mut data, &q, &v);
    (mass_matrix(model, &data), bias_forces(model, &data, &v))
}

type DMatrix = nalgebra::DMatrix<f64>;

#[test]
fn double_pendulum_mass_matrix_and_bias_match_the_closed_form() {
    let model = parse(&double_pendulum(), &ImportOptions::default()).expect("a valid URDF");
    let d = &model.description;
    // The massless base is merged into the world: two bodies, its box a world geometry.
    assert_eq!(d.bodies.len(), 2);
    let names: Vec<(&str, &str)> = d
        .geometries
        .iter()
        .map(|g| (g.name.as_str(), g.body.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("base", "world"),
            ("upper", "upper"),
            ("lower:0", "lower"),
            ("lower:1", "lower")
        ]
    );
    for (q1, q2, w1, w2) in [
        (0.3, -0.7, 1.1, -0.4),
        (-1.2, 2.0, 0.0, 2.5),
        (0.0, 0.0, 0.0, 0.0),
    ] {
        let (M, bias) = dynamics(d, &[q1, q2], &[w1, w2]);
        let (c, h) = (q2.cos(), M2 * L1 * C2 * q2.sin());
        let m22 = I2 + M2 * C2 * C2;
        let m12 = m22 + M2 * L1 * C2 * c;
        let m11 = I1 + M1 * C1 * C1 + I2 + M2 * (L1 * L1 + C2 * C2 + 2.0 * L1 * C2 * c);
        let expected = DMatrix::from_row_slice(2, 2, &[m11, m12, m12, m22]);
        assert!(
            (&M - &expected).norm() < TOL,
            "q = ({q1}, {q2}): {M} vs {expected}"
        );
        // bias = C(q, v) v + ∂V/∂q with V = −g (m1 c1 cos q1 + m2 (l1 cos q1 + c2 cos(q1+q2))).
        let gravity1 = G * ((M1 * C1 + M2 * L1) * q1.sin() + M2 * C2 * (q1 + q2).sin());
        let gravity2 = G * M2 * C2 * (q1 + q2).sin();
        let expected = [
            -h * (2.0 * w1 * w2 + w2 * w2) + gravity1,
            h * w1 * w1 + gravity2,
        ];
        for k in 0..2 {
            assert!(
                (bias[k] - expected[k]).abs() < TOL,
                "bias[{k}] {} vs {}",
                bias[k],
                expected[k]
            );
        }
    }
    // The axis is normalized; damping, limits and joint names come through.
    let upper = match &d.bodies[0].motion {
        BodyMotion::Jointed(j) => j,
        BodyMotion::Prescribed { .. } => panic!("a jointed body"),
    };
    assert_eq!(upper.joint, JointKind::Revolute { axis: Vector3::y() });
    assert_eq!(upper.damping, [0.1]);
    assert_eq!(upper.limits, None);
    assert_eq!(upper.joint_name.as_deref(), Some("shoulder"));
    let lower = match &d.bodies[1].motion {
        BodyMotion::Jointed(j) => j,
        BodyMotion::Prescribed { .. } => panic!("a jointed body"),
    };
    assert_eq!(
        lower.limits,
        Some(JointLimits {
            lower: -2.0,
            upper: 2.0,
            velocity: 3.0,
            effort: 5.0
        })
    );
}

#[test]
fn origins_use_fixed_axis_roll_pitch_yaw() {
    // R = Rz(y) Ry(p) Rx(r), written out.
    let (r, p, y): (f64, f64, f64) = (0.3, -0.5, 1.2);
    let rx = Matrix3::new(1.0, 0.0, 0.0, 0.0, r.cos(), -r.sin(), 0.0, r.sin(), r.cos());
    let ry = Matrix3::new(p.cos(), 0.0, p.sin(), 0.0, 1.0, 0.0, -p.sin(), 0.0, p.cos());
    let rz = Matrix3::new(y.cos(), -y.sin(), 0.0, y.sin(), y.cos(), 0.0, 0.0, 0.0, 1.0);
    assert!((rpy_matrix([r, p, y]) - rz * ry * rx).norm() < 1e-15);
}

/// A 3-link arm on a massive base: limits, friction, a camera fixed to the first link (merged
/// into it), a gripper whose second finger mimics the first, and a massless tool frame with
/// a collision sphere (merged into the hand).
fn arm() -> &'static str {
    r#"<robot name="arm">
  <link name="base"><inertial><mass value="3"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
  <joint name="j1" type="revolute">
    <parent link="base"/><child link="l1"/><origin xyz="0 0 0.1" rpy="0 0 0.5"/>
    <axis xyz="0 0 1"/><limit lower="-1.5" upper="1.5" effort="0" velocity="2"/>
    <dynamics damping="0.5" friction="0.2"/>
  </joint>
  <link name="l1"><inertial><origin xyz="0 0 0.2"/><mass value="2"/><inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.01"/></inertial></link>
  <joint name="camera_mount" type="fixed"><parent link="l1"/><child link="camera"/><origin xyz="0.1 0 0.3"/></joint>
  <link name="camera"><inertial><mass value="0.5"/><inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <joint name="j2" type="revolute">
    <parent link="l1"/><child link="hand"/><origin xyz="0 0 0.4"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="0.5" effort="20" velocity="2"/>
  </joint>
  <link name="hand"><inertial><mass value="0.5"/><inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <joint name="tcp_joint" type="fixed"><parent link="hand"/><child link="tcp"/><origin xyz="0 0 0.1"/></joint>
  <link name="tcp"><collision><geometry><sphere radius="0.01"/></geometry></collision></link>
  <joint name="finger_left" type="prismatic">
    <parent link="hand"/><child link="left"/><axis xyz="0 1 0"/>
    <limit lower="0" upper="0.04" effort="10" velocity="0.2"/>
  </joint>
  <link name="left"><inertial><mass value="0.01"/><inertia ixx="1e-6" ixy="0" ixz="0" iyy="1e-6" iyz="0" izz="1e-6"/></inertial></link>
  <joint name="finger_right" type="prismatic">
    <parent link="hand"/><child link="right"/><axis xyz="0 -1 0"/>
    <limit lower="0" upper="0.04" effort="10" velocity="0.2"/>
    <mimic joint="finger_left" multiplier="1" offset="0.001"/>
  </joint>
  <link name="right"><inertial><mass value="0.01"/><inertia ixx="1e-6" ixy="0" ixz="0" iyy="1e-6" iyz="0" izz="1e-6"/></inertial></link>
</robot>"#
}

#[test]
fn an_arm_keeps_limits_friction_and_its_mimic_joint_as_data() {
    let options = ImportOptions {
        prefix: "left_".into(),
        ..ImportOptions::default()
    };
    let d = parse(arm(), &options).expect("a valid URDF").description;
    let bodies: Vec<&str> = d.bodies.iter().map(|b| b.name.as_str()).collect();
    // Depth first in file order; the massless tool frame merged into the hand.
    assert_eq!(
        bodies,
        [
            "left_base",
            "left_l1",
            "left_hand",
            "left_left",
            "left_right"
        ]
    );
    let jointed: Vec<&JointedBody> = d
        .bodies
        .iter()
        .map(|b| match &b.motion {
            BodyMotion::Jointed(j) => j,
            BodyMotion::Prescribed { .. } => panic!("a jointed body"),
        })
        .collect();
    assert_eq!(jointed[0].joint, JointKind::Fixed);
    // l1 carries the camera: masses add, the centre is their weighted mean (0.02, 0, 0.22),
    // and the inertia about it follows the parallel-axis theorem with l1's centre at
    // d₁ = (−0.02, 0, −0.02) and the camera's at d₂ = (0.08, 0, 0.08) from it:
    // I_xx = 0.02 + 2·0.02² + 0.001 + 0.5·0.08², I_xz = −(2·0.02·0.02 + 0.5·0.08·0.08).
    let l1 = &jointed[1].inertia;
    assert!((l1.mass - 2.5).abs() < TOL);
    assert!((l1.com - Vector3::new(0.02, 0.0, 0.22)).norm() < TOL);
    assert!(
        (l1.inertia_com[(0, 0)] - 0.025).abs() < TOL,
        "{}",
        l1.inertia_com
    );
    assert!((l1.inertia_com[(0, 2)] + 2.0 * 0.02 * 0.02 + 0.5 * 0.08 * 0.08).abs() < TOL);
    assert_eq!(jointed[1].joint_name.as_deref(), Some("left_j1"));
    // URDF's effort 0 means no limit.
    assert_eq!(
        jointed[1].limits,
        Some(JointLimits {
            lower: -1.5,
            upper: 1.5,
            velocity: 2.0,
            effort: f64::INFINITY
        })
    );
    assert_eq!(
        (
            jointed[1].damping.as_slice(),
            jointed[1].friction.as_slice()
        ),
        (&[0.5][..], &[0.2][..])
    );
    assert_eq!(jointed[2].friction, Vec::<f64>::new());
    assert_eq!(
        d.couplers,
        [CouplerDescription {
            follower: "left_right".into(),
            leader: "left_left".into(),
            multiplier: 1.0,
            offset: 0.001,
        }]
    );
    // The tool sphere sits 0.1 m above the hand's origin, on the hand.
    let tcp = d
        .geometries
        .iter()
        .find(|g| g.name == "left_tcp")
        .expect("the tcp sphere");
    assert_eq!(tcp.body, "left_hand");
    assert!((tcp.X_BG.p - Vector3::new(0.0, 0.0, 0.1)).norm() < TOL);
    // The step models all of that but the velocity limits, and the description says so.
    let pending = d.constraints_not_in_step();
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert!(
        pending[0].starts_with("4 joint velocity limits"),
        "{pending:?}"
    );
    // Parent–child pairs never touch; the fingers (siblings) may.
    let pairs: Vec<(&str, &str)> = d
        .excluded_collisions
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("left_base", "left_l1"),
            ("left_l1", "left_hand"),
            ("left_hand", "left_left"),
            ("left_hand", "left_right")
        ]
    );
    // The model: 4 joint coordinates (j1, j2, two fingers), in file order.
    let built = d.build().expect("a valid description");
    assert_eq!(
        (built.simulator.model.nq(), built.simulator.model.nv()),
        (4, 4)
    );
    // j1's frame: 0.1 m up, turned 0.5 rad about z.
    let X = jointed[1].X_PJ;
    assert!((X.R - rpy_matrix([0.0, 0.0, 0.5])).norm() < TOL);
    assert!((X.p - Vector3::new(0.0, 0.0, 0.1)).norm() < TOL);
}

#[test]
fn a_floating_base_starts_at_the_given_pose() {
    let options = ImportOptions {
        base: Base::Floating,
        pose: Pose {
            R: rpy_matrix([0.0, 0.0, std::f64::consts::FRAC_PI_2]),
            p: Vector3::new(1.0, 2.0, 0.5),
        },
        ..ImportOptions::default()
    };
    let d = parse(arm(), &options).expect("a valid URDF").description;
    let BodyMotion::Jointed(base) = &d.bodies[0].motion else {
        panic!("a jointed base");
    };
    assert_eq!(base.joint, JointKind::Free);
    let half = std::f64::consts::FRAC_1_SQRT_2;
    let expected = [1.0, 2.0, 0.5, half, 0.0, 0.0, half];
    assert!(
        base.q0
            .iter()
            .zip(expected)
            .all(|(a, b)| (a - b).abs() < TOL),
        "{:?}",
        base.q0
    );
    let built = d.build().expect("a valid description");
    assert_eq!(
        (built.simulator.model.nq(), built.simulator.model.nv()),
        (11, 10)
    );
}

#[test]
fn a_planar_joint_moves_in_the_plane_normal_to_its_axis() {
    // Axis x: the link slides in the yz-plane. The joint frame's z is the URDF axis; the
    // link frame (and its box) keeps the URDF orientation.
    let text = r#"<robot name="slider">
  <link name="world_link"/>
  <joint name="plane" type="planar">
    <parent link="world_link"/><child link="puck"/><axis xyz="1 0 0"/>
  </joint>
  <link name="puck">
    <inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <collision><geometry><box size="0.1 0.2 0.3"/></geometry></collision>
  </link>
</robot>"#;
    let d = parse(text, &ImportOptions::default())
        .expect("a valid URDF")
        .description;
    let BodyMotion::Jointed(puck) = &d.bodies[0].motion else {
        panic!("a jointed puck");
    };
    assert_eq!(puck.joint, JointKind::Planar);
    assert!((puck.X_PJ.R * Vector3::z() - Vector3::x()).norm() < TOL);
    // The box in the body (joint) frame: R_BG = R_PJᵀ, so that the world sees it unturned.
    let X_BG = d.geometries[0].X_BG;
    assert!((puck.X_PJ.R * X_BG.R - Matrix3::identity()).norm() < TOL);
    // M = diag(m, m, I_x) for the puck in the plane ⟂ x (rotation about x).
    let (M, _) = dynamics(&d, &[0.0; 3], &[0.0; 3]);
    let expected = DMatrix::from_diagonal(&DVector::from_row_slice(&[1.0, 1.0, 0.01]));
    assert!((&M - &expected).norm() < TOL, "{M}");
}

/// `spherical` (an extension that urdf-rs reads and ROS's urdfdom does not) is a ball joint
/// about the joint origin, starting at the identity quaternion: a bob of mass m and inertia
/// `I 1` at d = 0.5 m below the joint has `M = m d² (1 − e_z e_zᵀ) + I 1` at rest.
#[test]
fn a_spherical_joint_is_a_ball_joint_about_the_joint_origin() {
    let robot = |friction: f64| {
        format!(
            r#"<robot name="spherical">
  <link name="base"/>
  <joint name="shoulder" type="spherical">
    <parent link="base"/><child link="bob"/><origin xyz="0 0 1"/>
    <dynamics damping="0.3" friction="{friction}"/>
  </joint>
  <link name="bob">
    <inertial><origin xyz="0 0 -0.5"/><mass value="2"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
  </link>
</robot>"#
        )
    };
    let d = parse(&robot(0.0), &ImportOptions::default())
        .expect("a valid URDF")
        .description;
    let BodyMotion::Jointed(bob) = &d.bodies[0].motion else {
        panic!("a jointed bob");
    };
    assert_eq!(bob.joint, JointKind::Ball);
    assert_eq!(bob.q0, vec![1.0, 0.0, 0.0, 0.0]);
    assert_eq!(bob.damping, vec![0.3; 3]);
    let (M, bias) = dynamics(&d, &[1.0, 0.0, 0.0, 0.0], &[0.0; 3]);
    let expected = DMatrix::from_diagonal(&DVector::from_row_slice(&[0.51, 0.51, 0.01]));
    assert!((&M - &expected).norm() < TOL, "{M}");
    // Hanging straight down: no gravity torque.
    assert!(bias.norm() < TOL, "{bias}");
    let e = parse(&robot(0.5), &ImportOptions::default()).expect_err("friction refused");
    assert!(
        e.to_string().contains("friction") && e.to_string().contains("spherical"),
        "{e}"
    );
}

/// A scratch folder for mesh files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stiction-urdf-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

#[test]
fn mesh_collisions_resolve_through_the_package_path() {
    let dir = scratch("mesh");
    std::fs::create_dir_all(dir.join("pkg/meshes")).expect("folders");
    // A unit tetrahedron, scaled by 2 in the file.
    std::fs::write(
        dir.join("pkg/meshes/tet.obj"),
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n",
    )
    .expect("a mesh");
    let text = r#"<robot name="r">
  <link name="base">
    <collision><geometry><mesh filename="package://pkg/meshes/tet.obj" scale="2 2 2"/></geometry></collision>
  </link>
</robot>"#;
    let model = dir.join("robot.urdf");
    let mut options = ImportOptions::default();
    options
        .package_path
        .push_named(&format!("pkg={}", dir.join("pkg").display()))
        .expect("NAME=DIR");
    let d = parse_urdf(text, &model, &options)
        .expect("a valid URDF")
        .description;
    match &d.geometries[0].shape {
        Shape::ConvexMesh { vertices } => {
            assert_eq!(vertices.len(), 4);
            let far = vertices.iter().map(|v| v.norm()).fold(0.0, f64::max);
            assert!((far - 2.0).abs() < TOL);
        }
        other => panic!("expected a convex mesh, got {other:?}"),
    }
    let e = parse_urdf(text, &model, &ImportOptions::default()).expect_err("no package path");
    let message = e.to_string();
    assert!(
        message.starts_with(&format!(
            "{}:3: <mesh>: package `pkg` not found",
            model.display()
        )),
        "{message}"
    );
}

/// With `convex_decomposition`, a non-convex collision mesh (an L of two boxes, as OBJ)
/// becomes several convex geometries `LINK#k` on the link's body; without it, one hull.
#[test]
fn a_non_convex_mesh_decomposes_into_named_parts_on_request() {
    let dir = scratch("decomposition");
    let mut obj = String::new();
    for (x0, z0, w) in [(0.0, 0.0, 2.0), (0.0, 1.0, 1.0)] {
        for i in 0..8 {
            let x = x0 + if i & 1 != 0 { w } else { 0.0 };
            let y = if i & 2 != 0 { 1.0 } else { 0.0 };
            let z = z0 + if i & 4 != 0 { 1.0 } else { 0.0 };
            obj += &format!("v {x} {y} {z}\n");
        }
    }
    for base in [0, 8] {
        for q in [
            [0, 2, 3, 1],
            [4, 5, 7, 6],
            [0, 1, 5, 4],
            [2, 6, 7, 3],
            [0, 4, 6, 2],
            [1, 3, 7, 5],
        ] {
            let [a, b, c, d] = q.map(|i| base + i + 1);
            obj += &format!("f {a} {b} {c} {d}\n");
        }
    }
    std::fs::write(dir.join("l.obj"), obj).expect("a mesh");
    let text = r#"<robot name="r">
  <link name="base">
    <collision><geometry><mesh filename="l.obj"/></geometry></collision>
  </link>
</robot>"#;
    let model = dir.join("robot.urdf");
    let hull = parse_urdf(text, &model, &ImportOptions::default())
        .expect("a valid URDF")
        .description;
    assert_eq!(hull.geometries.len(), 1);
    assert_eq!(hull.geometries[0].name, "base");
    let options = ImportOptions {
        convex_decomposition: true,
        ..ImportOptions::default()
    };
    let parts = parse_urdf(text, &model, &options)
        .expect("a valid URDF")
        .description;
    assert!(
        parts.geometries.len() >= 2,
        "{} parts",
        parts.geometries.len()
    );
    for (k, g) in parts.geometries.iter().enumerate() {
        assert_eq!(g.name, format!("base#{k}"));
        assert_eq!(g.body, hull.geometries[0].body);
        assert!(matches!(g.shape, Shape::ConvexMesh { .. }));
    }
}

#[test]
fn errors_name_the_line_the_element_and_what_was_expected() {
    let pendulum = double_pendulum();
    let line_of = |text: &str, needle: &str| {
        text.lines()
            .position(|l| l.contains(needle))
            .expect("the needle")
            + 1
    };
    let cases: Vec<(&str, String, &str, &str)> = vec![
        (
            "malformed XML",
            pendulum.replace("</joint>\n  <link name=\"lower\">", "\n  <link name=\"lower\">"),
            "(XML)",
            "malformed XML",
        ),
        (
            "bad number",
            pendulum.replace(r#"<axis xyz="0 1 0"/>"#, r#"<axis xyz="0 1"/>"#),
            "<axis>",
            "attribute `xyz`: expected 3 finite numbers separated by spaces, found \"0 1\"",
        ),
        (
            "missing link",
            pendulum.replace(r#"<child link="lower"/>"#, r#"<child link="forearm"/>"#),
            "<joint name=\"elbow\">",
            "child link `forearm` is not a <link> of the file",
        ),
        (
            "zero axis",
            pendulum.replace(r#"<axis xyz="0 1 0"/>"#, r#"<axis xyz="0 0 0"/>"#),
            "<joint name=\"elbow\">",
            "<axis> xyz: expected a non-zero vector",
        ),
        (
            "negative mass",
            pendulum.replace(&format!(r#"<mass value="{M2}"/>"#), r#"<mass value="-1"/>"#),
            "<inertial>",
            "expected a mass ≥ 0 (kg), found -1",
        ),
        (
            "triangle inequality",
            pendulum.replace(r#"izz="0.06""#, r#"izz="0.09""#),
            "<inertial>",
            "inertia violates the triangle inequality",
        ),
        (
            "not semi-definite",
            pendulum.replace(r#"izz="0.03""#, r#"izz="-0.03""#),
            "<inertial>",
            "inertia is not positive semi-definite",
        ),
        (
            "moving link without mass",
            pendulum.replace(&format!(r#"<mass value="{M2}"/>"#), r#"<mass value="0"/>"#).replace(
                r#"<inertia ixx="0.02" ixy="0" ixz="0" iyy="0.05" iyz="0" izz="0.06"/>"#,
                r#"<inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/>"#,
            ),
            "<link name=\"lower\">",
            "the link moves (revolute joint `elbow`) but has no mass",
        ),
        (
            "lower above upper",
            pendulum.replace(r#"lower="-2" upper="2""#, r#"lower="2" upper="-2""#),
            "<limit>",
            "expected lower ≤ upper, found lower 2 > upper -2",
        ),
        (
            "revolute without limit",
            pendulum.replace(r#"<limit lower="-2" upper="2" effort="5" velocity="3"/>"#, ""),
            "<joint name=\"elbow\">",
            "expected a <limit lower upper effort velocity> element",
        ),
        (
            "two roots",
            pendulum.replace("</robot>", "<link name=\"spare\"/>\n</robot>"),
            "<link name=\"spare\">",
            "expected one root link (a link that is no joint's child), found 2: base, spare",
        ),
        (
            "unknown joint type",
            pendulum.replace(r#"type="continuous""#, r#"type="hinge""#),
            "<joint name=\"shoulder\">",
            "attribute `type`: expected one of revolute",
        ),
        (
            "mimic loop",
            pendulum
                .replace(
                    r#"<dynamics damping="0.1"/>"#,
                    r#"<dynamics damping="0.1"/><mimic joint="elbow"/>"#,
                )
                .replace(
                    r#"<limit lower="-2" upper="2" effort="5" velocity="3"/>"#,
                    r#"<limit lower="-2" upper="2" effort="5" velocity="3"/><mimic joint="shoulder"/>"#,
                ),
            "<mimic>",
            "mimic loop: shoulder → elbow → shoulder",
        ),
    ];
    for (name, text, element, message) in cases {
        let e = parse(&text, &ImportOptions::default()).expect_err(name);
        let Error::ModelFile {
            path,
            line,
            element: found,
            message: said,
        } = &e
        else {
            panic!("{name}: expected a model-file error, got {e:?}");
        };
        assert_eq!(path, Path::new("test.urdf"), "{name}");
        assert_eq!(found, element, "{name}: {e}");
        assert!(said.contains(message), "{name}: {e}");
        let expected_line = match name {
            "malformed XML" => line.expect("a line"),
            "bad number" => line_of(&text, r#"<axis xyz="0 1"/>"#),
            "negative mass" | "triangle inequality" | "not semi-definite" => {
                let needle = if name == "not semi-definite" {
                    "<inertial>"
                } else {
                    "0 0 -0.3\" rpy"
                };
                if name == "not semi-definite" {
                    line_of(&text, needle)
                } else {
                    line_of(&text, needle) - 1
                }
            }
            "missing link" | "revolute without limit" | "zero axis" => {
                line_of(&text, "<joint name=\"elbow\"")
            }
            "moving link without mass" => line_of(&text, "<link name=\"lower\""),
            "lower above upper" => line_of(&text, "<limit"),
            "two roots" => line_of(&text, "spare"),
            "unknown joint type" => line_of(&text, "<joint name=\"shoulder\""),
            "mimic loop" => line_of(&text, "<mimic joint=\"elbow\""),
            _ => unreachable!("every case has a line"),
        };
        assert_eq!(*line, Some(expected_line), "{name}: {e}");
    }
}

#[test]
fn a_root_link_called_world_is_the_world() {
    let text = r#"<robot name="bolted">
  <link name="world"/>
  <joint name="bolt" type="fixed"><parent link="world"/><child link="base"/><origin xyz="0 0 0.5"/></joint>
  <link name="base"><collision><geometry><sphere radius="0.1"/></geometry></collision></link>
  <joint name="hinge" type="continuous"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/></joint>
  <link name="arm"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
</robot>"#;
    let d = parse(text, &ImportOptions::default())
        .expect("a valid URDF")
        .description;
    let names: Vec<&str> = d.bodies.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["arm"]);
    assert_eq!(d.geometries[0].body, "world");
    assert!((d.geometries[0].X_BG.p.z - 0.5).abs() < TOL);
    let floating = ImportOptions {
        base: Base::Floating,
        ..ImportOptions::default()
    };
    let e = parse(text, &floating).expect_err("a world root cannot float");
    assert!(
        e.to_string()
            .starts_with("test.urdf:2: <link name=\"world\">: the root link is `world`"),
        "{e}"
    );
}

/// `root` imports the hand of the arm and what hangs from it: the hand (with the tool sphere
/// merged into it) and its two fingers, their mimic coupler kept; the root takes the base's
/// place at the given pose, on a fixed joint to the world.
#[test]
fn a_sub_tree_imports_the_hand_and_its_fingers() {
    let options = ImportOptions {
        root: Some("hand".into()),
        pose: Pose::translation(Vector3::new(0.0, 0.0, 0.4)),
        ..ImportOptions::default()
    };
    let d = parse(arm(), &options)
        .expect("a valid sub-tree")
        .description;
    let bodies: Vec<&str> = d.bodies.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(bodies, ["hand", "left", "right"]);
    let BodyMotion::Jointed(hand) = &d.bodies[0].motion else {
        panic!("a jointed hand")
    };
    assert_eq!(
        (hand.joint, hand.parent.as_deref()),
        (JointKind::Fixed, None)
    );
    assert!((hand.X_PJ.p - Vector3::new(0.0, 0.0, 0.4)).norm() < TOL);
    assert!((hand.inertia.mass - 0.5).abs() < TOL);
    let geometries: Vec<&str> = d.geometries.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(geometries, ["tcp"]);
    assert_eq!(d.couplers.len(), 1);
    assert_eq!(d.couplers[0].leader, "left");
    let built = d.build().expect("a valid description");
    assert_eq!(built.simulator.model.nv(), 2);
    // An unknown link is named.
    let options = ImportOptions {
        root: Some("gripper".into()),
        ..ImportOptions::default()
    };
    let e = parse(arm(), &options).expect_err("no such link");
    assert!(
        e.to_string()
            .contains("root link `gripper` (the sub-tree to import) is not a <link>"),
        "{e}"
    );
}

/// A mimic whose leader is outside the imported sub-tree is refused with both names.
#[test]
fn a_sub_tree_refuses_a_mimic_of_a_joint_outside_it() {
    let text = arm().replace(
        r#"<mimic joint="finger_left" multiplier="1" offset="0.001"/>"#,
        r#"<mimic joint="j2"/>"#,
    );
    let options = ImportOptions {
        root: Some("hand".into()),
        ..ImportOptions::default()
    };
    let e = parse(&text, &options).expect_err("leader outside");
    assert!(
        e.to_string()
            .contains("mimics joint `j2`, which is not below the imported root link `hand`"),
        "{e}"
    );
}

/// `parent` welds the root to a body of the scene at the pose in that body's frame; the pair
/// is excluded from collisions; a floating base and a massless root are refused.
#[test]
fn a_root_welded_to_a_parent_body_hangs_from_it() {
    let options = ImportOptions {
        root: Some("hand".into()),
        parent: Some("slide".into()),
        pose: Pose {
            R: rpy_matrix([std::f64::consts::PI, 0.0, 0.0]),
            p: Vector3::new(0.0, 0.0, 0.4),
        },
        ..ImportOptions::default()
    };
    let d = parse(arm(), &options)
        .expect("a valid sub-tree")
        .description;
    let BodyMotion::Jointed(hand) = &d.bodies[0].motion else {
        panic!("a jointed hand")
    };
    assert_eq!(
        (hand.joint, hand.parent.as_deref()),
        (JointKind::Fixed, Some("slide"))
    );
    assert!((hand.X_PJ.R - rpy_matrix([std::f64::consts::PI, 0.0, 0.0])).norm() < TOL);
    assert_eq!(
        d.excluded_collisions[0],
        ("slide".to_string(), "hand".to_string())
    );
    let floating = ImportOptions {
        base: Base::Floating,
        ..options.clone()
    };
    let e = parse(arm(), &floating).expect_err("floating on a parent");
    assert!(
        e.to_string()
            .contains("a floating base joins the world: it cannot hang from body `slide`"),
        "{e}"
    );
    let tool = ImportOptions {
        root: Some("tcp".into()),
        ..options
    };
    let e = parse(arm(), &tool).expect_err("a massless root");
    assert!(
        e.to_string().contains("but has no mass") && e.to_string().contains("weld to body `slide`"),
        "{e}"
    );
}
