//! Block-diagonal SPD matrices: `A = M + δt D` couples only the velocities of one tree (a
//! clique, [`crate::multibody::MultibodyModel::cliques`]), so it factors clique by clique (one
//! Cholesky per tree or free body) in `O(Σ n_c³)` instead of `O(nv³)`. Generic over the scalar.
#![allow(non_snake_case)]

use nalgebra::{Cholesky, DMatrix, DVector, DVectorViewMut, Dyn, Matrix3, Vector3};

use crate::scalar::Scalar;

/// The largest clique whose Delassus solve ([`BlockDiagonalCholesky::columns_quadratic_form`])
/// stays on the stack: a free body (6 velocities), a chain of up to 12 joints.
const STACK_CLIQUE: usize = 12;

/// Cholesky factors of the diagonal clique blocks of a block-diagonal SPD matrix.
///
/// Made once ([`BlockDiagonalCholesky::new`]) or kept and factored again at every step
/// ([`BlockDiagonalCholesky::refactor`]), which reuses each block's storage: a simulator's
/// free motion factors `A` without allocating once it has seen the model.
#[derive(Clone, Debug)]
pub struct BlockDiagonalCholesky<T: Scalar> {
    cliques: Vec<Vec<usize>>,
    /// The factor of each clique's block; `None` only after a block failed to factor.
    factors: Vec<Option<Cholesky<T, Dyn>>>,
    /// The clique of each index and its position in the clique.
    position: Vec<(usize, usize)>,
    /// A clique's entries of a right-hand side ([`BlockDiagonalCholesky::solve_in_place`]),
    /// and of a row and its solve ([`BlockDiagonalCholesky::row_quadratic_form`]).
    scratch: Vec<T>,
    row: Vec<T>,
}

impl<T: Scalar> Default for BlockDiagonalCholesky<T> {
    fn default() -> Self {
        BlockDiagonalCholesky {
            cliques: Vec::new(),
            factors: Vec::new(),
            position: Vec::new(),
            scratch: Vec::new(),
            row: Vec::new(),
        }
    }
}

impl<T: Scalar> BlockDiagonalCholesky<T> {
    /// Factors the diagonal blocks of `A` (n × n, symmetric, zero outside the blocks of
    /// `cliques`, which partition `0..n`); `None` if a block is not positive definite.
    pub fn new(A: &DMatrix<T>, cliques: &[Vec<usize>]) -> Option<Self> {
        let mut chol = BlockDiagonalCholesky::default();
        chol.refactor(A, cliques).then_some(chol)
    }

    /// Factors `A`'s blocks as [`BlockDiagonalCholesky::new`], in the storage of the blocks
    /// factored before (no allocation when the cliques' sizes are those of the last call);
    /// whether every block was positive definite (the factor is not to be used otherwise).
    pub fn refactor(&mut self, A: &DMatrix<T>, cliques: &[Vec<usize>]) -> bool {
        // Keeps the inner lists' storage.
        cliques.clone_into(&mut self.cliques);
        self.factors.resize_with(cliques.len(), || None);
        self.position.clear();
        self.position.resize(A.nrows(), (usize::MAX, 0));
        for (c, idx) in cliques.iter().enumerate() {
            for (p, &i) in idx.iter().enumerate() {
                self.position[i] = (c, p);
            }
        }
        let mut ok = true;
        for (idx, factor) in cliques.iter().zip(&mut self.factors) {
            let n = idx.len();
            let mut block = match factor.take() {
                Some(f) if f.l_dirty().nrows() == n => f.unpack_dirty(),
                _ => DMatrix::zeros(n, n),
            };
            for (c, &j) in idx.iter().enumerate() {
                for (r, &i) in idx.iter().enumerate() {
                    block[(r, c)] = A[(i, j)];
                }
            }
            *factor = Cholesky::new(block);
            ok &= factor.is_some();
        }
        ok
    }

