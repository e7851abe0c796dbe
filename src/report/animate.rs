//! An animated GIF of a rollout: the scene seen along one world axis, frame by frame.
//!
//! Each frame draws, in the plane of the chosen [`Projection`] (equal scale on both axes):
//!
//! - every geometry at its world pose `X_WG = X_WB X_BG`, as the convex outline of its
//!   projection (spheres as discs with a radius line that turns as the sphere rolls; boxes,
//!   capsules, cylinders and convex meshes as the 2-D convex hull of their projected points);
//!   bodies in their own colours, world and prescribed geometry in grey. Outlines are painted
//!   far to near ([`Projection::depth`] of their centres); fixed geometry nearer the viewer
//!   than the bodies' mean depth (a container's near wall) is painted last, see-through;
//! - the kinematic tree of articulated bodies: a dark line through the joint origins of each
//!   chain (to the body origin of a leaf) with a dot at every joint, so links without
//!   collision geometry are drawn too;
//! - half-spaces as the shaded region `n·(x − p) ≤ 0` they occupy, when their boundary is not
//!   parallel to the view plane;
//! - the polygons of the pressure-field contact patches of that step, filled with their
//!   pressure `f_n/A` from yellow (0) to red (the rollout's largest polygon pressure);
//! - the contact force on body B of every point contact of the step that ends at the frame's
//!   time, and the total force of every pressure-field patch (at its centroid), as a
//!   black arrow from the contact point. The 90th percentile of all contact forces of the
//!   rollout spans 15 % of the view, so resting contacts stay visible next to impacts; arrows
//!   are capped at 35 % of the view;
//! - a title with the problem, the approximation, δt and the frame's time `t`.
//!
//! At most [`AnimationSettings::max_frames`] states are shown, evenly spaced in time, at a fixed
//! frame delay, so a short rollout plays in slow motion.
//!
//! One 256-colour palette serves every frame: NeuQuant (`color_quant`, as plotters' GIF
//! backend uses per frame) learns it from the first, middle and last frames, and a
//! 32 × 32 × 32 table maps each pixel to its nearest entry. Frames are drawn and indexed in
//! parallel with rayon, a batch of 24 frames (`BATCH`) at a time so that memory stays
//! bounded, then written in order by the `gif` encoder;
//! [`write_animation_observed`] reports each frame written.

use std::path::{Path, PathBuf};

use nalgebra::Vector3;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::geometry::Shape;
use crate::math::Pose;
use crate::multibody::model::BodyId;
use crate::multibody::{forward_kinematics, JointKind, MultibodyData};
use crate::simulate::Recording;
use crate::step::{geometry_poses, Simulator};

pub use crate::report::projection::Projection;

/// How the animation is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnimationSettings {
    /// The view plane (default [`Projection::Xz`]).
    pub projection: Projection,
    /// Image size in pixels (default 800 × 600).
    pub size: (u32, u32),
    /// Most frames drawn (default 120); states are picked evenly in time.
    pub max_frames: usize,
    /// Delay between frames (ms, default 40: 25 frames per second).
    pub frame_delay_ms: u32,
}

impl Default for AnimationSettings {
    fn default() -> Self {
        AnimationSettings {
            projection: Projection::Xz,
            size: (800, 600),
            max_frames: 120,
            frame_delay_ms: 40,
        }
    }
}

/// Points per circle when outlines are sampled.
const CIRCLE_POINTS: usize = 32;

/// Frames drawn and quantized in parallel before they are written: each holds its indexed
/// pixels (one byte per pixel) until then.
const BATCH: usize = 24;

/// Writes the animation of `recording` to `path` (a `.gif`); `name` (the problem's) heads
/// every title. Returns `path`.
///
/// # Errors
/// [`Error::Plot`] if the GIF cannot be drawn or written.
pub fn write_animation(
    recording: &Recording,
    sim: &Simulator,
    name: &str,
    path: &Path,
    settings: &AnimationSettings,
) -> Result<PathBuf> {
    write_animation_observed(recording, sim, name, path, settings, &|_, _| {})
}

