//! Sparse Cholesky `P H Pᵀ = L Lᵀ` with faer (ICF ext. Sec. X): the pattern comes from the
//! clique blocks ([`BlockPattern`]), the fill-reducing ordering `P` from approximate minimum
//! degree (AMD). faer factors supernodally (dense blocks of columns with the same pattern)
//! when its flop-ratio test says the supernodes pay, and column by column (simplicial)
//! otherwise: on the clutter's 40 free bodies it picks the simplicial kernel, which measured
//! 9 % less CPU time for the whole 3 s rollout than forcing supernodes (docs/benchmarks.md, "Scale").
//!
//! The symbolic analysis (ordering, elimination tree, supernodes) runs once per pattern and is
//! kept while the pattern does not change (within a step, and across steps while the contact
//! graph is the same); each Newton iteration only writes the values and refactors
//! numerically, without allocating.
//!
//! The Hessian is written directly in the factorization's order: the stored matrix is the
//! triangle of `P H Pᵀ` that faer's kernel reads (upper for the simplicial kernel, lower for
//! the supernodal one), analyzed with the identity ordering, so faer neither permutes nor
//! transposes `H` at each factorization; the solves apply `P` to the right-hand sides.
#![allow(non_snake_case)]

use std::sync::Mutex;

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::llt::factor::LltError;
use faer::sparse::linalg::amd;
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, CholeskySymbolicParams, LltRef, SymbolicCholesky,
    SymbolicCholeskyRaw, SymmetricOrdering,
};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Side};
use nalgebra::{DMatrix, DVector};

use crate::error::{Error, Result};
use crate::solver::linalg::{BlockHessian, BlockPattern, SpdSolver};

/// Marks the entries of a diagonal block that lie in the triangle not stored.
const UNSTORED: usize = usize::MAX;

/// A compressed sparse column structure (rows sorted in each column).
struct Csc {
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
}

impl Csc {
    /// The structure of the `(column, row)` entries, sorted and deduplicated here.
    fn new(n: usize, mut entries: Vec<(usize, usize)>) -> Self {
        entries.sort_unstable();
        entries.dedup();
        let mut col_ptr = vec![0usize; n + 1];
        for &(j, _) in &entries {
            col_ptr[j + 1] += 1;
        }
        for j in 0..n {
            col_ptr[j + 1] += col_ptr[j];
        }
        let row_idx = entries.iter().map(|&(_, i)| i).collect();
        Csc { col_ptr, row_idx }
    }

    fn structure(&self) -> SymbolicSparseColMatRef<'_, usize> {
        let n = self.col_ptr.len() - 1;
        SymbolicSparseColMatRef::new_checked(n, n, &self.col_ptr, None, &self.row_idx)
    }

    /// The value position of entry `(row, col)`, which must be in the structure.
    fn position(&self, row: usize, col: usize) -> usize {
        let rows = &self.row_idx[self.col_ptr[col]..self.col_ptr[col + 1]];
        self.col_ptr[col]
            + rows
                .binary_search(&row)
                .expect("invariant: every block entry is in the pattern")
    }
}

/// The analyzed pattern: the AMD ordering, the stored triangle of `P H Pᵀ`, where each block
/// entry goes in it, and faer's symbolic factorization of it (identity ordering).
struct Analysis {
    pattern: BlockPattern,
    /// `perm[i]`: the velocity at position `i` of the factorization's order (`(P x)_i`).
    perm: Vec<usize>,
    /// `perm_inv[v]`: the position of velocity `v` in the factorization's order.
    perm_inv: Vec<usize>,
    /// Which triangle of `P H Pᵀ` is stored: the one faer's kernel reads without a copy.
    side: Side,
    csc: Csc,
    /// Per clique, the value position of local entry `(k, l)` at `k + l·n_c` ([`UNSTORED`] in
    /// the other triangle).
    diagonal_positions: Vec<Vec<usize>>,
    /// Per pair `(a, b)`, the value position of local entry `(k, l)` at `k + l·n_a`.
    off_diagonal_positions: Vec<Vec<usize>>,
    symbolic: SymbolicCholesky<usize>,
}

