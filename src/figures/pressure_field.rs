//! Elandt's pressure field contact (the seed `003_…`): the pencil reoriented in a loosening
//! pinch (Sec. 5.3.1, Fig. 5.3; [`pencil`]), the equal-pressure surface of two compliant
//! spheres (Sec. 4.3, Fig. 4.7; [`compliant_compliant`]), damping trends (Sec. 4.4.2,
//! Fig. 4.9; [`damping`]), sorting by the sensed contact area (Sec. 5.3.3, Fig. 5.5;
//! [`sorting`]), and the study against a compliant layer
//! (Sec. 4.5, Figs. 4.10 and 4.13(b), PFC's side): a rigid sphere and a rigid cylinder pressed
//! into a compliant layer of thickness `H` by a depth `h`, the contact surface's pressure
//! against the radius, its diameter and its force, beside PFC's closed forms.
//!
//! A layer's field is `p0 = E · depth / H` (Elandt's linear pressure field of a layer, the
//! modulus `E` standing for his `E*`). Pressed by `h`, a sphere of radius `R` meets it on a
//! disc of diameter `D = 2√(2Rh − h²) ≈ √(8Rh)` (Sec. 4.5) with
//! `p(r) = E (h − R + √(R² − r²))/H`, and the force is the cap's volume times `E/H`:
//! `F = π E h² (R − h/3)/H`. A flat-ended cylinder of radius `R` pressed along its axis meets
//! it on its whole end, `D = 2R`, at the uniform `p = E h/H`: `F = π R² E h/H`. The paper's set-up:
//! `D = 1 cm` and `H/D = 1/4` (Fig. 4.13(b)), `h = H/100` for the cylinder. Its FEM
//! comparison (Figs. 4.11 and 4.13(b)) is `layer_fem.rs`.
//!
//! The rigid indenters are triangle meshes (the resolution hint sets their edge length), so
//! the measured surface is that of a polyhedron inscribed in the sphere or the cylinder; the
//! numbers say how close that comes to the smooth closed forms.

use std::f64::consts::PI;

use nalgebra::Vector3;

use super::{number, Loader, PaperFigure, Quality};
use crate::contact::Approximation;
use crate::error::Result;
use crate::geometry::Shape;
use crate::hydroelastic::{contact_surface, ContactPolygon, HydroGeometry, Hydroelastic, Placed};
use crate::math::Pose;
use crate::report::plot::{Curve, LinePanel};

/// The layer's modulus `E` (Pa); every pressure scales with it.
pub(super) const MODULUS: f64 = 1e6;
/// The contact surface's diameter `D` of the paper's study (m).
pub(super) const DIAMETER: f64 = 0.01;
/// The sphere's radius (m); Elandt's FEM sphere is 1600 times its layer (R ≫ H), ours 8 times.
pub(super) const SPHERE_RADIUS: f64 = 0.02;

/// The contact surface between a compliant layer (thickness `thickness`, the half-space
/// z ≤ 0) and the rigid `shape` placed at `centre`, meshed with edges of about `hint` (m).
pub(super) fn surface(
    shape: &Shape,
    centre: Vector3<f64>,
    thickness: f64,
    hint: f64,
) -> Result<Vec<ContactPolygon<f64>>> {
    let layer = HydroGeometry::new(
        &Shape::HalfSpace,
        &Hydroelastic::compliant(MODULUS, hint).with_thickness(thickness),
    )?;
    let indenter = HydroGeometry::new(shape, &Hydroelastic::rigid(hint))?;
    contact_surface(
        &Placed {
            geometry: &layer,
            X_WG: Pose::identity(),
            modulus: MODULUS,
        },
        &Placed {
            geometry: &indenter,
            X_WG: Pose::translation(centre),
            modulus: 0.0,
        },
    )
}

/// Σ A p n_z (N), the largest vertex radius (m), and each polygon's (centroid radius / (D/2),
/// pressure in kPa).
pub(super) fn summary(polygons: &[ContactPolygon<f64>]) -> (f64, f64, Vec<(f64, f64)>) {
    let force = polygons
        .iter()
        .map(|p| p.area * p.pressure * p.nhat.z.abs())
        .sum();
    let radius = polygons
        .iter()
        .flat_map(|p| p.vertices.iter().map(|v| v.xy().norm()))
        .fold(0.0, f64::max);
    let mut points: Vec<(f64, f64)> = polygons
        .iter()
        .map(|p| (p.centroid.xy().norm() / (DIAMETER / 2.0), p.pressure / 1e3))
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    (force, radius, points)
}

