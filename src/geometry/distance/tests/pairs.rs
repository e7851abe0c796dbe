//! Named configurations of every supported pair: resting flat, tilted, penetrating, and
//! separated within the margin.

use super::*;

#[test]
fn half_space_against_every_shape() {
    let tilt = rot([1.0, 0.0, 0.0], 0.3);
    let skew_tilt = *Rotation3::from_euler_angles(0.3, 0.2, 0.1).matrix();
    let lying = rot([0.0, 1.0, 0.0], std::f64::consts::FRAC_PI_2);
    let h = [0.1, 0.05, 0.025];
    check_all(&[
        ground("sphere separated", sphere(0.1), at([0.3, 0.0, 0.105])),
        ground("sphere penetrating", sphere(0.1), at([0.3, -0.1, 0.095])),
        ground("box flat", cuboid(0.1, 0.05, 0.025), at([0.0, 0.0, 0.0249])),
        ground(
            "box on an edge",
            cuboid(0.1, 0.05, 0.025),
            pose(tilt, [0.1, 0.2, -box_bottom(h, &tilt) - 0.001]),
        ),
        ground(
            "box on a vertex",
            cuboid(0.1, 0.05, 0.025),
            pose(skew_tilt, [0.0, 0.0, -box_bottom(h, &skew_tilt) + 0.004]),
        ),
        ground(
            "capsule standing",
            capsule(0.02, 0.1),
            at([0.0, 0.0, 0.119]),
        ),
        ground(
            "capsule lying",
            capsule(0.02, 0.1),
            pose(lying, [0.1, 0.0, 0.019]),
        ),
        ground(
            "capsule tilted",
            capsule(0.02, 0.1),
            pose(tilt, [0.0, 0.0, 0.1 * 0.3f64.cos() + 0.02 - 0.002]),
        ),
        ground(
            "cylinder lying",
            cylinder(0.05, 0.1),
            pose(lying, [0.0, 0.0, 0.049]),
        ),
        ground(
            "cylinder standing",
            cylinder(0.05, 0.1),
            at([0.0, 0.2, 0.099]),
        ),
        ground(
            "cylinder on its rim",
            cylinder(0.05, 0.1),
            pose(
                tilt,
                [0.0, 0.0, 0.1 * 0.3f64.cos() + 0.05 * 0.3f64.sin() - 0.001],
            ),
        ),
        ground("tet apex down", tet_apex_down(), at([0.0, 0.0, -0.001])),
        ground("tet face down", tet_face_down(), at([0.1, 0.0, -0.001])),
        ground(
            "tet tilted",
            tet_face_down(),
            pose(rot([1.0, 1.0, 0.0], 0.2), [0.0, 0.0, 0.003]),
        ),
    ]);
}

