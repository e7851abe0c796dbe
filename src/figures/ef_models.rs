//! Elandt Sec. 4.1-4.2 (Table 4.1, Figs. 4.2-4.5): the eight ways to generalize the planar
//! elastic-foundation (EF, Winkler) model of Sec. 2.0.7 to arbitrary angles, and the three
//! rounds that eliminate all but PLP, the model PFC generalizes (Sec. 4.3).
//!
//! In 2-D, per unit depth: a layer with its surface on z = 0, compliant below, of stiffness
//! `k` per unit area and unit stretch (`k = E/H` for a layer of modulus E and thickness H;
//! N/m³), and a rigid penetrator, a polygon of outward normal `n̂`. At a point of the
//! penetrator's boundary `d = −z` deep, with `cos θ = −n̂_z` (the angle between the
//! penetrator's inward normal and the layer's normal `ẑ`), a generalized EF model (Fig. 4.2)
//! takes, independently,
//!
//! - the traction's direction from the layer, `ẑ`, or from the penetrator, `−n̂`;
//! - the spring's stretch from the layer, `d` (along the layer's normal), or from the
//!   penetrator, `d / cos θ` (along the penetrator's normal up to the layer's surface);
//! - the area from the penetrator, `ds` (its boundary), or from the layer, `ds cos θ` (its
//!   projection on the layer's surface, `|dx|`);
//!
//! and applies `direction · k · stretch · area`. The three letters name, in this order, where
//! direction, stretch and area come from (Table 4.1: PLP, LLP, LLL, PPL, LPL, LPP, PPP, PLL).
//! A variable-stiffness layer (Sec. 4.2.3) has `k(x)`, taken where the traction acts; the
//! PLP model's traction is then the pressure field `p0 = k(x) d` of Sec. 4.3.
//!
//! The force is the boundary integral over the submerged edges, each cut at the layer's
//! surface and at the stiffness profile's knots; on each piece the integrand is a polynomial
//! of degree 2 in the arc length (`k` and `d` linear, `θ` constant), which the 2-point
//! Gauss–Legendre rule integrates exactly: the forces are exact to round-off.
//!
//! The rounds (the seed copy keeps Table 4.1 and the text, not the figures' drawings; the
//! boat, the loop and their sizes are ours):
//!
//! 1. Sec. 4.2.1, Fig. 4.3: an asymmetric boat (a vertical left wall, a flat bottom, a right
//!    side sloped at 45°) 5 mm into a uniform layer. LPP and PPP put an unbounded stretch on
//!    the vertical wall over a finite area; PLL gives the wall no area and the slope an
//!    up-left traction, a net leftward force. A wall exactly vertical makes `d / cos θ`
//!    unbounded at every point (no quadrature can refine it), so the wall is tilted by
//!    `ε = 8°/2^j` and `ε → 0` is the refinement: LPP's and PPP's forces grow as `1/ε`, the
//!    others converge.
//! 2. Sec. 4.2.2, Fig. 4.4: for a planar layer, `(d / cos θ)(ds cos θ) = d ds`, so PPL's force
//!    is PLP's and LPL's is LLP's, over any pose.
//! 3. Sec. 4.2.3, Fig. 4.5: a block moved quasi-statically around a closed loop through a
//!    layer whose stiffness ramps up linearly, stays constant and ramps down. PLP's force is
//!    `−∇U`, `U = ∫ p0 dA` over the submerged region (divergence theorem, `p0 = 0` on the
//!    surface), so its closed work is the trapezoid rule's error, second order; LLP and LLL
//!    push only up, and their closed work does not fall with refinement.

use nalgebra::Vector2;

use super::{number, Loader, Number, PaperFigure, Quality};
use crate::error::{Error, Result};
use crate::report::plot::{Curve, LinePanel};

/// Where a feature of a generalized EF model comes from (Fig. 4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Inherit {
    /// The penetrator `P`.
    Penetrator,
    /// The layer `L`.
    Layer,
}

/// A generalized EF model (Sec. 4.1): where its traction direction, spring stretch and area
/// come from, named by Table 4.1's three letters in that order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EfModel {
    /// Traction direction: `−n̂` (P) or `ẑ` (L).
    pub direction: Inherit,
    /// Spring stretch: `d / cos θ` (P) or `d` (L).
    pub stretch: Inherit,
    /// Area: `ds` (P) or `ds cos θ` (L).
    pub area: Inherit,
}

