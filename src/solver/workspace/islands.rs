//! Contact islands (DESIGN "Contact islands"; issue 27, item 2): the step's convex problem
//! split into independent convex problems, solved apart and in parallel.
//!
//! The cost `ℓ(v) = ½‖v − v*‖²_A + Σ_i ℓ_i(J_i v + b_i) + Σ_j ℓ_j(c_j·v)` (ICF eq. (2)) is a
//! sum over the cliques of `A` (one per tree) plus terms that each couple the cliques their
//! Jacobian or row touches. Take the graph whose nodes are the cliques and whose edges are
//! the contacts and constraint rows (joint limits, couplers, servos, joint friction) between
//! them: over each connected component `I_k` (an island) the cost separates,
//! `ℓ(v) = Σ_k ℓ_k(v_k) + Σ_free ½‖v_f − v*_f‖²_A`, so the minimizer is the minimizer of each
//! `ℓ_k` apart, and a clique that no contact or row touches (a body in free flight) takes
//! `v_f = v*_f` with no Newton iteration. The Hessian `H` is block diagonal over the islands;
//! Newton on one island is Newton on the whole with the other blocks frozen, each island with
//! its own exact line search (one step length per island instead of one for all).
//!
//! **Contacts left open.** A Lagged contact apart at the start of the step (friction lagging
//! a zero impulse) has a constant cost wherever its normal velocity is at or above its `v̂`
//! (`ContactPotential::open_above`): it adds nothing to `∇ℓ` or `H` there. The Lagged
//! models take every pair within the contact margin (1 cm), so in a pile such pairs, which
//! seldom push, would join neighbouring columns into one island (the 160-body clutter: 528
//! contacts against SAP's 259 touching ones). [`Islands::split`] leaves out a contact that is
//! open with [`OPEN_SLACK`] to spare at both `v*` and `v0`, and [`Islands::solve`] checks
//! each at the solution: if one closed, it joins the islands it touches and they are solved
//! again from that solution, until none closes. The minimizer of the islands is then the
//! minimizer of the whole cost, every left-out term being constant around it.
//!
//! [`Islands::split`] finds the islands from the layout of the whole problem
//! ([`crate::solver::workspace`]: the clique blocks of each contact's Jacobian, the rows'
//! velocities), with union–find over the cliques. Islands are numbered by their smallest
//! velocity index, and each keeps its velocities, contacts and rows in increasing order, so
//! the split is a function of the problem alone. [`Islands::solve`] cuts each island's
//! problem out (its blocks of `A`, its contacts' Jacobian columns, biases and potentials, its
//! rows with velocities renumbered) into buffers it keeps from step to step, and solves it with
//! its own [`NewtonWorkspace`], in parallel over rayon's threads (on the calling thread when the pool has one or the islands
//! are small, [`PARALLEL_MIN_VELOCITIES`]); the solutions are written
//! back in place by index. While the islands keep their sizes nothing is allocated
//! (`tests/newton_no_alloc.rs`). Each island's solve
//! is sequential, and faer factors with `Par::Seq`, so the result does not depend on the
//! number of threads, bit for bit (`tests/islands.rs`).
//!
//! **Convergence per island.** Each island stops on the criteria of the whole problem
//! (SAP's, DESIGN "Solver"; `crate::solver::newton`) applied to its own velocities:
//! `‖D_k ∇ℓ_k‖ ≤ ε_a + ε_r max(‖D_k A_k (v_k − v0_k)‖, ‖D_k J_kᵀγ_k‖)`, or cost stagnation of
//! `ℓ_k`. The scale on the right is the island's own momentum change and impulse, as MuJoCo
//! scales its tolerance per island: one body landing beside a heavy settled pile must converge
//! relative to its own impulses, where the monolithic test would let it lean on the pile's.
//! Since `Σ_k (ε_a + ε_r s_k)² ≤ 2Kε_a² + 2ε_r² Σ_k s_k²` and `Σ_k s_k² ≤ 2 max(‖D p‖, ‖D Jᵀγ‖)²`,
//! islands that all pass their test leave a whole-problem residual
//! `‖D ∇ℓ‖ ≤ √(2K) ε_a + 2 ε_r max(‖D p‖, ‖D Jᵀγ‖)`: within a factor 2 of the monolithic
//! tolerance (ε_a, 1e-14, is negligible), and islands solved apart agree with the monolithic
//! solve within the solver tolerance.
//!
//! The statistics of a split solve ([`SolverStats`]) report the critical path: `iterations`
//! and `line_search_iterations` of the island that took most Newton iterations, `islands` the
//! number of islands Newton solved and `total_iterations` their sum; residual and tolerance
//! are the root sums of squares of the islands' (so `residual ≤ tolerance` still reads
//! "converged"), the condition estimate the largest island's.
#![allow(non_snake_case)]