/// Elandt Sec. 4.5, Figs. 4.10 and 4.13(b): PFC's pressure over the contact surface of a rigid
/// sphere and a rigid cylinder in a compliant layer with `H/D = 1/4`.
pub(super) fn layer(_load: Loader<'_>, quality: Quality) -> Result<PaperFigure> {
    let hint = match quality {
        Quality::Quick => 5e-4,
        Quality::Full => 1.5e-4,
    };
    let thickness = DIAMETER / 4.0;
    // Sphere: the depth at which the smooth sphere's disc is D across, D² = 4(2Rh − h²).
    let r = SPHERE_RADIUS;
    let h_sphere = r - (r * r - DIAMETER * DIAMETER / 4.0).sqrt();
    let sphere = surface(
        &Shape::Sphere { radius: r },
        Vector3::new(0.0, 0.0, r - h_sphere),
        thickness,
        hint,
    )?;
    let (sphere_force, sphere_radius, sphere_points) = summary(&sphere);
    let sphere_closed = PI * MODULUS * h_sphere * h_sphere * (r - h_sphere / 3.0) / thickness;
    let profile: Vec<(f64, f64)> = (0..=50)
        .map(|k| {
            let x = k as f64 / 50.0;
            let rho = x * DIAMETER / 2.0;
            let depth = h_sphere - r + (r * r - rho * rho).sqrt();
            (x, MODULUS * depth / thickness / 1e3)
        })
        .collect();
    // Cylinder: radius D/2, axis along the layer's normal, pressed by h = H/100.
    let (radius, half_length) = (DIAMETER / 2.0, DIAMETER / 2.0);
    let h_cylinder = thickness / 100.0;
    let cylinder = surface(
        &Shape::Cylinder {
            radius,
            half_length,
        },
        Vector3::new(0.0, 0.0, half_length - h_cylinder),
        thickness,
        hint,
    )?;
    let (cylinder_force, cylinder_radius, cylinder_points) = summary(&cylinder);
    let cylinder_closed = PI * radius * radius * MODULUS * h_cylinder / thickness;
    let uniform = MODULUS * h_cylinder / thickness / 1e3;
    let curve = |name: &str, points: Vec<(f64, f64)>| Curve {
        name: name.to_string(),
        points,
    };
    Ok(PaperFigure {
        name: "elandt-layer",
        title: "Elandt Sec. 4.5 (Figs. 4.10, 4.13b): rigid indenters in a compliant layer, D = 1 cm, H = D/4"
            .into(),
        x_label: "radius r / (D/2)",
        panels: vec![
            LinePanel {
                y_label: "sphere (R = 2 cm, h = 0.63 mm): p (kPa)",
                curves: vec![
                    curve("PFC polygons", sphere_points),
                    curve("E (h − R + √(R² − r²))/H", profile),
                ],
            },
            LinePanel {
                y_label: "cylinder (R = 5 mm, h = H/100): p (kPa)",
                curves: vec![
                    curve("PFC polygons", cylinder_points),
                    curve("E h/H", vec![(0.0, uniform), (1.0, uniform)]),
                ],
            },
        ],
        equal_aspect: false,
        numbers: vec![
            number(
                "sphere.diameter".into(),
                "sphere: contact surface diameter / D".into(),
                "D ≈ √(8Rh) (here 2√(2Rh − h²) = 1 cm exactly)",
                2.0 * sphere_radius / DIAMETER,
                "1",
            ),
            number(
                "sphere.force".into(),
                "sphere: force / closed form π E h² (R − h/3)/H".into(),
                &format!("1 (closed form {sphere_closed:.3} N)"),
                sphere_force / sphere_closed,
                "1",
            ),
            number(
                "cylinder.diameter".into(),
                "cylinder: contact surface diameter / 2R".into(),
                "D = 2R",
                cylinder_radius / radius,
                "1",
            ),
            number(
                "cylinder.force".into(),
                "cylinder: force / closed form π R² E h/H".into(),
                &format!("1 (closed form {cylinder_closed:.3} N)"),
                cylinder_force / cylinder_closed,
                "1",
            ),
        ],
        notes: vec![
            "PFC only: the FEM side (Figs. 4.11, 4.13b) is elandt-fem-accuracy and elandt-fem-pressure.".into(),
            format!("The layer's modulus is E = {MODULUS:e} Pa; every pressure and force scales with it."),
            format!(
                "The indenters are triangle meshes with edges of about {} mm (inscribed polyhedra), so the measured diameters and forces fall slightly short of the smooth closed forms.",
                hint * 1e3
            ),
        ],
    })
}

/// Elandt Sec. 5.3.1, Fig. 5.3: a pencil reoriented in a pinched grip (`pencil-scrub`). A
/// compliant rod on a pivot, its centre of mass 3 cm out, is pinched between two rigid fingers
/// whose squeeze `0.3 ± 0.25 mm` loosens and tightens once a second. The friction over the
/// pressure-field patches gives a scrub torque `μ ∫ p r dA` that grows with the patch: the rod
/// is held while the grip is tight, turns under gravity as it loosens (the patch shrinks) and
/// stops when it tightens again, a task point contact without a torsional model cannot show.
pub(super) fn pencil(load: Loader<'_>, _quality: Quality) -> Result<PaperFigure> {
    let (_, rec) = super::simulate(
        load,
        "pencil-scrub",
        Approximation::Lagged,
        1e-3,
        None,
        |_| {},
    )?;
    // Per step: time, rod angle (rad), rate (rad/s), patch area (m²), scrub torque about the
    // pinch axis y through the pivot (N·m).
    let series: Vec<[f64; 5]> = rec
        .reports
        .iter()
        .zip(&rec.states[1..])
        .map(|(r, s)| {
            let (area, torque) = r.patches.iter().fold((0.0, 0.0), |(a, t), p| {
                let m = p.moment + p.centroid.cross(&p.force);
                (a + p.area, t + m.y)
            });
            [s.t, s.q[0], s.v[0], area, torque]
        })
        .collect();
    let column = |i: usize, scale: f64| -> Vec<(f64, f64)> {
        series.iter().map(|x| (x[0], x[i] * scale)).collect()
    };
    // The squeeze: each finger's face sits 0.3 mm inside the rod's surface, ± 0.25 mm by
    // the fingers' sinusoid (problems/pencil-scrub.toml).
    let squeeze: Vec<(f64, f64)> = series
        .iter()
        .map(|x| (x[0], 0.3 + 0.25 * (2.0 * PI * x[0]).sin()))
        .collect();
    let largest_rate = |t0: f64, t1: f64| {
        series
            .iter()
            .filter(|x| x[0] >= t0 && x[0] <= t1)
            .map(|x| x[2].abs())
            .fold(0.0, f64::max)
    };
    // While the rod slides, how often a patch 20 % larger carries the larger torque.
    let sliding: Vec<&[f64; 5]> = series.iter().filter(|x| x[2].abs() > 1.0).collect();
    let (mut ordered, mut pairs) = (0usize, 0usize);
    for a in &sliding {
        for b in &sliding {
            if b[3] > 1.2 * a[3] {
                pairs += 1;
                ordered += usize::from(b[4].abs() > a[4].abs());
            }
        }
    }
    let curve = |name: &str, points| Curve {
        name: name.to_string(),
        points,
    };
    Ok(PaperFigure {
        name: "elandt-pencil",
        title: "Elandt Fig. 5.3: a pencil reoriented in a loosening pinch (pressure-field scrub torque)".into(),
        x_label: "t (s)",
        panels: vec![
            LinePanel {
                y_label: "squeeze per finger (mm)",
                curves: vec![curve("squeeze", squeeze)],
            },
            LinePanel {
                y_label: "rod angle (deg)",
                curves: vec![curve("angle", column(1, 180.0 / PI))],
            },
            LinePanel {
                y_label: "patch area (mm²)",
                curves: vec![curve("both patches", column(3, 1e6))],
            },
            LinePanel {
                y_label: "scrub torque about the pivot (mN·m)",
                curves: vec![curve("friction torque", column(4, 1e3))],
            },
        ],
        equal_aspect: false,
        numbers: vec![
            number(
                "held.rate".into(),
                "largest |ω| while the grip is tight, t in [0.05, 0.45] s".into(),
                "held (the pencil does not turn)",
                largest_rate(0.05, 0.45),
                "rad/s",
            ),
            number(
                "loose.rate".into(),
                "largest |ω| as the grip loosens, t in [0.6, 0.85] s".into(),
                "turns without falling when the grip loosens",
                largest_rate(0.6, 0.85),
                "rad/s",
            ),
            number(
                "tight_again.rate".into(),
                "largest |ω| once the grip tightens again, t in [0.92, 1] s".into(),
                "tightening the grip stops the rotation",
                largest_rate(0.92, 1.0),
                "rad/s",
            ),
            number(
                "sliding.larger_patch_larger_torque".into(),
                "while sliding (|ω| > 1 rad/s): share of step pairs where a patch 20 % larger carries the larger scrub torque".into(),
                "area-dependent scrub torque",
                if pairs == 0 { f64::NAN } else { ordered as f64 / pairs as f64 },
                "1",
            ),
            number(
                "turned".into(),
                "rod angle at the end".into(),
                "reoriented",
                series.last().map_or(f64::NAN, |x| x[1].to_degrees()),
                "deg",
            ),
        ],
        notes: vec![
            "Elandt's gripper, pencil and loosening schedule are not given in numbers; the problem file states ours (a 2 cm compliant rod of E = 1 MPa, 2 cm rigid pads, δt = 1 ms, Lagged).".into(),
        ],
    })
}