impl EfModel {
    /// The model of Table 4.1 named by three letters `P`/`L` (`"PLP"`).
    pub(crate) fn named(name: &str) -> Result<Self> {
        let letter = |c: u8| match c {
            b'P' => Ok(Inherit::Penetrator),
            b'L' => Ok(Inherit::Layer),
            _ => Err(Error::invalid(
                "EF model",
                name,
                "expected three letters P or L (direction, stretch, area)",
            )),
        };
        match name.as_bytes() {
            &[d, s, a] => Ok(EfModel {
                direction: letter(d)?,
                stretch: letter(s)?,
                area: letter(a)?,
            }),
            _ => Err(Error::invalid(
                "EF model",
                name,
                "expected three letters P or L (direction, stretch, area)",
            )),
        }
    }

    /// Its three letters.
    pub(crate) fn name(self) -> String {
        [self.direction, self.stretch, self.area]
            .iter()
            .map(|i| match i {
                Inherit::Penetrator => 'P',
                Inherit::Layer => 'L',
            })
            .collect()
    }
}

/// Table 4.1's models, in its order.
pub(crate) const TABLE_4_1: [&str; 8] = ["PLP", "LLP", "LLL", "PPL", "LPL", "LPP", "PPP", "PLL"];

/// A layer's stiffness per unit area and unit stretch `k(x)` (N/m³), piecewise linear through
/// `knots` `(x (m), k)` in increasing x, constant beyond the first and the last.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Stiffness {
    knots: Vec<(f64, f64)>,
}

impl Stiffness {
    /// A uniform layer of stiffness `k` (N/m³).
    pub(crate) fn uniform(k: f64) -> Result<Self> {
        Self::profile(vec![(0.0, k)])
    }

    /// A profile through `knots`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] if there are no knots, a value is not finite or negative,
    /// or the abscissae do not increase.
    pub(crate) fn profile(knots: Vec<(f64, f64)>) -> Result<Self> {
        if knots.is_empty() {
            return Err(Error::invalid("stiffness knots", 0, "need at least one"));
        }
        if let Some(&(x, k)) = knots
            .iter()
            .find(|(x, k)| !x.is_finite() || !k.is_finite() || *k < 0.0)
        {
            return Err(Error::invalid(
                "stiffness knot",
                format!("({x}, {k})"),
                "expected a finite x and a finite k ≥ 0",
            ));
        }
        if knots.windows(2).any(|w| w[1].0 <= w[0].0) {
            return Err(Error::invalid(
                "stiffness knots",
                format!("{knots:?}"),
                "abscissae must increase",
            ));
        }
        Ok(Stiffness { knots })
    }

    /// `k(x)` (N/m³).
    pub(crate) fn at(&self, x: f64) -> f64 {
        let (first, last) = (self.knots[0], self.knots[self.knots.len() - 1]);
        if x <= first.0 {
            return first.1;
        }
        if x >= last.0 {
            return last.1;
        }
        let i = self.knots.partition_point(|&(xk, _)| xk <= x);
        let ((x0, k0), (x1, k1)) = (self.knots[i - 1], self.knots[i]);
        k0 + (k1 - k0) * (x - x0) / (x1 - x0)
    }
}

/// The part of the segment `a → b` below the layer's surface z = 0, if any (m).
pub(crate) fn submerged(a: Vector2<f64>, b: Vector2<f64>) -> Option<(Vector2<f64>, Vector2<f64>)> {
    match (a.y <= 0.0, b.y <= 0.0) {
        (true, true) => Some((a, b)),
        (false, false) => None,
        (a_in, _) => {
            let crossing = a + (b - a) * (a.y / (a.y - b.y));
            Some(if a_in { (a, crossing) } else { (crossing, b) })
        }
    }
}

/// Twice the signed area of a polygon (m²): positive when counter-clockwise in (x, z).
pub(crate) fn twice_signed_area(polygon: &[Vector2<f64>]) -> f64 {
    (0..polygon.len())
        .map(|i| {
            let (a, b) = (polygon[i], polygon[(i + 1) % polygon.len()]);
            a.x * b.y - b.x * a.y
        })
        .sum()
}

/// Gauss–Legendre, 2 points on [−1, 1]: exact for cubics.
const GAUSS_2: [f64; 2] = [-0.577_350_269_189_625_8, 0.577_350_269_189_625_8];

