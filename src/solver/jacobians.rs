//! The contact Jacobians of a step's problem, each stored as its nonzero columns.
//!
//! A contact moves only the velocities of its two bodies' trees, so `J_i` (3 × nv) has a few
//! nonzero columns: stored dense, the Jacobians of a pile of N bodies with its O(N) contacts
//! take O(N²) memory, zeroed and scanned at every step. Stored by columns they take O(N), and
//! `J_i v`, `J_iᵀ γ` and `J_iᵀ G J_i` cost what the contact touches.
#![allow(non_snake_case)]

use nalgebra::{DVector, Matrix3xX, Vector3};

use crate::scalar::{is_f64, Scalar};

/// Contact Jacobians `J_i` (3 × nv each, contact frame rows t1, t2, n): the columns of each,
/// by increasing velocity index, with the columns no body of the contact moves left out.
#[derive(Clone, Debug)]
pub struct ContactJacobians<T: Scalar> {
    nv: usize,
    /// Contact `i` owns `index[end[i − 1]..end[i]]` (from 0 for the first) and the same
    /// range of `columns`.
    end: Vec<usize>,
    /// The velocity of each stored column.
    index: Vec<usize>,
    columns: Vec<Vector3<T>>,
}

impl<T: Scalar> Default for ContactJacobians<T> {
    fn default() -> Self {
        ContactJacobians::new(0)
    }
}

impl<T: Scalar> ContactJacobians<T> {
    /// No contacts, over `nv` velocities.
    pub fn new(nv: usize) -> Self {
        ContactJacobians {
            nv,
            end: Vec::new(),
            index: Vec::new(),
            columns: Vec::new(),
        }
    }

    /// The Jacobians `J` of `J.ncols() / nv` contacts side by side (3 × nv each), keeping the
    /// columns that are not exactly zero (all of them for dual numbers, whose `==` compares
    /// real parts only).
    ///
    /// # Panics
    /// When `J.ncols()` is not a multiple of `nv` (a programming error).
    pub fn from_dense(J: &Matrix3xX<T>, nv: usize) -> Self {
        assert!(
            J.ncols() == 0 || (nv > 0 && J.ncols().is_multiple_of(nv)),
            "invariant: {} Jacobian columns for {nv} velocities",
            J.ncols()
        );
        let mut out = ContactJacobians::new(nv);
        let keep_zeros = !is_f64::<T>();
        for i in 0..J.ncols().checked_div(nv).unwrap_or(0) {
            out.push_contact();
            for k in 0..nv {
                let column: Vector3<T> = J.column(i * nv + k).into();
                if keep_zeros || column.iter().any(|x| *x != T::zero()) {
                    out.add_column(k, &column);
                }
            }
        }
        out
    }

    /// Number of velocities.
    pub fn nv(&self) -> usize {
        self.nv
    }

    /// Number of contacts.
    pub fn nc(&self) -> usize {
        self.end.len()
    }

    /// The range of contact `i`'s columns.
    fn range(&self, i: usize) -> std::ops::Range<usize> {
        let first = if i == 0 { 0 } else { self.end[i - 1] };
        first..self.end[i]
    }

    /// Removes every contact, for `nv` velocities, keeping the storage.
    pub fn clear(&mut self, nv: usize) {
        self.nv = nv;
        self.end.clear();
        self.index.clear();
        self.columns.clear();
    }

    /// Appends a contact with no columns, which [`ContactJacobians::add_column`] fills.
    pub fn push_contact(&mut self) {
        self.end.push(self.index.len());
    }

    /// Adds `column` to column `k` of the last contact's Jacobian (stored anew when it has no
    /// column `k` yet, in order).
    ///
    /// # Panics
    /// With no contact, or `k ≥ nv` (programming errors).
    pub fn add_column(&mut self, k: usize, column: &Vector3<T>) {
        assert!(
            self.nc() > 0 && k < self.nv,
            "invariant: a column of a contact"
        );
        let first = self.range(self.nc() - 1).start;
        let own = &self.index[first..];
        match own.binary_search(&k) {
            Ok(p) => self.columns[first + p] += column,
            Err(p) if first + p == self.index.len() => {
                self.index.push(k);
                self.columns.push(*column);
            }
            Err(p) => {
                self.index.insert(first + p, k);
                self.columns.insert(first + p, *column);
            }
        }
        *self.end.last_mut().expect("invariant: a contact") = self.index.len();
    }

    /// The velocities and columns of `J_i`, by increasing velocity.
    pub fn columns(&self, i: usize) -> (&[usize], &[Vector3<T>]) {
        let range = self.range(i);
        (&self.index[range.clone()], &self.columns[range])
    }

    /// `J_i v`.
    pub fn mul(&self, i: usize, v: &DVector<T>) -> Vector3<T> {
        let (index, columns) = self.columns(i);
        index
            .iter()
            .zip(columns)
            .fold(Vector3::zeros(), |out, (&k, c)| out + c * v[k])
    }

