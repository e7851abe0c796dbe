//! Analytic first derivatives of inverse dynamics in the world frame, in f64 (Carpentier &
//! Mansard 2018, "Analytical derivatives of rigid body dynamics algorithms", RSS, Sec. III;
//! Featherstone, *Rigid Body Dynamics Algorithms* (RBDA), Ch. 2 and Table 5.1).
//!
//! # World-frame RNEA
//!
//! With `ᵒS_i` the world-frame motion subspace of joint i, `ᵒI_i` the world-frame inertia of
//! body i and `λ(i)` its parent, RBDA Table 5.1 reads in world coordinates
//!
//! ```text
//!   V_i = V_λ + ᵒS_i v_i,   A_i = A_λ + ᵒS_i a_i + V_i × ᵒS_i v_i + ᵒc_i,          (1)
//!   f_i = ᵒI_i A_i + V_i ×* ᵒI_i V_i,   F_i = f_i + Σ_{children c} F_c,   τ_i = ᵒS_iᵀ F_i,
//! ```
//!
//! with `A_root` = `(0, −g)` (gravity as an upward acceleration of the world) and `ᵒc_i` the
//! bias of planar and free joints, whose velocities are in the parent frame:
//! `ᵒc_i = (0, −ω × v)` with `(ω, v)` the joint's angular velocity and the velocity of the body
//! origin, world axes (the world image of the joint's `c_J`).
//!
//! # Variations
//!
//! A tangent perturbation `δ` of joint j's coordinate n (the retraction `q ⊕ δ` is first-order
//! the motion with velocity `δ`, [`crate::multibody::JointKind::retract`]) moves every body of
//! the subtree of j rigidly by the world twist `ξ = ᵒS_j[n]`. Quantities attached to a moved
//! body vary as `δm = ξ × m` (motion vectors: `ᵒS_i`, `ᵒc_i` for i ≠ j) and
//! `δ(ᵒI) x = ξ ×* (ᵒI x) − ᵒI (ξ × x)` (inertias). Joint j's own subspace is the exception:
//! revolute and prismatic columns are unchanged (`ξ × ξ = 0`); planar, free and ball columns,
//! `(a_m, p × a_m)` (rotations about the body origin p along the parent's axes `a_m`) and
//! `(0, a_m)`, change only through `p`, which moves by `a_n` along translational directions:
//!
//! ```text
//!   δ_own ᵒS_j[m] = (0, δp × ω(ᵒS_j[m])),   δp = lin(ξ) if n is translational, else 0,   (2)
//! ```
//!
//! and `ᵒc_j` is unchanged (its `ω`, `v` are the parent-frame velocities rotated by the
//! parent's pose). Differentiating (1) along these rules, body by body in the subtree of j, and
//! the backward sum over all bodies, gives one column of `∂τ/∂q` in `O(n_b)`. A velocity
//! direction `e_k` of joint j seeds `δV_j = ᵒS_j[n]` instead, and differentiates `ᵒc_j`.
//! Everything here is checked against dual numbers in this module's tests and in
//! `tests/state_derivatives.rs`.
#![allow(non_snake_case)]

use nalgebra::{DMatrix, DVector, DVectorViewMut, Matrix3, Vector3, Vector6};

pub use crate::math::spatial::spatial;
use crate::math::spatial::{angular as ang, force_cross, linear as lin, motion_cross};
use crate::math::Pose;
use crate::multibody::joint::JointKind;
use crate::multibody::model::{Joint, MultibodyModel};

/// Whether coordinate `n` of a joint of `kind` translates the body origin under the
/// retraction (free: 3..6, planar: x and y, prismatic).
fn translational(kind: &JointKind, n: usize) -> bool {
    match kind {
        JointKind::Free => n >= 3,
        JointKind::Planar => n < 2,
        JointKind::Prismatic { .. } => true,
        JointKind::Fixed | JointKind::Revolute { .. } | JointKind::Ball => false,
    }
}

/// Whether a joint of `kind` has the parent-frame bias `ᵒc = (0, −ω × v)`.
fn has_bias(kind: &JointKind) -> bool {
    matches!(kind, JointKind::Free | JointKind::Planar)
}

/// Velocity indices of `joint`.
fn indices(joint: &Joint<f64>) -> std::ops::Range<usize> {
    joint.v_start..joint.v_start + joint.kind.nv()
}

