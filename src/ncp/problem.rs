//! The mixed nonlinear complementarity problem (MNCP) of one geometrically implicit step
//! (Xie & Chakraborty Sec. III-D and IV-B, eqs. (7)-(9), (13)-(19)).
//!
//! For free rigid bodies b = 1..nb with generalized velocity `ν_b = (ω_b, v_b)` (world frame,
//! the body origin at the centre of mass) and contact pairs c = 1..nc between a body F and a
//! body or fixed geometry G, the unknowns are
//!
//! ```text
//! z = [ν_1 … ν_nb | per pair: a1 (3), a2 (3), δ, p_n, p_t, p_o, p_r, σ, l1 (m), l2 (n)]
//! ```
//!
//! and the equations are
//!
//! 1. Newton–Euler with impulses, eq. (7), inertia and gyroscopic term at the start pose:
//!    `m (v⁺ − v) = δt m g + Σ P + p_app`,
//!    `I_W (ω⁺ − ω) = −δt ω × I_W ω + Σ (r × P + p_r n) + p_app,ω`,
//!    with `P = p_n n + p_t t + p_o o` the contact impulse at the ECP `a1`, `r = a1 − x⁺`
//!    (equal and opposite on G when G is a body);
//! 2. the kinematic map, eq. (8): `x⁺ = x + δt v⁺`, `q⁺ = normalize(q + δt ½ (0, ω⁺) ⊗ q)`,
//!    which places both bodies' inequalities at the end of the step;
//! 3. the closest-point/ECP conditions (K1)-(K3) and their pairs, [`crate::ncp::ecp`];
//! 4. the maximum-dissipation conditions of eq. (9), [`crate::ncp::friction`], with the
//!    sliding velocities of the ECP `W_tᵀν⁺ = tᵀ v_rel`, `W_oᵀν⁺ = oᵀ v_rel` and the relative
//!    spin `W_rᵀν⁺ = nᵀ(ω_F − ω_G)`.
//!
//! The residual is written once over `T: Scalar`; its Jacobian is assembled column by column
//! with `Dual64` (one forward pass per unknown), so every derivative is exact. The
//! complementarity pairs enter the square system [`MixedComplementarityProblem::fischer_burmeister_system`]
//! through [`crate::ncp::fischer_burmeister`].

#![allow(non_snake_case)]

use nalgebra::{DMatrix, DVector, Matrix3, Quaternion, Vector3};
use num_dual::Dual64;

use crate::math::{integrate_quaternion, rotation_from_quaternion, Pose};
use crate::ncp::ecp::{closest_point_conditions, contact_frame, EcpUnknowns, PairBody};
use crate::ncp::fischer_burmeister::{
    fischer_burmeister, smoothed_fischer_burmeister, smoothed_fischer_burmeister_gradient,
};
use crate::ncp::friction::FrictionEllipsoid;
use crate::ncp::inequalities::ConvexInequalities;
use crate::scalar::{lit, Scalar};

/// Number of unknowns of a pair besides its multipliers: a1, a2, δ, p_n, p_t, p_o, p_r, σ.
pub const PAIR_FIXED_UNKNOWNS: usize = 12;

/// A free rigid body at the start of the step.
#[derive(Clone, Debug)]
pub struct NcpBody {
    /// Mass m (kg).
    pub mass: f64,
    /// Rotational inertia about the centre of mass, body frame (kg·m²).
    pub inertia_B: Matrix3<f64>,
    /// Position x of the centre of mass (m, world).
    pub x: Vector3<f64>,
    /// Orientation q_WB (unit quaternion).
    pub q: Quaternion<f64>,
    /// Angular velocity ω (rad/s, world).
    pub w: Vector3<f64>,
    /// Velocity v of the centre of mass (m/s, world).
    pub v: Vector3<f64>,
    /// Applied impulse during the step `(angular N·m·s; linear N·s)`, world.
    pub applied: [Vector3<f64>; 2],
    /// Scales of the body's Newton–Euler rows: impulse `m g δt` (N·s) and length (m).
    pub scales: Scales,
}

