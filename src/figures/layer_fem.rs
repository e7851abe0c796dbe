//! Elandt Sec. 4.5, the FEM side: PFC's normal force against a small-strain finite-element
//! model's for a rigid sphere and a rigid flat-ended cylinder pressed into a compliant layer
//! (Fig. 4.11, [`accuracy`]), and the two models' pressure over the contact at `H/D = 1/4`
//! (Fig. 4.13(b), [`pressure`]).
//!
//! The FEM is [`super::axisymmetric_fem`] with the thesis's set-up (Sec. 4.5.1): `ν = 0.3`,
//! the bottom fixed, the outer wall fixed horizontally, frictionless contact; PFC's layer has
//! the modulus `E* = E(1 − ν)/((1 + ν)(1 − 2ν))` (caption of Fig. 4.11), so PFC's force is the
//! overlap's volume times `E*/H`: `π E* h² (R − h/3)/H` for the sphere, `π R² E* h/H` for the
//! cylinder. The geometry is the thesis's scaled so that PFC's contact diameter is
//! `D = 1 cm`: the sphere's radius is 1600 times the layer (`R = 1600 H`), its layer
//! 40 H wide, and `H/D` is set by the depth `h = D²/(8R)`; the cylinder's radius is `D/2`,
//! its layer 30 D wide, and `h = H/100`. Where `H/D < 1/20` a sphere's contact would not fit
//! in the thesis's 40 H, so the layer's half-width is `max(20 H, D/2 + 10 H)`.
//!
//! The mesh follows the thesis's refinement: for the sphere, uniform elements of
//! `min(H, D/2)/n` across PFC's contact disc (and 5 % beyond), for the cylinder elements of
//! `min(H, D/2)/n` at its rim growing away from it; through the thickness the top's size
//! grows down to `H/6`, and outside the contact the size grows to the thesis's largest
//! (0.2 H, 0.4 D/2). Two points tie the FEM to the repository's PFC: the pressure-field
//! contact surface of `elandt-layer` (meshed indenters, `D = 1 cm`, `H = D/4`) against the
//! FEM of the same geometry.

use std::f64::consts::PI;

use nalgebra::Vector3;

use super::axisymmetric_fem::{graded, indent, Indentation, Indenter, Material, Mesh};
use super::pressure_field::{summary, surface, DIAMETER, MODULUS, SPHERE_RADIUS};
use super::{number, Loader, Number, PaperFigure, Quality};
use crate::error::Result;
use crate::geometry::Shape;
use crate::report::plot::{Curve, LinePanel};

/// Poisson's ratio of the thesis's FEM.
const POISSON: f64 = 0.3;
/// The thesis's sphere: its radius per layer thickness, `R/H = 1600`.
const SPHERE_RADIUS_PER_THICKNESS: f64 = 1600.0;
/// The thesis's sphere layer's half-width per thickness, `(W/2)/H = 20`.
const SPHERE_HALF_WIDTH_PER_THICKNESS: f64 = 20.0;
/// The thesis's cylinder layer's half-width per cylinder radius, `(W/2)/R = 30`.
const CYLINDER_HALF_WIDTH_PER_RADIUS: f64 = 30.0;
/// The cylinder's depth per layer thickness, `h/H`.
const CYLINDER_DEPTH_PER_THICKNESS: f64 = 0.01;
/// The `H/D` of Fig. 4.13(b) and of the marked points of Fig. 4.11.
const QUARTER: f64 = 0.25;
/// Where the cylinder's rim pressure is read: `r ≥ 0.9 R`.
const RIM: f64 = 0.9;

/// The layer's material: `E*` is the pressure fields' modulus, so PFC and the FEM share it.
fn material() -> Material {
    let nu = POISSON;
    Material {
        youngs: MODULUS * (1.0 + nu) * (1.0 - 2.0 * nu) / (1.0 - nu),
        poisson: nu,
    }
}

/// One indentation of the study, in metres.
struct Setup {
    indenter: Indenter,
    /// h (m)
    depth: f64,
    /// H (m)
    thickness: f64,
    /// The layer's half-width W/2 (m).
    half_width: f64,
    /// PFC's contact radius D/2 (m).
    pfc_radius: f64,
    /// PFC's force (N), the closed form.
    pfc_force: f64,
    /// PFC's pressure (Pa) at radius r (m).
    pfc_pressure: fn(&Setup, f64) -> f64,
}