/// [`write_animation`], calling `on_frame(written, total)` after each frame is written (from
/// the calling thread), for a progress display.
///
/// # Errors
/// [`Error::Plot`] if the GIF cannot be drawn or written.
pub fn write_animation_observed(
    recording: &Recording,
    sim: &Simulator,
    name: &str,
    path: &Path,
    settings: &AnimationSettings,
    on_frame: &dyn Fn(usize, usize),
) -> Result<PathBuf> {
    let frames = frames(recording, sim, settings, None)?;
    let f_ref = super::reference_force(recording);
    let title = format!(
        "{name} ({}, δt = {} s)",
        sim.settings.approximation, sim.settings.dt
    );
    draw_frames(&frames, f_ref, title, path, settings, on_frame)
}

/// The animation of a rollout of the geometrically implicit (ncp) stepper: `states` of
/// `sim`'s model (the ncp stepper steps the same scene), and per step the contact forces on
/// body B of each pair as (point, force) in the world (m, N). Returns `path`.
///
/// # Errors
/// [`Error::Plot`] if the GIF cannot be drawn or written.
pub fn write_ncp_animation(
    states: &[crate::step::State],
    forces: &[Vec<(Vector3<f64>, Vector3<f64>)>],
    sim: &Simulator,
    (name, dt): (&str, f64),
    path: &Path,
    settings: &AnimationSettings,
    on_frame: &dyn Fn(usize, usize),
) -> Result<PathBuf> {
    let recording = Recording {
        states: states.to_vec(),
        reports: Vec::new(),
    };
    let frames = frames(&recording, sim, settings, Some(forces))?;
    let f_ref = super::reference_force_of(forces.iter().flatten().map(|(_, f)| f.norm()));
    let title = format!("{name} (ncp, δt = {dt} s)");
    draw_frames(&frames, f_ref, title, path, settings, on_frame)
}

/// A point of the view plane (m).
type Point2 = (f64, f64);

/// Colour of a drawing: the body index for tree bodies, `None` (grey) for the rest.
type Colour = Option<usize>;

/// A geometry's projected outline.
struct Outline {
    points: Vec<Point2>,
    colour: Colour,
    /// Depth of the geometry's origin behind the view plane (m), for the painting order.
    depth: f64,
    /// The radius line of a sphere: (centre, rim point).
    marker: Option<(Point2, Point2)>,
}

/// What one frame shows, in view-plane coordinates (m).
struct Frame {
    t: f64,
    /// Outlines of fixed geometry behind the bodies, then of the bodies, far to near.
    outlines: Vec<Outline>,
    /// Outlines of fixed geometry in front of the bodies, drawn last and see-through.
    near: Vec<Outline>,
    /// Kinematic-tree segments through the joint origins, and the joint origins.
    links: Vec<(Point2, Point2)>,
    joints: Vec<Point2>,
    /// Half-spaces: a point on the boundary and the outward normal.
    half_spaces: Vec<((f64, f64), (f64, f64))>,
    /// Contact forces on B: (point, force in N).
    forces: Vec<((f64, f64), (f64, f64))>,
    /// Pressure-field polygons: outline and pressure (Pa).
    patches: Vec<(Vec<Point2>, f64)>,
}

/// One step's contact forces: (point, force on B), world.
type StepForces = Vec<(Vector3<f64>, Vector3<f64>)>;

