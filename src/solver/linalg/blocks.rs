//! The clique-block structure of the Newton Hessian (ICF ext. Sec. X).
//!
//! `H = A + Σ_i J_iᵀ G_i J_i`. The velocities split into cliques, one per tree or free body
//! (`A = M + δt D` couples only the velocities of one tree). A contact couples the (at most two) cliques its Jacobian touches,
//! so `H` has a dense block `H_cc` per clique and a dense block `H_ab` per coupled pair of
//! cliques `a < b`; everything else is zero. [`BlockPattern`] is that structure,
//! [`BlockHessian`] holds its values.
#![allow(non_snake_case)]

use nalgebra::{DMatrix, DVector};

/// Cliques and coupled clique pairs of a Hessian.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockPattern {
    /// Velocity indices of each clique, increasing.
    pub cliques: Vec<Vec<usize>>,
    /// Coupled clique pairs `(a, b)` with `a < b`, sorted and unique.
    pub pairs: Vec<(usize, usize)>,
}

impl BlockPattern {
    /// One clique holding all `n` velocities: a dense matrix.
    pub fn dense(n: usize) -> Self {
        BlockPattern {
            cliques: vec![(0..n).collect()],
            pairs: Vec::new(),
        }
    }

    /// Number of velocities.
    pub fn n(&self) -> usize {
        self.cliques.iter().map(Vec::len).sum()
    }

    /// Index of the pair `(a, b)` (`a < b`) in [`BlockPattern::pairs`].
    pub fn pair_index(&self, a: usize, b: usize) -> Option<usize> {
        self.pairs.binary_search(&(a, b)).ok()
    }
}

/// Values of a block-sparse symmetric matrix with a [`BlockPattern`].
#[derive(Clone, Debug, Default)]
pub struct BlockHessian {
    /// The pattern.
    pub pattern: BlockPattern,
    /// `H_cc` per clique (full symmetric, clique-local indices).
    pub diagonal: Vec<DMatrix<f64>>,
    /// `H_ab` per pair of [`BlockPattern::pairs`] (rows: clique a, columns: clique b).
    pub off_diagonal: Vec<DMatrix<f64>>,
}

impl BlockHessian {
    /// Zero blocks for `pattern`.
    pub fn zeros(pattern: BlockPattern) -> Self {
        let diagonal = pattern
            .cliques
            .iter()
            .map(|c| DMatrix::zeros(c.len(), c.len()))
            .collect();
        let off_diagonal = pattern
            .pairs
            .iter()
            .map(|&(a, b)| DMatrix::zeros(pattern.cliques[a].len(), pattern.cliques[b].len()))
            .collect();
        BlockHessian {
            pattern,
            diagonal,
            off_diagonal,
        }
    }

    /// A dense matrix as one clique.
    pub fn from_dense(H: &DMatrix<f64>) -> Self {
        BlockHessian {
            pattern: BlockPattern::dense(H.nrows()),
            diagonal: vec![H.clone()],
            off_diagonal: Vec::new(),
        }
    }

    /// Sets the pattern, reusing the block storage when the sizes allow.
    pub fn reset_pattern(&mut self, pattern: &BlockPattern) {
        if &self.pattern != pattern {
            *self = BlockHessian::zeros(pattern.clone());
        }
    }

    /// Number of rows.
    pub fn n(&self) -> usize {
        self.pattern.n()
    }

    /// Adds `shift · H_ii` to every diagonal entry `H_ii`: a Levenberg–Marquardt style shift
    /// relative to the diagonal, i.e. `shift · I` on the equilibrated matrix
    /// `D^{-1/2} H D^{-1/2}` (`D = diag H`), so every clique gets the same relative push
    /// whatever its units (rad/s beside m/s, grams beside tonnes).
    pub fn shift_diagonal_relative(&mut self, shift: f64) {
        for block in &mut self.diagonal {
            for i in 0..block.nrows() {
                block[(i, i)] += shift * block[(i, i)].abs();
            }
        }
    }

    /// Writes the matrix into the dense `out` (n × n, resized when needed), both triangles:
    /// [`BlockHessian::lower_to_dense`], mirrored.
    pub fn to_dense(&self, out: &mut DMatrix<f64>) {
        self.lower_to_dense(out);
        out.fill_upper_triangle_with_lower_triangle();
    }

    /// Writes the lower triangle of the matrix, diagonal included, into the dense `out` (n × n,
    /// resized when needed) and leaves its strict upper triangle as it was: what a Cholesky
    /// factorization in place reads, at half the writes of [`BlockHessian::to_dense`].
    pub fn lower_to_dense(&self, out: &mut DMatrix<f64>) {
        let n = self.n();
        if out.shape() != (n, n) {
            *out = DMatrix::zeros(n, n);
        }
        let data = out.as_mut_slice();
        for j in 0..n {
            data[j * n + j..(j + 1) * n].fill(0.0);
        }
        let cliques = &self.pattern.cliques;
        for (idx, block) in cliques.iter().zip(&self.diagonal) {
            // The indices increase: row k ≥ column l is the lower triangle.
            for (l, &j) in idx.iter().enumerate() {
                for (k, &i) in idx.iter().enumerate().skip(l) {
                    data[j * n + i] = block[(k, l)];
                }
            }
        }
        for (&(a, b), block) in self.pattern.pairs.iter().zip(&self.off_diagonal) {
            for (l, &j) in cliques[b].iter().enumerate() {
                for (k, &i) in cliques[a].iter().enumerate() {
                    let (row, column) = if i > j { (i, j) } else { (j, i) };
                    data[column * n + row] = block[(k, l)];
                }
            }
        }
    }