impl Setup {
    /// A sphere of radius `radius` pressed by `depth` into a layer of `thickness` (m).
    fn sphere(radius: f64, thickness: f64, depth: f64) -> Self {
        let pfc_radius = (2.0 * radius * depth - depth * depth).sqrt();
        Setup {
            indenter: Indenter::Sphere { radius },
            depth,
            thickness,
            half_width: (SPHERE_HALF_WIDTH_PER_THICKNESS * thickness)
                .max(pfc_radius + 10.0 * thickness),
            pfc_radius,
            pfc_force: PI * MODULUS * depth * depth * (radius - depth / 3.0) / thickness,
            pfc_pressure: |s, r| {
                let Indenter::Sphere { radius } = s.indenter else {
                    return f64::NAN;
                };
                let overlap = s.depth - radius + (radius * radius - r * r).max(0.0).sqrt();
                MODULUS * overlap.max(0.0) / s.thickness
            },
        }
    }

    /// The thesis's sphere (`R = 1600 H`) at `H/D = ratio`, scaled to `D = 1 cm`.
    fn thesis_sphere(ratio: f64) -> Self {
        let thickness = ratio * DIAMETER;
        let radius = SPHERE_RADIUS_PER_THICKNESS * thickness;
        Setup::sphere(radius, thickness, DIAMETER * DIAMETER / (8.0 * radius))
    }

    /// The thesis's cylinder (radius D/2 = 5 mm, `h = H/100`) at `H/D = ratio`.
    fn thesis_cylinder(ratio: f64) -> Self {
        let (radius, thickness) = (DIAMETER / 2.0, ratio * DIAMETER);
        let depth = CYLINDER_DEPTH_PER_THICKNESS * thickness;
        Setup {
            indenter: Indenter::FlatPunch { radius },
            depth,
            thickness,
            half_width: CYLINDER_HALF_WIDTH_PER_RADIUS * radius,
            pfc_radius: radius,
            pfc_force: PI * radius * radius * MODULUS * depth / thickness,
            pfc_pressure: |s, r| {
                if r <= s.pfc_radius {
                    MODULUS * s.depth / s.thickness
                } else {
                    0.0
                }
            },
        }
    }

    /// The mesh at `quality` (see the module docs), its elements `refine` times smaller.
    fn mesh(&self, quality: Quality, refine: f64) -> Result<Mesh> {
        let (per_length, growth) = match (quality, self.indenter) {
            (Quality::Quick, Indenter::Sphere { .. }) => (12.0, 1.3),
            (Quality::Quick, Indenter::FlatPunch { .. }) => (40.0, 1.3),
            (Quality::Full, Indenter::Sphere { .. }) => (40.0, 1.15),
            (Quality::Full, Indenter::FlatPunch { .. }) => (200.0, 1.15),
        };
        let (h_layer, a) = (self.thickness, self.pfc_radius);
        let fine = h_layer.min(a) / (per_length * refine);
        let mut r = match self.indenter {
            Indenter::Sphere { .. } => {
                let edge = (1.05 * a).min(self.half_width);
                let n = (edge / fine).ceil() as usize;
                let mut r: Vec<f64> = (0..=n).map(|k| edge * k as f64 / n as f64).collect();
                r.extend(
                    graded(edge, self.half_width, fine, 0.2 * h_layer, growth)
                        .into_iter()
                        .skip(1),
                );
                r
            }
            Indenter::FlatPunch { radius } => {
                let mut r = graded(radius, 0.0, fine, h_layer.min(a) / 4.0, growth);
                r.reverse();
                r.extend(
                    graded(radius, self.half_width, fine, 0.4 * radius, growth)
                        .into_iter()
                        .skip(1),
                );
                r
            }
        };
        r.dedup();
        let mut z = graded(h_layer, 0.0, fine, h_layer / 6.0, growth);
        z.reverse();
        Mesh::new(r, z)
    }

    /// The FEM's indentation at `quality`.
    fn fem(&self, quality: Quality) -> Result<Indentation> {
        self.fem_refined(quality, 1.0)
    }

