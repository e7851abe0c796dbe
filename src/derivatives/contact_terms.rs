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
//! `p_WC` with respect to the twist of a geometry come from the feature pair's closed form
//! ([`twist_derivative`]; for a cylinder's rim point against a plane, from one evaluation of
//! [`feature_distance`] in a width-6 dual, its geometry's pose moved by `exp(ε ξ̂)`), then
//! chained through the bodies' world Jacobians. When both bodies are in the tree, B's
//! evaluation serves A too: moving both geometries by one twist `(ω, v)` moves the pair
//! rigidly (φ stays, `δn̂ = ω × n̂`, `δp = v + ω × (p − o)`, and `R_WC = contact_frame(n̂)`
//! follows n̂), so A's derivative is that rigid motion's less B's. Twists and forces are taken
//! about the contact point (`p = 0` above), which keeps the lever arms of cancelling terms
//! short: the step's world twists are computed once and each shifted to the contact point
//! where it is used. For SAP and regularized Lagged,
//! `δw = W : δW / (9 w)` with `δW = δJ Y + (δJ Y)ᵀ − Yᵀ δA Y`, `Y = A⁻¹ Jᵀ`, and `δA y` from
//! [`inverse_dynamics_derivatives`] at zero velocity and gravity with acceleration `y`.
//! Along `v0` only `v_n0` moves (Lagged): `∂v_n0/∂v0 = (J_i)_n`.
#![allow(non_snake_case)]

use nalgebra::{
    Const, DMatrix, DVector, Matrix3, Matrix3xX, MatrixXx3, SMatrix, SVector, Vector3, Vector6, U1,
};
use num_dual::{Derivative, DualSVec64};

use crate::contact::{potential, Approximation, ContactParams, ContactPotential, ContactState};
use crate::error::{Error, Result};
use crate::geometry::distance::{feature_distance, twist_derivative, twisted_pose, ActiveFeature};
use crate::math::spatial::{angular as ang, linear as lin, motion_about};
use crate::math::Pose;
use crate::multibody::derivatives::{inverse_dynamics_derivatives, spatial, WorldKinematics};
use crate::multibody::model::{BodyId, MultibodyModel};
use crate::step::{
    contact_frame_derivative, contact_point, ContactFeature, ContactPoint, Simulator,
};

/// Width of the geometric dual: the twist of one geometry.
const GEOMETRY_WIDTH: usize = 6;

type GeometryDual = DualSVec64<GEOMETRY_WIDTH>;
type PotentialDual = DualSVec64<3>;

/// Rows of the local geometric derivative (φ, `R_WC` column-major, `p_WC`) with respect to
/// one geometry's twist `(ω, v)` about the contact point.
type LocalDerivative = SMatrix<f64, 13, GEOMETRY_WIDTH>;

/// What the contact terms need of the step: the model at `q0`, the velocities, the times.
pub struct ContactInputs<'a> {
    /// The simulator (model, geometries, settings).
    pub sim: &'a Simulator,
    /// World-frame kinematics at `q0`, about the world origin.
    pub world: &'a WorldKinematics,
    /// Geometry poses at `q0`.
    pub X_WG: &'a [Pose<f64>],
    /// `A = M + δt D` at `q0`.
    pub A: &'a DMatrix<f64>,
    /// Converged velocities.
    pub v: &'a DVector<f64>,
    /// Start velocities.
    pub v0: &'a DVector<f64>,
    /// Time at the start of the step (s).
    pub t: f64,
}

/// A motion vector about the world origin, about the contact point `o`
/// ([`motion_about`]). Derivatives of generalized quantities do not depend on the origin, but
/// their round-off grows with the lever arms `|p − o|` of the terms that cancel in them: a
/// contact's terms are computed about its point.
fn shift(x: &Vector6<f64>, o: &Vector3<f64>) -> Vector6<f64> {
    motion_about(x, o)
}

/// Body twists and joint twists (world, about the world origin) of the whole tree for one
/// generalized velocity.
#[derive(Default)]
struct Twists {
    body: Vec<Vector6<f64>>,
    joint: Vec<Vector6<f64>>,
    /// Whether `body` and `joint` hold the twists (of the step's velocity, for the scratch's).
    ready: bool,
}

impl Twists {
    fn new(model: &MultibodyModel<f64>, world: &WorldKinematics, x: &DVector<f64>) -> Self {
        let mut twists = Twists::default();
        twists.fill_once(model, world, x);
        twists
    }

