//! The Newton solver's data (ICF ext. Sec. X), made once and reused across iterations and
//! steps: the clique blocks of `A` and of the contact Jacobians, the block Hessian, the
//! factorization and every iterate-sized buffer.
//!
//! [`NewtonWorkspace::prepare`] reads a step's [`ConvexProblem`]: the cliques of `A` (one per
//! tree), each contact Jacobian `J_i` cut into its nonzero clique columns `J_ic`
//! (3 × n_c; read in place, uncut, for a single tree), and the coupled clique pairs, which
//! fix the [`BlockPattern`] of
//! `H = A + Σ_i J_iᵀ G_i J_i`. [`NewtonWorkspace::iterate`] then runs the Newton loop of
//! [`crate::solver::newton`] on blocks only: `J_i v = Σ_c J_ic v_c`,
//! `H_cc = A_cc + Σ_i J_icᵀ G_i J_ic`, `H_ab = Σ_i J_iaᵀ G_i J_ib`. Once a contact pattern has
//! been seen, the loop does not allocate (`tests/newton_no_alloc.rs`).
//!
//! The workspace is two parts, borrowed apart: `NewtonLayout`, what `prepare` reads from the
//! problem and the iterations only read (the cliques, the Jacobian blocks, the Hessian pattern
//! and its pair targets, the blocks of `A`, `D`), and `IterationData`, what the iterations
//! write (the iterate, its contacts and gradient, `H`, its factor and generation, the search
//! direction, the line search's trial).
#![allow(non_snake_case)]

mod islands;

use std::borrow::Borrow;

use nalgebra::{DMatrix, DVector, Matrix3, Vector3};

use crate::contact::{ContactPool, ContactPotential};
use crate::error::{Error, Result};
use crate::solver::factor::{FactorGeneration, NewtonFactor, NewtonFactorRef};
use crate::solver::linalg::{
    condition_estimate, BlockHessian, BlockPattern, ConditionScratch, Factorization, SpdSolver,
};
use crate::solver::line_search::{exact_line_search, LineSearchProblem, Trial};
use crate::solver::slip_reversal;
use crate::solver::{
    ConstraintRow, ConvergenceCriterion, ConvexProblem, SolverParams, SolverStats,
};
use islands::Islands;

/// One nonzero clique block `J_ic` of a contact Jacobian.
#[derive(Clone, Copy, Debug)]
struct JacobianBlock {
    clique: usize,
    /// Start of its 3 × n_c values (column-major) in the Jacobian values
    /// ([`NewtonLayout::jacobians`]).
    offset: usize,
}

/// The Newton solver's reusable data, in two parts borrowed apart: the layout read from the
/// problem once per step, and what each iteration writes; see the module docs.
#[derive(Debug, Default)]
pub struct NewtonWorkspace {
    layout: NewtonLayout,
    data: IterationData,
    /// The step's contact islands, when [`NewtonWorkspace::prepare_islands`] split it.
    islands: Islands,
}

/// What [`NewtonWorkspace::prepare`] reads from a problem, fixed through its iterations: the
/// clique structure, the Jacobian blocks and the Hessian pattern (fixed per contact pattern),
/// the clique blocks of `A` and the scaling `D`.
#[derive(Debug, Default)]
struct NewtonLayout {
    /// Clique of each velocity (nv).
    clique_of: Vec<usize>,
    /// Position of each velocity within its clique (nv).
    local_of: Vec<usize>,
    /// The first velocity of each clique whose velocities are a range.
    range_starts: Vec<Option<usize>>,
    /// Whether there is one clique, the velocities `0..nv` in order: each contact's block is
    /// then its whole Jacobian, 3 × nv at `3 nv i`, with no block lists.
    one_clique: bool,
    /// `A_cc` per clique.
    A_blocks: Vec<DMatrix<f64>>,
    /// Jacobian blocks of all contacts, contact by contact, cliques increasing (none for one
    /// clique).
    blocks: Vec<JacobianBlock>,
    /// Contact `i` owns `blocks[block_start[i]..block_start[i + 1]]`.
    block_start: Vec<usize>,
    /// The clique blocks of the contact Jacobians, 3 × n_c each, column-major.
    jacobian_values: Vec<f64>,
    /// For each contact, the off-diagonal Hessian block of each pair of its blocks.
    pair_targets: Vec<usize>,
    /// Contact `i` owns `pair_targets[pair_start[i]..pair_start[i + 1]]`.
    pair_start: Vec<usize>,
    /// The block pattern of `H`: the cliques and the coupled clique pairs.
    pattern: BlockPattern,
    /// The cliques one contact's Jacobian touches, while its blocks are cut.
    touched: Vec<usize>,
    /// The island's number of each clique of the whole problem, while an island's blocks are
    /// copied ([`NewtonLayout::prepare_island`]).
    island_clique: Vec<usize>,
    /// `D = diag(A)^{-1/2}` (nv).
    D: DVector<f64>,
}

/// What the Newton iterations write: the iterate and its evaluation, the Hessian and its
/// factorization, the search direction and the line search's trial.
#[derive(Debug, Default)]
struct IterationData {
    /// `H` in clique blocks (the pattern of [`NewtonLayout::pattern`]).
    H: BlockHessian,
    /// The factorization of `H` at `factor_v`, valid when `generation` is set.
    factor: Factorization,
    factor_v: DVector<f64>,
    /// The generation of `factor`; `None` when there is no valid factor.
    generation: Option<FactorGeneration>,
    /// The iterate v (nv).
    v: DVector<f64>,
    /// `∇ℓ(v) = A(v − v*) − Jᵀγ` (nv).
    gradient: DVector<f64>,
    /// `Jᵀγ` (nv).
    generalized_impulse: DVector<f64>,
    /// `A(v* − v0)` (nv): with `∇ℓ + Jᵀγ = A(v − v*)`, the step's momentum change
    /// `A(v − v0)` of the optimality criterion without another product by `A`.
    momentum_offset: DVector<f64>,
    /// The Newton direction Δv (nv).
    dv: DVector<f64>,
    scratch_a: DVector<f64>,
    scratch_b: DVector<f64>,
    /// Contact velocities, their changes along Δv, impulses and Hessians (nc each).
    v_c: Vec<Vector3<f64>>,
    dv_c: Vec<Vector3<f64>>,
    gamma: Vec<Vector3<f64>>,
    G: Vec<Matrix3<f64>>,
    /// Contacts whose slip the last Newton direction reversed (nc): their next Hessian takes
    /// the secant curvature along the slip ([`slip_reversal`]).
    reversed: Vec<bool>,
    /// Constraint rows: velocities, their changes along Δv, impulses and curvatures.
    row_v: Vec<f64>,
    row_dv: Vec<f64>,
    row_gamma: Vec<f64>,
    row_G: Vec<f64>,
    /// The contacts at the line search's last trial step.
    trial: Trial,
    condition: ConditionScratch,
}

