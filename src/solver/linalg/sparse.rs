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
//! numerically, without allocating. The analysis orders the pattern with AMD once, then
//! analyzes the permuted pattern `P H Pᵀ` again with the identity ordering, in the triangle
//! faer's kernel reads (upper for simplicial, lower for supernodal): each block entry of `H`
//! is written straight to its place in `P H Pᵀ`, and the numeric factorization no longer
//! permutes (and, for simplicial, transposes) the whole matrix at every call (issue 27,
//! item 4). The solves permute the right-hand side themselves, `O(n)`.
#![allow(non_snake_case)]

use std::sync::Mutex;

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::llt::factor::LltError;
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

/// Marks the upper-triangle entries of a diagonal block, which are not stored.
const UPPER: usize = usize::MAX;

/// The analyzed pattern: `P H Pᵀ` as CSC in the triangle faer's kernel reads, where each
/// block entry of `H` goes in it, the AMD permutation and faer's symbolic factorization of
/// `P H Pᵀ` in the identity ordering.
struct Analysis {
    pattern: BlockPattern,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    /// The triangle of `P H Pᵀ` stored: upper for the simplicial kernel, lower for the
    /// supernodal one.
    side: Side,
    /// `fwd[k]`: the row of `H` that is row `k` of `P H Pᵀ` (n).
    fwd: Vec<usize>,
    /// Per clique, the value position of local entry `(k, l)` at `k + l·n_c` ([`UPPER`] above
    /// the diagonal).
    diagonal_positions: Vec<Vec<usize>>,
    /// Per pair `(a, b)`, the value position of local entry `(k, l)` at `k + l·n_a`.
    off_diagonal_positions: Vec<Vec<usize>>,
    symbolic: SymbolicCholesky<usize>,
}

impl Analysis {
    fn new(pattern: &BlockPattern) -> Result<Self> {
        let n = pattern.n();
        // Lower-triangle entries (column, row) of every block, in `H`'s numbering.
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
        entries.sort_unstable();
        entries.dedup();
        let failed = |e: faer::sparse::FaerError| {
            Error::invalid(
                "sparse Cholesky",
                format!("{e:?}"),
                "symbolic analysis failed",
            )
        };
        // 1. The AMD ordering and faer's kernel choice, on `H`'s own pattern.
        let (col_ptr, row_idx) = csc(n, &entries);
        let structure = SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx);
        let ordered = factorize_symbolic_cholesky(
            structure,
            Side::Lower,
            SymmetricOrdering::Amd,
            CholeskySymbolicParams {
                supernodal_flop_ratio_threshold: SupernodalThreshold::AUTO,
                ..Default::default()
            },
        )
        .map_err(failed)?;
        let supernodal = matches!(ordered.raw(), SymbolicCholeskyRaw::Supernodal(_));
        let (fwd, inv): (Vec<usize>, Vec<usize>) = match ordered.perm() {
            Some(perm) => {
                let (fwd, inv) = perm.arrays();
                (fwd.to_vec(), inv.to_vec())
            }
            None => ((0..n).collect(), (0..n).collect()),
        };
        // 2. `P H Pᵀ` in the triangle the kernel reads, analyzed in the identity ordering
        // with the same kernel.
        let side = if supernodal { Side::Lower } else { Side::Upper };
        let place = |i: usize, j: usize| -> (usize, usize) {
            let (a, b) = (inv[i], inv[j]);
            // (column, row)
            match side {
                Side::Lower => (a.min(b), a.max(b)),
                Side::Upper => (a.max(b), a.min(b)),
            }
        };
        let mut permuted: Vec<(usize, usize)> = entries.iter().map(|&(j, i)| place(i, j)).collect();
        permuted.sort_unstable();
        let (col_ptr, row_idx) = csc(n, &permuted);
        let position = |i: usize, j: usize| -> usize {
            let (column, row) = place(i, j);
            let rows = &row_idx[col_ptr[column]..col_ptr[column + 1]];
            col_ptr[column]
                + rows
                    .binary_search(&row)
                    .expect("invariant: every block entry is in the pattern")
        };
        let diagonal_positions = pattern
            .cliques
            .iter()
            .map(|idx| {
                let mut pos = Vec::with_capacity(idx.len() * idx.len());
                for &j in idx {
                    for &i in idx {
                        pos.push(if i >= j { position(i, j) } else { UPPER });
                    }
                }
                pos
            })
            .collect();
        let off_diagonal_positions = pattern
            .pairs
            .iter()
            .map(|&(a, b)| {
                let mut pos = Vec::new();
                for &j in &pattern.cliques[b] {
                    for &i in &pattern.cliques[a] {
                        pos.push(position(i, j));
                    }
                }
                pos
            })
            .collect();
        let structure = SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx);
        let symbolic = factorize_symbolic_cholesky(
            structure,
            side,
            SymmetricOrdering::Identity,
            CholeskySymbolicParams {
                supernodal_flop_ratio_threshold: if supernodal {
                    SupernodalThreshold::FORCE_SUPERNODAL
                } else {
                    SupernodalThreshold::FORCE_SIMPLICIAL
                },
                ..Default::default()
            },
        )
        .map_err(failed)?;
        Ok(Analysis {
            pattern: pattern.clone(),
            col_ptr,
            row_idx,
            side,
            fwd,
            diagonal_positions,
            off_diagonal_positions,
            symbolic,
        })
    }
}

