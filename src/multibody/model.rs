//! The multibody model: bodies, joints, trees, damping, actuation and gravity.
#![allow(non_snake_case)]

use nalgebra::{Matrix3, Vector3};

use crate::error::{Error, Result};
use crate::math::{Pose, SpatialInertia};
use crate::multibody::constraints::{
    Coupler, JointFriction, JointLimit, Transmission, TransmissionKind,
};
use crate::multibody::joint::JointKind;
use crate::multibody::prescribed::PrescribedBody;
use crate::scalar::{lit, Scalar};

/// Which body a geometry or contact refers to (ordered: the world, then tree bodies, then
/// prescribed bodies, each by index).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BodyId {
    /// The fixed world.
    World,
    /// A body of the multibody tree, by index.
    Body(usize),
    /// A body with prescribed motion, by index.
    Prescribed(usize),
}

/// A rigid body.
#[derive(Clone, Debug)]
pub struct Body<T: Scalar> {
    /// Unique name.
    pub name: String,
    /// Mass, centre of mass and rotational inertia about the centre of mass (body frame).
    pub inertia: SpatialInertia<T>,
}

/// How a new body hangs from its parent, for [`MultibodyModel::add_body`].
#[derive(Clone, Debug)]
pub struct JointSpec<T: Scalar> {
    /// Kind and axis.
    pub kind: JointKind,
    /// Parent body index, `None` for the world.
    pub parent: Option<usize>,
    /// Placement `X_PJ` of the joint frame in the parent frame.
    pub X_PJ: Pose<T>,
    /// Viscous damping per joint velocity (N·s/m or N·m·s/rad).
    pub damping: Vec<T>,
    /// Reflected rotor inertia per joint velocity (kg or kg·m², nv of the joint), added to the
    /// diagonal of `M` (MuJoCo's and Drake's `armature`).
    pub armature: Vec<T>,
    /// A linear spring on a revolute or prismatic joint; `None` for none.
    pub spring: Option<JointSpring<T>>,
}

impl<T: Scalar> JointSpec<T> {
    /// A joint of `kind` to the world, at the identity placement, without damping, armature
    /// or spring.
    pub fn new(kind: JointKind) -> Self {
        JointSpec {
            kind,
            parent: None,
            X_PJ: Pose::identity(),
            damping: vec![T::zero(); kind.nv()],
            armature: vec![T::zero(); kind.nv()],
            spring: None,
        }
    }
}

/// A linear joint spring: the passive effort `τ = −k (q − q_ref)` on a one-coordinate joint
/// (MuJoCo's joint `stiffness` and `springref`), applied explicitly in the free motion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointSpring<T: Scalar> {
    /// Stiffness `k` (N/m or N·m/rad, ≥ 0).
    pub stiffness: T,
    /// The coordinate `q_ref` at which the spring is relaxed (m or rad).
    pub reference: T,
}

/// The joint connecting a body to its parent.
#[derive(Clone, Debug)]
pub struct Joint<T: Scalar> {
    /// Kind and axis.
    pub kind: JointKind,
    /// Parent body index, `None` for the world.
    pub parent: Option<usize>,
    /// Placement `X_PJ` of the joint frame J in the parent frame (the world frame for roots).
    pub X_PJ: Pose<T>,
    /// Viscous damping per joint velocity (N·s/m or N·m·s/rad), length nv of the joint;
    /// treated implicitly, in `A = M + δt D`.
    pub damping: Vec<T>,
    /// Reflected rotor inertia per joint velocity (kg or kg·m²), length nv of the joint; on the
    /// diagonal of `M` ([`crate::multibody::mass_matrix`]).
    pub armature: Vec<T>,
    /// The joint's spring, if any (revolute and prismatic joints only).
    pub spring: Option<JointSpring<T>>,
    /// Offset of this joint's coordinates in `q`.
    pub q_start: usize,
    /// Offset of this joint's velocities in `v`.
    pub v_start: usize,
}

