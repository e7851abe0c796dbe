//! Gauss–Newton covariance and confidence intervals at the estimate.
//!
//! With whitened residuals (`r = (ŷ − y)/σ`, σ the known noise level) and Jacobian `J`
//! (m × np) in the coordinates `s`, the linearized estimator has covariance
//!
//! ```text
//! Σ_s = (JᵀJ)⁻¹,                                                           (1)
//! ```
//!
//! and, when σ is unknown (unit weights), `Σ_s = σ̂² (JᵀJ)⁻¹` with
//! `σ̂² = ‖r‖²/(m − np)` (2). The 95 % interval of `s_i` is `s_i ± 1.96 √Σ_s,ii` and maps to
//! θ through the monotone `g` ([`super::params`]): positive and asymmetric for `θ = exp(s)`.
//!
//! **Identifiability.** Scale `A = JᵀJ` to `C = D A D` with `D = diag(A)^{-1/2}` (unit
//! diagonal; `C` is invariant to the units of each parameter). A parameter is *not
//! identifiable* when its column of `J` is zero, when it carries a component `|v_i| ≥ 0.1` of
//! an eigenvector of `C` with eigenvalue below [`SINGULAR_EIGENVALUE`] (the data then fixes
//! only a combination of parameters, and the estimate along that direction is arbitrary), or
//! when its relative standard deviation `g′(s_i) σ_s,i / |θ_i|` exceeds
//! [`MAX_RELATIVE_STD`] (the data pins it only within a factor of about e^20: a friction
//! coefficient run off to 1e7, where the contact sticks whatever its value). The covariance
//! of the others is taken with those held fixed (conditional on their values). The
//! eigenvectors of `C` with eigenvalues below [`SINGULAR_EIGENVALUE`] are kept as the
//! directions the data cannot see ([`Covariance::null_directions`]).
//!
//! **Goodness of fit.** With σ given, `χ² = ‖r‖²` follows the chi-square distribution with
//! `ν = m − np` degrees of freedom when the model is right and σ is the noise level
//! (Bevington & Robinson, "Data reduction and error analysis", 3rd ed., 2003, Sec. 11.1).
//! [`chi2_test`] flags a reduced `χ²/ν` outside the central 99.9 % range of that
//! distribution (quantiles by the Wilson–Hilferty approximation): too large says the model or
//! σ is wrong (mismatch), too small that σ overstates the noise. When flagged too large, the
//! covariance is scaled by `χ²/ν` (Birge ratio; the residual-scaled covariance eq. 2 with
//! the observed scatter in place of σ).

#![allow(non_snake_case)]

use nalgebra::{DMatrix, DVector};

/// Smallest eigenvalue of the unit-diagonal `C` below which `JᵀJ` counts as singular
/// (a condition number of `C` above about 1e10).
pub const SINGULAR_EIGENVALUE: f64 = 1e-10;

/// Largest relative standard deviation `σ_θ/|θ|` of an identifiable parameter.
pub const MAX_RELATIVE_STD: f64 = 10.0;

/// Smallest eigenvector component that implicates a parameter in a singular direction.
const IMPLICATED: f64 = 0.1;

/// z-value of a two-sided 95 % normal interval.
pub const Z95: f64 = 1.959963984540054;

/// Covariance of the estimate in the coordinates `s`.
#[derive(Clone, Debug, PartialEq)]
pub struct Covariance {
    /// `Σ_s` (np × np); rows and columns of non-identifiable parameters are zero.
    pub matrix: DMatrix<f64>,
    /// Whether each parameter is identifiable (np).
    pub identifiable: Vec<bool>,
    /// Smallest eigenvalue of the scaled `C` (1 for a single well-determined parameter).
    pub min_eigenvalue: f64,
    /// The noise variance factor: 1 with known noise, `σ̂²` (eq. 2) otherwise.
    pub noise_variance: f64,
    /// Directions in the unit-diagonal coordinates of `C` that the data does not determine:
    /// `(eigenvalue, eigenvector (np, zero for parameters the data does not see at all))`,
    /// plus one unit vector per parameter whose column of `J` is zero.
    pub null_directions: Vec<(f64, Vec<f64>)>,
}

impl Covariance {
    /// Standard deviation of `s_i`, `None` if not identifiable.
    pub fn std_dev(&self, i: usize) -> Option<f64> {
        self.identifiable[i].then(|| self.matrix[(i, i)].sqrt())
    }
}

