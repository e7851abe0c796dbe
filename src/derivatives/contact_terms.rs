//! The contact part of `∂r/∂θ` for the state directions, analytically in f64 (ICF ext.
//! Sec. X-B; DESIGN "Derivatives").
//!
//! Contact i contributes `r_c = −J_iᵀ γ_i(J_i v + b_i; x0_i, v_n0_i, w_i)` to the residual,
//! with `J_i = R_WCᵀ J_W(p_WC)` (`J_W = J_B(p) − J_A(p)`, the world point Jacobians),
//! `x0 = −φ0`, `v_n0 = n̂ · (J_W v0 + b_W(t))` and `w = ‖J A⁻¹ Jᵀ‖_F / 3` (SAP and regularized
//! Lagged only). Writing `f = R_WC γ` and the world spatial force `F = (p × f, f)` on B (−F on
//! A), `J_iᵀ γ = Σ_X s_X ᵒJ_Xᵀ F` with `s_B = 1`, `s_A = −1` and `ᵒJ_X` body X's world
//! Jacobian (columns `ξ_l`, the world twists of its ancestors' coordinates). Along a tangent
//! direction k of `q0`:
//!
//! ```text
//!   δ(Jᵀγ)_l = Σ_X s_X (δ_k ξ_l · F + ξ_l · δF),   δF = (δp × f + p × δf, δf),
//!   δf = δR γ + R δγ,
//!   δγ = −G (δR ᵀ J_W v + Rᵀ δ(J_W v) + δb) − γ_x0 δφ + γ_vn0 δv_n0 + γ_w δw,        (1)
//!   δ(J_W x) = Σ_X s_X (lin δV_X + ang δV_X × p + ang V_X × δp),  V_X = ᵒJ_X x,
//! ```
//!
//! with `δ_k ξ_l` and `δV_X` the world-frame variations of
//! [`crate::multibody::derivatives`], `G = ∂²ℓ/∂v_c²` (so `∂γ/∂v_c = −G`), and
//! `(γ_x0, γ_vn0, γ_w)` the partials of the impulse in the potential's construction, from one
//! evaluation of the potential in a width-3 dual. The local derivatives of φ, `R_WC` and
//! `p_WC` with respect to the twists of the two geometries come from one evaluation of
//! [`feature_distance`] in a width-6 dual per tree body in contact (its geometry's pose moved
//! by `exp(ε ξ̂)`), then chained through the bodies' world Jacobians. Twists and forces are
//! taken about the contact point, which keeps the lever arms of cancelling terms short. For SAP and regularized Lagged,
//! `δw = W : δW / (9 w)` with `δW = δJ Y + (δJ Y)ᵀ − Yᵀ δA Y`, `Y = A⁻¹ Jᵀ`, and `δA y` from
//! [`inverse_dynamics_derivatives`] at zero velocity and gravity with acceleration `y`.
//! Along `v0` only `v_n0` moves (Lagged): `∂v_n0/∂v0 = (J_i)_n`.
#![allow(non_snake_case)]

use nalgebra::{
    Const, DMatrix, DVector, Dyn, Matrix3, Matrix3xX, Matrix6xX, MatrixXx3, OMatrix, SMatrix,
    SVector, Vector3, Vector6, U1,
};
use num_dual::{Derivative, DualSVec64};

use crate::contact::{potential, Approximation, ContactPotential, ContactState};
use crate::error::{Error, Result};
use crate::geometry::distance::feature_distance;
use crate::math::{skew, Pose};
use crate::multibody::derivatives::{inverse_dynamics_derivatives, spatial, WorldKinematics};
use crate::multibody::model::{BodyId, MultibodyModel};
use crate::step::{contact_frame, contact_point, ContactFeature, ContactPoint, Simulator};

/// Width of the geometric dual: the twist of one geometry.
const GEOMETRY_WIDTH: usize = 6;