    /// The FEM's indentation at `quality` with elements `refine` times smaller at the
    /// contact and the top (the growth away from them unchanged).
    fn fem_refined(&self, quality: Quality, refine: f64) -> Result<Indentation> {
        indent(
            &self.mesh(quality, refine)?,
            &material(),
            &self.indenter,
            self.depth,
        )
    }
}

/// The `H/D` of the sweep: `D/50` to `D`.
fn ratios(quality: Quality) -> Vec<f64> {
    match quality {
        Quality::Quick => vec![0.02, 0.05, 0.1, 0.25, 0.5, 1.0],
        Quality::Full => vec![
            0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.35, 0.5, 0.7, 1.0,
        ],
    }
}

/// The pressure-field contact surface's force (N) for `elandt-layer`'s geometry (D = 1 cm,
/// H = D/4; the sphere of radius 2 cm, the cylinder's `h = H/100`), and the FEM's setup of the
/// same indentation.
fn query(sphere: bool, quality: Quality) -> Result<(f64, Setup)> {
    let hint = match quality {
        Quality::Quick => 5e-4,
        Quality::Full => 1.5e-4,
    };
    let thickness = QUARTER * DIAMETER;
    if sphere {
        let r = SPHERE_RADIUS;
        let depth = r - (r * r - DIAMETER * DIAMETER / 4.0).sqrt();
        let polygons = surface(
            &Shape::Sphere { radius: r },
            Vector3::new(0.0, 0.0, r - depth),
            thickness,
            hint,
        )?;
        Ok((summary(&polygons).0, Setup::sphere(r, thickness, depth)))
    } else {
        let setup = Setup::thesis_cylinder(QUARTER);
        let half_length = DIAMETER / 2.0;
        let polygons = surface(
            &Shape::Cylinder {
                radius: DIAMETER / 2.0,
                half_length,
            },
            Vector3::new(0.0, 0.0, half_length - setup.depth),
            thickness,
            hint,
        )?;
        Ok((summary(&polygons).0, setup))
    }
}

/// A "+" drawn at `(x, y)` (H in cm, a ratio) as two strokes split by a gap (NaN): the plots
/// draw curves, not markers.
fn cross((x, y): (f64, f64)) -> Vec<(f64, f64)> {
    vec![
        (x - 0.015, y),
        (x + 0.015, y),
        (x, f64::NAN),
        (x, y - 0.012),
        (x, y + 0.012),
    ]
}

fn curve(name: &str, points: Vec<(f64, f64)>) -> Curve {
    Curve {
        name: name.to_string(),
        points,
    }
}