/// The covariance (eq. 1 or 2) of an estimate with residuals `r` (m) and Jacobian `J`
/// (m × np); `noise_known` selects eq. (1); `relative_scale[i] = g′(s_i)/|θ_i|` (np) converts
/// a standard deviation of `s_i` into a relative one of `θ_i`.
pub fn gauss_newton_covariance(
    r: &DVector<f64>,
    J: &DMatrix<f64>,
    noise_known: bool,
    relative_scale: &[f64],
) -> Covariance {
    let np = J.ncols();
    let A = J.transpose() * J;
    let diag = A.diagonal();
    let mut identifiable: Vec<bool> = diag.iter().map(|&a| a > 0.0 && a.is_finite()).collect();
    let seen: Vec<usize> = (0..np).filter(|&i| identifiable[i]).collect();
    let mut null_directions: Vec<(f64, Vec<f64>)> = (0..np)
        .filter(|&i| !identifiable[i])
        .map(|i| (0.0, (0..np).map(|j| f64::from(u8::from(i == j))).collect()))
        .collect();
    let mut min_eigenvalue = 0.0;
    if !seen.is_empty() {
        let C = DMatrix::from_fn(seen.len(), seen.len(), |a, b| {
            let (i, j) = (seen[a], seen[b]);
            A[(i, j)] / (diag[i] * diag[j]).sqrt()
        });
        let eigen = C.symmetric_eigen();
        min_eigenvalue = eigen.eigenvalues.min();
        for (k, &lambda) in eigen.eigenvalues.iter().enumerate() {
            if lambda < SINGULAR_EIGENVALUE {
                let mut direction = vec![0.0; np];
                for (a, &i) in seen.iter().enumerate() {
                    direction[i] = eigen.eigenvectors[(a, k)];
                }
                null_directions.push((lambda, direction));
                for (a, &i) in seen.iter().enumerate() {
                    if eigen.eigenvectors[(a, k)].abs() >= IMPLICATED {
                        identifiable[i] = false;
                    }
                }
            }
        }
    }
    // Drop parameters whose relative uncertainty is unbounded for practical purposes, then
    // recompute the others' covariance without them, until none is left to drop.
    loop {
        let kept: Vec<usize> = (0..np).filter(|&i| identifiable[i]).collect();
        let dof = r.len().saturating_sub(kept.len());
        let noise_variance = if noise_known || dof == 0 {
            1.0
        } else {
            r.norm_squared() / dof as f64
        };
        let sub = DMatrix::from_fn(kept.len(), kept.len(), |a, b| A[(kept[a], kept[b])]);
        let inverse = sub.try_inverse();
        let mut matrix = DMatrix::zeros(np, np);
        if let Some(inverse) = &inverse {
            for (a, &i) in kept.iter().enumerate() {
                for (b, &j) in kept.iter().enumerate() {
                    matrix[(i, j)] = noise_variance * inverse[(a, b)];
                }
            }
        }
        let vague: Vec<usize> = kept
            .iter()
            .copied()
            .filter(|&i| {
                // NaN (a negative diagonal from a numerically singular inverse) counts as vague.
                let relative_std = relative_scale[i] * matrix[(i, i)].sqrt();
                inverse.is_none() || relative_std.is_nan() || relative_std > MAX_RELATIVE_STD
            })
            .collect();
        if vague.is_empty() {
            return Covariance {
                matrix,
                identifiable,
                min_eigenvalue,
                noise_variance,
                null_directions,
            };
        }
        for i in vague {
            identifiable[i] = false;
        }
    }
}

/// z-value of the upper 0.05 % tail of the standard normal (a central 99.9 % range).
const Z9995: f64 = 3.290526731491926;

/// The `p`-quantile of the chi-square distribution with `dof` degrees of freedom, for the
/// normal quantile `z` of `p`, by the Wilson–Hilferty cube-root approximation
/// `ν (1 − 2/(9ν) + z √(2/(9ν)))³` (Wilson & Hilferty, PNAS 17, 1931; relative error below
/// 1 % for ν ≥ 30 at the 0.05 % tails, about 9 % in the lower tail at ν = 10), floored at 0.
pub fn chi2_quantile(dof: f64, z: f64) -> f64 {
    let a = 2.0 / (9.0 * dof);
    (dof * (1.0 - a + z * a.sqrt()).powi(3)).max(0.0)
}

/// The goodness-of-fit test of a fit with σ given (module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Chi2Test {
    /// `χ² = ‖r‖²` of the whitened residuals.
    pub chi2: f64,
    /// Degrees of freedom `ν = m − np`.
    pub dof: usize,
    /// `χ²/ν`.
    pub reduced: f64,
    /// The central 99.9 % range of `χ²/ν` for a right model and noise level.
    pub range: (f64, f64),
}