/// The force per unit depth (N/m) of a generalized EF model (Sec. 4.1, Fig. 4.2) on a rigid
/// polygon `polygon` (vertices in (x, z), m, counter-clockwise) in a layer of stiffness
/// `stiffness`: `∫ direction · k · stretch · area` over the boundary below z = 0.
///
/// # Errors
/// [`Error::InvalidParameter`] if the polygon has fewer than 3 vertices, a non-finite one, or
/// is not counter-clockwise; if the model stretches along the penetrator's normal (`d/cos θ`)
/// on a submerged edge whose normal does not point down (`cos θ ≤ 0`: the stretch is
/// unbounded), or takes the layer's area on one that faces up (`cos θ < 0`: no projection).
pub(crate) fn ef_force(
    model: EfModel,
    polygon: &[Vector2<f64>],
    stiffness: &Stiffness,
) -> Result<Vector2<f64>> {
    if polygon.len() < 3 || polygon.iter().any(|v| !v.x.is_finite() || !v.y.is_finite()) {
        return Err(Error::invalid(
            "penetrator polygon",
            format!("{} vertices", polygon.len()),
            "need at least 3 finite vertices",
        ));
    }
    if twice_signed_area(polygon) <= 0.0 {
        return Err(Error::invalid(
            "penetrator polygon",
            "clockwise or degenerate",
            "vertices must go counter-clockwise in (x, z)",
        ));
    }
    let mut force = Vector2::zeros();
    for i in 0..polygon.len() {
        let Some((a, b)) = submerged(polygon[i], polygon[(i + 1) % polygon.len()]) else {
            continue;
        };
        let edge = b - a;
        let length = edge.norm();
        if length == 0.0 {
            continue;
        }
        let normal = Vector2::new(edge.y, -edge.x) / length;
        let cos = -normal.y;
        if model.stretch == Inherit::Penetrator && cos <= 0.0 {
            return Err(Error::invalid(
                &format!("{} stretch d/cos θ", model.name()),
                format!("cos θ = {cos:e} on the edge ({}, {}) → ({}, {})", a.x, a.y, b.x, b.y),
                "the penetrator's normal does not reach the layer's surface: the stretch is unbounded",
            ));
        }
        if model.area == Inherit::Layer && cos < 0.0 {
            return Err(Error::invalid(
                &format!("{} area ds cos θ", model.name()),
                format!(
                    "cos θ = {cos:e} on the edge ({}, {}) → ({}, {})",
                    a.x, a.y, b.x, b.y
                ),
                "the edge faces away from the layer: it has no projected area",
            ));
        }
        let direction = match model.direction {
            Inherit::Penetrator => -normal,
            Inherit::Layer => Vector2::new(0.0, 1.0),
        };
        // Cut at the stiffness knots the edge crosses, where k has a kink.
        let mut cuts = vec![0.0, 1.0];
        if edge.x != 0.0 {
            cuts.extend(
                stiffness
                    .knots
                    .iter()
                    .map(|&(x, _)| (x - a.x) / edge.x)
                    .filter(|s| *s > 0.0 && *s < 1.0),
            );
        }
        cuts.sort_by(f64::total_cmp);
        for piece in cuts.windows(2) {
            let (middle, half) = (0.5 * (piece[0] + piece[1]), 0.5 * (piece[1] - piece[0]));
            let ds = length * half;
            for xi in GAUSS_2 {
                let r = a + edge * (middle + half * xi);
                let depth = -r.y;
                let stretch = match model.stretch {
                    Inherit::Penetrator => depth / cos,
                    Inherit::Layer => depth,
                };
                let area = match model.area {
                    Inherit::Penetrator => ds,
                    Inherit::Layer => ds * cos,
                };
                force += direction * (stiffness.at(r.x) * stretch * area);
            }
        }
    }
    Ok(force)
}

/// The layer's stiffness in Rounds 1 and 2: E = 1 MPa over H = 1 cm (N/m³).
const K: f64 = 1e6 / 0.01;
/// The boat's keel depth in Round 1 (m).
const KEEL_DEPTH: f64 = 0.005;
/// The boat's flat bottom (m).
const BOTTOM: f64 = 0.02;
/// The boat's height, keel to deck (m): the deck stays 5 mm above the surface.
const HULL: f64 = 0.01;
/// The right side's slope from the horizontal (rad).
const SLOPE: f64 = std::f64::consts::FRAC_PI_4;
/// The left wall's largest tilt from the vertical, at refinement level 0 (rad).
const TILT: f64 = 8.0 * std::f64::consts::PI / 180.0;

/// Fig. 4.3's boat (counter-clockwise in (x, z), m): keel from (0, −depth) to (BOTTOM,
/// −depth), the right side up at SLOPE to the deck HULL above the keel, the deck back, and
/// the left wall down to the keel, leaning out by `tilt` (rad) from the vertical (0: vertical).
pub(crate) fn boat(depth: f64, tilt: f64) -> Vec<Vector2<f64>> {
    let keel = -depth;
    let deck = keel + HULL;
    vec![
        Vector2::new(0.0, keel),
        Vector2::new(BOTTOM, keel),
        Vector2::new(BOTTOM + HULL / SLOPE.tan(), deck),
        Vector2::new(-HULL * tilt.tan(), deck),
    ]
}