/// The velocities of a clique: a range (each tree's own velocities, in order: the common
/// case, read as slices) or scattered indices.
#[derive(Clone, Copy, Debug)]
enum Span<'a> {
    Range(usize, usize),
    Indices(&'a [usize]),
}

/// The first velocity of a clique whose velocity indices `idx` are a range.
fn range_start(idx: &[usize]) -> Option<usize> {
    idx.first()
        .copied()
        .filter(|&s| idx.iter().copied().eq(s..s + idx.len()))
}

/// `y[idx] += M x[idx]` for the clique block `M` (n_c × n_c) over the velocities `span`: on
/// slices for a range (every tree and free body), without the index lookups.
fn block_mul_add(M: &DMatrix<f64>, span: Span<'_>, x: &DVector<f64>, y: &mut DVector<f64>) {
    match span {
        Span::Range(s, n) => {
            let (x, y) = (&x.as_slice()[s..s + n], &mut y.as_mut_slice()[s..s + n]);
            if n == FREE_BODY {
                // The clutter's every block: at a size the compiler knows, the loops unroll.
                let x: &[f64; FREE_BODY] = x.try_into().expect("invariant: n = 6");
                let y: &mut [f64; FREE_BODY] = y.try_into().expect("invariant: n = 6");
                dense_mul_add(M.as_slice(), x, y);
            } else {
                dense_mul_add(M.as_slice(), x, y);
            }
        }
        Span::Indices(idx) => {
            for (l, &j) in idx.iter().enumerate() {
                let xj = x[j];
                for (k, &i) in idx.iter().enumerate() {
                    y[i] += M[(k, l)] * xj;
                }
            }
        }
    }
}

/// A free body's velocities: the size of its clique block of `A`.
const FREE_BODY: usize = 6;

/// `y += M x` for `M` stored column-major, column by column (fixed-size arrays unroll).
#[inline(always)]
fn dense_mul_add<X, Y>(M: &[f64], x: &X, y: &mut Y)
where
    X: AsRef<[f64]> + ?Sized,
    Y: AsMut<[f64]> + ?Sized,
{
    let (x, y) = (x.as_ref(), y.as_mut());
    for (column, &xj) in M.chunks_exact(y.len()).zip(x) {
        for (yi, m) in y.iter_mut().zip(column) {
            *yi += m * xj;
        }
    }
}

/// `J_c x[idx]` for a 3 × n_c block stored column-major in `J`.
#[inline(always)]
fn jacobian_block_mul(J: &[f64], span: Span<'_>, x: &DVector<f64>) -> Vector3<f64> {
    let column = |c: &[f64]| Vector3::new(c[0], c[1], c[2]);
    let columns = J.chunks_exact(3);
    match span {
        Span::Range(s, n) => columns
            .zip(&x.as_slice()[s..s + n])
            .fold(Vector3::zeros(), |out, (c, &xj)| out + column(c) * xj),
        Span::Indices(idx) => columns
            .zip(idx)
            .fold(Vector3::zeros(), |out, (c, &j)| out + column(c) * x[j]),
    }
}

/// `y[idx] += J_cᵀ γ` for a 3 × n_c block stored column-major in `J`.
fn jacobian_block_transpose_add(
    J: &[f64],
    span: Span<'_>,
    gamma: &Vector3<f64>,
    y: &mut DVector<f64>,
) {
    let dot = |c: &[f64]| c[0] * gamma.x + c[1] * gamma.y + c[2] * gamma.z;
    let columns = J.chunks_exact(3);
    match span {
        Span::Range(s, n) => {
            for (c, yj) in columns.zip(&mut y.as_mut_slice()[s..s + n]) {
                *yj += dot(c);
            }
        }
        Span::Indices(idx) => {
            for (c, &j) in columns.zip(idx) {
                y[j] += dot(c);
            }
        }
    }
}

/// `H += J_pᵀ G J_q` for 3 × n_p and 3 × n_q blocks stored column-major.
/// `H` (n_p × n_q) is column-major too: each column of `J_q` updates one slice of `H`.
fn add_jt_g_j(H: &mut DMatrix<f64>, Jp: &[f64], G: &Matrix3<f64>, Jq: &[f64]) {
    let rows = H.nrows();
    if rows == 0 {
        return;
    }
    for (column, jq) in H
        .as_mut_slice()
        .chunks_exact_mut(rows)
        .zip(Jq.chunks_exact(3))
    {
        let g = G * Vector3::new(jq[0], jq[1], jq[2]);
        for (h, jp) in column.iter_mut().zip(Jp.chunks_exact(3)) {
            *h += jp[0] * g.x + jp[1] * g.y + jp[2] * g.z;
        }
    }
}

impl NewtonWorkspace {
    /// Reads the structure of `problem`: cliques of `A`, clique blocks of the contact
    /// Jacobians, the Hessian's block pattern. Allocates only for a new pattern or sizes.
    pub fn prepare(&mut self, problem: &ConvexProblem<f64>) {
        self.layout.prepare(problem);
        self.data.resize(
            &self.layout.pattern,
            problem.nv(),
            problem.nc(),
            problem.constraints.len(),
        );
        self.islands.active = false;
    }

    /// [`NewtonWorkspace::prepare`], then splits `problem` into its contact islands
    /// (`workspace/islands.rs`): the next [`NewtonWorkspace::iterate`] (or
    /// [`NewtonWorkspace::iterate_from_least_cost`]) solves each island apart, in parallel,
    /// when there are two or more that need Newton (or none: every body in free flight, which
    /// takes `v = v*`), and the whole problem as one otherwise.
    pub fn prepare_islands(&mut self, problem: &ConvexProblem<f64>) {
        self.prepare(problem);
        self.islands.split(&self.layout, problem);
    }

