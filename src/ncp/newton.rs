//! Semismooth Newton with a line search on the Fischer–Burmeister system `Φ(z) = 0` of the
//! MNCP (in place of PATH, Xie & Chakraborty Sec. VI; De Luca, Facchinei & Kanzow 1996).
//!
//! Each iteration takes an element `J` of the generalized Jacobian of Φ and solves the
//! Levenberg–Marquardt-regularized Newton system
//!
//! `(JᵀJ + λ I) d = −JᵀΦ`,  `λ = min(‖Φ‖², λ_max)`,
//!
//! which is the Newton step `J d = −Φ` when `J` is non-singular and Φ small, and stays defined
//! where the MNCP has non-isolated solutions (a separated pair's friction multiplier σ, the
//! point of a flat face with no load). The merit `ψ = ½‖Φ‖²` then decreases along `d`
//! (`∇ψ = JᵀΦ`), and a backtracking Armijo search
//! `ψ(z + αd) ≤ max_{0≤j<M} ψ(z_{k−j}) + c α ∇ψᵀd` picks the step: monotone (M = 1), or
//! non-monotone over the last M merits (Grippo, Lampariello & Lucidi 1986). The iteration
//! stops when `‖Φ‖_∞ ≤ tolerance`; it is warm-started by the caller.
//!
//! No single globalization solves every step: at an impact the merit is a narrow curved
//! valley where the monotone search crawls, while the non-monotone one can leave for a basin
//! with no solution. [`semismooth_newton`] therefore tries [`NcpSolverParams::globalizations`]
//! in turn from the same start (monotone, non-monotone, then a stronger Levenberg–Marquardt
//! weight); the ncp step then tries a cold start, then [`smoothing_continuation`] from both,
//! and last [`scaled_levenberg_marquardt`] (the weight `λ diag(JᵀJ)` in place of `λ I`),
//! before it fails.

#![allow(non_snake_case)]

use std::fmt;

use nalgebra::{DMatrix, DVector};

use crate::error::{Error, Result};

/// Parameters of the semismooth Newton solver.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NcpSolverParams {
    /// Stop when `‖Φ‖_∞` is at most this (mixed units: N·s, m, and their products); nominal
    /// 1e-10, so that every complementarity pair holds to far better than 1e-8.
    pub tolerance: f64,
    /// Newton iterations before the step fails, nominal 100.
    pub max_iterations: usize,
    /// Largest Levenberg–Marquardt weight λ_max, nominal 1e-6.
    pub max_regularization: f64,
    /// Marquardt's scaling of the Levenberg–Marquardt weight: `λ D` with `D = diag(JᵀJ)` in
    /// place of `λ I` (nominal false; [`scaled_levenberg_marquardt`] sets it).
    pub scaled_regularization: bool,
    /// Armijo constant c, nominal 1e-4.
    pub armijo: f64,
    /// Backtracking halvings per line search before giving up on the iteration, nominal 40.
    pub max_line_search_iterations: usize,
    /// How many of the last merits the line search compares with: nominal 1, the monotone
    /// Armijo search; [`NcpSolverParams::globalizations`] retries with 10.
    pub nonmonotone_memory: usize,
}

impl Default for NcpSolverParams {
    fn default() -> Self {
        NcpSolverParams {
            tolerance: 1e-10,
            max_iterations: 100,
            max_regularization: 1e-6,
            scaled_regularization: false,
            armijo: 1e-4,
            max_line_search_iterations: 40,
            nonmonotone_memory: 1,
        }
    }
}

impl NcpSolverParams {
    /// The globalizations tried in turn from the same warm start until one converges: these
    /// parameters (the monotone Armijo search), then the non-monotone search over the last
    /// 10 merits, then a monotone search with a Levenberg–Marquardt weight up to 1e-2. Measured
    /// on cube-topple tilted from −45° to 45° about either axis: each alone leaves some tilts
    /// unconverged; in turn all converge (`tests/ncp_cases.rs`).
    pub fn globalizations(&self) -> [NcpSolverParams; 3] {
        [
            *self,
            NcpSolverParams {
                nonmonotone_memory: 10,
                ..*self
            },
            NcpSolverParams {
                max_regularization: 1e-2,
                ..*self
            },
        ]
    }

    /// Sets the tolerance on `‖Φ‖_∞`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] unless `0 < tolerance < 1`.
    pub fn with_tolerance(mut self, tolerance: f64) -> Result<Self> {
        if !(tolerance > 0.0 && tolerance < 1.0) {
            return Err(Error::invalid("tolerance", tolerance, "must be in (0, 1)"));
        }
        self.tolerance = tolerance;
        Ok(self)
    }

