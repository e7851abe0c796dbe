//! Sizes of what a run will allocate, computed and checked in one place before anything is
//! allocated, so that no input makes stiction panic ("capacity overflow") or abort (a failed
//! allocation): it refuses with [`Error::TooLarge`], naming the field or flag that sets the
//! size and the memory the request would need.
//!
//! - Step counts `n = round(duration / δt)` of every rollout: `simulate` and
//!   [`crate::scene::Scene::run_for`] ([`crate::simulate::recording_steps`]), the ncp stepper,
//!   optimization horizons and MPC, identification data ([`steps`]). A rollout records
//!   `n + 1` states and `n` step reports; the request is refused when those buffers alone
//!   would exceed [`MEMORY_CAP`].
//! - Pressure-field meshes: at most [`MESH_TRIANGLE_CAP`] surface triangles per geometry
//!   ([`crate::hydroelastic::Hydroelastic::validate`]).
//! - Lists of runs (the stiffnesses of a sweep): at most [`RUN_LIST_CAP`] ([`count`]).
//!
//! The estimates are lower bounds (the contacts of each step are not counted in advance), so
//! a refused request would certainly not fit.

use crate::error::{format_bytes, Error, Result};

/// The memory a single request may claim: 8 GiB (bytes). A recording at δt = 1 ms of a scene
/// with a few bodies takes a few hundred bytes per step: hours of simulated time fit.
pub const MEMORY_CAP: f64 = 8.0 * 1024.0 * 1024.0 * 1024.0;

/// The most surface triangles of one pressure-field mesh: 2²¹ (about two million), four times
/// Drake's finest sphere (`8·4⁸`). Finer meshes take minutes to build and gigabytes to hold.
pub const MESH_TRIANGLE_CAP: f64 = 2_097_152.0;

/// The most runs of one list (the stiffness values of a sweep): each is a whole rollout.
pub const RUN_LIST_CAP: usize = 10_000;

/// `request` of `count` items of `bytes_per_item` bytes, checked against [`MEMORY_CAP`];
/// returns `count` as a `usize`.
///
/// # Errors
/// [`Error::TooLarge`] naming `field` when the request needs more than [`MEMORY_CAP`] (or
/// `count` is not a finite non-negative number), with `advice` on how to make it fit.
pub fn allocation(
    field: &str,
    request: &str,
    count: f64,
    bytes_per_item: usize,
    advice: &str,
) -> Result<usize> {
    let bytes = count * bytes_per_item.max(1) as f64;
    if count >= 0.0 && bytes <= MEMORY_CAP {
        Ok(count as usize)
    } else {
        Err(Error::TooLarge {
            field: field.to_string(),
            request: format!("{request} of {} each", format_bytes(bytes_per_item as f64)),
            bytes,
            limit: format!(
                "{} (stiction::budget::MEMORY_CAP)",
                format_bytes(MEMORY_CAP)
            ),
            advice: advice.to_string(),
        })
    }
}

/// The number of steps of δt = `dt` (s) in `duration` (s), rounded to nearest, for a run that
/// keeps `bytes_per_step` bytes per step; `field` names what set the duration (or the step).
///
/// # Errors
/// [`Error::InvalidParameter`] for a negative or non-finite duration or a non-positive or
/// non-finite `dt`; [`Error::TooLarge`] when the run's buffers would exceed [`MEMORY_CAP`].
pub fn steps(field: &str, duration: f64, dt: f64, bytes_per_step: usize) -> Result<usize> {
    if !(dt > 0.0 && dt.is_finite()) {
        return Err(Error::invalid(
            "dt",
            dt,
            "the time step must be positive and finite (s)",
        ));
    }
    if !(duration >= 0.0 && duration.is_finite()) {
        return Err(Error::invalid(
            field,
            duration,
            "the duration must be non-negative and finite (s)",
        ));
    }
    let count = (duration / dt).round();
    allocation(
        field,
        &format!(
            "{} s at δt = {} s: {} steps",
            Short(duration),
            Short(dt),
            Short(count)
        ),
        count,
        bytes_per_step,
        "shorten the duration or take a larger time step",
    )
}

/// Memory of a pressure-field mesh per surface triangle (bytes, about): its share of the
/// vertices, the triangle, the tetrahedron of a compliant mesh and the BVH leaf.
const BYTES_PER_TRIANGLE: f64 = 100.0;