/// A kinematic forest of rigid bodies in joint coordinates, generic over the scalar.
///
/// Bodies are stored parents-first: body `i`'s parent has an index below `i`.
#[derive(Clone, Debug)]
pub struct MultibodyModel<T: Scalar> {
    /// Bodies, parents first.
    pub bodies: Vec<Body<T>>,
    /// `joints[i]` connects `bodies[i]` to its parent.
    pub joints: Vec<Joint<T>>,
    /// Bodies whose motion is a given function of time.
    pub prescribed: Vec<PrescribedBody>,
    /// Gravity in the world frame (m/s²).
    pub gravity: Vector3<T>,
    /// Actuated velocity indices: column `j` of the actuation matrix `B` (nv × nu) is the unit
    /// vector of velocity `actuators[j]`.
    pub actuators: Vec<usize>,
    /// How each actuator's input reaches its joint (nu, indexed like `actuators`).
    pub transmissions: Vec<Transmission>,
    /// Joint position limits.
    pub limits: Vec<JointLimit>,
    /// Couplers between joints.
    pub couplers: Vec<Coupler>,
    /// Coulomb joint friction.
    pub friction: Vec<JointFriction>,
    nq: usize,
    nv: usize,
}

impl<T: Scalar> MultibodyModel<T> {
    /// An empty model with the given gravity (m/s², world frame).
    pub fn new(gravity: Vector3<T>) -> Self {
        MultibodyModel {
            bodies: Vec::new(),
            joints: Vec::new(),
            prescribed: Vec::new(),
            gravity,
            actuators: Vec::new(),
            transmissions: Vec::new(),
            limits: Vec::new(),
            couplers: Vec::new(),
            friction: Vec::new(),
            nq: 0,
            nv: 0,
        }
    }

    /// Number of generalized positions.
    pub fn nq(&self) -> usize {
        self.nq
    }

    /// Number of generalized velocities.
    pub fn nv(&self) -> usize {
        self.nv
    }

    /// Number of actuators (columns of `B`).
    pub fn nu(&self) -> usize {
        self.actuators.len()
    }

    /// Index of the body called `name`.
    pub fn body_index(&self, name: &str) -> Option<usize> {
        self.bodies.iter().position(|b| b.name == name)
    }

    /// Resolves a name to a body: `"world"`, a tree body, or a prescribed body.
    pub fn find(&self, name: &str) -> Option<BodyId> {
        if name == "world" {
            return Some(BodyId::World);
        }
        if let Some(i) = self.body_index(name) {
            return Some(BodyId::Body(i));
        }
        self.prescribed
            .iter()
            .position(|b| b.name == name)
            .map(BodyId::Prescribed)
    }

    /// The name of a body reference.
    pub fn name_of(&self, id: BodyId) -> &str {
        match id {
            BodyId::World => "world",
            BodyId::Body(i) => &self.bodies[i].name,
            BodyId::Prescribed(i) => &self.prescribed[i].name,
        }
    }