    /// Whether the prepared problem is solved by islands
    /// ([`NewtonWorkspace::prepare_islands`]).
    pub fn by_islands(&self) -> bool {
        self.islands.active
    }

    /// Newton's method from `v_guess` on the prepared `problem` (ICF ext. Sec. X; the loop
    /// of `crate::solver::newton`). Leaves the solution in the workspace.
    ///
    /// Split into islands, a step whose islands do not all converge is solved again whole:
    /// near round-off (k ≥ 1e13 on the clutter) a small island can stall where the whole
    /// problem's stagnation test stops, and the split is only a faster way to the same
    /// solution.
    ///
    /// # Errors
    /// As [`crate::solver::solve`].
    pub fn iterate(
        &mut self,
        problem: &ConvexProblem<f64>,
        v_guess: &DVector<f64>,
        params: &SolverParams,
    ) -> Result<SolverStats> {
        if self.islands.active {
            if let Ok(stats) =
                self.islands
                    .solve(&self.layout, &mut self.data, problem, &[v_guess], params)
            {
                return Ok(stats);
            }
        }
        self.data.iterate(&self.layout, problem, v_guess, params)
    }

    /// [`NewtonWorkspace::iterate`] from whichever of `guesses` has the least cost ℓ (the
    /// first of equal ones), at one evaluation of the contacts per guess: MuJoCo chooses
    /// between its warm start and the free motion the same way (`mj_solve`'s warm start).
    /// The problem is convex, so the guess of least cost is the one nearest the minimizer in
    /// the cost's own measure.
    ///
    /// # Errors
    /// As [`crate::solver::solve`]; [`Error::InvalidParameter`] for no guess.
    pub fn iterate_from_least_cost(
        &mut self,
        problem: &ConvexProblem<f64>,
        guesses: &[impl Borrow<DVector<f64>> + Sync],
        params: &SolverParams,
    ) -> Result<SolverStats> {
        if self.islands.active {
            if guesses.is_empty() {
                return Err(Error::invalid(
                    "guesses",
                    "none",
                    "at least one initial guess",
                ));
            }
            if let Ok(stats) =
                self.islands
                    .solve(&self.layout, &mut self.data, problem, guesses, params)
            {
                return Ok(stats);
            }
        }
        let mut best: Option<(usize, f64)> = None;
        if guesses.len() > 1 {
            for (i, guess) in guesses.iter().enumerate() {
                self.data.v.copy_from(guess.borrow());
                let cost = self.data.evaluate(&self.layout, problem);
                if cost.is_finite() && best.is_none_or(|(_, c)| cost < c) {
                    best = Some((i, cost));
                }
            }
        }
        let guess = guesses
            .get(best.map_or(0, |(i, _)| i))
            .ok_or_else(|| Error::invalid("guesses", "none", "at least one initial guess"))?;
        self.data
            .iterate(&self.layout, problem, guess.borrow(), params)
    }

    /// The velocities of the last [`NewtonWorkspace::iterate`] (nv).
    pub fn v(&self) -> &DVector<f64> {
        &self.data.v
    }

    /// Contact velocities at [`NewtonWorkspace::v`] (m/s, contact frames).
    pub fn v_c(&self) -> &[Vector3<f64>] {
        &self.data.v_c
    }

    /// Impulses at [`NewtonWorkspace::v`] (N·s, contact frames).
    pub fn gamma(&self) -> &[Vector3<f64>] {
        &self.data.gamma
    }

    /// Constraint row impulses at [`NewtonWorkspace::v`] (N·s or N·m·s), in the order of the
    /// problem's rows.
    pub fn row_impulses(&self) -> &[f64] {
        &self.data.row_gamma
    }

    /// The block pattern of the last prepared problem's Hessian.
    pub fn pattern(&self) -> &BlockPattern {
        &self.layout.pattern
    }

    /// The last factorization with the velocities it belongs to and its generation, if
    /// Newton factored.
    pub fn factor(&self) -> Option<NewtonFactorRef<'_>> {
        self.data.generation.map(|generation| NewtonFactorRef {
            cholesky: &self.data.factor,
            v: &self.data.factor_v,
            generation,
        })
    }

    /// Moves the last factorization out, with its velocities and generation.
    pub fn take_factor(&mut self) -> Option<NewtonFactor> {
        let generation = self.data.generation.take()?;
        Some(NewtonFactor {
            cholesky: std::mem::take(&mut self.data.factor),
            v: std::mem::take(&mut self.data.factor_v),
            generation,
        })
    }
}

impl NewtonLayout {
    /// Reads the layout of `problem`, reusing the storage of the last one.
    fn prepare(&mut self, problem: &ConvexProblem<f64>) {
        let (nv, nc) = (problem.nv(), problem.nc());
        // The last pattern's storage, written over: taken out while the blocks are cut.
        let mut pattern = std::mem::take(&mut self.pattern);
        pattern.cliques.resize_with(problem.cliques.len(), Vec::new);
        for (mine, idx) in pattern.cliques.iter_mut().zip(&problem.cliques) {
            mine.clear();
            mine.extend_from_slice(idx);
        }
        self.number_velocities(&pattern.cliques, nv);
        let cliques = &pattern.cliques;
        self.A_blocks.resize_with(cliques.len(), Default::default);
        for (block, idx) in self.A_blocks.iter_mut().zip(cliques) {
            if block.nrows() != idx.len() {
                *block = DMatrix::zeros(idx.len(), idx.len());
            }
            for (l, &j) in idx.iter().enumerate() {
                for (k, &i) in idx.iter().enumerate() {
                    block[(k, l)] = problem.A[(i, j)];
                }
            }
        }
        // One tree whose velocities are `0..nv` in order (a single free body, an arm): each
        // contact's block is its whole Jacobian, 3 × nv at `3 nv i`, and there are no block
        // lists.
        self.one_clique = cliques.len() == 1 && cliques[0].iter().copied().eq(0..nv);
        self.clear_blocks(&mut pattern);
        if self.one_clique {
            for i in 0..nc {
                let offset = self.jacobian_values.len();
                self.jacobian_values.resize(offset + 3 * nv, 0.0);
                let (index, columns) = problem.J.columns(i);
                for (&k, c) in index.iter().zip(columns) {
                    self.jacobian_values[offset + 3 * k..offset + 3 * k + 3]
                        .copy_from_slice(c.as_slice());
                }
            }
        } else {
            self.cut_blocks(problem, &pattern.cliques, &mut pattern.pairs);
        }
        self.finish_pattern(pattern, &problem.constraints, nc);
        if self.D.len() != nv {
            self.D = DVector::zeros(nv);
        }
        for i in 0..nv {
            self.D[i] = 1.0 / problem.A[(i, i)].sqrt();
        }
    }