use std::borrow::Borrow;

use nalgebra::DVector;
use rayon::prelude::*;

use super::{IterationData, NewtonLayout};
use crate::error::{Error, Result};
use crate::solver::{ConstraintRow, ConvergenceCriterion, ConvexProblem, NewtonWorkspace};
use crate::solver::{SolverParams, SolverStats};

/// Velocities in the islands of a step from which they are solved on rayon's threads: below,
/// the threads cost more than the solves (a 7-joint arm and its two islands: 29 µs of CPU per
/// step on the calling thread against 70 µs handed to a worker, docs/benchmarks.md).
pub const PARALLEL_MIN_VELOCITIES: usize = 96;

/// How far above its `v̂` (m/s) a contact's normal velocity must be, at the free motion and
/// at the start velocity, for the contact to be left out of the islands. A pile's impacts
/// change a neighbour's normal velocity by 0.01-0.4 m/s within a step: with no slack, two
/// steps in three of the 160-body clutter found a contact left out closed at the solution
/// and solved again, with 0.1 m/s one in seventeen; 0.1-0.2 m/s cost least
/// (docs/benchmarks.md, "Contact islands").
pub const OPEN_SLACK: f64 = 0.1;

/// Marks a clique that no contact or row touches (it takes `v = v*`).
const FREE: usize = usize::MAX;

/// The contact islands of one step's problem and the workspaces that solve them.
#[derive(Debug, Default)]
pub(super) struct Islands {
    /// Whether the prepared problem is solved by islands.
    pub(super) active: bool,
    /// Island of each clique, or [`FREE`].
    island_of: Vec<usize>,
    /// Velocities of the free cliques.
    free: Vec<usize>,
    /// The number of each velocity within its island (nv; unused for free velocities).
    local: Vec<usize>,
    /// Contacts whose Jacobian is zero (between the world and prescribed motion only): their
    /// velocity is their bias whatever `v`.
    detached: Vec<usize>,
    /// Contacts left out of the islands: apart and open (constant cost) at the free motion
    /// and at the start velocity. Each is checked at the solution.
    open: Vec<usize>,
    /// Whether each contact is left out ([`Islands::open`]).
    is_open: Vec<bool>,
    /// The solution a split solved again from when an open contact closed.
    restart: DVector<f64>,
    /// The islands, `count` of them in use; the storage of the others is kept for later
    /// steps.
    islands: Vec<Island>,
    count: usize,
    /// Union–find forest over the cliques, reused by every split.
    parent: Vec<usize>,
    /// Whether a contact or row touches each clique.
    touched: Vec<bool>,
    /// The first clique of each contact's Jacobian (`None`: a zero Jacobian).
    contact_clique: Vec<Option<usize>>,
    /// The cliques in the order of their first velocity.
    order: Vec<usize>,
    /// The island of each union–find root.
    island_of_root: Vec<usize>,
}

