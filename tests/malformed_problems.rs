//! Malformed problem files: each error names the file, the line and column, the field, what
//! was expected and what was found, and no input panics the loader.
//!
//! Every case edits one line of a valid file (or replaces the whole text) and states the full
//! location and the fragments the message must contain.

use std::path::{Path, PathBuf};

use stiction::problem::load_problem;

/// A valid file with a free body, a revolute joint, three geometries and a PD actuator. Line
/// numbers in the cases below refer to this text.
const VALID: &str = r#"description = "a ball and a pendulum"

[simulation]
dt = 1e-3
duration = 0.1

[contact]
friction = 0.5

[[body]]
name = "ball"
mass = 1.0
position = [0.0, 0.0, 0.1]

[[body]]
name = "arm"
mass = 0.5
joint = "revolute"
axis = [0.0, 1.0, 0.0]
origin = [0.0, 0.0, 1.0]
q0 = [0.1]

[[geometry]]
name = "ball"
body = "ball"
shape = "sphere"
radius = 0.05

[[geometry]]
name = "arm"
body = "arm"
shape = "capsule"
radius = 0.02
length = 0.3
position = [0.0, 0.0, -0.2]

[[geometry]]
name = "ground"
shape = "half-space"

[[actuator]]
body = "arm"
effort_limit = 5.0
control = { type = "pd", kp = 10.0, kd = 1.0, position = 0.5 }
"#;