#[test]
fn sphere_against_every_shape() {
    let R = *Rotation3::from_euler_angles(0.2, -0.1, 0.4).matrix();
    let X_WA = pose(R, [0.1, -0.2, 0.3]);
    // A point given in A's frame, in world.
    let in_a = |p: Vector3<f64>| X_WA.transform_point(&p).into();
    let (h, r) = (Vector3::new(0.1, 0.05, 0.025), 0.02);
    let d = |x: f64, y: f64, z: f64| Vector3::new(x, y, z).normalize();
    let b = cuboid(h.x, h.y, h.z);
    check_all(&[
        pair(
            "sphere-sphere",
            sphere(0.1),
            X_WA,
            sphere(0.05),
            at(in_a(d(0.5, 0.3, 0.2) * 0.148)),
        ),
        pair(
            "box-sphere face",
            b.clone(),
            X_WA,
            sphere(r),
            at(in_a(Vector3::new(0.02, 0.01, h.z + r - 0.002))),
        ),
        pair(
            "box-sphere edge",
            b.clone(),
            X_WA,
            sphere(r),
            at(in_a(
                Vector3::new(h.x, 0.01, h.z) + d(1.0, 0.0, 1.0) * (r - 0.001),
            )),
        ),
        pair(
            "box-sphere vertex",
            b.clone(),
            X_WA,
            sphere(r),
            at(in_a(h + d(1.0, 2.0, 1.5) * (r + 0.003))),
        ),
        pair(
            "box-sphere centre inside",
            b.clone(),
            X_WA,
            sphere(r),
            at(in_a(Vector3::new(0.03, -0.01, h.z - 0.005))),
        ),
        pair(
            "sphere-box vertex",
            sphere(r),
            at(in_a(h + d(1.0, 2.0, 1.5) * (r - 0.003))),
            b.clone(),
            X_WA,
        ),
        pair(
            "sphere-box edge",
            sphere(r),
            at(in_a(
                Vector3::new(-0.03, h.y, -h.z) + d(0.0, 1.0, -2.0) * (r - 0.001),
            )),
            b,
            X_WA,
        ),
        pair(
            "capsule-sphere side",
            capsule(0.02, 0.1),
            X_WA,
            sphere(r),
            at(in_a(Vector3::new(0.0, 0.039, 0.05))),
        ),
        pair(
            "capsule-sphere end",
            capsule(0.02, 0.1),
            X_WA,
            sphere(r),
            at(in_a(Vector3::new(0.0, 0.0, 0.1) + d(0.3, 0.2, 1.0) * 0.039)),
        ),
        pair(
            "cylinder-sphere cap",
            cylinder(0.05, 0.1),
            X_WA,
            sphere(r),
            at(in_a(Vector3::new(0.01, 0.02, 0.1 + r - 0.001))),
        ),
        pair(
            "cylinder-sphere side",
            cylinder(0.05, 0.1),
            X_WA,
            sphere(r),
            at(in_a(
                d(1.0, 1.0, 0.0) * (0.05 + r - 0.001) + Vector3::new(0.0, 0.0, 0.03),
            )),
        ),
        pair(
            "cylinder-sphere centre inside",
            cylinder(0.05, 0.1),
            X_WA,
            sphere(r),
            at(in_a(
                d(-1.0, 2.0, 0.0) * 0.045 + Vector3::new(0.0, 0.0, -0.02),
            )),
        ),
        pair(
            "cylinder-sphere rim",
            cylinder(0.05, 0.1),
            X_WA,
            sphere(r),
            at(in_a(
                d(1.0, -1.0, 0.0) * 0.05
                    + Vector3::new(0.0, 0.0, 0.1)
                    + d(1.0, -1.0, 1.4) * (r + 0.002),
            )),
        ),
        pair(
            "mesh-sphere face",
            tet_face_down(),
            X_WA,
            sphere(r),
            at(in_a(Vector3::new(0.0, 0.0, -r + 0.001))),
        ),
        pair(
            "mesh-sphere edge",
            tet_face_down(),
            X_WA,
            sphere(r),
            at(in_a(
                Vector3::new(0.015, -0.04, 0.0) + d(0.1, -1.0, -1.0) * (r - 0.001),
            )),
        ),
        pair(
            "mesh-sphere vertex",
            tet_face_down(),
            X_WA,
            sphere(r),
            at(in_a(
                Vector3::new(0.0, 0.0, 0.1) + d(0.1, 0.2, 1.0) * (r + 0.002),
            )),
        ),
    ]);
}

