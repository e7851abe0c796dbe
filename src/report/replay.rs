//! A 3-D replay of a rollout that opens in a web browser: the scene's geometry, the bodies'
//! poses over time, contact points with their force arrows, pressure-field patches coloured by
//! pressure, and markers (an optimizer's targets, measured positions), drawn by a page built
//! on three.js (`viewer/replay.html`, `viewer/replay.js`; [`write_page`]).
//!
//! A replay folder (conventionally `RUN_DIR/replay/`, [`REPLAY_DIR`]) holds:
//!
//! - `replay.html` and `replay.js`, the page (compiled into the library from `viewer/`);
//! - `three/three.module.js`, `three/three.core.js` and
//!   `three/addons/controls/OrbitControls.js`, copied from the `three` npm package
//!   ([`three_js_dir`]), so the folder opens offline;
//! - [`RECORDINGS`] (`recordings.json`): the recordings the page offers, `[{"name",
//!   "title"}]`;
//! - per recording `NAME.json` (the header) and `NAME.bin` (the data), [`write_recording`].
//!
//! # The recording format (version [`FORMAT_VERSION`])
//!
//! `NAME.json` is one object:
//!
//! - `format` (`"stiction-replay"`), `version`, `title`;
//! - `times`: the time of every frame (s, `frames` numbers): recorded states picked evenly in
//!   time, at most [`ReplaySettings::max_frames`];
//! - `bodies`: `[{"name", "colour", "parent"}]`, tree bodies then prescribed bodies (the order
//!   of [`body_names`] and of `trajectory.csv`); colours `#rrggbb`;
//!   `parent`: the index of the parent body of a body hung from it by a joint other than a
//!   free one (`null` otherwise), drawn as a link from the parent's origin to the body's so that
//!   an arm or a leg shows even where its bodies carry no geometry;
//! - `geometries`: `[{"name", "body", "p_BG", "q_BG", "shape"}]`: the body index in `bodies`
//!   (`null`: the world), the pose of the geometry frame in the body frame (m; quaternion
//!   `[w, x, y, z]`) and the shape, one of `{"type": "sphere", "radius"}`, `{"type": "box",
//!   "half_extents"}`, `{"type": "capsule" | "cylinder", "radius", "half_length"}` (along z),
//!   `{"type": "half-space"}` (`z ≤ 0`), `{"type": "ellipsoid", "semi_axes"}` and
//!   `{"type": "mesh", "vertices": [x, y, z, …], "triangles": [i, j, k, …]}` (a convex mesh's
//!   hull, outward triangles; m, geometry frame);
//! - `force_scale` (m/N): arrow length per newton, the rollout's 90th-percentile contact force
//!   drawn at 15 % of the scene's size; `force_reference` (N), that force;
//!   `pressure_max` (Pa): the largest polygon pressure of the frames (0 without patches);
//! - `targets`: `[{"label", "position", "radius", "time"}]` (m, m, s or `null`);
//! - `markers`: `[{"label", "colour"}]`, one position per frame each in the `markers` section;
//! - `sections`: where each array lies in `NAME.bin`, `{"NAME": {"type": "f32" | "u32",
//!   "offset", "count"}}` (offset in bytes, a multiple of 4; count in elements).
//!
//! `NAME.bin` is the concatenation of the sections, little-endian:
//!
//! - `poses` (f32, frames × bodies × 7): `px py pz qw qx qy qz` of every body at every frame,
//!   world frame (m), the columns of `trajectory.csv`;
//! - `contact_offsets` (u32, frames + 1) and `contacts` (f32, 6 per arrow): the arrows of frame
//!   `k` are `contact_offsets[k] .. contact_offsets[k+1]`, each the contact point (m) and the
//!   force on body B (N), world frame: every point contact of the step that ends at the frame,
//!   and the total force of every pressure-field patch at its centroid;
//! - `polygon_offsets` (u32, frames + 1), `polygon_vertex_offsets` (u32, polygons + 1),
//!   `polygon_pressures` (f32, polygons; `f_n/A`, Pa) and `polygon_vertices` (f32, 3 per
//!   vertex, m): the pressure-field contact polygons of the step that ends at the frame,
//!   clipped at its start (as in `patch_geometry.csv`);
//! - `markers` (f32, frames × markers × 3): marker positions (m), NaN where a marker has none.
//!
//! Frame 0 (the initial state) has no contacts: contacts belong to the step that ends at a
//! frame.

use std::io::Write;
use std::path::{Path, PathBuf};

