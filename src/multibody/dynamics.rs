//! Mass matrix (CRBA), bias forces (RNEA), free-motion velocities and the position update.
#![allow(non_snake_case)]

use nalgebra::{DMatrix, DVector, Vector3, Vector6};

use crate::error::{Error, Result};
use crate::math::block::BlockDiagonalCholesky;
use crate::math::spatial::{force_cross, motion_cross, spatial, OriginInertia};
use crate::multibody::constraints::{Transmission, TransmissionKind};
use crate::multibody::kinematics::{forward_kinematics, MultibodyData};
use crate::multibody::model::MultibodyModel;
use crate::scalar::{lit, Scalar};

/// Mass matrix `M(q)` (nv × nv) by the composite rigid body algorithm (RBDA Table 6.2), with
/// each joint's armature (reflected rotor inertia) added to its diagonal entries, as MuJoCo's
/// `mj_crb` does. Requires [`update_poses`] (or [`forward_kinematics`]) at `q`.
///
/// Composite inertias are summed in [`OriginInertia`] form and each column's force
/// `F = I_c S` is carried to the root through [`Pose::force_in_parent`]: no 6×6 products.
///
/// [`update_poses`]: crate::multibody::kinematics::update_poses
/// [`Pose::force_in_parent`]: crate::math::Pose::force_in_parent
pub fn mass_matrix<T: Scalar>(model: &MultibodyModel<T>, data: &MultibodyData<T>) -> DMatrix<T> {
    let mut M = DMatrix::zeros(model.nv(), model.nv());
    mass_matrix_into(model, data, &mut Vec::new(), &mut M);
    M
}

/// [`mass_matrix`] written into `M` with the composite inertias in `Ic`, both kept by the
/// caller: nothing allocated once they have their sizes. `M` is made zero when it has not
/// the size nv × nv; otherwise only the entries of each tree are written (all of them, each
/// first assigned), and the others must be zero, as a matrix this function wrote leaves them.
fn mass_matrix_into<T: Scalar>(
    model: &MultibodyModel<T>,
    data: &MultibodyData<T>,
    Ic: &mut Vec<OriginInertia<T>>,
    M: &mut DMatrix<T>,
) {
    Ic.clear();
    Ic.extend(model.bodies.iter().map(|b| OriginInertia::from(&b.inertia)));
    for (i, joint) in model.joints.iter().enumerate().rev() {
        if let Some(p) = joint.parent {
            let add = Ic[i].in_parent(&data.X_PB[i]);
            Ic[p] += add;
        }
    }
    if M.shape() != (model.nv(), model.nv()) {
        *M = DMatrix::zeros(model.nv(), model.nv());
    }
    for (i, (ji, Ic_i)) in model.joints.iter().zip(Ic.iter()).enumerate() {
        for (a, s) in data.S[i].iter().enumerate() {
            let mut F = Ic_i.apply(s);
            let row = ji.v_start + a;
            for (b, sb) in data.S[i].iter().enumerate() {
                M[(row, ji.v_start + b)] = sb.dot(&F);
            }
            let mut j = i;
            while let Some(p) = model.joints[j].parent {
                F = data.X_PB[j].force_in_parent(&F);
                j = p;
                let jp = &model.joints[j];
                for (b, sb) in data.S[j].iter().enumerate() {
                    let val = sb.dot(&F);
                    M[(jp.v_start + b, row)] = val;
                    M[(row, jp.v_start + b)] = val;
                }
            }
        }
        for (a, armature) in ji.armature.iter().enumerate() {
            M[(ji.v_start + a, ji.v_start + a)] += *armature;
        }
    }
}

/// Inverse dynamics `τ = M(q) v̇ + c(q, v)` by the recursive Newton-Euler algorithm
/// (RBDA Table 5.1), gravity included in `c` and the armature in `M` (as in [`mass_matrix`]).
/// Requires [`update_velocities`] (or [`forward_kinematics`]) at `(q, v)`.
///
/// [`update_velocities`]: crate::multibody::kinematics::update_velocities
pub fn inverse_dynamics<T: Scalar>(
    model: &MultibodyModel<T>,
    data: &MultibodyData<T>,
    v: &DVector<T>,
    vdot: &DVector<T>,
) -> DVector<T> {
    rnea(model, data, v, Some(vdot))
}

