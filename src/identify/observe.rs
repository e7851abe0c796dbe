//! The measurement model `y = h(x)`: the trajectory columns of tree bodies as functions of
//! the generalized state, and their Jacobian `∂h/∂x` in the tangent space.
//!
//! Column `BODY.c` is, for the body's frame B (as in `trajectory.csv`, world frame W):
//! `px py pz` the origin `p_WBo` (m); `qw qx qy qz` the orientation `R_WB` as a unit
//! quaternion; `vx vy vz` the origin's velocity `v_WBo` (m/s); `wx wy wz` the angular velocity
//! `ω_WB` (rad/s); `roll pitch yaw` the orientation as angles (rad) with
//! `R_WB = R_z(yaw) R_y(pitch) R_x(roll)` (URDF's and ROS's convention), pitch in
//! `[−π/2, π/2]`. All follow from forward kinematics at `(q, v)`. Angle residuals are taken
//! modulo 2π (`super::residuals`).
//!
//! `q` and `−q` are one rotation. As the CSV writer does, the sign is kept continuous along the
//! simulated trajectory, starting with `w ≥ 0` ([`QuaternionSigns`]); it is decided on f64
//! values at every step and then held fixed while differentiating.
//!
//! `∂h/∂x` (ny × 2nv) takes its columns `[δq, δv]` in the same tangent coordinates as the step
//! Jacobians (`q ⊕ δq` = [`MultibodyModel::retract`]), from one evaluation of `h` in chunked
//! dual numbers per [`CHUNK`] directions.
#![allow(non_snake_case)]

use nalgebra::{DMatrix, DVector, Matrix3, Vector4};

use crate::derivatives::ift::{eps, seed, Chunk, CHUNK};
use crate::error::{Error, Result};
use crate::multibody::kinematics::body_velocity_world;
use crate::multibody::{forward_kinematics, MultibodyData, MultibodyModel};
use crate::report::csv::BODY_COLUMNS;
use crate::scalar::{lit, Scalar};
use crate::step::State;

/// What a column measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// Origin position `p_WBo`, component 0..3 (m).
    Position(usize),
    /// Orientation quaternion, component 0..4 (`w, x, y, z`).
    Orientation(usize),
    /// Origin velocity `v_WBo`, component 0..3 (m/s).
    Velocity(usize),
    /// Angular velocity `ω_WB`, component 0..3 (rad/s).
    AngularVelocity(usize),
    /// Roll, pitch or yaw (0..3, rad) of `R_WB = R_z(yaw) R_y(pitch) R_x(roll)`.
    Rpy(usize),
}

/// The angle columns' suffixes, in the order of [`Quantity::Rpy`].
pub const RPY_COLUMNS: [&str; 3] = ["roll", "pitch", "yaw"];

/// One measured column: a tree body and a quantity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Observation {
    /// Tree body index.
    pub body: usize,
    /// The quantity.
    pub quantity: Quantity,
}

impl Observation {
    /// Parses a column name `BODY.c` (`c` one of [`BODY_COLUMNS`]).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a malformed name, an unknown body, or a prescribed body
    /// (its motion does not depend on the parameters).
    pub fn parse(model: &MultibodyModel<f64>, column: &str) -> Result<Self> {
        let bad = |reason: &str| Error::invalid("measured column", column, reason);
        let (body, c) = column
            .rsplit_once('.')
            .ok_or_else(|| bad("expected BODY.c, e.g. box.px"))?;
        let quantity = match (
            BODY_COLUMNS.iter().position(|x| *x == c),
            RPY_COLUMNS.iter().position(|x| *x == c),
        ) {
            (Some(i @ 0..=2), _) => Quantity::Position(i),
            (Some(i @ 3..=6), _) => Quantity::Orientation(i - 3),
            (Some(i @ 7..=9), _) => Quantity::Velocity(i - 7),
            (Some(i), _) => Quantity::AngularVelocity(i - 10),
            (None, Some(i)) => Quantity::Rpy(i),
            (None, None) => return Err(bad(
                "the suffix must be one of px py pz qw qx qy qz vx vy vz wx wy wz roll pitch yaw",
            )),
        };
        match model.body_index(body) {
            Some(body) => Ok(Observation { body, quantity }),
            None if model.prescribed.iter().any(|p| p.name == body) => Err(bad(
                "a prescribed body moves by a given law: its columns carry no information on the parameters",
            )),
            None => Err(bad(&format!("the scene has no body named `{body}`"))),
        }
    }
}

