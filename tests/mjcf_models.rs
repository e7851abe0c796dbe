//! MJCF import (`stiction::import::mjcf`): small models written here, checked against closed
//! forms, and (ignored by default) MuJoCo's own models checked against MuJoCo.
//!
//! The ignored tests need a Python environment with `mujoco`, `dm_control` and `gymnasium`,
//! which `scripts/robots/setup.sh` makes (`.ci/run` runs them):
//!
//! ```text
//! scripts/robots/setup.sh                          # .venv-robots, or give a folder
//! STICTION_ROBOTS_VENV=DIR cargo test --test mjcf_models -- --ignored --nocapture
//! ```
//!
//! `STICTION_ROBOTS_VENV` defaults to `.venv-robots` in the repository. Each model's reference comes
//! from `scripts/robots/mujoco_reference.py`: `M` (`mj_fullM`) and `qfrc_bias` at 20 random
//! configurations.
#![allow(non_snake_case)]

#[path = "common/smooth.rs"]
mod smooth;

use std::path::{Path, PathBuf};

use approx::assert_relative_eq;
use nalgebra::{DMatrix, DVector, Matrix3, UnitQuaternion, Vector3};
use stiction::error::Error;
use stiction::import::mjcf::{self, MjcfModel};
use stiction::multibody::{bias_forces, forward_kinematics, mass_matrix, JointKind, MultibodyData};
use stiction::scene::{BodyMotion, JointedBody};

/// Round-off of a few products of f64 values of order one.
const EXACT: f64 = 1e-12;

fn parse(text: &str) -> MjcfModel {
    mjcf::parse(text, Path::new("test.xml")).expect("a valid model")
}

fn body<'a>(model: &'a MjcfModel, name: &str) -> &'a JointedBody {
    let b = model
        .description
        .bodies
        .iter()
        .find(|b| b.name == name)
        .unwrap_or_else(|| panic!("a body {name}"));
    match &b.motion {
        BodyMotion::Jointed(j) => j,
        BodyMotion::Prescribed { .. } => panic!("{name} is jointed"),
    }
}

/// `M(q)` and `bias(q, v)` of an imported model.
fn dynamics(model: &MjcfModel, q: &DVector<f64>, v: &DVector<f64>) -> (DMatrix<f64>, DVector<f64>) {
    let built = model.description.build().expect("a model that builds");
    let m = &built.simulator.model;
    let mut data = MultibodyData::new(m);
    forward_kinematics(m, &mut data, q, v);
    (mass_matrix(m, &data), bias_forces(m, &data, v))
}

const DOUBLE_PENDULUM: &str = r#"
<mujoco model="double pendulum">
  <compiler angle="radian"/>
  <option gravity="0 0 -9.81" timestep="0.001"/>
  <worldbody>
    <body name="upper" pos="0 0 2">
      <joint name="shoulder" type="hinge" axis="0 1 0" armature="0.05"/>
      <inertial pos="0 0 -0.3" mass="1.5" diaginertia="0.02 0.03 0.04"/>
      <body name="lower" pos="0 0 -0.6">
        <joint name="elbow" type="hinge" axis="0 1 0"/>
        <inertial pos="0 0 -0.25" mass="0.8" diaginertia="0.01 0.015 0.005"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"#;

#[test]
fn a_double_pendulum_has_the_closed_form_mass_matrix_and_gravity_torques() {
    let model = parse(DOUBLE_PENDULUM);
    let (m1, l1, i1, arm) = (1.5, 0.3, 0.03, 0.05);
    let (L1, m2, l2, i2) = (0.6, 0.8, 0.25, 0.015);
    let g = 9.81;
    let names: Vec<&str> = model.joints.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["shoulder", "elbow"]);
    for (t1, t2) in [(0.0, 0.0), (0.4, -1.1), (2.5, 0.7)] {
        let q = DVector::from_vec(vec![t1, t2]);
        let (M, bias) = dynamics(&model, &q, &DVector::zeros(2));
        let c2 = f64::cos(t2);
        let M11 = arm + i1 + m1 * l1 * l1 + i2 + m2 * (L1 * L1 + l2 * l2 + 2.0 * L1 * l2 * c2);
        let M12 = i2 + m2 * (l2 * l2 + L1 * l2 * c2);
        let M22 = i2 + m2 * l2 * l2;
        assert_relative_eq!(
            M,
            DMatrix::from_row_slice(2, 2, &[M11, M12, M12, M22]),
            epsilon = EXACT
        );
        // bias = ∂V/∂q with V = −g (m1 l1 cos θ1 + m2 (L1 cos θ1 + l2 cos(θ1 + θ2))).
        let b2 = m2 * g * l2 * f64::sin(t1 + t2);
        let b1 = g * (m1 * l1 + m2 * L1) * f64::sin(t1) + b2;
        assert_relative_eq!(bias, DVector::from_vec(vec![b1, b2]), epsilon = EXACT);
    }
    assert_eq!(model.description.settings.dt, 0.001);
}