/// `request`, a mesh of about `triangles` surface triangles, checked against
/// [`MESH_TRIANGLE_CAP`].
///
/// # Errors
/// [`Error::TooLarge`] naming `field` (the resolution hint) for a finer mesh.
pub fn mesh(field: &str, request: &str, triangles: f64) -> Result<()> {
    if triangles <= MESH_TRIANGLE_CAP {
        return Ok(());
    }
    Err(Error::TooLarge {
        field: field.to_string(),
        request: format!("{request}: about {} triangles", Short(triangles)),
        bytes: triangles * BYTES_PER_TRIANGLE,
        limit: format!(
            "{MESH_TRIANGLE_CAP} triangles per mesh (stiction::budget::MESH_TRIANGLE_CAP)"
        ),
        advice: "raise the resolution hint (a coarser mesh), or make the geometry smaller".into(),
    })
}

/// `count` runs (`what`) of a list set by `field`, checked against [`RUN_LIST_CAP`]; returns
/// `count`.
///
/// # Errors
/// [`Error::TooLarge`] naming `field` for more than [`RUN_LIST_CAP`] runs.
pub fn count(field: &str, what: &str, count: f64) -> Result<usize> {
    if count >= 0.0 && count <= RUN_LIST_CAP as f64 {
        return Ok(count as usize);
    }
    Err(Error::TooLarge {
        field: field.to_string(),
        request: format!("{} {what}", Short(count)),
        bytes: 0.0,
        limit: format!("{RUN_LIST_CAP} {what} (stiction::budget::RUN_LIST_CAP)"),
        advice: "give fewer values (a larger factor, or a shorter list)".into(),
    })
}

/// A number in plain notation between 10⁻⁴ and 10⁶, in scientific notation otherwise.
struct Short(f64);

impl std::fmt::Display for Short {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let a = self.0.abs();
        if a == 0.0 || (1e-4..1e6).contains(&a) || !a.is_finite() {
            write!(f, "{}", self.0)
        } else {
            // Three significant digits, trailing zeros of the mantissa dropped: 1e12, 2.5e-7.
            let text = format!("{:.2e}", self.0);
            let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
            let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
            write!(f, "{mantissa}e{exponent}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_counts_round_and_huge_ones_are_refused_with_the_memory_they_need() {
        assert_eq!(steps("duration", 1.0, 1e-3, 100).unwrap(), 1000);
        assert_eq!(steps("duration", 0.0, 1e-3, 100).unwrap(), 0);
        // 1e12 steps of 72 B: 72 TB, named with the field.
        let e = steps("--dt", 1.0, 1e-12, 72).unwrap_err();
        let text = e.to_string();
        assert!(
            matches!(e, Error::TooLarge { bytes, .. } if bytes == 72e12),
            "{text}"
        );
        assert!(
            text.starts_with("`--dt`: 1 s at δt = 1e-12 s: 1e12 steps of 72 B each would need 72 TB; the cap is 8.59 GB"),
            "{text}"
        );
        // Counts beyond usize and f64 overflow are refused, never cast.
        let e = steps("duration", 1e300, 1e-300, 8).unwrap_err().to_string();
        assert!(e.contains(": inf steps of 8 B each"), "{e}");
        assert!(steps("duration", 1.0, 1e-300, 8).is_err());
        assert!(steps("duration", f64::INFINITY, 1e-3, 8).is_err());
        assert!(steps("duration", 1.0, 0.0, 8).is_err());
        assert!(steps("duration", -1.0, 1e-3, 8).is_err());
    }

    #[test]
    fn run_lists_are_capped() {
        assert_eq!(count("--stiffness", "rollouts", 10.0).unwrap(), 10);
        let e = count("--stiffness", "rollouts", 6.9e8).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "`--stiffness`: 6.9e8 rollouts are too many; the cap is 10000 rollouts"
            ),
            "{e}"
        );
    }

    #[test]
    fn bytes_print_with_three_digits() {
        assert_eq!(format_bytes(72e12), "72 TB");
        assert_eq!(format_bytes(40.0), "40 B");
        assert_eq!(format_bytes(3.25e9), "3.25 GB");
        assert_eq!(format_bytes(999.0), "999 B");
        assert_eq!(format_bytes(1e300), "1.00e300 B");
    }
}
