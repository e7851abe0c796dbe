//! The ncp stepper's scene of two parallel line contacts (docs/steppers.md), shared by
//! `tests/ncp_cases.rs` and the sweep of `tests/ncp_cylinder_sweep.rs`.

/// A 12.33 kg cylinder (r = 5 cm, 20 cm) lying on the ground, its axis along y at `axis_y`
/// (m), rolling at 0.32 m/s (ω = 6.4 rad/s) toward +x into a fixed 10 cm box at
/// `obstacle_pose` (TOML lines of the box's geometry table): friction `mu`, torsional
/// semi-axis `e_r` (m), time step `dt` (s), 0.6 s, the ncp stepper.
pub fn rolling_cylinder_into_a_box(
    mu: f64,
    e_r: f64,
    dt: f64,
    axis_y: f64,
    obstacle_pose: &str,
) -> String {
    format!(
        r#"
        [simulation]
        dt = {dt}
        duration = 0.6
        stepper = "ncp"
        [contact]
        friction = {mu}
        [ncp]
        e_r = {e_r}
        [[body]]
        name = "cylinder"
        mass = 12.33
        position = [0.2, {axis_y}, 0.05]
        rpy_deg = [90.0, 0.0, 0.0]
        velocity = [0.32, 0.0, 0.0]
        angular_velocity = [0.0, 6.4, 0.0]
        [[geometry]]
        name = "cylinder"
        body = "cylinder"
        shape = "cylinder"
        radius = 0.05
        length = 0.2
        [[geometry]]
        name = "obstacle"
        shape = "box"
        size = [0.1, 0.1, 0.1]
        {obstacle_pose}
        [[geometry]]
        name = "ground"
        shape = "half-space"
    "#
    )
}
