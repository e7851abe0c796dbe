//! Every figure of every shipped problem, rendered from a short rollout and checked for
//! drawing outside its panel: each figure is one band per panel (the title with the first),
//! separated by the blank rows of the panels' margins (12 px each side), with blank columns at
//! both sides. plotters clips drawing to a panel's area, so what does not fit (a legend taller
//! than its panel, a curve outside its chart) ends in the panel's margin and joins its band
//! with the next.

use std::path::{Path, PathBuf};

use stiction::multibody::JointKind;
use stiction::problem::{load_problem, Problem, Stepper};
use stiction::report::plot::{write_ncp_plots, write_plots, ImageFormat};
use stiction::simulate::run_controlled;

/// Rollouts are cut to this long (s): enough for the first contacts of every scene.
const DURATION: f64 = 0.5;

/// Rows (px) of background that separate the bands: two panel margins of 12 px, less a
/// little for anti-aliasing (within a panel, blank runs stay below 16 px).
const SEPARATOR_ROWS: usize = 20;

/// The figures and their number of panels.
const FIGURES: [(&str, usize); 5] = [
    ("contact_velocity", 2),
    ("contact_force", 2),
    ("positions", 2),
    ("velocities", 3),
    ("solver", 4),
];

/// An RGB image.
struct Image {
    width: usize,
    height: usize,
    rgb: Vec<u8>,
}

impl Image {
    fn read(path: &Path) -> Image {
        let decoder = png::Decoder::new(std::fs::File::open(path).unwrap());
        let mut reader = decoder.read_info().unwrap();
        let mut rgb = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut rgb).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb, "{}", path.display());
        rgb.truncate(info.buffer_size());
        Image {
            width: info.width as usize,
            height: info.height as usize,
            rgb,
        }
    }

    fn white(&self, x: usize, y: usize) -> bool {
        let i = 3 * (y * self.width + x);
        self.rgb[i..i + 3] == [255, 255, 255]
    }

    fn blank_row(&self, y: usize) -> bool {
        (0..self.width).all(|x| self.white(x, y))
    }

    /// Heights of the bands of drawn rows separated by at least [`SEPARATOR_ROWS`] blank rows.
    fn bands(&self) -> Vec<usize> {
        let mut bands = Vec::new();
        let (mut start, mut blank) = (None, 0);
        for y in 0..self.height {
            if self.blank_row(y) {
                blank += 1;
                if blank == SEPARATOR_ROWS {
                    if let Some(s) = start.take() {
                        bands.push(y + 1 - SEPARATOR_ROWS - s);
                    }
                }
            } else {
                if start.is_none() {
                    start = Some(y);
                }
                blank = 0;
            }
        }
        if let Some(s) = start {
            bands.push(self.height - blank - s);
        }
        bands
    }
}

/// The bands of `image`, without the title's when the title stands apart (under 60 px).
fn panel_bands(image: &Image) -> Vec<usize> {
    let mut bands = image.bands();
    if bands.first().is_some_and(|&h| h < 60) {
        bands.remove(0);
    }
    bands
}

/// Asserts the band structure of `figure` (`panels` panels) in `dir`.
fn check(dir: &Path, figure: &str, panels: usize, problem: &str) {
    let path = dir.join(format!("{figure}.png"));
    let image = Image::read(&path);
    let what = format!("{problem}: {figure}");
    for y in 0..image.height {
        for x in (0..3).chain(image.width - 3..image.width) {
            assert!(
                image.white(x, y),
                "{what}: drawn in the side margin at ({x}, {y})"
            );
        }
    }
    let bands = panel_bands(&image);
    let panel = (image.height - 60) / panels;
    assert_eq!(bands.len(), panels, "{what}: bands {bands:?}");
    for &h in &bands {
        assert!(
            h > panel / 2 && h < panel + 60,
            "{what}: a panel band of {h} px in {panel} px: {bands:?}"
        );
    }
}

fn shipped() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("problems"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
    files.sort();
    files
}

