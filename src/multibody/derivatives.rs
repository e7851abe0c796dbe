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
//! parent's pose). Eq. (2) is `ξ × ᵒS_j[m]` for a translational n and zero for a rotational
//! one, which is what a joint split in two stages gives:
//!
//! ```text
//!   free = translations (0, a_m), then rotations about the body origin;
//!   planar = translations in the plane, then the rotation;   other joints: one stage,   (3)
//! ```
//!
//! each stage's columns fixed in the frame of the stage before it. With the stages, (1) has no
//! bias term (`ᵒc_i` is `V_T × u_T + V_i × u_R − V_i × (u_T + u_R)` for the stage twists
//! `u_T`, `u_R` and the twist `V_T` after the translations), and the subtree of a column's stage
//! `s` (twist `V_s`, acceleration `A_s`, the stage above it `V_λ`) moves rigidly with
//! `ξ = ᵒS_k`. Every body b below `s` then has (Carpentier & Mansard 2018, Sec. III; the
//! rigid motion of `ᵒI_b`, `V_b`, `A_b`)
//!
//! ```text
//!   ∂V_b/∂q_k = ξ × (V_b − V_s),   ∂A_b/∂q_k = ξ × (A_b − A_s) − w × (V_b − V_s),  w = ξ × V_s,
//!   ∂V_b/∂v_k = ξ,                 ∂A_b/∂v_k = ξ × V_b + e,   e = (V_s + V_λ) × ξ,          (4)
//! ```
//!
//! and summing `δf_b` over the subtree of a body r below `s` takes only its composites
//! `I^C_r = Σ ᵒI_b`, `h^C_r = Σ ᵒI_b V_b`, `F_r` and `D^C_r = Σ (ᵒI_b (V_b×) + (V_b×)ᵀ ᵒI_b)`:
//!
//! ```text
//!   ∂F_r/∂q_k = ξ ×* F_r + Φ_r(y, w),   y = w × V_s − ξ × A_s,
//!   ∂F_r/∂v_k = Φ_r(e, −ξ),             Φ_r(y, w) = I^C_r y + D^C_r w − w ×* h^C_r.           (5)
//! ```
//!
//! A row l at or above `s` sees `ᵒS_lᵀ ∂F_s` (its column does not move); a row l of a stage
//! below `s` moves with the subtree, and `δᵒS_lᵀ F_r + ᵒS_lᵀ ξ ×* F_r = 0` leaves
//!
//! ```text
//!   ∂τ_l/∂q_k = P_y · y + P_w · w,   ∂τ_l/∂v_k = P_y · e − P_w · ξ,
//!   P_y = I^C_r ᵒS_l,   P_w = D^C_r ᵒS_l + ᵒS_l ×* h^C_r,                                      (6)
//! ```
//!
//! so the whole of `∂τ/∂q` and `∂τ/∂v` takes one forward pass, one backward pass of composites
//! and, per column, a few 6 × 6 products and a dot product per row of its chain and subtree.
//! Everything here is checked against dual numbers in this module's tests and in
//! `tests/state_derivatives.rs`.
#![allow(non_snake_case)]

use std::ops::Range;

use nalgebra::{DMatrix, DVector, Matrix3, Vector3, Vector6};

pub use crate::math::spatial::spatial;
use crate::math::spatial::{
    angular as ang, force_cross, linear as lin, motion_about, motion_cross, OriginInertia,
};
use crate::math::{skew, Pose, SpatialInertia};
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

/// Velocity indices of `joint`.
fn indices(joint: &Joint<f64>) -> Range<usize> {
    joint.v_start..joint.v_start + joint.kind.nv()
}

/// A body's spatial inertia in world axes about the origin of a [`WorldKinematics`], kept as
/// mass, centre of mass and rotational inertia (the 6×6 matrix of RBDA eq. 2.63,
/// `[[I_c + m ĉ ĉᵀ, m ĉ], [m ĉᵀ, m 1]]`, is never formed): moving the origin only moves `c`.
#[derive(Clone, Copy, Debug)]
pub struct WorldInertia {
    /// Mass (kg).
    pub mass: f64,
    /// Centre of mass relative to the origin (m, world axes).
    pub c: Vector3<f64>,
    /// Rotational inertia about the centre of mass, world axes (kg·m²).
    pub I_c: Matrix3<f64>,
}