    /// The layout of an island of the problem whose layout is `whole`, read from `whole`
    /// without the island's problem's `A` or `J` (which [`Island`](islands) leaves empty): its
    /// cliques `cliques` (numbered in `whole`, in the island's order) with their velocities
    /// renumbered by `local`, the clique blocks of `A` and of the Jacobians of its contacts
    /// `contacts` (numbered in `whole`), its `rows` (renumbered) and `D` restricted to its
    /// `velocities`. The same layout, block for block, as [`NewtonLayout::prepare`] of the
    /// island's problem cut out with dense `A` and `J`.
    fn prepare_island(
        &mut self,
        whole: &NewtonLayout,
        cliques: &[usize],
        velocities: &[usize],
        local: &[usize],
        contacts: &[usize],
        rows: &[ConstraintRow<f64>],
    ) {
        let nv = velocities.len();
        let mut pattern = std::mem::take(&mut self.pattern);
        pattern.cliques.resize_with(cliques.len(), Vec::new);
        for (mine, &c) in pattern.cliques.iter_mut().zip(cliques) {
            mine.clear();
            mine.extend(whole.pattern.cliques[c].iter().map(|&k| local[k]));
        }
        self.number_velocities(&pattern.cliques, nv);
        self.A_blocks.resize_with(cliques.len(), Default::default);
        for (block, &c) in self.A_blocks.iter_mut().zip(cliques) {
            let theirs = &whole.A_blocks[c];
            if block.shape() == theirs.shape() {
                block.copy_from(theirs);
            } else {
                block.clone_from(theirs);
            }
        }
        // For one clique, contact `n`'s single block is its whole Jacobian at `3 nv n`, where
        // the one-clique loops read it.
        self.one_clique = cliques.len() == 1 && pattern.cliques[0].iter().copied().eq(0..nv);
        self.clear_blocks(&mut pattern);
        let island_clique = &mut self.island_clique;
        island_clique.clear();
        island_clique.resize(whole.pattern.cliques.len(), usize::MAX);
        for (l, &c) in cliques.iter().enumerate() {
            island_clique[c] = l;
        }
        for &i in contacts {
            let first = self.blocks.len();
            self.block_start.push(first);
            for b in &whole.blocks[whole.block_start[i]..whole.block_start[i + 1]] {
                let n = whole.pattern.cliques[b.clique].len();
                let offset = self.jacobian_values.len();
                self.jacobian_values
                    .extend_from_slice(&whole.jacobian_values[b.offset..b.offset + 3 * n]);
                self.blocks.push(JacobianBlock {
                    clique: island_clique[b.clique],
                    offset,
                });
            }
            let own = &mut self.blocks[first..];
            own.sort_unstable_by_key(|b| b.clique);
            for (p, a) in own.iter().enumerate() {
                pattern
                    .pairs
                    .extend(own[p + 1..].iter().map(|b| (a.clique, b.clique)));
            }
        }
        self.block_start.push(self.blocks.len());
        self.finish_pattern(pattern, rows, contacts.len());
        if self.D.len() != nv {
            self.D = DVector::zeros(nv);
        }
        for (d, &k) in self.D.iter_mut().zip(velocities) {
            *d = whole.D[k];
        }
    }

    /// The clique and the position in it of each of the `nv` velocities, and the first
    /// velocity of each clique that is a range.
    fn number_velocities(&mut self, cliques: &[Vec<usize>], nv: usize) {
        self.clique_of.clear();
        self.clique_of.resize(nv, usize::MAX);
        self.local_of.clear();
        self.local_of.resize(nv, 0);
        for (c, idx) in cliques.iter().enumerate() {
            for (l, &i) in idx.iter().enumerate() {
                self.clique_of[i] = c;
                self.local_of[i] = l;
            }
        }
        assert!(
            self.clique_of.iter().all(|&c| c != usize::MAX),
            "invariant: the cliques partition the velocities"
        );
        self.range_starts.clear();
        self.range_starts
            .extend(cliques.iter().map(|idx| range_start(idx)));
    }

    /// Empties the block lists and `pattern`'s pairs, keeping their storage.
    fn clear_blocks(&mut self, pattern: &mut BlockPattern) {
        self.blocks.clear();
        self.block_start.clear();
        self.jacobian_values.clear();
        self.pair_targets.clear();
        self.pair_start.clear();
        pattern.pairs.clear();
    }

    /// Adds the clique pairs that `rows` couple (a coupler between two trees) to `pattern`'s
    /// pairs from the contacts, sorts them, and sets the pattern and, with more than one
    /// clique, the pair targets of the `nc` contacts.
    fn finish_pattern(
        &mut self,
        mut pattern: BlockPattern,
        rows: &[ConstraintRow<f64>],
        nc: usize,
    ) {
        if !self.one_clique {
            for row in rows {
                for &(a, _) in &row.entries {
                    for &(b, _) in &row.entries {
                        let (ca, cb) = (self.clique_of[a], self.clique_of[b]);
                        if ca < cb {
                            pattern.pairs.push((ca, cb));
                        }
                    }
                }
            }
            pattern.pairs.sort_unstable();
            pattern.pairs.dedup();
        }
        self.pattern = pattern;
        if !self.one_clique {
            self.find_pair_targets(nc);
        }
    }