type GeometryDual = DualSVec64<GEOMETRY_WIDTH>;
type PotentialDual = DualSVec64<3>;

/// Rows of the local geometric derivative (φ, `R_WC` column-major, `p_WC`) with respect to
/// one geometry's twist.
type LocalDerivative = SMatrix<f64, 13, GEOMETRY_WIDTH>;

/// What the contact terms need of the step: the model at `q0`, the velocities, the times.
pub struct ContactInputs<'a> {
    /// The simulator (model, geometries, settings).
    pub sim: &'a Simulator,
    /// World-frame kinematics at `q0`.
    pub world: &'a WorldKinematics,
    /// Geometry poses at `q0`.
    pub X_WG: &'a [Pose<f64>],
    /// The origin `o` (world) that `world`'s twists and forces are taken about
    /// ([`WorldKinematics::about_into`]); the contact point keeps the lever arms short.
    pub origin: Vector3<f64>,
    /// `A = M + δt D` at `q0`.
    pub A: &'a DMatrix<f64>,
    /// Converged velocities.
    pub v: &'a DVector<f64>,
    /// Start velocities.
    pub v0: &'a DVector<f64>,
    /// Time at the start of the step (s).
    pub t: f64,
}

/// Body twists and joint twists (world) of the whole tree for one generalized velocity.
#[derive(Default)]
struct Twists {
    body: Vec<Vector6<f64>>,
    joint: Vec<Vector6<f64>>,
}

impl Twists {
    fn new(model: &MultibodyModel<f64>, world: &WorldKinematics, x: &DVector<f64>) -> Self {
        let mut twists = Twists::default();
        twists.fill(model, world, x);
        twists
    }

    /// The twists for `x`, in the buffers of `self`.
    fn fill(&mut self, model: &MultibodyModel<f64>, world: &WorldKinematics, x: &DVector<f64>) {
        world.joint_twists_into(model, x, &mut self.joint);
        world.body_twists_into(model, &self.joint, &mut self.body);
    }
}

/// Buffers of [`add_contact_columns`], reused across the contacts of a step: the twists for
/// `v` and `v0`, the chains of the two sides, the velocity indices they touch.
#[derive(Default)]
pub struct ContactScratch {
    tv: Twists,
    tv0: Twists,
    /// (sign, chain) of each side of the contact ([`sides`]); the first `n_sides` are current.
    chains: [(f64, Vec<usize>); 2],
    n_sides: usize,
    touched: Vec<usize>,
}

impl ContactScratch {
    /// The chains of the sides of `c`, from the bodies' joints to their roots.
    fn set_chains(
        &mut self,
        model: &MultibodyModel<f64>,
        world: &WorldKinematics,
        c: &ContactPoint<f64>,
    ) {
        self.n_sides = 0;
        for (s, i) in sides(c) {
            let (sign, chain) = &mut self.chains[self.n_sides];
            *sign = s;
            world.chain_into(model, i, chain);
            self.n_sides += 1;
        }
    }
}

/// The two sides of a contact: (sign, tree body) for A (−1) and B (+1), tree bodies only.
fn sides(c: &ContactPoint<f64>) -> impl Iterator<Item = (f64, usize)> {
    [(-1.0, c.body_a), (1.0, c.body_b)]
        .into_iter()
        .filter_map(|(s, b)| match b {
            BodyId::Body(i) => Some((s, i)),
            _ => None,
        })
}

/// Velocity (world) at `p` of a prescribed body at `t` and its angular velocity; zero for
/// other bodies.
fn prescribed_motion(
    model: &MultibodyModel<f64>,
    body: BodyId,
    p: &Vector3<f64>,
    t: f64,
) -> (Vector3<f64>, Vector3<f64>) {
    match body {
        BodyId::Prescribed(i) => {
            let (w, v) = model.prescribed[i].velocity(t);
            (v + w.cross(&(p - model.prescribed[i].pose(t).p)), w)
        }
        _ => (Vector3::zeros(), Vector3::zeros()),
    }
}

