//! The scalar bound shared by everything on the derivative path.
//!
//! Simulator code is written once over `T: Scalar` so that `f64` and num-dual types
//! (`Dual64`, `DualSVec64<N>`, `HyperDual64`, …) flow through the same functions. Branches
//! (active sets, regions of a piecewise potential) are taken on the real part [`Scalar::re`];
//! the derivative is then that of the active piece.

use nalgebra::RealField;
use num_dual::{DualNum, DualStruct};

/// A real scalar: `f64` or a forward-mode dual number over `f64`.
///
/// Blanket-implemented for every `RealField + Copy` type that num-dual knows as a dual
/// number with `f64` primitive. Only [`Scalar::re`] is added to `RealField`, so that math
/// methods (`sqrt`, `powi`, …) resolve to nalgebra's `ComplexField` without ambiguity.
pub trait Scalar: RealField + Copy + Send + Sync {
    /// The real (value) part, as `f64`.
    fn re(&self) -> f64;
}

impl<T> Scalar for T
where
    T: RealField + Copy + Send + Sync + DualNum<Primitive = f64>,
{
    #[inline]
    fn re(&self) -> f64 {
        DualStruct::re(self)
    }
}

/// Whether `T` is `f64`, whose `==` compares everything a value carries. Dual numbers compare
/// their real parts only (num-dual's `PartialEq`): two duals that are `==` can differ in their
/// derivatives, so a value must not be reused for another merely because they are `==`.
pub fn is_f64<T: Scalar>() -> bool {
    std::any::TypeId::of::<T>() == std::any::TypeId::of::<f64>()
}

/// A constant lifted into `T` (no derivative part).
#[inline]
pub fn lit<T: Scalar>(x: f64) -> T {
    nalgebra::convert(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_dual::Dual64;

    #[test]
    fn real_part_of_dual_and_f64() {
        let x = Dual64::new(1.5, 2.0);
        assert_eq!(Scalar::re(&x), 1.5);
        assert_eq!(Scalar::re(&2.5_f64), 2.5);
        let y: Dual64 = lit(0.25);
        assert_eq!(y.eps, 0.0);
        assert!(is_f64::<f64>() && !is_f64::<Dual64>());
        assert_eq!(Dual64::new(1.0, 0.0), Dual64::new(1.0, 1.0));
    }
}
