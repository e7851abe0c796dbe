//! Elandt's study of pressure field contact against a compliant layer (the seed `003_…`,
//! Sec. 4.5, Figs. 4.10 and 4.13(b), PFC's side): a rigid sphere and a rigid cylinder pressed
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
//! comparison (Fig. 4.11) is not reproduced: it needs a finite-element model of the layer.
//!
//! The rigid indenters are triangle meshes (the resolution hint sets their edge length), so
//! the measured surface is that of a polyhedron inscribed in the sphere or the cylinder; the
//! numbers say how close that comes to the smooth closed forms.

use std::f64::consts::PI;

use nalgebra::Vector3;

use super::{number, Loader, PaperFigure, Quality};
use crate::error::Result;
use crate::geometry::Shape;
use crate::hydroelastic::{contact_surface, ContactPolygon, HydroGeometry, Hydroelastic, Placed};
use crate::math::Pose;
use crate::report::plot::{Curve, LinePanel};

/// The layer's modulus `E` (Pa); every pressure scales with it.
const MODULUS: f64 = 1e6;
/// The contact surface's diameter `D` of the paper's study (m).
const DIAMETER: f64 = 0.01;
/// The sphere's radius (m); Elandt's FEM sphere is 1600 times its layer (R ≫ H), ours 8 times.
const SPHERE_RADIUS: f64 = 0.02;

/// The contact surface between a compliant layer (thickness `thickness`, the half-space
/// z ≤ 0) and the rigid `shape` placed at `centre`, meshed with edges of about `hint` (m).
fn surface(
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
fn summary(polygons: &[ContactPolygon<f64>]) -> (f64, f64, Vec<(f64, f64)>) {
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
            "PFC only: Elandt's FEM pressures and forces (Figs. 4.11, 4.13b) need a finite-element model of the layer and are not reproduced; the thesis reports PFC forces within 60-70 % of FEM at H = D and approaching it as H/D → 0.".into(),
            format!("The layer's modulus is E = {MODULUS:e} Pa; every pressure and force scales with it."),
            format!(
                "The indenters are triangle meshes with edges of about {} mm (inscribed polyhedra), so the measured diameters and forces fall slightly short of the smooth closed forms.",
                hint * 1e3
            ),
        ],
    })
}