    /// Cuts each contact's Jacobian into its clique blocks with a nonzero column (copied into
    /// `jacobian_values`, zero where the Jacobian stores no column); appends the clique pairs
    /// each contact couples to `pairs`.
    fn cut_blocks(
        &mut self,
        problem: &ConvexProblem<f64>,
        cliques: &[Vec<usize>],
        pairs: &mut Vec<(usize, usize)>,
    ) {
        let touched = &mut self.touched;
        for i in 0..problem.nc() {
            self.block_start.push(self.blocks.len());
            let (index, columns) = problem.J.columns(i);
            touched.clear();
            for (&k, column) in index.iter().zip(columns) {
                let c = self.clique_of[k];
                if column.iter().any(|x| *x != 0.0) && touched.last() != Some(&c) {
                    touched.push(c);
                }
            }
            touched.sort_unstable();
            touched.dedup();
            for &c in touched.iter() {
                let offset = self.jacobian_values.len();
                self.jacobian_values
                    .resize(offset + 3 * cliques[c].len(), 0.0);
                for (&k, column) in index.iter().zip(columns) {
                    if self.clique_of[k] == c {
                        let at = offset + 3 * self.local_of[k];
                        self.jacobian_values[at..at + 3].copy_from_slice(column.as_slice());
                    }
                }
                self.blocks.push(JacobianBlock { clique: c, offset });
            }
            for (p, &a) in touched.iter().enumerate() {
                pairs.extend(touched[p + 1..].iter().map(|&b| (a, b)));
            }
        }
        self.block_start.push(self.blocks.len());
    }

    /// For each contact, the off-diagonal Hessian block of each pair of its blocks.
    fn find_pair_targets(&mut self, nc: usize) {
        for i in 0..nc {
            self.pair_start.push(self.pair_targets.len());
            let own = &self.blocks[self.block_start[i]..self.block_start[i + 1]];
            for (p, a) in own.iter().enumerate() {
                for b in &own[p + 1..] {
                    self.pair_targets.push(
                        self.pattern
                            .pair_index(a.clique, b.clique)
                            .expect("invariant: pairs collected above"),
                    );
                }
            }
        }
        self.pair_start.push(self.pair_targets.len());
    }

    /// The values the Jacobian blocks' offsets point into (for one clique, each contact's
    /// whole Jacobian at `3 nv i`).
    fn jacobians(&self) -> &[f64] {
        &self.jacobian_values
    }

    /// The 3 × n_c values (in `J`, [`NewtonLayout::jacobians`]) and velocities of
    /// Jacobian block `b`.
    fn jacobian_block<'a>(&'a self, J: &'a [f64], b: &JacobianBlock) -> (&'a [f64], Span<'a>) {
        let n = self.pattern.cliques[b.clique].len();
        (&J[b.offset..b.offset + 3 * n], self.clique_span(b.clique))
    }

    /// The velocities of clique `c`: a range, or its index list.
    fn clique_span(&self, c: usize) -> Span<'_> {
        let idx = &self.pattern.cliques[c];
        match self.range_starts[c] {
            Some(s) => Span::Range(s, idx.len()),
            None => Span::Indices(idx),
        }
    }

    /// `J_i x` (without the bias), the blocks' values in `J`.
    #[inline(always)]
    fn contact_mul(&self, J: &[f64], i: usize, x: &DVector<f64>) -> Vector3<f64> {
        if self.one_clique {
            let nv = x.len();
            return jacobian_block_mul(&J[3 * nv * i..3 * nv * (i + 1)], Span::Range(0, nv), x);
        }
        self.blocks[self.block_start[i]..self.block_start[i + 1]]
            .iter()
            .map(|b| {
                let (J, span) = self.jacobian_block(J, b);
                jacobian_block_mul(J, span, x)
            })
            .sum()
    }

    /// `y = A x` over the clique blocks.
    fn A_mul(&self, x: &DVector<f64>, y: &mut DVector<f64>) {
        y.fill(0.0);
        for (c, M) in self.A_blocks.iter().enumerate() {
            block_mul_add(M, self.clique_span(c), x, y);
        }
    }

    /// `y += Jᵀ γ = Σ_i J_iᵀ γ_i`, the blocks' values in `J`.
    fn add_transposes(&self, J: &[f64], gamma: &[Vector3<f64>], y: &mut DVector<f64>) {
        if !self.one_clique {
            for (i, gamma) in gamma.iter().enumerate() {
                for b in &self.blocks[self.block_start[i]..self.block_start[i + 1]] {
                    let (J, span) = self.jacobian_block(J, b);
                    jacobian_block_transpose_add(J, span, gamma, y);
                }
            }
            return;
        }
        // One clique: `J` is the problem's, 3 × nv per contact. Four contacts at a time,
        // summed before they are added, so that `y` is not a chain of additions through
        // memory, one per contact.
        let nv = y.len();
        let dot = |c: &[f64], g: &Vector3<f64>| c[0] * g.x + c[1] * g.y + c[2] * g.z;
        let block = |i: usize| &J[3 * nv * i..3 * nv * (i + 1)];
        let quads = gamma.len() - gamma.len() % 4;
        for i in (0..quads).step_by(4) {
            let [b0, b1, b2, b3] = [i, i + 1, i + 2, i + 3].map(block);
            let [g0, g1, g2, g3] = [&gamma[i], &gamma[i + 1], &gamma[i + 2], &gamma[i + 3]];
            for (l, yl) in y.iter_mut().enumerate() {
                let c = 3 * l..3 * l + 3;
                *yl += dot(&b0[c.clone()], g0)
                    + dot(&b1[c.clone()], g1)
                    + dot(&b2[c.clone()], g2)
                    + dot(&b3[c], g3);
            }
        }
        for (i, g) in gamma.iter().enumerate().skip(quads) {
            for (c, yl) in block(i).chunks_exact(3).zip(y.iter_mut()) {
                *yl += dot(c, g);
            }
        }
    }

    /// `H += Σ_j G_j c_jᵀ c_j` over the constraint rows of `problem` with curvatures `row_G`,
    /// into the clique blocks (an off-diagonal block holds the pair with the lower clique
    /// first, so each cross term is added once, from that side).
    fn add_rows(&self, problem: &ConvexProblem<f64>, row_G: &[f64], H: &mut BlockHessian) {
        for (row, &G) in problem.constraints.iter().zip(row_G) {
            if G == 0.0 {
                continue;
            }
            for &(a, ca) in &row.entries {
                for &(b, cb) in &row.entries {
                    let (qa, qb) = (self.clique_of[a], self.clique_of[b]);
                    let (la, lb) = (self.local_of[a], self.local_of[b]);
                    if qa == qb {
                        H.diagonal[qa][(la, lb)] += G * ca * cb;
                    } else if qa < qb {
                        let off = self
                            .pattern
                            .pair_index(qa, qb)
                            .expect("invariant: row pairs collected by prepare");
                        H.off_diagonal[off][(la, lb)] += G * ca * cb;
                    }
                }
            }
        }
    }

    /// Assembles `H = A + Σ J_iᵀ G_i J_i + Σ_j G_j c_jᵀ c_j` into the clique blocks of `H`,
    /// `J` that of `problem`, `G` its contacts' Hessians (nc) and `row_G` its rows'
    /// curvatures.
    fn assemble_hessian(
        &self,
        problem: &ConvexProblem<f64>,
        G: &[Matrix3<f64>],
        row_G: &[f64],
        H: &mut BlockHessian,
    ) {
        let J = self.jacobians();
        for (H_cc, A_cc) in H.diagonal.iter_mut().zip(&self.A_blocks) {
            H_cc.copy_from(A_cc);
        }
        for H_ab in &mut H.off_diagonal {
            H_ab.fill(0.0);
        }
        self.add_rows(problem, row_G, H);
        if self.one_clique {
            let nv = problem.nv();
            for (i, G_i) in G.iter().enumerate() {
                let Ji = &J[3 * nv * i..3 * nv * (i + 1)];
                add_jt_g_j(&mut H.diagonal[0], Ji, G_i, Ji);
            }
            return;
        }
        for (i, G_i) in G.iter().enumerate() {
            let own = self.block_start[i]..self.block_start[i + 1];
            let mut target = self.pair_start[i];
            for p in own.clone() {
                let bp = self.blocks[p];
                let n_p = self.pattern.cliques[bp.clique].len();
                let Jp = &J[bp.offset..bp.offset + 3 * n_p];
                add_jt_g_j(&mut H.diagonal[bp.clique], Jp, G_i, Jp);
                for q in p + 1..own.end {
                    let bq = self.blocks[q];
                    let n_q = self.pattern.cliques[bq.clique].len();
                    let Jq = &J[bq.offset..bq.offset + 3 * n_q];
                    let off = self.pair_targets[target];
                    add_jt_g_j(&mut H.off_diagonal[off], Jp, G_i, Jq);
                    target += 1;
                }
            }
        }
    }
}