/// Characteristic magnitudes that make the residual dimensionless, so that the merit
/// `½‖Φ‖²` and the tolerance weigh every row alike: an impulse `P = m g δt` (N·s), a length
/// `L` (m, the body size) and a speed `V = √(g L)` (m/s).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scales {
    /// Impulse P (N·s).
    pub impulse: f64,
    /// Length L (m).
    pub length: f64,
    /// Speed V (m/s).
    pub speed: f64,
}

impl Scales {
    /// The scales of a body of mass `m` (kg) and size `length` (m) under gravity `g` (m/s²;
    /// 9.81 is used when gravity is off) with step `dt` (s).
    pub fn new(mass: f64, length: f64, g: f64, dt: f64) -> Self {
        let g = if g > 0.0 { g } else { 9.81 };
        Scales {
            impulse: mass * g * dt,
            length,
            speed: (g * length).sqrt(),
        }
    }
}

/// Where a pair's geometry is attached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attachment {
    /// Fixed in the world at its pose `X_WG`.
    World,
    /// On NCP body `b` (index into [`MixedComplementarityProblem::bodies`]).
    Body(usize),
}

/// One body of a pair: its inequalities, attachment and placement.
#[derive(Clone, Debug)]
pub struct PairSide {
    /// The body description in its geometry frame.
    pub shape: ConvexInequalities,
    /// Which body carries it.
    pub attachment: Attachment,
    /// `X_BG` for a body, `X_WG` for the world.
    pub X_BG: Pose<f64>,
}

/// A contact pair: F is always on a body; G on a body or the world.
#[derive(Clone, Debug)]
pub struct NcpPair {
    /// Body F (inequalities f, point a1, multipliers l1).
    pub f: PairSide,
    /// Body G (inequalities g, point a2, multipliers l2).
    pub g: PairSide,
    /// Friction ellipsoid of the pair.
    pub friction: FrictionEllipsoid,
    /// Helper direction of the contact frame for this step ([`crate::ncp::ecp::frame_helper`]).
    pub helper: Vector3<f64>,
    /// Scales of the pair's rows (those of body F).
    pub scales: Scales,
}

impl NcpPair {
    /// Number of unknowns of this pair (12 + m + n).
    pub fn unknowns(&self) -> usize {
        PAIR_FIXED_UNKNOWNS + self.f.shape.len() + self.g.shape.len()
    }
}

/// Where a failed solve is furthest from a solution ([`MixedComplementarityProblem::worst_residual`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorstResidual {
    /// The momentum balance of body `b`.
    Body(usize),
    /// The contact conditions of pair `c`.
    Pair(usize),
}

/// The MNCP of one step.
#[derive(Clone, Debug)]
pub struct MixedComplementarityProblem {
    /// Time step δt (s).
    pub dt: f64,
    /// Gravity (m/s², world).
    pub gravity: Vector3<f64>,
    /// Bodies at the start of the step (nb).
    pub bodies: Vec<NcpBody>,
    /// Contact pairs (nc).
    pub pairs: Vec<NcpPair>,
}

/// A pair's unknowns read from `z` (views into it).
#[derive(Clone, Copy, Debug)]
pub struct PairSolution<'a, T> {
    /// a1 (m, world).
    pub a1: Vector3<T>,
    /// a2 (m, world).
    pub a2: Vector3<T>,
    /// Gap δ (m).
    pub gap: T,
    /// `(p_n, p_t, p_o, p_r)` (N·s, N·s, N·s, N·m·s).
    pub p: [T; 4],
    /// σ (m/s).
    pub sigma: T,
    /// l1 (m).
    pub l1: &'a [T],
    /// l2 (n).
    pub l2: &'a [T],
}