/// One island: its cliques, velocities, contacts and rows (increasing indices of the whole
/// problem), its cut-out problem and the workspace that solves it.
#[derive(Debug, Default)]
struct Island {
    cliques: Vec<usize>,
    velocities: Vec<usize>,
    contacts: Vec<usize>,
    rows: Vec<usize>,
    /// The island's problem (without `A`, cliques and `J`, [`Island::cut`]), cut out anew
    /// each step into the same storage.
    problem: ConvexProblem<f64>,
    workspace: NewtonWorkspace,
    /// The initial guesses restricted to the island's velocities.
    guesses: Vec<DVector<f64>>,
    /// The result of the island's last solve.
    result: Option<Result<SolverStats>>,
}

/// `x` resized to `n` entries (its storage kept when the size is already `n`).
fn resize_vector(x: &mut DVector<f64>, n: usize) {
    if x.len() != n {
        *x = DVector::zeros(n);
    }
}

/// The root of `x` in the union–find forest `parent`, halving paths on the way.
fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

/// Joins the sets of `a` and `b`, the smaller root becoming the root.
fn union(parent: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    let (lo, hi) = (ra.min(rb), ra.max(rb));
    parent[hi] = lo;
}

impl Islands {
    /// Splits `problem`, whose `layout` is prepared, into islands. The split is used
    /// (`active`) when it has at least two islands that need Newton, or none (every clique
    /// free); with exactly one, the whole problem is solved as one (its free cliques converge
    /// in the first Newton step at no extra iteration), and so is a problem of one clique.
    pub(super) fn split(&mut self, layout: &NewtonLayout, problem: &ConvexProblem<f64>) {
        self.active = false;
        self.count = 0;
        if layout.one_clique {
            return;
        }
        self.find_open(layout, problem);
        self.partition(layout, problem);
    }

    /// Marks the contacts whose potential is constant above a normal velocity
    /// ([`crate::contact::ContactPotential::open_above`]: apart, friction lagging a zero
    /// impulse) and that are above it both at the free motion `v*` and at the start velocity
    /// `v0`, the velocities Newton starts from. Such a contact adds nothing to the cost's
    /// gradient or Hessian while it stays open, so it joins no island; a pile's neighbours
    /// within the contact margin no longer make it one island.
    fn find_open(&mut self, layout: &NewtonLayout, problem: &ConvexProblem<f64>) {
        let J = layout.jacobians();
        self.is_open.clear();
        let open_at = |i: usize, v: &DVector<f64>, v_hat: f64| {
            layout.contact_mul(J, i, v).z + problem.b[i].z >= v_hat + OPEN_SLACK
        };
        self.is_open.extend((0..problem.nc()).map(|i| {
            let attached = layout.block_start[i] < layout.block_start[i + 1];
            attached
                && problem.contacts.open_above(i).is_some_and(|v_hat| {
                    open_at(i, &problem.v_star, v_hat) && open_at(i, &problem.v0, v_hat)
                })
        }));
    }