/// A body's spatial inertia in world axes about the origin of a [`WorldKinematics`], kept as
/// mass, centre of mass and rotational inertia: the 6×6 matrix of RBDA eq. 2.63,
/// `[[I_c + m ĉ ĉᵀ, m ĉ], [m ĉᵀ, m 1]]`, is applied without being formed, and moving the
/// origin only moves `c`.
#[derive(Clone, Copy, Debug)]
pub struct WorldInertia {
    /// Mass (kg).
    pub mass: f64,
    /// Centre of mass relative to the origin (m, world axes).
    pub c: Vector3<f64>,
    /// Rotational inertia about the centre of mass, world axes (kg·m²).
    pub I_c: Matrix3<f64>,
}

impl WorldInertia {
    /// `ᵒI x` for `x = (ω, v)`: eq. 2.63 multiplied out, linear part `l = m (v + ω × c)`,
    /// angular part `I_c ω + c × l`.
    pub fn apply(&self, x: &Vector6<f64>) -> Vector6<f64> {
        let w = ang(x);
        let l = (lin(x) + w.cross(&self.c)) * self.mass;
        spatial(self.I_c * w + self.c.cross(&l), l)
    }
}

/// World-frame kinematics at one configuration: the inputs of eqs. (1)-(2).
#[derive(Clone, Debug)]
pub struct WorldKinematics {
    /// World-frame motion subspace columns, one per velocity index: `ᵒS_j[n]` of joint j's
    /// coordinate n at `v_start_j + n`.
    pub S: Vec<Vector6<f64>>,
    /// Body origins `p_WB` (m).
    pub p: Vec<Vector3<f64>>,
    /// World-frame spatial inertias `ᵒI_i` (about the origin).
    pub I: Vec<WorldInertia>,
    /// `(joint, column)` of each velocity index.
    pub coordinate: Vec<(usize, usize)>,
    /// `subtree[j · n_b + i]`: body i is in the subtree of body j (j is i or an ancestor of i).
    subtree: Vec<bool>,
}

impl WorldKinematics {
    /// World-frame quantities from `data` (after [`crate::multibody::forward_kinematics`]).
    pub fn new(
        model: &MultibodyModel<f64>,
        data: &crate::multibody::kinematics::MultibodyData<f64>,
    ) -> Self {
        Self::from_poses(model, &data.X_WB, &data.S)
    }

    /// World-frame quantities at positions `q`, and the body poses `X_WB`: the poses and
    /// subspaces of forward kinematics (RBDA Sec. 4.4) without its velocities and Jacobians.
    pub fn at(model: &MultibodyModel<f64>, q: &DVector<f64>) -> (Self, Vec<Pose<f64>>) {
        let mut X_WB: Vec<Pose<f64>> = Vec::with_capacity(model.bodies.len());
        let mut S_B = Vec::with_capacity(model.bodies.len());
        for joint in &model.joints {
            let X_JM = joint.kind.transform(q.rows(joint.q_start, joint.kind.nq()));
            let X_PB = joint.X_PJ.compose(&X_JM);
            let X = joint.parent.map_or(X_PB, |p| X_WB[p].compose(&X_PB));
            X_WB.push(X);
            S_B.push(joint.kind.motion_subspace(&X_JM));
        }
        (Self::from_poses(model, &X_WB, &S_B), X_WB)
    }

    /// World-frame quantities from body poses and body-frame subspaces.
    fn from_poses(
        model: &MultibodyModel<f64>,
        X_WB: &[Pose<f64>],
        S_B: &[Vec<Vector6<f64>>],
    ) -> Self {
        let nb = model.bodies.len();
        let mut S = vec![Vector6::zeros(); model.nv()];
        let mut I = Vec::with_capacity(nb);
        let mut p = Vec::with_capacity(nb);
        let mut coordinate = vec![(0, 0); model.nv()];
        for (i, joint) in model.joints.iter().enumerate() {
            let X = &X_WB[i];
            for (n, s) in S_B[i].iter().enumerate() {
                let w = X.R * ang(s);
                S[joint.v_start + n] = spatial(w, X.R * lin(s) + X.p.cross(&w));
                coordinate[joint.v_start + n] = (i, n);
            }
            let body = &model.bodies[i].inertia;
            I.push(WorldInertia {
                mass: body.mass,
                c: X.p + X.R * body.com,
                I_c: X.R * body.inertia_com * X.R.transpose(),
            });
            p.push(X.p);
        }
        let mut subtree = vec![false; nb * nb];
        for j in 0..nb {
            subtree[j * nb + j] = true;
            for i in j + 1..nb {
                subtree[j * nb + i] = model.joints[i].parent.is_some_and(|p| subtree[j * nb + p]);
            }
        }
        WorldKinematics {
            S,
            p,
            I,
            coordinate,
            subtree,
        }
    }