/// `polygon` turned by `angle` (rad, counter-clockwise) about `centre` and moved by `shift` (m).
fn placed(
    polygon: &[Vector2<f64>],
    centre: Vector2<f64>,
    angle: f64,
    shift: Vector2<f64>,
) -> Vec<Vector2<f64>> {
    let (s, c) = angle.sin_cos();
    polygon
        .iter()
        .map(|v| {
            let r = v - centre;
            centre + Vector2::new(c * r.x - s * r.y, s * r.x + c * r.y) + shift
        })
        .collect()
}

/// An axis-aligned rectangle (counter-clockwise, m): `width` by `height`, its bottom's middle
/// at `bottom`.
pub(crate) fn rectangle(width: f64, height: f64, bottom: Vector2<f64>) -> Vec<Vector2<f64>> {
    let h = 0.5 * width;
    vec![
        bottom + Vector2::new(-h, 0.0),
        bottom + Vector2::new(h, 0.0),
        bottom + Vector2::new(h, height),
        bottom + Vector2::new(-h, height),
    ]
}

/// Round 1 (Sec. 4.2.1, Fig. 4.3): each model's force on the boat at wall tilts
/// `TILT / 2^j`, j = 0 … `levels` − 1, in units of `k D²` (D the keel depth).
fn round_1(models: &[EfModel], levels: usize) -> Result<Vec<Vec<Vector2<f64>>>> {
    let uniform = Stiffness::uniform(K)?;
    let scale = K * KEEL_DEPTH * KEEL_DEPTH;
    models
        .iter()
        .map(|&m| {
            (0..levels)
                .map(|j| {
                    let tilt = TILT / f64::from(1 << j);
                    Ok(ef_force(m, &boat(KEEL_DEPTH, tilt), &uniform)? / scale)
                })
                .collect()
        })
        .collect()
}

/// Round 2's poses (Sec. 4.2.2, Fig. 4.4): the boat (wall tilted by TILT) turned by −6° … 6°
/// about its keel's middle at keel depths 3, 5 and 7 mm, and a 2 × 1 cm rectangle turned by
/// 10° … 70° with its lowest corner 1, 2 and 3 mm deep. Every submerged edge faces down.
fn round_2_poses() -> Vec<Vec<Vector2<f64>>> {
    let mut poses = Vec::new();
    for depth in [0.003, 0.005, 0.007] {
        for degrees in [-6.0_f64, -3.0, 0.0, 3.0, 6.0] {
            let hull = boat(depth, TILT);
            let centre = Vector2::new(0.5 * BOTTOM, -depth);
            poses.push(placed(
                &hull,
                centre,
                degrees.to_radians(),
                Vector2::zeros(),
            ));
        }
    }
    for depth in [0.001, 0.002, 0.003] {
        for degrees in [10.0_f64, 25.0, 40.0, 55.0, 70.0] {
            let turned = placed(
                &rectangle(0.02, 0.01, Vector2::zeros()),
                Vector2::zeros(),
                degrees.to_radians(),
                Vector2::zeros(),
            );
            let lowest = turned.iter().fold(f64::INFINITY, |m, v| m.min(v.y));
            poses.push(
                turned
                    .iter()
                    .map(|v| v + Vector2::new(0.0, -depth - lowest))
                    .collect(),
            );
        }
    }
    poses
}

/// Round 3's layer (Sec. 4.2.3, Fig. 4.5): stiffness 0 left of x = 0, rising linearly to
/// `K` at RAMP, constant to RAMP + PLATEAU, falling linearly to 0 at 2 RAMP + PLATEAU (m).
const RAMP: f64 = 0.03;
/// Round 3's constant-stiffness stretch (m).
const PLATEAU: f64 = 0.04;
/// Round 3's block: width and height (m).
const BLOCK: [f64; 2] = [0.02, 0.01];
/// How deep the block's bottom goes on B → C → D (m).
const LOOP_DEPTH: f64 = 0.003;
/// How far above the surface the block's bottom is at A (m).
const CLEARANCE: f64 = 0.002;

/// The loop's corners, the block's bottom middle (x, z) (m): A (clear, above and left of the
/// layer), B (LOOP_DEPTH deep, over the constant stretch), C (as deep, further right on it),
/// D (as deep, past the layer's right end, where k = 0), E (clear, above D); back to A.
fn loop_corners() -> [Vector2<f64>; 5] {
    let half = 0.5 * BLOCK[0];
    let end = 2.0 * RAMP + PLATEAU;
    [
        Vector2::new(-half - 0.005, CLEARANCE),
        Vector2::new(RAMP + half + 0.003, -LOOP_DEPTH),
        Vector2::new(RAMP + PLATEAU - half - 0.004, -LOOP_DEPTH),
        Vector2::new(end + half + 0.004, -LOOP_DEPTH),
        Vector2::new(end + half + 0.004, CLEARANCE),
    ]
}