    /// The islands of the contacts not open and the rows, by union–find over the cliques.
    fn partition(&mut self, layout: &NewtonLayout, problem: &ConvexProblem<f64>) {
        self.active = false;
        self.count = 0;
        let cliques = &layout.pattern.cliques;
        let n = cliques.len();
        let (parent, touched) = (&mut self.parent, &mut self.touched);
        parent.clear();
        parent.extend(0..n);
        touched.clear();
        touched.resize(n, false);
        let contact_clique = &mut self.contact_clique;
        contact_clique.clear();
        for i in 0..problem.nc() {
            let own = &layout.blocks[layout.block_start[i]..layout.block_start[i + 1]];
            if self.is_open[i] {
                contact_clique.push(None);
                continue;
            }
            for b in own {
                touched[b.clique] = true;
                union(parent, own[0].clique, b.clique);
            }
            contact_clique.push(own.first().map(|b| b.clique));
        }
        let row_clique = |row: &ConstraintRow<f64>| layout.clique_of[row.entries[0].0];
        for row in problem.constraints.iter().filter(|r| !r.entries.is_empty()) {
            let first = row_clique(row);
            for &(k, _) in &row.entries {
                let c = layout.clique_of[k];
                touched[c] = true;
                union(parent, first, c);
            }
        }
        // Islands numbered in the order of their smallest velocity index.
        let order = &mut self.order;
        order.clear();
        order.extend(0..n);
        order.sort_by_key(|&c| cliques[c].first().copied().unwrap_or(usize::MAX));
        let island_of_root = &mut self.island_of_root;
        island_of_root.clear();
        island_of_root.resize(n, FREE);
        self.island_of.clear();
        self.island_of.resize(n, FREE);
        self.free.clear();
        for &c in order.iter() {
            if !touched[c] {
                self.free.extend_from_slice(&cliques[c]);
                continue;
            }
            let root = find(parent, c);
            if island_of_root[root] == FREE {
                island_of_root[root] = self.count;
                self.count += 1;
            }
            self.island_of[c] = island_of_root[root];
        }
        self.active = self.count != 1;
        if !self.active {
            return;
        }
        if self.islands.len() < self.count {
            self.islands.resize_with(self.count, Island::default);
        }
        for island in &mut self.islands[..self.count] {
            island.cliques.clear();
            island.velocities.clear();
            island.contacts.clear();
            island.rows.clear();
        }
        for &c in &self.order {
            if self.island_of[c] != FREE {
                let island = &mut self.islands[self.island_of[c]];
                island.cliques.push(c);
                island.velocities.extend_from_slice(&cliques[c]);
            }
        }
        self.local.clear();
        self.local.resize(problem.nv(), usize::MAX);
        for island in &mut self.islands[..self.count] {
            island.velocities.sort_unstable();
            for (l, &k) in island.velocities.iter().enumerate() {
                self.local[k] = l;
            }
        }
        self.detached.clear();
        self.open.clear();
        for (i, &c) in self.contact_clique.iter().enumerate() {
            match c {
                Some(c) => self.islands[self.island_of[c]].contacts.push(i),
                None if self.is_open[i] => self.open.push(i),
                None => self.detached.push(i),
            }
        }
        for (j, row) in problem.constraints.iter().enumerate() {
            if let Some(&(k, _)) = row.entries.first() {
                let island = self.island_of[layout.clique_of[k]];
                self.islands[island].rows.push(j);
            }
        }
    }

    /// Solves every island of the split `problem` from the best of `guesses` for it (the one
    /// of least island cost, the first of equals), in parallel, and writes the solution, the
    /// contacts' and rows' velocities, impulses and Hessians into `data`; free cliques take
    /// `v*`. Each contact left open is evaluated at the solution; if one closed, it joins the
    /// islands it touches and they are solved again, until none closes (the statistics add
    /// the rounds' iterations). With `params.factor_at_solution`, factors the whole `H` at
    /// the solution (block diagonal over the islands) for the derivatives.
    ///
    /// # Errors
    /// The error of the first island (in island order) whose solve failed, its worst
    /// velocity numbered in the whole problem.
    pub(super) fn solve(
        &mut self,
        layout: &NewtonLayout,
        data: &mut IterationData,
        problem: &ConvexProblem<f64>,
        guesses: &[impl Borrow<DVector<f64>> + Sync],
        params: &SolverParams,
    ) -> Result<SolverStats> {
        let mut stats = self.solve_split(layout, data, problem, guesses, params)?;
        while self.close_open(layout, data, problem, &mut stats) {
            // A contact left open closed at the solution: it joins the islands it touches,
            // which are solved again from the solution (the others stop at once).
            self.partition(layout, problem);
            let mut restart = std::mem::take(&mut self.restart);
            resize_vector(&mut restart, data.v.len());
            restart.copy_from(&data.v);
            let again = if self.active {
                self.solve_split(layout, data, problem, &[&restart], params)
            } else {
                let mut whole = *params;
                whole.factor_at_solution = false;
                data.iterate(layout, problem, &restart, &whole)
            };
            self.restart = restart;
            let again = again?;
            stats = SolverStats {
                iterations: stats.iterations + again.iterations,
                line_search_iterations: stats.line_search_iterations + again.line_search_iterations,
                total_iterations: stats.total_iterations + again.total_iterations,
                ..again
            };
            if !self.active {
                break;
            }
        }
        if params.factor_at_solution {
            let shift = data.factor_at_solution(layout, problem, params, &stats)?;
            stats.hessian_shift = stats.hessian_shift.max(shift);
        }
        Ok(stats)
    }