/// How a case makes its file from [`VALID`].
enum Edit {
    /// Replace the first occurrence of `.0` (which must occur) with `.1`.
    Replace(&'static str, &'static str),
    /// Use these bytes as the whole file.
    Whole(&'static [u8]),
}

/// One malformed file and what its error must say.
struct Case {
    name: &'static str,
    edit: Edit,
    /// `LINE:COLUMN`.
    at: &'static str,
    field: &'static str,
    expected: &'static str,
    found: &'static str,
}

const fn case(
    name: &'static str,
    edit: Edit,
    at: &'static str,
    field: &'static str,
    expected: &'static str,
    found: &'static str,
) -> Case {
    Case {
        name,
        edit,
        at,
        field,
        expected,
        found,
    }
}

use Edit::{Replace, Whole};

const CASES: &[Case] = &[
    // Not TOML at all.
    case("empty", Whole(b""), "1:1", "simulation", "a [simulation] table with `dt` and `duration` (required, see problems/README.md)", "nothing"),
    case("non_utf8", Whole(b"[simulation]\ndt = \xff\xfe\n"), "2:6", "(file)", "UTF-8 TOML text", "bytes that are not UTF-8"),
    case("binary", Whole(b"\x00\x01\x02PNG"), "1:1", "(syntax)", "valid TOML syntax", "invalid key"),
    case("unclosed_table", Replace("[simulation]", "[simulation"), "3:12", "(syntax)", "TOML syntax: `.`, `]`", "invalid table header"),
    case("duplicate_key", Replace("duration = 0.1", "duration = 0.1\nduration = 0.2"), "6:1", "(syntax)", "valid TOML syntax", "duplicate key `duration` in table `simulation`"),
    // Types.
    case("dt_string", Replace("dt = 1e-3", "dt = \"fast\""), "4:6", "simulation.dt", "a number", "string \"fast\""),
    case("mass_array", Replace("mass = 1.0", "mass = [1.0]"), "12:8", "body[0].mass", "a number", "an array"),
    case("position_short", Replace("position = [0.0, 0.0, 0.1]", "position = [0.0, 0.1]"), "13:12", "body[0].position", "an array of length 3", "an array of length 2"),
    case("position_long", Replace("position = [0.0, 0.0, 0.1]", "position = [0.0, 0.0, 0.05, 7.0]"), "13:12", "body[0].position", "an array of length 3", "an array of length 4"),
    case("position_long_junk", Replace("position = [0.0, 0.0, 0.1]", "position = [0.0, 0.0, 0.05, 7.0, \"junk\"]"), "13:34", "body[0].position[4]", "a number", "string \"junk\""),
    case("position_string_entry", Replace("position = [0.0, 0.0, 0.1]", "position = [0.0, \"up\", 0.1]"), "13:18", "body[0].position[1]", "a number", "string \"up\""),
    case("name_number", Replace("name = \"ball\"", "name = 3"), "11:8", "body[0].name", "a string", "integer `3`"),
    case("max_iterations_negative", Replace("[contact]", "[solver]\nmax_iterations = -3\n\n[contact]"), "8:18", "solver.max_iterations", "an integer ≥ 0", "integer `-3`"),
    case("body_not_array", Replace("[[body]]\nname = \"ball\"", "[body]\nname = \"ball\""), "15:1", "(syntax)", "valid TOML syntax", "invalid table header"),
    // Unknown and missing fields.
    case("unknown_top_level", Replace("[contact]", "[contacts]"), "7:2", "contacts", "one of `description`, `simulation`, `solver`, `contact`, `body`, `geometry`, `actuator`", "unknown field `contacts`"),
    case("misspelled_mass", Replace("mass = 1.0", "mas = 1.0"), "12:1", "body[0].mas", "one of `name`, `mass`, `inertia`, `com`, `joint`, `parent`, `axis`, `origin`, `origin_rpy_deg`, `damping`, `position`, `quaternion`, `rpy_deg`, `velocity`, `angular_velocity`, `q0`, `v0`, `prescribed`", "unknown field `mas`"),
    case("unknown_control_type", Replace("type = \"pd\"", "type = \"pid\""), "44:20", "actuator[0].control.type", "one of `open-loop`, `pd`, `pd-schedule`", "unknown variant `pid`"),
    case("missing_simulation", Replace("[simulation]\ndt = 1e-3\nduration = 0.1", ""), "1:1", "simulation", "a [simulation] table with `dt` and `duration` (required, see problems/README.md)", "nothing"),
    case("missing_dt", Replace("dt = 1e-3\n", ""), "3:1", "simulation.dt", "a value for `dt` (required, see problems/README.md)", "nothing"),
    case("missing_mass", Replace("mass = 1.0\n", ""), "10:1", "body[0].mass", "a mass (kg) for a body without `prescribed` motion", "nothing"),
    case("missing_radius", Replace("radius = 0.05\n", ""), "23:1", "geometry[0].radius", "`radius` for shape `sphere`", "nothing"),
    // Values.
    case("dt_zero", Replace("dt = 1e-3", "dt = 0.0"), "4:6", "simulation.dt", "a positive finite number", "0"),
    case("dt_negative", Replace("dt = 1e-3", "dt = -1e-3"), "4:6", "simulation.dt", "a positive finite number", "-0.001"),
    case("dt_nan", Replace("dt = 1e-3", "dt = nan"), "4:6", "simulation.dt", "a positive finite number", "NaN"),
    case("duration_inf", Replace("duration = 0.1", "duration = inf"), "5:12", "simulation.duration", "a positive finite number", "inf"),
    case("mass_negative", Replace("mass = 1.0", "mass = -2.0"), "12:8", "body[0].mass", "a positive finite number", "-2"),
    case("mass_zero_second_body", Replace("mass = 0.5", "mass = 0.0"), "17:8", "body[1].mass", "a positive finite number", "0"),
    case("inertia_negative", Replace("mass = 1.0", "mass = 1.0\ninertia = [0.1, -0.1, 0.1]"), "13:17", "body[0].inertia[1]", "a positive finite number", "-0.1"),
    case("position_nan", Replace("position = [0.0, 0.0, 0.1]", "position = [0.0, 0.0, nan]"), "13:23", "body[0].position[2]", "a finite number", "NaN"),
    case("radius_zero", Replace("radius = 0.05", "radius = 0.0"), "27:10", "geometry[0].radius", "a positive finite number", "0"),
    case("friction_negative", Replace("friction = 0.5", "friction = -0.5"), "8:12", "contact.friction", "a finite number ≥ 0", "-0.5"),
    case("stiffness_zero_on_geometry", Replace("shape = \"half-space\"", "shape = \"half-space\"\ncontact = { stiffness = 0.0 }"), "40:25", "geometry[2].contact.stiffness", "a positive finite number", "0"),
    case("axis_zero", Replace("axis = [0.0, 1.0, 0.0]", "axis = [0.0, 0.0, 0.0]"), "19:8", "body[1].axis", "a non-zero direction", "[0.0, 0.0, 0.0]"),
    case("q0_too_long", Replace("q0 = [0.1]", "q0 = [0.1, 0.2]"), "21:6", "body[1].q0", "1 value for a revolute joint", "2 values"),
    case("approximation_unknown", Replace("duration = 0.1", "duration = 0.1\napproximation = \"anitescu\""), "6:17", "simulation.approximation", "one of lagged, regularized-lagged, similar, sap", "`anitescu`"),
    case("shape_unknown", Replace("shape = \"sphere\"", "shape = \"blob\""), "26:9", "geometry[0].shape", "one of sphere, box, capsule, cylinder, ellipsoid, half-space, convex-mesh", "`blob`"),
    case("joint_unknown", Replace("joint = \"revolute\"", "joint = \"hinge\""), "18:9", "body[1].joint", "one of free, planar, revolute, prismatic, fixed", "`hinge`"),
    case("revolute_without_axis", Replace("axis = [0.0, 1.0, 0.0]\n", ""), "15:1", "body[1].axis", "an `axis` for this joint", "nothing"),
    // Names that refer to nothing, or twice to the same thing.
    case("joint_parent_unknown", Replace("joint = \"revolute\"", "joint = \"revolute\"\nparent = \"ghost\""), "19:10", "body[1].parent", "the name of a body listed before this one, or `world`", "`ghost`"),
    case("joint_parent_later", Replace("joint = \"revolute\"", "joint = \"revolute\"\nparent = \"arm\""), "19:10", "body[1].parent", "the name of a body listed before this one, or `world`", "`arm`"),
    case("geometry_body_unknown", Replace("body = \"ball\"", "body = \"bal\""), "25:8", "geometry[0].body", "the name of a body, or `world`", "`bal`"),
    case("duplicate_body_name", Replace("[[geometry]]\nname = \"ball\"", "[[body]]\nname = \"ball\"\nmass = 2.0\n\n[[geometry]]\nname = \"ball\""), "24:8", "body[2].name", "a unique name other than `world`", "`ball`"),
    case("duplicate_geometry_name", Replace("name = \"ground\"", "name = \"ball\""), "38:8", "geometry[2].name", "a unique geometry name", "`ball`"),
    case("half_space_on_moving_body", Replace("name = \"ground\"", "name = \"ground\"\nbody = \"ball\""), "40:9", "geometry[2].shape", "a half-space on `world` or a prescribed body", "a half-space on moving body `ball`"),
    // Actuators.
    case("actuator_body_unknown", Replace("body = \"arm\"\neffort", "body = \"hand\"\neffort"), "42:8", "actuator[0].body", "the name of a body with a joint (not `world` or a prescribed body)", "`hand`"),
    case("actuator_dof_out_of_range", Replace("effort_limit = 5.0", "effort_limit = 5.0\ndof = 1"), "44:7", "actuator[0].dof", "a velocity index below 1 for the revolute joint of `arm`", "1"),
    case("effort_limit_negative", Replace("effort_limit = 5.0", "effort_limit = -5.0"), "43:16", "actuator[0].effort_limit", "a positive finite number", "-5"),
    case("pd_gain_negative", Replace("kp = 10.0", "kp = -10.0"), "44:31", "actuator[0].control.kp", "a finite gain ≥ 0", "-10"),
    case("pd_on_free_joint", Replace("body = \"arm\"\neffort", "body = \"ball\"\neffort"), "44:11", "actuator[0].control", "an open-loop law for a free joint (PD needs a revolute, prismatic or planar joint)", "a PD law"),
    case("open_loop_lengths_differ", Replace("{ type = \"pd\", kp = 10.0, kd = 1.0, position = 0.5 }", "{ type = \"open-loop\", times = [0.0, 0.1], values = [1.0] }"), "44:62", "actuator[0].control.values", "one value per time (2 times, at least 1)", "1 value"),
    case("open_loop_times_decrease", Replace("{ type = \"pd\", kp = 10.0, kd = 1.0, position = 0.5 }", "{ type = \"open-loop\", times = [0.0, 0.2, 0.1], values = [1.0, 2.0, 3.0] }"), "44:52", "actuator[0].control.times[2]", "a time after 0.2 s (times strictly increasing)", "0.1"),
    case("open_loop_interpolation_unknown", Replace("{ type = \"pd\", kp = 10.0, kd = 1.0, position = 0.5 }", "{ type = \"open-loop\", times = [0.0], values = [1.0], interpolation = \"cubic\" }"), "44:80", "actuator[0].control.interpolation", "`linear` or `hold`", "`cubic`"),
    case("pd_sinusoid_frequency_zero", Replace("position = 0.5 }", "position = 0.5, sinusoid = { amplitude = 0.1, frequency = 0.0 } }"), "44:105", "actuator[0].control.sinusoid.frequency", "a positive finite number", "0"),
    case("pd_schedule_lengths_differ", Replace("{ type = \"pd\", kp = 10.0, kd = 1.0, position = 0.5 }", "{ type = \"pd-schedule\", kp = 0.0, kd = 1.0, times = [0.0, 0.1], velocities = [1.0] }"), "44:88", "actuator[0].control.velocities", "one value per phase (2 times)", "1 value"),
    case("pd_schedule_limit_not_positive", Replace("{ type = \"pd\", kp = 10.0, kd = 1.0, position = 0.5 }", "{ type = \"pd-schedule\", kp = 0.0, kd = 1.0, times = [0.0, 0.1], effort_limits = [1.0, -1.0] }"), "44:97", "actuator[0].control.effort_limits[1]", "a positive finite number", "-1"),
    case("coupler_unknown_body", Replace("position = 0.5 }\n", "position = 0.5 }\n\n[[coupler]]\nfollower = \"arm\"\nleader = \"hand\"\nmultiplier = 2.0\n"), "46:1", "coupler[0]", "a coupler between the joints of two different bodies with one coordinate each (revolute or prismatic)", "`hand`"),
    case("coupler_on_free_joint", Replace("position = 0.5 }\n", "position = 0.5 }\n\n[[coupler]]\nfollower = \"arm\"\nleader = \"ball\"\nmultiplier = 2.0\n"), "46:1", "coupler[0]", "a coupler between the joints of two different bodies with one coordinate each (revolute or prismatic)", "ball"),
    case("coupler_ratio_not_finite", Replace("position = 0.5 }\n", "position = 0.5 }\n\n[[coupler]]\nfollower = \"arm\"\nleader = \"ball\"\nmultiplier = nan\n"), "49:14", "coupler[0].multiplier", "a finite number", "NaN"),
    case("ncp_impulse_until_before_time", Replace("[[actuator]]", "[[ncp.impulse]]\nbody = \"ball\"\ntime = 0.5\nperiod = 0.01\nuntil = 0.2\n\n[[actuator]]"), "45:9", "ncp.impulse[0].until", "a finite time after `time` (s), with a `period`", "0.2"),
    // Robot models.
    case("model_parent_unknown", Replace("[[actuator]]", "[[model]]\nfile = \"robot.urdf\"\nparent = \"ghost\"\n\n[[actuator]]"), "43:10", "model[0].parent", "`world` or the name of a `[[body]]` of the file with a joint (not a prescribed body)", "`ghost`"),
    // Hydroelastic properties.
    case("hydroelastic_modulus_negative", Replace("radius = 0.05", "radius = 0.05\nhydroelastic = { modulus = -1.0, resolution_hint = 0.01 }"), "28:28", "geometry[0].hydroelastic.modulus", "a positive finite number", "-1"),
    case("hydroelastic_hint_missing", Replace("radius = 0.05", "radius = 0.05\nhydroelastic = { modulus = 1e5 }"), "28:16", "geometry[0].hydroelastic.resolution_hint", "a mesh edge length (m) for a meshed shape", "none"),
    case("hydroelastic_layer_without_thickness", Replace("shape = \"half-space\"", "shape = \"half-space\"\nhydroelastic = { modulus = 1e6 }"), "40:16", "geometry[2].hydroelastic.thickness", "the layer thickness (m) of a compliant half-space", "none"),
    case("hydroelastic_thickness_on_a_sphere", Replace("radius = 0.05", "radius = 0.05\nhydroelastic = { modulus = 1e5, resolution_hint = 0.01, thickness = 0.1 }"), "28:69", "geometry[0].hydroelastic.thickness", "no thickness: only a compliant half-space (with `modulus`) has a layer", "0.1"),
    case("hydroelastic_unknown_field", Replace("radius = 0.05", "radius = 0.05\nhydroelastic = { young = 1e5 }"), "28:18", "geometry[0].hydroelastic.young", "one of `modulus`, `resolution_hint`, `thickness`", "unknown field `young`"),
    // Outputs.
    case(
        "projection_unknown",
        Replace("[contact]", "[output]\nprojection = \"zx\"\n\n[contact]"),
        "8:14",
        "output.projection",
        "one of xz, xy, yz",
        "`zx`",
    ),
    case(
        "output_unknown_field",
        Replace("[contact]", "[output]\ngif = true\n\n[contact]"),
        "8:1",
        "output.gif",
        "one of `plot`, `svg`, `animate`, `projection`",
        "unknown field `gif`",
    ),
];

/// A fresh folder for one test's files.
fn scratch_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stiction-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// The loader's message for `case`, or why there is none.
fn message(case: &Case, dir: &Path) -> Result<String, String> {
    let bytes = match case.edit {
        Replace(from, to) => {
            if !VALID.contains(from) {
                return Err(format!("test setup: `{from}` is not in the valid file"));
            }
            VALID.replacen(from, to, 1).into_bytes()
        }
        Whole(bytes) => bytes.to_vec(),
    };
    let path = dir.join(format!("{}.toml", case.name));
    std::fs::write(&path, bytes).expect("write case");
    match std::panic::catch_unwind(|| load_problem(&path)) {
        Err(_) => Err("the loader panicked".into()),
        Ok(Ok(_)) => Err("the file was accepted".into()),
        Ok(Err(e)) => Ok(e.to_string()),
    }
}

#[test]
fn the_valid_file_loads() {
    let dir = scratch_dir("valid");
    let path = dir.join("valid.toml");
    std::fs::write(&path, VALID).expect("write");
    let problem = load_problem(&path).expect("valid file");
    assert_eq!(problem.simulator.model.nu(), 1);
    assert_eq!(problem.controller.actuators.len(), 1);
}

#[test]
fn every_malformed_file_gets_a_located_error() {
    assert!(CASES.len() >= 30, "only {} cases", CASES.len());
    let dir = scratch_dir("malformed");
    let mut failures = Vec::new();
    for case in CASES {
        let head = format!(
            "{}:{}: field `{}`: expected ",
            dir.join(format!("{}.toml", case.name)).display(),
            case.at,
            case.field
        );
        match message(case, &dir) {
            Err(why) => failures.push(format!("{}: {why}", case.name)),
            Ok(m) => {
                let found_at = m.find(", found ").unwrap_or(m.len());
                let ok = m.starts_with(&head)
                    && m[..found_at].contains(case.expected)
                    && m[found_at..].contains(case.found);
                if !ok {
                    failures.push(format!(
                        "{}: got\n    {m}\n  want {head}…{}…, found …{}…",
                        case.name, case.expected, case.found
                    ));
                }
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