    /// Adds a body hanging from its parent through `joint`. Returns the body index.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a duplicate or reserved name, a non-positive or
    /// non-finite mass (zero only with a zero inertia: a massless frame), an inertia that is
    /// not symmetric positive definite, an unknown parent, a non-unit axis, negative damping
    /// or armature, or a spring that is negative or not on a revolute or prismatic joint;
    /// [`Error::DimensionMismatch`] for a damping or armature vector of the wrong length.
    pub fn add_body(
        &mut self,
        name: &str,
        inertia: SpatialInertia<T>,
        joint: JointSpec<T>,
    ) -> Result<usize> {
        let JointSpec {
            kind,
            parent,
            X_PJ,
            damping,
            armature,
            spring,
        } = joint;
        if name == "world" || self.find(name).is_some() {
            return Err(Error::invalid(
                "body.name",
                name,
                "names must be unique and not `world`",
            ));
        }
        validate_inertia(name, &inertia)?;
        if let Some(p) = parent {
            if p >= self.bodies.len() {
                return Err(Error::invalid(
                    "joint.parent",
                    p,
                    "parent must be added before child",
                ));
            }
        }
        if let JointKind::Revolute { axis } | JointKind::Prismatic { axis } = kind {
            if (axis.norm() - 1.0).abs() >= 1e-9 || !axis.iter().all(|x| x.is_finite()) {
                return Err(Error::invalid(
                    "joint.axis",
                    format!("{axis:?}"),
                    "axis must be a unit vector",
                ));
            }
        }
        if damping.len() != kind.nv() {
            return Err(Error::DimensionMismatch {
                what: format!("damping of joint of body `{name}`"),
                expected: kind.nv(),
                found: damping.len(),
            });
        }
        if damping.iter().any(|d| d.re() < 0.0 || !d.re().is_finite()) {
            return Err(Error::invalid(
                "joint.damping",
                format!("{:?}", damping.iter().map(|d| d.re()).collect::<Vec<_>>()),
                "damping must be finite and ≥ 0",
            ));
        }
        if armature.len() != kind.nv() {
            return Err(Error::DimensionMismatch {
                what: format!("armature of joint of body `{name}`"),
                expected: kind.nv(),
                found: armature.len(),
            });
        }
        if armature.iter().any(|a| a.re() < 0.0 || !a.re().is_finite()) {
            return Err(Error::invalid(
                "joint.armature",
                format!("{:?}", armature.iter().map(|a| a.re()).collect::<Vec<_>>()),
                "armature must be finite and ≥ 0",
            ));
        }
        if let Some(s) = &spring {
            if kind.nq() != 1 || kind.nv() != 1 {
                return Err(Error::invalid(
                    "joint.spring",
                    kind.name(),
                    "springs act on revolute and prismatic joints only",
                ));
            }
            let (k, r) = (s.stiffness.re(), s.reference.re());
            if !(k >= 0.0 && k.is_finite() && r.is_finite()) {
                return Err(Error::invalid(
                    "joint.spring",
                    format!("stiffness {k}, reference {r}"),
                    "stiffness must be finite and ≥ 0, the reference finite",
                ));
            }
        }
        self.bodies.push(Body {
            name: name.to_string(),
            inertia,
        });
        self.joints.push(Joint {
            kind,
            parent,
            X_PJ,
            damping,
            armature,
            spring,
            q_start: self.nq,
            v_start: self.nv,
        });
        self.nq += kind.nq();
        self.nv += kind.nv();
        Ok(self.bodies.len() - 1)
    }

    /// Adds a body with prescribed motion. Returns its index among prescribed bodies.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a duplicate name.
    pub fn add_prescribed(&mut self, body: PrescribedBody) -> Result<usize> {
        if body.name == "world" || self.find(&body.name).is_some() {
            return Err(Error::invalid(
                "body.name",
                &body.name,
                "names must be unique and not `world`",
            ));
        }
        self.prescribed.push(body);
        Ok(self.prescribed.len() - 1)
    }

    /// Declares velocity `index` actuated; returns the actuator index (column of `B`).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if `index ≥ nv`.
    pub fn add_actuator(&mut self, index: usize) -> Result<usize> {
        if index >= self.nv {
            return Err(Error::invalid(
                "actuator",
                index,
                "velocity index out of range",
            ));
        }
        self.actuators.push(index);
        self.transmissions.push(Transmission::DIRECT);
        Ok(self.actuators.len() - 1)
    }

    /// Sets how the input of actuator `actuator` reaches its joint (a gear, an input range,
    /// a position servo); [`Transmission::DIRECT`] until set.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for an actuator out of range, an invalid transmission
    /// ([`Transmission::validate`]), or a servo on a velocity without its own coordinate
    /// (a free or ball joint).
    pub fn set_transmission(&mut self, actuator: usize, transmission: Transmission) -> Result<()> {
        transmission.validate()?;
        let Some(&v_index) = self.actuators.get(actuator) else {
            return Err(Error::invalid("actuator", actuator, "an actuator index"));
        };
        if matches!(transmission.kind, TransmissionKind::Servo { .. }) {
            self.coordinate_of(v_index)?;
        }
        self.transmissions[actuator] = transmission;
        Ok(())
    }

    /// The position index of velocity `v_index` when `q̇ = v` for it (a revolute or
    /// prismatic joint).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a velocity out of range or of another joint kind.
    pub fn coordinate_of(&self, v_index: usize) -> Result<usize> {
        self.joints
            .iter()
            .find(|j| j.v_start <= v_index && v_index < j.v_start + j.kind.nv())
            .filter(|j| j.kind.nv() == 1 && j.kind.nq() == 1)
            .map(|j| j.q_start)
            .ok_or_else(|| {
                Error::invalid(
                    "joint velocity",
                    v_index,
                    "the velocity of a revolute or prismatic joint",
                )
            })
    }