    /// Sets the Newton iteration limit.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for 0.
    pub fn with_max_iterations(mut self, max_iterations: usize) -> Result<Self> {
        if max_iterations == 0 {
            return Err(Error::invalid("max_iterations", 0, "must be at least 1"));
        }
        self.max_iterations = max_iterations;
        Ok(self)
    }
}

/// Statistics of one MNCP solve.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NcpStats {
    /// Newton iterations performed.
    pub iterations: usize,
    /// Backtracking steps summed over the iterations.
    pub line_search_iterations: usize,
    /// Final `‖Φ‖_∞`.
    pub residual: f64,
    /// The tolerance it was held to.
    pub tolerance: f64,
    /// Number of unknowns (= equations).
    pub unknowns: usize,
    /// Number of contact pairs.
    pub contacts: usize,
}

impl fmt::Display for NcpStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} iterations, {} line-search iterations, residual ‖Φ‖∞ = {:.3e} (tolerance {:.3e}), {} unknowns, {} contact pairs",
            self.iterations,
            self.line_search_iterations,
            self.residual,
            self.tolerance,
            self.unknowns,
            self.contacts
        )
    }
}

/// Solves `Φ(z) = 0` from `z` (the warm start), where `system(z)` returns Φ and an element of
/// its generalized Jacobian. On success `z` holds the solution.
///
/// # Errors
/// [`Error::NcpNotConverged`] with the statistics when the iteration limit is reached or the
/// line search cannot decrease ψ; [`Error::NonFinite`]-like failures are reported the same
/// way, with a non-finite residual.
pub fn semismooth_newton(
    z: &mut DVector<f64>,
    contacts: usize,
    params: &NcpSolverParams,
    mut system: impl FnMut(&DVector<f64>) -> (DVector<f64>, DMatrix<f64>),
) -> Result<NcpStats> {
    let start = z.clone();
    let mut spent = (0, 0);
    let mut last = None;
    for (k, attempt) in params.globalizations().into_iter().enumerate() {
        if k > 0 {
            z.copy_from(&start);
        }
        let mut stats = NcpStats {
            tolerance: params.tolerance,
            unknowns: z.len(),
            contacts,
            ..Default::default()
        };
        let result = newton_attempt(z, &attempt, &mut stats, &mut system);
        spent = (
            spent.0 + stats.iterations,
            spent.1 + stats.line_search_iterations,
        );
        (stats.iterations, stats.line_search_iterations) = spent;
        match result {
            Ok(()) => return Ok(stats),
            Err(()) => last = Some(stats),
        }
    }
    Err(Error::NcpNotConverged {
        stats: last.expect("invariant: at least one globalization"),
    })
}

/// Smoothing continuation, the fallback of the ncp step when [`semismooth_newton`] fails from
/// every start: solves the smoothed system `Φ_ε(z) = 0` (each φ_FB replaced by
/// `φ_ε(a, b) = a + b − √(a² + b² + 2ε²)`, whose zeros are `a, b > 0, a b = ε²`) for
/// `ε = smoothing, smoothing/10, …` down to the tolerance, each level from the last level's
/// solution (a level that fails is skipped), then the exact system `Φ_0 = Φ` from there, to
/// the same tolerance as [`semismooth_newton`] (Chen & Mangasarian 1996, Kanzow 1996). The
/// smoothed merit has no kinks where a multiplier and its inequality both vanish, so the
/// iterates follow the interior of the complementarity set instead of stopping at a corner
/// of it. `system(z, ε)` returns `Φ_ε` and its Jacobian; every level uses the monotone search
/// of `params` with its iteration limit.
///
/// # Errors
/// [`Error::NcpNotConverged`] with the statistics of all levels when the exact system is not
/// solved.
pub fn smoothing_continuation(
    z: &mut DVector<f64>,
    contacts: usize,
    params: &NcpSolverParams,
    smoothing: f64,
    mut system: impl FnMut(&DVector<f64>, f64) -> (DVector<f64>, DMatrix<f64>),
) -> Result<NcpStats> {
    let mut stats = NcpStats {
        tolerance: params.tolerance,
        unknowns: z.len(),
        contacts,
        ..Default::default()
    };
    let mut eps = smoothing;
    while eps > params.tolerance {
        let level = NcpSolverParams {
            tolerance: (0.1 * eps).max(params.tolerance),
            max_iterations: stats.iterations + params.max_iterations,
            ..*params
        };
        let start = z.clone();
        if newton_attempt(z, &level, &mut stats, &mut |z| system(z, eps)).is_err() {
            z.copy_from(&start);
        }
        eps *= 0.1;
    }
    let exact = NcpSolverParams {
        max_iterations: stats.iterations + params.max_iterations,
        ..*params
    };
    match newton_attempt(z, &exact, &mut stats, &mut |z| system(z, 0.0)) {
        Ok(()) => Ok(stats),
        Err(()) => Err(Error::NcpNotConverged { stats }),
    }
}