    /// The twists for `x` in the buffers of `self`, unless they are there already.
    fn fill_once(
        &mut self,
        model: &MultibodyModel<f64>,
        world: &WorldKinematics,
        x: &DVector<f64>,
    ) {
        if !self.ready {
            world.joint_twists_into(model, x, &mut self.joint);
            world.body_twists_into(model, &self.joint, &mut self.body);
            self.ready = true;
        }
    }
}

/// One side of a contact in the tree: its sign (A −1, B +1), its body, and its chain (the
/// velocity indices of the body's joint and its ancestors', the nonzero columns of its world
/// Jacobian) with their twists about the contact point.
#[derive(Default)]
struct Side {
    sign: f64,
    body: usize,
    chain: Vec<usize>,
    xi: Vec<Vector6<f64>>,
}

/// A tangent direction `k` of `q0` along which a contact's terms move: its twist `ξ_k` about
/// the contact point, whether it moves each side (its joint supports the side's body), and the
/// `δF` it gives (eq. (1)).
struct Direction {
    k: usize,
    xi: Vector6<f64>,
    moves: [bool; 2],
    dF: Vector6<f64>,
}

/// Buffers of [`add_contact_columns`], kept from one step's contacts to the next's: the world
/// twists for `v` and `v0` (computed at the first contact of a step that needs them), the
/// sides of the current contact and the directions that move it.
#[derive(Default)]
pub struct ContactScratch {
    tv: Twists,
    tv0: Twists,
    /// The sides of the current contact ([`sides`]); the first `n_sides` are current.
    sides: [Side; 2],
    n_sides: usize,
    directions: Vec<Direction>,
    local: LocalDerivatives,
    touched: Vec<usize>,
    /// The last contact's impulse partials ([`impulse_partials`]) with their inputs.
    impulse: Option<(ImpulseInputs, ImpulsePartials)>,
}

/// What [`impulse_partials`] reads of a contact: the approximation, the pair's parameters,
/// and the bits of `φ0`, `v_n0`, `w`, `δt` and `v_c`.
type ImpulseInputs = (Approximation, ContactParams<f64>, [u64; 7]);

/// Impulse, Hessian and the partials `(γ_x0, γ_vn0, γ_w)` (columns) of a contact.
type ImpulsePartials = (Vector3<f64>, Matrix3<f64>, Matrix3<f64>);

impl ContactScratch {
    /// Readies the buffers for the contacts of another step: the twists held are not of its
    /// velocities. (The impulse partials kept are a function of the inputs they are kept with,
    /// whatever the step.)
    pub fn start_step(&mut self) {
        self.tv.ready = false;
        self.tv0.ready = false;
    }

    /// [`impulse_partials`] of contact `c`, or the last contact's when its inputs are the same
    /// bit for bit (the corners of a face on a plane moving with it): the same numbers.
    fn impulse_partials(
        &mut self,
        approximation: Approximation,
        c: &ContactPoint<f64>,
        w: f64,
        dt: f64,
        v_c: &Vector3<f64>,
    ) -> ImpulsePartials {
        let numbers = [
            c.phi0.to_bits(),
            c.v_n0.to_bits(),
            w.to_bits(),
            dt.to_bits(),
            v_c.x.to_bits(),
            v_c.y.to_bits(),
            v_c.z.to_bits(),
        ];
        let inputs = (approximation, c.params, numbers);
        match &self.impulse {
            Some((last, partials)) if *last == inputs => *partials,
            _ => {
                let partials = impulse_partials(approximation, c, w, dt, v_c);
                self.impulse = Some((inputs, partials));
                partials
            }
        }
    }