/// The evenly spaced frames of the rollout.
///
/// # Errors
/// As [`Simulator::polygon_vertices`].
/// `step_forces`, when given, replaces the forces of `recording.reports` (one list per step
/// of (point, force on B), world).
fn frames(
    recording: &Recording,
    sim: &Simulator,
    settings: &AnimationSettings,
    step_forces: Option<&[StepForces]>,
) -> Result<Vec<Frame>> {
    let projection = settings.projection;
    let n_states = recording.states.len();
    let n_frames = settings.max_frames.clamp(1, n_states.max(1));
    let mut data = MultibodyData::new(&sim.model);
    let body_depth = mean_body_depth(recording, sim, projection);
    (0..n_frames.min(n_states))
        .map(|i| {
            let k = if n_frames > 1 {
                (i * (n_states - 1) + (n_frames - 1) / 2) / (n_frames - 1)
            } else {
                0
            };
            let state = &recording.states[k];
            forward_kinematics(&sim.model, &mut data, &state.q, &state.v);
            let poses = geometry_poses(&sim.model, &data, sim.geometries(), state.t);
            let project = |p: &Vector3<f64>| projection.project(p);
            let (links, joints) = skeleton(sim, &data, projection);
            let mut frame = Frame {
                t: state.t,
                outlines: Vec::new(),
                near: Vec::new(),
                links,
                joints,
                half_spaces: Vec::new(),
                forces: Vec::new(),
                patches: Vec::new(),
            };
            for (g, X_WG) in sim.geometries().iter().zip(&poses) {
                let colour = match g.body {
                    BodyId::Body(b) => Some(b),
                    BodyId::World | BodyId::Prescribed(_) => None,
                };
                if let Shape::HalfSpace = g.shape {
                    let n = X_WG.R.column(2).into_owned();
                    frame.half_spaces.push((project(&X_WG.p), project(&n)));
                    continue;
                }
                let points: Vec<_> = shape_points(&g.shape, X_WG, projection)
                    .iter()
                    .map(project)
                    .collect();
                let marker = match g.shape {
                    Shape::Sphere { radius } => {
                        let rim = X_WG.transform_point(&Vector3::new(radius, 0.0, 0.0));
                        Some((project(&X_WG.p), project(&rim)))
                    }
                    _ => None,
                };
                let outline = Outline {
                    points: convex_hull(points),
                    colour,
                    depth: projection.depth(&X_WG.p),
                    marker,
                };
                if colour.is_none() && body_depth.is_some_and(|d| outline.depth < d) {
                    frame.near.push(outline);
                } else {
                    frame.outlines.push(outline);
                }
            }
            // Painter's order: far first; fixed geometry behind bodies at the same depth.
            frame.outlines.sort_by(|a, b| {
                b.depth
                    .total_cmp(&a.depth)
                    .then(a.colour.is_some().cmp(&b.colour.is_some()))
            });
            if let Some(forces) = step_forces.and_then(|f| f.get(k.wrapping_sub(1))) {
                frame.forces = forces
                    .iter()
                    .map(|(p, f)| (project(p), project(f)))
                    .collect();
            } else if k > 0 && k <= recording.reports.len() {
                // The polygons of the step that ends here, clipped at its start.
                let report = &recording.reports[k - 1];
                let vertices = sim.polygon_vertices(&recording.states[k - 1], &report.contacts)?;
                for (c, vertices) in report.contacts.iter().zip(&vertices) {
                    match &c.polygon {
                        None => frame.forces.push((project(&c.point), project(&c.force))),
                        Some(p) => frame.patches.push((
                            vertices.iter().map(project).collect(),
                            c.normal_force / p.area,
                        )),
                    }
                }
                for p in &report.patches {
                    frame.forces.push((project(&p.centroid), project(&p.force)));
                }
            }
            Ok(frame)
        })
        .collect()
}

/// The mean depth of the origins of the geometries on bodies in the first state: fixed
/// geometry in front of it is drawn see-through. `None` without such geometry.
fn mean_body_depth(recording: &Recording, sim: &Simulator, projection: Projection) -> Option<f64> {
    let state = recording.states.first()?;
    let mut data = MultibodyData::new(&sim.model);
    forward_kinematics(&sim.model, &mut data, &state.q, &state.v);
    let poses = geometry_poses(&sim.model, &data, sim.geometries(), state.t);
    let depths: Vec<f64> = sim
        .geometries()
        .iter()
        .zip(&poses)
        .filter(|(g, _)| matches!(g.body, BodyId::Body(_)))
        .map(|(_, X_WG)| projection.depth(&X_WG.p))
        .collect();
    (!depths.is_empty()).then(|| depths.iter().sum::<f64>() / depths.len() as f64)
}