/// Bias forces `c(q, v) = C(q, v) v − τ_g(q)` (Coriolis, centrifugal and gravity), by RNEA
/// with zero acceleration. Requires [`update_velocities`] (or [`forward_kinematics`]) at
/// `(q, v)`.
///
/// [`update_velocities`]: crate::multibody::kinematics::update_velocities
pub fn bias_forces<T: Scalar>(
    model: &MultibodyModel<T>,
    data: &MultibodyData<T>,
    v: &DVector<T>,
) -> DVector<T> {
    rnea(model, data, v, None)
}

/// RNEA with body accelerations `a_i = X a_parent + S v̇ + c_J + V ×ₘ S v` and forces
/// `f_i = I a_i + V ×* I V`, applied matrix-free; `vdot = None` is a zero acceleration.
fn rnea<T: Scalar>(
    model: &MultibodyModel<T>,
    data: &MultibodyData<T>,
    v: &DVector<T>,
    vdot: Option<&DVector<T>>,
) -> DVector<T> {
    let mut tau = DVector::zeros(model.nv());
    rnea_into(model, data, v, vdot, &mut RneaBuffers::default(), &mut tau);
    tau
}

/// The body accelerations and forces of [`rnea_into`].
#[derive(Clone, Debug)]
struct RneaBuffers<T: Scalar> {
    a: Vec<Vector6<T>>,
    f: Vec<Vector6<T>>,
}

impl<T: Scalar> Default for RneaBuffers<T> {
    fn default() -> Self {
        RneaBuffers {
            a: Vec::new(),
            f: Vec::new(),
        }
    }
}

/// [`rnea`] written into `tau` (nv) with the bodies' accelerations and forces in `buffers`:
/// nothing allocated once they have their sizes.
fn rnea_into<T: Scalar>(
    model: &MultibodyModel<T>,
    data: &MultibodyData<T>,
    v: &DVector<T>,
    vdot: Option<&DVector<T>>,
    buffers: &mut RneaBuffers<T>,
    tau: &mut DVector<T>,
) {
    let nb = model.bodies.len();
    // The world accelerates upwards at −g (RBDA Sec. 5.3): gravity for free.
    let a_world = spatial(Vector3::zeros(), -model.gravity);
    let RneaBuffers { a, f } = buffers;
    a.clear();
    a.resize(nb, Vector6::zeros());
    f.clear();
    f.resize(nb, Vector6::zeros());
    for (i, j) in model.joints.iter().enumerate() {
        let mut Sqd = Vector6::zeros();
        let mut Sqdd = Vector6::zeros();
        for (k, s) in data.S[i].iter().enumerate() {
            Sqd += s * v[j.v_start + k];
            if let Some(vdot) = vdot {
                Sqdd += s * vdot[j.v_start + k];
            }
        }
        let a_parent = match j.parent {
            None => &a_world,
            Some(p) => &a[p],
        };
        a[i] = data.X_PB[i].motion_in_child(a_parent)
            + Sqdd
            + data.c_J[i]
            + motion_cross(&data.V[i], &Sqd);
        let I = OriginInertia::from(&model.bodies[i].inertia);
        f[i] = I.apply(&a[i]) + force_cross(&data.V[i], &I.apply(&data.V[i]));
    }
    if tau.len() != model.nv() {
        *tau = DVector::zeros(model.nv());
    }
    tau.fill(T::zero());
    for (i, j) in model.joints.iter().enumerate().rev() {
        for (k, s) in data.S[i].iter().enumerate() {
            let index = j.v_start + k;
            tau[index] = s.dot(&f[i]);
            if let Some(vdot) = vdot {
                tau[index] += j.armature[k] * vdot[index];
            }
        }
        if let Some(p) = j.parent {
            let back = data.X_PB[i].force_in_parent(&f[i]);
            f[p] += back;
        }
    }
}

/// Free-motion velocity of DESIGN step 1 (ICF eq. (1) with zero impulses):
/// `A (v* − v0) = δt (B u − c(q0, v0) − D v0 + τ_s(q0))` with `A = M(q0) + δt D` (implicit
/// joint damping, armature in `M`) and the joint springs' explicit efforts
/// `τ_s,i = −k_i (q0_i − q_ref,i)`. Returns `(v*, A)`; `u` has length nu, `dt` in s.
///
/// # Errors
/// [`Error::DimensionMismatch`] for wrong sizes, [`Error::NotPositiveDefinite`] if `A` is
/// singular (a body without mass on a moving joint).
pub fn free_motion_velocity<T: Scalar>(
    model: &MultibodyModel<T>,
    data: &mut MultibodyData<T>,
    q0: &DVector<T>,
    v0: &DVector<T>,
    u: &DVector<T>,
    dt: T,
) -> Result<(DVector<T>, DMatrix<T>)> {
    let (mut v_star, mut A) = (DVector::zeros(0), DMatrix::zeros(0, 0));
    let cliques = model.cliques();
    FreeMotion::default().compute(model, data, q0, v0, u, dt, &cliques, &mut v_star, &mut A)?;
    Ok((v_star, A))
}