    /// The sides of `c` and the directions that move it: those whose joints support one of
    /// its bodies, or all when `all` (the Delassus term changes with every body).
    fn prepare(
        &mut self,
        model: &MultibodyModel<f64>,
        world: &WorldKinematics,
        c: &ContactPoint<f64>,
        all: bool,
    ) {
        let o = c.p_WC;
        self.n_sides = 0;
        for (s, i) in sides(c) {
            let side = &mut self.sides[self.n_sides];
            side.sign = s;
            side.body = i;
            world.chain_into(model, i, &mut side.chain);
            side.xi.clear();
            side.xi
                .extend(side.chain.iter().map(|&l| shift(&world.twist(l), &o)));
            self.n_sides += 1;
        }
        // The directions that move a side are the velocity indices of its chain.
        self.directions.clear();
        for (m, side) in self.sides[..self.n_sides].iter().enumerate() {
            for (&k, xi) in side.chain.iter().zip(&side.xi) {
                match self.directions.iter_mut().find(|d| d.k == k) {
                    Some(d) => d.moves[m] = true,
                    None => {
                        let mut moves = [false; 2];
                        moves[m] = true;
                        self.directions.push(Direction {
                            k,
                            xi: *xi,
                            moves,
                            dF: Vector6::zeros(),
                        });
                    }
                }
            }
        }
        if all {
            for k in 0..model.nv() {
                if !self.directions.iter().any(|d| d.k == k) {
                    self.directions.push(Direction {
                        k,
                        xi: shift(&world.twist(k), &o),
                        moves: [false; 2],
                        dF: Vector6::zeros(),
                    });
                }
            }
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
    J * x
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

/// [`twisted_pose`] when `moving`; constant otherwise.
fn seeded_pose(X: &Pose<f64>, o: &Vector3<f64>, moving: bool) -> Pose<GeometryDual> {
    if moving {
        twisted_pose(X, o)
    } else {
        Pose {
            R: X.R.map(GeometryDual::from_re),
            p: X.p.map(GeometryDual::from_re),
        }
    }
}

/// The derivative part of a geometric dual.
fn geometry_eps(x: &GeometryDual) -> SVector<f64, GEOMETRY_WIDTH> {
    x.eps.unwrap_generic(Const::<GEOMETRY_WIDTH>, U1)
}

/// Derivatives of φ, `R_WC` and `p_WC` with respect to the twist (about the contact point) of
/// geometry A (`moving_a`) or B, in closed form ([`twist_derivative`]), or for a rim point
/// against a plane from one dual evaluation of the feature pair, into `out`; returns the
/// normal n̂ and the contact point p of that evaluation, and the frame's derivative at n̂
/// ([`frame_derivative`]).
fn local_derivative(
    inputs: &ContactInputs<'_>,
    c: &ContactPoint<f64>,
    moving_a: bool,
    out: &mut LocalDerivative,
) -> Result<(Vector3<f64>, Vector3<f64>, FrameDerivative)> {
    let geometries = inputs.sim.geometries();
    let (a, b, o) = (c.geometry_a, c.geometry_b, &c.p_WC);
    let ContactFeature::Point(feature) = &c.feature else {
        return Err(Error::invalid(
            "contact",
            "pressure-field polygon",
            "the analytic state columns cover point contacts; polygons take the dual path",
        ));
    };
    let (shape_a, shape_b) = (&geometries[a].shape, &geometries[b].shape);
    let closed = twist_derivative(
        shape_a,
        &shape_a.size::<f64>(),
        &inputs.X_WG[a],
        shape_b,
        &shape_b.size::<f64>(),
        &inputs.X_WG[b],
        feature,
        moving_a,
        o,
    )?;
    let Some(t) = closed else {
        let (L, nhat, p, D) = dual_local_derivative(inputs, c, feature, moving_a)?;
        *out = L;
        return Ok((nhat, p, D));
    };
    let nhat = t.value.nhat_W;
    let D = frame_derivative(&nhat);
    // The contact point's derivative, as `contact_point` combines the witness points.
    let dp = match c.body_a {
        BodyId::Body(_) => (t.p_WPa + t.p_WPb) * 0.5,
        BodyId::World | BodyId::Prescribed(_) => t.p_WPb,
    };
    for ((column, dphi), dp) in columns_mut(out)
        .zip(t.phi.as_slice())
        .zip(dp.as_slice().chunks_exact(3))
    {
        column[0] = *dphi;
        column[1..10].fill(0.0);
        column[10..].copy_from_slice(dp);
    }
    set_frame_rows(out, &D, &t.nhat_W);
    let p = contact_point(c.body_a, t.value.p_WPa, t.value.p_WPb);
    Ok((nhat, p, D))
}

/// [`local_derivative`] from one evaluation of [`feature_distance`] in a width-6 dual, the
/// pose of the moving geometry seeded with its twist about the contact point.
fn dual_local_derivative(
    inputs: &ContactInputs<'_>,
    c: &ContactPoint<f64>,
    feature: &ActiveFeature,
    moving_a: bool,
) -> Result<(LocalDerivative, Vector3<f64>, Vector3<f64>, FrameDerivative)> {
    let geometries = inputs.sim.geometries();
    let (a, b, o) = (c.geometry_a, c.geometry_b, &c.p_WC);
    let (shape_a, shape_b) = (&geometries[a].shape, &geometries[b].shape);
    let mut out = LocalDerivative::zeros();
    let d = feature_distance(
        shape_a,
        &shape_a.size::<GeometryDual>(),
        &seeded_pose(&inputs.X_WG[a], o, moving_a),
        shape_b,
        &shape_b.size::<GeometryDual>(),
        &seeded_pose(&inputs.X_WG[b], o, !moving_a),
        feature,
    )?;
    let p = contact_point(c.body_a, d.p_WPa, d.p_WPb);
    let nhat = d.nhat_W.map(|x| x.re);
    let D = frame_derivative(&nhat);
    out.set_row(0, &geometry_eps(&d.phi).transpose());
    let dn = NormalDerivative::from_fn(|r, s| geometry_eps(&d.nhat_W[r])[s]);
    set_frame_rows(&mut out, &D, &dn);
    for (r, x) in p.iter().enumerate() {
        out.set_row(10 + r, &geometry_eps(x).transpose());
    }
    Ok((out, nhat, p.map(|x| x.re), D))
}

/// The derivative of the normal n̂ with respect to one geometry's twist.
type NormalDerivative = SMatrix<f64, 3, GEOMETRY_WIDTH>;

/// The derivatives `∂R_WC/∂n̂_m` of `R_WC = contact_frame(n̂)` ([`contact_frame_derivative`]),
/// column m the column-major entries of the m-th.
type FrameDerivative = SMatrix<f64, 9, 3>;

/// [`FrameDerivative`] at `nhat`.
fn frame_derivative(nhat: &Vector3<f64>) -> FrameDerivative {
    let dR = contact_frame_derivative(nhat);
    FrameDerivative::from_fn(|k, m| dR[m].as_slice()[k])
}

/// Rows 1-9 of `out`, those of `R_WC = contact_frame(n̂)` (column-major), from the derivative
/// `dn` of n̂ through the frame's derivative `D` ([`frame_derivative`]): `D dn`, zero where n̂
/// does not move (a plane of the other geometry).
fn set_frame_rows(out: &mut LocalDerivative, D: &FrameDerivative, dn: &NormalDerivative) {
    if dn.as_slice().iter().any(|x| *x != 0.0) {
        let rows = D * dn;
        for (column, rows) in columns_mut(out).zip(rows.as_slice().chunks_exact(9)) {
            column[1..10].copy_from_slice(rows);
        }
    }
}

/// The columns of a [`LocalDerivative`] as slices of its storage (column-major): copies and
/// fills through nalgebra's views step an iterator per entry, a dozen instructions each.
fn columns_mut(L: &mut LocalDerivative) -> std::slice::ChunksExactMut<'_, f64> {
    L.as_mut_slice().chunks_exact_mut(13)
}

/// Derivatives of φ, `R_WC` and `p_WC` along a rigid motion of both geometries by one twist
/// `(ω, v)` about `o`, at the normal `nhat` and the contact point `p`: the distance of the
/// pair does not change, its normal turns (`δn̂ = ω × n̂`) and its witness points move with the
/// motion (`δp = v + ω × (p − o)`). `R_WC = contact_frame(n̂)` follows n̂, not ω (its tangent
/// is chosen from the world axes): its derivative along `δn̂` ([`contact_frame_derivative`]).
fn rigid_derivative(
    nhat: &Vector3<f64>,
    D: &FrameDerivative,
    p: &Vector3<f64>,
    o: &Vector3<f64>,
    out: &mut LocalDerivative,
) {
    out.as_mut_slice().fill(0.0);
    let mut dn = NormalDerivative::zeros();
    for s in 0..3 {
        dn.set_column(s, &Vector3::ith(s, 1.0).cross(nhat));
    }
    set_frame_rows(out, D, &dn);
    let r = p - o;
    for s in 0..3 {
        out.fixed_view_mut::<3, 1>(10, s)
            .copy_from(&Vector3::ith(s, 1.0).cross(&r));
        out[(10 + s, 3 + s)] = 1.0;
    }
}

/// The local derivatives of a contact's φ, `R_WC` and `p_WC` (rows of [`LocalDerivative`])
/// with respect to its sides' twists: the last side's from one dual evaluation and, with two
/// sides, a rigid motion's ([`rigid_derivative`]), A's being the rigid one less B's.
struct LocalDerivatives {
    /// Each side's derivative, in the order of the sides; the first `n` are current.
    sides: [LocalDerivative; 2],
    n: usize,
    /// Both sides' together (a rigid motion of the pair), with two sides.
    rigid: LocalDerivative,
}

impl Default for LocalDerivatives {
    fn default() -> Self {
        LocalDerivatives {
            sides: [LocalDerivative::zeros(); 2],
            n: 0,
            rigid: LocalDerivative::zeros(),
        }
    }
}

impl LocalDerivatives {
    /// The derivatives of contact `c` with sides `sides`, in the buffers of `self`.
    fn fill(
        &mut self,
        inputs: &ContactInputs<'_>,
        c: &ContactPoint<f64>,
        sides: &[Side],
    ) -> Result<()> {
        self.n = sides.len();
        let Some(last) = sides.last() else {
            return Ok(());
        };
        let (nhat, p, D) =
            local_derivative(inputs, c, last.sign < 0.0, &mut self.sides[self.n - 1])?;
        if self.n == 2 {
            rigid_derivative(&nhat, &D, &p, &c.p_WC, &mut self.rigid);
            let [A, B] = &mut self.sides;
            let (A, B, rigid) = (A.as_mut_slice(), B.as_slice(), self.rigid.as_slice());
            for ((a, b), r) in A.iter_mut().zip(B).zip(rigid) {
                *a = r - b;
            }
        }
        Ok(())
    }

    /// `(δφ, δR_WC, δp_WC)` along direction `d`: the derivative of the sides `k` moves times
    /// `ξ_k`.
    fn variation(&self, d: &Direction) -> (f64, Matrix3<f64>, Vector3<f64>) {
        let L = match d.moves {
            [true, true] => &self.rigid,
            [true, false] => &self.sides[0],
            [false, true] => &self.sides[1],
            [false, false] => return (0.0, Matrix3::zeros(), Vector3::zeros()),
        };
        let dG = L * d.xi;
        let dR = Matrix3::from_column_slice(&dG.as_slice()[1..10]);
        (dG[0], dR, dG.fixed_rows::<3>(10).into_owned())
    }
}

/// Impulse, Hessian and the partials `(γ_x0, γ_vn0, γ_w)` (columns) of contact `c` at `v_c`.
fn impulse_partials(
    approximation: Approximation,
    c: &ContactPoint<f64>,
    w: f64,
    dt: f64,
    v_c: &Vector3<f64>,
) -> ImpulsePartials {
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

/// `δ(J_W x)` along direction `d` (eq. (1), about the contact point `o`: `p = 0`), given the
/// point variation `dp` and the world twists for `x`. A side (body i) moved by `k` (joint j)
/// varies its twist by `δV = ξ_k × (V_i − V_j)` plus j's own term
/// ([`WorldKinematics::own_twist_variation`], eq. (2) of [`crate::multibody::derivatives`]),
/// of which the linear part enters.
fn point_velocity_variation(
    model: &MultibodyModel<f64>,
    world: &WorldKinematics,
    sides: &[Side],
    x: &Twists,
    d: &Direction,
    o: &Vector3<f64>,
    dp: &Vector3<f64>,
) -> Vector3<f64> {
    let j = world.coordinate[d.k].0;
    let (w_k, v_k) = (ang(&d.xi), lin(&d.xi));
    sides
        .iter()
        .zip(d.moves)
        .fold(Vector3::zeros(), |acc, (side, moves)| {
            let V = &x.body[side.body];
            let mut dv = ang(V).cross(dp);
            if moves {
                let rel = shift(&(V - x.body[j]), o);
                let own = world.own_twist_variation(&model.joints[j].kind, d.k, &x.joint[j]);
                dv += w_k.cross(&lin(&rel)) + v_k.cross(&ang(&rel)) + lin(&own);
            }
            acc + dv * side.sign
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

    /// `δw` along direction `d`, given `δR` and `δp`.
    fn variation(
        &self,
        inputs: &ContactInputs<'_>,
        c: &ContactPoint<f64>,
        sides: &[Side],
        d: &Direction,
        dR: &Matrix3<f64>,
        dp: &Vector3<f64>,
    ) -> f64 {
        if self.w == 0.0 {
            return 0.0;
        }
        let (model, world) = (&inputs.sim.model, inputs.world);
        let R = &c.R_WC;
        let P = Matrix3::from_fn(|r, col| {
            let dJy =
                point_velocity_variation(model, world, sides, &self.twists[col], d, &c.p_WC, dp);
            (dR.transpose() * self.RJY[col] + R.transpose() * dJy)[r]
        });
        let Q = Matrix3::from_fn(|a, b| self.Y.column(a).dot(&self.dAY[b].column(d.k)));
        let dW = P + P.transpose() - Q;
        self.W.dot(&dW) / (9.0 * self.w)
    }
}

/// Adds contact `c`'s part of `∂r/∂[δq0, δv0]` to the first `2 nv` columns of `out` (eq. (1)),
/// with twists and forces about the contact point.
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
    let (gamma, G, partials) = scratch.impulse_partials(approximation, c, w, dt, &v_c);
    // A contact with no impulse, no Hessian and no impulse partials (a candidate within the
    // margin that stays apart) adds nothing: every term of eq. (1) carries one of them.
    let zero = |x: &[f64]| x.iter().all(|x| *x == 0.0);
    if zero(gamma.as_slice()) && zero(G.as_slice()) && zero(partials.as_slice()) {
        return Ok(());
    }
    let delassus = block.map(|b| Delassus::new(inputs, b, &c.R_WC));
    let (R, o) = (c.R_WC, c.p_WC);
    let f = R * gamma;
    // About the contact point the force has no moment (`p = 0`).
    let F = spatial(Vector3::zeros(), f);

    // γ depends on `v_n0` only for Lagged; otherwise `δv_n0` is not needed.
    let lagged = !zero(&partials.as_slice()[3..6]);
    scratch.tv.fill_once(model, world, inputs.v);
    if lagged {
        scratch.tv0.fill_once(model, world, inputs.v0);
    }
    scratch.prepare(model, world, c, delassus.is_some());
    let ContactScratch {
        tv,
        tv0,
        sides,
        n_sides,
        directions,
        local,
        touched,
        ..
    } = scratch;
    let sides = &sides[..*n_sides];
    local.fill(inputs, c, sides)?;
    // `δb` (prescribed motion) is zero unless a side is prescribed.
    let prescribed = [c.body_a, c.body_b]
        .iter()
        .any(|b| matches!(b, BodyId::Prescribed(_)));
    let (rel_end, w_end) = prescribed_relative(model, c, inputs.t + dt);
    let (rel_start, w_start) = prescribed_relative(model, c, inputs.t);
    let JWv = R * Jv;
    // `J_W v0` at the start of the step, for `δv_n0` (Lagged).
    let JWv0_start = if lagged {
        R * apply(&c.J, inputs.v0) + rel_start
    } else {
        Vector3::zeros()
    };
    let nhat = R.column(2).into_owned();
    let (g_x0, g_vn0, g_w) = (
        partials.column(0).into_owned(),
        partials.column(1).into_owned(),
        partials.column(2).into_owned(),
    );
    let RT = R.transpose();
    for d in directions.iter_mut() {
        let (dphi, dR, dp) = local.variation(d);
        let dRT = dR.transpose();
        let mut dvc =
            dRT * JWv + RT * point_velocity_variation(model, world, sides, tv, d, &o, &dp);
        if prescribed {
            dvc += dRT * rel_end + RT * w_end.cross(&dp);
        }
        let mut dgamma = -(G * dvc) - g_x0 * dphi;
        if lagged {
            let dvn0 = dR.column(2).dot(&JWv0_start)
                + nhat.dot(
                    &(point_velocity_variation(model, world, sides, tv0, d, &o, &dp)
                        + w_start.cross(&dp)),
                );
            dgamma += g_vn0 * dvn0;
        }
        if let Some(delassus) = &delassus {
            dgamma += g_w * delassus.variation(inputs, c, sides, d, &dR, &dp);
        }
        let df = dR * gamma + R * dgamma;
        d.dF = spatial(dp.cross(&f), df);
    }
    // `δ(Jᵀγ)_l = Σ_X s_X (δ_k ξ_l · F + ξ_l · δF)` into column k of the position block, with
    // `δ_k ξ_l · F = ξ_l · G` ([`WorldKinematics::column_variation_force`]) where k moves X.
    let position = &mut out.as_mut_slice()[..nv * nv];
    for d in directions.iter() {
        let column = &mut position[d.k * nv..(d.k + 1) * nv];
        for (side, &moves) in sides.iter().zip(&d.moves) {
            let s = side.sign;
            if moves {
                let (below, own) = world.variation_forces(model, d.k, &d.xi, &F);
                let forces = (d.dF + below, d.dF + own);
                for (&l, xi) in side.chain.iter().zip(&side.xi) {
                    let G = world
                        .column_variation_force(l, d.k, &forces)
                        .unwrap_or(&d.dF);
                    column[l] -= s * xi.dot(G);
                }
            } else {
                for (&l, xi) in side.chain.iter().zip(&side.xi) {
                    column[l] -= s * xi.dot(&d.dF);
                }
            }
        }
    }
    if lagged {
        // `−Jᵀ γ_vn0 (J)_n`, nonzero on the chains of the two bodies only.
        touched.clear();
        touched.extend(sides.iter().flat_map(|s| s.chain.iter().copied()));
        touched.sort_unstable();
        touched.dedup();
        let velocity = &mut out.as_mut_slice()[nv * nv..2 * nv * nv];
        for &l in touched.iter() {
            let x = c.J.column(l).dot(&g_vn0);
            for &k in touched.iter() {
                velocity[k * nv + l] -= x * c.J[(2, k)];
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::multibody::kinematics::{forward_kinematics, MultibodyData};
    use crate::problem::shipped;
    use crate::step::geometry_poses;

    /// A's local derivative as the rigid motion's less B's ([`LocalDerivatives`]) against its
    /// own evaluation, and both sides' closed forms against their dual evaluations, at the
    /// contacts of the arm's hand (a capsule on a revolute chain) with the free sphere: they
    /// differ by round-off only.
    #[test]
    fn a_local_derivative_is_the_rigid_motion_less_b() {
        let mut p = shipped("arm-push-sphere");
        let sim = &mut p.simulator;
        let u = DVector::zeros(sim.model.nu());
        let mut state = p.initial_state.clone();
        let mut checked = 0;
        while checked < 5 && state.t < 0.3 {
            let problem = sim.assemble(&state, &u).expect("assembly");
            let (world, _) = WorldKinematics::at(&sim.model, &state.q);
            let mut data = MultibodyData::new(&sim.model);
            forward_kinematics(&sim.model, &mut data, &state.q, &state.v);
            let X_WG = geometry_poses(&sim.model, &data, sim.geometries(), state.t);
            let inputs = ContactInputs {
                sim: &*sim,
                world: &world,
                X_WG: &X_WG,
                A: &problem.problem.A,
                v: &state.v,
                v0: &state.v,
                t: state.t,
            };
            for c in problem
                .contacts
                .iter()
                .filter(|c| matches!((c.body_a, c.body_b), (BodyId::Body(_), BodyId::Body(_))))
            {
                let (mut L_A, mut L_B, mut rigid) = (
                    LocalDerivative::zeros(),
                    LocalDerivative::zeros(),
                    LocalDerivative::zeros(),
                );
                local_derivative(&inputs, c, true, &mut L_A).expect("A's");
                let (nhat, p_WC, D) = local_derivative(&inputs, c, false, &mut L_B).expect("B's");
                rigid_derivative(&nhat, &D, &p_WC, &c.p_WC, &mut rigid);
                let ContactFeature::Point(feature) = &c.feature else {
                    panic!("point contacts only");
                };
                for (moving_a, L) in [(true, L_A), (false, L_B)] {
                    let (dual, _, _, _) =
                        dual_local_derivative(&inputs, c, feature, moving_a).expect("dual");
                    let e = (L - dual).amax();
                    assert!(
                        e <= 1e-12 * dual.amax(),
                        "t = {}: closed form differs from the duals by {e:.2e}",
                        state.t
                    );
                }
                let e = (rigid - L_B - L_A).amax();
                assert!(
                    e <= 1e-13 * L_A.amax(),
                    "t = {}: rigid − B differs from A by {e:.2e} (A up to {:.2e})",
                    state.t,
                    L_A.amax()
                );
                checked += 1;
            }
            state = sim.step(&state, &u).expect("step").0;
        }
        assert!(checked > 0, "no contact of the hand with the sphere");
    }
}