    /// `out = H x` (n).
    pub fn mul_to(&self, x: &DVector<f64>, out: &mut DVector<f64>) {
        out.fill(0.0);
        let cliques = &self.pattern.cliques;
        for (idx, block) in cliques.iter().zip(&self.diagonal) {
            for (l, &j) in idx.iter().enumerate() {
                for (k, &i) in idx.iter().enumerate() {
                    out[i] += block[(k, l)] * x[j];
                }
            }
        }
        for (&(a, b), block) in self.pattern.pairs.iter().zip(&self.off_diagonal) {
            for (l, &j) in cliques[b].iter().enumerate() {
                for (k, &i) in cliques[a].iter().enumerate() {
                    out[i] += block[(k, l)] * x[j];
                    out[j] += block[(k, l)] * x[i];
                }
            }
        }
    }

    /// The 1-norm `‖H‖₁` (largest absolute column sum); `column_sums` (n) is scratch.
    pub fn norm_1(&self, column_sums: &mut DVector<f64>) -> f64 {
        column_sums.fill(0.0);
        let cliques = &self.pattern.cliques;
        for (idx, block) in cliques.iter().zip(&self.diagonal) {
            for (l, &j) in idx.iter().enumerate() {
                column_sums[j] += block.column(l).iter().map(|x| x.abs()).sum::<f64>();
            }
        }
        for (&(a, b), block) in self.pattern.pairs.iter().zip(&self.off_diagonal) {
            for (l, &j) in cliques[b].iter().enumerate() {
                for (k, &i) in cliques[a].iter().enumerate() {
                    column_sums[j] += block[(k, l)].abs();
                    column_sums[i] += block[(k, l)].abs();
                }
            }
        }
        column_sums.iter().fold(0.0, |m, x| m.max(*x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_product_and_norm_agree_with_blocks() {
        let pattern = BlockPattern {
            cliques: vec![vec![0, 2], vec![1], vec![3, 4]],
            pairs: vec![(0, 2)],
        };
        let mut H = BlockHessian::zeros(pattern);
        H.diagonal[0] = DMatrix::from_row_slice(2, 2, &[4.0, 1.0, 1.0, 3.0]);
        H.diagonal[1] = DMatrix::from_row_slice(1, 1, &[2.0]);
        H.diagonal[2] = DMatrix::from_row_slice(2, 2, &[5.0, -1.0, -1.0, 6.0]);
        H.off_diagonal[0] = DMatrix::from_row_slice(2, 2, &[0.5, -0.25, 0.0, 1.5]);
        let mut dense = DMatrix::zeros(0, 0);
        H.to_dense(&mut dense);
        assert_eq!(dense, dense.transpose());
        // The lower triangle alone, over a matrix whose upper triangle is left as it was.
        let mut lower = DMatrix::from_element(5, 5, 7.0);
        H.lower_to_dense(&mut lower);
        for j in 0..5 {
            for i in 0..5 {
                let expected = if i >= j { dense[(i, j)] } else { 7.0 };
                assert_eq!(lower[(i, j)], expected, "({i}, {j})");
            }
        }
        assert_eq!(dense[(2, 4)], 1.5);
        let x = DVector::from_fn(5, |i, _| i as f64 - 1.5);
        let mut y = DVector::zeros(5);
        H.mul_to(&x, &mut y);
        assert!((y - &dense * &x).norm() < 1e-14);
        let mut scratch = DVector::zeros(5);
        let expected = (0..5)
            .map(|j| dense.column(j).iter().map(|v| v.abs()).sum::<f64>())
            .fold(0.0, f64::max);
        assert_eq!(H.norm_1(&mut scratch), expected);
    }

    /// The relative shift scales each diagonal entry by `1 + δ` and leaves the rest alone.
    #[test]
    fn relative_shift_touches_only_the_diagonal() {
        let pattern = BlockPattern {
            cliques: vec![vec![0, 1], vec![2]],
            pairs: vec![(0, 1)],
        };
        let mut H = BlockHessian::zeros(pattern);
        H.diagonal[0] = DMatrix::from_row_slice(2, 2, &[4.0, 1.0, 1.0, 1e-3]);
        H.diagonal[1] = DMatrix::from_row_slice(1, 1, &[1e12]);
        H.off_diagonal[0] = DMatrix::from_row_slice(2, 1, &[0.5, 0.25]);
        H.shift_diagonal_relative(0.5);
        assert_eq!(H.diagonal[0].as_slice(), &[6.0, 1.0, 1.0, 1.5e-3]);
        assert_eq!(H.diagonal[1][(0, 0)], 1.5e12);
        assert_eq!(H.off_diagonal[0].as_slice(), &[0.5, 0.25]);
    }
}