/// The radius of both spheres of the compliant-compliant study (m).
const BALL_RADIUS: f64 = 0.05;
/// Their overlap `δ = 2R − d` (m), `d` the distance of their centres.
const BALL_OVERLAP: f64 = 0.005;

/// Elandt Sec. 4.3 (Fig. 4.7), for two compliant spheres of radius `R` whose fields are
/// `p_A = E_A (1 − |x|/R)` (centre at the origin) and `p_B = E_B (1 − |x − d ẑ|/R)`: the
/// height `z` of the equal-pressure surface `p_A = p_B` at the distance `ρ` from the axis, and
/// its pressure. `None` for `E_B` is a rigid B, whose surface then is the contact surface.
/// Bisection between B's surface (`p_B = 0 ≤ p_A`) and A's (`p_A = 0 ≤ p_B`), where the
/// difference changes sign.
fn equal_pressure(rho: f64, d: f64, e_a: f64, e_b: Option<f64>) -> (f64, f64) {
    let r = BALL_RADIUS;
    let p_a = |z: f64| e_a * (1.0 - (z * z + rho * rho).sqrt() / r);
    let chord = (r * r - rho * rho).max(0.0).sqrt();
    let (mut lo, mut hi) = (d - chord, chord);
    let Some(e_b) = e_b else {
        return (lo, p_a(lo));
    };
    let p_b = |z: f64| e_b * (1.0 - ((d - z) * (d - z) + rho * rho).sqrt() / r);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if p_a(mid) > p_b(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let z = 0.5 * (lo + hi);
    (z, p_a(z))
}

/// Elandt Sec. 4.3, Fig. 4.7: the contact surface of two compliant bodies is where their
/// pressure fields are equal. Two spheres of radius `R = 5 cm` overlapping by `δ = 5 mm`, the
/// lower one A of modulus `E_A`, the upper one B of `E_B = k E_A` for `k = 1, 4, 16` and rigid.
/// On the axis the surface sits `δ E_B/(E_A + E_B)` inside A (the fields are linear along the
/// axis: `E_A (R − a) = E_B (R − d + a)`), so a stiffer B pushes it into the softer A, the
/// rigid B to B's own surface; its rim is where both surfaces meet, whatever the moduli; the
/// pressure there on the axis is `δ/R` times the moduli in series `E_A E_B/(E_A + E_B)`; the
/// force is `∫ p 2πρ dρ` over the surface's projection (1-D quadrature of the smooth fields).
/// The meshes are inscribed polyhedra whose fields are linear in each coned tetrahedron.
pub(super) fn compliant_compliant(_load: Loader<'_>, quality: Quality) -> Result<PaperFigure> {
    let hint = match quality {
        Quality::Quick => 4e-3,
        Quality::Full => 1.5e-3,
    };
    let (r, delta) = (BALL_RADIUS, BALL_OVERLAP);
    let d = 2.0 * r - delta;
    let rim = (r * r - d * d / 4.0).sqrt();
    let e_a = MODULUS;
    let sphere = Shape::Sphere { radius: r };
    let lower = HydroGeometry::new(&sphere, &Hydroelastic::compliant(e_a, hint))?;
    let mut surface_curves = Vec::new();
    let mut pressure_curves = Vec::new();
    let mut numbers = Vec::new();
    for ratio in [Some(1.0), Some(4.0), Some(16.0), None] {
        let e_b = ratio.map(|k| k * e_a);
        let (label, key) = match ratio {
            Some(k) => (format!("E_B = {k} E_A"), format!("k{k}")),
            None => ("B rigid".to_string(), "rigid".to_string()),
        };
        let upper = match e_b {
            Some(e) => HydroGeometry::new(&sphere, &Hydroelastic::compliant(e, hint))?,
            None => HydroGeometry::new(&sphere, &Hydroelastic::rigid(hint))?,
        };
        let polygons = contact_surface(
            &Placed {
                geometry: &lower,
                X_WG: Pose::identity(),
                modulus: e_a,
            },
            &Placed {
                geometry: &upper,
                X_WG: Pose::translation(Vector3::new(0.0, 0.0, d)),
                modulus: e_b.unwrap_or(0.0),
            },
        )?;
        // Polygons as (ρ, z, p, A n_z), sorted by ρ.
        let mut measured: Vec<[f64; 4]> = polygons
            .iter()
            .map(|p| {
                [
                    p.centroid.xy().norm(),
                    p.centroid.z,
                    p.pressure,
                    p.area * p.nhat.z.abs(),
                ]
            })
            .collect();
        measured.sort_by(|a, b| a[0].total_cmp(&b[0]));
        let force: f64 = measured.iter().map(|m| m[2] * m[3]).sum();
        // Simpson's rule for ∫ p 2πρ dρ over [0, rim].
        let n = 2000;
        let h = rim / n as f64;
        let closed_force = (0..=n)
            .map(|i| {
                let rho = i as f64 * h;
                let w = if i == 0 || i == n {
                    1.0
                } else if i % 2 == 1 {
                    4.0
                } else {
                    2.0
                };
                w * equal_pressure(rho, d, e_a, e_b).1 * 2.0 * PI * rho
            })
            .sum::<f64>()
            * h
            / 3.0;
        let peak = equal_pressure(0.0, d, e_a, e_b).1;
        let (surface_error, pressure_error) = measured.iter().fold((0.0, 0.0), |(s, q), m| {
            let (z, p) = equal_pressure(m[0], d, e_a, e_b);
            (f64::max(s, (m[1] - z).abs()), f64::max(q, (m[2] - p).abs()))
        });
        // The depth into A on the axis: the polygons within a tenth of the rim.
        let near: Vec<&[f64; 4]> = measured.iter().filter(|m| m[0] < 0.1 * rim).collect();
        let axis_depth = near.iter().map(|m| (r - m[1]) * m[3]).sum::<f64>()
            / near.iter().map(|m| m[3]).sum::<f64>();
        let share = e_b.map_or(1.0, |e| e / (e_a + e));
        let largest = measured.last().map_or(f64::NAN, |m| m[0]);
        numbers.push(number(
            format!("{key}.axis_depth"),
            format!("{label}: depth of the surface into A near the axis / δ"),
            &format!("E_B/(E_A + E_B) = {share:.4}"),
            axis_depth / delta,
            "1",
        ));
        numbers.push(number(
            format!("{key}.surface_error"),
            format!("{label}: largest distance of a polygon's centroid from the equal-pressure surface / δ"),
            "0 (the surface p_A = p_B)",
            surface_error / delta,
            "1",
        ));
        numbers.push(number(
            format!("{key}.pressure_error"),
            format!("{label}: largest pressure error of a polygon / peak pressure"),
            &format!("0; peak (δ/R) E_A E_B/(E_A + E_B) = {:.1} kPa", peak / 1e3),
            pressure_error / peak,
            "1",
        ));
        numbers.push(number(
            format!("{key}.force"),
            format!("{label}: force / ∫ p 2πρ dρ"),
            &format!("1 (quadrature {closed_force:.2} N)"),
            force / closed_force,
            "1",
        ));
        numbers.push(number(
            format!("{key}.rim"),
            format!("{label}: largest centroid radius / the rim √(R² − d²/4)"),
            "just under 1: the surface ends where both surfaces meet",
            largest / rim,
            "1",
        ));
        surface_curves.push(Curve {
            name: format!("{label}: polygons"),
            points: measured
                .iter()
                .map(|m| (m[0] * 1e3, (m[1] - d / 2.0) * 1e3))
                .collect(),
        });
        pressure_curves.push(Curve {
            name: format!("{label}: polygons"),
            points: measured.iter().map(|m| (m[0] * 1e3, m[2] / 1e3)).collect(),
        });
        let smooth: Vec<(f64, f64, f64)> = (0..=100)
            .map(|i| {
                let rho = rim * f64::from(i) / 100.0;
                let (z, p) = equal_pressure(rho, d, e_a, e_b);
                (rho * 1e3, (z - d / 2.0) * 1e3, p / 1e3)
            })
            .collect();
        surface_curves.push(Curve {
            name: format!("{label}: p_A = p_B"),
            points: smooth.iter().map(|s| (s.0, s.1)).collect(),
        });
        pressure_curves.push(Curve {
            name: format!("{label}: closed form"),
            points: smooth.iter().map(|s| (s.0, s.2)).collect(),
        });
    }
    Ok(PaperFigure {
        name: "elandt-compliant-compliant",
        title: "Elandt Fig. 4.7: two compliant spheres (R = 5 cm, overlap 5 mm), the equal-pressure surface".into(),
        x_label: "distance from the axis ρ (mm)",
        panels: vec![
            LinePanel {
                y_label: "surface height above mid-plane (mm)",
                curves: surface_curves,
            },
            LinePanel {
                y_label: "pressure (kPa)",
                curves: pressure_curves,
            },
        ],
        equal_aspect: false,
        numbers,
        notes: vec![
            format!("A's modulus is E_A = {MODULUS:e} Pa; Elandt's Fig. 4.7 is a qualitative 2-D sketch, so the closed forms (the smooth fields p = E (1 − r/R)) are the reference."),
            format!(
                "The spheres are inscribed polyhedra with edges of about {} mm, each coned to its centre (the field linear in each tetrahedron), so the polygons sit slightly off the smooth surface.",
                hint * 1e3
            ),
        ],
    })
}

/// The indenter of the damping study: radius (m), depth in the layer (m), the layer's
/// thickness (m), the dissipation `χ` (Hunt & Crossley's `d`, s/m) and the speed (m/s).
const DAMPING_SPHERE: f64 = 0.02;
const DAMPING_DEPTH: f64 = 1e-3;
const DAMPING_LAYER: f64 = 0.01;
const DAMPING_CHI: f64 = 2.0;
const DAMPING_SPEED: f64 = 0.1;
/// The step (s): short enough that the penetration a step adds, `δt v`, is a small part of
/// the polygons' `p0/g` away from the rim.
const DAMPING_DT: f64 = 1e-6;

/// One pressure-field polygon's contact in a step of the damping study.
struct DampedPolygon {
    /// Centroid (world, m).
    point: Vector3<f64>,
    /// The sphere's outward normal there.
    outward: Vector3<f64>,
    /// Normal force (N).
    force: f64,
    /// Virtual penetration at the end of the step, `p0/g − δt v_n` (m).
    penetration: f64,
}

/// What the damping did to one polygon: its force over its force at rest, eq. (5.12)'s
/// factor, and the Lagged step's lag term `−δt v_n/φ0`.
struct Factor {
    point: Vector3<f64>,
    measured: f64,
    elandt: f64,
    lag: f64,
}

/// Each pressure-field polygon of one step of a heavy rigid sphere `DAMPING_DEPTH` deep in a
/// compliant layer, moving at `velocity` (m/s), without gravity or friction.
fn damping_step(velocity: [f64; 3], hint: f64) -> Result<Vec<DampedPolygon>> {
    let text = format!(
        r#"
        [simulation]
        dt = {DAMPING_DT:e}
        duration = {DAMPING_DT:e}
        approximation = "lagged"
        gravity = [0.0, 0.0, 0.0]
        [contact]
        friction = 0.0
        dissipation = {DAMPING_CHI:e}
        [[body]]
        name = "indenter"
        mass = 1000.0
        joint = "free"
        position = [0.0, 0.0, {z:e}]
        velocity = [{vx:e}, {vy:e}, {vz:e}]
        [[geometry]]
        name = "indenter"
        body = "indenter"
        shape = "sphere"
        radius = {DAMPING_SPHERE:e}
        hydroelastic = {{ resolution_hint = {hint:e} }}
        [[geometry]]
        name = "layer"
        body = "world"
        shape = "half-space"
        hydroelastic = {{ modulus = {MODULUS:e}, thickness = {DAMPING_LAYER:e} }}
        "#,
        z = DAMPING_SPHERE - DAMPING_DEPTH,
        vx = velocity[0],
        vy = velocity[1],
        vz = velocity[2],
    );
    let mut problem =
        crate::problem::parse_problem(&text, std::path::Path::new("elandt-damping.toml"))?;
    let u = nalgebra::DVector::zeros(problem.simulator.model.nu());
    let (_, report) = problem.simulator.step(&problem.initial_state, &u)?;
    Ok(report
        .contacts
        .iter()
        .map(|c| {
            // The normal points from A to B; the sphere's outward normal points into the layer.
            let outward = if c.geometries.0 == 0 {
                c.normal
            } else {
                -c.normal
            };
            DampedPolygon {
                point: c.point,
                outward,
                force: c.normal_force,
                penetration: c.penetration,
            }
        })
        .collect())
}

/// Elandt Sec. 4.4.2, Fig. 4.9 and eq. (5.12): damping trends. Normal dissipation scales the
/// pressure by `max(1 − χ v_n, 0)` at each point of the contact surface, `v_n` the relative
/// normal velocity there (positive separating): where the surfaces approach the pressure
/// grows, where they separate it falls, and never below zero (no suction). A rigid sphere
/// (R = 2 cm) 1 mm deep in a compliant layer (E = 1 MPa, 1 cm thick) moves at 0.1 m/s down,
/// up, sideways and, to show the clamp, up at 0.6 m/s; χ = 2 s/m. One step of the convex
/// contact solve (Lagged, δt = 1 µs, the sphere 1 t so that its velocity stays) gives each
/// polygon's force; divided by the force of the same polygon at rest it is the factor the
/// damping applies. ICF's Lagged force also grows by the penetration the step adds,
/// `1 − δt v_n/φ0` (`φ0 = p0/g`), which is small away from the rim: the comparison uses the
/// polygons where it is below 1 %.
pub(super) fn damping(_load: Loader<'_>, quality: Quality) -> Result<PaperFigure> {
    let hint = match quality {
        Quality::Quick => 1e-3,
        Quality::Full => 4e-4,
    };
    let rest = damping_step([0.0; 3], hint)?;
    let v = DAMPING_SPEED;
    let cases: [(&str, &str, [f64; 3]); 5] = [
        ("down", "down 0.1 m/s", [0.0, 0.0, -v]),
        ("up", "up 0.1 m/s", [0.0, 0.0, v]),
        ("right", "right (+x) 0.1 m/s", [v, 0.0, 0.0]),
        ("left", "left (−x) 0.1 m/s", [-v, 0.0, 0.0]),
        ("lift", "up 0.6 m/s (χ v > 1)", [0.0, 0.0, 0.6]),
    ];
    // The cut through the sphere's lowest point along x, for the profiles.
    let on_cut = |x: &Vector3<f64>| x.y.abs() < 0.75 * hint;
    let pressure_at = |x: &Vector3<f64>| MODULUS * (-x.z).max(0.0) / DAMPING_LAYER / 1e3;
    let mut profiles = vec![Curve {
        name: "at rest: p0".into(),
        points: sorted(
            rest.iter()
                .filter(|c| on_cut(&c.point))
                .map(|c| (c.point.x * 1e3, pressure_at(&c.point)))
                .collect(),
        ),
    }];
    let mut factors = Vec::new();
    let mut numbers = Vec::new();
    for (key, label, velocity) in cases {
        let moving = damping_step(velocity, hint)?;
        if moving.len() != rest.len()
            || moving
                .iter()
                .zip(&rest)
                .any(|(m, r)| (m.point - r.point).norm() > 1e-12)
        {
            return Err(crate::error::Error::invalid(
                "elandt-damping",
                key,
                "the moving and resting steps found different contact surfaces",
            ));
        }
        let velocity = Vector3::from(velocity);
        // Per polygon: x, the measured factor, Elandt's factor, and the lag term's share.
        let rows: Vec<Factor> = moving
            .iter()
            .zip(&rest)
            .filter(|(_, r)| r.force > 0.0)
            .map(|(m, r)| {
                // The layer (A) is still: the separation rate is −v·n_out.
                let v_n = -velocity.dot(&r.outward);
                let elandt = (1.0 - DAMPING_CHI * v_n).max(0.0);
                // At rest the step adds no penetration: φ0 = p0/g is the resting one's.
                Factor {
                    point: r.point,
                    measured: m.force / r.force,
                    elandt,
                    lag: -DAMPING_DT * v_n / r.penetration,
                }
            })
            .collect();
        let compared: Vec<&Factor> = rows.iter().filter(|r| r.lag.abs() < 0.01).collect();
        let error = compared
            .iter()
            .map(|r| (r.measured - r.elandt).abs())
            .fold(0.0, f64::max);
        let range = |column: fn(&Factor) -> f64| {
            compared
                .iter()
                .map(|r| column(r))
                .fold((f64::INFINITY, 0.0), |(lo, hi), x| {
                    (f64::min(lo, x), f64::max(hi, x))
                })
        };
        let (measured_low, measured_high) = range(|r| r.measured);
        let (low, high) = range(|r| r.elandt);
        numbers.push(number(
            format!("{key}.error"),
            format!(
                "{label}: largest |p/p0 − max(1 − χ v_n, 0)| over the {} of {} polygons where the lag term is below 1 %",
                compared.len(),
                rows.len()
            ),
            "0 (eq. 5.12)",
            error,
            "1",
        ));
        let lagged_error = rows
            .iter()
            .map(|r| (r.measured - r.elandt * (1.0 + r.lag)).abs())
            .fold(0.0, f64::max);
        numbers.push(number(
            format!("{key}.lagged_error"),
            format!(
                "{label}: largest |p/p0 − max(1 − χ v_n, 0) (1 − δt v_n/φ0)| over all polygons"
            ),
            "0 (eq. 5.12 with ICF's Lagged step)",
            lagged_error,
            "1",
        ));
        numbers.push(number(
            format!("{key}.largest"),
            format!("{label}: largest p/p0 over the same polygons"),
            &format!("{high:.3} (max(1 − χ v_n, 0) over them)"),
            measured_high,
            "1",
        ));
        numbers.push(number(
            format!("{key}.smallest"),
            format!("{label}: smallest p/p0 over the same polygons"),
            &format!("{low:.3}"),
            measured_low,
            "1",
        ));
        numbers.push(number(
            format!("{key}.suction"),
            format!("{label}: smallest normal force of any polygon"),
            "≥ 0: no suction",
            moving.iter().map(|m| m.force).fold(f64::INFINITY, f64::min),
            "N",
        ));
        // The polygons on the cut, by x (mm), with `value` of each.
        let along_cut = |value: &dyn Fn(&Factor) -> f64| {
            sorted(
                rows.iter()
                    .filter(|r| on_cut(&r.point))
                    .map(|r| (r.point.x * 1e3, value(r)))
                    .collect(),
            )
        };
        profiles.push(Curve {
            name: label.into(),
            points: along_cut(&|r| pressure_at(&r.point) * r.measured),
        });
        factors.push(Curve {
            name: format!("{label}: measured"),
            points: along_cut(&|r| r.measured),
        });
        factors.push(Curve {
            name: format!("{label}: max(1 − χ v_n, 0)"),
            points: along_cut(&|r| r.elandt),
        });
    }
    Ok(PaperFigure {
        name: "elandt-damping",
        title: "Elandt Fig. 4.9, eq. (5.12): damping trends, a rigid sphere moving in a compliant layer".into(),
        x_label: "x along the cut y = 0 (mm)",
        panels: vec![
            LinePanel {
                y_label: "pressure p (kPa)",
                curves: profiles,
            },
            LinePanel {
                y_label: "p/p0",
                curves: factors,
            },
        ],
        equal_aspect: false,
        numbers,
        notes: vec![
            format!("R = {} cm, 1 mm deep, layer E = {MODULUS:e} Pa and {} cm thick, χ (Hunt & Crossley's d) = {DAMPING_CHI} s/m, one Lagged step of δt = 1 µs, no friction; polygons of about {} mm.", DAMPING_SPHERE * 100.0, DAMPING_LAYER * 100.0, hint * 1e3),
            "Elandt's boat (Fig. 4.9) is a sketch; a sphere shows the same trends, each point by its own normal: moving down every point approaches, moving sideways the leading side approaches and the trailing side separates.".into(),
            "The measured factor also holds ICF's lag term 1 − δt v_n/φ0 of the Lagged step, which grows near the rim where φ0 = p0/g → 0: the error is taken over the polygons where that term is below 1 %.".into(),
        ],
    })
}

/// `points` sorted by x.
fn sorted(mut points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    points
}

/// The sorting paddle's tilt toward a bin (rad) and its PD gain (N·m/rad); its joints' own
/// damping (N·m·s/rad, implicit in the step) is the D part.
const SORT_TILT: f64 = 0.61;
const SORT_KP: f64 = 100.0;
/// Sensed-area thresholds between the bins (m²): below the first to the left, below the
/// second to the front, else to the right.
const SORT_THRESHOLDS: [f64; 2] = [6e-4, 2e-3];
/// When the paddle senses (s: the mean area over this window) and tilts (ramped over 0.2 s).
const SORT_SENSE: (f64, f64) = (0.4, 0.5);

/// The bins of the sorting figure: where an object must end on the floor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bin {
    /// x < −0.12 m.
    Left,
    /// y > 0.12 m.
    Front,
    /// x > 0.12 m.
    Right,
}