    /// Whether body i is in the subtree of body j.
    pub fn in_subtree(&self, j: usize, i: usize) -> bool {
        self.subtree[j * self.p.len() + i]
    }

    /// The same kinematics with each tree about its own root body's origin `o` (world axes):
    /// motion vectors `(ω, v + ω × o)`, positions `p − o`, centres of mass `c − o` (the
    /// inertias `M⁻ᵀ ᵒI M⁻¹` with `M⁻¹ = [[1, 0], [ô, 1]]`); one copy for the whole forest,
    /// whose trees do not interact. Derivatives of generalized quantities do not depend on the
    /// origin, but their round-off grows with the lever arms `|p − o|` of the terms that
    /// cancel in them.
    pub fn about_roots(&self, model: &MultibodyModel<f64>) -> Self {
        let mut origin: Vec<Vector3<f64>> = Vec::with_capacity(self.p.len());
        for (i, joint) in model.joints.iter().enumerate() {
            origin.push(joint.parent.map_or(self.p[i], |p| origin[p]));
        }
        WorldKinematics {
            S: self
                .S
                .iter()
                .zip(&self.coordinate)
                .map(|(x, (i, _))| spatial(ang(x), lin(x) + ang(x).cross(&origin[*i])))
                .collect(),
            p: self.p.iter().zip(&origin).map(|(p, o)| p - o).collect(),
            I: self
                .I
                .iter()
                .zip(&origin)
                .map(|(I, o)| WorldInertia { c: I.c - o, ..*I })
                .collect(),
            coordinate: self.coordinate.clone(),
            subtree: self.subtree.clone(),
        }
    }

    /// The world twist `ξ_k = ᵒS_j[n]` of velocity (or tangent) direction `k`.
    pub fn twist(&self, k: usize) -> Vector6<f64> {
        self.S[k]
    }

    /// Joint twists `ᵒS_i x_i` of every joint for generalized velocities `x` (nv).
    pub fn joint_twists(&self, model: &MultibodyModel<f64>, x: &DVector<f64>) -> Vec<Vector6<f64>> {
        let mut u = Vec::with_capacity(model.joints.len());
        self.joint_twists_into(model, x, &mut u);
        u
    }

    /// [`WorldKinematics::joint_twists`] into `u` (its buffer reused).
    pub fn joint_twists_into(
        &self,
        model: &MultibodyModel<f64>,
        x: &DVector<f64>,
        u: &mut Vec<Vector6<f64>>,
    ) {
        u.clear();
        u.extend(
            model.joints.iter().map(|joint| {
                indices(joint).fold(Vector6::zeros(), |acc, l| acc + self.S[l] * x[l])
            }),
        );
    }

    /// Body twists `V_i = V_λ + ᵒS_i x_i` (world) for the joint twists `u`.
    pub fn body_twists(
        &self,
        model: &MultibodyModel<f64>,
        u: &[Vector6<f64>],
    ) -> Vec<Vector6<f64>> {
        let mut V = Vec::with_capacity(u.len());
        self.body_twists_into(model, u, &mut V);
        V
    }

    /// [`WorldKinematics::body_twists`] into `V` (its buffer reused).
    pub fn body_twists_into(
        &self,
        model: &MultibodyModel<f64>,
        u: &[Vector6<f64>],
        V: &mut Vec<Vector6<f64>>,
    ) {
        V.clear();
        for (i, joint) in model.joints.iter().enumerate() {
            let parent = joint.parent.map_or(Vector6::zeros(), |p| V[p]);
            V.push(parent + u[i]);
        }
    }

    /// Eq. (2): the variation of column `l` of a joint's own subspace along its own tangent
    /// direction `k`.
    fn own_variation(&self, kind: &JointKind, k: usize, l: usize) -> Vector6<f64> {
        if translational(kind, self.coordinate[k].1) {
            spatial(Vector3::zeros(), lin(&self.S[k]).cross(&ang(&self.S[l])))
        } else {
            Vector6::zeros()
        }
    }