/// `J x` for a contact Jacobian.
fn apply(J: &Matrix3xX<f64>, x: &DVector<f64>) -> Vector3<f64> {
    Vector3::from_iterator((J * x).iter().copied())
}

/// Relative velocity of B to A at `p` from prescribed motion, and relative angular velocity.
fn prescribed_relative(
    model: &MultibodyModel<f64>,
    c: &ContactPoint<f64>,
    t: f64,
) -> (Vector3<f64>, Vector3<f64>) {
    let (vb, wb) = prescribed_motion(model, c.body_b, &c.p_WC, t);
    let (va, wa) = prescribed_motion(model, c.body_a, &c.p_WC, t);
    (vb - va, wb - wa)
}

/// A pose at `ε = 0` with its derivatives along the twist `ε ξ` about `o` (first order:
/// `R + ε ω̂ R`, `p + ε (v + ω × (p − o))`) seeded when `moving`, slots `(ω, v)`; constant
/// otherwise.
fn seeded_pose(X: &Pose<f64>, o: &Vector3<f64>, moving: bool) -> Pose<GeometryDual> {
    if !moving {
        return Pose {
            R: X.R.map(GeometryDual::from_re),
            p: X.p.map(GeometryDual::from_re),
        };
    }
    let dR = [0, 1, 2].map(|k| skew(&Vector3::ith(k, 1.0)) * X.R);
    let r = X.p - o;
    let dp = [0, 1, 2].map(|k| Vector3::ith(k, 1.0).cross(&r));
    let dual = |re: f64, eps: [f64; GEOMETRY_WIDTH]| {
        GeometryDual::new(re, Derivative::some(SVector::from(eps)))
    };
    Pose {
        R: Matrix3::from_fn(|i, j| {
            dual(
                X.R[(i, j)],
                [dR[0][(i, j)], dR[1][(i, j)], dR[2][(i, j)], 0.0, 0.0, 0.0],
            )
        }),
        p: Vector3::from_fn(|i, _| {
            let mut eps = [dp[0][i], dp[1][i], dp[2][i], 0.0, 0.0, 0.0];
            eps[3 + i] = 1.0;
            dual(X.p[i], eps)
        }),
    }
}

/// Derivatives of φ, `R_WC` and `p_WC` with respect to the twist (about `o`) of geometry A
/// (`moving_a`) or B, one dual evaluation of the feature pair per tree body in contact.
fn local_derivative(
    inputs: &ContactInputs<'_>,
    c: &ContactPoint<f64>,
    moving_a: bool,
) -> Result<LocalDerivative> {
    let geometries = inputs.sim.geometries();
    let (a, b) = (c.geometry_a, c.geometry_b);
    let ContactFeature::Point(feature) = &c.feature else {
        return Err(Error::invalid(
            "contact",
            "pressure-field polygon",
            "the analytic state columns cover point contacts; polygons take the dual path",
        ));
    };
    let d = feature_distance(
        &geometries[a].shape,
        &geometries[a].shape.size::<GeometryDual>(),
        &seeded_pose(&inputs.X_WG[a], &inputs.origin, moving_a),
        &geometries[b].shape,
        &geometries[b].shape.size::<GeometryDual>(),
        &seeded_pose(&inputs.X_WG[b], &inputs.origin, !moving_a),
        feature,
    )?;
    let p = contact_point(c.body_a, d.p_WPa, d.p_WPb);
    let R = contact_frame(&d.nhat_W);
    let eps = |x: &GeometryDual| x.eps.unwrap_generic(Const::<GEOMETRY_WIDTH>, U1);
    let mut out = LocalDerivative::zeros();
    out.set_row(0, &eps(&d.phi).transpose());
    for (r, x) in R.iter().chain(p.iter()).enumerate() {
        out.set_row(1 + r, &eps(x).transpose());
    }
    Ok(out)
}