#[test]
fn box_against_box() {
    let h = 0.05;
    let big = cuboid(0.2, 0.2, h);
    let small = cuboid(h, h, h);
    let yaw = rot([0.0, 0.0, 1.0], std::f64::consts::PI / 6.0);
    let tilt = rot([1.0, 0.0, 0.0], 0.3);
    let diamond_x = rot([1.0, 0.0, 0.0], std::f64::consts::FRAC_PI_4);
    let diamond_y = rot([0.0, 1.0, 0.0], std::f64::consts::FRAC_PI_4);
    let edge_up = h * std::f64::consts::SQRT_2;
    check_all(&[
        pair(
            "box on box rotated 30°",
            big.clone(),
            Pose::identity(),
            small.clone(),
            pose(yaw, [0.03, 0.02, 2.0 * h - 0.001]),
        ),
        pair(
            "box overhanging an edge",
            big.clone(),
            Pose::identity(),
            small.clone(),
            pose(yaw, [0.2, 0.05, 2.0 * h - 0.002]),
        ),
        pair(
            "box on box, on an edge",
            big.clone(),
            Pose::identity(),
            small.clone(),
            pose(tilt, [0.0, 0.0, h - box_bottom([h, h, h], &tilt) - 0.001]),
        ),
        pair(
            "box under box",
            small.clone(),
            pose(yaw, [0.0, 0.05, -2.0 * h + 0.001]),
            big,
            Pose::identity(),
        ),
        pair(
            "crossed edges",
            small.clone(),
            pose(diamond_x, [0.0, 0.0, 0.0]),
            small,
            pose(diamond_y, [0.01, -0.02, 2.0 * edge_up - 0.001]),
        ),
    ]);
}

#[test]
fn capsule_pairs() {
    let (r, l) = (0.02, 0.1);
    let along_x = rot([0.0, 1.0, 0.0], std::f64::consts::FRAC_PI_2);
    let along_y = rot([1.0, 0.0, 0.0], std::f64::consts::FRAC_PI_2);
    let slanted = *Rotation3::from_euler_angles(0.3, 1.2, 0.2).matrix();
    let top = 0.05;
    check_all(&[
        pair(
            "capsules crossing at right angles",
            capsule(r, l),
            pose(along_x, [0.0, 0.0, 0.0]),
            capsule(0.015, l),
            pose(along_y, [0.03, -0.02, r + 0.015 - 0.001]),
        ),
        pair(
            "capsules crossing",
            capsule(r, l),
            pose(along_x, [0.0, 0.0, 0.0]),
            capsule(0.015, l),
            pose(slanted, [0.02, 0.01, r + 0.015 - 0.001]),
        ),
        pair(
            "capsules parallel",
            capsule(r, l),
            pose(along_x, [0.0, 0.0, 0.0]),
            capsule(r, l),
            pose(along_x, [0.05, 0.0, 2.0 * r - 0.001]),
        ),
        pair(
            "capsule end on capsule side",
            capsule(r, l),
            pose(along_x, [0.0, 0.0, 0.0]),
            capsule(r, l),
            at([0.03, 0.005, l + 2.0 * r - 0.001]),
        ),
        pair(
            "capsule lying on a box",
            cuboid(0.2, 0.2, top),
            Pose::identity(),
            capsule(r, l),
            pose(along_x, [0.0, 0.03, top + r - 0.001]),
        ),
        pair(
            "capsule end on a box",
            cuboid(0.2, 0.2, top),
            Pose::identity(),
            capsule(r, l),
            pose(
                rot([0.0, 1.0, 0.0], 0.4),
                [0.0, 0.0, top + r + l * 0.4f64.cos() - 0.001],
            ),
        ),
        pair(
            "capsule across a box edge",
            cuboid(0.2, 0.2, top),
            Pose::identity(),
            capsule(r, l),
            pose(
                rot([0.0, 1.0, 0.0], std::f64::consts::FRAC_PI_2 + 0.3),
                [0.2, 0.03, top + r / 0.3f64.cos() - 0.001],
            ),
        ),
        pair(
            "box on a capsule",
            capsule(r, l),
            pose(along_y, [0.0, 0.0, 0.0]),
            cuboid(0.05, 0.05, 0.05),
            pose(rot([0.0, 0.0, 1.0], 0.2), [0.01, 0.0, r + 0.05 - 0.001]),
        ),
        pair(
            "capsule on a cylinder cap",
            cylinder(0.1, 0.05),
            Pose::identity(),
            capsule(r, l),
            pose(along_x, [0.0, 0.02, 0.05 + r - 0.001]),
        ),
        pair(
            "capsule along a cylinder",
            cylinder(0.05, 0.1),
            pose(along_y, [0.0, 0.0, 0.0]),
            capsule(r, l),
            pose(along_y, [0.0, 0.0, 0.05 + r - 0.001]),
        ),
        pair(
            "capsule on a mesh face",
            tet_face_down(),
            pose(rot([1.0, 0.0, 0.0], std::f64::consts::PI), [0.0, 0.0, 0.0]),
            capsule(r, 0.03),
            pose(along_x, [0.0, 0.0, r - 0.001]),
        ),
    ]);
}