/// End-of-step kinematics of one body in T.
struct BodyEnd<T: Scalar> {
    w: Vector3<T>,
    v: Vector3<T>,
    x: Vector3<T>,
    R: Matrix3<T>,
}

impl MixedComplementarityProblem {
    /// Total number of unknowns `6 nb + Σ_c (12 + m_c + n_c)`.
    pub fn unknowns(&self) -> usize {
        6 * self.bodies.len() + self.pairs.iter().map(NcpPair::unknowns).sum::<usize>()
    }

    /// Offset of pair `c`'s unknowns in z.
    pub fn pair_offset(&self, c: usize) -> usize {
        6 * self.bodies.len() + self.pairs[..c].iter().map(NcpPair::unknowns).sum::<usize>()
    }

    /// Pair `c`'s unknowns in `z`.
    pub fn pair_solution<'a, T: Scalar>(&self, z: &'a [T], c: usize) -> PairSolution<'a, T> {
        let o = self.pair_offset(c);
        let m = self.pairs[c].f.shape.len();
        let n = self.pairs[c].g.shape.len();
        let v3 = |k: usize| Vector3::new(z[k], z[k + 1], z[k + 2]);
        PairSolution {
            a1: v3(o),
            a2: v3(o + 3),
            gap: z[o + 6],
            p: [z[o + 7], z[o + 8], z[o + 9], z[o + 10]],
            sigma: z[o + 11],
            l1: &z[o + 12..o + 12 + m],
            l2: &z[o + 12 + m..o + 12 + m + n],
        }
    }

    /// End-of-step pose of a pair side at `z` (eq. (8)).
    pub fn side_pose<T: Scalar>(&self, side: &PairSide, z: &[T]) -> Pose<T> {
        match side.attachment {
            Attachment::World => side.X_BG.cast(),
            Attachment::Body(b) => {
                let e = self.body_end(b, z);
                Pose { R: e.R, p: e.x }.compose(&side.X_BG.cast())
            }
        }
    }

    /// End-of-step pose `X_WB⁺` of body `b` at `z` (eq. (8)).
    pub fn body_pose<T: Scalar>(&self, b: usize, z: &[T]) -> Pose<T> {
        let e = self.body_end(b, z);
        Pose { R: e.R, p: e.x }
    }

    fn body_end<T: Scalar>(&self, b: usize, z: &[T]) -> BodyEnd<T> {
        let body = &self.bodies[b];
        let w = Vector3::new(z[6 * b], z[6 * b + 1], z[6 * b + 2]);
        let v = Vector3::new(z[6 * b + 3], z[6 * b + 4], z[6 * b + 5]);
        let dt: T = lit(self.dt);
        let q = integrate_quaternion(&Quaternion::from(body.q.coords.map(lit::<T>)), &w, dt);
        BodyEnd {
            x: body.x.map(lit::<T>) + v * dt,
            R: rotation_from_quaternion(&q),
            w,
            v,
        }
    }

    /// The MNCP at `z`: equality residuals (Newton–Euler, (K1)-(K3), eq. (9); 6 nb + 10 nc)
    /// and complementarity pairs `(a, b)`, `0 ≤ a ⊥ b ≥ 0` (Σ_c m_c + n_c + 2), each divided by
    /// its `Scales` (Newton–Euler by P and P L, (K2) and the inequality values by L, eq. (9)
    /// by P V, `(p_n, δ)` by `(P, L)`, `(σ, slack)` by `(V, P²)`), so all are dimensionless.
    pub fn residual<T: Scalar>(&self, z: &[T]) -> (Vec<T>, Vec<(T, T)>) {
        let dt: T = lit(self.dt);
        let ends: Vec<BodyEnd<T>> = (0..self.bodies.len())
            .map(|b| self.body_end(b, z))
            .collect();
        // Contact impulses (angular about the centre of mass; linear) accumulated per body.
        let mut impulses = vec![[Vector3::<T>::zeros(); 2]; self.bodies.len()];
        let mut equations = Vec::with_capacity(6 * self.bodies.len() + 10 * self.pairs.len());
        let mut pairs = Vec::new();
        let mut contact_equations = Vec::with_capacity(10 * self.pairs.len());
        for (c, pair) in self.pairs.iter().enumerate() {
            let s = self.pair_solution(z, c);
            let first_pair = pairs.len();
            let F = PairBody {
                shape: &pair.f.shape,
                X_WG: self.side_pose(&pair.f, z),
            };
            let G = PairBody {
                shape: &pair.g.shape,
                X_WG: self.side_pose(&pair.g, z),
            };
            let (k, n) = closest_point_conditions(
                &F,
                &G,
                &EcpUnknowns {
                    a1: s.a1,
                    a2: s.a2,
                    gap: s.gap,
                    l1: s.l1,
                    l2: s.l2,
                },
                &mut pairs,
            );
            let sc = pair.scales;
            let (P, L, V): (T, T, T) = (lit(sc.impulse), lit(sc.length), lit(sc.speed));
            // (K1) and (K3) are dimensionless, (K2) is a length.
            contact_equations.extend(k[..3].iter().copied());
            contact_equations.extend(k[3..6].iter().map(|x| *x / L));
            contact_equations.push(k[6]);
            for (_, b) in pairs[first_pair..].iter_mut() {
                *b /= L;
            }
            let (t, o) = contact_frame(&n, &pair.helper);
            // Relative velocity of the ECP on F with respect to G, and relative spin.
            let point_velocity = |a: Attachment| match a {
                Attachment::World => (Vector3::zeros(), Vector3::zeros()),
                Attachment::Body(b) => {
                    let e = &ends[b];
                    (e.v + e.w.cross(&(s.a1 - e.x)), e.w)
                }
            };
            let (vf, wf) = point_velocity(pair.f.attachment);
            let (vg, wg) = point_velocity(pair.g.attachment);
            let v_rel = vf - vg;
            let v = [t.dot(&v_rel), o.dot(&v_rel), n.dot(&(wf - wg))];
            let friction = pair.friction.maximum_dissipation(&s.p, &v, s.sigma);
            contact_equations.extend(friction.iter().map(|x| *x / (P * V)));
            pairs.push((s.p[0] / P, s.gap / L));
            pairs.push((
                s.sigma / V,
                pair.friction.limit_surface_slack(&s.p) / (P * P),
            ));
            // Wrench at the ECP (eq. (2)): on F, and the opposite on G.
            let P = n * s.p[0] + t * s.p[1] + o * s.p[2];
            let moment = n * s.p[3];
            for (a, sign) in [
                (pair.f.attachment, T::one()),
                (pair.g.attachment, -T::one()),
            ] {
                if let Attachment::Body(b) = a {
                    let r = s.a1 - ends[b].x;
                    impulses[b][0] += (r.cross(&P) + moment) * sign;
                    impulses[b][1] += P * sign;
                }
            }
        }
        for (b, body) in self.bodies.iter().enumerate() {
            let e = &ends[b];
            let m: T = lit(body.mass);
            let R0 = rotation_from_quaternion(&body.q);
            let I_W = (R0 * body.inertia_B * R0.transpose()).map(lit::<T>);
            let w0 = body.w.map(lit::<T>);
            let angular = I_W * (e.w - w0) + w0.cross(&(I_W * w0)) * dt
                - impulses[b][0]
                - body.applied[0].map(lit::<T>);
            let linear = (e.v - body.v.map(lit::<T>)) * m
                - self.gravity.map(lit::<T>) * (m * dt)
                - impulses[b][1]
                - body.applied[1].map(lit::<T>);
            let P: T = lit(body.scales.impulse);
            let L: T = lit(body.scales.length);
            equations.extend(angular.iter().map(|x| *x / (P * L)));
            equations.extend(linear.iter().map(|x| *x / P));
        }
        equations.extend(contact_equations);
        (equations, pairs)
    }

    /// Where `|Φ(z)|` is largest: one body's momentum balance (its six rows) or one pair's
    /// contact conditions (its closest-point, friction and complementarity rows). Names where
    /// a failed solve is furthest from a solution; `None` when `z` leaves nothing finite.
    pub fn worst_residual(&self, z: &[f64]) -> Option<WorstResidual> {
        let (equations, complementarity) = self.residual(z);
        let nb = self.bodies.len();
        let np = self.pairs.len();
        let contact_rows = (equations.len() - 6 * nb).checked_div(np).unwrap_or(0);
        let amax = |rows: &[f64]| rows.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        let mut candidates: Vec<(f64, WorstResidual)> = (0..nb)
            .map(|b| (amax(&equations[6 * b..6 * b + 6]), WorstResidual::Body(b)))
            .collect();
        let mut first = 0;
        for (c, pair) in self.pairs.iter().enumerate() {
            let o = 6 * nb + contact_rows * c;
            let count = pair.f.shape.len() + pair.g.shape.len() + 2;
            let fb = complementarity[first..first + count]
                .iter()
                .fold(0.0_f64, |m, (a, b)| m.max(fischer_burmeister(*a, *b).abs()));
            first += count;
            candidates.push((
                amax(&equations[o..o + contact_rows]).max(fb),
                WorstResidual::Pair(c),
            ));
        }
        debug_assert_eq!(
            first,
            complementarity.len(),
            "invariant: m + n + 2 per pair"
        );
        candidates
            .into_iter()
            .filter(|(r, _)| r.is_finite())
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, w)| w)
    }

    /// The square semismooth system `Φ(z) = [equations; φ_FB(a_k, b_k)]` and an element of its
    /// generalized Jacobian (`unknowns × unknowns`), by one `Dual64` pass per column.
    pub fn fischer_burmeister_system(&self, z: &DVector<f64>) -> (DVector<f64>, DMatrix<f64>) {
        self.smoothed_fischer_burmeister_system(z, 0.0)
    }

    /// [`Self::fischer_burmeister_system`] with each pair's φ_FB replaced by the smoothed
    /// `φ_ε(a, b) = a + b − √(a² + b² + 2ε²)` (Kanzow 1996; the exact system at ε = 0).
    pub fn smoothed_fischer_burmeister_system(
        &self,
        z: &DVector<f64>,
        smoothing: f64,
    ) -> (DVector<f64>, DMatrix<f64>) {
        let size = self.unknowns();
        let (eqs, pairs) = self.residual(z.as_slice());
        let ne = eqs.len();
        debug_assert_eq!(ne + pairs.len(), size, "invariant: the MNCP is square");
        let phi = DVector::from_iterator(
            size,
            eqs.iter().copied().chain(
                pairs
                    .iter()
                    .map(|(a, b)| smoothed_fischer_burmeister(*a, *b, smoothing)),
            ),
        );
        let grads: Vec<(f64, f64)> = pairs
            .iter()
            .map(|(a, b)| smoothed_fischer_burmeister_gradient(*a, *b, smoothing))
            .collect();
        let mut J = DMatrix::zeros(size, size);
        let mut zd: Vec<Dual64> = z.iter().map(|x| Dual64::from(*x)).collect();
        for j in 0..size {
            zd[j].eps = 1.0;
            let (de, dp) = self.residual(&zd);
            zd[j].eps = 0.0;
            for (i, e) in de.iter().enumerate() {
                J[(i, j)] = e.eps;
            }
            for (k, ((a, b), (ga, gb))) in dp.iter().zip(&grads).enumerate() {
                J[(ne + k, j)] = ga * a.eps + gb * b.eps;
            }
        }
        (phi, J)
    }
}