impl Chi2Test {
    /// `χ²/ν` above the range: the residuals are larger than the noise explains.
    pub fn too_large(&self) -> bool {
        self.reduced > self.range.1
    }

    /// `χ²/ν` outside the range, either side.
    pub fn flagged(&self) -> bool {
        self.reduced > self.range.1 || self.reduced < self.range.0
    }
}

/// The test of `χ² = ‖r‖²` with `dof` degrees of freedom (at least 1).
pub fn chi2_test(chi2: f64, dof: usize) -> Chi2Test {
    let nu = dof.max(1) as f64;
    Chi2Test {
        chi2,
        dof: dof.max(1),
        reduced: chi2 / nu,
        range: (
            chi2_quantile(nu, -Z9995) / nu,
            chi2_quantile(nu, Z9995) / nu,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn straight_line_fit_has_the_textbook_covariance() {
        // y = a + b t at t = 0, 1, 2 with unit noise: (JᵀJ)⁻¹ = [[5, −3], [−3, 3]] / 6.
        let J = DMatrix::from_row_slice(3, 2, &[1.0, 0.0, 1.0, 1.0, 1.0, 2.0]);
        let r = DVector::from_vec(vec![0.1, -0.2, 0.1]);
        let c = gauss_newton_covariance(&r, &J, true, &[0.0, 0.0]);
        assert!((c.matrix[(0, 0)] - 5.0 / 6.0).abs() < 1e-14);
        assert!((c.matrix[(0, 1)] + 0.5).abs() < 1e-14);
        assert_eq!(c.identifiable, [true, true]);
        // Unknown noise: scaled by ‖r‖²/(m − np) = 0.06.
        let c = gauss_newton_covariance(&r, &J, false, &[0.0, 0.0]);
        assert!((c.matrix[(1, 1)] - 0.06 * 0.5).abs() < 1e-14);
    }

    #[test]
    fn a_parameter_the_data_cannot_see_is_flagged() {
        // Column 2 is zero; columns 0 and 1 are exactly collinear.
        let J = DMatrix::from_row_slice(
            3,
            4,
            &[
                1.0, 2.0, 0.0, 1.0, //
                2.0, 4.0, 0.0, 0.0, //
                3.0, 6.0, 0.0, 1.0,
            ],
        );
        let r = DVector::zeros(3);
        let c = gauss_newton_covariance(&r, &J, true, &[1.0; 4]);
        assert_eq!(c.identifiable, [false, false, false, true]);
        assert!(c.std_dev(3).is_some() && c.std_dev(0).is_none());
        // The last one is seen, but only to ±1/√2 in s: vague against a relative bound of 10
        // once its relative scale is 100.
        let c = gauss_newton_covariance(&r, &J, true, &[1.0, 1.0, 1.0, 100.0]);
        assert_eq!(c.identifiable, [false; 4]);
    }

    #[test]
    fn null_directions_name_the_collinear_pair() {
        // Columns 0 and 1 are collinear (col 1 = 2 col 0): after unit scaling the null
        // direction is (1, −1)/√2 on them.
        let J = DMatrix::from_row_slice(3, 3, &[1.0, 2.0, 0.0, 2.0, 4.0, 1.0, 3.0, 6.0, 0.0]);
        let c = gauss_newton_covariance(&DVector::zeros(3), &J, true, &[0.0; 3]);
        assert_eq!(c.null_directions.len(), 1);
        let v = &c.null_directions[0].1;
        assert!((v[0].abs() - 0.5_f64.sqrt()).abs() < 1e-8 && (v[0] + v[1]).abs() < 1e-8);
        assert!(v[2].abs() < 1e-8);
    }

    /// Wilson–Hilferty against exact chi-square quantiles at 0.05 % and 99.95 % (scipy 1.x
    /// `chi2.ppf`), 1 % tolerance.
    #[test]
    fn chi2_quantiles_match_the_exact_ones() {
        for (nu, lo, hi) in [
            (30.0, 10.8044, 62.1619),
            (100.0, 59.8957, 153.1670),
            (1000.0, 859.3615, 1153.7379),
        ] {
            let (a, b) = (chi2_quantile(nu, -Z9995), chi2_quantile(nu, Z9995));
            assert!((a - lo).abs() / lo < 0.01, "ν = {nu}: {a} vs {lo}");
            assert!((b - hi).abs() / hi < 0.01, "ν = {nu}: {b} vs {hi}");
        }
        let t = chi2_test(1000.0, 1000);
        assert!(!t.flagged());
        assert!(chi2_test(1200.0, 1000).too_large());
        assert!(chi2_test(800.0, 1000).flagged());
    }
}