impl Analysis {
    fn new(pattern: &BlockPattern, supernodal: SupernodalThreshold) -> Result<Self> {
        let n = pattern.n();
        let failed = |what: &str, e: faer::sparse::FaerError| {
            Error::invalid("sparse Cholesky", format!("{e:?}"), what)
        };
        // Lower-triangle entries (column, row) of every block, in the velocities' order.
        let mut entries: Vec<(usize, usize)> = Vec::new();
        for idx in &pattern.cliques {
            for &j in idx {
                entries.extend(idx.iter().filter(|&&i| i >= j).map(|&i| (j, i)));
            }
        }
        for &(a, b) in &pattern.pairs {
            for &i in &pattern.cliques[a] {
                for &j in &pattern.cliques[b] {
                    entries.push((i.min(j), i.max(j)));
                }
            }
        }
        let natural = Csc::new(n, entries);
        let mut perm = vec![0usize; n];
        let mut perm_inv = vec![0usize; n];
        let mut amd_scratch = MemBuffer::new(amd::order_scratch::<usize>(n, natural.row_idx.len()));
        amd::order(
            &mut perm,
            &mut perm_inv,
            natural.structure(),
            amd::Control::default(),
            MemStack::new(&mut amd_scratch),
        )
        .map_err(|e| failed("AMD ordering failed", e))?;
        // The permuted pattern as (column, row) of its upper triangle: with the identity
        // ordering faer's symbolic analysis reads the upper triangle only.
        let permuted = |lower: bool| -> Vec<(usize, usize)> {
            let mut entries = Vec::with_capacity(natural.row_idx.len());
            for j in 0..n {
                for &i in &natural.row_idx[natural.col_ptr[j]..natural.col_ptr[j + 1]] {
                    let (a, b) = (perm_inv[i], perm_inv[j]);
                    let (lo, hi) = (a.min(b), a.max(b));
                    entries.push(if lower { (lo, hi) } else { (hi, lo) });
                }
            }
            entries
        };
        let upper = Csc::new(n, permuted(false));
        let symbolic = factorize_symbolic_cholesky(
            upper.structure(),
            Side::Upper,
            SymmetricOrdering::Identity,
            CholeskySymbolicParams {
                supernodal_flop_ratio_threshold: supernodal,
                ..Default::default()
            },
        )
        .map_err(|e| failed("symbolic analysis failed", e))?;
        // faer's simplicial kernel reads the upper triangle, its supernodal kernel the lower
        // one; given the other, it would transpose `H` into scratch at every factorization.
        let (side, csc) = match symbolic.raw() {
            SymbolicCholeskyRaw::Simplicial(_) => (Side::Upper, upper),
            SymbolicCholeskyRaw::Supernodal(_) => (Side::Lower, Csc::new(n, permuted(true))),
        };
        let position = |i: usize, j: usize| -> usize {
            let (a, b) = (perm_inv[i], perm_inv[j]);
            let (lo, hi) = (a.min(b), a.max(b));
            match side {
                Side::Upper => csc.position(lo, hi),
                Side::Lower => csc.position(hi, lo),
            }
        };
        // A diagonal block is symmetric: its entry (i, j) is stored once, taken from the block's
        // lower triangle `i ≥ j`.
        let diagonal_positions = pattern
            .cliques
            .iter()
            .map(|idx| {
                let mut pos = Vec::with_capacity(idx.len() * idx.len());
                for &j in idx {
                    for &i in idx {
                        pos.push(if i >= j { position(i, j) } else { UNSTORED });
                    }
                }
                pos
            })
            .collect();
        let off_diagonal_positions = pattern
            .pairs
            .iter()
            .map(|&(a, b)| {
                let mut pos =
                    Vec::with_capacity(pattern.cliques[a].len() * pattern.cliques[b].len());
                for &j in &pattern.cliques[b] {
                    for &i in &pattern.cliques[a] {
                        pos.push(position(i, j));
                    }
                }
                pos
            })
            .collect();
        Ok(Analysis {
            pattern: pattern.clone(),
            perm,
            perm_inv,
            side,
            csc,
            diagonal_positions,
            off_diagonal_positions,
            symbolic,
        })
    }
}

/// The buffers of the numeric factorization and of the solves, sized at analysis.
struct Scratch {
    /// faer's workspace of the numeric factorization and of one-column solves.
    buffer: MemBuffer,
    /// The right-hand sides in the factorization's order (n × columns, column major).
    permuted: Vec<f64>,
}

