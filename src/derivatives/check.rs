//! The gradient check: IFT step Jacobians against the direct dual path and central finite
//! differences, with the worst relative error per block (state, controls, each parameter).

use std::time::Instant;

use nalgebra::{DMatrix, DVector};

use crate::derivatives::direct::step_jacobians_direct;
pub use crate::derivatives::fd::output_weights;
use crate::derivatives::fd::{step_jacobians_fd, step_jacobians_fd_bounded};
use crate::derivatives::ift::step_jacobians;
use crate::derivatives::parameters::Parameter;
use crate::derivatives::StepJacobians;
use crate::error::Result;
use crate::step::{Simulator, State};

/// Relative solver tolerance during the check: the references need the step converged far
/// below their own error. Newton reaches it quadratically; the cost-stagnation stop is
/// disabled during the check, as it can fire while `v` is accurate to only √ε.
pub const CHECK_TOLERANCE: f64 = 1e-14;

/// The comparison of one block of columns.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockCheck {
    /// `state`, `control`, or the parameter's name.
    pub name: String,
    /// Worst relative error between IFT and central differences ([`column_errors`]).
    pub ift_vs_fd: f64,
    /// Worst relative error between IFT and the direct dual path ([`column_errors`]).
    pub ift_vs_direct: f64,
    /// Worst error bound of the central differences themselves, relative as
    /// [`column_errors`] measures: the least `ift_vs_fd` the reference can resolve
    /// ([`crate::derivatives::fd::step_jacobians_fd_selected`]). Where it exceeds a bar, a
    /// larger `ift_vs_fd` up to it is the reference's scatter, not a wrong derivative.
    pub fd_resolution: f64,
}

/// Agreement of one row or column of the Jacobian.
#[derive(Clone, Debug, PartialEq)]
pub struct Agreement {
    /// The row's output (`δq'[i]`, `v'[i]`) or the column's input (`δq[j]`, `δv[j]`, `u[j]`,
    /// a parameter's name).
    pub name: String,
    /// Relative error between IFT and central differences.
    pub ift_vs_fd: f64,
    /// Relative error between IFT and the direct dual path.
    pub ift_vs_direct: f64,
}

/// The result of [`gradient_check`]: one block per group of columns, and timings (ms per
/// step).
#[derive(Clone, Debug, PartialEq)]
pub struct GradientCheck {
    /// Blocks: the state, the controls (if any), each named parameter.
    pub blocks: Vec<BlockCheck>,
    /// Per output of the step ([`row_errors`]): `δq'[i]`, then `v'[i]`.
    pub rows: Vec<Agreement>,
    /// Per input ([`column_errors`]): `δq[j]`, `δv[j]`, `u[j]`, then each parameter.
    pub columns: Vec<Agreement>,
    /// Plain forward step (ms).
    pub ms_step: f64,
    /// IFT Jacobians (ms).
    pub ms_ift: f64,
    /// Direct dual Jacobians (ms).
    pub ms_direct: f64,
    /// Finite-difference Jacobians (ms).
    pub ms_fd: f64,
}

/// Fraction of the state's own size below which a parameter column is judged against that
/// size: a parameter that moves the state by less than `PARAMETER_FLOOR ‖x'‖` when doubled is
/// nearly inactive at this step, and its column is resolved only to round-off. Two f64
/// evaluations of the same derivative (IFT and direct duals, each from a solve converged to
/// [`CHECK_TOLERANCE`]) differ by about 1e-16 ‖x'‖ there; central differences, whose outputs
/// carry `ε ‖x'‖` and the solver's 1e-14, resolve it to about 1e-13 ‖x'‖ even at a relative
/// step of 1e-2. For the bars of the checks (1e-9 and 1e-6 relative) to sit above that
/// round-off, the floor must be about 1e-7 of the state's size; 1e-6 leaves a margin.
pub const PARAMETER_FLOOR: f64 = 1e-6;

/// The least scale each input's column is judged against (weighted as [`output_weights`]):
/// for a position direction `δq[j]`, 1 (it moves `q'` by itself); for a velocity direction
/// `δv[j]`, `δt` (it moves `q'` by `δt` in free flight); for a control, 0 (no natural scale);
/// for a parameter, whose column is scaled by `|θ|` (the response to a 100 % change),
/// [`PARAMETER_FLOOR`] times `size`, the weighted size `‖W x'‖∞` of the state after the step.
pub fn input_scales(nv: usize, nu: usize, dt: f64, size: f64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|j| match j {
            j if j < nv => 1.0,
            j if j < 2 * nv => dt,
            j if j < 2 * nv + nu => 0.0,
            _ => PARAMETER_FLOOR * size,
        })
        .collect()
}

/// Relative error of each column `j` of `a` against `b`: `‖W (a_j − b_j)‖∞ / max(‖W a_j‖∞,
/// ‖W b_j‖∞, s_j)` with `W` the [`output_weights`] and `s_j` the [`input_scales`] (zero when
/// everything vanishes).
///
/// A column is the directional derivative of the step along one input, so it is compared as
/// one vector, normwise: an entry that is zero by symmetry is judged against how strongly the
/// step responds to that input, not against itself. A state column is judged at least against
/// the perturbation itself: stiff contact can absorb a normal-velocity perturbation down to 1%
/// of its free-flight effect, and then central differences resolve the column only to
/// `ε / (h · 1%)` of its own size, while its error relative to the perturbation stays at `ε/h`.
/// The measure does not depend on an input's unit, so parameters and controls compare alike.
pub fn column_errors(
    a: &DMatrix<f64>,
    b: &DMatrix<f64>,
    weights: &[f64],
    input_scales: &[f64],
) -> Vec<f64> {
    (0..a.ncols())
        .map(|j| {
            let (mut diff, mut scale) = (0.0f64, input_scales[j]);
            for (i, w) in weights.iter().enumerate() {
                diff = diff.max(w * (a[(i, j)] - b[(i, j)]).abs());
                scale = scale.max(w * a[(i, j)].abs()).max(w * b[(i, j)].abs());
            }
            ratio(diff, scale)
        })
        .collect()
}

