//! The world plane a scene is drawn in (side, top or front view), named on the command line
//! and in problem files (`projection = "xy"`). Always compiled: a problem file names it even
//! where the `plot` feature (which draws it, `report::animate`) is off.

use std::fmt;
use std::str::FromStr;

use nalgebra::Vector3;

use crate::error::{Error, Result};

/// The world plane a scene is drawn in: the first letter is the horizontal axis, the second the
/// vertical one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Projection {
    /// Side view: x to the right, z up (default).
    #[default]
    Xz,
    /// Top view: x to the right, y up.
    Xy,
    /// Front view: y to the right, z up.
    Yz,
}

impl Projection {
    /// All projections, in the order of their names.
    pub const ALL: [Projection; 3] = [Projection::Xz, Projection::Xy, Projection::Yz];

    /// The name used in files and on the command line (`xz`, `xy`, `yz`).
    pub fn name(self) -> &'static str {
        match self {
            Projection::Xz => "xz",
            Projection::Xy => "xy",
            Projection::Yz => "yz",
        }
    }

    /// World axis indices (horizontal, vertical).
    pub fn axes(self) -> (usize, usize) {
        match self {
            Projection::Xz => (0, 2),
            Projection::Xy => (0, 1),
            Projection::Yz => (1, 2),
        }
    }

    /// Projects a world point (m) onto the plane: (horizontal, vertical) coordinates (m).
    pub fn project(self, p: &Vector3<f64>) -> (f64, f64) {
        let (h, v) = self.axes();
        (p[h], p[v])
    }

    /// Distance of a world point (m) behind the view plane, away from the viewer: the viewer
    /// looks along `horizontal × vertical` reversed (right-handed: from −y in the side view,
    /// from +z in the top view, from +x in the front view).
    pub fn depth(self, p: &Vector3<f64>) -> f64 {
        match self {
            Projection::Xz => p.y,
            Projection::Xy => -p.z,
            Projection::Yz => -p.x,
        }
    }
}

impl fmt::Display for Projection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Projection {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Projection::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| Error::invalid("projection", s, "expected one of xz, xy, yz"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projections_parse_by_name() {
        for p in Projection::ALL {
            assert_eq!(p.name().parse::<Projection>().unwrap(), p);
        }
        assert!("zx".parse::<Projection>().is_err());
    }

    /// Depth grows away from the viewer, who sees the horizontal axis to the right and the
    /// vertical one up: `h × v` points at the viewer.
    #[test]
    fn depth_grows_away_from_the_viewer() {
        for p in Projection::ALL {
            let (h, v) = p.axes();
            let toward_viewer = Vector3::ith(h, 1.0).cross(&Vector3::ith(v, 1.0));
            assert_eq!(p.depth(&toward_viewer), -1.0, "{p}");
        }
    }
}