    /// Limits the one-velocity joint of body `body` to `[lower, upper]` (rad or m).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a body out of range, a joint that is not revolute or
    /// prismatic, or invalid limits ([`JointLimit::validate`]).
    pub fn add_limit(&mut self, body: usize, lower: f64, upper: f64) -> Result<()> {
        let v_index = self.single_velocity(body)?;
        let limit = JointLimit {
            q_index: self.coordinate_of(v_index)?,
            v_index,
            lower,
            upper,
        };
        limit.validate()?;
        self.limits.push(limit);
        Ok(())
    }

    /// Couples the joint of body `follower` to that of `leader`:
    /// `q_f = multiplier · q_l + offset`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for bodies out of range, joints that are not revolute or
    /// prismatic, a body coupled to itself, a non-finite multiplier or offset.
    pub fn add_coupler(
        &mut self,
        follower: usize,
        leader: usize,
        multiplier: f64,
        offset: f64,
    ) -> Result<()> {
        if follower == leader {
            return Err(Error::invalid("coupler", follower, "two different joints"));
        }
        if !(multiplier.is_finite() && offset.is_finite()) {
            return Err(Error::invalid(
                "coupler",
                format!("multiplier {multiplier}, offset {offset}"),
                "finite numbers",
            ));
        }
        let (f, l) = (
            self.single_velocity(follower)?,
            self.single_velocity(leader)?,
        );
        self.couplers.push(Coupler {
            follower: (self.coordinate_of(f)?, f),
            leader: (self.coordinate_of(l)?, l),
            multiplier,
            offset,
        });
        Ok(())
    }

    /// Coulomb friction of at most `force` (N·m or N) on velocity `v_index`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for a velocity out of range or a force that is not
    /// positive and finite.
    pub fn add_friction(&mut self, v_index: usize, force: f64) -> Result<()> {
        if v_index >= self.nv {
            return Err(Error::invalid("friction", v_index, "a velocity index"));
        }
        if !(force > 0.0 && force.is_finite()) {
            return Err(Error::invalid(
                "friction",
                force,
                "> 0 and finite (N or N·m)",
            ));
        }
        self.friction.push(JointFriction { v_index, force });
        Ok(())
    }

    /// The velocity of body `body`'s joint, when it has exactly one.
    fn single_velocity(&self, body: usize) -> Result<usize> {
        let joint = self
            .joints
            .get(body)
            .ok_or_else(|| Error::invalid("body", body, "a body index"))?;
        if joint.kind.nv() != 1 {
            return Err(Error::invalid(
                "joint",
                &self.bodies[body].name,
                "a revolute or prismatic joint",
            ));
        }
        Ok(joint.v_start)
    }

    /// Body indices of the tree roots' descendants grouped per tree: `tree_of[i]` is the root
    /// ancestor of body `i`.
    pub fn tree_roots(&self) -> Vec<usize> {
        let mut root = vec![0; self.bodies.len()];
        for (i, j) in self.joints.iter().enumerate() {
            root[i] = match j.parent {
                None => i,
                Some(p) => root[p],
            };
        }
        root
    }

    /// Velocity indices of each tree (a clique: `M` couples only the velocities of one tree),
    /// increasing, trees in the order of their roots; trees without velocities are left out.
    pub fn cliques(&self) -> Vec<Vec<usize>> {
        self.clique_structure().0
    }

    /// [`MultibodyModel::cliques`] and the clique of each body (`None` for a tree without
    /// velocities).
    pub fn clique_structure(&self) -> (Vec<Vec<usize>>, Vec<Option<usize>>) {
        let mut structure = CliqueStructure::default();
        self.clique_structure_into(&mut structure);
        (structure.cliques, structure.body_clique)
    }