impl Bin {
    fn sensed(area: f64) -> Bin {
        if area < SORT_THRESHOLDS[0] {
            Bin::Left
        } else if area < SORT_THRESHOLDS[1] {
            Bin::Front
        } else {
            Bin::Right
        }
    }

    /// The paddle's target (pitch about y, roll about x) to drop into this bin (rad): positive
    /// pitch lowers the +x edge, negative roll the +y edge.
    fn tilt(self) -> [f64; 2] {
        match self {
            Bin::Left => [-SORT_TILT, 0.0],
            Bin::Front => [0.0, -SORT_TILT],
            Bin::Right => [SORT_TILT, 0.0],
        }
    }

    fn contains(self, p: &Vector3<f64>) -> bool {
        match self {
            Bin::Left => p.x < -0.12,
            Bin::Front => p.y > 0.12,
            Bin::Right => p.x > 0.12,
        }
    }

    fn index(self) -> f64 {
        match self {
            Bin::Left => 0.0,
            Bin::Front => 1.0,
            Bin::Right => 2.0,
        }
    }
}

/// One sorted object: its time series (t, sensed area m², paddle pitch and roll rad, the
/// object's distance from the paddle's axis m), the mean sensed area, the bin chosen and where
/// the object ended.
struct Sorted {
    series: Vec<[f64; 5]>,
    area: f64,
    bin: Bin,
    end: Vector3<f64>,
}