/// The shipped problem at `path`, or `None` for one that needs a robot package that is not
/// installed (`scripts/robots/setup.sh`; the robot tests check those).
fn load(path: &Path) -> Option<Problem> {
    match load_problem(path) {
        Ok(p) => Some(p),
        Err(e)
            if std::env::var_os("STICTION_PACKAGE_PATH").is_none()
                && e.to_string().contains("STICTION_PACKAGE_PATH") =>
        {
            eprintln!("{}: skipped, needs a robot package ({e})", path.display());
            None
        }
        Err(e) => panic!("{}: {e}", path.display()),
    }
}

#[test]
fn every_figure_of_every_shipped_problem_stays_in_its_panels() {
    let root = std::env::temp_dir().join(format!("stiction-plots-{}", std::process::id()));
    let (mut checked, mut joint_figures) = (0, 0);
    for path in shipped() {
        let Some(mut problem) = load(&path) else {
            continue;
        };
        let dir = root.join(&problem.name);
        std::fs::create_dir_all(&dir).unwrap();
        let duration = problem.duration.min(DURATION);
        match problem.stepper {
            Stepper::Convex => {
                let recording = run_controlled(
                    &mut problem.simulator,
                    &problem.controller,
                    &problem.initial_state,
                    duration,
                    |_, _| {},
                )
                .unwrap_or_else(|e| panic!("{}: {e}", problem.name));
                write_plots(
                    &recording,
                    &problem.simulator,
                    &problem.name,
                    &dir,
                    &[ImageFormat::Png],
                )
                .unwrap();
            }
            Stepper::Ncp => {
                let mut sim = problem.ncp_simulator().unwrap();
                let recording =
                    stiction::ncp::run(&mut sim, &problem.initial_state, duration, |_, _| {})
                        .unwrap_or_else(|e| panic!("{}: {e}", problem.name));
                write_ncp_plots(
                    &recording,
                    &problem.simulator,
                    (&problem.name, sim.settings.dt),
                    &dir,
                    &[ImageFormat::Png],
                )
                .unwrap();
            }
        }
        for (figure, panels) in FIGURES {
            // The ncp solver figure has no condition-estimate panel.
            let panels = if figure == "solver" && problem.stepper == Stepper::Ncp {
                3
            } else {
                panels
            };
            check(&dir, figure, panels, &problem.name);
        }
        // Articulated scenes add the joint coordinates: angles and positions, a panel each.
        let kinds = |revolute: bool| {
            problem.simulator.model.joints.iter().any(|j| match j.kind {
                JointKind::Revolute { .. } => revolute,
                JointKind::Prismatic { .. } => !revolute,
                _ => false,
            })
        };
        let joint_panels = usize::from(kinds(true)) + usize::from(kinds(false));
        let convex = problem.stepper == Stepper::Convex;
        assert_eq!(
            dir.join("joints.png").exists(),
            convex && joint_panels > 0,
            "{}: joints.png",
            problem.name
        );
        if convex && joint_panels > 0 {
            check(&dir, "joints", joint_panels, &problem.name);
            joint_figures += 1;
        }
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} shipped problems rendered");
    assert!(joint_figures >= 2, "{joint_figures} scenes with joints");
    std::fs::remove_dir_all(&root).unwrap();
}

/// The band check fails for a figure whose panels run into each other, as a 40-entry
/// legend used to make them.
#[test]
fn the_band_check_sees_a_legend_across_two_panels() {
    let root = std::env::temp_dir().join(format!("stiction-plots-legend-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let path = root.join("joined.png");
    {
        use plotters::prelude::*;
        let area = BitMapBackend::new(&path, (400, 780)).into_drawing_area();
        area.fill(&WHITE).unwrap();
        let area = area.titled("t", ("sans-serif", 24)).unwrap();
        let panels = area.split_evenly((2, 1));
        for p in &panels {
            let (w, h) = p.dim_in_pixel();
            p.draw(&Rectangle::new(
                [(12, 12), (w as i32 - 12, h as i32 - 12)],
                BLACK.stroke_width(1),
            ))
            .unwrap();
        }
        // A legend taller than the first panel: clipped at its edge, through its margin.
        panels[0]
            .draw(&Rectangle::new([(300, 40), (370, 1000)], BLACK.filled()))
            .unwrap();
        area.present().unwrap();
    }
    let bands = panel_bands(&Image::read(&path));
    assert_eq!(bands.len(), 1, "one joined band: {bands:?}");
    std::fs::remove_dir_all(&root).unwrap();
}