/// Relative error of each row `i` of `a` against `b`, with each column first divided by its
/// weighted norm `max(‖W a_j‖∞, ‖W b_j‖∞)`: `max_j |a_ij − b_ij| / n_j` over
/// `max_j max(|a_ij|, |b_ij|) / n_j`. It names the outputs where the paths disagree.
pub fn row_errors(a: &DMatrix<f64>, b: &DMatrix<f64>, weights: &[f64]) -> Vec<f64> {
    let norms: Vec<f64> = (0..a.ncols())
        .map(|j| {
            weights.iter().enumerate().fold(0.0f64, |m, (i, w)| {
                m.max(w * a[(i, j)].abs()).max(w * b[(i, j)].abs())
            })
        })
        .collect();
    (0..a.nrows())
        .map(|i| {
            let (mut diff, mut scale) = (0.0f64, 0.0f64);
            for (j, n) in norms.iter().enumerate().filter(|(_, n)| **n > 0.0) {
                diff = diff.max((a[(i, j)] - b[(i, j)]).abs() / n);
                scale = scale.max(a[(i, j)].abs().max(b[(i, j)].abs()) / n);
            }
            ratio(diff, scale)
        })
        .collect()
}

fn ratio(diff: f64, scale: f64) -> f64 {
    if scale > 0.0 {
        diff / scale
    } else {
        diff
    }
}

/// The full Jacobian with parameter columns scaled by `|θ|`: the response to a 100 % change.
fn scaled(j: &StepJacobians, values: &[f64]) -> DMatrix<f64> {
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
    step_jacobians_fd(sim, state, u, params)?;
    let ms_fd = ms(t);
    let (fd, fd_bounds) = step_jacobians_fd_bounded(sim, state, u, params)?;
    let values: Vec<f64> = params.iter().map(|p| p.value(sim)).collect();
    let (a, d, f) = (
        scaled(&ift, &values),
        scaled(&direct, &values),
        scaled(&fd, &values),
    );
    let (nv, dt) = (sim.model.nv(), sim.settings.dt);
    let weights = output_weights(nv, dt);
    let size = ift.next.q.amax().max(dt * ift.next.v.amax());
    let scales = input_scales(nv, u.len(), dt, size, a.ncols());
    let (col_fd, col_direct) = (
        column_errors(&a, &f, &weights, &scales),
        column_errors(&a, &d, &weights, &scales),
    );
    // The bounds are in the columns' own units; parameter columns are scaled by |θ|.
    let resolution: Vec<f64> = (0..a.ncols())
        .map(|j| {
            let theta = j
                .checked_sub(ift.state.ncols() + ift.control.ncols())
                .map_or(1.0, |k| values[k].abs());
            let scale = weights.iter().enumerate().fold(scales[j], |s, (i, w)| {
                s.max(w * a[(i, j)].abs()).max(w * f[(i, j)].abs())
            });
            ratio(fd_bounds[j] * theta, scale)
        })
        .collect();
    let (row_fd, row_direct) = (row_errors(&a, &f, &weights), row_errors(&a, &d, &weights));
    let worst = |e: &[f64]| e.iter().copied().fold(0.0f64, f64::max);
    let (nx, nu) = (ift.state.ncols(), ift.control.ncols());
    let mut blocks = vec![BlockCheck {
        name: "state".into(),
        ift_vs_fd: worst(&col_fd[..nx]),
        ift_vs_direct: worst(&col_direct[..nx]),
        fd_resolution: worst(&resolution[..nx]),
    }];
    if nu > 0 {
        blocks.push(BlockCheck {
            name: "control".into(),
            ift_vs_fd: worst(&col_fd[nx..nx + nu]),
            ift_vs_direct: worst(&col_direct[nx..nx + nu]),
            fd_resolution: worst(&resolution[nx..nx + nu]),
        });
    }
    for (k, name) in ift.parameter_names.iter().enumerate() {
        blocks.push(BlockCheck {
            name: name.clone(),
            ift_vs_fd: col_fd[nx + nu + k],
            ift_vs_direct: col_direct[nx + nu + k],
            fd_resolution: resolution[nx + nu + k],
        });
    }
    let input_names = (0..nv)
        .map(|j| format!("δq[{j}]"))
        .chain((0..nv).map(|j| format!("δv[{j}]")))
        .chain((0..nu).map(|j| format!("u[{j}]")))
        .chain(ift.parameter_names.iter().cloned());
    let columns = input_names
        .zip(col_fd.iter().zip(&col_direct))
        .map(|(name, (&ift_vs_fd, &ift_vs_direct))| Agreement {
            name,
            ift_vs_fd,
            ift_vs_direct,
        })
        .collect();
    let output_names = (0..nv)
        .map(|i| format!("δq'[{i}]"))
        .chain((0..nv).map(|i| format!("v'[{i}]")));
    let rows = output_names
        .zip(row_fd.iter().zip(&row_direct))
        .map(|(name, (&ift_vs_fd, &ift_vs_direct))| Agreement {
            name,
            ift_vs_fd,
            ift_vs_direct,
        })
        .collect();
    Ok(GradientCheck {
        blocks,
        rows,
        columns,
        ms_step,
        ms_ift,
        ms_direct,
        ms_fd,
    })
}