/// The kinematic tree in the view plane: a segment from each articulated body's joint origin
/// to each child's joint origin (to its own origin for a leaf), and the joint origins. Free
/// joints have no link to draw.
fn skeleton(
    sim: &Simulator,
    data: &MultibodyData<f64>,
    projection: Projection,
) -> (Vec<(Point2, Point2)>, Vec<Point2>) {
    let model = &sim.model;
    let joint_origin = |b: usize| {
        let joint = &model.joints[b];
        match joint.parent {
            Some(p) => data.X_WB[p].transform_point(&joint.X_PJ.p),
            None => joint.X_PJ.p,
        }
    };
    let articulated = |b: usize| model.joints[b].kind != JointKind::Free;
    let mut links = Vec::new();
    let mut joints = Vec::new();
    for b in (0..model.bodies.len()).filter(|&b| articulated(b)) {
        let from = joint_origin(b);
        joints.push(projection.project(&from));
        let children: Vec<usize> = (0..model.bodies.len())
            .filter(|&c| model.joints[c].parent == Some(b) && articulated(c))
            .collect();
        if children.is_empty() {
            let to = data.X_WB[b].p;
            if (to - from).norm() > 0.0 {
                links.push((projection.project(&from), projection.project(&to)));
            }
        }
        for c in children {
            links.push((
                projection.project(&from),
                projection.project(&joint_origin(c)),
            ));
        }
    }
    (links, joints)
}

/// World points whose projected convex hull is the shape's outline in the view plane.
fn shape_points(shape: &Shape, X_WG: &Pose<f64>, projection: Projection) -> Vec<Vector3<f64>> {
    let (h, v) = projection.axes();
    // A circle of radius r about c, in the view plane (world axes h and v).
    let view_circle = |c: Vector3<f64>, r: f64| {
        (0..CIRCLE_POINTS).map(move |k| {
            let a = std::f64::consts::TAU * k as f64 / CIRCLE_POINTS as f64;
            let mut p = c;
            p[h] += r * a.cos();
            p[v] += r * a.sin();
            p
        })
    };
    let world = |p: Vector3<f64>| X_WG.transform_point(&p);
    match shape {
        Shape::Sphere { radius } => view_circle(X_WG.p, *radius).collect(),
        Shape::Box { half_extents: e } => (0..8)
            .map(|k| {
                let s = |bit: usize| if k & bit == 0 { -1.0 } else { 1.0 };
                world(Vector3::new(s(1) * e.x, s(2) * e.y, s(4) * e.z))
            })
            .collect(),
        Shape::Capsule {
            radius,
            half_length,
        } => [-1.0, 1.0]
            .into_iter()
            .flat_map(|s| view_circle(world(Vector3::new(0.0, 0.0, s * half_length)), *radius))
            .collect(),
        Shape::Cylinder {
            radius,
            half_length,
        } => [-1.0, 1.0]
            .into_iter()
            .flat_map(|s| {
                (0..CIRCLE_POINTS).map(move |k| {
                    let a = std::f64::consts::TAU * k as f64 / CIRCLE_POINTS as f64;
                    Vector3::new(radius * a.cos(), radius * a.sin(), s * half_length)
                })
            })
            .map(world)
            .collect(),
        Shape::ConvexMesh { vertices } => vertices.iter().map(|p| world(*p)).collect(),
        Shape::Ellipsoid { semi_axes } => {
            crate::geometry::mesh::surface_mesh(shape, 0.1 * semi_axes.max())
                .map(|m| m.vertices.into_iter().map(world).collect())
                .unwrap_or_default()
        }
        Shape::HalfSpace => Vec::new(),
    }
}

/// Andrew's monotone chain: the convex hull of `points`, counter-clockwise.
fn convex_hull(mut points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    points.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    points.dedup();
    if points.len() < 3 {
        return points;
    }
    let cross = |o: (f64, f64), a: (f64, f64), b: (f64, f64)| {
        (a.0 - o.0) * (b.1 - o.1) - (a.1 - o.1) * (b.0 - o.0)
    };
    let mut hull: Vec<(f64, f64)> = Vec::with_capacity(2 * points.len());
    for pass in [points.clone(), points.into_iter().rev().collect()] {
        let start = hull.len();
        for p in pass {
            while hull.len() >= start + 2
                && cross(hull[hull.len() - 2], hull[hull.len() - 1], p) <= 0.0
            {
                hull.pop();
            }
            hull.push(p);
        }
        hull.pop();
    }
    hull
}