#[test]
fn defaults_nest_and_childclass_applies_unless_a_class_is_given() {
    let model = parse(
        r#"
<mujoco>
  <default>
    <joint damping="1" armature="0.1"/>
    <geom type="sphere" size="0.1" density="500"/>
    <default class="heavy">
      <geom density="2000"/>
      <default class="stiff">
        <joint stiffness="30" springref="10"/>
      </default>
    </default>
  </default>
  <worldbody>
    <body name="a" childclass="stiff">
      <joint name="ja" axis="1 0 0"/>
      <geom/>
      <body name="b" pos="0 0 -1">
        <joint name="jb" class="main" axis="1 0 0" damping="3"/>
        <geom class="main"/>
      </body>
    </body>
  </worldbody>
</mujoco>"#,
    );
    let volume = 4.0 / 3.0 * std::f64::consts::PI * 0.001;
    let a = body(&model, "a");
    // `stiff` inherits `heavy`'s density and main's damping; springref in degrees.
    assert_relative_eq!(a.inertia.mass, 2000.0 * volume, epsilon = EXACT);
    assert_eq!((a.damping[0], a.armature[0]), (1.0, 0.1));
    let spring = a.spring.expect("a spring from class stiff");
    assert_eq!(spring.stiffness, 30.0);
    assert_relative_eq!(spring.reference, 10f64.to_radians(), epsilon = EXACT);
    // An explicit class beats the childclass; an explicit attribute beats both.
    let b = body(&model, "b");
    assert_relative_eq!(b.inertia.mass, 500.0 * volume, epsilon = EXACT);
    assert_eq!(b.damping[0], 3.0);
    assert!(b.spring.is_none());
}

/// The five orientation forms of one rotation (90° about x) give one pose, and `eulerseq`
/// distinguishes rotating from fixed axes.
#[test]
fn orientation_forms_agree_on_equivalent_rotations() {
    let forms = [
        r#"quat="0.7071067811865476 0.7071067811865476 0 0""#,
        r#"axisangle="1 0 0 90""#,
        r#"euler="90 0 0""#,
        r#"xyaxes="1 0 0 0 0 1""#,
        r#"zaxis="0 -1 0""#,
    ];
    let geoms: String = forms
        .iter()
        .enumerate()
        .map(|(i, f)| {
            format!(r#"<geom name="g{i}" type="box" size="0.1 0.2 0.3" pos="0 {i} 0" {f}/>"#)
        })
        .collect();
    let model = parse(&format!("<mujoco><worldbody>{geoms}</worldbody></mujoco>"));
    let expected = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::FRAC_PI_2);
    for (i, g) in model.description.geometries.iter().enumerate() {
        assert_relative_eq!(
            g.X_BG.R,
            *expected.to_rotation_matrix().matrix(),
            epsilon = EXACT
        );
        assert_relative_eq!(g.X_BG.p, Vector3::new(0.0, i as f64, 0.0), epsilon = EXACT);
    }
    // Rotating axes x, y, z by (a, b, c) equal fixed axes Z, Y, X by (c, b, a).
    let rotating = parse(
        r#"<mujoco><compiler eulerseq="xyz"/><worldbody>
           <geom type="sphere" size="1" euler="30 40 50"/></worldbody></mujoco>"#,
    );
    let fixed = parse(
        r#"<mujoco><compiler eulerseq="ZYX"/><worldbody>
           <geom type="sphere" size="1" euler="50 40 30"/></worldbody></mujoco>"#,
    );
    let (r, f) = (
        &rotating.description.geometries[0],
        &fixed.description.geometries[0],
    );
    assert_relative_eq!(r.X_BG.R, f.X_BG.R, epsilon = EXACT);
    let rx = UnitQuaternion::from_axis_angle(&Vector3::x_axis(), 30f64.to_radians());
    let ry = UnitQuaternion::from_axis_angle(&Vector3::y_axis(), 40f64.to_radians());
    let rz = UnitQuaternion::from_axis_angle(&Vector3::z_axis(), 50f64.to_radians());
    assert_relative_eq!(
        r.X_BG.R,
        *(rx * ry * rz).to_rotation_matrix().matrix(),
        epsilon = EXACT
    );
}

/// A capsule's mass and inertia by density: a cylinder of length 2h and two hemispheres, each
/// with its centre of mass 3r/8 from its flat face.
#[test]
fn inertia_from_a_capsule_geom_matches_the_closed_form() {
    let (r, h, rho) = (0.05, 0.2, 800.0);
    let model = parse(&format!(
        r#"<mujoco><worldbody><body name="link">
             <joint type="slide" axis="0 0 1"/>
             <geom type="capsule" size="{r}" fromto="0 0 0 {} 0 0" density="{rho}"/>
           </body></worldbody></mujoco>"#,
        2.0 * h
    ));
    let pi = std::f64::consts::PI;
    let m_cyl = rho * pi * r * r * 2.0 * h;
    let m_hemi = rho * 2.0 / 3.0 * pi * r * r * r;
    let axial = m_cyl * r * r / 2.0 + 2.0 * 0.4 * m_hemi * r * r;
    let d = h + 3.0 * r / 8.0;
    let hemi_own = 0.4 * m_hemi * r * r - m_hemi * (3.0 * r / 8.0).powi(2);
    let transverse = m_cyl * (3.0 * r * r + 4.0 * h * h) / 12.0 + 2.0 * (hemi_own + m_hemi * d * d);
    let link = body(&model, "link");
    assert_relative_eq!(link.inertia.mass, m_cyl + 2.0 * m_hemi, epsilon = EXACT);
    assert_relative_eq!(link.inertia.com, Vector3::new(h, 0.0, 0.0), epsilon = EXACT);
    let expected = Matrix3::from_diagonal(&Vector3::new(axial, transverse, transverse));
    assert_relative_eq!(link.inertia.inertia_com, expected, epsilon = EXACT);
}