/// `(δφ, δR_WC, δp_WC)` rows (13 × nv) along every tangent direction: the local derivatives
/// of each tree body in contact times its world Jacobian, column by column along its chain.
/// `chains` are the (sign, chain) of the sides ([`sides`]: A has sign −1).
fn geometric_variations(
    inputs: &ContactInputs<'_>,
    c: &ContactPoint<f64>,
    chains: &[(f64, Vec<usize>)],
) -> Result<OMatrix<f64, Const<13>, Dyn>> {
    let (model, world) = (&inputs.sim.model, inputs.world);
    let mut dG = OMatrix::<f64, Const<13>, Dyn>::zeros(model.nv());
    for (s, chain) in chains {
        let L = local_derivative(inputs, c, *s < 0.0)?;
        for &l in chain {
            let column = L * world.twist(l);
            let mut target = dG.column_mut(l);
            target += column;
        }
    }
    Ok(dG)
}

/// Impulse, Hessian and the partials `(γ_x0, γ_vn0, γ_w)` (columns) of contact `c` at `v_c`.
fn impulse_partials(
    approximation: Approximation,
    c: &ContactPoint<f64>,
    w: f64,
    dt: f64,
    v_c: &Vector3<f64>,
) -> (Vector3<f64>, Matrix3<f64>, Matrix3<f64>) {
    let seed = |x: f64, k: usize| {
        PotentialDual::new(
            x,
            Derivative::some(SVector::<f64, 3>::from_fn(
                |i, _| if i == k { 1.0 } else { 0.0 },
            )),
        )
    };
    let params = c.params.cast::<PotentialDual>();
    let (x0, vn0, w) = (seed(-c.phi0, 0), seed(c.v_n0, 1), seed(w, 2));
    let dt = PotentialDual::from_re(dt);
    let vc = v_c.map(PotentialDual::from_re);
    let state = ContactState {
        x0,
        v_n0: vn0,
        dt,
        w,
    };
    let e = potential(approximation, &params, &state).eval(&vc);
    let partials =
        Matrix3::from_fn(|r, k| e.gamma[r].eps.unwrap_generic(nalgebra::Const::<3>, U1)[k]);
    (e.gamma.map(|x| x.re), e.G.map(|x| x.re), partials)
}

/// `δ(J_W x)` along tangent direction `k` (eq. (1)), given the point variation `dp`.
fn point_velocity_variation(
    inputs: &ContactInputs<'_>,
    c: &ContactPoint<f64>,
    x: &Twists,
    k: usize,
    dp: &Vector3<f64>,
) -> Vector3<f64> {
    let (model, world) = (&inputs.sim.model, inputs.world);
    let p = c.p_WC - inputs.origin;
    sides(c).fold(Vector3::zeros(), |acc, (s, i)| {
        let dV = world.body_twist_variation(model, i, k, &x.body, &x.joint);
        let V = &x.body[i];
        let w = V.fixed_rows::<3>(0).into_owned();
        let dw = dV.fixed_rows::<3>(0).into_owned();
        acc + (dV.fixed_rows::<3>(3) + dw.cross(&p) + w.cross(dp)) * s
    })
}

/// The Delassus data of a contact: `Y = A⁻¹ Jᵀ`, `W = J Y`, `w = ‖W‖_F / 3`, and
/// `∂(A y_c)/∂q` for the three columns of Y.
struct Delassus {
    Y: MatrixXx3<f64>,
    /// `R_WC J y_c` for the three columns `y_c` of Y.
    RJY: [Vector3<f64>; 3],
    W: Matrix3<f64>,
    w: f64,
    dAY: [DMatrix<f64>; 3],
    twists: [Twists; 3],
}

/// `Y = A⁻¹ Jᵀ` and `W = J Y` of a contact, what its impulse needs before its variations.
struct DelassusBlock {
    Y: MatrixXx3<f64>,
    W: Matrix3<f64>,
}

