//! The contact potentials of a step (ICF Sec. VI): one pool per approximation, each contact's
//! potential made from its pair parameters, its previous penetration `x0 = −φ0`, its normal
//! velocity `v_n0` and, for SAP and the regularized Lagged model, its Delassus estimate.
#![allow(non_snake_case)]

use crate::contact::{Approximation, ContactPool, ContactState};
use crate::error::Result;
use crate::math::block::BlockDiagonalCholesky;
use crate::scalar::Scalar;
use crate::solver::ContactJacobians;
use crate::step::assembled::{Assembled, AssembledContact, AssembledFrame};
use crate::step::delassus::delassus_estimates_with;

/// Builds the potentials of `contacts` (their frames in `frames`) into `pool`, whose Jacobians
/// are `J` (as [`ConvexProblem::J`](crate::solver::ConvexProblem::J)), for the
/// chosen approximation (ICF Sec. VI); `factor` is that of `A`'s clique blocks
/// ([`crate::multibody::FreeMotion::factor`]). Lagged and Similar allocate nothing once the
/// pool has held as many contacts; SAP's and the regularized Lagged model's Delassus
/// estimates allocate their list (and a clique of more than 12 velocities its solve).
///
/// # Errors
/// None today; a `Result` as the Delassus estimates'.
pub(super) fn make_pool<T: Scalar>(
    pool: &mut ContactPool<T>,
    approximation: Approximation,
    contacts: &[AssembledContact<T>],
    frames: &[AssembledFrame<T>],
    J: &ContactJacobians<T>,
    factor: &BlockDiagonalCholesky<T>,
    dt: T,
) -> Result<()> {
    let needs_w = matches!(
        approximation,
        Approximation::Sap | Approximation::RegularizedLagged
    );
    let w = if needs_w {
        delassus_estimates_with(factor, J)
    } else {
        // Not read by Lagged or Similar.
        Vec::new()
    };
    pool.build_into(
        approximation,
        contacts.iter().enumerate().map(|(i, c)| {
            let state = ContactState {
                x0: -c.phi0,
                v_n0: c.v_n0,
                dt,
                // Not read by Lagged or Similar.
                w: w.get(i).copied().unwrap_or_else(T::zero),
            };
            (Assembled::params(frames, c), state)
        }),
    );
    Ok(())
}