/// `inertiafromgeom` chooses between `<inertial>` and the geoms; `boundmass` and
/// `boundinertia` raise what is below them; `discardvisual` drops visual geoms' mass;
/// `settotalmass` scales every body.
#[test]
fn compiler_settings_choose_and_bound_the_inertia() {
    let model_with = |compiler: &str| {
        parse(&format!(
            r#"<mujoco><compiler {compiler}/><worldbody>
                 <body name="a"><joint axis="1 0 0"/>
                   <inertial pos="0 0 0" mass="3" diaginertia="1 1 1"/>
                   <geom type="box" size="0.1 0.1 0.1" density="1000"/>
                   <geom type="box" size="0.1 0.1 0.1" pos="0 0 1" density="1000" contype="0" conaffinity="0"/>
                 </body>
                 <body name="b" pos="1 0 0"><joint axis="1 0 0"/>
                   <inertial pos="0 0 0" mass="1e-3" diaginertia="1e-6 1e-6 1e-6"/>
                   <geom type="sphere" size="0.01" mass="1e-3"/>
                 </body>
               </worldbody></mujoco>"#
        ))
    };
    let cube = 8.0; // kg: 1000 kg/m³ × (0.2 m)³
    let auto = model_with(r#"angle="radian""#);
    assert_eq!(body(&auto, "a").inertia.mass, 3.0);
    let from_geoms = model_with(r#"inertiafromgeom="true""#);
    let a = body(&from_geoms, "a");
    assert_relative_eq!(a.inertia.mass, 2.0 * cube, epsilon = EXACT);
    assert_relative_eq!(a.inertia.com, Vector3::new(0.0, 0.0, 0.5), epsilon = EXACT);
    let discard = model_with(r#"inertiafromgeom="true" discardvisual="true""#);
    assert_relative_eq!(body(&discard, "a").inertia.mass, cube, epsilon = EXACT);
    let bounded = model_with(r#"boundmass="0.5" boundinertia="0.01""#);
    let b = body(&bounded, "b");
    assert_eq!(b.inertia.mass, 0.5);
    assert_relative_eq!(
        b.inertia.inertia_com,
        Matrix3::identity() * 0.01,
        epsilon = EXACT
    );
    let total = model_with(r#"settotalmass="6.002""#);
    assert_relative_eq!(body(&total, "a").inertia.mass, 6.0, epsilon = EXACT);
    assert_relative_eq!(body(&total, "b").inertia.mass, 2e-3, epsilon = EXACT);
    assert_relative_eq!(
        body(&total, "a").inertia.inertia_com,
        Matrix3::identity() * 2.0,
        epsilon = EXACT
    );
}

/// An arm on a ball joint (shoulder 0.1 m above its body's origin, an elbow hinge below) and
/// the same arm on three hinges x, y, z about the same point, written with `ARM_JOINTS`.
fn shoulder_arm(joints: &str) -> String {
    format!(
        r#"<mujoco><worldbody><body name="upper" pos="0.2 -0.1 1.5" euler="10 20 30">
             {joints}
             <inertial pos="0.02 0.01 -0.2" mass="1.3" fullinertia="0.05 0.04 0.02 0.003 -0.002 0.001"/>
             <body name="lower" pos="0 0 -0.4">
               <joint name="elbow" axis="0 1 0"/>
               <geom type="capsule" fromto="0 0 0 0.05 0 -0.3" size="0.03"/>
             </body>
           </body></worldbody></mujoco>"#
    )
}

/// A ball joint is the rotation of a free joint about its anchor: at a configuration, its
/// three velocities span what three hinges x, y, z about the anchor span at the same pose.
/// With `ω_J = G(θ) θ̇` the gimbal's map (`G = [x, R_x(a) y, R_x(a) R_y(b) z]`), the gimbal's
/// mass matrix is `Gᵀ M G` and its gravity forces `Gᵀ g`.
#[test]
fn a_ball_joint_turns_as_three_hinges_about_its_anchor() {
    let ball = parse(&shoulder_arm(
        r#"<joint name="shoulder" type="ball" pos="0 0 0.1" armature="0.01" damping="0.2"/>"#,
    ));
    let gimbal = parse(&shoulder_arm(
        r#"<joint name="sx" axis="1 0 0" pos="0 0 0.1" armature="0.01"/>
           <joint name="sy" axis="0 1 0" pos="0 0 0.1" armature="0.01"/>
           <joint name="sz" axis="0 0 1" pos="0 0 0.1" armature="0.01"/>"#,
    ));
    assert_eq!(ball.joints[0].kind, JointKind::Ball);
    assert_eq!((ball.joints[1].q_index, ball.joints[1].v_index), (4, 3));
    assert_eq!(body(&ball, "upper").q0, vec![1.0, 0.0, 0.0, 0.0]);
    assert_eq!(body(&ball, "upper").damping, vec![0.2; 3]);
    let (a, b, c, elbow) = (0.4, -0.3, 1.1, 0.7);
    let (Rx, Ry, Rz) = (
        nalgebra::Rotation3::from_axis_angle(&Vector3::x_axis(), a),
        nalgebra::Rotation3::from_axis_angle(&Vector3::y_axis(), b),
        nalgebra::Rotation3::from_axis_angle(&Vector3::z_axis(), c),
    );
    let quat = UnitQuaternion::from_rotation_matrix(&(Rx * Ry * Rz));
    let q_ball = DVector::from_vec(vec![quat.w, quat.i, quat.j, quat.k, elbow]);
    let q_gimbal = DVector::from_vec(vec![a, b, c, elbow]);
    let mut G = DMatrix::zeros(4, 4);
    G.view_mut((0, 0), (3, 1)).copy_from(&Vector3::x());
    G.view_mut((0, 1), (3, 1)).copy_from(&(Rx * Vector3::y()));
    G.view_mut((0, 2), (3, 1))
        .copy_from(&(Rx * Ry * Vector3::z()));
    G[(3, 3)] = 1.0;
    let (M_ball, g_ball) = dynamics(&ball, &q_ball, &DVector::zeros(4));
    let (M_gimbal, g_gimbal) = dynamics(&gimbal, &q_gimbal, &DVector::zeros(4));
    // Armature sits on the diagonal of each model's own velocities: compare without it.
    let armature = |M: DMatrix<f64>, n: usize| {
        let mut M = M;
        for i in 0..n {
            M[(i, i)] -= 0.01;
        }
        M
    };
    assert_relative_eq!(
        armature(M_gimbal, 3),
        G.transpose() * armature(M_ball, 3) * &G,
        epsilon = EXACT
    );
    assert_relative_eq!(g_gimbal, G.transpose() * g_ball, epsilon = EXACT);
}

/// A ball-jointed arm swinging into the floor: the step's analytic IFT agrees with the direct
/// dual path on every contact step and with central differences where the step is smooth,
/// through the quaternion's position block.
#[test]
fn a_ball_jointed_arm_rubbing_on_the_floor_passes_the_gradient_check() {
    let model = parse(
        r#"<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane"/>
    <body name="upper" pos="0 0 0.6" axisangle="1 1 0 50">
      <joint name="shoulder" type="ball" armature="0.01" damping="0.05"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03"/>
      <body name="lower" pos="0 0 -0.3">
        <joint name="elbow" axis="0 1 0" damping="0.05"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03"/>
      </body>
    </body>
  </worldbody>
</mujoco>"#,
    );
    let (contact_steps, smooth_steps, _) = check_contact_steps("ball arm", &model, 8);
    assert!(contact_steps > 50, "the arm reaches the floor");
    assert!(smooth_steps >= 3, "{smooth_steps} smooth steps of 8");
}

#[test]
fn a_slide_and_a_hinge_in_one_body_chain_through_a_massless_frame() {
    let model = parse(
        r#"<mujoco><worldbody><body name="torso" pos="0 0 1">
             <joint name="x" type="slide" axis="1 0 0"/>
             <joint name="pitch" type="hinge" axis="0 1 0" pos="0 0 0.2"/>
             <geom type="sphere" size="0.1" mass="2"/>
           </body></worldbody></mujoco>"#,
    );
    let kinds: Vec<JointKind> = model.joints.iter().map(|j| j.kind).collect();
    assert_eq!(
        kinds,
        [
            JointKind::Prismatic { axis: Vector3::x() },
            JointKind::Revolute { axis: Vector3::y() }
        ]
    );
    assert_eq!(body(&model, "torso:x").inertia.mass, 0.0);
    // Pitching about the anchor 0.2 m above the sphere's centre: M = [[m, m d], [m d, m d² + I]].
    let (M, _) = dynamics(&model, &DVector::zeros(2), &DVector::zeros(2));
    let (m, d, i) = (2.0, -0.2, 0.4 * 2.0 * 0.01);
    assert_relative_eq!(
        M,
        DMatrix::from_row_slice(2, 2, &[m, m * d, m * d, m * d * d + i]),
        epsilon = EXACT
    );
}

#[test]
fn limits_couplers_servos_and_filters_are_read() {
    let model = parse(
        r#"<mujoco>
  <worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body name="a"><joint name="ja" axis="0 1 0" range="-30 60" ref="10" margin="0.05"/>
      <geom type="sphere" size="0.1" contype="2" conaffinity="4" friction="0.3 0.01 0.001"/>
      <geom type="sphere" size="0.2" contype="0" conaffinity="0"/>
      <body name="b"><joint name="jb" axis="0 1 0"/><geom type="sphere" size="0.1" condim="1"/></body>
    </body>
  </worldbody>
  <equality><joint joint1="jb" joint2="ja" polycoef="0.1 -2 0 0 0"/></equality>
  <actuator>
    <motor joint="ja" gear="50" ctrlrange="-1 1"/>
    <position joint="jb" kp="100" kv="5" forcerange="-7 7"/>
  </actuator>
</mujoco>"#,
    );
    let a = body(&model, "a");
    // The limits move inward by the margin (rad: MuJoCo does not convert it).
    let limits = a.limits.expect("ja is limited (autolimits)");
    assert_relative_eq!(limits.lower, (-30f64).to_radians() + 0.05, epsilon = EXACT);
    assert_relative_eq!(limits.upper, 60f64.to_radians() - 0.05, epsilon = EXACT);
    assert!(body(&model, "b").limits.is_none());
    // q is MuJoCo's qpos: the rest pose is q = ref.
    assert_relative_eq!(a.q0[0], 10f64.to_radians(), epsilon = EXACT);
    let coupler = &model.description.couplers[0];
    assert_eq!(
        (
            coupler.follower.as_str(),
            coupler.leader.as_str(),
            coupler.multiplier
        ),
        ("b", "a", -2.0)
    );
    assert_relative_eq!(
        coupler.offset,
        0.1 + 2.0 * 10f64.to_radians(),
        epsilon = EXACT
    );
    let [motor, servo] = &model.description.actuators[..] else {
        panic!("two actuators")
    };
    assert_eq!(
        (motor.gear, motor.effort_limit, motor.ctrl_range),
        (50.0, 50.0, Some([-1.0, 1.0]))
    );
    assert_eq!(
        servo.kind,
        stiction::scene::ActuatorKind::Servo { kp: 100.0, kv: 5.0 }
    );
    assert_eq!(servo.effort_limit, 7.0);
    // The visual sphere is skipped for collision but weighs.
    let names: Vec<&str> = model
        .description
        .geometries
        .iter()
        .map(|g| g.name.as_str())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    let g = &model.description.geometries[1];
    assert_eq!(g.filter.map(|f| (f.contype, f.conaffinity)), Some((2, 4)));
    assert_eq!(g.contact.map(|c| c.mu), Some(0.3));
    // condim 1: frictionless.
    assert_eq!(
        model.description.geometries[2].contact.map(|c| c.mu),
        Some(0.0)
    );
    let volume = |r: f64| 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
    assert_relative_eq!(
        a.inertia.mass,
        1000.0 * (volume(0.1) + volume(0.2)),
        epsilon = 1e-9
    );
    assert_eq!(
        model.report.summary().as_deref(),
        Some("skipped (no effect on the dynamics here): 1× visual-only geom")
    );
    model.description.build().expect("the description builds");
}

/// A mesh geom is its asset's convex hull, scaled, in the geom frame, with the hull's mass
/// properties: an OBJ box of 0.25 × 0.5 × 0.5 m (its corners in the file, plus one interior
/// point the hull drops) scaled by 0.5 in x, in `meshdir`, with density 500, has the mass
/// and inertia of the solid box 0.125 × 0.5 × 0.5 m, its centre where the file puts it.
#[test]
fn a_mesh_geom_is_its_convex_hull_with_the_hulls_inertia() {
    let dir = std::env::temp_dir().join(format!("stiction-mjcf-mesh-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("assets")).expect("a scratch folder");
    let mut obj = String::new();
    // Coordinates exact in f32, as mesh files store them.
    for x in [0.0, 0.25] {
        for y in [-0.25, 0.25] {
            for z in [0.125, 0.625] {
                obj += &format!("v {x} {y} {z}\n");
            }
        }
    }
    obj += "v 0.125 0 0.375\nf 1 2 9\nf 1 2 3\nf 2 3 4\nf 5 6 7\nf 6 7 8\nf 1 2 5\nf 2 5 6\n";
    std::fs::write(dir.join("assets/block.obj"), obj).expect("an OBJ");
    let model_path = dir.join("model.xml");
    std::fs::write(
        &model_path,
        r#"<mujoco><compiler meshdir="assets"/>
  <asset><mesh file="block.obj" scale="0.5 1 1"/></asset>
  <worldbody><body name="b" pos="0 0 1"><freejoint/>
    <geom type="mesh" mesh="block" density="500" pos="1 0 0"/>
  </body></worldbody></mujoco>"#,
    )
    .expect("a model");
    let model = mjcf::load(&model_path).expect("the model loads");
    let b = body(&model, "b");
    let (w, d, h) = (0.125, 0.5, 0.5);
    let m = 500.0 * w * d * h;
    assert_relative_eq!(b.inertia.mass, m, epsilon = 1e-12);
    // The box's centre: (0.0625, 0, 0.375) in the mesh, moved 1 m along x by the geom's pos.
    assert_relative_eq!(
        b.inertia.com,
        Vector3::new(1.0625, 0.0, 0.375),
        epsilon = 1e-12
    );
    let expected = Matrix3::from_diagonal(&Vector3::new(
        m * (d * d + h * h) / 12.0,
        m * (w * w + h * h) / 12.0,
        m * (w * w + d * d) / 12.0,
    ));
    assert_relative_eq!(b.inertia.inertia_com, expected, epsilon = 1e-12);
    let geom = &model.description.geometries[0];
    let stiction::geometry::Shape::ConvexMesh { vertices } = &geom.shape else {
        panic!("a convex mesh, not {:?}", geom.shape)
    };
    assert_eq!(vertices.len(), 8, "the interior point is not on the hull");
    assert!(vertices.iter().all(|v| v.x == 0.0 || v.x == 0.125));
    // A missing asset is an error at the geom's line.
    let text = std::fs::read_to_string(&model_path)
        .expect("the model")
        .replace(r#"mesh="block""#, r#"mesh="nothing""#);
    let e = mjcf::parse(&text, &model_path)
        .expect_err("refused")
        .to_string();
    assert!(e.contains(":4:") && e.contains("mesh"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The error's text names the file and line (`test.xml:LINE:`).
fn error_at(text: &str) -> (String, usize) {
    let e = mjcf::parse(text, Path::new("test.xml")).expect_err("an invalid model");
    let Error::ProblemFile { location, .. } = &e else {
        panic!("a file error: {e}")
    };
    (e.to_string(), location.expect("a location").line)
}

#[test]
fn unsupported_and_non_physical_input_is_an_error_at_its_line() {
    let (message, line) = error_at(
        "<mujoco>\n<worldbody>\n<body><joint/><geom size=\"0.1\"/></body>\n</worldbody>\n<tendon>\n<fixed name=\"t\"/>\n</tendon>\n</mujoco>",
    );
    assert_eq!(line, 6, "{message}");
    assert!(
        message.starts_with("test.xml:6:") && message.contains("fixed"),
        "{message}"
    );
    let (message, line) = error_at(
        "<mujoco>\n<worldbody>\n<body name=\"bad\">\n<joint/>\n<inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"1 1 3\"/>\n</body>\n</worldbody>\n</mujoco>",
    );
    assert_eq!(line, 3, "{message}");
    assert!(
        message.contains("A + B ≥ C") && message.contains("body \"bad\""),
        "{message}"
    );
    let (message, line) = error_at("<mujoco>\n<worldbody>\n<body>\n<joint name=\"j\" type=\"ball\" range=\"0 30\"/>\n<geom size=\"1\"/></body></worldbody></mujoco>");
    assert_eq!(line, 4, "{message}");
    assert!(
        message.contains("range") && message.contains("cone limit"),
        "{message}"
    );
    let (message, line) = error_at("<mujoco>\n<worldbody>\n<body>\n<joint/>\n<geom type=\"mesh\" mesh=\"m\"/></body></worldbody></mujoco>");
    assert_eq!(line, 5, "{message}");
    assert!(message.contains("the name of a <mesh> asset"), "{message}");
    let (message, line) = error_at("<mujoco>\n<default>\n<geom size=\"-1\"/>\n</default>\n<worldbody><body><joint/><geom/></body></worldbody></mujoco>");
    assert_eq!(line, 3, "a bad default points at the default: {message}");
    let (_, line) = error_at("<mujoco>\n<worldbody>\n<body>\n</worldbody></mujoco>");
    assert_eq!(line, 4);
}

#[test]
fn includes_resolve_relative_to_the_including_file() {
    let dir = std::env::temp_dir().join(format!("stiction-mjcf-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("parts")).expect("a temporary folder");
    std::fs::write(
        dir.join("parts/arm.xml"),
        r#"<mujoco><include file="defaults.xml"/><worldbody><body name="arm"><joint/><geom size="0.1"/></body></worldbody></mujoco>"#,
    )
    .expect("write");
    std::fs::write(
        dir.join("parts/defaults.xml"),
        r#"<mujoco><default><joint damping="4"/></default></mujoco>"#,
    )
    .expect("write");
    std::fs::write(
        dir.join("robot.xml"),
        r#"<mujoco><include file="parts/arm.xml"/></mujoco>"#,
    )
    .expect("write");
    let model = mjcf::load(&dir.join("robot.xml")).expect("a model with includes");
    assert_eq!(body(&model, "arm").damping, [4.0]);
    std::fs::write(
        dir.join("parts/defaults.xml"),
        r#"<mujoco><include file="arm.xml"/></mujoco>"#,
    )
    .expect("write");
    let e = mjcf::load(&dir.join("robot.xml")).expect_err("an include cycle");
    assert!(e.to_string().contains("include cycle"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Springs, armature and damping of an imported model enter the step's analytic derivative
/// `∂r/∂θ` as they enter the dual-number reference (the step re-assembled in duals), in
/// states with contact: a sprung pendulum whose tip rubs on the floor, on a sprung slider,
/// beside a free ball with armature.
#[test]
fn imported_springs_and_armature_differentiate_like_the_dual_reference() {
    use stiction::derivatives::analytic::state_residual_jacobian;
    use stiction::derivatives::ift::{nominal_step, residual_jacobian};
    use stiction::derivatives::lifted::Directions;
    /// Both paths compute one derivative, analytically and by duals: round-off apart.
    const TOLERANCE: f64 = 1e-10;
    let model = parse(
        r#"<mujoco>
  <compiler angle="degree"/>
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane"/>
    <body name="ball" pos="0.6 0 0.1"><freejoint/><geom type="sphere" size="0.1"/></body>
    <body name="carriage" pos="0 0 0.5">
      <joint name="x" type="slide" axis="1 0 0" stiffness="40" springref="0.05" armature="0.3"/>
      <geom type="box" size="0.05 0.05 0.05" contype="0" conaffinity="0"/>
      <body name="arm">
        <joint name="swing" axis="0 1 0" stiffness="3" springref="30" armature="0.02" damping="0.1"/>
        <geom type="capsule" size="0.03" fromto="0 0 0 0 0 -0.49"/>
      </body>
    </body>
  </worldbody>
</mujoco>"#,
    );
    let built = model.description.build().expect("a model that builds");
    let mut sim = built.simulator;
    let recording =
        stiction::simulate::run(&mut sim, &built.initial_state, 0.2, |_, _| {}).expect("a rollout");
    let with_contact: Vec<_> = recording
        .states
        .iter()
        .zip(&recording.reports)
        .filter(|(_, r)| r.contacts.len() >= 2)
        .map(|(s, _)| s.clone())
        .collect();
    assert!(
        with_contact.len() > 10,
        "the ball and the arm touch the floor"
    );
    let u = DVector::zeros(sim.model.nu());
    for state in with_contact.iter().step_by(with_contact.len() / 4) {
        let nominal = nominal_step(&mut sim, state, &u).expect("nominal step");
        let dirs = Directions {
            nv: sim.model.nv(),
            nu: 0,
            np: 0,
        };
        let duals = residual_jacobian(&sim, &nominal, &[], dirs).expect("dual ∂r/∂θ");
        let analytic = state_residual_jacobian(&sim, &nominal).expect("analytic ∂r/∂θ");
        let scale = duals.abs().max();
        let e = (&analytic - &duals).abs().max() / scale;
        assert!(
            e <= TOLERANCE,
            "t = {}: ∂r/∂θ differs by {e:.2e} of {scale:.2e}",
            state.t
        );
    }
}

// ---------------------------------------------------------------------------------------------
// MuJoCo's models against MuJoCo (ignored by default: they need the Python packages).

/// Agreement of M and bias with MuJoCo, relative to the norm of MuJoCo's matrix or vector.
const MUJOCO_AGREEMENT: f64 = 1e-8;

fn venv() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("STICTION_ROBOTS_VENV").map(PathBuf::from),
        Some(Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv-robots")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|p| p.join("bin/python").exists())
}

fn site_packages(venv: &Path) -> PathBuf {
    let lib = venv.join("lib");
    std::fs::read_dir(&lib)
        .expect("the venv's lib folder")
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("site-packages"))
        .find(|p| p.exists())
        .expect("a site-packages folder")
}

/// MuJoCo's reference for `model`, from scripts/robots/mujoco_reference.py.
fn reference(venv: &Path, model: &Path) -> serde_json::Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/robots/mujoco_reference.py");
    let out = std::process::Command::new(venv.join("bin/python"))
        .arg(script)
        .arg(model)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn numbers(v: &serde_json::Value) -> Vec<f64> {
    match v {
        serde_json::Value::Array(items) => items.iter().flat_map(numbers).collect(),
        other => vec![other.as_f64().expect("a number")],
    }
}

/// `T` with `v_ours = T v_mujoco`: a free joint's `[v_W, ω_B]` becomes `[ω_W, v_W]`, a ball
/// joint's `ω_B` becomes `ω_J = R ω_B`.
fn velocity_map(model: &MjcfModel, q: &DVector<f64>, nv: usize) -> DMatrix<f64> {
    let mut T = DMatrix::identity(nv, nv);
    for j in model.joints.iter().filter(|j| j.kind == JointKind::Ball) {
        let (qi, vi) = (j.q_index, j.v_index);
        let quat = UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(
            q[qi],
            q[qi + 1],
            q[qi + 2],
            q[qi + 3],
        ));
        T.view_mut((vi, vi), (3, 3))
            .copy_from(quat.to_rotation_matrix().matrix());
    }
    for j in model.joints.iter().filter(|j| j.kind == JointKind::Free) {
        let (qi, vi) = (j.q_index, j.v_index);
        let quat = UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(
            q[qi + 3],
            q[qi + 4],
            q[qi + 5],
            q[qi + 6],
        ));
        let R = quat.to_rotation_matrix().into_inner();
        let mut block = DMatrix::zeros(6, 6);
        block.view_mut((0, 3), (3, 3)).copy_from(&R);
        block
            .view_mut((3, 0), (3, 3))
            .copy_from(&Matrix3::identity());
        T.view_mut((vi, vi), (6, 6)).copy_from(&block);
    }
    T
}

/// Loads `file`, compares M and bias with MuJoCo at 20 configurations, runs 2 s.
fn check_against_mujoco(venv: &Path, file: &Path) -> Result<(), String> {
    let model = mjcf::load(file).map_err(|e| format!("load: {e}"))?;
    let reference = reference(venv, file);
    let (nq, nv) = (
        reference["nq"].as_u64().unwrap_or(0) as usize,
        reference["nv"].as_u64().unwrap_or(0) as usize,
    );
    let built = model
        .description
        .build()
        .map_err(|e| format!("build: {}", Error::from(e)))?;
    let m = &built.simulator.model;
    if (m.nq(), m.nv()) != (nq, nv) {
        return Err(format!(
            "nq, nv = {}, {}; MuJoCo {nq}, {nv}",
            m.nq(),
            m.nv()
        ));
    }
    let mut data = MultibodyData::new(m);
    let mut worst = (0.0f64, 0.0f64);
    for sample in reference["samples"].as_array().expect("samples") {
        let q = DVector::from_vec(numbers(&sample["q"]));
        let T = velocity_map(&model, &q, nv);
        let v = &T * DVector::from_vec(numbers(&sample["v"]));
        forward_kinematics(m, &mut data, &q, &v);
        let M = T.transpose() * mass_matrix(m, &data) * &T;
        let bias = T.transpose() * bias_forces(m, &data, &v);
        let M_ref = DMatrix::from_row_slice(nv, nv, &numbers(&sample["M"]));
        let bias_ref = DVector::from_vec(numbers(&sample["bias"]));
        let eM = (&M - &M_ref).norm() / M_ref.norm();
        let eb = (&bias - &bias_ref).norm() / bias_ref.norm().max(1e-300);
        worst = (worst.0.max(eM), worst.1.max(eb));
    }
    if worst.0 > MUJOCO_AGREEMENT || worst.1 > MUJOCO_AGREEMENT {
        return Err(format!(
            "M off by {:.1e}, bias by {:.1e} (relative)",
            worst.0, worst.1
        ));
    }
    let mut sim = built.simulator;
    let recording = stiction::simulate::run(&mut sim, &built.initial_state, 2.0, |_, _| {})
        .map_err(|e| format!("2 s run: {e}"))?;
    let contacts: usize = recording.reports.iter().map(|r| r.contacts.len()).sum();
    println!(
        "{}: nq {nq}, nv {nv}; M agrees to {:.1e}, bias to {:.1e}; 2 s at δt = {} s, {} steps, {contacts} contact-steps; {}",
        file.display(),
        worst.0,
        worst.1,
        sim.settings.dt,
        recording.reports.len(),
        model.report.summary().unwrap_or_default()
    );
    Ok(())
}

#[test]
#[ignore = "needs MuJoCo, dm_control and gymnasium in the robots venv (STICTION_ROBOTS_VENV)"]
fn mujoco_standard_models_agree_with_mujoco_and_run() {
    let venv = venv().expect("a robots venv: see the module doc");
    let sp = site_packages(&venv);
    let gym = sp.join("gymnasium/envs/mujoco/assets");
    let suite = sp.join("dm_control/suite");
    let models = [
        gym.join("half_cheetah.xml"),
        gym.join("hopper.xml"),
        gym.join("walker2d.xml"),
        gym.join("ant.xml"),
        gym.join("inverted_double_pendulum.xml"),
        gym.join("inverted_pendulum.xml"),
        gym.join("reacher.xml"),
        gym.join("pusher.xml"),
        suite.join("cartpole.xml"),
        suite.join("acrobot.xml"),
        suite.join("cheetah.xml"),
        suite.join("pendulum.xml"),
        suite.join("hopper.xml"),
        suite.join("walker.xml"),
        suite.join("humanoid.xml"),
        suite.join("finger.xml"),
        suite.join("reacher.xml"),
    ];
    let mut passed = Vec::new();
    let mut failed = Vec::new();
    for file in &models {
        match check_against_mujoco(&venv, file) {
            Ok(()) => passed.push(
                file.file_name()
                    .map(|f| f.to_string_lossy().to_string())
                    .unwrap_or_default(),
            ),
            Err(e) => {
                println!("{}: {e}", file.display());
                failed.push(file.clone());
            }
        }
    }
    println!("agree with MuJoCo and run 2 s: {}", passed.join(", "));
    assert!(failed.is_empty(), "models that fail: {failed:?}");
}

/// No packaged model has a ball joint: a rag-doll leg written here (a ball hip with armature
/// beside a hinge knee and a ball ankle, on a free pelvis, and a ball-jointed arm welded to
/// the world) is checked against MuJoCo like the packaged ones.
#[test]
#[ignore = "needs MuJoCo in the robots venv (STICTION_ROBOTS_VENV)"]
fn ball_joints_agree_with_mujoco_and_run() {
    let venv = venv().expect("a robots venv: see the module doc");
    let dir = std::env::temp_dir().join(format!("stiction-ball-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let file = dir.join("ball_joints.xml");
    std::fs::write(
        &file,
        r#"<mujoco model="ball joints">
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="pelvis" pos="0 0 1.0">
      <freejoint/>
      <geom type="box" size="0.1 0.15 0.05" density="800"/>
      <body name="thigh" pos="0 0.1 -0.05" euler="0 10 0">
        <joint name="hip" type="ball" armature="0.02" damping="0.5"/>
        <geom type="capsule" fromto="0 0 0 0 0.02 -0.4" size="0.05"/>
        <body name="shin" pos="0 0.02 -0.4">
          <joint name="knee" axis="0 1 0" range="-150 0"/>
          <geom type="capsule" fromto="0 0 0 0.03 0 -0.4" size="0.04"/>
          <body name="foot" pos="0.03 0 -0.4">
            <joint name="ankle" type="ball" pos="0 0 -0.02"/>
            <geom type="box" pos="0.05 0 -0.05" size="0.1 0.04 0.02"/>
          </body>
        </body>
      </body>
    </body>
    <body name="arm" pos="1 0 1.2">
      <joint name="shoulder" type="ball" pos="0 0 0.05"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 -0.2" size="0.04"/>
    </body>
  </worldbody>
</mujoco>"#,
    )
    .expect("the model written");
    let result = check_against_mujoco(&venv, &file);
    std::fs::remove_dir_all(&dir).ok();
    result.expect("the ball-joint model agrees with MuJoCo and runs");
}

/// IFT and the direct dual path compute the same derivative two ways: only round-off apart.
const DIRECT_TOLERANCE: f64 = 1e-9;

/// Agreement of the IFT Jacobians with central differences where the step is smooth
/// (the bound of tests/gradients.rs).
const FD_TOLERANCE: f64 = 1e-6;

/// Gradient checks on 10 steps with contact of gymnasium's half-cheetah (armature, joint
/// springs, three joints in its torso), hopper and walker (capsule chains whose parent–child
/// pairs the collision filters keep apart): IFT against the direct dual path on every step,
/// and against central differences on the steps where every contact clearly sticks or slips.
#[test]
#[ignore = "needs gymnasium's assets in the robots venv (STICTION_ROBOTS_VENV)"]
fn mujoco_locomotion_models_pass_the_gradient_check_on_ten_contact_steps() {
    let venv = venv().expect("a robots venv: see the module doc");
    let gym = site_packages(&venv).join("gymnasium/envs/mujoco/assets");
    for name in ["half_cheetah.xml", "hopper.xml", "walker2d.xml"] {
        let model = mjcf::load(&gym.join(name)).expect("a model that loads");
        let (_, smooth_steps, worst_fd) = check_contact_steps(name, &model, 10);
        println!(
            "{name}: 10 contact steps, IFT vs direct ≤ {DIRECT_TOLERANCE:.0e}; \
             {smooth_steps} smooth, IFT vs FD ≤ {worst_fd:.1e} there"
        );
    }
}

/// Runs `model` for 1 s and gradient-checks `count` of its steps with contact, evenly spread:
/// IFT against the direct dual path on each ([`DIRECT_TOLERANCE`]), and against central
/// differences ([`FD_TOLERANCE`]) where the step is smooth ([`smooth::smooth`]). Returns the
/// number of steps with contact, the smooth steps checked and the worst IFT-vs-FD error.
fn check_contact_steps(name: &str, model: &MjcfModel, count: usize) -> (usize, usize, f64) {
    use stiction::derivatives::gradient_check;
    let built = model.description.build().expect("a model that builds");
    let mut sim = built.simulator;
    let v_s = sim.settings.contact.stiction_tolerance;
    let recording =
        stiction::simulate::run(&mut sim, &built.initial_state, 1.0, |_, _| {}).expect("a rollout");
    let with_contact: Vec<_> = recording
        .states
        .iter()
        .zip(&recording.reports)
        .filter(|(_, r)| !r.contacts.is_empty())
        .map(|(s, r)| (s.clone(), smooth::smooth(r, v_s)))
        .collect();
    let every = (with_contact.len() / count).max(1);
    let u = DVector::zeros(sim.model.nu());
    let (mut worst_fd, mut smooth_steps) = (0.0f64, 0);
    for (state, is_smooth) in with_contact.iter().step_by(every).take(count) {
        let check = gradient_check(&mut sim, state, &u, &[])
            .unwrap_or_else(|e| panic!("{name} t = {}: {e}", state.t));
        for b in &check.blocks {
            assert!(
                b.ift_vs_direct <= DIRECT_TOLERANCE,
                "{name} t = {}: {} IFT vs direct {:.2e}",
                state.t,
                b.name,
                b.ift_vs_direct
            );
            if *is_smooth {
                assert!(
                    b.ift_vs_fd <= FD_TOLERANCE,
                    "{name} t = {}: {} IFT vs FD {:.2e}",
                    state.t,
                    b.name,
                    b.ift_vs_fd
                );
                worst_fd = worst_fd.max(b.ift_vs_fd);
            }
        }
        smooth_steps += usize::from(*is_smooth);
    }
    (with_contact.len(), smooth_steps, worst_fd)
}