/// Elandt Sec. 5.3.3: drops the compliant object `geometry` (a TOML geometry body without its
/// name and body) on the rigid paddle, senses its contact surface's area, tilts toward the bin
/// the area says, and runs until `duration`.
fn sort_object(geometry: &str, duration: f64) -> Result<Sorted> {
    let text = format!(
        r#"
        [simulation]
        dt = 1e-3
        duration = {duration}
        approximation = "lagged"
        [contact]
        friction = 0.3
        dissipation = 20.0
        [[body]]
        name = "pitch"
        mass = 0.1
        inertia = [1e-4, 1e-4, 1e-4]
        joint = "revolute"
        axis = [0.0, 1.0, 0.0]
        origin = [0.0, 0.0, 0.3]
        damping = [5.0]
        [[body]]
        name = "paddle"
        parent = "pitch"
        mass = 1.0
        joint = "revolute"
        axis = [1.0, 0.0, 0.0]
        damping = [5.0]
        [[body]]
        name = "object"
        mass = 0.3
        position = [0.0, 0.0, 0.36]
        [[geometry]]
        name = "paddle"
        body = "paddle"
        shape = "box"
        size = [0.24, 0.24, 0.02]
        hydroelastic = {{ resolution_hint = 0.03 }}
        [[geometry]]
        name = "object"
        body = "object"
        {geometry}
        [[geometry]]
        name = "floor"
        shape = "half-space"
        hydroelastic = {{}}
        [[actuator]]
        body = "pitch"
        [[actuator]]
        body = "paddle"
        "#,
    );
    let mut problem =
        crate::problem::parse_problem(&text, std::path::Path::new("elandt-sorting.toml"))?;
    let sim = &mut problem.simulator;
    let mut tracker = crate::report::BodyStateTracker::new(&sim.model);
    let mut state = problem.initial_state.clone();
    let (mut sensed, mut samples) = (0.0, 0usize);
    let mut bin = None;
    let mut series = Vec::new();
    let mut end = Vector3::zeros();
    while state.t < duration - 0.5 * sim.settings.dt {
        let ramp = ((state.t - SORT_SENSE.1) / 0.2).clamp(0.0, 1.0);
        let target = bin.map_or([0.0; 2], |b: Bin| b.tilt().map(|a| a * ramp));
        let u = nalgebra::DVector::from_fn(2, |j, _| SORT_KP * (target[j] - state.q[j]));
        let (next, report) = sim.step(&state, &u)?;
        let area: f64 = report
            .patches
            .iter()
            .filter(|p| p.geometries == (0, 1) || p.geometries == (1, 0))
            .map(|p| p.area)
            .fold(0.0, |a, b| a + b);
        if next.t > SORT_SENSE.0 && next.t <= SORT_SENSE.1 {
            sensed += area;
            samples += 1;
        }
        if bin.is_none() && next.t >= SORT_SENSE.1 - 1e-9 {
            bin = Some(Bin::sensed(sensed / samples.max(1) as f64));
        }
        end = tracker.next(&sim.model, &next)[2].p_WB;
        series.push([next.t, area, next.q[0], next.q[1], end.xy().norm()]);
        state = next;
    }
    let bin = bin.ok_or_else(|| {
        crate::error::Error::invalid(
            "elandt-sorting",
            "duration",
            "ends before the paddle senses",
        )
    })?;
    Ok(Sorted {
        series,
        area: sensed / samples.max(1) as f64,
        bin,
        end,
    })
}