use nalgebra::{UnitQuaternion, Vector3};
use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::geometry::mesh::surface_mesh;
use crate::geometry::Shape;
use crate::multibody::model::BodyId;
use crate::multibody::JointKind;
use crate::report::csv::write_file;
use crate::report::{body_names, BodyStateTracker};
use crate::simulate::Recording;
use crate::step::Simulator;

/// Folder of the replay inside a run's output folder.
pub const REPLAY_DIR: &str = "replay";
/// The page of a replay folder.
pub const PAGE: &str = "replay.html";
/// The list of recordings of a replay folder.
pub const RECORDINGS: &str = "recordings.json";
/// Version of the recording format written here.
pub const FORMAT_VERSION: u32 = 1;
/// Environment variable naming the folder of an installed `three` npm package, replacing
/// the checkout's `viewer/node_modules/three`.
pub const THREE_JS_ENV: &str = "STICTION_THREE_JS";

/// The page and its script, compiled in from `viewer/`.
const PAGE_HTML: &str = include_str!("../../viewer/replay.html");
const PAGE_JS: &str = include_str!("../../viewer/replay.js");

/// The files of the `three` package a replay needs: (path in the package, path in the
/// replay folder).
const THREE_FILES: [(&str, &str); 3] = [
    ("build/three.module.js", "three/three.module.js"),
    ("build/three.core.js", "three/three.core.js"),
    (
        "examples/jsm/controls/OrbitControls.js",
        "three/addons/controls/OrbitControls.js",
    ),
];

/// Body colours (Tableau 10), in body order, repeating.
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#17becf",
];
/// Marker colours, in marker order, repeating: apart from the body colours.
const MARKER_PALETTE: [&str; 4] = ["#111111", "#e377c2", "#bcbd22", "#8c564b"];
/// Colour of prescribed bodies (conveyor belts, moving walls).
const PRESCRIBED_COLOUR: &str = "#8c8c8c";

/// How a recording is sampled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReplaySettings {
    /// Most frames written (default 600); states are picked evenly in time, the first and
    /// the last always.
    pub max_frames: usize,
}

impl Default for ReplaySettings {
    fn default() -> Self {
        ReplaySettings { max_frames: 600 }
    }
}

/// A fixed point to show: an optimizer's target.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// What it is, e.g. `ball at t = 1.5 s`.
    pub label: String,
    /// Position, world frame (m).
    pub position: Vector3<f64>,
    /// Radius of the sphere drawn around it (m): the tolerance.
    pub radius: f64,
    /// Time at which it should be reached (s), if one.
    pub time: Option<f64>,
}

/// A moving point to show, e.g. a measured body position.
#[derive(Clone, Debug, PartialEq)]
pub struct Marker {
    /// What it is, e.g. `box (measured)`.
    pub label: String,
    /// Positions (m, world) at the times `times`, sorted by time.
    pub samples: Vec<(f64, Vector3<f64>)>,
}

impl Marker {
    /// The sample nearest to time `t` (s) if it lies within `tolerance` (s).
    fn at(&self, t: f64, tolerance: f64) -> Option<Vector3<f64>> {
        let i = self.samples.partition_point(|(s, _)| *s < t);
        [i.checked_sub(1), Some(i)]
            .into_iter()
            .flatten()
            .filter_map(|j| self.samples.get(j))
            .filter(|(s, _)| (s - t).abs() <= tolerance)
            .min_by(|a, b| (a.0 - t).abs().total_cmp(&(b.0 - t).abs()))
            .map(|(_, p)| *p)
    }
}

/// One recording of a replay: a rollout of a scene with what to show besides it.
pub struct ReplayRecording<'a> {
    /// File stem of its `NAME.json` and `NAME.bin` (letters, digits, `-` and `_`).
    pub name: String,
    /// Title shown above the scene.
    pub title: String,
    /// The scene (model, geometry); the rollout's simulator.
    pub sim: &'a Simulator,
    /// The rollout.
    pub recording: &'a Recording,
    /// Fixed points.
    pub targets: Vec<Target>,
    /// Moving points.
    pub markers: Vec<Marker>,
}

/// The arrows and polygons of one frame.
#[derive(Default)]
struct FrameContacts {
    /// (point, force on B), world (m, N).
    arrows: Vec<(Vector3<f64>, Vector3<f64>)>,
    /// (vertices, pressure), world (m, Pa).
    polygons: Vec<(Vec<Vector3<f64>>, f64)>,
}