/// Elandt Fig. 4.11: PFC's force over the FEM's against `H` (cm) for `D = 1 cm`, the sphere and
/// the cylinder, with the repository's contact surface at `H = D/4`.
pub(super) fn accuracy(_load: Loader<'_>, quality: Quality) -> Result<PaperFigure> {
    let xs = ratios(quality);
    // The largest active-set iteration count and penetration (over the depth) of the solves.
    let (mut iterations, mut penetration) = (0, 0.0_f64);
    let mut sweep = |make: fn(f64) -> Setup| -> Result<Vec<(f64, f64)>> {
        xs.iter()
            .map(|&x| {
                let setup = make(x);
                let fem = setup.fem(quality)?;
                iterations = iterations.max(fem.iterations);
                penetration = penetration.max(-fem.min_gap / setup.depth);
                Ok((x, setup.pfc_force / fem.force))
            })
            .collect()
    };
    let sphere = sweep(Setup::thesis_sphere)?;
    let cylinder = sweep(Setup::thesis_cylinder)?;
    let at = |points: &[(f64, f64)], x: f64| {
        points
            .iter()
            .find(|p| (p.0 - x).abs() < 1e-12)
            .map_or(f64::NAN, |p| p.1)
    };
    let mut numbers: Vec<Number> = Vec::new();
    for (key, points, paper_at_d) in [
        ("sphere", &sphere, "≥ 0.7 (\"at least 70 % accurate\")"),
        ("cylinder", &cylinder, "≥ 0.6 (\"at least 60 % accurate\")"),
    ] {
        numbers.push(number(
            format!("{key}.at_d"),
            format!("{key}: PFC / FEM force at H = D = 1 cm"),
            paper_at_d,
            at(points, 1.0),
            "1",
        ));
        let setup = if key == "sphere" {
            Setup::thesis_sphere(1.0)
        } else {
            Setup::thesis_cylinder(1.0)
        };
        numbers.push(number(
            format!("{key}.at_d_refined"),
            format!("{key}: PFC / FEM force at H = D, elements half as large"),
            "— (mesh convergence)",
            setup.pfc_force / setup.fem_refined(quality, 2.0)?.force,
            "1",
        ));
        numbers.push(number(
            format!("{key}.at_quarter"),
            format!("{key}: PFC / FEM force at H = D/4 (the marked point)"),
            "read off Fig. 4.11",
            at(points, QUARTER),
            "1",
        ));
        numbers.push(number(
            format!("{key}.thinnest"),
            format!("{key}: PFC / FEM force at H = D/50"),
            "→ 1 as H → 0",
            points[0].1,
            "1",
        ));
        numbers.push(number(
            format!("{key}.monotone"),
            format!("{key}: largest rise of PFC / FEM from one H to the next thicker"),
            "≤ 0 (more accurate for thinner layers)",
            points
                .windows(2)
                .map(|w| w[1].1 - w[0].1)
                .fold(f64::NEG_INFINITY, f64::max),
            "1",
        ));
    }
    numbers.push(number(
        "sphere_over_cylinder".into(),
        "smallest sphere − cylinder accuracy over the H of the sweep".into(),
        "> 0 (the sphere more accurate at every H)",
        sphere
            .iter()
            .zip(&cylinder)
            .map(|(s, c)| s.1 - c.1)
            .fold(f64::INFINITY, f64::min),
        "1",
    ));
    numbers.push(number(
        "fem.iterations".into(),
        "FEM: the most active-set iterations of a solve".into(),
        "— (ANSYS's normal Lagrange contact)",
        iterations as f64,
        "1",
    ));
    numbers.push(number(
        "fem.penetration".into(),
        "FEM: the largest penetration of a top node / h".into(),
        "0 (Signorini: gap ≥ 0)",
        penetration,
        "1",
    ));
    let mut queried = Vec::new();
    for (key, is_sphere) in [("sphere", true), ("cylinder", false)] {
        let (force, setup) = query(is_sphere, quality)?;
        let fem = setup.fem(quality)?;
        queried.push((QUARTER, force / fem.force));
        numbers.push(number(
            format!("{key}.query"),
            format!("{key}: the contact surface query's force / FEM force at H = D/4 (elandt-layer's geometry)"),
            "— (ties the FEM to the repository's PFC)",
            force / fem.force,
            "1",
        ));
        numbers.push(number(
            format!("{key}.query_closed_form"),
            format!("{key}: PFC's closed-form force / FEM force in the query's geometry"),
            "—",
            setup.pfc_force / fem.force,
            "1",
        ));
    }
    let to_cm = |points: Vec<(f64, f64)>| -> Vec<(f64, f64)> {
        points
            .into_iter()
            .map(|(x, y)| (x * DIAMETER * 100.0, y))
            .collect()
    };
    Ok(PaperFigure {
        name: "elandt-fem-accuracy",
        title: "Elandt Fig. 4.11: PFC force / FEM force, rigid indenters in a compliant layer, D = 1 cm".into(),
        x_label: "layer thickness H (cm)",
        panels: vec![LinePanel {
            y_label: "PFC force / FEM force",
            curves: vec![
                curve("sphere (R = 1600 H), closed form", to_cm(sphere)),
                curve("cylinder (R = D/2, h = H/100), closed form", to_cm(cylinder)),
                curve("sphere R = 2 cm, contact surface query (+)", cross(to_cm(vec![queried[0]])[0])),
                curve("cylinder, contact surface query (+)", cross(to_cm(vec![queried[1]])[0])),
            ],
        }],
        equal_aspect: false,
        numbers,
        notes: vec![
            "FEM: axisymmetric bilinear quadrilaterals (the thesis: ANSYS quadratic elements), ν = 0.3, bottom fixed, outer wall fixed horizontally, frictionless unilateral contact by an active set; validated against uniaxial strain, Boussinesq and Hertz (src/figures/axisymmetric_fem.rs).".into(),
            "The contact surface queries are drawn as + at H = D/4: their CSV rows are the marker's two strokes, the value at its centre (and in the numbers).".into(),
            "Where H/D < 1/20 the sphere's layer is wider than the thesis's 40 H (its contact would not fit): half-width max(20 H, D/2 + 10 H).".into(),
            format!("PFC's modulus and the FEM's constrained modulus are E* = {:e} Pa (E = {:e} Pa); the ratios do not depend on it.", material().constrained_modulus(), material().youngs),
        ],
    })
}