    /// The factor of clique `c`'s block.
    fn factor(&self, c: usize) -> &Cholesky<T, Dyn> {
        self.factors[c]
            .as_ref()
            .expect("invariant: a factor is used only after it factored")
    }

    /// `W = B_cᵀ A_c⁻¹ B_c` summed over the cliques `c` of `touched`, with `B_c` the rows of
    /// `B` (n × k) in clique `c`: `Bᵀ A⁻¹ B` when `B` is zero outside those cliques, at the
    /// cost of those cliques only.
    pub fn quadratic_form(&self, B: &DMatrix<T>, touched: &[usize]) -> DMatrix<T> {
        let k = B.ncols();
        let mut W = DMatrix::zeros(k, k);
        for &c in touched {
            let Bc = B.select_rows(&self.cliques[c]);
            W += Bc.transpose() * self.factor(c).solve(&Bc);
        }
        W
    }

    /// `W = J A⁻¹ Jᵀ` (3 × 3) of a 3 × n matrix `J` given by its nonzero columns (`columns[j]`
    /// is column `index[j]`), solving only in the cliques those columns lie in, at the cost of
    /// the clique: with `A_c = L Lᵀ` and `B_c` the clique's rows of `Jᵀ`,
    /// `B_cᵀ A_c⁻¹ B_c = ZᵀZ` for `Z = L⁻¹ B_c`, one forward substitution of the three columns
    /// together. No allocation for cliques of up to 12 velocities.
    pub fn columns_quadratic_form(&self, index: &[usize], columns: &[Vector3<T>]) -> Matrix3<T> {
        let mut W = Matrix3::zeros();
        let mut stack = [Vector3::zeros(); STACK_CLIQUE];
        let mut heap = Vec::new();
        for (e, &k) in index.iter().enumerate() {
            let c = self.position[k].0;
            if index[..e].iter().any(|&j| self.position[j].0 == c) {
                continue;
            }
            let L = self.factor(c).l_dirty();
            let n = L.nrows();
            let Z: &mut [Vector3<T>] = if n <= STACK_CLIQUE {
                stack[..n].fill(Vector3::zeros());
                &mut stack[..n]
            } else {
                heap.clear();
                heap.resize(n, Vector3::zeros());
                &mut heap
            };
            // The rows of B_c (a row of Bc is a column of J); Z's leading zero rows stay zero.
            let mut first = n;
            for (&j, column) in index.iter().zip(columns) {
                let (cj, p) = self.position[j];
                if cj == c {
                    Z[p] += column;
                    first = first.min(p);
                }
            }
            for i in first..n {
                let mut z = Z[i];
                for (j, zj) in Z.iter().enumerate().take(i).skip(first) {
                    z -= zj * L[(i, j)];
                }
                z /= L[(i, i)];
                Z[i] = z;
                W += z * z.transpose();
            }
        }
        W
    }

    /// `A⁻¹ B` (n × k).
    pub fn solve(&self, B: &DMatrix<T>) -> DMatrix<T> {
        let mut X = DMatrix::zeros(B.nrows(), B.ncols());
        for (c, idx) in self.cliques.iter().enumerate() {
            let x = self.factor(c).solve(&B.select_rows(idx));
            for (k, &i) in idx.iter().enumerate() {
                X.row_mut(i).copy_from(&x.row(k));
            }
        }
        X
    }