    /// `y += α J_iᵀ γ`.
    pub fn transpose_add(&self, i: usize, alpha: T, gamma: &Vector3<T>, y: &mut DVector<T>) {
        let (index, columns) = self.columns(i);
        for (&k, c) in index.iter().zip(columns) {
            y[k] += c.dot(gamma) * alpha;
        }
    }

    /// `J_i` as a dense 3 × nv matrix.
    pub fn dense(&self, i: usize) -> Matrix3xX<T> {
        let mut J = Matrix3xX::zeros(self.nv);
        self.dense_into(i, &mut J);
        J
    }

    /// [`ContactJacobians::dense`] into `J`, its storage reused when it has `nv` columns.
    pub fn dense_into(&self, i: usize, J: &mut Matrix3xX<T>) {
        if J.ncols() == self.nv {
            J.as_mut_slice().fill(T::zero());
        } else {
            *J = Matrix3xX::zeros(self.nv);
        }
        // Column by column over the storage (column-major, three rows).
        let storage = J.as_mut_slice();
        let (index, columns) = self.columns(i);
        for (&k, c) in index.iter().zip(columns) {
            storage[3 * k..3 * k + 3].copy_from_slice(c.as_slice());
        }
    }

    /// Keeps the contacts for which `keep(i)` holds, in order; `keep` is called once per
    /// contact, in increasing `i`.
    pub fn retain(&mut self, mut keep: impl FnMut(usize) -> bool) {
        let (mut kept, mut write) = (0, 0);
        for i in 0..self.nc() {
            let range = self.range(i);
            if keep(i) {
                self.index.copy_within(range.clone(), write);
                self.columns.copy_within(range.clone(), write);
                write += range.len();
                self.end[kept] = write;
                kept += 1;
            }
        }
        self.end.truncate(kept);
        self.index.truncate(write);
        self.columns.truncate(write);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense_pair() -> Matrix3xX<f64> {
        // Two contacts over 4 velocities: the first moves 1 and 3, the second 0.
        let mut J = Matrix3xX::zeros(8);
        J.set_column(1, &Vector3::new(1.0, 2.0, 3.0));
        J.set_column(3, &Vector3::new(-1.0, 0.5, 0.0));
        J.set_column(4, &Vector3::new(0.0, 0.0, 2.0));
        J
    }

    #[test]
    fn dense_round_trip_keeps_the_nonzero_columns() {
        let J = dense_pair();
        let sparse = ContactJacobians::from_dense(&J, 4);
        assert_eq!(sparse.nc(), 2);
        assert_eq!(sparse.columns(0).0, &[1, 3]);
        assert_eq!(sparse.columns(1).0, &[0]);
        assert_eq!(sparse.dense(0), J.columns(0, 4));
        assert_eq!(sparse.dense(1), J.columns(4, 4));
    }

    #[test]
    fn products_match_the_dense_ones() {
        let J = dense_pair();
        let sparse = ContactJacobians::from_dense(&J, 4);
        let v = DVector::from_vec(vec![0.3, -1.2, 2.5, 0.7]);
        let gamma = Vector3::new(0.1, -0.4, 2.0);
        for i in 0..2 {
            let Ji = J.columns(4 * i, 4);
            assert_eq!(sparse.mul(i, &v), Ji * &v);
            let mut y = DVector::from_element(4, 1.0);
            sparse.transpose_add(i, -2.0, &gamma, &mut y);
            let expected = DVector::from_element(4, 1.0) - Ji.transpose() * gamma * 2.0;
            assert_eq!(y, expected);
        }
    }

    #[test]
    fn columns_added_twice_sum_and_stay_ordered() {
        let mut J = ContactJacobians::<f64>::new(5);
        J.push_contact();
        J.add_column(3, &Vector3::new(1.0, 0.0, 0.0));
        J.add_column(1, &Vector3::new(0.0, 1.0, 0.0));
        J.add_column(3, &Vector3::new(0.5, 0.0, 1.0));
        let (index, columns) = J.columns(0);
        assert_eq!(index, &[1, 3]);
        assert_eq!(columns[1], Vector3::new(1.5, 0.0, 1.0));
    }

    #[test]
    fn retain_keeps_the_chosen_contacts_in_order() {
        let mut J = ContactJacobians::<f64>::new(3);
        for k in 0..3 {
            J.push_contact();
            J.add_column(k, &Vector3::new(k as f64 + 1.0, 0.0, 0.0));
        }
        J.retain(|i| i != 1);
        assert_eq!(J.nc(), 2);
        assert_eq!(J.columns(0).0, &[0]);
        assert_eq!(J.columns(1), (&[2][..], &[Vector3::new(3.0, 0.0, 0.0)][..]));
    }
}