/// Column pointers and row indices of the CSC matrix (n × n) with the nonzeros `entries`,
/// `(column, row)` sorted.
fn csc(n: usize, entries: &[(usize, usize)]) -> (Vec<usize>, Vec<usize>) {
    let mut col_ptr = vec![0usize; n + 1];
    for &(j, _) in entries {
        col_ptr[j + 1] += 1;
    }
    for j in 0..n {
        col_ptr[j + 1] += col_ptr[j];
    }
    (col_ptr, entries.iter().map(|&(_, i)| i).collect())
}

/// Sparse Cholesky factorization (faer; supernodal or simplicial, see the module docs) of a
/// clique-block Hessian, for large systems with many cliques.
#[derive(Default)]
pub struct SparseCholesky {
    analysis: Option<Analysis>,
    /// Values of the lower triangle of `H` in the analyzed pattern.
    values: Vec<f64>,
    /// Values of `L` (faer's layout).
    L: Vec<f64>,
    /// Workspace of the numeric factorization and of one-column solves, with the permuted
    /// right-hand side of one-column solves (n) (a mutex, not a `RefCell`, so that
    /// simulators can be shared across rayon threads).
    scratch: Mutex<Option<(MemBuffer, Vec<f64>)>>,
    factored: bool,
    analyses: usize,
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
        let analysis = Analysis::new(pattern)?;
        let sym = &analysis.symbolic;
        let req = StackReq::any_of(&[
            sym.factorize_numeric_llt_scratch::<f64>(Par::Seq, Default::default()),
            sym.solve_in_place_scratch::<f64>(1, Par::Seq),
        ]);
        self.values = vec![0.0; analysis.row_idx.len()];
        self.L = vec![0.0; sym.len_val()];
        self.scratch = Mutex::new(Some((MemBuffer::new(req), vec![0.0; pattern.n()])));
        self.analysis = Some(analysis);
        self.analyses += 1;
        Ok(())
    }

    /// Overwrites every column of `rhs` (n × k) with `H⁻¹` times it: `P H Pᵀ` is factored, so
    /// the columns are permuted into its order (`x = P rhs`), solved and permuted back.
    fn solve_columns(&self, mut rhs: MatMut<'_, f64>) {
        assert!(self.factored, "invariant: solve after a successful factor");
        let analysis = self.analysis.as_ref().expect("invariant: factored");
        let llt = LltRef::new(&analysis.symbolic, &self.L);
        let (n, k) = (rhs.nrows(), rhs.ncols());
        let fwd = &analysis.fwd;
        if k == 1 {
            let mut scratch = self
                .scratch
                .lock()
                .expect("invariant: no panic while the scratch is held");
            let (buffer, x) = scratch.as_mut().expect("invariant: sized at analysis");
            for (xk, &i) in x.iter_mut().zip(fwd) {
                *xk = rhs[(i, 0)];
            }
            llt.solve_in_place_with_conj(
                Conj::No,
                MatMut::from_column_major_slice_mut(x, n, 1),
                Par::Seq,
                MemStack::new(buffer),
            );
            for (&xk, &i) in x.iter().zip(fwd) {
                rhs[(i, 0)] = xk;
            }
        } else {
            let mut x = DMatrix::from_fn(n, k, |r, c| rhs[(fwd[r], c)]);
            let mut buffer =
                MemBuffer::new(analysis.symbolic.solve_in_place_scratch::<f64>(k, Par::Seq));
            llt.solve_in_place_with_conj(
                Conj::No,
                MatMut::from_column_major_slice_mut(x.as_mut_slice(), n, k),
                Par::Seq,
                MemStack::new(&mut buffer),
            );
            for c in 0..k {
                for (r, &i) in fwd.iter().enumerate() {
                    rhs[(i, c)] = x[(r, c)];
                }
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
                if p != UPPER {
                    self.values[p] = *x;
                }
            }
        }
        for (block, pos) in H.off_diagonal.iter().zip(&analysis.off_diagonal_positions) {
            for (x, &p) in block.iter().zip(pos) {
                self.values[p] = *x;
            }
        }
        let n = H.n();
        let structure =
            SymbolicSparseColMatRef::new_checked(n, n, &analysis.col_ptr, None, &analysis.row_idx);
        let A = SparseColMatRef::new(structure, &self.values);
        let mut scratch = self
            .scratch
            .lock()
            .expect("invariant: no panic while the scratch is held");
        let (buffer, _) = scratch.as_mut().expect("invariant: sized at analysis");
        // `A` is `P H Pᵀ` in the kernel's own triangle: faer neither permutes nor transposes it.
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
        let pattern = BlockPattern {
            cliques: (0..ncliques)
                .map(|c| (6 * c..6 * c + 6).collect())
                .collect(),
            pairs: (0..ncliques.saturating_sub(1))
                .map(|c| (c, c + 1))
                .collect(),
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
            *block = &B * B.transpose() + DMatrix::identity(6, 6) * 8.0;
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
}