impl IterationData {
    /// Sizes the buffers for `nv` velocities, `nc` contacts and `nr` constraint rows and `H`
    /// for `pattern`; drops
    /// the factor of the last problem.
    fn resize(&mut self, pattern: &BlockPattern, nv: usize, nc: usize, nr: usize) {
        self.H.reset_pattern(pattern);
        for buffer in [
            &mut self.v,
            &mut self.gradient,
            &mut self.generalized_impulse,
            &mut self.momentum_offset,
            &mut self.dv,
            &mut self.scratch_a,
            &mut self.scratch_b,
            &mut self.factor_v,
        ] {
            if buffer.len() != nv {
                *buffer = DVector::zeros(nv);
            }
        }
        self.v_c.resize(nc, Vector3::zeros());
        self.dv_c.resize(nc, Vector3::zeros());
        self.gamma.resize(nc, Vector3::zeros());
        self.G.resize(nc, Matrix3::zeros());
        self.reversed.resize(nc, false);
        self.trial.v_c.resize(nc, Vector3::zeros());
        self.trial.gamma.resize(nc, Vector3::zeros());
        self.trial.G.resize(nc, Matrix3::zeros());
        for rows in [
            &mut self.row_v,
            &mut self.row_dv,
            &mut self.row_gamma,
            &mut self.row_G,
            &mut self.trial.row_v,
            &mut self.trial.row_gamma,
            &mut self.trial.row_G,
        ] {
            rows.resize(nr, 0.0);
        }
        self.generation = None;
    }

    /// Contact velocities, impulses and Hessians at `self.v`; the cost ℓ(v), the gradient
    /// `A(v − v*) − Jᵀγ` and `Jᵀγ`.
    fn evaluate(&mut self, layout: &NewtonLayout, problem: &ConvexProblem<f64>) -> f64 {
        let cost = match &problem.contacts {
            ContactPool::Lagged(p) => self.evaluate_contacts(layout, problem, p),
            ContactPool::Similar(p) => self.evaluate_contacts(layout, problem, p),
            ContactPool::Sap(p) => self.evaluate_contacts(layout, problem, p),
            ContactPool::Any(p) => self.evaluate_contacts(layout, problem, p),
        } + self.evaluate_rows(problem);
        self.finish_evaluation(layout, problem, cost)
    }

    /// Contact velocities, impulses and Hessians of `potentials` (those of `problem`) at
    /// `self.v`; their summed cost. One loop per kind of potential, so that its evaluation
    /// inlines.
    fn evaluate_contacts<P: ContactPotential<f64>>(
        &mut self,
        layout: &NewtonLayout,
        problem: &ConvexProblem<f64>,
        potentials: &[P],
    ) -> f64 {
        let mut cost = 0.0;
        self.generalized_impulse.fill(0.0);
        let J = layout.jacobians();
        for (i, (potential, b)) in potentials.iter().zip(&problem.b).enumerate() {
            let v_c = layout.contact_mul(J, i, &self.v) + b;
            let e = potential.eval(&v_c);
            cost += e.cost;
            self.v_c[i] = v_c;
            self.gamma[i] = e.gamma;
            self.G[i] = e.G;
        }
        layout.add_transposes(J, &self.gamma, &mut self.generalized_impulse);
        cost
    }

    /// The constraint rows' velocities, impulses and curvatures at `self.v`, their impulses
    /// added to `Jᵀγ`; their summed cost.
    fn evaluate_rows(&mut self, problem: &ConvexProblem<f64>) -> f64 {
        let mut cost = 0.0;
        for (j, row) in problem.constraints.iter().enumerate() {
            let v = row.velocity(self.v.as_slice());
            let e = row.eval(v);
            cost += e.cost;
            self.row_v[j] = v;
            self.row_gamma[j] = e.gamma;
            self.row_G[j] = e.G;
        }
        self.add_row_impulses(problem);
        cost
    }

    /// `Jᵀγ += Σ_j c_j γ_j` with the rows' current impulses.
    fn add_row_impulses(&mut self, problem: &ConvexProblem<f64>) {
        for (row, &gamma) in problem.constraints.iter().zip(&self.row_gamma) {
            for &(k, c) in &row.entries {
                self.generalized_impulse[k] += c * gamma;
            }
        }
    }