    /// `w = cᵀ A⁻¹ c` of a sparse row `c` given by its entries `(index, c_index)`, solving
    /// only in the cliques the entries touch (into buffers kept in `self`: no allocation once
    /// they have the largest clique's size). The same number as `c · (A⁻¹ c)` of the dense
    /// column `c` ([`BlockDiagonalCholesky::solve`]) for rows of one or two entries (the sum
    /// of the same two products; zero terms change no sum).
    pub fn row_quadratic_form(&mut self, entries: &[(usize, T)]) -> T {
        let mut w = T::zero();
        for (e, &(k, _)) in entries.iter().enumerate() {
            let c = self.position[k].0;
            if entries[..e].iter().any(|&(j, _)| self.position[j].0 == c) {
                continue;
            }
            let n = self.cliques[c].len();
            self.row.clear();
            self.row.resize(n, T::zero());
            for &(j, value) in entries {
                let (cj, p) = self.position[j];
                if cj == c {
                    self.row[p] += value;
                }
            }
            self.scratch.clone_from(&self.row);
            let factor = self.factors[c]
                .as_ref()
                .expect("invariant: a factor is used only after it factored");
            factor.solve_mut(&mut DVectorViewMut::from_slice(&mut self.scratch, n));
            for (r, x) in self.row.iter().zip(&self.scratch) {
                if *r != T::zero() {
                    w += *r * *x;
                }
            }
        }
        w
    }