/// The part of `rect` (counter-clockwise corners) with `n·(x − p) ≤ 0` (Sutherland–Hodgman).
fn clip(rect: &[(f64, f64)], p: (f64, f64), n: (f64, f64)) -> Vec<(f64, f64)> {
    let side = |x: (f64, f64)| n.0 * (x.0 - p.0) + n.1 * (x.1 - p.1);
    let mut out = Vec::new();
    for (i, &a) in rect.iter().enumerate() {
        let b = rect[(i + 1) % rect.len()];
        let (sa, sb) = (side(a), side(b));
        if sa <= 0.0 {
            out.push(a);
        }
        if (sa < 0.0) != (sb < 0.0) && sa != sb {
            let s = sa / (sa - sb);
            out.push((a.0 + s * (b.0 - a.0), a.1 + s * (b.1 - a.1)));
        }
    }
    out
}

/// The view rectangle: every outline of every frame with a margin, widened to the image's
/// aspect ratio so both axes share one scale.
fn view(frames: &[Frame], aspect: f64) -> ((f64, f64), (f64, f64)) {
    let (mut lo, mut hi) = (
        (f64::INFINITY, f64::INFINITY),
        (f64::NEG_INFINITY, f64::NEG_INFINITY),
    );
    for p in frames.iter().flat_map(|f| {
        f.outlines
            .iter()
            .chain(&f.near)
            .flat_map(|o| o.points.iter())
            .chain(f.links.iter().flat_map(|(a, b)| [a, b]))
    }) {
        lo = (lo.0.min(p.0), lo.1.min(p.1));
        hi = (hi.0.max(p.0), hi.1.max(p.1));
    }
    if lo.0 > hi.0 {
        lo = (-0.5, -0.5);
        hi = (0.5, 0.5);
    }
    let centre = (0.5 * (lo.0 + hi.0), 0.5 * (lo.1 + hi.1));
    let mut half = (
        0.5 * (hi.0 - lo.0).max(1e-3) * 1.3,
        0.5 * (hi.1 - lo.1).max(1e-3) * 1.3,
    );
    if half.0 / half.1 < aspect {
        half.0 = half.1 * aspect;
    } else {
        half.1 = half.0 / aspect;
    }
    (
        (centre.0 - half.0, centre.0 + half.0),
        (centre.1 - half.1, centre.1 + half.1),
    )
}

/// What every frame shares: the view, the force scale and the labels.
struct Canvas {
    /// View rectangle (m): (x0, x1), (y0, y1) in the view plane.
    view: ((f64, f64), (f64, f64)),
    /// Arrow length per newton (m/N).
    arrow_scale: f64,
    /// Longest arrow (m).
    arrow_cap: f64,
    /// The reference force: 90th percentile of the rollout's contact forces (N).
    f_ref: f64,
    /// The largest polygon pressure of the rollout (Pa), red in the patches.
    p_max: f64,
    /// Title before the time stamp.
    title: String,
    projection: Projection,
    height: u32,
}

/// Draws every frame into the GIF at `path`, calling `on_frame` after each is written;
/// returns `path`.
///
/// # Errors
/// [`Error::Plot`] if the GIF cannot be drawn or written.
fn draw_frames(
    frames: &[Frame],
    f_ref: f64,
    title: String,
    path: &Path,
    settings: &AnimationSettings,
    on_frame: &dyn Fn(usize, usize),
) -> Result<PathBuf> {
    encode(frames, f_ref, title, path, settings, on_frame)
        .map_err(|message| Error::Plot {
            path: path.to_path_buf(),
            message,
        })
        .map(|()| path.to_path_buf())
}