/// World-frame kinematics at one configuration: the inputs of eqs. (1)-(2).
#[derive(Clone, Debug, Default)]
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
    /// World-frame quantities from `data` (after [`crate::multibody::forward_kinematics`]),
    /// in the buffers of `self`.
    pub fn set_from(
        &mut self,
        model: &MultibodyModel<f64>,
        data: &crate::multibody::kinematics::MultibodyData<f64>,
    ) {
        self.set(model, &data.X_WB, &data.S);
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
        let mut world = Self::default();
        world.set(model, &X_WB, &S_B);
        (world, X_WB)
    }

    /// World-frame quantities from body poses and body-frame subspaces, in the buffers of
    /// `self`.
    fn set(&mut self, model: &MultibodyModel<f64>, X_WB: &[Pose<f64>], S_B: &[Vec<Vector6<f64>>]) {
        let nb = model.bodies.len();
        let WorldKinematics {
            S,
            p,
            I,
            coordinate,
            subtree,
        } = self;
        // Every entry of `S` and `coordinate` is written below (each velocity index belongs
        // to one joint): sized only when they are not.
        if S.len() != model.nv() || coordinate.len() != model.nv() {
            *S = vec![Vector6::zeros(); model.nv()];
            *coordinate = vec![(0, 0); model.nv()];
        }
        I.clear();
        p.clear();
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
        subtree.clear();
        subtree.resize(nb * nb, false);
        for j in 0..nb {
            subtree[j * nb + j] = true;
            for i in j + 1..nb {
                subtree[j * nb + i] = model.joints[i].parent.is_some_and(|p| subtree[j * nb + p]);
            }
        }
    }

    /// Whether body i is in the subtree of body j.
    pub fn in_subtree(&self, j: usize, i: usize) -> bool {
        self.subtree[j * self.p.len() + i]
    }

    /// The world twist `ξ_k = ᵒS_j[n]` of velocity (or tangent) direction `k`.
    pub fn twist(&self, k: usize) -> Vector6<f64> {
        self.S[k]
    }

    /// Joint twists `ᵒS_i x_i` of every joint for generalized velocities `x` (nv), into `u` (its
    /// buffer reused).
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

    /// Body twists `V_i = V_λ + ᵒS_i x_i` (world) for the joint twists `u`, into `V` (its buffer
    /// reused).
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

/// The two stages of a joint's velocity columns (local indices), eq. (3): the translations
/// that move the body origin, then the columns that do not (rotations about it, or a
/// revolute's or prismatic's single column).
fn stages(kind: &JointKind) -> (Range<usize>, Range<usize>) {
    match kind {
        JointKind::Free => (3..6, 0..3),
        JointKind::Planar => (0..2, 2..3),
        other => (0..0, 0..other.nv()),
    }
}

/// Velocity indices of `joint`'s stage `local` ([`stages`]).
fn stage_indices(joint: &Joint<f64>, local: Range<usize>) -> Range<usize> {
    joint.v_start + local.start..joint.v_start + local.end
}

/// `∂τ/∂q` (tangent) and, when asked, `∂τ/∂v` (both nv × nv) of inverse dynamics
/// `τ = ID(q, v, a)` (eq. (1)) at the configuration of `world`, with world acceleration
/// `a_root` of the roots' parent: `(0, −g)` for the dynamics, zero for `∂(M x)/∂q` (then
/// `v = 0`, `a = x`). Eqs. (4)-(6): one forward pass, one backward pass of composites, and
/// per column `k` the composites of its body applied to its variations, dotted with the columns
/// of its chain and its subtree.
///
/// Each tree is differentiated about its root body's origin: the result does not depend on the
/// origin, but the round-off of the terms that cancel (a free body's inertia about a distant
/// origin) does.
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
    let mut scratch = RneaScratch::default();
    let input = RneaInput { v, a, a_root };
    inverse_dynamics_derivatives_into(model, world, &input, &mut scratch, &mut dq, dv.as_mut());
    (dq, dv)
}