/// Round 3's leg names.
const LEGS: [&str; 5] = ["A → B", "B → C", "C → D", "D → E", "E → A"];

/// The work done on the block along each leg of the loop (J/m) by the trapezoid rule on
/// `steps` equal steps a leg, the force of `model` at each pose.
fn loop_work(model: EfModel, stiffness: &Stiffness, steps: usize) -> Result<Vec<f64>> {
    let corners = loop_corners();
    (0..corners.len())
        .map(|l| {
            let (start, end) = (corners[l], corners[(l + 1) % corners.len()]);
            let step = (end - start) / steps as f64;
            let forces = (0..=steps)
                .map(|i| {
                    let at = start + step * i as f64;
                    ef_force(model, &rectangle(BLOCK[0], BLOCK[1], at), stiffness)
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(forces
                .windows(2)
                .map(|w| 0.5 * (w[0] + w[1]).dot(&step))
                .sum())
        })
        .collect()
}

/// Round 3's stiffness profile.
fn ramped() -> Result<Stiffness> {
    Stiffness::profile(vec![
        (0.0, 0.0),
        (RAMP, K),
        (RAMP + PLATEAU, K),
        (2.0 * RAMP + PLATEAU, 0.0),
    ])
}

/// Elandt Sec. 4.1-4.2, Table 4.1, Figs. 4.2-4.5: the eight generalized EF models through the
/// three rounds of elimination.
pub(super) fn ef_models(_load: Loader<'_>, quality: Quality) -> Result<PaperFigure> {
    let levels = match quality {
        Quality::Quick => 7,
        Quality::Full => 11,
    };
    let models = TABLE_4_1
        .iter()
        .map(|n| EfModel::named(n))
        .collect::<Result<Vec<_>>>()?;
    let mut numbers: Vec<Number> = Vec::new();
    let level = |j: usize| j as f64;

    // Round 1.
    let forces = round_1(&models, levels)?;
    let finest_tilt = TILT / f64::from(1 << (levels - 1));
    let (mut magnitude_curves, mut fx_curves) = (Vec::new(), Vec::new());
    for (m, f) in models.iter().zip(&forces) {
        let key = m.name().to_lowercase();
        let (last, before) = (f[levels - 1], f[levels - 2]);
        let unbounded = m.stretch == Inherit::Penetrator && m.area == Inherit::Penetrator;
        let broken = m.name() == "PLL";
        let verdict = if unbounded {
            "✗: infinite force on the vertical wall"
        } else if broken {
            "✗: net force to the left"
        } else {
            "✓: sensible"
        };
        numbers.push(number(
            format!("round1.{key}.fx"),
            format!(
                "Round 1, {}: F_x on the boat over k D², wall {:.4}° from vertical",
                m.name(),
                finest_tilt.to_degrees()
            ),
            verdict,
            last.x,
            "1",
        ));
        numbers.push(number(
            format!("round1.{key}.fz"),
            format!(
                "Round 1, {}: F_z on the boat over k D², wall {:.4}° from vertical",
                m.name(),
                finest_tilt.to_degrees()
            ),
            "",
            last.y,
            "1",
        ));
        numbers.push(number(
            format!("round1.{key}.growth"),
            format!(
                "Round 1, {}: |F| at the finest tilt over |F| at twice it",
                m.name()
            ),
            if unbounded {
                "→ ∞ (2: |F| ∝ 1/ε)"
            } else {
                "finite (1)"
            },
            last.norm() / before.norm(),
            "1",
        ));
        magnitude_curves.push(Curve {
            name: m.name(),
            points: f
                .iter()
                .enumerate()
                .map(|(j, v)| (level(j), v.norm().log10()))
                .collect(),
        });
        // PPP's F_x grows without bound: not drawn (NaN), so each model keeps its colour.
        let drawn = m.name() != "PPP";
        fx_curves.push(Curve {
            name: m.name(),
            points: f
                .iter()
                .enumerate()
                .map(|(j, v)| (level(j), if drawn { v.x } else { f64::NAN }))
                .collect(),
        });
    }
    // The thesis's boat itself, its wall vertical: the layer-stretch models are defined.
    let uniform = Stiffness::uniform(K)?;
    let scale = K * KEEL_DEPTH * KEEL_DEPTH;
    let vertical = boat(KEEL_DEPTH, 0.0);
    let pll = ef_force(EfModel::named("PLL")?, &vertical, &uniform)? / scale;
    numbers.push(number(
        "round1.pll.fx_vertical".into(),
        "Round 1, PLL: F_x on the boat with its wall vertical over k D² (closed form −cos 45°/2 = −0.35355)".into(),
        "< 0: a net force to the left",
        pll.x,
        "1",
    ));
    let submerged_area = BOTTOM * KEEL_DEPTH + 0.5 * KEEL_DEPTH * KEEL_DEPTH / SLOPE.tan();
    let plp = ef_force(EfModel::named("PLP")?, &vertical, &uniform)?;
    numbers.push(number(
        "round1.plp.fz_over_area".into(),
        "Round 1, PLP: F_z on the boat with its wall vertical over k × its submerged area".into(),
        "",
        plp.y / (K * submerged_area),
        "1",
    ));
    let unbounded = ef_force(EfModel::named("PPP")?, &vertical, &uniform).is_err()
        && ef_force(EfModel::named("LPP")?, &vertical, &uniform).is_err();
    numbers.push(number(
        "round1.vertical_wall_unbounded".into(),
        "Round 1: LPP and PPP on the boat with its wall vertical are refused as unbounded (1 = yes)".into(),
        "infinite stretch over a finite area",
        if unbounded { 1.0 } else { 0.0 },
        "1",
    ));

    // Round 2.
    let poses = round_2_poses();
    for (pair, (a, b)) in [("ppl_plp", ("PPL", "PLP")), ("lpl_llp", ("LPL", "LLP"))] {
        let (ma, mb) = (EfModel::named(a)?, EfModel::named(b)?);
        let mut largest = 0.0_f64;
        for pose in &poses {
            let (fa, fb) = (ef_force(ma, pose, &uniform)?, ef_force(mb, pose, &uniform)?);
            largest = largest.max((fa - fb).norm() / fb.norm());
        }
        numbers.push(number(
            format!("round2.{pair}"),
            format!(
                "Round 2: largest |F_{a} − F_{b}| / |F_{b}| over {} poses",
                poses.len()
            ),
            &format!("{a} algebraically equal to {b}"),
            largest,
            "1",
        ));
    }

    // Round 3. The closed work is measured against PLP's stored energy at B: going in
    // stores U(B) = ∫ p0 dA = k w δ²/2 (PLP's force is −∇U).
    let stiffness = ramped()?;
    let stored = K * BLOCK[0] * LOOP_DEPTH * LOOP_DEPTH / 2.0;
    let finest = 8 << (levels - 1);
    let mut closed_curves = Vec::new();
    for name in ["PLP", "LLP", "LLL"] {
        let model = EfModel::named(name)?;
        let key = name.to_lowercase();
        let mut points = Vec::new();
        let mut legs = Vec::new();
        for j in 0..levels {
            let steps = 8 << j;
            legs = loop_work(model, &stiffness, steps)?;
            let closed = legs.iter().sum::<f64>() / stored;
            numbers.push(number(
                format!("round3.{key}.closed_{steps}"),
                format!("Round 3, {name}: work done on the block around the loop over U(B) = {stored:.3} J/m at {steps} steps a leg"),
                if name == "PLP" { "→ 0 (conservative)" } else { "≠ 0 (makes or loses energy)" },
                closed,
                "1",
            ));
            points.push((level(j), closed.abs().log10()));
        }
        numbers.push(number(
            format!("round3.{key}.closed"),
            format!("Round 3, {name}: work done on the block around the loop over U(B) at {finest} steps a leg"),
            if name == "PLP" { "0: ✓ (conservative)" } else { "≠ 0: ✗ (LLP, LLL: less given back on C-D than consumed on A-B)" },
            legs.iter().sum::<f64>() / stored,
            "1",
        ));
        for ((leg, label), work) in ["ab", "bc", "cd", "de", "ea"].iter().zip(LEGS).zip(&legs) {
            numbers.push(number(
                format!("round3.{key}.work_{leg}"),
                format!(
                    "Round 3, {name}: work done on the block along {label} ({finest} steps a leg)"
                ),
                if *leg == "bc" || *leg == "de" || *leg == "ea" {
                    "0 (B → C, D → A)"
                } else {
                    ""
                },
                *work,
                "J/m",
            ));
        }
        closed_curves.push(Curve {
            name: name.into(),
            points,
        });
    }
    let plp = loop_work(EfModel::named("PLP")?, &stiffness, finest)?;
    numbers.push(number(
        "round3.plp.consumed_over_returned".into(),
        format!(
            "Round 3, PLP: −(work along A → B) over the work along C → D ({finest} steps a leg)"
        ),
        "1: the same energy generated on C-D as consumed on A-B",
        -plp[0] / plp[2],
        "1",
    ));
    numbers.push(number(
        "round3.plp.work_ab_error".into(),
        format!("Round 3, PLP: |work along A → B + U(B)| over U(B), U(B) = k w δ²/2 ({finest} steps a leg)"),
        "0 (F = −∇U)",
        (plp[0] + stored).abs() / stored,
        "1",
    ));

    let corners = loop_corners();
    Ok(PaperFigure {
        name: "elandt-ef-models",
        title: "Elandt Sec. 4.2, Table 4.1: the eight generalized EF models, Rounds 1 and 3".into(),
        x_label: "refinement level j: the boat's wall 8°/2^j from vertical (top two), 8·2^j steps a leg (bottom)",
        panels: vec![
            LinePanel {
                y_label: "Round 1: log10 |F| / (k D²) on the boat",
                curves: magnitude_curves,
            },
            LinePanel {
                y_label: "Round 1: F_x / (k D²) (PPP's, unbounded, not drawn)",
                curves: fx_curves,
            },
            LinePanel {
                y_label: "Round 3: log10 |closed work| / U(B)",
                curves: closed_curves,
            },
        ],
        equal_aspect: false,
        numbers,
        notes: vec![
            format!(
                "Per unit depth; layer surface z = 0, k = E/H = {K:e} N/m³ (E = 1 MPa, H = 1 cm). Round 1: the boat's keel {} mm deep, flat bottom {} cm, right side at 45° to a deck {} cm above the keel, left wall tilted ε = 8°/2^j out from the vertical (the thesis's boat is ε → 0). Round 2: {} poses (the boat turned by ±6° at 3-7 mm, a 2 × 1 cm rectangle turned by 10-70° at 1-3 mm).",
                KEEL_DEPTH * 1e3,
                BOTTOM * 1e2,
                HULL * 1e2,
                poses.len(),
            ),
            format!(
                "Round 3: k(x) = 0 for x < 0, linear to k at x = {} cm, constant to {} cm, linear to 0 at {} cm; a {} × {} cm block, its bottom's middle at A ({:.1}, +{:.1}) → B ({:.1}, {:.1}) → C ({:.1}, {:.1}) → D ({:.1}, {:.1}) → E ({:.1}, +{:.1}) → A cm, translating. Elandt's boat and loop are sketches without numbers; these are ours.",
                RAMP * 1e2,
                (RAMP + PLATEAU) * 1e2,
                (2.0 * RAMP + PLATEAU) * 1e2,
                BLOCK[0] * 1e2,
                BLOCK[1] * 1e2,
                corners[0].x * 1e2,
                corners[0].y * 1e2,
                corners[1].x * 1e2,
                corners[1].y * 1e2,
                corners[2].x * 1e2,
                corners[2].y * 1e2,
                corners[3].x * 1e2,
                corners[3].y * 1e2,
                corners[4].x * 1e2,
                corners[4].y * 1e2,
            ),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(name: &str) -> EfModel {
        EfModel::named(name).expect("a Table 4.1 name")
    }

    #[test]
    fn names_round_trip_and_bad_names_are_refused() {
        for name in TABLE_4_1 {
            assert_eq!(model(name).name(), name);
        }
        assert!(EfModel::named("PLX").is_err());
        assert!(EfModel::named("PL").is_err());
    }

    #[test]
    fn submerged_cuts_at_the_surface() {
        let (a, b) = (Vector2::new(0.0, 1.0), Vector2::new(2.0, -1.0));
        let (p, q) = submerged(a, b).expect("crosses");
        assert_eq!((p, q), (Vector2::new(1.0, 0.0), b));
        let (p, q) = submerged(b, a).expect("crosses");
        assert_eq!((p, q), (b, Vector2::new(1.0, 0.0)));
        assert!(submerged(a, Vector2::new(3.0, 2.0)).is_none());
    }

    #[test]
    fn stiffness_profile_interpolates_and_validates() {
        let s = Stiffness::profile(vec![(0.0, 0.0), (1.0, 4.0), (3.0, 4.0), (4.0, 0.0)])
            .expect("valid");
        assert_eq!(s.at(-1.0), 0.0);
        assert_eq!(s.at(0.25), 1.0);
        assert_eq!(s.at(2.0), 4.0);
        assert_eq!(s.at(3.5), 2.0);
        assert_eq!(s.at(5.0), 0.0);
        assert!(Stiffness::profile(vec![(1.0, 1.0), (1.0, 2.0)]).is_err());
        assert!(Stiffness::profile(vec![(0.0, -1.0)]).is_err());
        assert!(Stiffness::profile(vec![]).is_err());
    }

    #[test]
    fn boat_and_rectangle_are_counter_clockwise() {
        assert!(twice_signed_area(&boat(0.005, 0.0)) > 0.0);
        assert!(twice_signed_area(&boat(0.005, TILT)) > 0.0);
        assert!(twice_signed_area(&rectangle(0.02, 0.01, Vector2::zeros())) > 0.0);
    }

    /// The closed forms of the boat (keel D deep, bottom w, right side at α, wall tilted ε):
    /// PLP and LLL `k A ẑ` with `A = w D + D² (cot α + tan ε)/2`; PLL's `F_x = k D² (sin ε −
    /// cos α)/2`; LPP's `F_z` on the wall `k D² / sin 2ε`, on the slope `k D² / sin 2α`, so
    /// in all `k (w D + D²/sin 2α + D²/sin 2ε)`; PPP's `F_x = k D² (1/sin ε − 1/cos α)/2`.
    #[test]
    fn boat_forces_match_closed_forms() {
        let uniform = Stiffness::uniform(K).expect("valid");
        let (d, w, a) = (KEEL_DEPTH, BOTTOM, SLOPE);
        for eps in [0.0, 0.01, TILT] {
            let hull = boat(d, eps);
            let area = w * d + d * d * (1.0 / a.tan() + eps.tan()) / 2.0;
            for name in ["PLP", "LLL"] {
                let f = ef_force(model(name), &hull, &uniform).expect("defined");
                assert!(f.x.abs() < 1e-12 * f.y, "{name}: {f}");
                assert!((f.y / (K * area) - 1.0).abs() < 1e-13, "{name}: {f}");
            }
            let f = ef_force(model("PLL"), &hull, &uniform).expect("defined");
            let expected = K * d * d * (eps.sin() - a.cos()) / 2.0;
            assert!((f.x - expected).abs() < 1e-13 * K * d * d, "{f}");
            if eps > 0.0 {
                let f = ef_force(model("LPP"), &hull, &uniform).expect("defined");
                let expected = K * (w * d + d * d / (2.0 * a).sin() + d * d / (2.0 * eps).sin());
                assert!(f.x == 0.0 && (f.y / expected - 1.0).abs() < 1e-13, "{f}");
                let f = ef_force(model("PPP"), &hull, &uniform).expect("defined");
                let expected = K * d * d * (1.0 / eps.sin() - 1.0 / a.cos()) / 2.0;
                assert!((f.x / expected - 1.0).abs() < 1e-13, "{f}");
            }
        }
    }

    /// The 2-point rule is exact on every piece: a composite rule of 1000 midpoints agrees to
    /// its own error (h²/24 of the second derivative; here below 1e-6 relative).
    #[test]
    fn gauss_pieces_match_a_fine_midpoint_rule() {
        let ramp = ramped().expect("valid");
        let block = placed(
            &rectangle(BLOCK[0], BLOCK[1], Vector2::new(RAMP - 0.002, -LOOP_DEPTH)),
            Vector2::new(RAMP - 0.002, -LOOP_DEPTH),
            0.4,
            Vector2::zeros(),
        );
        for name in ["PLP", "LLP", "LLL", "PLL"] {
            let m = model(name);
            let exact = ef_force(m, &block, &ramp).expect("defined");
            let mut sum = Vector2::zeros();
            for i in 0..block.len() {
                let Some((a, b)) = submerged(block[i], block[(i + 1) % block.len()]) else {
                    continue;
                };
                let n = 1000;
                let edge = (b - a) / n as f64;
                let normal = Vector2::new(edge.y, -edge.x).normalize();
                let cos = -normal.y;
                for j in 0..n {
                    let r = a + edge * (j as f64 + 0.5);
                    let ds = edge.norm() * if m.area == Inherit::Layer { cos } else { 1.0 };
                    let dir = if m.direction == Inherit::Layer {
                        Vector2::new(0.0, 1.0)
                    } else {
                        -normal
                    };
                    sum += dir * (ramp.at(r.x) * -r.y * ds);
                }
            }
            assert!(
                (exact - sum).norm() < 1e-6 * exact.norm(),
                "{name}: {exact} {sum}"
            );
        }
    }

    #[test]
    fn unbounded_and_undefined_cases_are_errors() {
        let uniform = Stiffness::uniform(K).expect("valid");
        let vertical = boat(KEEL_DEPTH, 0.0);
        for name in ["LPP", "PPP", "PPL", "LPL"] {
            assert!(
                ef_force(model(name), &vertical, &uniform).is_err(),
                "{name}"
            );
        }
        let mut clockwise = vertical.clone();
        clockwise.reverse();
        assert!(ef_force(model("PLP"), &clockwise, &uniform).is_err());
        // A submerged top face (cos θ = −1): no projected area, no P stretch.
        let sunk = rectangle(0.02, 0.01, Vector2::new(0.0, -0.02));
        assert!(ef_force(model("LLL"), &sunk, &uniform).is_err());
        assert!(ef_force(model("LPP"), &sunk, &uniform).is_err());
        assert!(ef_force(model("PLP"), &sunk, &uniform).is_ok());
    }
}