    /// Evaluates the contacts left open at the solution in `data` (into `data` and the cost
    /// of `stats`), and marks those that closed (below their `v̂`) as no longer open.
    /// Returns whether any closed.
    fn close_open(
        &mut self,
        layout: &NewtonLayout,
        data: &mut IterationData,
        problem: &ConvexProblem<f64>,
        stats: &mut SolverStats,
    ) -> bool {
        let J = layout.jacobians();
        let mut closed = false;
        for &i in &self.open {
            let v_c = layout.contact_mul(J, i, &data.v) + problem.b[i];
            if problem
                .contacts
                .open_above(i)
                .is_none_or(|v_hat| v_c.z < v_hat)
            {
                self.is_open[i] = false;
                closed = true;
            }
            let e = problem.contacts.eval(i, &v_c);
            (data.v_c[i], data.gamma[i], data.G[i]) = (v_c, e.gamma, e.G);
            stats.cost += e.cost;
        }
        closed
    }

    /// Solves the islands of the current partition ([`Islands::solve`] but for the open
    /// contacts and the factor at the solution).
    fn solve_split(
        &mut self,
        layout: &NewtonLayout,
        data: &mut IterationData,
        problem: &ConvexProblem<f64>,
        guesses: &[impl Borrow<DVector<f64>> + Sync],
        params: &SolverParams,
    ) -> Result<SolverStats> {
        let mut island_params = *params;
        island_params.factor_at_solution = false;
        let local = &self.local;
        let solve = |island: &mut Island| {
            island.result = Some(island.solve(layout, local, problem, guesses, &island_params))
        };
        // Handing small islands to the pool costs more than it saves: waking the workers,
        // and their spinning for more work, is a good part of a small scene's step.
        let velocities: usize = self.islands[..self.count]
            .iter()
            .map(|island| island.velocities.len())
            .sum();
        if rayon::current_num_threads() > 1 && velocities >= PARALLEL_MIN_VELOCITIES {
            self.islands[..self.count].par_iter_mut().for_each(solve);
        } else {
            self.islands[..self.count].iter_mut().for_each(solve);
        }
        let mut stats = SolverStats {
            contacts: problem.nc(),
            criterion: ConvergenceCriterion::Optimality,
            islands: self.count,
            ..Default::default()
        };
        let (mut residual2, mut tolerance2) = (0.0, 0.0);
        for (k, island) in self.islands[..self.count].iter_mut().enumerate() {
            let result = island
                .result
                .take()
                .expect("invariant: every island was solved");
            let s = result.map_err(|e| global_error(e, &island.velocities))?;
            if k == 0 || s.iterations > stats.iterations {
                stats.iterations = s.iterations;
                stats.line_search_iterations = s.line_search_iterations;
                stats.last_step_length = s.last_step_length;
            }
            stats.total_iterations += s.total_iterations;
            residual2 += s.residual * s.residual;
            tolerance2 += s.tolerance * s.tolerance;
            stats.cost += s.cost;
            if s.criterion == ConvergenceCriterion::CostStagnation {
                stats.criterion = s.criterion;
            }
            stats.condition = match (stats.condition, s.condition) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            stats.hessian_shift = stats.hessian_shift.max(s.hessian_shift);
            island.write_back(data);
        }
        stats.residual = residual2.sqrt();
        stats.tolerance = tolerance2.sqrt();
        for &k in &self.free {
            data.v[k] = problem.v_star[k];
        }
        for &i in &self.detached {
            let e = problem.contacts.eval(i, &problem.b[i]);
            (data.v_c[i], data.gamma[i], data.G[i]) = (problem.b[i], e.gamma, e.G);
            stats.cost += e.cost;
        }
        Ok(stats)
    }
}