/// The point [`inverse_dynamics_derivatives`] differentiates at: velocities `v` (nv),
/// accelerations `a` (nv) and the world acceleration `a_root` of the roots' parent.
pub struct RneaInput<'a> {
    /// Generalized velocities (nv).
    pub v: &'a DVector<f64>,
    /// Generalized accelerations (nv).
    pub a: &'a DVector<f64>,
    /// Spatial acceleration of the roots' parent (world, about the origin).
    pub a_root: &'a Vector6<f64>,
}

/// Buffers of [`inverse_dynamics_derivatives_into`], kept from one call to the next.
#[derive(Debug, Default)]
pub struct RneaScratch {
    /// Each tree's origin per body ([`forward_backward`]).
    origin: Vec<Vector3<f64>>,
    /// The world subspace columns about their tree's origin (nv).
    S: Vec<Vector6<f64>>,
    bodies: Vec<BodyPass>,
    /// Eq. (6)'s row vectors of each column (nv).
    P: Vec<(Vector6<f64>, Vector6<f64>)>,
    /// The rows of a body's columns from eqs. (4)-(5) (its joint's and its ancestors'
    /// velocity indices) and from eq. (6) (those of the bodies strictly below it).
    above: Vec<usize>,
    below: Vec<usize>,
}

/// [`inverse_dynamics_derivatives`] into `dq` and, when given, `dv` (nv × nv each, written
/// over), computed in the buffers of `scratch`: the same numbers, without allocating once the
/// buffers have their sizes.
pub fn inverse_dynamics_derivatives_into(
    model: &MultibodyModel<f64>,
    world: &WorldKinematics,
    input: &RneaInput<'_>,
    scratch: &mut RneaScratch,
    dq: &mut DMatrix<f64>,
    mut dv: Option<&mut DMatrix<f64>>,
) {
    let nv = model.nv();
    let zeroed = |m: &mut DMatrix<f64>| {
        if m.shape() == (nv, nv) {
            m.as_mut_slice().fill(0.0);
        } else {
            *m = DMatrix::zeros(nv, nv);
        }
    };
    zeroed(dq);
    if let Some(dv) = dv.as_mut() {
        zeroed(dv);
    }
    forward_backward(model, world, input, scratch);
    let RneaScratch {
        S,
        bodies,
        P,
        above,
        below,
        ..
    } = scratch;
    // Eq. (6)'s row vectors of each column l: `P_y = I^C S_l`, `P_w = D^C S_l + S_l ×* h^C`.
    P.clear();
    P.resize(nv, (Vector6::zeros(), Vector6::zeros()));
    for (joint, body) in model.joints.iter().zip(bodies.iter()) {
        for l in indices(joint) {
            P[l] = (
                body.IC.apply(&S[l]),
                body.D_apply(&S[l]) + force_cross(&S[l], &body.hC),
            );
        }
    }
    for (b, (joint, body)) in model.joints.iter().zip(bodies.iter()).enumerate() {
        world.chain_into(model, b, above);
        below.clear();
        for (i, joint) in model.joints.iter().enumerate().skip(b + 1) {
            if world.in_subtree(b, i) {
                below.extend(indices(joint));
            }
        }
        let (translation, rest) = stages(&joint.kind);
        let rest = stage_indices(joint, rest);
        let stage_list = [
            (
                stage_indices(joint, translation),
                body.V_T,
                body.A_T,
                body.V_parent,
            ),
            (rest.clone(), body.V, body.A, body.V_T),
        ];
        for (stage, (columns, V_s, A_s, V_above)) in stage_list.into_iter().enumerate() {
            // A translation's rows below it: the rotations of its own joint.
            let own_below = if stage == 0 { rest.clone() } else { 0..0 };
            for k in columns {
                let xi = S[k];
                // Eqs. (4)-(5): the variations along q_k and v_k.
                let w = motion_cross(&xi, &V_s);
                let y = motion_cross(&w, &V_s) - motion_cross(&xi, &A_s);
                let e = motion_cross(&(V_s + V_above), &xi);
                let Q = force_cross(&xi, &body.FC) + body.phi(&y, &w);
                let R = body.phi(&e, &(-xi));
                // Rows at and above k's stage (their columns do not move along q_k), then
                // those below it, eq. (6).
                let rows_above = above.iter().filter(|l| !own_below.contains(l));
                let rows_below = own_below.clone().chain(below.iter().copied());
                let column = &mut dq.as_mut_slice()[k * nv..(k + 1) * nv];
                for &l in rows_above.clone() {
                    column[l] = S[l].dot(&Q);
                }
                for l in rows_below.clone() {
                    let (P_y, P_w) = &P[l];
                    column[l] = P_y.dot(&y) + P_w.dot(&w);
                }
                if let Some(dv) = dv.as_mut() {
                    let column = &mut dv.as_mut_slice()[k * nv..(k + 1) * nv];
                    for &l in rows_above {
                        column[l] = S[l].dot(&R);
                    }
                    for l in rows_below {
                        let (P_y, P_w) = &P[l];
                        column[l] = P_y.dot(&e) - P_w.dot(&xi);
                    }
                }
            }
        }
    }
}

