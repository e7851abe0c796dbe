//! The gradient check: IFT step Jacobians against the direct dual path and central finite
//! differences, with the worst relative error per block (state, controls, each parameter).

use std::time::Instant;

use nalgebra::{DMatrix, DVector};

use crate::derivatives::direct::step_jacobians_direct;
use crate::derivatives::fd::step_jacobians_fd;
use crate::derivatives::ift::step_jacobians;
use crate::derivatives::parameters::Parameter;
use crate::error::Result;
use crate::step::{Simulator, State};

/// Relative solver tolerance during the check: the references need the step converged far
/// below their own error. Newton reaches it quadratically; the cost-stagnation stop is
/// disabled during the check, as it can fire while `v` is accurate to only √ε.
pub const CHECK_TOLERANCE: f64 = 1e-14;

/// Fraction ρ of a row's scale below which entries are compared absolutely.
pub const ROW_FLOOR: f64 = 1e-4;

/// The comparison of one block of columns.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockCheck {
    /// `state`, `control`, or the parameter's name.
    pub name: String,
    /// Worst relative error between IFT and central differences.
    pub ift_vs_fd: f64,
    /// Worst relative error between IFT and the direct dual path.
    pub ift_vs_direct: f64,
    /// Row and column (within the block) of the worst IFT-vs-FD entry.
    pub worst_fd_entry: (usize, usize),
}

/// The result of [`gradient_check`]: one block per group of columns, and timings (ms per
/// step).
#[derive(Clone, Debug, PartialEq)]
pub struct GradientCheck {
    /// Blocks: the state, the controls (if any), each named parameter.
    pub blocks: Vec<BlockCheck>,
    /// Plain forward step (ms).
    pub ms_step: f64,
    /// IFT Jacobians (ms).
    pub ms_ift: f64,
    /// Direct dual Jacobians (ms).
    pub ms_direct: f64,
    /// Finite-difference Jacobians (ms).
    pub ms_fd: f64,
}

/// Worst entry of the corrected relative error `|a − b| / (max(|a|, |b|) + τ_i)` and its
/// position, with `τ_i = ρ s_i` ([`ROW_FLOOR`]) and `s_i` the largest sensitivity of output `i`
/// over the whole Jacobian (`row_scale`). Entries much smaller than how strongly that output
/// responds to anything are compared against that scale instead of themselves: central
/// differences carry noise of about `ε/h ≈ 1e-8` of a row's scale, more through stiff contact,
/// which would otherwise read as large relative errors on entries that are zero by symmetry.
pub fn worst_relative_error(
    a: &DMatrix<f64>,
    b: &DMatrix<f64>,
    row_scale: &[f64],
) -> (f64, (usize, usize)) {
    let mut worst = (0.0, (0, 0));
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            let floor = ROW_FLOOR * row_scale[i] + 1e-300;
            let e = (a[(i, j)] - b[(i, j)]).abs() / (a[(i, j)].abs().max(b[(i, j)].abs()) + floor);
            if e > worst.0 {
                worst = (e, (i, j));
            }
        }
    }
    worst
}

/// The Jacobian with parameter columns scaled by `|θ|`: relative sensitivities, comparable
/// across parameters of any unit.
fn scaled(j: &crate::derivatives::StepJacobians, values: &[f64]) -> DMatrix<f64> {
    let mut full = j.full();
    let first = j.state.ncols() + j.control.ncols();
    for (k, v) in values.iter().enumerate() {
        full.column_mut(first + k).scale_mut(v.abs());
    }
    full
}

/// Runs the three derivative paths on the step from `state` with actuation `u` and compares
/// them. The solver tolerance is tightened to [`CHECK_TOLERANCE`] during the check.
///
/// # Errors
/// Failures of any path.
pub fn gradient_check(
    sim: &mut Simulator,
    state: &State,
    u: &DVector<f64>,
    params: &[Parameter],
) -> Result<GradientCheck> {
    let saved = sim.settings.solver;
    sim.settings.solver.relative_tolerance = CHECK_TOLERANCE;
    sim.settings.solver.absolute_tolerance = 0.0;
    sim.settings.solver.cost_tolerance = 0.0;
    let result = compare(sim, state, u, params);
    sim.settings.solver = saved;
    result
}

fn compare(
    sim: &mut Simulator,
    state: &State,
    u: &DVector<f64>,
    params: &[Parameter],
) -> Result<GradientCheck> {
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    sim.step(state, u)?;
    let ms_step = ms(t);
    let t = Instant::now();
    let ift = step_jacobians(sim, state, u, params)?;
    let ms_ift = ms(t);
    let t = Instant::now();
    let direct = step_jacobians_direct(sim, state, u, params)?;
    let ms_direct = ms(t);
    let t = Instant::now();
    let fd = step_jacobians_fd(sim, state, u, params)?;
    let ms_fd = ms(t);
    let values: Vec<f64> = params.iter().map(|p| p.value(sim)).collect();
    let (a, d, f) = (
        scaled(&ift, &values),
        scaled(&direct, &values),
        scaled(&fd, &values),
    );
    let row_scale: Vec<f64> = (0..a.nrows())
        .map(|i| a.row(i).amax().max(f.row(i).amax()))
        .collect();
    let mut blocks = Vec::new();
    let mut block = |name: String, first: usize, width: usize| {
        let (ift_vs_fd, worst_fd_entry) = worst_relative_error(
            &a.columns(first, width).into_owned(),
            &f.columns(first, width).into_owned(),
            &row_scale,
        );
        let (ift_vs_direct, _) = worst_relative_error(
            &a.columns(first, width).into_owned(),
            &d.columns(first, width).into_owned(),
            &row_scale,
        );
        blocks.push(BlockCheck {
            name,
            ift_vs_fd,
            ift_vs_direct,
            worst_fd_entry,
        });
    };
    let (nx, nu) = (ift.state.ncols(), ift.control.ncols());
    block("state".into(), 0, nx);
    if nu > 0 {
        block("control".into(), nx, nu);
    }
    for (k, name) in ift.parameter_names.iter().enumerate() {
        block(name.clone(), nx + nu + k, 1);
    }
    Ok(GradientCheck {
        blocks,
        ms_step,
        ms_ift,
        ms_direct,
        ms_fd,
    })
}