impl DelassusBlock {
    fn new(inputs: &ContactInputs<'_>, J: &Matrix3xX<f64>) -> Result<Self> {
        let chol = inputs
            .A
            .clone()
            .cholesky()
            .ok_or(Error::NotPositiveDefinite { index: 0 })?;
        let Y = chol.solve(&J.transpose());
        let W = Matrix3::from_iterator((J * &Y).iter().copied());
        Ok(DelassusBlock { Y, W })
    }

    /// SAP's and regularized Lagged's `w = ‖W‖_F / 3`.
    fn w(&self) -> f64 {
        self.W.norm() / 3.0
    }
}

impl Delassus {
    /// Completes `block` with what `δw` needs: `∂(A y_c)/∂q` and the twists of the columns.
    fn new(inputs: &ContactInputs<'_>, block: DelassusBlock, R: &Matrix3<f64>) -> Self {
        let model = &inputs.sim.model;
        let DelassusBlock { Y, W } = block;
        let zero = DVector::zeros(model.nv());
        let column = |k: usize| Y.column(k).into_owned();
        let dAY = [0, 1, 2].map(|k| {
            inverse_dynamics_derivatives(
                model,
                inputs.world,
                &zero,
                &column(k),
                &Vector6::zeros(),
                false,
            )
            .0
        });
        let twists = [0, 1, 2].map(|k| Twists::new(model, inputs.world, &column(k)));
        let RJY = [0, 1, 2].map(|k| R * Vector3::from_iterator(W.column(k).iter().copied()));
        Delassus {
            RJY,
            w: W.norm() / 3.0,
            Y,
            W,
            dAY,
            twists,
        }
    }

    /// `δw` along tangent direction `k`, given `δR` and `δp`.
    fn variation(
        &self,
        inputs: &ContactInputs<'_>,
        c: &ContactPoint<f64>,
        k: usize,
        dR: &Matrix3<f64>,
        dp: &Vector3<f64>,
    ) -> f64 {
        if self.w == 0.0 {
            return 0.0;
        }
        let R = &c.R_WC;
        let P = Matrix3::from_fn(|r, col| {
            let d = dR.transpose() * self.RJY[col]
                + R.transpose() * point_velocity_variation(inputs, c, &self.twists[col], k, dp);
            d[r]
        });
        let Q = Matrix3::from_fn(|a, b| self.Y.column(a).dot(&self.dAY[b].column(k)));
        let dW = P + P.transpose() - Q;
        self.W.dot(&dW) / (9.0 * self.w)
    }
}