/// A body's quantities of eqs. (1) and (3)-(6), its tree about its root's origin.
#[derive(Debug)]
struct BodyPass {
    /// Twist of the body's parent (zero at a root).
    V_parent: Vector6<f64>,
    /// Twist and acceleration after the translation stage.
    V_T: Vector6<f64>,
    A_T: Vector6<f64>,
    /// Twist and acceleration of the body.
    V: Vector6<f64>,
    A: Vector6<f64>,
    /// Composite inertia `I^C`, momentum `h^C = Σ I V` and force `F` of the subtree.
    IC: OriginInertia<f64>,
    hC: Vector6<f64>,
    FC: Vector6<f64>,
    /// `D^C = Σ (I (V×) + (V×)ᵀ I)` by blocks: with `I = [[I_o, [h]×], [[h]×ᵀ, m]]` and
    /// `V = (ω, v)`, a body's `D` is `[[D_11, [d]×], [[d]×ᵀ, 0]]` with
    /// `D_11 = I_o [ω]× − [ω]× I_o + [h]× [v]× + [v]× [h]×` and `d = h × ω − m v`.
    D_11: Matrix3<f64>,
    d: Vector3<f64>,
}

impl BodyPass {
    /// `D^C w` for `w = (ω, v)`: `(D_11 ω + d × v, ω × d)`.
    fn D_apply(&self, w: &Vector6<f64>) -> Vector6<f64> {
        let (wa, wl) = (ang(w), lin(w));
        spatial(self.D_11 * wa + self.d.cross(&wl), wa.cross(&self.d))
    }

    /// `Φ(y, w) = I^C y + D^C w − w ×* h^C`, eq. (5).
    fn phi(&self, y: &Vector6<f64>, w: &Vector6<f64>) -> Vector6<f64> {
        self.IC.apply(y) + self.D_apply(w) - force_cross(w, &self.hC)
    }
}