    /// Variation of a joint's own twist `ᵒS_j x_j` (joint twist `u_j`) along its own tangent
    /// direction `k`, eq. (2).
    pub fn own_twist_variation(
        &self,
        kind: &JointKind,
        k: usize,
        u_j: &Vector6<f64>,
    ) -> Vector6<f64> {
        if translational(kind, self.coordinate[k].1) {
            spatial(Vector3::zeros(), lin(&self.S[k]).cross(&ang(u_j)))
        } else {
            Vector6::zeros()
        }
    }

    /// The work of a force `F` (about the same origin) along the variations of the world
    /// Jacobian columns in tangent direction `k`, as forces to dot with the columns: for `l` a
    /// velocity index of body i's joint or an ancestor's, the variation `δ_k ξ_l` of column `l`
    /// is `ξ_k × ξ_l` when `l`'s joint is strictly below k's joint j (so
    /// `δ_k ξ_l · F = −ξ_l · (ξ_k ×* F)`, with `a ×* = −(a ×)ᵀ`, RBDA eq. 2.32), eq. (2) for
    /// j's own columns (`(0, lin ξ_k × ang ξ_l) · F = ξ_l · (lin F × lin ξ_k, 0)` when k
    /// translates) and zero above j. Returns `δ_k ξ_l · F = ξ_l · G` as `Some(G)`, `None` where
    /// the column does not vary; `forces` is [`WorldKinematics::variation_forces`] of `k` (or
    /// any pair in its place, such as those forces plus a common term).
    pub fn column_variation_force<'f, G>(
        &self,
        l: usize,
        k: usize,
        forces: &'f (G, G),
    ) -> Option<&'f G> {
        let (jl, j) = (self.coordinate[l].0, self.coordinate[k].0);
        if j == jl {
            Some(&forces.1)
        } else if self.in_subtree(j, jl) {
            Some(&forces.0)
        } else {
            None
        }
    }

    /// The forces `(−ξ_k ×* F, G_own)` of [`WorldKinematics::column_variation_force`] along
    /// tangent direction `k`, computed once for all columns, with the twist `ξ = ξ_k` given
    /// about the origin of `F` (`ᵒS_k` shifted there: a contact's forces are taken about its
    /// point); `G_own = (lin F × lin ξ_k, 0)` if k translates its joint's body origin, else
    /// zero.
    pub fn variation_forces(
        &self,
        model: &MultibodyModel<f64>,
        k: usize,
        xi: &Vector6<f64>,
        F: &Vector6<f64>,
    ) -> (Vector6<f64>, Vector6<f64>) {
        let (j, n) = self.coordinate[k];
        // A translation's twist has no angular part: its linear part is that about any origin.
        let own = if translational(&model.joints[j].kind, n) {
            spatial(lin(F).cross(&lin(xi)), Vector3::zeros())
        } else {
            Vector6::zeros()
        };
        (-force_cross(xi, F), own)
    }

    /// Velocity indices of body i's joint and its ancestors' (the nonzero columns of its
    /// world Jacobian), into `out` (its buffer reused).
    pub fn chain_into(&self, model: &MultibodyModel<f64>, i: usize, out: &mut Vec<usize>) {
        out.clear();
        let mut body = Some(i);
        while let Some(b) = body {
            let joint = &model.joints[b];
            out.extend(indices(joint));
            body = joint.parent;
        }
    }
}

