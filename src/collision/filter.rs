//! Which geometry pairs may touch: MuJoCo's contact bit masks per geometry.

/// Contact bit masks (MuJoCo's `contype` and `conaffinity`): geometries `a` and `b` may touch
/// iff `(a.contype & b.conaffinity) | (b.contype & a.conaffinity) ≠ 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CollisionFilter {
    /// Contact type bits.
    pub contype: u32,
    /// Contact affinity bits.
    pub conaffinity: u32,
}

impl CollisionFilter {
    /// Whether geometries with filters `self` and `other` may touch.
    pub fn admits(&self, other: &CollisionFilter) -> bool {
        (self.contype & other.conaffinity) | (other.contype & self.conaffinity) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_admit_a_pair_when_either_type_meets_the_other_affinity() {
        let f = |contype, conaffinity| CollisionFilter {
            contype,
            conaffinity,
        };
        assert!(f(1, 1).admits(&f(1, 1)));
        assert!(f(2, 0).admits(&f(0, 2)) && f(0, 2).admits(&f(2, 0)));
        assert!(!f(1, 0).admits(&f(1, 0)));
        assert!(!f(0b01, 0b01).admits(&f(0b10, 0b10)));
    }
}