/// The buffers of the free motion ([`free_motion_velocity`]) kept from one step to the next,
/// and the factor of `A`'s clique blocks (which the Delassus estimates and the constraint
/// rows solve with): [`FreeMotion::compute`] allocates nothing once it has seen the model.
#[derive(Clone, Debug)]
pub struct FreeMotion<T: Scalar> {
    /// The factor of `A`'s clique blocks, of the last [`FreeMotion::compute`].
    pub factor: BlockDiagonalCholesky<T>,
    /// The composite inertias of the mass matrix.
    composite: Vec<OriginInertia<T>>,
    rnea: RneaBuffers<T>,
}

impl<T: Scalar> Default for FreeMotion<T> {
    fn default() -> Self {
        FreeMotion {
            factor: BlockDiagonalCholesky::default(),
            composite: Vec::new(),
            rnea: RneaBuffers::default(),
        }
    }
}

impl<T: Scalar> FreeMotion<T> {
    /// Writes `v*` and `A` at `(q0, v0, u)` for a step `dt` (s) into `v_star` and `A`, as
    /// [`free_motion_velocity`] returns them, and keeps the factor of `A`; `cliques` are the
    /// model's ([`MultibodyModel::cliques`]). `A` is a matrix this function wrote before, or
    /// of another size (its entries outside the trees' blocks stay as they are, zero).
    ///
    /// # Errors
    /// As [`free_motion_velocity`]; `v_star`, `A` and the factor are not to be used then.
    #[allow(clippy::too_many_arguments)]
    pub fn compute(
        &mut self,
        model: &MultibodyModel<T>,
        data: &mut MultibodyData<T>,
        q0: &DVector<T>,
        v0: &DVector<T>,
        u: &DVector<T>,
        dt: T,
        cliques: &[Vec<usize>],
        v_star: &mut DVector<T>,
        A: &mut DMatrix<T>,
    ) -> Result<()> {
        check_len("q", model.nq(), q0.len())?;
        check_len("v", model.nv(), v0.len())?;
        check_len("u", model.nu(), u.len())?;
        forward_kinematics(model, data, q0, v0);
        let FreeMotion {
            factor,
            composite,
            rnea,
        } = self;
        let k = v_star;
        mass_matrix_into(model, data, composite, A);
        // k = −c(q0, v0), then the inputs, damping and springs; v* = v0 + δt A⁻¹ k in place.
        rnea_into(model, data, v0, None, rnea, k);
        k.neg_mut();
        for (col, (&index, t)) in model.actuators.iter().zip(&model.transmissions).enumerate() {
            if t.kind == TransmissionKind::Effort {
                k[index] += effort_input(t, u[col]);
            }
        }
        for j in &model.joints {
            for (a, d) in j.damping.iter().enumerate() {
                let i = j.v_start + a;
                A[(i, i)] += dt * *d;
                k[i] -= *d * v0[i];
            }
            if let Some(spring) = &j.spring {
                k[j.v_start] -= spring.stiffness * (q0[j.q_start] - spring.reference);
            }
        }
        // A is block diagonal over trees: one small Cholesky per tree.
        if !factor.refactor(A, cliques) {
            return Err(Error::NotPositiveDefinite { index: 0 });
        }
        *k *= dt;
        factor.solve_in_place(k);
        *k += v0;
        Ok(())
    }
}

/// The joint effort `g · clamp(u)` of an effort actuator with transmission `t`: the input
/// clamped to its range, times the gear.
pub fn effort_input<T: Scalar>(t: &Transmission, u: T) -> T {
    t.clamped(u) * lit::<T>(t.gear)
}

/// Position update `q = q0 + δt N(q0) v` with quaternions renormalized (DESIGN step 4).
pub fn integrate_positions<T: Scalar>(
    model: &MultibodyModel<T>,
    q0: &DVector<T>,
    v: &DVector<T>,
    dt: T,
) -> DVector<T> {
    let mut q = q0.clone();
    integrate_positions_into(model, q0, v, dt, &mut q);
    q
}