/// `∂τ/∂q` (tangent) and, when asked, `∂τ/∂v` (both nv × nv) of inverse dynamics
/// `τ = ID(q, v, a)` (eq. (1)) at the configuration of `world`, with world acceleration
/// `a_root` of the roots' parent: `(0, −g)` for the dynamics, zero for `∂(M x)/∂q` (then
/// `v = 0`, `a = x`).
///
/// Each tree is differentiated about its root body's origin ([`WorldKinematics::about_roots`]):
/// the result does not depend on the origin, but the round-off of the terms that cancel (a free
/// body's inertia about a distant origin) does.
pub fn inverse_dynamics_derivatives(
    model: &MultibodyModel<f64>,
    world: &WorldKinematics,
    v: &DVector<f64>,
    a: &DVector<f64>,
    a_root: &Vector6<f64>,
    with_velocity: bool,
) -> (DMatrix<f64>, Option<DMatrix<f64>>) {
    let nv = model.nv();
    let mut dq = DMatrix::zeros(nv, nv);
    let mut dv = with_velocity.then(|| DMatrix::zeros(nv, nv));
    let mut buffers = Buffers::new(model);
    let shifted = world.about_roots(model);
    let nominal = Nominal::new(model, world, &shifted, v, a, a_root);
    for k in 0..nv {
        variations(
            model,
            &shifted,
            &nominal,
            v,
            a,
            k,
            with_velocity,
            &mut buffers,
        );
        let dv_k = dv.as_mut().map(|dv| dv.column_mut(k));
        backward(
            model,
            &shifted,
            k,
            &mut buffers,
            &nominal.F,
            dq.column_mut(k),
            dv_k,
        );
    }
    (dq, dv)
}

/// The nominal quantities of eq. (1) for every body, each tree about its root's origin.
struct Nominal {
    u: Vec<Vector6<f64>>,
    V: Vec<Vector6<f64>>,
    A: Vec<Vector6<f64>>,
    c: Vec<Vector6<f64>>,
    h: Vec<Vector6<f64>>,
    IA: Vec<Vector6<f64>>,
    F: Vec<Vector6<f64>>,
}

impl Nominal {
    /// Eq. (1) at `v`, `a` on `shifted` ([`WorldKinematics::about_roots`] of `world`), each root
    /// accelerated by `a_root` about its own origin.
    fn new(
        model: &MultibodyModel<f64>,
        world: &WorldKinematics,
        shifted: &WorldKinematics,
        v: &DVector<f64>,
        a: &DVector<f64>,
        a_root: &Vector6<f64>,
    ) -> Self {
        let nb = model.bodies.len();
        let u = shifted.joint_twists(model, v);
        let V = shifted.body_twists(model, &u);
        let ua = shifted.joint_twists(model, a);
        let mut A = Vec::with_capacity(nb);
        let mut c = Vec::with_capacity(nb);
        for (i, joint) in model.joints.iter().enumerate() {
            let ci = if has_bias(&joint.kind) {
                let w = ang(&u[i]);
                let vo = lin(&u[i]) - shifted.p[i].cross(&w);
                spatial(Vector3::zeros(), -w.cross(&vo))
            } else {
                Vector6::zeros()
            };
            let parent = joint.parent.map_or_else(
                || {
                    let o = world.p[i];
                    spatial(ang(a_root), lin(a_root) + ang(a_root).cross(&o))
                },
                |p: usize| A[p],
            );
            A.push(parent + ua[i] + motion_cross(&V[i], &u[i]) + ci);
            c.push(ci);
        }
        let h: Vec<Vector6<f64>> = (0..nb).map(|i| shifted.I[i].apply(&V[i])).collect();
        let IA: Vec<Vector6<f64>> = (0..nb).map(|i| shifted.I[i].apply(&A[i])).collect();
        let mut F: Vec<Vector6<f64>> = (0..nb).map(|i| IA[i] + force_cross(&V[i], &h[i])).collect();
        for i in (0..nb).rev() {
            if let Some(p) = model.joints[i].parent {
                let Fi = F[i];
                F[p] += Fi;
            }
        }
        Nominal {
            u,
            V,
            A,
            c,
            h,
            IA,
            F,
        }
    }
}

/// Per-direction variations, reused across directions and trees: `q` along the tangent
/// direction, `v` along the velocity direction of the same coordinate.
struct Buffers {
    dV: Vec<Vector6<f64>>,
    dA: Vec<Vector6<f64>>,
    df: Vec<Vector6<f64>>,
    /// Variations of the subspace columns along the tangent direction, per velocity index.
    dS: Vec<Vector6<f64>>,
    dF: Vec<Vector6<f64>>,
    dV_v: Vec<Vector6<f64>>,
    dA_v: Vec<Vector6<f64>>,
    df_v: Vec<Vector6<f64>>,
    dF_v: Vec<Vector6<f64>>,
    active: Vec<bool>,
}