/// Sparse Cholesky factorization (faer; supernodal or simplicial, see the module docs) of a
/// clique-block Hessian, for large systems with many cliques.
pub struct SparseCholesky {
    analysis: Option<Analysis>,
    /// faer's flop-ratio threshold for the supernodal kernel.
    supernodal: SupernodalThreshold,
    /// Values of the stored triangle of `P H Pᵀ` in the analyzed pattern.
    values: Vec<f64>,
    /// Values of `L` (faer's layout).
    L: Vec<f64>,
    /// A mutex, not a `RefCell`, so that simulators can be shared across rayon threads.
    scratch: Mutex<Option<Scratch>>,
    factored: bool,
    analyses: usize,
}

impl Default for SparseCholesky {
    fn default() -> Self {
        SparseCholesky {
            analysis: None,
            supernodal: SupernodalThreshold::AUTO,
            values: Vec::new(),
            L: Vec::new(),
            scratch: Mutex::new(None),
            factored: false,
            analyses: 0,
        }
    }
}

impl std::fmt::Debug for SparseCholesky {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseCholesky")
            .field("n", &self.analysis.as_ref().map(|a| a.pattern.n()))
            .field("analyses", &self.analyses)
            .field("factored", &self.factored)
            .finish()
    }
}

impl SparseCholesky {
    /// How many symbolic analyses this factorization has run: one per new pattern.
    pub fn num_analyses(&self) -> usize {
        self.analyses
    }

    /// Nonzeros of `L` (its storage, supernodes included).
    pub fn factor_len(&self) -> usize {
        self.L.len()
    }

    /// Whether faer chose the supernodal factorization for the analyzed pattern.
    pub fn is_supernodal(&self) -> bool {
        self.analysis
            .as_ref()
            .is_some_and(|a| matches!(a.symbolic.raw(), SymbolicCholeskyRaw::Supernodal(_)))
    }

    /// Runs the symbolic analysis for `pattern` unless it is the one analyzed last.
    fn analyze(&mut self, pattern: &BlockPattern) -> Result<()> {
        if self
            .analysis
            .as_ref()
            .is_some_and(|a| &a.pattern == pattern)
        {
            return Ok(());
        }
        let analysis = Analysis::new(pattern, self.supernodal)?;
        let sym = &analysis.symbolic;
        let req = StackReq::any_of(&[
            sym.factorize_numeric_llt_scratch::<f64>(Par::Seq, Default::default()),
            sym.solve_in_place_scratch::<f64>(1, Par::Seq),
        ]);
        self.values = vec![0.0; analysis.csc.row_idx.len()];
        self.L = vec![0.0; sym.len_val()];
        self.scratch = Mutex::new(Some(Scratch {
            buffer: MemBuffer::new(req),
            permuted: vec![0.0; pattern.n()],
        }));
        self.analysis = Some(analysis);
        self.analyses += 1;
        Ok(())
    }

    /// `rhs ← H⁻¹ rhs = Pᵀ L⁻ᵀ L⁻¹ P rhs`, column by column.
    fn solve_columns(&self, mut rhs: MatMut<'_, f64>) {
        assert!(self.factored, "invariant: solve after a successful factor");
        let analysis = self.analysis.as_ref().expect("invariant: factored");
        let llt = LltRef::new(&analysis.symbolic, &self.L);
        let (n, k) = (rhs.nrows(), rhs.ncols());
        let mut scratch = self
            .scratch
            .lock()
            .expect("invariant: no panic while the scratch is held");
        let Scratch { buffer, permuted } = scratch.as_mut().expect("invariant: sized at analysis");
        if permuted.len() < n * k {
            permuted.resize(n * k, 0.0);
        }
        let permuted = &mut permuted[..n * k];
        for (j, x) in permuted.chunks_exact_mut(n).enumerate() {
            for (x_i, &v) in x.iter_mut().zip(&analysis.perm) {
                *x_i = rhs[(v, j)];
            }
        }
        let x = MatMut::from_column_major_slice_mut(permuted, n, k);
        if k == 1 {
            llt.solve_in_place_with_conj(Conj::No, x, Par::Seq, MemStack::new(buffer));
        } else {
            let mut buffer =
                MemBuffer::new(analysis.symbolic.solve_in_place_scratch::<f64>(k, Par::Seq));
            llt.solve_in_place_with_conj(Conj::No, x, Par::Seq, MemStack::new(&mut buffer));
        }
        for (j, x) in permuted.chunks_exact(n).enumerate() {
            for (v, &i) in analysis.perm_inv.iter().enumerate() {
                rhs[(v, j)] = x[i];
            }
        }
    }
}