impl Island {
    /// Cuts the island's problem out of `problem` and solves it from the guess of least cost
    /// among `guesses` restricted to it.
    fn solve(
        &mut self,
        layout: &NewtonLayout,
        local: &[usize],
        problem: &ConvexProblem<f64>,
        guesses: &[impl Borrow<DVector<f64>> + Sync],
        params: &SolverParams,
    ) -> Result<SolverStats> {
        self.cut(local, problem);
        self.guesses
            .resize_with(guesses.len(), || DVector::zeros(0));
        for (mine, guess) in self.guesses.iter_mut().zip(guesses) {
            resize_vector(mine, self.velocities.len());
            for (x, &k) in mine.iter_mut().zip(&self.velocities) {
                *x = guess.borrow()[k];
            }
        }
        let workspace = &mut self.workspace;
        workspace.layout.prepare_island(
            layout,
            &self.cliques,
            &self.velocities,
            local,
            &self.contacts,
            &self.problem.constraints,
        );
        workspace.data.resize(
            &workspace.layout.pattern,
            self.velocities.len(),
            self.contacts.len(),
            self.rows.len(),
        );
        workspace.islands.active = false;
        self.workspace
            .iterate_from_least_cost(&self.problem, &self.guesses, params)
    }

    /// The island's problem but for `A`, its cliques and `J`, which stay empty: the island's
    /// layout reads them from the whole problem's ([`NewtonLayout::prepare_island`]). That
    /// is `v*`, `v0`, its contacts' biases and potentials, its rows with velocities
    /// renumbered; velocities in the island's increasing order. `local` numbers each
    /// velocity within its island.
    fn cut(&mut self, local: &[usize], problem: &ConvexProblem<f64>) {
        let nv = self.velocities.len();
        let sub = &mut self.problem;
        for (x, full) in [
            (&mut sub.v_star, &problem.v_star),
            (&mut sub.v0, &problem.v0),
        ] {
            resize_vector(x, nv);
            for (x, &k) in x.iter_mut().zip(&self.velocities) {
                *x = full[k];
            }
        }
        sub.b.clear();
        sub.b.extend(self.contacts.iter().map(|&i| problem.b[i]));
        problem
            .contacts
            .gather_into(&self.contacts, &mut sub.contacts);
        sub.constraints.truncate(self.rows.len());
        for (n, &j) in self.rows.iter().enumerate() {
            let row = &problem.constraints[j];
            if n == sub.constraints.len() {
                sub.constraints.push(row.clone());
            }
            let mine = &mut sub.constraints[n];
            mine.entries.clear();
            mine.entries
                .extend(row.entries.iter().map(|&(k, c)| (local[k], c)));
            (mine.kind, mine.R, mine.v_hat, mine.lower, mine.upper) =
                (row.kind, row.R, row.v_hat, row.lower, row.upper);
        }
    }

    /// Writes the island's solution into the whole problem's `data` by index.
    fn write_back(&self, data: &mut IterationData) {
        let w = &self.workspace.data;
        for (l, &k) in self.velocities.iter().enumerate() {
            data.v[k] = w.v[l];
        }
        for (l, &i) in self.contacts.iter().enumerate() {
            (data.v_c[i], data.gamma[i], data.G[i]) = (w.v_c[l], w.gamma[l], w.G[l]);
        }
        for (l, &j) in self.rows.iter().enumerate() {
            (data.row_v[j], data.row_gamma[j], data.row_G[j]) =
                (w.row_v[l], w.row_gamma[l], w.row_G[l]);
        }
    }
}