impl Observation {
    /// Whether the column is an angle, compared modulo 2π.
    pub fn is_angle(&self) -> bool {
        matches!(self.quantity, Quantity::Rpy(_))
    }
}

/// Roll, pitch and yaw (rad) of `R = R_z(yaw) R_y(pitch) R_x(roll)`; at gimbal lock
/// (`|pitch| = π/2`) the split between roll and yaw is arbitrary, as in any Euler convention.
pub fn rpy_of<T: Scalar>(R: &Matrix3<T>) -> [T; 3] {
    let roll = R[(2, 1)].atan2(R[(2, 2)]);
    let pitch = (-R[(2, 0)]).atan2((R[(2, 1)] * R[(2, 1)] + R[(2, 2)] * R[(2, 2)]).sqrt());
    let yaw = R[(1, 0)].atan2(R[(0, 0)]);
    [roll, pitch, yaw]
}

/// Whether `column` names a quantity of a tree body of `model` (the default selection of
/// measured columns).
pub fn is_tree_body_column(model: &MultibodyModel<f64>, column: &str) -> bool {
    Observation::parse(model, column).is_ok()
}

/// The unit quaternion `[w, x, y, z]` of a rotation matrix (Shepperd's method).
///
/// The branch (largest of the trace and the diagonal) is chosen on the real part; the
/// derivative is that of the chosen formula, each exact where it is used.
pub fn quaternion_of<T: Scalar>(R: &Matrix3<T>) -> Vector4<T> {
    let (one, quarter) = (T::one(), lit::<T>(0.25));
    let trace = R[(0, 0)] + R[(1, 1)] + R[(2, 2)];
    let d = [R[(0, 0)].re(), R[(1, 1)].re(), R[(2, 2)].re()];
    if trace.re() > 0.0 {
        let s = (trace + one).sqrt() * lit::<T>(2.0);
        Vector4::new(
            quarter * s,
            (R[(2, 1)] - R[(1, 2)]) / s,
            (R[(0, 2)] - R[(2, 0)]) / s,
            (R[(1, 0)] - R[(0, 1)]) / s,
        )
    } else if d[0] > d[1] && d[0] > d[2] {
        let s = (one + R[(0, 0)] - R[(1, 1)] - R[(2, 2)]).sqrt() * lit::<T>(2.0);
        Vector4::new(
            (R[(2, 1)] - R[(1, 2)]) / s,
            quarter * s,
            (R[(0, 1)] + R[(1, 0)]) / s,
            (R[(0, 2)] + R[(2, 0)]) / s,
        )
    } else if d[1] > d[2] {
        let s = (one + R[(1, 1)] - R[(0, 0)] - R[(2, 2)]).sqrt() * lit::<T>(2.0);
        Vector4::new(
            (R[(0, 2)] - R[(2, 0)]) / s,
            (R[(0, 1)] + R[(1, 0)]) / s,
            quarter * s,
            (R[(1, 2)] + R[(2, 1)]) / s,
        )
    } else {
        let s = (one + R[(2, 2)] - R[(0, 0)] - R[(1, 1)]).sqrt() * lit::<T>(2.0);
        Vector4::new(
            (R[(1, 0)] - R[(0, 1)]) / s,
            (R[(0, 2)] + R[(2, 0)]) / s,
            (R[(1, 2)] + R[(2, 1)]) / s,
            quarter * s,
        )
    }
}

/// Sign-continuous orientation quaternions along a trajectory, one per tree body: each has a
/// non-negative dot product with the one before, the first with the identity (`w ≥ 0`).
#[derive(Clone, Debug)]
pub struct QuaternionSigns {
    previous: Vec<Vector4<f64>>,
    /// Current sign (±1) per tree body.
    pub signs: Vec<f64>,
}