#[test]
fn cylinder_and_mesh_pairs() {
    let top = 0.05;
    let lying = rot([0.0, 1.0, 0.0], std::f64::consts::FRAC_PI_2);
    let flipped = rot([1.0, 0.0, 0.0], std::f64::consts::PI);
    check_all(&[
        pair(
            "cylinder standing on a box",
            cuboid(0.2, 0.2, top),
            Pose::identity(),
            cylinder(0.05, 0.1),
            at([0.02, -0.03, top + 0.1 - 0.001]),
        ),
        pair(
            "cylinder lying on a box",
            cuboid(0.2, 0.2, top),
            Pose::identity(),
            cylinder(0.05, 0.1),
            pose(lying, [0.0, 0.05, top + 0.05 - 0.001]),
        ),
        pair(
            "box on a cylinder",
            cylinder(0.1, 0.05),
            Pose::identity(),
            cuboid(0.03, 0.03, 0.03),
            pose(rot([0.0, 0.0, 1.0], 0.5), [0.01, 0.02, 0.05 + 0.03 - 0.001]),
        ),
        pair(
            "cylinders stacked",
            cylinder(0.1, 0.05),
            Pose::identity(),
            cylinder(0.05, 0.1),
            at([0.02, 0.0, 0.15 - 0.001]),
        ),
        pair(
            "cylinders crossed",
            cylinder(0.05, 0.1),
            pose(lying, [0.0, 0.0, 0.0]),
            cylinder(0.05, 0.1),
            pose(
                rot([1.0, 0.0, 0.0], std::f64::consts::FRAC_PI_2),
                [0.0, 0.0, 0.1 - 0.001],
            ),
        ),
        pair(
            "tet apex down on a box",
            cuboid(0.2, 0.2, top),
            Pose::identity(),
            tet_apex_down(),
            at([0.05, 0.0, top - 0.001]),
        ),
        pair(
            "tet face down on a box",
            cuboid(0.2, 0.2, top),
            Pose::identity(),
            tet_face_down(),
            pose(rot([0.0, 0.0, 1.0], 0.4), [0.0, 0.05, top - 0.001]),
        ),
        pair(
            "box on a tet",
            tet_face_down(),
            pose(flipped, [0.0, 0.0, 0.0]),
            cuboid(0.02, 0.02, 0.02),
            at([0.0, 0.0, 0.02 - 0.001]),
        ),
        pair(
            "tet on a cylinder cap",
            cylinder(0.1, 0.05),
            Pose::identity(),
            tet_apex_down(),
            at([0.02, 0.01, 0.05 - 0.001]),
        ),
        pair(
            "cylinder on a tet",
            tet_face_down(),
            pose(flipped, [0.0, 0.0, 0.0]),
            cylinder(0.02, 0.03),
            at([0.0, 0.0, 0.03 - 0.001]),
        ),
        pair(
            "tet apex on a tet face",
            tet_face_down(),
            pose(flipped, [0.0, 0.0, 0.0]),
            tet_apex_down(),
            at([0.01, 0.0, -0.001]),
        ),
    ]);
}