    /// `b ← A⁻¹ b`, clique by clique through a buffer kept in `self`: the same numbers as
    /// [`BlockDiagonalCholesky::solve`] of the column `b`, without allocating once the
    /// buffer has the largest clique's size.
    pub fn solve_in_place(&mut self, b: &mut DVector<T>) {
        for (idx, factor) in self.cliques.iter().zip(&self.factors) {
            let factor = factor
                .as_ref()
                .expect("invariant: a factor is used only after it factored");
            self.scratch.clear();
            self.scratch.extend(idx.iter().map(|&i| b[i]));
            let n = idx.len();
            factor.solve_mut(&mut DVectorViewMut::from_slice(&mut self.scratch, n));
            for (k, &i) in idx.iter().enumerate() {
                b[i] = self.scratch[k];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_clique_by_clique() {
        // Indices 0 and 3 coupled, 1 alone, 2 and 4 coupled.
        let mut A = DMatrix::<f64>::identity(5, 5);
        A[(3, 0)] = 0.5;
        A[(0, 3)] = 0.5;
        A[(2, 4)] = 0.1;
        A[(4, 2)] = 0.1;
        let cliques = [vec![0, 3], vec![1], vec![2, 4]];
        let chol = BlockDiagonalCholesky::new(&A, &cliques).unwrap();
        let B = DMatrix::from_fn(5, 2, |i, j| (i + 2 * j) as f64 - 1.0);
        let X = chol.solve(&B);
        assert!((&A * X - &B).norm() < 1e-14);
        // B zero outside cliques 0 and 2: the quadratic form over those two only.
        let mut B0 = B.clone();
        B0.row_mut(1).fill(0.0);
        let W = chol.quadratic_form(&B0, &[0, 2]);
        assert!((W - B0.transpose() * chol.solve(&B0)).norm() < 1e-13);
        A[(1, 1)] = -1.0;
        assert!(BlockDiagonalCholesky::new(&A, &cliques).is_none());
    }

    /// A factor kept and factored again (other matrices, another partition, a failure in
    /// between) solves as a new one, bit for bit, in place as into a new matrix.
    #[test]
    fn refactored_in_place_as_new() {
        let spd = |n: usize, seed: f64| {
            let B = DMatrix::from_fn(n, n, |i, j| ((i * n + j) as f64 * seed).sin());
            &B * B.transpose() + DMatrix::identity(n, n)
        };
        let mut kept = BlockDiagonalCholesky::default();
        let partitions = [
            vec![vec![0, 3], vec![1], vec![2, 4]],
            vec![vec![0, 1, 2, 3, 4]],
            vec![vec![0, 3], vec![1], vec![2, 4]],
        ];
        for (k, cliques) in partitions.iter().enumerate() {
            let mut A = DMatrix::zeros(5, 5);
            for (c, idx) in cliques.iter().enumerate() {
                let block = spd(idx.len(), 0.7 + (k + c) as f64);
                for (r, &i) in idx.iter().enumerate() {
                    for (s, &j) in idx.iter().enumerate() {
                        A[(i, j)] = block[(r, s)];
                    }
                }
            }
            let mut singular = A.clone();
            singular[(1, 1)] = -1.0;
            assert!(!kept.refactor(&singular, cliques));
            assert!(kept.refactor(&A, cliques));
            let new = BlockDiagonalCholesky::new(&A, cliques).unwrap();
            let b = DVector::from_fn(5, |i, _| (i as f64 + 0.5).cos());
            let expected = new.solve(&DMatrix::from_column_slice(5, 1, b.as_slice()));
            let mut x = b.clone();
            kept.solve_in_place(&mut x);
            assert_eq!(x.as_slice(), expected.as_slice(), "partition {k}");
            assert!((&A * &x - &b).norm() < 1e-12);
            // `c A⁻¹ cᵀ` of rows of one entry and of two (in one clique or two), solved in
            // their cliques only, against the dense solve: bit for bit.
            for entries in [
                vec![(3, -1.0)],
                vec![(1, 1.0)],
                vec![(4, 1.0), (2, -0.5)],
                vec![(0, 1.0), (2, 0.3)],
            ] {
                let mut c = DMatrix::zeros(5, 1);
                for &(i, value) in &entries {
                    c[(i, 0)] += value;
                }
                let dense = c.column(0).dot(&new.solve(&c).column(0));
                assert_eq!(kept.row_quadratic_form(&entries), dense, "{entries:?}");
            }
            // A joint's two limit rows, `c = ±e_k`, have one `w`, bit for bit.
            let upper = kept.row_quadratic_form(&[(3, -1.0)]);
            assert_eq!(kept.row_quadratic_form(&[(3, 1.0)]), upper);
        }
    }

    /// `J A⁻¹ Jᵀ` from the forward substitution against the dense solve, for a contact
    /// between a free body (a clique of 6, on the stack) and a 14-joint chain (on the heap),
    /// with zero leading rows in each clique and columns given out of order.
    #[test]
    fn columns_quadratic_form_matches_the_dense_solve() {
        let cliques = [(0..6).collect::<Vec<_>>(), (6..20).collect()];
        let mut A = DMatrix::<f64>::zeros(20, 20);
        for idx in &cliques {
            let n = idx.len();
            let B = DMatrix::from_fn(n, n, |i, j| ((i * n + j) as f64 * 0.37).sin());
            A.view_mut((idx[0], idx[0]), (n, n))
                .copy_from(&(&B * B.transpose() + DMatrix::identity(n, n)));
        }
        let chol = BlockDiagonalCholesky::new(&A, &cliques).unwrap();
        let index = [17usize, 4, 2, 9, 5, 19, 3];
        let columns: Vec<Vector3<f64>> = index
            .iter()
            .map(|&k| Vector3::new((k as f64).cos(), (2.0 * k as f64).sin(), 0.1 * k as f64))
            .collect();
        let mut J = DMatrix::zeros(20, 3);
        for (&k, c) in index.iter().zip(&columns) {
            J.row_mut(k).copy_from(&c.transpose());
        }
        let dense = J.transpose() * chol.solve(&J);
        let W = chol.columns_quadratic_form(&index, &columns);
        assert!((W - Matrix3::from_iterator(dense.iter().copied())).norm() < 1e-12 * dense.norm());
        // One clique only.
        let W1 = chol.columns_quadratic_form(&index[1..3], &columns[1..3]);
        let mut J1 = DMatrix::zeros(20, 3);
        for (&k, c) in index[1..3].iter().zip(&columns[1..3]) {
            J1.row_mut(k).copy_from(&c.transpose());
        }
        let dense1 = J1.transpose() * chol.solve(&J1);
        assert!(
            (W1 - Matrix3::from_iterator(dense1.iter().copied())).norm() < 1e-12 * dense1.norm()
        );
    }
}