/// [`draw_frames`] with the error as text.
fn encode(
    frames: &[Frame],
    f_ref: f64,
    title: String,
    path: &Path,
    settings: &AnimationSettings,
    on_frame: &dyn Fn(usize, usize),
) -> std::result::Result<(), String> {
    let (width, height) = settings.size;
    // Plot area of the chart: the image minus the label areas, caption, note and margins.
    let (area_w, area_h) = (f64::from(width) - 80.0, f64::from(height) - 136.0);
    let view = view(frames, area_w / area_h);
    let ((x0, x1), (y0, y1)) = view;
    let span = (x1 - x0).min(y1 - y0);
    let canvas = Canvas {
        view,
        arrow_scale: if f_ref > 0.0 {
            0.15 * span / f_ref
        } else {
            0.0
        },
        arrow_cap: 0.35 * span,
        f_ref,
        p_max: frames
            .iter()
            .flat_map(|f| f.patches.iter().map(|p| p.1))
            .fold(0.0, f64::max),
        title,
        projection: settings.projection,
        height,
    };
    let (w, h) = (
        u16::try_from(width).map_err(|_| format!("width {width} > 65535 pixels"))?,
        u16::try_from(height).map_err(|_| format!("height {height} > 65535 pixels"))?,
    );
    let pixels = 3 * usize::from(w) * usize::from(h);
    let render = |frame: &Frame| -> std::result::Result<Vec<u8>, String> {
        let mut rgb = vec![0u8; pixels];
        {
            let root = BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area();
            draw_frame(&root, frame, &canvas).map_err(|e| e.to_string())?;
            root.present().map_err(|e| e.to_string())?;
        }
        Ok(rgb)
    };
    let samples = [0, frames.len() / 2, frames.len().saturating_sub(1)];
    let sample: Vec<Vec<u8>> = samples
        .par_iter()
        .filter_map(|&k| frames.get(k))
        .map(render)
        .collect::<std::result::Result<_, String>>()?;
    let palette = GifPalette::learn(&sample);
    let file = std::fs::File::create(path).map_err(|e| e.to_string())?;
    let mut encoder = gif::Encoder::new(std::io::BufWriter::new(file), w, h, &palette.rgb)
        .map_err(|e| e.to_string())?;
    encoder
        .set_repeat(gif::Repeat::Infinite)
        .map_err(|e| e.to_string())?;
    // The GIF delay unit is 10 ms (plotters' rounding).
    let delay = u16::try_from(settings.frame_delay_ms.div_ceil(10).max(1)).unwrap_or(u16::MAX);
    let mut written = 0;
    for batch in frames.chunks(BATCH) {
        let encoded: Vec<gif::Frame<'static>> = batch
            .par_iter()
            .map(|frame| {
                let indices = palette.index(&render(frame)?);
                let mut frame = gif::Frame::from_indexed_pixels(w, h, &indices, None);
                frame.delay = delay;
                frame.make_lzw_pre_encoded();
                Ok(frame)
            })
            .collect::<std::result::Result<_, String>>()?;
        for frame in &encoded {
            encoder
                .write_lzw_pre_encoded_frame(frame)
                .map_err(|e| e.to_string())?;
            written += 1;
            on_frame(written, frames.len());
        }
    }
    encoder
        .into_inner()
        .and_then(|mut w| std::io::Write::flush(&mut w))
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// The animation's one palette and a table from 15-bit colours to its entries.
struct GifPalette {
    /// 256 RGB entries, for the GIF's global colour table.
    rgb: Vec<u8>,
    /// Palette index of each colour `(r >> 3, g >> 3, b >> 3)`.
    table: Vec<u8>,
}

impl GifPalette {
    /// NeuQuant (speed 10, as plotters' GIF backend) over the pixels of `frames` (RGB).
    fn learn(frames: &[Vec<u8>]) -> GifPalette {
        let rgba: Vec<u8> = frames
            .iter()
            .flat_map(|f| f.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], 255]))
            .collect();
        let quant = color_quant::NeuQuant::new(10, 256, &rgba);
        let table = (0..1usize << 15)
            .map(|c| {
                let channel = |shift: usize| (((c >> shift) & 31) << 3 | 4) as u8;
                quant.index_of(&[channel(10), channel(5), channel(0), 255]) as u8
            })
            .collect();
        GifPalette {
            rgb: quant.color_map_rgb(),
            table,
        }
    }

    /// The palette index of every pixel of `rgb`.
    fn index(&self, rgb: &[u8]) -> Vec<u8> {
        rgb.chunks_exact(3)
            .map(|p| {
                let c = (usize::from(p[0]) >> 3) << 10
                    | (usize::from(p[1]) >> 3) << 5
                    | usize::from(p[2]) >> 3;
                self.table[c]
            })
            .collect()
    }
}