/// An island's error with its worst velocity numbered in the whole problem (`velocities`,
/// the island's).
fn global_error(error: Error, velocities: &[usize]) -> Error {
    let global = |mut stats: Box<SolverStats>| {
        stats.worst_velocity = stats.worst_velocity.map(|l| velocities[l]);
        stats
    };
    match error {
        Error::NotConverged { stats } => Error::NotConverged {
            stats: global(stats),
        },
        Error::NonFinite { stage, stats } => Error::NonFinite {
            stage,
            stats: global(stats),
        },
        Error::HessianNotPositiveDefinite { pivot, stats } => Error::HessianNotPositiveDefinite {
            pivot,
            stats: global(stats),
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::{ContactParams, ContactPool, HuntCrossley, Lagged};
    use crate::solver::{ConstraintKind, ContactJacobians};
    use nalgebra::{DMatrix, Matrix3xX, Vector3};

    const DT: f64 = 1e-2;
    const K: f64 = 1e6;

    /// A Lagged contact of stiffness [`K`] without dissipation at previous penetration `x0`
    /// (m), at rest at the start of the step.
    fn contact(x0: f64) -> Lagged<f64> {
        let p = ContactParams {
            stiffness: K,
            dissipation: 0.0,
            ..Default::default()
        };
        Lagged::new(HuntCrossley::from_params(&p, x0, DT), &p, 0.0, DT)
    }

    /// Four point masses of 2, 1, 3 and 0.5 kg (cliques of three velocities), contact `i`
    /// between mass `on[i]` and the ground (`v_c` its velocity, the normal along z), and one
    /// coupler row with `entries` (compliance `R`, target velocity `v_hat`).
    fn four_masses(
        on: &[usize],
        contacts: Vec<Lagged<f64>>,
        (v_star, v0): (DVector<f64>, DVector<f64>),
        entries: Vec<(usize, f64)>,
        (R, v_hat): (f64, f64),
    ) -> ConvexProblem<f64> {
        let nv = 12;
        let masses = [2.0, 1.0, 3.0, 0.5];
        let mut J = Matrix3xX::zeros(nv * on.len());
        for (i, &mass) in on.iter().enumerate() {
            J.fixed_view_mut::<3, 3>(0, nv * i + 3 * mass)
                .fill_with_identity();
        }
        ConvexProblem {
            A: DMatrix::from_fn(nv, nv, |i, j| if i == j { masses[i / 3] } else { 0.0 }),
            cliques: (0..4).map(|c| (3 * c..3 * c + 3).collect()).collect(),
            v_star,
            v0,
            J: ContactJacobians::from_dense(&J, nv),
            b: vec![Vector3::zeros(); on.len()],
            contacts: ContactPool::Lagged(contacts),
            constraints: vec![ConstraintRow {
                kind: ConstraintKind::Coupler(0),
                entries,
                R,
                v_hat,
                lower: None,
                upper: None,
            }],
        }
    }

    /// The split solve's velocities agree with the whole problem's solve within the two
    /// solves' tolerance: the cost is `A`-strongly convex, so
    /// `‖v₁ − v₂‖_A ≤ ‖∇ℓ(v₁)‖_{A⁻¹} + ‖∇ℓ(v₂)‖_{A⁻¹}`, for a diagonal `A` the sum of the
    /// residuals `‖D ∇ℓ‖` the solves report.
    fn assert_agrees_with_whole(
        problem: &ConvexProblem<f64>,
        split: &NewtonWorkspace,
        split_residual: f64,
    ) {
        let mut whole = NewtonWorkspace::default();
        whole.prepare(problem);
        let stats = whole
            .iterate(problem, &problem.v0, &SolverParams::default())
            .unwrap();
        let d = split.v() - whole.v();
        let gap = d.dot(&(&problem.A * &d)).sqrt();
        let bound = split_residual + stats.residual;
        assert!(gap <= bound, "‖Δv‖_A = {gap:e} > {bound:e}");
    }

    /// The first mass pressed into the ground by a contact, the second and third joined by a
    /// coupler row along x, the fourth free.
    fn problem() -> ConvexProblem<f64> {
        let v_star = DVector::from_fn(12, |i, _| {
            if i % 3 == 2 {
                -9.81 * DT
            } else {
                0.1 * i as f64
            }
        });
        four_masses(
            &[0],
            vec![contact(2.0 * 9.81 / K)],
            (v_star, DVector::zeros(12)),
            vec![(3, 1.0), (6, -1.0)],
            (1e-3, 0.05),
        )
    }

    /// The contact and the coupler make two islands, numbered by their first velocity; the
    /// free mass takes `v*` exactly; the velocities agree with the whole problem's solve
    /// within the tolerance ([`assert_agrees_with_whole`]).
    #[test]
    fn a_coupler_joins_two_cliques_into_one_island() {
        let problem = problem();
        let mut split = NewtonWorkspace::default();
        split.prepare_islands(&problem);
        assert!(split.by_islands());
        let stats = split
            .iterate(&problem, &problem.v0, &SolverParams::default())
            .unwrap();
        assert_eq!(stats.islands, 2);
        let islands = &split.islands;
        assert_eq!(islands.islands[0].velocities, vec![0, 1, 2]);
        assert_eq!(islands.islands[1].velocities, vec![3, 4, 5, 6, 7, 8]);
        assert_eq!(islands.islands[1].rows, vec![0]);
        assert_eq!(islands.free, vec![9, 10, 11]);
        assert_eq!(split.v().rows(9, 3), problem.v_star.rows(9, 3));
        assert_agrees_with_whole(&problem, &split, stats.residual);
        // The coupler acts: the coupled velocities differ from their free motion.
        assert!((split.v()[3] - problem.v_star[3]).abs() > 1e-3);
    }

    /// Four point masses over the ground: the first resting on it, the second 1 mm above it
    /// and rising but tied by a coupler along z to the third, which falls fast, the fourth
    /// 1 mm above it and rising. The contacts apart are open at `v*` and `v0`, so the split
    /// leaves them out; the coupler drags the second mass down through its gap, so its
    /// contact closes at the first solution and its island is solved again with it. The
    /// fourth stays open and free (`v = v*`, no impulse). The velocities agree with the whole
    /// problem's solve within the tolerance ([`assert_agrees_with_whole`]).
    #[test]
    fn a_contact_left_open_that_closes_joins_its_island() {
        let mut v_star = DVector::zeros(12);
        (v_star[2], v_star[5], v_star[8], v_star[11]) = (-9.81 * DT, 0.2, -2.0, 0.3);
        let v0 = v_star.map(|v| v.max(0.0));
        let problem = four_masses(
            &[0, 1, 3],
            vec![contact(2.0 * 9.81 / K), contact(-1e-3), contact(-1e-3)],
            (v_star, v0),
            vec![(5, 1.0), (8, -1.0)],
            (1e-4, 0.0),
        );
        let mut split = NewtonWorkspace::default();
        split.prepare_islands(&problem);
        assert_eq!(
            split.islands.open,
            vec![1, 2],
            "both contacts apart start open"
        );
        assert_eq!(split.islands.count, 2);
        let stats = split
            .iterate(&problem, &problem.v0, &SolverParams::default())
            .unwrap();
        assert!(split.by_islands());
        assert_eq!(
            split.islands.open,
            vec![2],
            "the dragged mass's contact closed"
        );
        assert_eq!(split.islands.islands[1].contacts, vec![1]);
        assert_eq!(split.islands.islands[1].rows, vec![0]);
        assert!(split.v()[5] < -0.1 && split.gamma()[1].z > 0.0);
        assert_eq!(split.v().rows(9, 3), problem.v_star.rows(9, 3));
        assert_eq!(split.gamma()[2], Vector3::zeros());
        assert_agrees_with_whole(&problem, &split, stats.residual);
    }
}