impl QuaternionSigns {
    /// Signs for the `nb` tree bodies before the first state.
    pub fn new(nb: usize) -> Self {
        QuaternionSigns {
            previous: vec![Vector4::new(1.0, 0.0, 0.0, 0.0); nb],
            signs: vec![1.0; nb],
        }
    }

    /// Advances to the poses in `data` (after forward kinematics at the next state).
    pub fn update(&mut self, data: &MultibodyData<f64>) {
        for (b, previous) in self.previous.iter_mut().enumerate() {
            let mut q = quaternion_of(&data.X_WB[b].R);
            self.signs[b] = if q.dot(previous) < 0.0 { -1.0 } else { 1.0 };
            q *= self.signs[b];
            *previous = q;
        }
    }
}

/// The measured columns of a scene.
#[derive(Clone, Debug)]
pub struct MeasurementModel {
    /// One per column (ny).
    pub observations: Vec<Observation>,
}

impl MeasurementModel {
    /// The model of `columns` in the scene of `model`.
    ///
    /// # Errors
    /// As [`Observation::parse`].
    pub fn new(model: &MultibodyModel<f64>, columns: &[String]) -> Result<Self> {
        Ok(MeasurementModel {
            observations: columns
                .iter()
                .map(|c| Observation::parse(model, c))
                .collect::<Result<_>>()?,
        })
    }

    /// `h(q, v)` (ny) with forward kinematics already done in `data`; `signs` from
    /// [`QuaternionSigns`].
    pub fn values<T: Scalar>(&self, data: &MultibodyData<T>, signs: &[f64]) -> DVector<T> {
        DVector::from_iterator(
            self.observations.len(),
            self.observations.iter().map(|o| {
                let b = o.body;
                match o.quantity {
                    Quantity::Position(i) => data.X_WB[b].p[i],
                    Quantity::Orientation(i) => {
                        quaternion_of(&data.X_WB[b].R)[i] * lit::<T>(signs[b])
                    }
                    Quantity::Velocity(i) => body_velocity_world(data, b).1[i],
                    Quantity::AngularVelocity(i) => body_velocity_world(data, b).0[i],
                    Quantity::Rpy(i) => rpy_of(&data.X_WB[b].R)[i],
                }
            }),
        )
    }