/// The smallest diagonal weight of [`NcpSolverParams::scaled_regularization`], for an unknown
/// the residual (dimensionless) does not depend on at the iterate.
const SCALED_WEIGHT_FLOOR: f64 = 1e-10;

/// Semismooth Newton with Marquardt's scaling of the Levenberg–Marquardt weight, the last
/// resort of the ncp step when [`semismooth_newton`] and [`smoothing_continuation`] fail:
///
/// `(JᵀJ + λ D) d = −JᵀΦ`,  `D = diag(JᵀJ)`,  `λ = min(‖Φ‖², 1e-2)`
///
/// (Marquardt 1963; Moré 1978 for the scaling; λ = ‖Φ‖² after Yamashita & Fukushima 2001),
/// with the non-monotone Armijo search over the last 10 merits and five times the iteration
/// limit of `params`. The scaled weight is invariant to the units of the unknowns: the unscaled
/// `λ I` of [`semismooth_newton`] penalizes a step in an impulse (N·s) as much as one in a
/// point (m), and where an unknown moves the residual little (a normal impulse moves the
/// scaled gap by `δt/(m L)` per N·s) it can forbid the large step the solution needs while J
/// is near singular elsewhere (the ECP along a line contact). `D` weighs each direction by its
/// own curvature, so the step in a weakly coupled unknown stays near the Gauss–Newton step,
/// shrunk by about `1/(1 + λ)`.
///
/// # Errors
/// [`Error::NcpNotConverged`] with the statistics when it does not converge.
pub fn scaled_levenberg_marquardt(
    z: &mut DVector<f64>,
    contacts: usize,
    params: &NcpSolverParams,
    mut system: impl FnMut(&DVector<f64>) -> (DVector<f64>, DMatrix<f64>),
) -> Result<NcpStats> {
    let scaled = NcpSolverParams {
        scaled_regularization: true,
        max_regularization: 1e-2,
        nonmonotone_memory: 10,
        max_iterations: 5 * params.max_iterations,
        ..*params
    };
    let mut stats = NcpStats {
        tolerance: params.tolerance,
        unknowns: z.len(),
        contacts,
        ..Default::default()
    };
    match newton_attempt(z, &scaled, &mut stats, &mut system) {
        Ok(()) => Ok(stats),
        Err(()) => Err(Error::NcpNotConverged { stats }),
    }
}