impl Buffers {
    fn new(model: &MultibodyModel<f64>) -> Self {
        let zeros = vec![Vector6::zeros(); model.bodies.len()];
        Buffers {
            dV: zeros.clone(),
            dA: zeros.clone(),
            df: zeros.clone(),
            dS: vec![Vector6::zeros(); model.nv()],
            dF: zeros.clone(),
            dV_v: zeros.clone(),
            dA_v: zeros.clone(),
            df_v: zeros.clone(),
            dF_v: zeros,
            active: vec![false; model.bodies.len()],
        }
    }
}

/// Forward variations of eq. (1) over the subtree of coordinate k's joint j, along its tangent
/// direction and (`with_velocity`) its velocity direction, in one sweep.
///
/// Tangent direction: the subtree moves rigidly with `ξ = ᵒS_j[n]`, and with
/// `δ(ᵒI) x = ξ ×* (ᵒI x) − ᵒI (ξ × x)` the variations of `h = ᵒI V` and `ᵒI A` take one
/// inertia product each, `δh = ξ ×* h + ᵒI (δV − ξ × V)` and likewise for `A`. Velocity
/// direction: `δV_j = ᵒS_j[n]` seeds the sweep, and joint j's bias `ᵒc_j` varies.
#[allow(clippy::too_many_arguments)]
fn variations(
    model: &MultibodyModel<f64>,
    world: &WorldKinematics,
    nom: &Nominal,
    v: &DVector<f64>,
    a: &DVector<f64>,
    k: usize,
    with_velocity: bool,
    buf: &mut Buffers,
) {
    let j = world.coordinate[k].0;
    let xi = world.S[k];
    for i in 0..model.bodies.len() {
        buf.active[i] = world.in_subtree(j, i);
        if !buf.active[i] {
            continue;
        }
        let joint = &model.joints[i];
        let parent = joint.parent.filter(|&p| buf.active[p]);
        let mut du = Vector6::zeros();
        let mut dua = Vector6::zeros();
        for l in indices(joint) {
            let ds = if i == j {
                world.own_variation(&joint.kind, k, l)
            } else {
                motion_cross(&xi, &world.S[l])
            };
            du += ds * v[l];
            dua += ds * a[l];
            buf.dS[l] = ds;
        }
        let (dVp, dAp) = parent.map_or((Vector6::zeros(), Vector6::zeros()), |p| {
            (buf.dV[p], buf.dA[p])
        });
        let dV = dVp + du;
        let mut dA = dAp + dua + motion_cross(&dV, &nom.u[i]) + motion_cross(&nom.V[i], &du);
        if i != j && has_bias(&joint.kind) {
            dA += motion_cross(&xi, &nom.c[i]);
        }
        let I = &world.I[i];
        let dh = force_cross(&xi, &nom.h[i]) + I.apply(&(dV - motion_cross(&xi, &nom.V[i])));
        buf.df[i] = force_cross(&xi, &nom.IA[i])
            + I.apply(&(dA - motion_cross(&xi, &nom.A[i])))
            + force_cross(&dV, &nom.h[i])
            + force_cross(&nom.V[i], &dh);
        buf.dV[i] = dV;
        buf.dA[i] = dA;
        if !with_velocity {
            continue;
        }
        let (dVp, dAp) = parent.map_or((Vector6::zeros(), Vector6::zeros()), |p| {
            (buf.dV_v[p], buf.dA_v[p])
        });
        let (dV, dA) = if i == j {
            let dV = dVp + xi;
            let mut dA = dAp + motion_cross(&dV, &nom.u[i]) + motion_cross(&nom.V[i], &xi);
            if has_bias(&joint.kind) {
                let (w, vo) = (
                    ang(&nom.u[i]),
                    lin(&nom.u[i]) - world.p[i].cross(&ang(&nom.u[i])),
                );
                let (dw, dvo) = (ang(&xi), lin(&xi) - world.p[i].cross(&ang(&xi)));
                dA -= spatial(Vector3::zeros(), dw.cross(&vo) + w.cross(&dvo));
            }
            (dV, dA)
        } else {
            (dVp, dAp + motion_cross(&dVp, &nom.u[i]))
        };
        buf.df_v[i] =
            I.apply(&dA) + force_cross(&dV, &nom.h[i]) + force_cross(&nom.V[i], &I.apply(&dV));
        buf.dV_v[i] = dV;
        buf.dA_v[i] = dA;
    }
}

