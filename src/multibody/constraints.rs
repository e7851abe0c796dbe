//! Joint-space constraints and actuator transmissions of a model, as data: joint limits,
//! couplers (URDF mimic joints, MJCF joint equalities), Coulomb joint friction, and how each
//! actuator's input reaches its joint (an effort through a gear, or a position servo). The
//! step turns them into rows of the convex problem (`crate::step`, SAP paper Sec. V; DESIGN
//! "Constraints in the convex problem"); here they are only validated and stored, in f64
//! (they are not differentiable parameters).

use crate::error::{Error, Result};
use crate::scalar::{lit, Scalar};

/// Position limits of one joint velocity `q_k ∈ [lower, upper]` (rad or m), one side may be
/// infinite; a compliant unilateral constraint per finite side (SAP Sec. V, Drake's
/// `SapLimitConstraint`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointLimit {
    /// Position index of the joint coordinate.
    pub q_index: usize,
    /// Velocity index (`q̇_k = v_k`: one-velocity joints only).
    pub v_index: usize,
    /// Lowest position (rad or m), `f64::NEG_INFINITY` for none.
    pub lower: f64,
    /// Highest position (rad or m), `f64::INFINITY` for none.
    pub upper: f64,
}

/// A coupler `q_f = ρ q_l + offset` between two one-velocity joints: a holonomic constraint
/// `g = q_f − ρ q_l − offset = 0` (Drake's coupler constraint; URDF `<mimic>`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Coupler {
    /// Position and velocity index of the follower.
    pub follower: (usize, usize),
    /// Position and velocity index of the leader.
    pub leader: (usize, usize),
    /// Gear ratio ρ.
    pub multiplier: f64,
    /// Offset (rad or m).
    pub offset: f64,
}

/// Coulomb friction on one joint velocity: a friction torque or force of magnitude at most
/// `force` opposing the motion, stiction included (Drake's `SapJointFrictionConstraint`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointFriction {
    /// Velocity index.
    pub v_index: usize,
    /// Largest friction effort (N·m or N, > 0).
    pub force: f64,
}

/// How an actuator's input `u_j` reaches its joint velocity `v_k` (MJCF `gear`, `ctrlrange`,
/// `motor` and `position`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transmission {
    /// Input range `[lo, hi]`: the input is clamped to it before use (MuJoCo's `ctrlrange`
    /// with `ctrllimited`); infinite bounds for none.
    pub ctrl_range: [f64; 2],
    /// Gear ratio g: the joint effort is `g` times the actuator's force, and a servo's
    /// target joint position is `u / g`.
    pub gear: f64,
    /// Effort source or servo.
    pub kind: TransmissionKind,
}

/// The kind of a [`Transmission`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TransmissionKind {
    /// The joint effort is `g · u` (explicit, in the free motion).
    Effort,
    /// A position servo with actuator gains `kp` (N/m or N·m/rad) and `kv` (N·s/m or
    /// N·m·s/rad): the actuator force `kp (u − g q) − kv g v`, times `g` on the joint, limited
    /// to `|g| · force_limit`. Implicit in the step: a PD constraint with joint gains
    /// `K_p = g² kp`, `K_d = g² kv` and target `q_d = u / g` (Drake's
    /// `SapPdControllerConstraint`), stable at any gain and δt.
    Servo {
        /// Position gain of the actuator.
        kp: f64,
        /// Velocity gain of the actuator.
        kv: f64,
        /// Largest actuator force (N or N·m), `f64::INFINITY` for none.
        force_limit: f64,
    },
}

impl Transmission {
    /// An effort source with unit gear and no input range: `u` is the joint effort.
    pub const DIRECT: Transmission = Transmission {
        ctrl_range: [f64::NEG_INFINITY, f64::INFINITY],
        gear: 1.0,
        kind: TransmissionKind::Effort,
    };

    /// Checks a finite nonzero gear, an ordered input range without NaN, non-negative finite
    /// gains (not both zero) and a positive force limit.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`].
    pub fn validate(&self) -> Result<()> {
        if !(self.gear.is_finite() && self.gear != 0.0) {
            return Err(Error::invalid("gear", self.gear, "finite and nonzero"));
        }
        let [lo, hi] = self.ctrl_range;
        if lo.is_nan() || hi.is_nan() || lo > hi {
            return Err(Error::invalid(
                "ctrl_range",
                format!("[{lo}, {hi}]"),
                "lower ≤ upper",
            ));
        }
        if let TransmissionKind::Servo {
            kp,
            kv,
            force_limit,
        } = self.kind
        {
            let gain = |g: f64| g.is_finite() && g >= 0.0;
            if !(gain(kp) && gain(kv) && kp + kv > 0.0) {
                return Err(Error::invalid(
                    "servo gains",
                    format!("kp = {kp}, kv = {kv}"),
                    "finite, ≥ 0 and not both zero",
                ));
            }
            if force_limit.is_nan() || force_limit <= 0.0 {
                return Err(Error::invalid("force_limit", force_limit, "> 0"));
            }
        }
        Ok(())
    }

    /// The input `u` clamped to the range.
    pub fn clamp_input(&self, u: f64) -> f64 {
        u.clamp(self.ctrl_range[0], self.ctrl_range[1])
    }

    /// The input `u` clamped to the range in any scalar: `u` itself (with its derivatives)
    /// strictly inside, the bound (a constant) outside.
    pub fn clamped<T: Scalar>(&self, u: T) -> T {
        if self.input_inside(u.re()) {
            u
        } else {
            lit(self.clamp_input(u.re()))
        }
    }

    /// Whether `u` lies strictly inside the range, where the clamp passes derivatives.
    pub fn input_inside(&self, u: f64) -> bool {
        u > self.ctrl_range[0] && u < self.ctrl_range[1]
    }
}

impl JointLimit {
    /// Checks `lower ≤ upper`, no NaN, and at least one finite side.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`].
    pub fn validate(&self) -> Result<()> {
        if self.lower.is_nan() || self.upper.is_nan() || self.lower > self.upper {
            return Err(Error::invalid(
                "joint limits",
                format!("[{}, {}]", self.lower, self.upper),
                "lower ≤ upper",
            ));
        }
        if !(self.lower.is_finite() || self.upper.is_finite()) {
            return Err(Error::invalid(
                "joint limits",
                "[−∞, ∞]",
                "at least one finite side",
            ));
        }
        Ok(())
    }
}