    /// [`MultibodyModel::clique_structure`] written into `out`, keeping its lists' storage:
    /// nothing allocated once it has held this model's.
    pub fn clique_structure_into(&self, out: &mut CliqueStructure) {
        let CliqueStructure {
            cliques,
            body_clique,
            roots,
            clique_of_root,
        } = out;
        roots.clear();
        roots.resize(self.bodies.len(), 0);
        for (i, j) in self.joints.iter().enumerate() {
            roots[i] = match j.parent {
                None => i,
                Some(p) => roots[p],
            };
        }
        clique_of_root.clear();
        clique_of_root.resize(self.bodies.len(), None);
        let mut used = 0;
        for (i, j) in self.joints.iter().enumerate() {
            if j.kind.nv() == 0 {
                continue;
            }
            let c = *clique_of_root[roots[i]].get_or_insert_with(|| {
                if used == cliques.len() {
                    cliques.push(Vec::new());
                }
                cliques[used].clear();
                used += 1;
                used - 1
            });
            cliques[c].extend(j.v_start..j.v_start + j.kind.nv());
        }
        cliques.truncate(used);
        for c in cliques.iter_mut() {
            c.sort_unstable();
        }
        body_clique.clear();
        body_clique.extend(roots.iter().map(|&r| clique_of_root[r]));
    }

    /// The neutral configuration: zero joint coordinates, identity quaternions.
    pub fn neutral_configuration(&self) -> nalgebra::DVector<T> {
        let mut q = nalgebra::DVector::zeros(self.nq);
        for j in &self.joints {
            if let Some(k) = j.kind.quaternion_start() {
                q[j.q_start + k] = T::one();
            }
        }
        q
    }

    /// The retraction `q ⊕ δ` joint by joint (`δ` has nv tangent coordinates, ordered as `v`).
    pub fn retract(
        &self,
        q: &nalgebra::DVector<T>,
        delta: &nalgebra::DVector<T>,
    ) -> nalgebra::DVector<T> {
        let mut out = q.clone();
        for j in &self.joints {
            let (nq, nv) = (j.kind.nq(), j.kind.nv());
            let r = j
                .kind
                .retract(q.rows(j.q_start, nq), delta.rows(j.v_start, nv));
            out.rows_mut(j.q_start, nq).copy_from_slice(&r);
        }
        out
    }

    /// The tangent difference `q1 ⊖ q0` (nv), the inverse of [`MultibodyModel::retract`].
    pub fn difference(
        &self,
        q1: &nalgebra::DVector<T>,
        q0: &nalgebra::DVector<T>,
    ) -> nalgebra::DVector<T> {
        let mut out = nalgebra::DVector::zeros(self.nv);
        for j in &self.joints {
            let (nq, nv) = (j.kind.nq(), j.kind.nv());
            let d = j
                .kind
                .difference(q1.rows(j.q_start, nq), q0.rows(j.q_start, nq));
            out.rows_mut(j.v_start, nv).copy_from_slice(&d);
        }
        out
    }

    /// This model with scalars converted through their real part (e.g. dual → f64).
    pub fn cast<U: Scalar>(&self) -> MultibodyModel<U> {
        let c = |x: &T| lit::<U>(x.re());
        MultibodyModel {
            bodies: self
                .bodies
                .iter()
                .map(|b| Body {
                    name: b.name.clone(),
                    inertia: SpatialInertia {
                        mass: c(&b.inertia.mass),
                        com: b.inertia.com.map(|x| c(&x)),
                        inertia_com: b.inertia.inertia_com.map(|x| c(&x)),
                    },
                })
                .collect(),
            joints: self
                .joints
                .iter()
                .map(|j| Joint {
                    kind: j.kind,
                    parent: j.parent,
                    X_PJ: j.X_PJ.cast(),
                    damping: j.damping.iter().map(c).collect(),
                    armature: j.armature.iter().map(c).collect(),
                    spring: j.spring.map(|s| JointSpring {
                        stiffness: c(&s.stiffness),
                        reference: c(&s.reference),
                    }),
                    q_start: j.q_start,
                    v_start: j.v_start,
                })
                .collect(),
            prescribed: self.prescribed.clone(),
            gravity: self.gravity.map(|x| c(&x)),
            actuators: self.actuators.clone(),
            transmissions: self.transmissions.clone(),
            limits: self.limits.clone(),
            couplers: self.couplers.clone(),
            friction: self.friction.clone(),
            nq: self.nq,
            nv: self.nv,
        }
    }
}