/// The indices of the states shown: at most `max_frames` (≥ 2 when there are 2 states),
/// evenly spaced, first and last included.
fn frame_indices(num_states: usize, max_frames: usize) -> Vec<usize> {
    let n = max_frames.max(2).min(num_states);
    if n <= 1 {
        return (0..num_states).collect();
    }
    (0..n)
        .map(|i| (i * (num_states - 1) + (n - 1) / 2) / (n - 1))
        .collect()
}

/// The contacts of the step that ends at state `k` (none at `k = 0`).
fn frame_contacts(recording: &Recording, sim: &Simulator, k: usize) -> Result<FrameContacts> {
    let mut frame = FrameContacts::default();
    if k == 0 {
        return Ok(frame);
    }
    let report = &recording.reports[k - 1];
    let vertices = sim.polygon_vertices(&recording.states[k - 1], &report.contacts)?;
    for (c, vertices) in report.contacts.iter().zip(vertices) {
        match &c.polygon {
            None => frame.arrows.push((c.point, c.force)),
            Some(p) => frame.polygons.push((vertices, c.normal_force / p.area)),
        }
    }
    frame
        .arrows
        .extend(report.patches.iter().map(|p| (p.centroid, p.force)));
    Ok(frame)
}

/// The shape as the header's `shape` object.
fn shape_json(shape: &Shape) -> Result<Value> {
    Ok(match shape {
        Shape::Sphere { radius } => json!({"type": "sphere", "radius": radius}),
        Shape::Box { half_extents } => {
            json!({"type": "box", "half_extents": half_extents.as_slice()})
        }
        Shape::Capsule {
            radius,
            half_length,
        } => json!({"type": "capsule", "radius": radius, "half_length": half_length}),
        Shape::Cylinder {
            radius,
            half_length,
        } => json!({"type": "cylinder", "radius": radius, "half_length": half_length}),
        Shape::HalfSpace => json!({"type": "half-space"}),
        Shape::Ellipsoid { semi_axes } => {
            json!({"type": "ellipsoid", "semi_axes": semi_axes.as_slice()})
        }
        Shape::ConvexMesh { vertices } => {
            // The hull's faces; the hint only subdivides faces, so take it as large as the
            // mesh to keep them whole.
            let size = vertices.iter().map(|v| v.norm()).fold(0.0, f64::max);
            let mesh = surface_mesh(shape, 4.0 * size.max(1e-6))?;
            let xyz: Vec<f64> = mesh.vertices.iter().flat_map(|v| [v.x, v.y, v.z]).collect();
            let ijk: Vec<u32> = mesh.triangles.iter().flatten().copied().collect();
            json!({"type": "mesh", "vertices": xyz, "triangles": ijk})
        }
    })
}

/// The sections of `NAME.bin` as they are appended, with their index for the header.
#[derive(Default)]
struct Sections {
    bytes: Vec<u8>,
    index: serde_json::Map<String, Value>,
}

impl Sections {
    fn f32(&mut self, name: &str, values: impl IntoIterator<Item = f64>) {
        let offset = self.bytes.len();
        let mut count = 0;
        for x in values {
            // f32 is the page's precision (WebGL draws in f32).
            self.bytes.extend_from_slice(&(x as f32).to_le_bytes());
            count += 1;
        }
        self.entry(name, "f32", offset, count);
    }

    fn u32(&mut self, name: &str, values: impl IntoIterator<Item = usize>) -> Result<()> {
        let offset = self.bytes.len();
        let mut count = 0;
        for x in values {
            let x = u32::try_from(x).map_err(|_| {
                Error::invalid(name, x, "the replay indexes its arrays with 32-bit offsets")
            })?;
            self.bytes.extend_from_slice(&x.to_le_bytes());
            count += 1;
        }
        self.entry(name, "u32", offset, count);
        Ok(())
    }

    fn entry(&mut self, name: &str, kind: &str, offset: usize, count: usize) {
        self.index.insert(
            name.to_string(),
            json!({"type": kind, "offset": offset, "count": count}),
        );
    }
}