/// [`integrate_positions`] written into `q` (resized to nq if it is not): nothing allocated
/// when it has the size.
pub fn integrate_positions_into<T: Scalar>(
    model: &MultibodyModel<T>,
    q0: &DVector<T>,
    v: &DVector<T>,
    dt: T,
    q: &mut DVector<T>,
) {
    if q.len() == q0.len() {
        q.copy_from(q0);
    } else {
        *q = q0.clone();
    }
    for j in &model.joints {
        j.kind.integrate_into(
            q0.rows(j.q_start, j.kind.nq()),
            v.rows(j.v_start, j.kind.nv()),
            dt,
            &mut q.as_mut_slice()[j.q_start..j.q_start + j.kind.nq()],
        );
    }
}

fn check_len(what: &str, expected: usize, found: usize) -> Result<()> {
    if expected == found {
        Ok(())
    } else {
        Err(Error::DimensionMismatch {
            what: what.to_string(),
            expected,
            found,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{Pose, SpatialInertia};
    use crate::multibody::{JointKind, JointSpec};
    use approx::assert_relative_eq;
    use nalgebra::{Matrix3, Vector3};
    use num_dual::Dual64;

    fn chain() -> MultibodyModel<f64> {
        let mut m = MultibodyModel::new(Vector3::new(0.0, 0.0, -9.81));
        let link = |mass: f64| SpatialInertia {
            mass,
            com: Vector3::new(0.0, 0.05, -0.25),
            inertia_com: Matrix3::from_diagonal(&Vector3::new(0.02, 0.03, 0.012)),
        };
        let b0 = m
            .add_body("base", link(2.0), JointSpec::new(JointKind::Free))
            .unwrap();
        let b1 = m
            .add_body(
                "l1",
                link(1.0),
                JointSpec {
                    parent: Some(b0),
                    X_PJ: Pose::translation(Vector3::new(0.0, 0.0, -0.5)),
                    damping: vec![0.1],
                    ..JointSpec::new(JointKind::Revolute { axis: Vector3::x() })
                },
            )
            .unwrap();
        m.add_body(
            "l2",
            link(0.5),
            JointSpec {
                parent: Some(b1),
                X_PJ: Pose::translation(Vector3::new(0.0, 0.0, -0.5)),
                damping: vec![0.2],
                ..JointSpec::new(JointKind::Prismatic { axis: Vector3::z() })
            },
        )
        .unwrap();
        m.add_body("p", link(0.3), JointSpec::new(JointKind::Planar))
            .unwrap();
        m
    }

    fn state(m: &MultibodyModel<f64>) -> (DVector<f64>, DVector<f64>) {
        let mut q = m.neutral_configuration();
        let quat = nalgebra::UnitQuaternion::from_euler_angles(0.3, -0.5, 1.0);
        q.rows_mut(0, 7)
            .copy_from_slice(&[0.1, -0.2, 0.3, quat.w, quat.i, quat.j, quat.k]);
        q[7] = 0.7;
        q[8] = 0.05;
        q.rows_mut(9, 3).copy_from_slice(&[0.2, 0.1, 0.5]);
        let v = DVector::from_fn(m.nv(), |i, _| ((i * 7 % 5) as f64 - 2.0) * 0.4);
        (q, v)
    }

    fn kinetic_energy(m: &MultibodyModel<f64>, d: &MultibodyData<f64>) -> f64 {
        (0..m.bodies.len())
            .map(|i| 0.5 * d.V[i].dot(&(m.bodies[i].inertia.matrix() * d.V[i])))
            .sum()
    }

    #[test]
    fn crba_mass_matrix_is_rnea_of_unit_accelerations_and_gives_kinetic_energy() {
        let m = chain();
        let (q, v) = state(&m);
        let mut d = MultibodyData::new(&m);
        forward_kinematics(&m, &mut d, &q, &v);
        let M = mass_matrix(&m, &d);
        let c = bias_forces(&m, &d, &v);
        for k in 0..m.nv() {
            let e = DVector::from_fn(m.nv(), |i, _| if i == k { 1.0 } else { 0.0 });
            let col = inverse_dynamics(&m, &d, &v, &e) - &c;
            assert_relative_eq!(col, M.column(k).into_owned(), epsilon = 1e-12);
        }
        assert_relative_eq!(
            0.5 * v.dot(&(&M * &v)),
            kinetic_energy(&m, &d),
            epsilon = 1e-12
        );
        assert_relative_eq!(M.clone(), M.transpose(), epsilon = 1e-14);
    }

    /// Without gravity and damping, energy is conserved: dE/dt = vᵀ(τ − c) with τ = 0 must be
    /// 0 along the exact flow, i.e. vᵀ c(q, v) = ½ vᵀ Ṁ v. Checked by finite differences of
    /// the kinetic energy along a step with v̇ = −M⁻¹c.
    #[test]
    fn bias_forces_conserve_energy_without_gravity() {
        let mut m = chain();
        m.gravity = Vector3::zeros();
        let (q, v) = state(&m);
        let mut d = MultibodyData::new(&m);
        forward_kinematics(&m, &mut d, &q, &v);
        let M = mass_matrix(&m, &d);
        let c = bias_forces(&m, &d, &v);
        let vdot = M.clone().cholesky().unwrap().solve(&(-&c));
        let h = 1e-6;
        let mut energy = |s: f64| {
            let qs = integrate_positions(&m, &q, &v, s);
            let vs = &v + &vdot * s;
            forward_kinematics(&m, &mut d, &qs, &vs);
            kinetic_energy(&m, &d)
        };
        let dE = (energy(h) - energy(-h)) / (2.0 * h);
        assert!(dE.abs() < 1e-6, "dE/dt = {dE}");
    }

    #[test]
    fn free_body_falls_at_g_and_dual_matches_f64() {
        let mut m = MultibodyModel::<f64>::new(Vector3::new(0.0, 0.0, -9.81));
        let ball = SpatialInertia {
            mass: 0.5,
            com: Vector3::zeros(),
            inertia_com: Matrix3::identity() * 1e-4,
        };
        m.add_body("ball", ball, JointSpec::new(JointKind::Free))
            .unwrap();
        let q = m.neutral_configuration();
        let v = DVector::zeros(6);
        let mut d = MultibodyData::new(&m);
        let (vs, _) = free_motion_velocity(&m, &mut d, &q, &v, &DVector::zeros(0), 0.01).unwrap();
        assert_relative_eq!(vs[5], -0.0981, epsilon = 1e-15);
        let md = m.cast::<Dual64>();
        let mut dd = MultibodyData::new(&md);
        let (vsd, _) = free_motion_velocity(
            &md,
            &mut dd,
            &q.map(Dual64::from),
            &v.map(Dual64::from),
            &DVector::zeros(0),
            Dual64::from(0.01),
        )
        .unwrap();
        assert_relative_eq!(vsd[5].re, vs[5], epsilon = 1e-15);
    }

    /// The same code runs on dual numbers: ∂τ/∂q of inverse dynamics (revolute angle, and a
    /// planar coordinate) and ∂τ/∂m (a link mass) by `Dual64` match central differences.
    #[test]
    fn dual_numbers_differentiate_inverse_dynamics() {
        let m = chain();
        let (q, v) = state(&m);
        let vdot = DVector::from_fn(m.nv(), |i, _| 0.1 * i as f64 - 0.3);
        let tau = |m: &MultibodyModel<f64>, q: &DVector<f64>| {
            let mut d = MultibodyData::new(m);
            forward_kinematics(m, &mut d, q, &v);
            inverse_dynamics(m, &d, &v, &vdot)
        };
        let tau_dual = |md: &MultibodyModel<Dual64>, qd: &DVector<Dual64>| {
            let mut d = MultibodyData::new(md);
            forward_kinematics(md, &mut d, qd, &v.map(Dual64::from));
            inverse_dynamics(md, &d, &v.map(Dual64::from), &vdot.map(Dual64::from))
        };
        let h = 1e-6;
        for k in [7, 11] {
            let mut qd = q.map(Dual64::from);
            qd[k].eps = 1.0;
            let exact = tau_dual(&m.cast(), &qd).map(|x| x.eps);
            let (mut qp, mut qm) = (q.clone(), q.clone());
            qp[k] += h;
            qm[k] -= h;
            let fd = (tau(&m, &qp) - tau(&m, &qm)) / (2.0 * h);
            assert_relative_eq!(exact, fd, epsilon = 1e-6 * (1.0 + fd.norm()));
        }
        let mut md = m.cast::<Dual64>();
        md.bodies[1].inertia.mass.eps = 1.0;
        let exact = tau_dual(&md, &q.map(Dual64::from)).map(|x| x.eps);
        let (mut mp, mut mm) = (m.clone(), m.clone());
        mp.bodies[1].inertia.mass += h;
        mm.bodies[1].inertia.mass -= h;
        let fd = (tau(&mp, &q) - tau(&mm, &q)) / (2.0 * h);
        assert_relative_eq!(exact, fd, epsilon = 1e-6 * (1.0 + fd.norm()));
    }

    /// Actuation enters through `B u` and joint damping implicitly through `A = M + δt D`:
    /// a slider of mass m pushed by force u with damping d reaches
    /// `v* = (m v0 + δt u)/(m + δt d)` in one step, stable even for `δt d ≫ m`.
    #[test]
    fn actuation_and_implicit_damping() {
        let (mass, d, u, v0, dt) = (2.0, 1e4, 3.0, 0.5, 0.01);
        let mut m = MultibodyModel::<f64>::new(Vector3::new(0.0, 0.0, -9.81));
        let inertia = SpatialInertia {
            mass,
            com: Vector3::zeros(),
            inertia_com: Matrix3::identity() * 1e-3,
        };
        m.add_body(
            "slider",
            inertia,
            JointSpec {
                damping: vec![d],
                ..JointSpec::new(JointKind::Prismatic { axis: Vector3::x() })
            },
        )
        .unwrap();
        m.add_actuator(0).unwrap();
        let mut data = MultibodyData::new(&m);
        let q = DVector::zeros(1);
        let (v_star, A) = free_motion_velocity(
            &m,
            &mut data,
            &q,
            &DVector::from_vec(vec![v0]),
            &DVector::from_vec(vec![u]),
            dt,
        )
        .unwrap();
        assert_relative_eq!(A[(0, 0)], mass + dt * d, epsilon = 1e-12);
        assert_relative_eq!(
            v_star[0],
            (mass * v0 + dt * u) / (mass + dt * d),
            epsilon = 1e-15
        );
        assert!(m.add_actuator(1).is_err());
    }

    /// Armature `J_a` adds to the joint's diagonal of `M` and nowhere else, in the CRBA and in
    /// RNEA alike; a spring adds the explicit effort `−k (q0 − q_ref)`: a pendulum (mass m at
    /// distance l, no gravity) with rotor inertia J_a reaches
    /// `v* = v0 − δt k (q0 − q_ref) / (m l² + I_c + J_a)` in one step.
    #[test]
    fn armature_on_the_diagonal_and_an_explicit_spring() {
        let (mass, l, i_c, armature) = (1.5, 0.4, 0.02, 0.3);
        let (k, q_ref, q0, v0, dt) = (20.0, 0.1, 0.6, -0.2, 0.01);
        let mut m = MultibodyModel::<f64>::new(Vector3::zeros());
        let inertia = SpatialInertia {
            mass,
            com: Vector3::new(0.0, 0.0, -l),
            inertia_com: Matrix3::identity() * i_c,
        };
        m.add_body(
            "pendulum",
            inertia,
            JointSpec {
                armature: vec![armature],
                spring: Some(crate::multibody::JointSpring {
                    stiffness: k,
                    reference: q_ref,
                }),
                ..JointSpec::new(JointKind::Revolute { axis: Vector3::y() })
            },
        )
        .unwrap();
        let mut data = MultibodyData::new(&m);
        let (q, v) = (DVector::from_vec(vec![q0]), DVector::from_vec(vec![v0]));
        let (v_star, A) =
            free_motion_velocity(&m, &mut data, &q, &v, &DVector::zeros(0), dt).unwrap();
        let inertia_about_axis = mass * l * l + i_c + armature;
        assert_relative_eq!(A[(0, 0)], inertia_about_axis, epsilon = 1e-14);
        assert_relative_eq!(
            v_star[0],
            v0 - dt * k * (q0 - q_ref) / inertia_about_axis,
            epsilon = 1e-14
        );
        // RNEA with a unit acceleration agrees with the CRBA (the armature included).
        let one = DVector::from_vec(vec![1.0]);
        let tau = inverse_dynamics(&m, &data, &v, &one) - bias_forces(&m, &data, &v);
        assert_relative_eq!(tau[0], inertia_about_axis, epsilon = 1e-14);
        // A spring on a free joint and a negative armature are refused.
        let bad_spring = JointSpec {
            spring: Some(crate::multibody::JointSpring {
                stiffness: 1.0,
                reference: 0.0,
            }),
            ..JointSpec::new(JointKind::Free)
        };
        assert!(m.add_body("free", inertia, bad_spring).is_err());
        let bad_armature = JointSpec {
            armature: vec![-1.0],
            ..JointSpec::new(JointKind::Revolute { axis: Vector3::x() })
        };
        assert!(m.add_body("negative", inertia, bad_armature).is_err());
    }
}