    /// [`IterationData::evaluate`] with the contacts the line search evaluated at the
    /// accepted step, `v_c = v_c,prev + α Δv_c` (equal to `J v + b` up to round-off).
    fn evaluate_from_trial(&mut self, layout: &NewtonLayout, problem: &ConvexProblem<f64>) -> f64 {
        // The trial's lists become the current ones; the current ones, the next trial's.
        std::mem::swap(&mut self.v_c, &mut self.trial.v_c);
        std::mem::swap(&mut self.gamma, &mut self.trial.gamma);
        std::mem::swap(&mut self.G, &mut self.trial.G);
        std::mem::swap(&mut self.row_v, &mut self.trial.row_v);
        std::mem::swap(&mut self.row_gamma, &mut self.trial.row_gamma);
        std::mem::swap(&mut self.row_G, &mut self.trial.row_G);
        self.generalized_impulse.fill(0.0);
        layout.add_transposes(
            layout.jacobians(),
            &self.gamma,
            &mut self.generalized_impulse,
        );
        self.add_row_impulses(problem);
        self.finish_evaluation(layout, problem, self.trial.cost)
    }

    /// The cost and gradient at `self.v` given the contacts' impulses, their summed cost
    /// `contact_cost` and `Jᵀγ`.
    fn finish_evaluation(
        &mut self,
        layout: &NewtonLayout,
        problem: &ConvexProblem<f64>,
        contact_cost: f64,
    ) -> f64 {
        let mut cost = contact_cost;
        // scratch_a = v − v*, gradient = A (v − v*).
        self.scratch_a.copy_from(&self.v);
        self.scratch_a -= &problem.v_star;
        layout.A_mul(&self.scratch_a, &mut self.gradient);
        cost += 0.5 * self.scratch_a.dot(&self.gradient);
        self.gradient -= &self.generalized_impulse;
        cost
    }

    /// Raises the Hessians `G` of the contacts the last direction reversed to the secant
    /// curvature along their slip ([`slip_reversal::raise_to_secant`]); whether any was.
    fn raise_reversed_to_secant(&mut self) -> bool {
        let mut raised = false;
        for (((G, reversed), v_c), gamma) in self
            .G
            .iter_mut()
            .zip(&self.reversed)
            .zip(&self.v_c)
            .zip(&self.gamma)
        {
            if *reversed {
                raised |= slip_reversal::raise_to_secant(v_c, gamma, G);
            }
        }
        raised
    }

    /// Factors the assembled `H` at the current `v`: a new generation.
    ///
    /// A Hessian that is positive definite in exact arithmetic can still fail Cholesky in
    /// floating point once stiff contacts push its equilibrated condition number past
    /// `1/ε` (the clutter at k ≥ 1e13 N/m: diagonal entries from 5e-4 to 3e15, equilibrated
    /// eigenvalues down to 1e-16). The factorization is then retried on
    /// `H + δ diag(H)` with δ = [`HESSIAN_SHIFTS`] in turn — still a descent direction for
    /// the exact line search, which keeps every step a decrease of the convex cost. The
    /// largest δ used is returned (0 without a shift) and recorded in the statistics.
    /// Diagonal equilibration alone does not help: Cholesky's success depends only on the
    /// equilibrated matrix (van der Sluis), which is what it factors already.
    fn factor_hessian(&mut self, params: &SolverParams) -> Result<f64> {
        self.generation = None;
        let mut shift = 0.0;
        let mut result = self.factor.factor_with(params.linear_solver, &self.H);
        for &delta in HESSIAN_SHIFTS {
            if !matches!(result, Err(Error::NotPositiveDefinite { .. })) {
                break;
            }
            // Each retry adds δ − (shift so far) so that the total is δ diag(H₀) up to round-off.
            self.H
                .shift_diagonal_relative((delta - shift) / (1.0 + shift));
            shift = delta;
            result = self.factor.factor_with(params.linear_solver, &self.H);
        }
        result?;
        self.factor_v.copy_from(&self.v);
        self.generation = Some(FactorGeneration::next());
        Ok(shift)
    }

    /// Factors `H` at `self.v` from the contacts' Hessians `G` and the rows' curvatures
    /// `row_G` already there: for a solve by islands, which leaves no factor of the whole
    /// `H`. Returns the shift used ([`IterationData::factor_hessian`]).
    ///
    /// # Errors
    /// [`Error::HessianNotPositiveDefinite`] with `stats`.
    fn factor_at_solution(
        &mut self,
        layout: &NewtonLayout,
        problem: &ConvexProblem<f64>,
        params: &SolverParams,
        stats: &SolverStats,
    ) -> Result<f64> {
        layout.assemble_hessian(problem, &self.G, &self.row_G, &mut self.H);
        self.factor_hessian(params).map_err(|e| match e {
            Error::NotPositiveDefinite { index } => Error::HessianNotPositiveDefinite {
                pivot: index,
                stats: Box::new(stats.clone()),
            },
            other => other,
        })
    }