/// Writes `dir/NAME.json` and `dir/NAME.bin` (format in the module docs) into the existing
/// folder `dir`; returns their paths.
///
/// # Errors
/// [`Error::InvalidParameter`] for a name that is not a plain file stem, an empty recording
/// or a degenerate convex mesh; [`Error::Io`] naming the file that could not be written; as
/// [`Simulator::polygon_vertices`].
pub fn write_recording(
    dir: &Path,
    replay: &ReplayRecording,
    settings: &ReplaySettings,
) -> Result<[PathBuf; 2]> {
    check_name(&replay.name)?;
    let (sim, recording) = (replay.sim, replay.recording);
    if recording.states.is_empty() {
        return Err(Error::invalid(
            "recording",
            0,
            "a replay needs at least the initial state",
        ));
    }
    let model = &sim.model;
    let frames = frame_indices(recording.states.len(), settings.max_frames);
    let times: Vec<f64> = frames.iter().map(|&k| recording.states[k].t).collect();
    let names = body_names(model);
    let bodies: Vec<Value> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let colour = if i < model.bodies.len() {
                PALETTE[i % PALETTE.len()]
            } else {
                PRESCRIBED_COLOUR
            };
            let parent = model
                .joints
                .get(i)
                .filter(|j| !matches!(j.kind, JointKind::Free))
                .and_then(|j| j.parent);
            json!({"name": name, "colour": colour, "parent": parent})
        })
        .collect();
    let nb = model.bodies.len();
    let geometries = sim
        .geometries()
        .iter()
        .map(|g| {
            let body = match g.body {
                BodyId::World => None,
                BodyId::Body(i) => Some(i),
                BodyId::Prescribed(i) => Some(nb + i),
            };
            let q = UnitQuaternion::from_matrix(&g.X_BG.R);
            Ok(json!({
                "name": g.name,
                "body": body,
                "p_BG": g.X_BG.p.as_slice(),
                "q_BG": [q.w, q.i, q.j, q.k],
                "shape": shape_json(&g.shape)?,
            }))
        })
        .collect::<Result<Vec<Value>>>()?;

    let mut sections = Sections::default();
    let mut tracker = BodyStateTracker::new(model);
    let poses: Vec<f64> = frames
        .iter()
        .flat_map(|&k| tracker.next(model, &recording.states[k]))
        .flat_map(|b| {
            let q = b.q_WB.quaternion();
            [b.p_WB.x, b.p_WB.y, b.p_WB.z, q.w, q.i, q.j, q.k]
        })
        .collect();
    let size = scene_size(&poses, &replay.targets);
    sections.f32("poses", poses);

    let contacts = frames
        .iter()
        .map(|&k| frame_contacts(recording, sim, k))
        .collect::<Result<Vec<FrameContacts>>>()?;
    sections.u32(
        "contact_offsets",
        offsets(contacts.iter().map(|f| f.arrows.len())),
    )?;
    sections.f32(
        "contacts",
        contacts
            .iter()
            .flat_map(|f| &f.arrows)
            .flat_map(|(p, f)| [p.x, p.y, p.z, f.x, f.y, f.z]),
    );
    let polygons: Vec<&(Vec<Vector3<f64>>, f64)> =
        contacts.iter().flat_map(|f| &f.polygons).collect();
    sections.u32(
        "polygon_offsets",
        offsets(contacts.iter().map(|f| f.polygons.len())),
    )?;
    sections.u32(
        "polygon_vertex_offsets",
        offsets(polygons.iter().map(|p| p.0.len())),
    )?;
    sections.f32("polygon_pressures", polygons.iter().map(|p| p.1));
    sections.f32(
        "polygon_vertices",
        polygons
            .iter()
            .flat_map(|p| &p.0)
            .flat_map(|v| [v.x, v.y, v.z]),
    );
    let dt = sim.settings.dt;
    sections.f32(
        "markers",
        times.iter().flat_map(|&t| {
            replay.markers.iter().flat_map(move |m| {
                let p = m.at(t, 0.5 * dt).unwrap_or(Vector3::repeat(f64::NAN));
                [p.x, p.y, p.z]
            })
        }),
    );

    let pressure_max = polygons.iter().map(|p| p.1).fold(0.0, f64::max);
    let force_reference = super::reference_force(recording);
    let header = json!({
        "format": "stiction-replay",
        "version": FORMAT_VERSION,
        "title": replay.title,
        "times": times,
        "bodies": bodies,
        "geometries": geometries,
        "force_scale": if force_reference > 0.0 { 0.15 * size / force_reference } else { 0.0 },
        "force_reference": force_reference,
        "pressure_max": pressure_max,
        "targets": replay.targets.iter().map(|t| json!({
            "label": t.label,
            "position": t.position.as_slice(),
            "radius": t.radius,
            "time": t.time,
        })).collect::<Vec<_>>(),
        "markers": replay.markers.iter().enumerate().map(|(i, m)| json!({
            "label": m.label,
            "colour": MARKER_PALETTE[i % MARKER_PALETTE.len()],
        })).collect::<Vec<_>>(),
        "sections": Value::Object(sections.index),
    });
    let json_path = write_file(dir, &format!("{}.json", replay.name), |w| {
        serde_json::to_writer(&mut *w, &header).map_err(std::io::Error::other)?;
        writeln!(w)
    })?;
    let bin_path = write_file(dir, &format!("{}.bin", replay.name), |w| {
        w.write_all(&sections.bytes)
    })?;
    Ok([json_path, bin_path])
}

