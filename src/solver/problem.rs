//! The convex problem of one step, generic over the scalar.
#![allow(non_snake_case)]

use nalgebra::{DMatrix, DVector, Matrix3xX, Vector3};

use crate::contact::ContactPool;
use crate::scalar::Scalar;
use crate::solver::constraint::ConstraintRow;
use crate::solver::ContactJacobians;

/// Everything [`ConvexProblem::evaluate`] computes at one `v`.
#[derive(Clone, Debug)]
pub struct ProblemEval<T: Scalar> {
    /// Cost ℓ(v) (J).
    pub cost: T,
    /// Gradient `∇ℓ = A(v − v*) − Jᵀγ` (N·s, nv): the momentum residual.
    pub gradient: DVector<T>,
    /// Hessian `H = A + Σ J_iᵀ G_i J_i` (nv × nv).
    pub hessian: DMatrix<T>,
    /// Generalized contact and constraint impulse `Jᵀγ + Σ_j c_j γ_j` (nv).
    pub generalized_impulse: DVector<T>,
    /// Contact velocities (m/s, contact frames).
    pub v_c: Vec<Vector3<T>>,
    /// Impulses (N·s, contact frames).
    pub gamma: Vec<Vector3<T>>,
}

/// `min_v ½‖v − v*‖²_A + Σ_i ℓ_i(J_i v + b_i) + Σ_j ℓ_j(c_j·v)` (ICF eq. (2) with SAP's
/// constraints, Sec. V).
#[derive(Clone, Debug)]
pub struct ConvexProblem<T: Scalar> {
    /// `A = M + δt D` (nv × nv), symmetric positive definite.
    pub A: DMatrix<T>,
    /// Velocity indices of each clique (one per tree), increasing; they partition `0..nv` and
    /// `A` is zero outside their diagonal blocks ([`crate::multibody::MultibodyModel::cliques`]).
    pub cliques: Vec<Vec<usize>>,
    /// Free-motion velocities v* (nv).
    pub v_star: DVector<T>,
    /// Velocities at the start of the step v0 (nv): the convergence criterion measures
    /// momentum relative to them.
    pub v0: DVector<T>,
    /// Contact Jacobians `J_i` (3 × nv each, contact frame rows t1, t2, n), by their nonzero
    /// columns ([`ContactJacobians`]; [`ConvexProblem::jacobian`] for one dense).
    pub J: ContactJacobians<T>,
    /// Contact velocity biases `b_i` (m/s, contact frame), from prescribed motion.
    pub b: Vec<Vector3<T>>,
    /// The contact potentials.
    pub contacts: ContactPool<T>,
    /// Joint limits, couplers, servos and joint friction: one-dimensional rows
    /// ([`ConstraintRow`]), each adding `ℓ_j(c_j·v)` to the cost.
    pub constraints: Vec<ConstraintRow<T>>,
}

impl<T: Scalar> Default for ConvexProblem<T> {
    /// The problem of no velocities and no contacts: storage a step's assembly fills.
    fn default() -> Self {
        ConvexProblem {
            A: DMatrix::zeros(0, 0),
            cliques: Vec::new(),
            v_star: DVector::zeros(0),
            v0: DVector::zeros(0),
            J: ContactJacobians::new(0),
            b: Vec::new(),
            contacts: ContactPool::Lagged(Vec::new()),
            constraints: Vec::new(),
        }
    }
}

impl<T: Scalar> ConvexProblem<T> {
    /// Number of velocities.
    pub fn nv(&self) -> usize {
        self.v_star.len()
    }

    /// Number of contacts.
    pub fn nc(&self) -> usize {
        self.b.len()
    }

    /// Contact Jacobian `J_i` (3 × nv), dense.
    pub fn jacobian(&self, i: usize) -> Matrix3xX<T> {
        self.J.dense(i)
    }

    /// Contact velocity `v_c,i = J_i v + b_i` (m/s).
    pub fn contact_velocity(&self, i: usize, v: &DVector<T>) -> Vector3<T> {
        self.J.mul(i, v) + self.b[i]
    }

    /// Cost ℓ(v) (J).
    pub fn cost(&self, v: &DVector<T>) -> T {
        let dv = v - &self.v_star;
        let half: T = crate::scalar::lit(0.5);
        let mut ell = dv.dot(&(&self.A * &dv)) * half;
        for i in 0..self.nc() {
            ell += self.contacts.eval(i, &self.contact_velocity(i, v)).cost;
        }
        for row in &self.constraints {
            ell += row.eval(row.velocity(v.as_slice())).cost;
        }
        ell
    }

    /// Cost, gradient, Hessian and impulses at `v`, in one pass over the contacts:
    /// `∇ℓ = A(v − v*) − Σ J_iᵀγ_i`, `H = A + Σ J_iᵀ G_i J_i`.
    pub fn evaluate(&self, v: &DVector<T>) -> ProblemEval<T> {
        let half: T = crate::scalar::lit(0.5);
        let dv = v - &self.v_star;
        let A_dv = &self.A * &dv;
        let mut eval = ProblemEval {
            cost: dv.dot(&A_dv) * half,
            gradient: A_dv,
            hessian: self.A.clone(),
            generalized_impulse: DVector::zeros(self.nv()),
            v_c: Vec::with_capacity(self.nc()),
            gamma: Vec::with_capacity(self.nc()),
        };
        for i in 0..self.nc() {
            let v_c = self.contact_velocity(i, v);
            let e = self.contacts.eval(i, &v_c);
            eval.cost += e.cost;
            self.J
                .transpose_add(i, T::one(), &e.gamma, &mut eval.generalized_impulse);
            // H_ab += J_aᵀ G J_b over the contact's columns a, b.
            let (index, columns) = self.J.columns(i);
            for (&b, Jb) in index.iter().zip(columns) {
                let GJb = e.G * Jb;
                for (&a, Ja) in index.iter().zip(columns) {
                    eval.hessian[(a, b)] += Ja.dot(&GJb);
                }
            }
            eval.v_c.push(v_c);
            eval.gamma.push(e.gamma);
        }
        for row in &self.constraints {
            let e = row.eval(row.velocity(v.as_slice()));
            eval.cost += e.cost;
            for &(a, ca) in &row.entries {
                eval.generalized_impulse[a] += ca * e.gamma;
                for &(b, cb) in &row.entries {
                    eval.hessian[(a, b)] += e.G * ca * cb;
                }
            }
        }
        eval.gradient -= &eval.generalized_impulse;
        eval
    }

    /// Momentum residual `r(v) = A(v − v*) − Σ J_iᵀ γ_i(J_i v + b_i)` (N·s) = ∇ℓ(v): zero at
    /// the solution (ICF eq. (1)). Written generically so that parameter derivatives
    /// `∂r/∂θ` come from dual numbers.
    pub fn residual(&self, v: &DVector<T>) -> DVector<T> {
        let mut r = &self.A * (v - &self.v_star);
        for i in 0..self.nc() {
            let gamma = self.contacts.eval(i, &self.contact_velocity(i, v)).gamma;
            self.J.transpose_add(i, -T::one(), &gamma, &mut r);
        }
        for row in &self.constraints {
            let gamma = row.eval(row.velocity(v.as_slice())).gamma;
            for &(k, c) in &row.entries {
                r[k] -= c * gamma;
            }
        }
        r
    }
}
