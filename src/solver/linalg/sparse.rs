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

/// The analyzed pattern: CSC lower triangle, where each block entry goes, and faer's
/// symbolic factorization.
struct Analysis {
    pattern: BlockPattern,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
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
        // Lower-triangle entries (column, row) of every block.
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
        let mut col_ptr = vec![0usize; n + 1];
        for &(j, _) in &entries {
            col_ptr[j + 1] += 1;
        }
        for j in 0..n {
            col_ptr[j + 1] += col_ptr[j];
        }
        let row_idx: Vec<usize> = entries.iter().map(|&(_, i)| i).collect();
        let position = |i: usize, j: usize| -> usize {
            let (lo, hi) = (i.min(j), i.max(j));
            let rows = &row_idx[col_ptr[lo]..col_ptr[lo + 1]];
            col_ptr[lo]
                + rows
                    .binary_search(&hi)
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
            Side::Lower,
            SymmetricOrdering::Amd,
            CholeskySymbolicParams {
                supernodal_flop_ratio_threshold: SupernodalThreshold::AUTO,
                ..Default::default()
            },
        )
        .map_err(|e| {
            Error::invalid(
                "sparse Cholesky",
                format!("{e:?}"),
                "symbolic analysis failed",
            )
        })?;
        Ok(Analysis {
            pattern: pattern.clone(),
            col_ptr,
            row_idx,
            diagonal_positions,
            off_diagonal_positions,
            symbolic,
        })
    }
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
    /// Workspace of the numeric factorization and of one-column solves (a mutex, not a
    /// `RefCell`, so that simulators can be shared across rayon threads).
    scratch: Mutex<Option<MemBuffer>>,
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
        self.scratch = Mutex::new(Some(MemBuffer::new(req)));
        self.analysis = Some(analysis);
        self.analyses += 1;
        Ok(())
    }

    fn solve_columns(&self, rhs: MatMut<'_, f64>) {
        assert!(self.factored, "invariant: solve after a successful factor");
        let analysis = self.analysis.as_ref().expect("invariant: factored");
        let llt = LltRef::new(&analysis.symbolic, &self.L);
        let k = rhs.ncols();
        if k == 1 {
            let mut scratch = self
                .scratch
                .lock()
                .expect("invariant: no panic while the scratch is held");
            let buffer = scratch.as_mut().expect("invariant: sized at analysis");
            llt.solve_in_place_with_conj(Conj::No, rhs, Par::Seq, MemStack::new(buffer));
        } else {
            let mut buffer =
                MemBuffer::new(analysis.symbolic.solve_in_place_scratch::<f64>(k, Par::Seq));
            llt.solve_in_place_with_conj(Conj::No, rhs, Par::Seq, MemStack::new(&mut buffer));
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
        let buffer = scratch.as_mut().expect("invariant: sized at analysis");
        let result = analysis.symbolic.factorize_numeric_llt(
            &mut self.L,
            A,
            Side::Lower,
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