/// One semismooth Newton run from `z` with one globalization; the statistics in `stats`.
fn newton_attempt(
    z: &mut DVector<f64>,
    params: &NcpSolverParams,
    stats: &mut NcpStats,
    system: &mut impl FnMut(&DVector<f64>) -> (DVector<f64>, DMatrix<f64>),
) -> std::result::Result<(), ()> {
    let (mut phi, mut J) = system(z);
    let memory = params.nonmonotone_memory.max(1);
    let mut merits = std::collections::VecDeque::with_capacity(memory);
    loop {
        stats.residual = phi.amax();
        if !stats.residual.is_finite() {
            return Err(());
        }
        if stats.residual <= params.tolerance {
            return Ok(());
        }
        if stats.iterations >= params.max_iterations {
            return Err(());
        }
        stats.iterations += 1;
        let psi = 0.5 * phi.norm_squared();
        if merits.len() == memory {
            merits.pop_front();
        }
        merits.push_back(psi);
        let reference = merits.iter().copied().fold(psi, f64::max);
        let gradient = J.tr_mul(&phi);
        let lambda = (2.0 * psi).min(params.max_regularization);
        let mut H = J.tr_mul(&J);
        // A relative floor keeps the factorization defined when Φ is tiny and J singular.
        let floor = 1e-14 * H.diagonal().amax().max(1e-300);
        for i in 0..H.nrows() {
            let weight = if params.scaled_regularization {
                H[(i, i)].max(SCALED_WEIGHT_FLOOR)
            } else {
                1.0
            };
            H[(i, i)] += lambda * weight + floor;
        }
        let Some(chol) = H.cholesky() else {
            return Err(());
        };
        let d = -chol.solve(&gradient);
        let slope = gradient.dot(&d);
        let mut alpha = 1.0;
        let mut accepted = None;
        for _ in 0..params.max_line_search_iterations {
            let trial = &*z + &d * alpha;
            let (phi_t, J_t) = system(&trial);
            if 0.5 * phi_t.norm_squared() <= reference + params.armijo * alpha * slope
                && phi_t.iter().all(|x| x.is_finite())
            {
                accepted = Some((trial, phi_t, J_t));
                break;
            }
            stats.line_search_iterations += 1;
            alpha *= 0.5;
        }
        let Some((trial, phi_t, J_t)) = accepted else {
            return Err(());
        };
        *z = trial;
        phi = phi_t;
        J = J_t;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ncp::fischer_burmeister::{fischer_burmeister, fischer_burmeister_gradient};

    /// A one-variable NCP `0 ≤ x ⊥ x − 1 ≥ 0` has the solution x = 1.
    #[test]
    fn solves_a_scalar_complementarity_problem() {
        let mut z = DVector::from_element(1, 5.0);
        let stats = semismooth_newton(&mut z, 0, &NcpSolverParams::default(), |z| {
            let (a, b) = (z[0], z[0] - 1.0);
            let (ga, gb) = fischer_burmeister_gradient(a, b);
            (
                DVector::from_element(1, fischer_burmeister(a, b)),
                DMatrix::from_element(1, 1, ga + gb),
            )
        })
        .expect("converges");
        assert!((z[0] - 1.0).abs() < 1e-10);
        assert!(stats.iterations < 20);
    }

    /// An equation in an unknown of scale 1e6 coupled to an NCP of scale 1:
    /// `u·1e-6 − x = 0`, `0 ≤ x ⊥ x − 1 ≥ 0`, solved by x = 1, u = 1e6. From zero the unscaled
    /// weight `λ I` (λ = min(‖Φ‖², λ_max) with λ_max = 1e-6 or 1e-2, ≫ (∂Φ/∂u)² = 1e-12) moves
    /// u by about `1e-6 |Φ₁| / λ` ≤ 1 per iteration while Φ₁ is of order one, so every
    /// globalization of [`semismooth_newton`] runs out of its iterations far from u = 1e6; the
    /// scaled weight `λ diag(JᵀJ)` takes about the Gauss–Newton step.
    #[test]
    fn marquardt_scaling_moves_a_weakly_coupled_unknown() {
        let system = |z: &DVector<f64>| {
            let (u, x) = (z[0], z[1]);
            let (ga, gb) = fischer_burmeister_gradient(x, x - 1.0);
            (
                DVector::from_vec(vec![u * 1e-6 - x, fischer_burmeister(x, x - 1.0)]),
                DMatrix::from_row_slice(2, 2, &[1e-6, -1.0, 0.0, ga + gb]),
            )
        };
        let params = NcpSolverParams::default();
        let mut z = DVector::zeros(2);
        let unscaled = semismooth_newton(&mut z, 0, &params, system);
        assert!(
            matches!(unscaled, Err(Error::NcpNotConverged { .. })),
            "{unscaled:?}"
        );
        let mut z = DVector::zeros(2);
        let stats = scaled_levenberg_marquardt(&mut z, 0, &params, system).expect("converges");
        assert!(
            (z[1] - 1.0).abs() < 1e-10 && (z[0] - 1e6).abs() < 1e-3,
            "{z}"
        );
        assert!(stats.iterations < 20, "{stats}");
    }

    #[test]
    fn failure_carries_the_statistics() {
        let mut z = DVector::from_element(1, 0.0);
        let params = NcpSolverParams::default()
            .with_max_iterations(3)
            .expect("valid");
        // x² + 1 = 0 has no real solution.
        let err = semismooth_newton(&mut z, 0, &params, |z| {
            (
                DVector::from_element(1, z[0] * z[0] + 1.0),
                DMatrix::from_element(1, 1, 2.0 * z[0]),
            )
        })
        .expect_err("no solution");
        match err {
            Error::NcpNotConverged { stats } => assert!(stats.residual >= 1.0),
            other => panic!("unexpected {other}"),
        }
    }
}