    /// `h(x)` (ny) and `∂h/∂x` (ny × 2nv, tangent columns `[δq, δv]`) at `state`, with the
    /// model lifted into chunk duals (`model_dual` = `model.cast()`).
    pub fn values_and_jacobian(
        &self,
        model_dual: &MultibodyModel<Chunk>,
        state: &State,
        signs: &[f64],
    ) -> (DVector<f64>, DMatrix<f64>) {
        let nv = state.v.len();
        let n = 2 * nv;
        let ny = self.observations.len();
        let mut data = MultibodyData::new(model_dual);
        let q0 = state.q.map(Chunk::from_re);
        let mut y = DVector::zeros(ny);
        let mut H = DMatrix::zeros(ny, n);
        for start in (0..n).step_by(CHUNK) {
            let dq = DVector::from_fn(nv, |i, _| seed(i, start));
            let v = DVector::from_fn(nv, |i, _| Chunk::from_re(state.v[i]) + seed(nv + i, start));
            let q = model_dual.retract(&q0, &dq);
            forward_kinematics(model_dual, &mut data, &q, &v);
            let h = self.values(&data, signs);
            for (r, hr) in h.iter().enumerate() {
                y[r] = hr.re;
                let e = eps(hr);
                for j in 0..CHUNK.min(n - start) {
                    H[(r, start + j)] = e[j];
                }
            }
        }
        (y, H)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::parse_problem;
    use nalgebra::{UnitQuaternion, Vector3};
    use std::path::Path;

    const TUMBLING: &str = r#"
        [simulation]
        dt = 1e-3
        duration = 0.01
        [[body]]
        name = "box"
        mass = 1.0
        position = [0.1, -0.2, 0.3]
        rpy_deg = [20.0, 170.0, -40.0]
        velocity = [1.0, 0.5, -0.2]
        angular_velocity = [3.0, -2.0, 1.0]
        [[geometry]]
        name = "box"
        body = "box"
        shape = "box"
        size = [0.1, 0.2, 0.3]
    "#;

    #[test]
    fn quaternion_matches_nalgebra_in_every_branch() {
        for axis in [
            Vector3::x(),
            Vector3::y(),
            Vector3::z(),
            Vector3::new(1.0, 1.0, 1.0),
        ] {
            for angle in [0.3, 2.5, 3.1, -3.0] {
                let r =
                    UnitQuaternion::from_axis_angle(&nalgebra::Unit::new_normalize(axis), angle);
                let q = quaternion_of(&r.to_rotation_matrix().into_inner());
                let s = if q[0] * r.w < 0.0 { -1.0 } else { 1.0 };
                let expected = Vector4::new(r.w, r.i, r.j, r.k) * s;
                assert!((q - expected).norm() < 1e-14, "{axis} {angle}");
            }
        }
    }

    /// `∂h/∂x` against central differences along `x ⊕ h e_j` (step 1e-6; error O(h²) ≈ 1e-11,
    /// tolerance 1e-7 leaves room for round-off in the difference quotient).
    #[test]
    fn jacobian_matches_central_differences() {
        const TOL: f64 = 1e-7;
        let problem = parse_problem(TUMBLING, Path::new("tumbling.toml")).unwrap();
        let model = &problem.simulator.model;
        let columns: Vec<String> = BODY_COLUMNS
            .iter()
            .chain(&RPY_COLUMNS)
            .map(|c| format!("box.{c}"))
            .collect();
        let m = MeasurementModel::new(model, &columns).unwrap();
        let state = &problem.initial_state;
        let signs = [1.0];
        let (y, H) = m.values_and_jacobian(&model.cast(), state, &signs);
        let nv = model.nv();
        let mut data = MultibodyData::new(model);
        let mut h_at = |dx: &DVector<f64>| {
            let q = model.retract(&state.q, &dx.rows(0, nv).into_owned());
            let v = &state.v + dx.rows(nv, nv);
            forward_kinematics(model, &mut data, &q, &v);
            m.values(&data, &signs)
        };
        assert!((h_at(&DVector::zeros(2 * nv)) - &y).norm() < 1e-15);
        let step = 1e-6;
        for j in 0..2 * nv {
            let mut e = DVector::zeros(2 * nv);
            e[j] = step;
            let fd = (h_at(&e) - h_at(&-&e)) / (2.0 * step);
            assert!((H.column(j) - fd).norm() < TOL, "column {j}");
        }
    }

    #[test]
    fn roll_pitch_yaw_match_nalgebra() {
        for (roll, pitch, yaw) in [
            (0.3_f64, -0.2_f64, 2.9_f64),
            (-3.0, 1.2, -0.4),
            (1.0, -1.5, 3.1),
            (0.0, 0.0, 0.0),
        ] {
            let r = UnitQuaternion::from_euler_angles(roll, pitch, yaw);
            let got = rpy_of(&r.to_rotation_matrix().into_inner());
            let (er, ep, ey) = r.euler_angles();
            assert!(
                (got[0] - er).abs() < 1e-12
                    && (got[1] - ep).abs() < 1e-12
                    && (got[2] - ey).abs() < 1e-12,
                "{got:?} against ({er}, {ep}, {ey})"
            );
            assert!((got[0] - roll).abs() < 1e-12 && (got[2] - yaw).abs() < 1e-12);
        }
    }

    #[test]
    fn columns_name_tree_bodies() {
        let problem = parse_problem(TUMBLING, Path::new("tumbling.toml")).unwrap();
        let model = &problem.simulator.model;
        assert!(Observation::parse(model, "box.qz").is_ok());
        assert!(Observation::parse(model, "box.yaw").unwrap().is_angle());
        assert!(Observation::parse(model, "ball.px").is_err());
        assert!(Observation::parse(model, "box.ax").is_err());
        assert!(!is_tree_body_column(model, "box"));
    }
}