/// The extent of the bodies' motion and of the targets (m, at least 0.1): the largest side
/// of the box around every body origin at every frame (`poses`, 7 numbers per body and frame)
/// and every target, for the arrow scale.
fn scene_size(poses: &[f64], targets: &[Target]) -> f64 {
    let mut lo = Vector3::repeat(f64::INFINITY);
    let mut hi = Vector3::repeat(f64::NEG_INFINITY);
    let points = poses
        .chunks_exact(7)
        .map(|c| Vector3::new(c[0], c[1], c[2]))
        .chain(targets.iter().map(|t| t.position));
    for p in points {
        lo = lo.inf(&p);
        hi = hi.sup(&p);
    }
    let span = (hi - lo).max();
    if span.is_finite() {
        span.max(0.1)
    } else {
        0.1
    }
}

/// Prefix offsets `0, n0, n0 + n1, …` of `counts` (counts + 1 numbers).
fn offsets(counts: impl Iterator<Item = usize>) -> Vec<usize> {
    std::iter::once(0)
        .chain(counts.scan(0, |sum, n| {
            *sum += n;
            Some(*sum)
        }))
        .collect()
}

/// A recording's name: a plain file stem.
fn check_name(name: &str) -> Result<()> {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if plain {
        Ok(())
    } else {
        Err(Error::invalid(
            "recording name",
            name,
            "letters, digits, '-' and '_' only (it names the recording's files)",
        ))
    }
}

/// The folder of the `three` npm package to copy into replays: `$STICTION_THREE_JS` if set,
/// else `viewer/node_modules/three` of the source checkout this library was built from (put
/// there by `scripts/viewer/setup.sh`).
///
/// # Errors
/// [`Error::Io`] naming the folder, with the command that installs it, when it does not hold
/// the files a replay needs.
pub fn three_js_dir() -> Result<PathBuf> {
    match std::env::var_os(THREE_JS_ENV) {
        Some(dir) => checked_three_js(PathBuf::from(dir), &format!("${THREE_JS_ENV}")),
        None => checked_three_js(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("viewer/node_modules/three"),
            "the checkout's viewer/node_modules",
        ),
    }
}

/// `dir` if it holds the files of [`THREE_FILES`]; `how` says where it came from.
fn checked_three_js(dir: PathBuf, how: &str) -> Result<PathBuf> {
    match THREE_FILES
        .iter()
        .find(|(from, _)| !dir.join(from).is_file())
    {
        None => Ok(dir),
        Some((missing, _)) => Err(Error::Io {
            path: dir.clone(),
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!(
                    "three.js for the 3-D replay is not installed in {how} ({missing} is \
                     missing). Run scripts/viewer/setup.sh in the stiction checkout (npm ci in \
                     viewer/), or set {THREE_JS_ENV} to the folder of an installed `three` npm \
                     package"
                ),
            ),
        }),
    }
}

/// Writes the page into the existing folder `dir`: `replay.html`, `replay.js`, the three.js
/// files copied from the package folder `three` ([`three_js_dir`]) and [`RECORDINGS`]
/// listing `recordings` as `(name, title)`. Returns the files written.
///
/// # Errors
/// [`Error::Io`] naming the file that could not be read or written.
pub fn write_page(dir: &Path, three: &Path, recordings: &[(&str, &str)]) -> Result<Vec<PathBuf>> {
    let mut written = vec![
        write_file(dir, PAGE, |w| w.write_all(PAGE_HTML.as_bytes()))?,
        write_file(dir, "replay.js", |w| w.write_all(PAGE_JS.as_bytes()))?,
    ];
    for (from, to) in THREE_FILES {
        let (from, to) = (three.join(from), dir.join(to));
        let io_error = |path: &Path| {
            let path = path.to_path_buf();
            move |source| Error::Io { path, source }
        };
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(io_error(parent))?;
        }
        std::fs::copy(&from, &to).map_err(io_error(&from))?;
        written.push(to);
    }
    let list: Vec<Value> = recordings
        .iter()
        .map(|(name, title)| json!({"name": name, "title": title}))
        .collect();
    written.push(write_file(dir, RECORDINGS, |w| {
        serde_json::to_writer_pretty(&mut *w, &list).map_err(std::io::Error::other)?;
        writeln!(w)
    })?);
    Ok(written)
}