impl SpdSolver for SparseCholesky {
    fn factor(&mut self, H: &BlockHessian) -> Result<()> {
        self.factored = false;
        self.analyze(&H.pattern)?;
        let analysis = self.analysis.as_ref().expect("invariant: analyzed above");
        for (block, pos) in H.diagonal.iter().zip(&analysis.diagonal_positions) {
            for (x, &p) in block.iter().zip(pos) {
                if p != UNSTORED {
                    self.values[p] = *x;
                }
            }
        }
        for (block, pos) in H.off_diagonal.iter().zip(&analysis.off_diagonal_positions) {
            for (x, &p) in block.iter().zip(pos) {
                self.values[p] = *x;
            }
        }
        let A = SparseColMatRef::new(analysis.csc.structure(), &self.values);
        let mut scratch = self
            .scratch
            .lock()
            .expect("invariant: no panic while the scratch is held");
        let buffer = &mut scratch
            .as_mut()
            .expect("invariant: sized at analysis")
            .buffer;
        // Identity ordering and the kernel's own side: faer factors `A` as given, no copy.
        let result = analysis.symbolic.factorize_numeric_llt(
            &mut self.L,
            A,
            analysis.side,
            Default::default(),
            Par::Seq,
            MemStack::new(buffer),
            Default::default(),
        );
        match result {
            Ok(_) => {
                self.factored = true;
                Ok(())
            }
            Err(LltError::NonPositivePivot { index }) => Err(Error::NotPositiveDefinite { index }),
        }
    }

    fn solve_in_place(&self, rhs: &mut DVector<f64>) {
        let n = rhs.len();
        self.solve_columns(MatMut::from_column_major_slice_mut(
            rhs.as_mut_slice(),
            n,
            1,
        ));
    }