/// Elandt Fig. 4.13(b): the contact pressure against the radius at `H/D = 1/4`, FEM beside PFC,
/// the sphere (`R = 1600 H`) and the cylinder, each over PFC's pressure on the axis.
pub(super) fn pressure(_load: Loader<'_>, quality: Quality) -> Result<PaperFigure> {
    let mut panels = Vec::new();
    let mut numbers = Vec::new();
    for (key, setup) in [
        ("sphere", Setup::thesis_sphere(QUARTER)),
        ("cylinder", Setup::thesis_cylinder(QUARTER)),
    ] {
        let fem = setup.fem(quality)?;
        let unit = (setup.pfc_pressure)(&setup, 0.0);
        let scale = |r: f64| r / setup.pfc_radius;
        let fem_points: Vec<(f64, f64)> = fem
            .pressure
            .iter()
            .filter(|p| p.0 <= 1.3 * setup.pfc_radius)
            .map(|&(r, p)| (scale(r), p / unit))
            .collect();
        let pfc_points: Vec<(f64, f64)> = (0..=130)
            .map(|k| {
                let r = k as f64 / 100.0 * setup.pfc_radius;
                (scale(r), (setup.pfc_pressure)(&setup, r) / unit)
            })
            .collect();
        let centre = fem.pressure[0].1 / unit;
        numbers.push(number(
            format!("{key}.centre"),
            format!("{key}: FEM pressure on the axis / PFC's"),
            "—",
            centre,
            "1",
        ));
        numbers.push(number(
            format!("{key}.force"),
            format!("{key}: PFC / FEM force"),
            "the marked point of Fig. 4.11",
            setup.pfc_force / fem.force,
            "1",
        ));
        match setup.indenter {
            Indenter::Sphere { .. } => numbers.push(number(
                "sphere.contact_radius".into(),
                "sphere: FEM contact radius / PFC's D/2".into(),
                "< 1 (\"PFC-predicted contact surface is slightly larger than predicted by FEM\")",
                fem.contact_radius / setup.pfc_radius,
                "1",
            )),
            Indenter::FlatPunch { radius } => numbers.push(number(
                "cylinder.rim_over_centre".into(),
                format!("cylinder: largest FEM pressure at r ≥ {RIM} R / FEM pressure on the axis"),
                "> 1 (a ring of high pressure at the edge; PFC's is uniform, 1)",
                fem.pressure
                    .iter()
                    .filter(|p| p.0 >= RIM * radius && p.0 <= radius)
                    .map(|p| p.1)
                    .fold(0.0, f64::max)
                    / fem.pressure[0].1,
                "1",
            )),
        }
        let label = match setup.indenter {
            Indenter::Sphere { .. } => "sphere (R = 1600 H): p / PFC's p(0)",
            Indenter::FlatPunch { .. } => "cylinder (R = D/2, h = H/100): p / PFC's p",
        };
        panels.push(LinePanel {
            y_label: label,
            curves: vec![curve("FEM", fem_points), curve("PFC", pfc_points)],
        });
    }
    Ok(PaperFigure {
        name: "elandt-fem-pressure",
        title: "Elandt Fig. 4.13(b): contact pressure, FEM and PFC, H/D = 1/4".into(),
        x_label: "radius r / (D/2)",
        panels,
        equal_aspect: false,
        numbers,
        notes: vec![
            "FEM pressure at a top node: its vertical reaction over its tributary area 2π ∫ N r dr; the cylinder's rim node shares its area with the free surface beyond, so its value is an average over the singular rim.".into(),
        ],
    })
}