    /// [`NewtonWorkspace::iterate`] on the prepared `layout`.
    fn iterate(
        &mut self,
        layout: &NewtonLayout,
        problem: &ConvexProblem<f64>,
        v_guess: &DVector<f64>,
        params: &SolverParams,
    ) -> Result<SolverStats> {
        let mut stats = SolverStats {
            contacts: problem.nc(),
            islands: 1,
            ..Default::default()
        };
        self.v.copy_from(v_guess);
        self.scratch_a.copy_from(&problem.v_star);
        self.scratch_a -= &problem.v0;
        layout.A_mul(&self.scratch_a, &mut self.momentum_offset);
        let mut previous_cost = f64::INFINITY;
        self.reversed.fill(false);
        // Whether the last direction came from a Hessian raised at slip reversals: its step
        // can stall before optimality, so only Newton's own step may stop on stagnation.
        let mut secant = false;
        // Whether the line search evaluated the contacts at the current `v` (its last trial).
        let mut from_trial = false;
        loop {
            let cost = if from_trial {
                self.evaluate_from_trial(layout, problem)
            } else {
                self.evaluate(layout, problem)
            };
            // scratch_b = A (v − v0) = ∇ℓ + Jᵀγ + A (v* − v0): the momentum change of the step.
            self.scratch_b.copy_from(&self.gradient);
            self.scratch_b += &self.generalized_impulse;
            self.scratch_b += &self.momentum_offset;
            let scaled_norm = |x: &DVector<f64>, D: &DVector<f64>| {
                x.iter()
                    .zip(D.iter())
                    .map(|(a, d)| (a * d) * (a * d))
                    .sum::<f64>()
                    .sqrt()
            };
            stats.cost = cost;
            stats.residual = scaled_norm(&self.gradient, &layout.D);
            stats.tolerance = params.absolute_tolerance
                + params.relative_tolerance
                    * scaled_norm(&self.scratch_b, &layout.D)
                        .max(scaled_norm(&self.generalized_impulse, &layout.D));
            let optimal = stats.residual <= stats.tolerance;
            if from_trial && !optimal {
                // Only optimality is judged on the line search's evaluation (equal to the
                // contacts at `v` up to round-off); otherwise they are evaluated afresh at `v`
                // and the iteration goes on exactly as without it.
                from_trial = false;
                continue;
            }
            if !(stats.residual.is_finite() && cost.is_finite()) {
                stats.worst_velocity = worst_velocity(&self.gradient, &layout.D);
                return Err(Error::NonFinite {
                    stage: "Newton iteration (cost or gradient)".into(),
                    stats: Box::new(stats),
                });
            }
            let converged = if optimal {
                Some(ConvergenceCriterion::Optimality)
            } else if previous_cost - cost
                <= params.cost_tolerance * cost.abs().max(previous_cost.abs())
                && stats.iterations > 0
                && !secant
            {
                Some(ConvergenceCriterion::CostStagnation)
            } else {
                None
            };
            if let Some(criterion) = converged {
                stats.criterion = criterion;
                if params.factor_at_solution {
                    layout.assemble_hessian(problem, &self.G, &self.row_G, &mut self.H);
                    let shift = self
                        .factor_hessian(params)
                        .map_err(|e| with_stats(e, &stats, &self.gradient, &layout.D))?;
                    stats.hessian_shift = stats.hessian_shift.max(shift);
                }
                if self.generation.is_some() && params.condition_estimate {
                    stats.condition = Some(condition_estimate(
                        &self.H,
                        &self.factor,
                        &mut self.condition,
                    ));
                }
                return Ok(stats);
            }
            if stats.iterations >= params.max_iterations {
                stats.worst_velocity = worst_velocity(&self.gradient, &layout.D);
                return Err(Error::NotConverged {
                    stats: Box::new(stats),
                });
            }
            previous_cost = cost;
            secant = params.reversal_secant && self.raise_reversed_to_secant();
            layout.assemble_hessian(problem, &self.G, &self.row_G, &mut self.H);
            let shift = self
                .factor_hessian(params)
                .map_err(|e| with_stats(e, &stats, &self.gradient, &layout.D))?;
            stats.hessian_shift = stats.hessian_shift.max(shift);
            if secant {
                // Not the Hessian at `v`: no factor for the derivatives or the statistics.
                self.generation = None;
            }
            self.dv.copy_from(&self.gradient);
            self.dv.neg_mut();
            self.factor.solve_in_place(&mut self.dv);
            let J = layout.jacobians();
            for (i, dv_c) in self.dv_c.iter_mut().enumerate() {
                *dv_c = layout.contact_mul(J, i, &self.dv);
            }
            for (row, dv) in problem.constraints.iter().zip(&mut self.row_dv) {
                *dv = row.velocity(self.dv.as_slice());
            }
            // scratch_a = A Δv, scratch_b = v − v*.
            layout.A_mul(&self.dv, &mut self.scratch_a);
            self.scratch_b.copy_from(&self.v);
            self.scratch_b -= &problem.v_star;
            let mut ls = LineSearchProblem {
                a2: self.dv.dot(&self.scratch_a),
                a1: self.scratch_a.dot(&self.scratch_b),
                v_c: &self.v_c,
                dv_c: &self.dv_c,
                contacts: &problem.contacts,
                rows: &problem.constraints,
                row_v: &self.row_v,
                row_dv: &self.row_dv,
                trial: &mut self.trial,
            };
            let search = exact_line_search(
                &mut ls,
                self.gradient.dot(&self.dv),
                params.alpha_max,
                params.max_line_search_iterations,
            );
            let Some((alpha, ls_iterations)) = search else {
                stats.line_search_failed = true;
                stats.worst_velocity = worst_velocity(&self.gradient, &layout.D);
                return Err(Error::NotConverged {
                    stats: Box::new(stats),
                });
            };
            stats.line_search_iterations += ls_iterations;
            stats.last_step_length = Some(alpha);
            stats.iterations += 1;
            stats.total_iterations += 1;
            if params.reversal_secant {
                for ((reversed, v_c), dv_c) in
                    self.reversed.iter_mut().zip(&self.v_c).zip(&self.dv_c)
                {
                    *reversed = slip_reversal::reverses(v_c, dv_c);
                }
            }
            self.v.axpy(alpha, &self.dv, 1.0);
            from_trial = self.trial.alpha == alpha;
        }
    }
}

/// The relative diagonal shifts tried, in turn, when the Newton Hessian fails Cholesky
/// ([`NewtonWorkspace`]'s `factor_hessian`): from a few ulps up to 1e-6, past which the shifted
/// direction would no longer be Newton's.
pub const HESSIAN_SHIFTS: &[f64] = &[1e-14, 1e-12, 1e-10, 1e-8, 1e-6];

/// The velocity with the largest scaled gradient component `|D_i ∇ℓ_i|` (a non-finite one
/// first): where a failed solve is furthest from optimality, for its error message.
fn worst_velocity(gradient: &DVector<f64>, D: &DVector<f64>) -> Option<usize> {
    let score = |(g, d): (&f64, &f64)| {
        let x = (g * d).abs();
        if x.is_finite() {
            x
        } else {
            f64::INFINITY
        }
    };
    gradient
        .iter()
        .zip(D.iter())
        .map(score)
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

/// A failed factorization of the Newton Hessian as [`Error::HessianNotPositiveDefinite`],
/// carrying the statistics of the solve so far; other errors unchanged.
fn with_stats(
    error: Error,
    stats: &SolverStats,
    gradient: &DVector<f64>,
    D: &DVector<f64>,
) -> Error {
    match error {
        Error::NotPositiveDefinite { index } => Error::HessianNotPositiveDefinite {
            pivot: index,
            stats: Box::new(SolverStats {
                worst_velocity: worst_velocity(gradient, D),
                ..stats.clone()
            }),
        },
        other => other,
    }
}