/// Draws one frame on `root` (any plotters backend).
fn draw_frame<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    frame: &Frame,
    canvas: &Canvas,
) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let ((x0, x1), (y0, y1)) = canvas.view;
    let (h, v) = canvas.projection.axes();
    let axis_name = |i: usize| ["x (m)", "y (m)", "z (m)"][i];
    let grey = RGBColor(150, 150, 150);
    root.fill(&WHITE)?;
    let (plot_area, _) = root.split_vertically(canvas.height.saturating_sub(26));
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(
            format!("{}   t = {:.3} s", canvas.title, frame.t),
            ("sans-serif", 22),
        )
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x0..x1, y0..y1)?;
    chart
        .configure_mesh()
        .x_desc(axis_name(h))
        .y_desc(axis_name(v))
        .light_line_style(WHITE)
        .draw()?;
    let rect = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)];
    for &(p, n) in &frame.half_spaces {
        if n.0.hypot(n.1) < 1e-6 {
            continue;
        }
        chart.draw_series(std::iter::once(Polygon::new(
            clip(&rect, p, n),
            grey.mix(0.35).filled(),
        )))?;
    }
    let colour = |c: Option<usize>| match c {
        Some(i) => Palette99::pick(i).to_rgba(),
        None => grey.to_rgba(),
    };
    // Opaque fills (the colour over white) so that nearer outlines hide farther ones.
    let opaque = |c: RGBAColor, alpha: f64| {
        let mix = |x: u8| (255.0 - alpha * (255.0 - f64::from(x))).round() as u8;
        RGBColor(mix(c.0), mix(c.1), mix(c.2))
    };
    let mut draw_outline = |o: &Outline,
                            fill: ShapeStyle|
     -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let mut closed = o.points.clone();
        closed.extend(o.points.first());
        chart.draw_series(std::iter::once(Polygon::new(o.points.clone(), fill)))?;
        chart.draw_series(std::iter::once(PathElement::new(
            closed,
            colour(o.colour).stroke_width(2),
        )))?;
        if let Some((centre, rim)) = o.marker {
            chart.draw_series(std::iter::once(PathElement::new(
                vec![centre, rim],
                colour(o.colour).stroke_width(2),
            )))?;
        }
        Ok(())
    };
    for o in &frame.outlines {
        draw_outline(o, opaque(colour(o.colour), 0.45).filled())?;
    }
    for o in &frame.near {
        draw_outline(o, colour(o.colour).mix(0.08).filled())?;
    }
    let link = RGBColor(60, 60, 60);
    for &(a, b) in &frame.links {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![a, b],
            link.stroke_width(3),
        )))?;
    }
    chart.draw_series(
        frame
            .joints
            .iter()
            .map(|&p| Circle::new(p, 4, link.filled())),
    )?;
    for (outline, pressure) in &frame.patches {
        let s = if canvas.p_max > 0.0 {
            (pressure / canvas.p_max).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let fill = RGBColor(255, (255.0 * (1.0 - s)) as u8, 0);
        let mut closed = outline.clone();
        closed.extend(outline.first());
        chart.draw_series(std::iter::once(Polygon::new(
            outline.clone(),
            fill.filled(),
        )))?;
        chart.draw_series(std::iter::once(PathElement::new(
            closed,
            fill.stroke_width(2),
        )))?;
    }
    for &(p, f) in &frame.forces {
        let length = canvas.arrow_scale * f.0.hypot(f.1);
        let s = canvas.arrow_scale * (canvas.arrow_cap / length).min(1.0);
        if length > 0.0 {
            let tip = (p.0 + s * f.0, p.1 + s * f.1);
            chart.draw_series(
                arrow(p, tip)
                    .into_iter()
                    .map(|segment| PathElement::new(segment, BLACK.stroke_width(2))),
            )?;
        }
    }
    if canvas.p_max > 0.0 {
        // Colour bar of the patch pressure, in the plot's upper right corner.
        let (xs, ys) = chart.plotting_area().get_pixel_range();
        let (width, height) = (160, 12);
        let (left, top) = (xs.end - width - 16, ys.start + 12);
        for i in 0..width {
            let s = f64::from(i) / f64::from(width - 1);
            root.draw(&Rectangle::new(
                [(left + i, top), (left + i + 1, top + height)],
                RGBColor(255, (255.0 * (1.0 - s)) as u8, 0).filled(),
            ))?;
        }
        root.draw(&Rectangle::new(
            [(left, top), (left + width, top + height)],
            BLACK.stroke_width(1),
        ))?;
        let label = |text: String, x: i32, h: HPos| {
            Text::new(
                text,
                (x, top + height + 3),
                ("sans-serif", 13)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(h, VPos::Top)),
            )
        };
        root.draw(&label("0".into(), left, HPos::Left))?;
        root.draw(&label(
            format!("{:.2e} Pa", canvas.p_max),
            left + width,
            HPos::Right,
        ))?;
        root.draw(&label("pressure".into(), left + width / 2, HPos::Center))?;
    }
    let patches = if canvas.p_max > 0.0 {
        "; patches coloured by pressure (bar)"
    } else {
        ""
    };
    root.draw(&Text::new(
        format!(
            "{} view. Arrows: contact forces on the second body of each pair; {:.3} N (90th percentile) = {:.3} m, capped at {:.3} m{patches}",
            canvas.projection,
            canvas.f_ref,
            0.15 * canvas.arrow_cap / 0.35,
            canvas.arrow_cap
        ),
        (10, canvas.height as i32 - 16),
        ("sans-serif", 13),
    ))
}