    fn solve_many_in_place(&self, rhs: &mut DMatrix<f64>) {
        let (n, k) = rhs.shape();
        self.solve_columns(MatMut::from_column_major_slice_mut(
            rhs.as_mut_slice(),
            n,
            k,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::linalg::DenseCholesky;

    /// A random SPD block matrix: `ncliques` cliques of 6, a chain of couplings.
    fn chain(ncliques: usize, seed: u64) -> BlockHessian {
        random(
            ncliques,
            (0..ncliques.saturating_sub(1))
                .map(|c| (c, c + 1))
                .collect(),
            8.0,
            seed,
        )
    }

    /// A random SPD block matrix: `ncliques` cliques of 6, clique 0 coupled to every other
    /// (an arrow). Eliminated first, as in the velocities' order, clique 0 would fill all of
    /// `L`; AMD eliminates it last.
    fn arrow(ncliques: usize, seed: u64) -> BlockHessian {
        let shift = 8.0 * ncliques as f64;
        random(
            ncliques,
            (1..ncliques).map(|c| (0, c)).collect(),
            shift,
            seed,
        )
    }

    /// Random values for `ncliques` cliques of 6 and `pairs`, SPD by the diagonal `shift`.
    fn random(ncliques: usize, pairs: Vec<(usize, usize)>, shift: f64, seed: u64) -> BlockHessian {
        let pattern = BlockPattern {
            cliques: (0..ncliques)
                .map(|c| (6 * c..6 * c + 6).collect())
                .collect(),
            pairs,
        };
        let mut H = BlockHessian::zeros(pattern);
        let mut s = seed;
        let mut rnd = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        for block in &mut H.off_diagonal {
            block.iter_mut().for_each(|x| *x = rnd());
        }
        for block in &mut H.diagonal {
            let B = DMatrix::from_fn(6, 6, |_, _| rnd());
            *block = &B * B.transpose() + DMatrix::identity(6, 6) * shift;
        }
        H
    }

    #[test]
    fn matches_dense_and_reuses_the_analysis() {
        let H = chain(7, 3);
        let mut dense_H = DMatrix::zeros(0, 0);
        H.to_dense(&mut dense_H);
        let x = DVector::from_fn(42, |i, _| (i as f64 * 0.37).sin());
        let mut sparse = SparseCholesky::default();
        let mut dense = DenseCholesky::default();
        sparse.factor(&H).unwrap();
        dense.factor(&H).unwrap();
        let (mut a, mut b) = (&dense_H * &x, &dense_H * &x);
        sparse.solve_in_place(&mut a);
        dense.solve_in_place(&mut b);
        assert!((&a - &x).norm() < 1e-12 * x.norm());
        assert!((&a - &b).norm() < 1e-12 * x.norm());
        // Same pattern, new values: no new analysis. Many right-hand sides at once.
        let H2 = chain(7, 4);
        sparse.factor(&H2).unwrap();
        assert_eq!(sparse.num_analyses(), 1);
        H2.to_dense(&mut dense_H);
        let X = DMatrix::from_fn(42, 3, |i, j| (i + 7 * j) as f64);
        let mut rhs = &dense_H * &X;
        sparse.solve_many_in_place(&mut rhs);
        assert!((rhs - &X).norm() < 1e-11 * X.norm());
        sparse.factor(&chain(8, 4)).unwrap();
        assert_eq!(sparse.num_analyses(), 2);
    }

    #[test]
    fn indefinite_is_an_error() {
        let mut H = chain(3, 5);
        H.diagonal[1][(2, 2)] = -100.0;
        assert!(matches!(
            SparseCholesky::default().factor(&H),
            Err(Error::NotPositiveDefinite { .. })
        ));
    }

    /// The factor, written in the AMD order straight from the blocks, is the dense Cholesky
    /// factor of `P H Pᵀ` for an ordering that is not the identity, with less fill than the
    /// velocities' order would make.
    #[test]
    fn factor_in_the_amd_order_equals_the_dense_factor() {
        let H = arrow(6, 7);
        let n = H.n();
        let mut sparse = SparseCholesky::default();
        sparse.factor(&H).unwrap();
        assert!(!sparse.is_supernodal());
        let analysis = sparse.analysis.as_ref().unwrap();
        let perm = &analysis.perm;
        assert_ne!(perm, &(0..n).collect::<Vec<_>>());
        assert!(sparse.factor_len() < n * (n + 1) / 2);
        let mut dense_H = DMatrix::zeros(0, 0);
        H.to_dense(&mut dense_H);
        let PHPt = DMatrix::from_fn(n, n, |i, j| dense_H[(perm[i], perm[j])]);
        let expected = PHPt.cholesky().unwrap().l();
        let SymbolicCholeskyRaw::Simplicial(symbolic) = analysis.symbolic.raw() else {
            unreachable!("checked simplicial above")
        };
        let L_structure = symbolic.factor();
        let mut L = DMatrix::zeros(n, n);
        for j in 0..n {
            for p in L_structure.col_range(j) {
                L[(L_structure.row_idx()[p], j)] = sparse.L[p];
            }
        }
        assert!((&L - &expected).norm() < 1e-12 * expected.norm());
        let x = DVector::from_fn(n, |i, _| (i as f64 * 0.61).cos());
        let mut b = &dense_H * &x;
        sparse.solve_in_place(&mut b);
        assert!((&b - &x).norm() < 1e-12 * x.norm());
    }

    /// The supernodal kernel reads the lower triangle of `P H Pᵀ`: forced on, it solves as the
    /// simplicial one does.
    #[test]
    fn supernodal_factor_in_the_amd_order_solves() {
        let H = arrow(6, 8);
        let n = H.n();
        let mut sparse = SparseCholesky {
            supernodal: SupernodalThreshold::FORCE_SUPERNODAL,
            ..Default::default()
        };
        sparse.factor(&H).unwrap();
        assert!(sparse.is_supernodal());
        assert_eq!(sparse.analysis.as_ref().unwrap().side, Side::Lower);
        let mut dense_H = DMatrix::zeros(0, 0);
        H.to_dense(&mut dense_H);
        let X = DMatrix::from_fn(n, 2, |i, j| ((i + 3 * j) as f64 * 0.29).sin());
        let mut rhs = &dense_H * &X;
        sparse.solve_many_in_place(&mut rhs);
        assert!((rhs - &X).norm() < 1e-12 * X.norm());
    }
}