/// Backward sum of eq. (1) along direction `k`: `δτ_i = δᵒS_iᵀ F_i + ᵒS_iᵀ δF_i` into the
/// tangent column `dq` and (when given) `ᵒS_iᵀ δF_i` into the velocity column `dv` (nv each,
/// zero on entry). Only the subtree of k's joint and its ancestors carry variations.
fn backward(
    model: &MultibodyModel<f64>,
    world: &WorldKinematics,
    k: usize,
    buf: &mut Buffers,
    F: &[Vector6<f64>],
    mut dq: DVectorViewMut<'_, f64>,
    mut dv: Option<DVectorViewMut<'_, f64>>,
) {
    let j = world.coordinate[k].0;
    buf.dF.fill(Vector6::zeros());
    buf.dF_v.fill(Vector6::zeros());
    for i in (0..model.bodies.len()).rev() {
        let active = buf.active[i];
        if !(active || world.in_subtree(i, j)) {
            continue;
        }
        let joint = &model.joints[i];
        if active {
            buf.dF[i] += buf.df[i];
            buf.dF_v[i] += buf.df_v[i];
        }
        for l in indices(joint) {
            let mut x = world.S[l].dot(&buf.dF[i]);
            if active {
                x += buf.dS[l].dot(&F[i]);
            }
            dq[l] = x;
            if let Some(dv) = dv.as_mut() {
                dv[l] = world.S[l].dot(&buf.dF_v[i]);
            }
        }
        if let Some(p) = joint.parent {
            let (d, d_v) = (buf.dF[i], buf.dF_v[i]);
            buf.dF[p] += d;
            buf.dF_v[p] += d_v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{Pose, SpatialInertia};
    use crate::multibody::dynamics::inverse_dynamics;
    use crate::multibody::kinematics::{forward_kinematics, MultibodyData};
    use crate::multibody::{JointSpec, MultibodyModel};
    use nalgebra::Matrix3;
    use num_dual::{Derivative, DualSVec64};

    type D = DualSVec64<1>;

    /// A tree with every joint kind: free root, revolute and prismatic below it, a planar root
    /// with a revolute child, and a free body hung from the revolute link.
    fn tree() -> MultibodyModel<f64> {
        let mut m = MultibodyModel::new(Vector3::new(0.1, -0.2, -9.81));
        let link = |mass: f64, c: [f64; 3]| SpatialInertia {
            mass,
            com: Vector3::from(c),
            inertia_com: Matrix3::new(0.02, 0.001, 0.0, 0.001, 0.03, 0.002, 0.0, 0.002, 0.015),
        };
        let at = |x: f64, y: f64, z: f64| Pose {
            R: *nalgebra::Rotation3::from_euler_angles(0.2, -0.1, 0.4).matrix(),
            p: Vector3::new(x, y, z),
        };
        let b0 = m
            .add_body(
                "base",
                link(2.0, [0.01, 0.02, -0.1]),
                JointSpec::new(JointKind::Free),
            )
            .unwrap();
        let axis = Vector3::new(1.0, 2.0, 2.0) / 3.0;
        let b1 = m
            .add_body(
                "l1",
                link(1.0, [0.0, 0.05, -0.2]),
                JointSpec {
                    parent: Some(b0),
                    X_PJ: at(0.0, 0.1, -0.3),
                    ..JointSpec::new(JointKind::Revolute { axis })
                },
            )
            .unwrap();
        m.add_body(
            "l2",
            link(0.5, [0.03, 0.0, -0.1]),
            JointSpec {
                parent: Some(b1),
                X_PJ: at(0.1, 0.0, -0.4),
                ..JointSpec::new(JointKind::Prismatic { axis: Vector3::z() })
            },
        )
        .unwrap();
        m.add_body(
            "ball",
            link(0.3, [0.0, 0.0, 0.01]),
            JointSpec {
                parent: Some(b1),
                X_PJ: at(0.2, -0.1, 0.0),
                ..JointSpec::new(JointKind::Free)
            },
        )
        .unwrap();
        let b4 = m
            .add_body(
                "p",
                link(0.7, [0.05, 0.0, 0.0]),
                JointSpec {
                    X_PJ: at(0.0, 0.5, 0.2),
                    ..JointSpec::new(JointKind::Planar)
                },
            )
            .unwrap();
        m.add_body(
            "p1",
            link(0.4, [0.0, 0.1, 0.0]),
            JointSpec {
                parent: Some(b4),
                X_PJ: at(0.3, 0.0, 0.0),
                ..JointSpec::new(JointKind::Revolute { axis: Vector3::x() })
            },
        )
        .unwrap();
        m
    }

    fn state(m: &MultibodyModel<f64>) -> (DVector<f64>, DVector<f64>, DVector<f64>) {
        let mut q = m.neutral_configuration();
        let r = nalgebra::UnitQuaternion::from_euler_angles(0.3, -0.5, 1.0);
        let s = nalgebra::UnitQuaternion::from_euler_angles(-0.2, 0.4, 0.1);
        q.copy_from_slice(&[
            0.1, -0.2, 0.3, r.w, r.i, r.j, r.k, 0.7, 0.05, 0.2, 0.1, -0.3, s.w, s.i, s.j, s.k, 0.2,
            0.1, 0.5, -0.6,
        ]);
        let v = DVector::from_fn(m.nv(), |i, _| ((i * 7 % 5) as f64 - 2.0) * 0.4);
        let a = DVector::from_fn(m.nv(), |i, _| ((i * 3 % 7) as f64 - 3.0) * 0.7);
        (q, v, a)
    }

    /// Column `k` of `∂ID/∂q` (tangent) or `∂ID/∂v` by a one-direction dual.
    fn dual_column(
        m: &MultibodyModel<f64>,
        q: &DVector<f64>,
        v: &DVector<f64>,
        a: &DVector<f64>,
        k: usize,
        position: bool,
    ) -> DVector<f64> {
        let md = m.cast::<D>();
        let seed = |i: usize, on: bool| {
            if on && i == k {
                D::new(0.0, Derivative::some(nalgebra::SVector::<f64, 1>::new(1.0)))
            } else {
                D::from_re(0.0)
            }
        };
        let delta = DVector::from_fn(m.nv(), |i, _| seed(i, position));
        let qd = md.retract(&q.map(D::from_re), &delta);
        let vd = DVector::from_fn(m.nv(), |i, _| D::from_re(v[i]) + seed(i, !position));
        let mut data = MultibodyData::new(&md);
        forward_kinematics(&md, &mut data, &qd, &vd);
        inverse_dynamics(&md, &data, &vd, &a.map(D::from_re))
            .map(|x| x.eps.unwrap_generic(nalgebra::U1, nalgebra::U1)[0])
    }

    #[test]
    fn rnea_derivatives_match_dual_numbers() {
        let m = tree();
        let (q, v, a) = state(&m);
        let mut data = MultibodyData::new(&m);
        forward_kinematics(&m, &mut data, &q, &v);
        let world = WorldKinematics::new(&m, &data);
        let g = spatial(Vector3::zeros(), -m.gravity);
        let (dq, dv) = inverse_dynamics_derivatives(&m, &world, &v, &a, &g, true);
        let dv = dv.unwrap();
        for k in 0..m.nv() {
            let exact_q = dual_column(&m, &q, &v, &a, k, true);
            let exact_v = dual_column(&m, &q, &v, &a, k, false);
            let scale = 1.0 + exact_q.amax();
            assert!(
                (dq.column(k) - &exact_q).amax() <= 1e-12 * scale,
                "∂τ/∂q column {k}: {} vs {}",
                dq.column(k).transpose(),
                exact_q.transpose()
            );
            assert!(
                (dv.column(k) - &exact_v).amax() <= 1e-12 * (1.0 + exact_v.amax()),
                "∂τ/∂v column {k}"
            );
        }
    }

    #[test]
    fn mass_matrix_derivative_is_rnea_without_velocity_and_gravity() {
        let mut m = tree();
        let (q, _, x) = state(&m);
        let zero = DVector::zeros(m.nv());
        let mut data = MultibodyData::new(&m);
        forward_kinematics(&m, &mut data, &q, &zero);
        let world = WorldKinematics::new(&m, &data);
        let (dq, _) = inverse_dynamics_derivatives(&m, &world, &zero, &x, &Vector6::zeros(), false);
        m.gravity = Vector3::zeros();
        for k in 0..m.nv() {
            let exact = dual_column(&m, &q, &zero, &x, k, true);
            assert!((dq.column(k) - &exact).amax() <= 1e-12 * (1.0 + exact.amax()));
        }
    }
}
