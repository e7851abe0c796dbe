//! Fixed-length arrays of numbers read exactly from a problem file: serde's `[f64; N]` takes
//! the first N items of a longer TOML array and drops the rest, so `position = [0, 0, 0.05,
//! 7.0, "junk"]` loaded as `[0, 0, 0.05]`. These readers take the whole array and refuse any
//! other length (`invalid length 5, expected an array of length 3`), located at the field as
//! every other type error. Use as `#[serde(deserialize_with = "exact::array")]`, or
//! `default, deserialize_with = "exact::option"` on an optional field.

use serde::de::{Deserialize, Deserializer, Error};

fn exact<E: Error, const N: usize>(values: Vec<f64>) -> Result<[f64; N], E> {
    let n = values.len();
    values
        .try_into()
        .map_err(|_| E::invalid_length(n, &format!("an array of length {N}").as_str()))
}

/// A required `[f64; N]` of exactly N numbers.
pub fn array<'de, D: Deserializer<'de>, const N: usize>(d: D) -> Result<[f64; N], D::Error> {
    exact(Vec::<f64>::deserialize(d)?)
}

/// An optional `[f64; N]` of exactly N numbers.
pub fn option<'de, D: Deserializer<'de>, const N: usize>(
    d: D,
) -> Result<Option<[f64; N]>, D::Error> {
    Option::<Vec<f64>>::deserialize(d)?.map(exact).transpose()
}

/// An optional list of `[f64; N]`, each of exactly N numbers.
pub fn option_list<'de, D: Deserializer<'de>, const N: usize>(
    d: D,
) -> Result<Option<Vec<[f64; N]>>, D::Error> {
    Option::<Vec<Vec<f64>>>::deserialize(d)?
        .map(|list| list.into_iter().map(exact).collect())
        .transpose()
}