/// Elandt Sec. 5.3.3, Fig. 5.5: contact surfaces as virtual tactile data. A paddle 0.3 m above
/// the floor senses the area of the contact surface of what lands on it and tilts by 35°
/// toward one of three bins: small areas to the left, middle to the front, large to the
/// right. Three compliant objects of 0.3 kg and E = 200 kPa: a sphere (R = 3 cm, about
/// 2πRδ = 4 cm² at rest, δ = √(mg/(πE))), a cylinder on its side (R = 2.5 cm, 8 cm long, a
/// strip of about 9 cm²) and a flat box (6 × 6 × 3 cm, its whole 36 cm² face). Elandt's
/// paddle, objects and thresholds are not given in numbers; these are ours.
pub(super) fn sorting(_load: Loader<'_>, quality: Quality) -> Result<PaperFigure> {
    let (hint, duration) = match quality {
        Quality::Quick => (0.008, 1.5),
        Quality::Full => (0.004, 2.0),
    };
    let modulus = 2e5;
    let objects = [
        (
            "sphere",
            format!(
                "shape = \"sphere\"\nradius = 0.03\nhydroelastic = {{ modulus = {modulus:e}, resolution_hint = {hint:e} }}"
            ),
            Bin::Left,
        ),
        (
            "cylinder",
            format!(
                "shape = \"cylinder\"\nradius = 0.025\nlength = 0.08\nrpy_deg = [90.0, 0.0, 0.0]\nhydroelastic = {{ modulus = {modulus:e}, resolution_hint = {hint:e} }}"
            ),
            Bin::Front,
        ),
        (
            "box",
            format!(
                "shape = \"box\"\nsize = [0.06, 0.06, 0.03]\nhydroelastic = {{ modulus = {modulus:e}, resolution_hint = {hint:e} }}"
            ),
            Bin::Right,
        ),
    ];
    // The resting areas of the smooth fields p = E (1 − r/R) under the weight F = mg (small δ):
    // a sphere F = π E δ², area 2πRδ; a cylinder of length L on its side
    // F = (4/3) (E/R) L δ √(2Rδ), area 2√(2Rδ) L; the box its whole face.
    let weight = 0.3 * 9.81;
    let sphere_area = 2.0 * PI * 0.03 * (weight / (PI * modulus)).sqrt();
    let (r, l) = (0.025, 0.08);
    let delta = (3.0 * weight * r / (4.0 * modulus * l * (2.0 * r).sqrt())).powf(2.0 / 3.0);
    let closed = [sphere_area, 2.0 * (2.0 * r * delta).sqrt() * l, 0.06 * 0.06];
    let sorted = objects
        .iter()
        .map(|(_, geometry, _)| sort_object(geometry, duration))
        .collect::<Result<Vec<_>>>()?;
    let mut numbers = Vec::new();
    let mut areas = Vec::new();
    let mut tilts = Vec::new();
    let mut distances = Vec::new();
    for (((name, _, expected), s), closed) in objects.iter().zip(&sorted).zip(closed) {
        numbers.push(number(
            format!("{name}.area"),
            format!(
                "{name}: sensed contact surface area, mean over {}-{} s",
                SORT_SENSE.0, SORT_SENSE.1
            ),
            &format!(
                "{:.1} (at rest, smooth field); sphere < cylinder < box",
                closed * 1e4
            ),
            s.area * 1e4,
            "cm²",
        ));
        numbers.push(number(
            format!("{name}.bin"),
            format!("{name}: bin the paddle chose (0 left, 1 front, 2 right)"),
            &format!("{}", expected.index()),
            s.bin.index(),
            "1",
        ));
        numbers.push(number(
            format!("{name}.in_bin"),
            format!("{name}: ended on the floor in that bin (1 yes): x = {:.3} m, y = {:.3} m, z = {:.3} m", s.end.x, s.end.y, s.end.z),
            "1",
            f64::from(u8::from(s.bin.contains(&s.end) && s.end.z < 0.1)),
            "1",
        ));
        let column = |i: usize, scale: f64| -> Vec<(f64, f64)> {
            s.series.iter().map(|x| (x[0], x[i] * scale)).collect()
        };
        areas.push(Curve {
            name: (*name).into(),
            points: column(1, 1e4),
        });
        let (axis, index) = if s.bin == Bin::Front {
            ("roll", 3)
        } else {
            ("pitch", 2)
        };
        tilts.push(Curve {
            name: format!("{name}: {axis}"),
            points: column(index, 180.0 / PI),
        });
        distances.push(Curve {
            name: (*name).into(),
            points: column(4, 1.0),
        });
    }
    for (k, threshold) in SORT_THRESHOLDS.iter().enumerate() {
        areas.push(Curve {
            name: format!("threshold {}", k + 1),
            points: vec![(0.0, threshold * 1e4), (duration, threshold * 1e4)],
        });
    }
    Ok(PaperFigure {
        name: "elandt-sorting",
        title: "Elandt Fig. 5.5: sorting by the sensed contact surface area".into(),
        x_label: "t (s)",
        panels: vec![
            LinePanel {
                y_label: "contact surface area on the paddle (cm²)",
                curves: areas,
            },
            LinePanel {
                y_label: "paddle tilt (deg)",
                curves: tilts,
            },
            LinePanel {
                y_label: "object off the paddle's axis (m)",
                curves: distances,
            },
        ],
        equal_aspect: false,
        numbers,
        notes: vec![
            format!("Ours, not Elandt's (his are not given in numbers): a rigid 24 × 24 × 2 cm paddle on two revolute joints 0.3 m up, PD on the tilt (kp = {SORT_KP} N·m/rad, joint damping 5 N·m·s/rad), thresholds {} and {} cm², 35° tilt; compliant objects of 0.3 kg, E = {modulus:e} Pa, meshes of {} mm; μ = 0.3, Lagged, δt = 1 ms.", SORT_THRESHOLDS[0] * 1e4, SORT_THRESHOLDS[1] * 1e4, hint * 1e3),
            "The controller reads only the contact surface's area (the pressure-field patch between paddle and object), as Elandt's does.".into(),
        ],
    })
}