/// The world subspace columns about each tree's root origin, and every body's quantities:
/// eq. (1) by stages (eq. (3)) forward, the composites backward, into `scratch`'s `S` and
/// `bodies`.
fn forward_backward(
    model: &MultibodyModel<f64>,
    world: &WorldKinematics,
    input: &RneaInput<'_>,
    scratch: &mut RneaScratch,
) {
    let nb = model.bodies.len();
    let RneaInput { v, a, a_root } = *input;
    let RneaScratch {
        origin, S, bodies, ..
    } = scratch;
    origin.clear();
    S.clear();
    bodies.clear();
    for (i, joint) in model.joints.iter().enumerate() {
        let o = joint.parent.map_or(world.p[i], |p| origin[p]);
        origin.push(o);
        S.extend(indices(joint).map(|l| motion_about(&world.S[l], &o)));
        let (V_p, A_p) = joint.parent.map_or_else(
            || {
                (
                    Vector6::zeros(),
                    spatial(ang(a_root), lin(a_root) + ang(a_root).cross(&o)),
                )
            },
            |p| (bodies[p].V, bodies[p].A),
        );
        let sum = |x: &DVector<f64>, columns: Range<usize>| {
            columns.fold(Vector6::zeros(), |acc, l| acc + S[l] * x[l])
        };
        let (translation, rest) = stages(&joint.kind);
        let (translation, rest) = (
            stage_indices(joint, translation),
            stage_indices(joint, rest),
        );
        let u_T = sum(v, translation.clone());
        let V_T = V_p + u_T;
        let A_T = A_p + sum(a, translation) + motion_cross(&V_T, &u_T);
        let u = sum(v, rest.clone());
        let V = V_T + u;
        let A = A_T + sum(a, rest) + motion_cross(&V, &u);
        let inertia = &world.I[i];
        let I = OriginInertia::from(&SpatialInertia {
            mass: inertia.mass,
            com: inertia.c - o,
            inertia_com: inertia.I_c,
        });
        let h = I.apply(&V);
        let (omega, vel) = (ang(&V), lin(&V));
        let M = I.I_o * skew(&omega);
        let N = vel * I.h.transpose();
        bodies.push(BodyPass {
            V_parent: V_p,
            V_T,
            A_T,
            V,
            A,
            FC: I.apply(&A) + force_cross(&V, &h),
            hC: h,
            D_11: M + M.transpose() + N + N.transpose()
                - Matrix3::identity() * (2.0 * I.h.dot(&vel)),
            d: I.h.cross(&omega) - vel * I.mass,
            IC: I,
        });
    }
    for i in (0..nb).rev() {
        if let Some(p) = model.joints[i].parent {
            let (IC, hC, FC, D_11, d) = {
                let c = &bodies[i];
                (c.IC, c.hC, c.FC, c.D_11, c.d)
            };
            let parent = &mut bodies[p];
            parent.IC += IC;
            parent.hC += hC;
            parent.FC += FC;
            parent.D_11 += D_11;
            parent.d += d;
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
    /// with a revolute child, a free body hung from the revolute link, and a ball joint below
    /// the planar root's child with a body welded to it.
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
        let b5 = m
            .add_body(
                "p1",
                link(0.4, [0.0, 0.1, 0.0]),
                JointSpec {
                    parent: Some(b4),
                    X_PJ: at(0.3, 0.0, 0.0),
                    ..JointSpec::new(JointKind::Revolute { axis: Vector3::x() })
                },
            )
            .unwrap();
        let b6 = m
            .add_body(
                "socket",
                link(0.6, [0.02, -0.03, 0.1]),
                JointSpec {
                    parent: Some(b5),
                    X_PJ: at(0.0, 0.2, -0.1),
                    ..JointSpec::new(JointKind::Ball)
                },
            )
            .unwrap();
        m.add_body(
            "welded",
            link(0.2, [0.1, 0.0, 0.0]),
            JointSpec {
                parent: Some(b6),
                X_PJ: at(0.0, 0.0, 0.3),
                ..JointSpec::new(JointKind::Fixed)
            },
        )
        .unwrap();
        m
    }

    fn state(m: &MultibodyModel<f64>) -> (DVector<f64>, DVector<f64>, DVector<f64>) {
        let mut q = m.neutral_configuration();
        let r = nalgebra::UnitQuaternion::from_euler_angles(0.3, -0.5, 1.0);
        let s = nalgebra::UnitQuaternion::from_euler_angles(-0.2, 0.4, 0.1);
        let t = nalgebra::UnitQuaternion::from_euler_angles(0.5, 0.3, -0.7);
        q.copy_from_slice(&[
            0.1, -0.2, 0.3, r.w, r.i, r.j, r.k, 0.7, 0.05, 0.2, 0.1, -0.3, s.w, s.i, s.j, s.k, 0.2,
            0.1, 0.5, -0.6, t.w, t.i, t.j, t.k,
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
        let mut world = WorldKinematics::default();
        world.set_from(&m, &data);
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
        let mut world = WorldKinematics::default();
        world.set_from(&m, &data);
        let (dq, _) = inverse_dynamics_derivatives(&m, &world, &zero, &x, &Vector6::zeros(), false);
        m.gravity = Vector3::zeros();
        for k in 0..m.nv() {
            let exact = dual_column(&m, &q, &zero, &x, k, true);
            assert!((dq.column(k) - &exact).amax() <= 1e-12 * (1.0 + exact.amax()));
        }
    }
}