/// Accepts a positive mass with a positive definite rotational inertia, or an exactly zero
/// spatial inertia: a massless frame body, which chains several joints of one physical body
/// (an MJCF body with a slide and a hinge). `M` stays positive definite as long as every
/// chain ends in a body with mass; [`crate::multibody::free_motion_velocity`] reports it
/// otherwise.
fn validate_inertia<T: Scalar>(name: &str, inertia: &SpatialInertia<T>) -> Result<()> {
    let m = inertia.mass.re();
    let massless = m == 0.0
        && inertia.com.iter().all(|x| x.re() == 0.0)
        && inertia.inertia_com.iter().all(|x| x.re() == 0.0);
    if massless {
        return Ok(());
    }
    if !(m > 0.0 && m.is_finite()) {
        return Err(Error::invalid(
            &format!("body `{name}` mass"),
            m,
            "mass must be positive and finite (kg), or the whole inertia zero (a massless frame)",
        ));
    }
    let I: Matrix3<f64> = inertia.inertia_com.map(|x| x.re());
    let sym = (I - I.transpose()).norm() <= 1e-12 * I.norm().max(1.0);
    let finite = I
        .iter()
        .chain(inertia.com.map(|x| x.re()).iter())
        .all(|x| x.is_finite());
    if !(finite && sym && I.cholesky().is_some()) {
        return Err(Error::invalid(
            &format!("body `{name}` inertia"),
            format!("{:?}", I.as_slice()),
            "rotational inertia must be finite, symmetric and positive definite (kg·m²)",
        ));
    }
    // Principal moments of a real mass distribution satisfy A + B ≥ C (MuJoCo's compiler
    // refuses the others); round-off of a thin rod's A + 0 = A is allowed.
    let moments = I.symmetric_eigenvalues();
    let total = moments.sum();
    if (0..3).any(|k| total - 2.0 * moments[k] < -1e-9 * total) {
        return Err(Error::invalid(
            &format!("body `{name}` inertia"),
            format!("principal moments {:?}", moments.as_slice()),
            "principal moments A, B, C with A + B ≥ C (the triangle inequality of a real body)",
        ));
    }
    Ok(())
}

/// The cliques of a model and the clique of each body
/// ([`MultibodyModel::clique_structure_into`]), with the lists that compute them.
#[derive(Clone, Debug, Default)]
pub struct CliqueStructure {
    /// Velocity indices of each tree, increasing ([`MultibodyModel::cliques`]).
    pub cliques: Vec<Vec<usize>>,
    /// The clique of each body, `None` for a tree without velocities.
    pub body_clique: Vec<Option<usize>>,
    roots: Vec<usize>,
    clique_of_root: Vec<Option<usize>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ball() -> SpatialInertia<f64> {
        SpatialInertia {
            mass: 1.0,
            com: Vector3::zeros(),
            inertia_com: Matrix3::identity() * 0.01,
        }
    }

    #[test]
    fn rejects_bad_bodies() {
        let mut m = MultibodyModel::<f64>::new(Vector3::new(0.0, 0.0, -9.81));
        let mut bad = ball();
        bad.mass = -1.0;
        assert!(m
            .add_body("a", bad, JointSpec::new(JointKind::Free))
            .is_err());
        assert!(m
            .add_body(
                "a",
                ball(),
                JointSpec {
                    parent: Some(3),
                    ..JointSpec::new(JointKind::Free)
                }
            )
            .is_err());
        assert!(m
            .add_body(
                "a",
                ball(),
                JointSpec {
                    damping: vec![0.0; 2],
                    ..JointSpec::new(JointKind::Free)
                }
            )
            .is_err());
        // Positive definite but no real body: 0.1 + 0.1 < 0.3.
        let mut flat = ball();
        flat.inertia_com = Matrix3::from_diagonal(&Vector3::new(0.1, 0.1, 0.3));
        let e = m
            .add_body("flat", flat, JointSpec::new(JointKind::Free))
            .expect_err("the triangle inequality");
        assert!(e.to_string().contains("A + B ≥ C"), "{e}");
        // A thin rod's moments (A, A, 0) sit on the bound and are accepted.
        let mut rod = ball();
        rod.inertia_com = Matrix3::from_diagonal(&Vector3::new(0.01, 0.01, 1e-12));
        m.add_body("rod", rod, JointSpec::new(JointKind::Free))
            .unwrap();
        m.add_body("a", ball(), JointSpec::new(JointKind::Free))
            .unwrap();
        assert!(m
            .add_body("a", ball(), JointSpec::new(JointKind::Free))
            .is_err());
        assert_eq!((m.nq(), m.nv()), (14, 12));
    }
}