/// An arrow from `from` to `tip` as three segments: the shaft and two barbs at ±25°, a quarter
/// of the shaft long.
fn arrow(from: (f64, f64), tip: (f64, f64)) -> [Vec<(f64, f64)>; 3] {
    let back = (from.0 - tip.0, from.1 - tip.1);
    let barb = |angle: f64| {
        let (s, c) = (0.25 * angle.sin(), 0.25 * angle.cos());
        vec![
            tip,
            (
                tip.0 + c * back.0 - s * back.1,
                tip.1 + s * back.0 + c * back.1,
            ),
        ]
    };
    let a = 25f64.to_radians();
    [vec![from, tip], barb(a), barb(-a)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::parse_problem;
    use crate::simulate::run;

    /// Frames drawn in parallel are written in order, each reported once, with the delay
    /// asked for; the GIF decodes to that many frames of the image size.
    #[test]
    fn every_frame_is_written_in_order_and_reported() {
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/falling-sphere.toml"),
        )
        .unwrap();
        let mut problem = parse_problem(&text, Path::new("falling-sphere.toml")).unwrap();
        let rec = run(
            &mut problem.simulator,
            &problem.initial_state,
            0.1,
            |_, _| {},
        )
        .unwrap();
        let dir = std::env::temp_dir().join(format!("stiction-animate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.gif");
        let settings = AnimationSettings {
            size: (160, 120),
            max_frames: 30,
            frame_delay_ms: 40,
            ..Default::default()
        };
        let reported = std::cell::RefCell::new(Vec::new());
        write_animation_observed(&rec, &problem.simulator, "fs", &path, &settings, &|k, n| {
            reported.borrow_mut().push((k, n))
        })
        .unwrap();
        let expected: Vec<(usize, usize)> = (1..=30).map(|k| (k, 30)).collect();
        assert_eq!(reported.into_inner(), expected);
        let mut options = gif::DecodeOptions::new();
        options.set_color_output(gif::ColorOutput::Indexed);
        let mut decoder = options
            .read_info(std::fs::File::open(&path).unwrap())
            .unwrap();
        assert_eq!((decoder.width(), decoder.height()), (160, 120));
        let mut frames = 0;
        while let Some(frame) = decoder.read_next_frame().unwrap() {
            assert_eq!(frame.delay, 4, "40 ms in units of 10 ms");
            frames += 1;
        }
        assert_eq!(frames, 30);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn hull_of_a_square_with_an_inner_point() {
        let hull = convex_hull(vec![
            (0.0, 0.0),
            (1.0, 0.0),
            (0.5, 0.5),
            (1.0, 1.0),
            (0.0, 1.0),
        ]);
        assert_eq!(hull, vec![(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]);
    }

    #[test]
    fn clipping_keeps_the_lower_half() {
        let rect = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)];
        let below = clip(&rect, (0.0, 0.0), (0.0, 1.0));
        assert_eq!(
            below,
            vec![(-1.0, -1.0), (1.0, -1.0), (1.0, 0.0), (-1.0, 0.0)]
        );
    }
}