/// Adds contact `c`'s part of `∂r/∂[δq0, δv0]` to the first `2 nv` columns of `out` (eq. (1)).
///
/// # Errors
/// Feature pairs that cannot be re-evaluated, a singular `A`.
pub fn add_contact_columns(
    inputs: &ContactInputs<'_>,
    c: &ContactPoint<f64>,
    out: &mut DMatrix<f64>,
    scratch: &mut ContactScratch,
) -> Result<()> {
    let sim = inputs.sim;
    let model = &sim.model;
    let world = inputs.world;
    let nv = model.nv();
    let (dt, approximation) = (sim.settings.dt, sim.settings.approximation);
    let block = match approximation {
        Approximation::Sap | Approximation::RegularizedLagged => {
            Some(DelassusBlock::new(inputs, &c.J)?)
        }
        Approximation::Lagged | Approximation::Similar => None,
    };
    let Jv = apply(&c.J, inputs.v);
    let v_c = Jv + c.b;
    let w = block.as_ref().map_or(0.0, DelassusBlock::w);
    let (gamma, G, partials) = impulse_partials(approximation, c, w, dt, &v_c);
    // A contact with no impulse, no Hessian and no impulse partials (a candidate within the
    // margin that stays apart) adds nothing: every term of eq. (1) carries one of them.
    if gamma == Vector3::zeros() && G == Matrix3::zeros() && partials == Matrix3::zeros() {
        return Ok(());
    }
    let delassus = block.map(|b| Delassus::new(inputs, b, &c.R_WC));
    let (R, p) = (c.R_WC, c.p_WC - inputs.origin);
    let f = R * gamma;
    let F = spatial(p.cross(&f), f);

    scratch.set_chains(model, world, c);
    let dG = geometric_variations(inputs, c, &scratch.chains[..scratch.n_sides])?;
    // γ depends on `v_n0` only for Lagged; otherwise `δv_n0` is not needed.
    let lagged = partials.column(1).iter().any(|x| *x != 0.0);
    scratch.tv.fill(model, world, inputs.v);
    if lagged {
        scratch.tv0.fill(model, world, inputs.v0);
    }
    let (tv, tv0) = (&scratch.tv, lagged.then_some(&scratch.tv0));
    let (rel_end, w_end) = prescribed_relative(model, c, inputs.t + dt);
    let (rel_start, w_start) = prescribed_relative(model, c, inputs.t);
    let JWv = R * Jv;
    let JWv0 = R * apply(&c.J, inputs.v0);
    let nhat = R.column(2).into_owned();
    let mut dF = Matrix6xX::zeros(nv);
    for k in 0..nv {
        let j = world.coordinate[k].0;
        if delassus.is_none() && !sides(c).any(|(_, i)| world.in_subtree(j, i)) {
            // Neither body moves along k, and without `w` nothing else does: `δF = 0`.
            continue;
        }
        let dphi = dG[(0, k)];
        let dR = Matrix3::from_iterator(dG.column(k).rows(1, 9).iter().copied());
        let dp: Vector3<f64> = dG.fixed_view::<3, 1>(10, k).into_owned();
        let dJv =
            dR.transpose() * JWv + R.transpose() * point_velocity_variation(inputs, c, tv, k, &dp);
        let db = dR.transpose() * rel_end + R.transpose() * w_end.cross(&dp);
        let dvn0 = tv0.map_or(0.0, |tv0| {
            dR.column(2).dot(&(JWv0 + rel_start))
                + nhat.dot(&(point_velocity_variation(inputs, c, tv0, k, &dp) + w_start.cross(&dp)))
        });
        let dw = delassus
            .as_ref()
            .map_or(0.0, |d| d.variation(inputs, c, k, &dR, &dp));
        let dgamma = -G * (dJv + db) - partials.column(0) * dphi
            + partials.column(1) * dvn0
            + partials.column(2) * dw;
        let df = dR * gamma + R * dgamma;
        dF.set_column(k, &spatial(dp.cross(&f) + p.cross(&df), df));
    }
    let chains = &scratch.chains[..scratch.n_sides];
    let mut position = out.columns_mut(0, nv);
    for (s, chain) in chains {
        let s = *s;
        for &l in chain {
            let xi = world.twist(l);
            for k in 0..nv {
                position[(l, k)] -= s * xi.dot(&dF.fixed_view::<6, 1>(0, k));
            }
        }
        for &k in chain {
            let forces = world.variation_forces(model, k, &F);
            for &l in chain {
                if let Some(G) = world.column_variation_force(l, k, &forces) {
                    position[(l, k)] -= s * world.twist(l).dot(G);
                }
            }
        }
    }
    if lagged {
        // `−Jᵀ γ_vn0 (J)_n`, nonzero on the chains of the two bodies only.
        let touched = &mut scratch.touched;
        touched.clear();
        touched.extend(chains.iter().flat_map(|(_, c)| c.iter().copied()));
        touched.sort_unstable();
        touched.dedup();
        let gamma_vn0 = partials.column(1);
        let mut velocity = out.columns_mut(nv, nv);
        for &l in touched.iter() {
            let x = c.J.column(l).dot(&gamma_vn0);
            for &k in touched.iter() {
                velocity[(l, k)] -= x * c.J[(2, k)];
            }
        }
    }
    Ok(())
}