/// Writes a whole replay folder: `dir` is created if missing, then every recording
/// ([`write_recording`]) and the page ([`write_page`]) with three.js from `three`. Returns
/// the files written.
///
/// # Errors
/// As [`write_recording`] and [`write_page`]; [`Error::Io`] if `dir` cannot be created.
pub fn write_replay(
    dir: &Path,
    three: &Path,
    recordings: &[ReplayRecording],
    settings: &ReplaySettings,
) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut written = Vec::new();
    for r in recordings {
        written.extend(write_recording(dir, r, settings)?);
    }
    let list: Vec<(&str, &str)> = recordings
        .iter()
        .map(|r| (r.name.as_str(), r.title.as_str()))
        .collect();
    written.extend(write_page(dir, three, &list)?);
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::parse_problem;
    use crate::report::body_states;
    use crate::simulate::run;

    /// A sphere dropped onto a belt moving at 0.1 m/s: one tree body, one prescribed body,
    /// point contact once it lands.
    const SPHERE_ON_BELT: &str = r#"
        description = "sphere on a moving belt"
        [simulation]
        dt = 1e-3
        duration = 0.06
        [contact]
        friction = 0.5
        stiffness = 1e6
        [[body]]
        name = "belt"
        prescribed = { type = "constant-velocity", velocity = [0.1, 0.0, 0.0] }
        [[body]]
        name = "ball"
        mass = 0.5
        position = [0.0, 0.0, 0.06]
        rpy_deg = [10.0, 20.0, 30.0]
        [[geometry]]
        name = "ball"
        body = "ball"
        shape = "sphere"
        radius = 0.05
        [[geometry]]
        name = "belt"
        body = "belt"
        shape = "half-space"
        [[geometry]]
        name = "post"
        body = "world"
        shape = "box"
        size = [0.1, 0.2, 0.3]
        position = [1.0, 0.0, 0.15]
    "#;

    /// A fresh, empty folder under the system temp dir, unique per test and process.
    fn temp_folder(test: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("stiction-replay-{}-{test}", std::process::id()));
        // A leftover from an aborted run of the same process id is stale.
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// The recording read back by the documented format alone: the header and the sections
    /// of `NAME.bin` as f64 (f32 sections) or usize (u32 sections).
    struct ReadBack {
        header: Value,
        bin: Vec<u8>,
    }

    impl ReadBack {
        fn read(dir: &Path, name: &str) -> Self {
            let text = std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap();
            ReadBack {
                header: serde_json::from_str(&text).unwrap(),
                bin: std::fs::read(dir.join(format!("{name}.bin"))).unwrap(),
            }
        }

        fn words(&self, name: &str, kind: &str) -> Vec<[u8; 4]> {
            let s = &self.header["sections"][name];
            assert_eq!(s["type"], kind, "{name}");
            let offset = s["offset"].as_u64().unwrap() as usize;
            let count = s["count"].as_u64().unwrap() as usize;
            assert_eq!(offset % 4, 0, "{name} is aligned");
            self.bin[offset..offset + 4 * count]
                .chunks_exact(4)
                .map(|c| c.try_into().unwrap())
                .collect()
        }

        fn f32s(&self, name: &str) -> Vec<f64> {
            self.words(name, "f32")
                .into_iter()
                .map(|w| f64::from(f32::from_le_bytes(w)))
                .collect()
        }

        fn u32s(&self, name: &str) -> Vec<usize> {
            self.words(name, "u32")
                .into_iter()
                .map(|w| u32::from_le_bytes(w) as usize)
                .collect()
        }
    }

    /// `x` as the replay stores it (f32), back in f64.
    fn stored(x: f64) -> f64 {
        f64::from(x as f32)
    }

    #[test]
    fn recording_round_trips_poses_contacts_and_geometry() {
        let mut problem = parse_problem(SPHERE_ON_BELT, Path::new("sphere-on-belt.toml")).unwrap();
        let rec = run(
            &mut problem.simulator,
            &problem.initial_state,
            problem.duration,
            |_, _| {},
        )
        .unwrap();
        assert_eq!(rec.states.len(), 61);
        let dir = temp_folder("round-trip");
        let sim = &problem.simulator;
        let replay = ReplayRecording {
            name: "rollout".into(),
            title: "sphere on a belt".into(),
            sim,
            recording: &rec,
            targets: vec![Target {
                label: "goal".into(),
                position: Vector3::new(0.5, 0.0, 0.05),
                radius: 0.01,
                time: Some(0.05),
            }],
            markers: vec![Marker {
                label: "measured".into(),
                samples: vec![(0.0, Vector3::new(1.0, 2.0, 3.0))],
            }],
        };
        // 61 states shown as 21 frames: every third state.
        let settings = ReplaySettings { max_frames: 21 };
        write_recording(&dir, &replay, &settings).unwrap();
        let back = ReadBack::read(&dir, "rollout");
        let h = &back.header;
        assert_eq!(h["format"], "stiction-replay");
        assert_eq!(h["version"], FORMAT_VERSION);
        let frames: Vec<usize> = (0..21).map(|i| 3 * i).collect();
        let times: Vec<f64> = h["times"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_f64().unwrap())
            .collect();
        // Shortest round-trip text; serde_json's reader (without `float_roundtrip`) may be
        // one ulp off.
        assert_eq!(times.len(), frames.len());
        for (t, &k) in times.iter().zip(&frames) {
            assert!((t - rec.states[k].t).abs() <= 1e-16, "{t}");
        }

        // Bodies in the order of trajectory.csv, the prescribed belt grey.
        assert_eq!(h["bodies"][0]["name"], "ball");
        assert_eq!(h["bodies"][1]["name"], "belt");
        assert_eq!(h["bodies"][1]["colour"], PRESCRIBED_COLOUR);
        assert_eq!(
            h["bodies"][0]["parent"],
            Value::Null,
            "a free body has no link"
        );

        // Poses: every body at every frame, as body_states gives them, to f32 precision.
        let states = body_states(&rec, &sim.model);
        let poses = back.f32s("poses");
        assert_eq!(poses.len(), 21 * 2 * 7);
        for (f, &k) in frames.iter().enumerate() {
            for (b, state) in states[k].iter().enumerate() {
                let q = state.q_WB.quaternion();
                let want =
                    [state.p_WB.x, state.p_WB.y, state.p_WB.z, q.w, q.i, q.j, q.k].map(stored);
                assert_eq!(poses[(f * 2 + b) * 7..][..7], want, "frame {f}, body {b}");
            }
        }
        // The belt moves at 0.1 m/s: its x at the last frame is 0.1 · 0.06 m.
        assert!((poses[(20 * 2 + 1) * 7] - 0.006).abs() < 1e-7);

        // Contacts: frame f shows the point contacts of the step that ends at its state.
        let offsets = back.u32s("contact_offsets");
        let arrows = back.f32s("contacts");
        assert_eq!(offsets.len(), 22);
        assert_eq!(offsets[0..2], [0, 0], "the initial state has no contacts");
        assert_eq!(*offsets.last().unwrap(), arrows.len() / 6);
        for (f, &k) in frames.iter().enumerate().skip(1) {
            let contacts = &rec.reports[k - 1].contacts;
            assert_eq!(offsets[f + 1] - offsets[f], contacts.len(), "frame {f}");
            for (i, c) in contacts.iter().enumerate() {
                let a = &arrows[6 * (offsets[f] + i)..][..6];
                let want = [
                    c.point.x, c.point.y, c.point.z, c.force.x, c.force.y, c.force.z,
                ];
                assert_eq!(a, want.map(stored), "frame {f}, contact {i}");
            }
        }
        assert!(
            offsets[21] > 0,
            "the ball lands on the belt within 0.06 s (drops 1 cm)"
        );
        assert!(h["force_scale"].as_f64().unwrap() > 0.0);
        // No pressure-field pairs: empty polygon sections.
        assert_eq!(back.u32s("polygon_offsets"), vec![0; 22]);
        assert_eq!(back.u32s("polygon_vertex_offsets"), vec![0]);
        assert!(back.f32s("polygon_vertices").is_empty());
        assert_eq!(h["pressure_max"], 0.0);

        // Geometry: shapes with their sizes and bodies (null: the world).
        let g = &h["geometries"];
        assert_eq!(g[0]["shape"], json!({"type": "sphere", "radius": 0.05}));
        assert_eq!(g[0]["body"], 0);
        assert_eq!(g[1]["shape"]["type"], "half-space");
        assert_eq!(g[1]["body"], 1);
        assert_eq!(
            g[2]["shape"],
            json!({"type": "box", "half_extents": [0.05, 0.1, 0.15]})
        );
        assert_eq!(g[2]["body"], Value::Null);
        assert_eq!(g[2]["p_BG"], json!([1.0, 0.0, 0.15]));

        // Targets as given; the marker only at t = 0 (its one sample), NaN elsewhere.
        assert_eq!(h["targets"][0]["position"], json!([0.5, 0.0, 0.05]));
        assert_eq!(h["targets"][0]["time"], 0.05);
        let markers = back.f32s("markers");
        assert_eq!(markers.len(), 21 * 3);
        assert_eq!(markers[..3], [1.0, 2.0, 3.0]);
        assert!(markers[3..].iter().all(|x| x.is_nan()));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn pressure_field_polygons_carry_their_pressure() {
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/compliant-ball-rest.toml"),
        )
        .unwrap();
        let mut problem = parse_problem(&text, Path::new("compliant-ball-rest.toml")).unwrap();
        let rec = run(
            &mut problem.simulator,
            &problem.initial_state,
            0.005,
            |_, _| {},
        )
        .unwrap();
        let dir = temp_folder("polygons");
        let replay = ReplayRecording {
            name: "ball".into(),
            title: "ball".into(),
            sim: &problem.simulator,
            recording: &rec,
            targets: Vec::new(),
            markers: Vec::new(),
        };
        write_recording(&dir, &replay, &ReplaySettings::default()).unwrap();
        let back = ReadBack::read(&dir, "ball");
        let frames = rec.states.len();
        let polygon_offsets = back.u32s("polygon_offsets");
        let vertex_offsets = back.u32s("polygon_vertex_offsets");
        let pressures = back.f32s("polygon_pressures");
        let vertices = back.f32s("polygon_vertices");
        assert_eq!(polygon_offsets.len(), frames + 1);
        // The last frame: its step's polygons, each with f_n / A.
        let report = rec.reports.last().unwrap();
        let polygons: Vec<_> = report
            .contacts
            .iter()
            .filter_map(|c| c.polygon.as_ref().map(|p| c.normal_force / p.area))
            .collect();
        assert!(
            polygons.len() >= 4,
            "the ball rests on a patch: {} polygons",
            polygons.len()
        );
        let last = polygon_offsets[frames - 1]..polygon_offsets[frames];
        assert_eq!(
            pressures[last.clone()],
            polygons.iter().map(|p| stored(*p)).collect::<Vec<_>>()[..]
        );
        // Every state is a frame here: the largest pressure of the whole rollout.
        let p_max = back.header["pressure_max"].as_f64().unwrap();
        let expected = rec
            .reports
            .iter()
            .flat_map(|r| &r.contacts)
            .filter_map(|c| c.polygon.as_ref().map(|p| c.normal_force / p.area))
            .fold(0.0, f64::max);
        assert!(
            (p_max - expected).abs() <= 1e-15 * expected,
            "{p_max} vs {expected}"
        );
        // Every polygon has at least 3 vertices, on the ground plane z = 0 (rigid ground).
        for p in last {
            assert!(vertex_offsets[p + 1] - vertex_offsets[p] >= 3);
            for v in vertex_offsets[p]..vertex_offsets[p + 1] {
                assert!(
                    vertices[3 * v + 2].abs() < 1e-6,
                    "z = {}",
                    vertices[3 * v + 2]
                );
            }
        }
        // The patch's total force is an arrow at its centroid.
        let offsets = back.u32s("contact_offsets");
        assert_eq!(offsets[frames] - offsets[frames - 1], report.patches.len());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn frames_are_spread_evenly_with_both_ends() {
        assert_eq!(frame_indices(1, 600), vec![0]);
        assert_eq!(frame_indices(5, 600), vec![0, 1, 2, 3, 4]);
        let picked = frame_indices(1501, 600);
        assert_eq!(picked.len(), 600);
        assert_eq!((picked[0], picked[599]), (0, 1500));
        assert!(picked.windows(2).all(|w| w[1] > w[0] && w[1] - w[0] <= 3));
    }

    #[test]
    fn names_that_are_not_file_stems_are_refused() {
        assert!(check_name("fit-1_a").is_ok());
        for bad in ["", "../x", "a b", "a/b"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn missing_three_js_names_the_setup_script() {
        let dir = temp_folder("no-three");
        let message = checked_three_js(dir.clone(), "$STICTION_THREE_JS")
            .unwrap_err()
            .to_string();
        assert!(message.contains("scripts/viewer/setup.sh"), "{message}");
        assert!(message.contains("build/three.module.js"), "{message}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_marker_shows_its_nearest_sample_within_the_tolerance() {
        let m = Marker {
            label: "m".into(),
            samples: vec![
                (0.0, Vector3::x()),
                (0.01, Vector3::y()),
                (0.02, Vector3::z()),
            ],
        };
        assert_eq!(m.at(0.0105, 0.001), Some(Vector3::y()));
        assert_eq!(m.at(0.0195, 0.001), Some(Vector3::z()));
        assert_eq!(m.at(0.005, 0.001), None);
        assert_eq!(m.at(0.5, 0.001), None);
    }
}
