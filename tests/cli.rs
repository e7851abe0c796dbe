//! The `stiction` binary run as a user would: every command on shipped problems, checking the
//! files it writes and what it prints. Durations are cut with `--duration` to stay fast.

#[path = "common/binary.rs"]
mod binary;

use std::path::Path;
use std::process::Output;

use binary::{command, problem, scratch, stderr, stdout, stiction};

/// Asserts a successful exit, showing stderr otherwise.
fn assert_ok(o: &Output) {
    assert!(o.status.success(), "exit {:?}: {}", o.status, stderr(o));
}

/// Asserts that `dir/name` exists and starts with `magic`.
fn assert_file(dir: &Path, name: &str, magic: &[u8]) {
    let path = dir.join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        bytes.len() > magic.len() && bytes.starts_with(magic),
        "{} is not what it should be",
        path.display()
    );
}

const FIGURES: [&str; 5] = [
    "contact_velocity",
    "contact_force",
    "positions",
    "velocities",
    "solver",
];

#[test]
fn every_help_text_has_an_example() {
    let dir = scratch("help");
    for args in [
        &["--help"][..],
        &["simulate", "--help"],
        &["gradcheck", "--help"],
        &["optimize", "--help"],
        &["mpc", "--help"],
        &["identify", "--help"],
        &["sweep", "--help"],
        &["list", "--help"],
        &["view", "--help"],
    ] {
        let out = stiction(&dir, args);
        assert_ok(&out);
        assert!(
            stdout(&out).contains("Example"),
            "{args:?}: {}",
            stdout(&out)
        );
    }
}

#[test]
fn list_shows_every_shipped_problem_with_its_description() {
    let dir = scratch("list");
    let out = stiction(&dir, &["list"]);
    assert_ok(&out);
    let listing = stdout(&out);
    let problems = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems");
    for entry in std::fs::read_dir(&problems).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let name = path.file_stem().unwrap().to_str().unwrap();
            let line = listing
                .lines()
                .find(|l| l.starts_with(&format!("{name} ")))
                .unwrap_or_else(|| {
                    panic!("`{name}` not listed (add it to shipped.rs):\n{listing}")
                });
            let p = match stiction::problem::load_problem(&path) {
                Ok(p) => p,
                // A robot problem whose package is not installed here (panda-push-box without
                // example-robot-data) is listed with what to install; tests/robots.rs runs it.
                Err(e) => {
                    assert!(
                        line.contains("not found through STICTION_PACKAGE_PATH: install it with `"),
                        "{line}\n{e}"
                    );
                    continue;
                }
            };
            let expected = match p.optimize {
                Some(_) => format!("{} (stiction optimize)", p.description),
                None => p.description.clone(),
            };
            assert!(line.ends_with(&expected), "{line}");
        }
    }
    let out = stiction(&dir, &["list", "--dir", problems.to_str().unwrap()]);
    assert_ok(&out);
    assert!(stdout(&out).contains("falling-sphere.toml"));
    let identify = problems.join("identify");
    let out = stiction(&dir, &["list", "--dir", identify.to_str().unwrap()]);
    assert_ok(&out);
    let listing = stdout(&out);
    for name in [
        "identify-friction",
        "identify-stiffness-damping",
        "identify-all",
    ] {
        let line = listing
            .lines()
            .find(|l| l.contains(&format!("{name}.toml")))
            .unwrap_or_else(|| panic!("{name} not listed:\n{listing}"));
        assert!(line.ends_with("(stiction identify)"), "{line}");
    }
}

/// The shipped robot problem without its package (a search path that does not hold it):
/// `simulate` fails at the `[[model]]` line with the command that installs the package and the
/// variable that finds it; `list` still lists the problem, with the same advice, and succeeds.
#[test]
fn a_robot_problem_without_its_package_says_how_to_install_it() {
    let dir = scratch("no-package");
    let run = |args: &[&str]| {
        command(&dir, args)
            .env("STICTION_PACKAGE_PATH", dir.join("no-packages-here"))
            .output()
            .expect("the binary runs")
    };
    let out = run(&["simulate", "panda-push-box", "--out", "o"]);
    assert!(!out.status.success());
    let message = stderr(&out);
    assert!(
        message.contains("problems/panda-push-box.toml:")
            && message.contains("field `model[0].file`")
            && message.contains("install it with `scripts/robots/setup.sh`")
            && message.contains("STICTION_PACKAGE_PATH=example-robot-data=DIR"),
        "{message}"
    );
    assert!(!dir.join("o").exists(), "nothing is written");
    let out = run(&["list"]);
    assert_ok(&out);
    let listing = stdout(&out);
    let line = listing
        .lines()
        .find(|l| l.starts_with("panda-push-box "))
        .unwrap_or_else(|| panic!("not listed:\n{listing}"));
    assert!(
        line.contains("Franka Panda")
            && line.contains("not found through STICTION_PACKAGE_PATH: install it with `scripts/robots/setup.sh`"),
        "{line}"
    );
}

#[test]
fn the_ncp_stepper_draws_its_figures_and_animation() {
    let dir = scratch("ncp-figures");
    let out = stiction(
        &dir,
        &[
            "simulate",
            &problem("cube-topple"),
            "--out",
            "ct",
            "--duration",
            "0.3",
            "--plot",
            "--animate",
        ],
    );
    assert_ok(&out);
    let ct = dir.join("ct");
    for figure in FIGURES {
        assert_file(&ct, &format!("{figure}.png"), b"\x89PNG");
    }
    assert_file(&ct, "animation.gif", b"GIF89a");
    // 0.3 s at δt = 0.01 s: 31 states, every one a frame.
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::Indexed);
    let mut decoder = options
        .read_info(std::fs::File::open(ct.join("animation.gif")).unwrap())
        .unwrap();
    let mut frames = 0;
    while decoder.read_next_frame().unwrap().is_some() {
        frames += 1;
    }
    assert_eq!(frames, 31);
}

#[test]
fn simulate_writes_tables_figures_and_animation_and_never_overwrites() {
    let dir = scratch("simulate");
    let args = [
        "simulate",
        &problem("falling-sphere"),
        "--out",
        "fs",
        "--duration",
        "0.1",
        "--plot",
        "--svg",
        "--animate",
        "--projection",
        "xz",
    ];
    let out = stiction(&dir, &args);
    assert_ok(&out);
    let fs = dir.join("fs");
    assert!(
        stdout(&out).contains("wrote 14 files to fs"),
        "{}",
        stdout(&out)
    );
    // 0.1 s at δt = 2e-3: a header and 51 states.
    let trajectory = std::fs::read_to_string(fs.join("trajectory.csv")).unwrap();
    assert_eq!(trajectory.lines().count(), 52);
    assert!(trajectory.starts_with("t,sphere.px,"));
    assert_file(&fs, "contacts.csv", b"t,body_a,body_b,");
    assert_file(&fs, "stats.csv", b"t,iterations,");
    for figure in FIGURES {
        assert_file(&fs, &format!("{figure}.png"), b"\x89PNG");
        assert_file(&fs, &format!("{figure}.svg"), b"<svg");
    }
    assert_file(&fs, "animation.gif", b"GIF89a");

    // The same folder again is refused and left alone; --force writes into it.
    let before = std::fs::metadata(fs.join("trajectory.csv"))
        .unwrap()
        .modified()
        .unwrap();
    let again = stiction(&dir, &args);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        stderr(&again).contains("fs: the output folder is not empty"),
        "{}",
        stderr(&again)
    );
    assert!(stderr(&again).contains("--force"));
    let after = std::fs::metadata(fs.join("trajectory.csv"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after);
    let forced = stiction(&dir, &[&args[..], &["--force", "--quiet"]].concat());
    assert_ok(&forced);
    assert!(
        stdout(&forced).is_empty(),
        "--quiet printed {}",
        stdout(&forced)
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn simulate_writes_patches_their_polygons_and_an_animation_for_pressure_field_contact() {
    let dir = scratch("patches");
    let args = [
        "simulate",
        &problem("compliant-ball-rest"),
        "--out",
        "ball",
        "--duration",
        "0.02",
        "--patch-geometry",
        "--animate",
        "--projection",
        "xy",
        "--quiet",
    ];
    assert_ok(&stiction(&dir, &args));
    let patches = std::fs::read_to_string(dir.join("ball/patches.csv")).unwrap();
    let mut lines = patches.lines();
    assert_eq!(
        lines.next(),
        Some("t,body_a,body_b,area,fx,fy,fz,mx,my,mz,polygons,p_max")
    );
    let row: Vec<&str> = lines.last().expect("a patch row").split(',').collect();
    assert_eq!(row.len(), 12);
    assert_eq!((row[1], row[2]), ("world", "ball"));
    assert!(row[6].parse::<f64>().unwrap() > 0.0, "fz {}", row[6]);
    assert_file(
        &dir.join("ball"),
        "patch_geometry.csv",
        b"t,body_a,body_b,polygon,vertex,x,y,z,pressure\n",
    );
    assert_file(&dir.join("ball"), "animation.gif", b"GIF89a");
    let gradcheck = stiction(
        &dir,
        &["gradcheck", &problem("compliant-ball-rest"), "--steps", "1"],
    );
    assert_ok(&gradcheck);
    assert!(
        stdout(&gradcheck).contains("modulus@ball"),
        "{}",
        stdout(&gradcheck)
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn simulate_by_name_writes_new_numbered_folders() {
    let dir = scratch("numbered");
    for run in ["1", "2"] {
        let out = stiction(
            &dir,
            &[
                "simulate",
                "sliding-box",
                "--duration",
                "0.05",
                "--approximation",
                "sap",
            ],
        );
        assert_ok(&out);
        let folder = Path::new("out").join("sliding-box").join(run);
        assert!(
            stdout(&out).contains(&format!("to {}", folder.display())),
            "{}",
            stdout(&out)
        );
        assert!(
            stdout(&out).contains("(sap, δt = 0.01 s)"),
            "{}",
            stdout(&out)
        );
        assert_file(&dir.join(&folder), "stats.csv", b"t,");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn gradcheck_prints_a_table_and_json() {
    let dir = scratch("gradcheck");
    let file = problem("sliding-box");
    let table = stiction(&dir, &["gradcheck", &file, "--steps", "2"]);
    assert_ok(&table);
    assert!(stdout(&table).contains("IFT vs FD"), "{}", stdout(&table));
    let json = stiction(&dir, &["gradcheck", &file, "--steps", "2", "--json"]);
    assert_ok(&json);
    let value: serde_json::Value = serde_json::from_str(&stdout(&json)).expect("one JSON object");
    assert_eq!(value["problem"], "sliding-box");
    assert_eq!(value["steps"], 2);
    assert!(value["ms_step"].is_number());
    let blocks = value["blocks"].as_array().expect("blocks");
    assert!(blocks.iter().any(|b| b["name"] == "friction"), "{value}");
    for key in [
        "name",
        "ift_vs_fd",
        "ift_vs_direct",
        "ms_ift",
        "ms_direct",
        "ms_fd",
    ] {
        assert!(blocks[0].get(key).is_some(), "no `{key}` in {value}");
    }
}

#[test]
fn optimize_and_mpc_by_name_write_their_tables_and_figures() {
    let dir = scratch("optimize");
    // A non-empty --out is refused before any solve.
    std::fs::create_dir_all(dir.join("taken")).unwrap();
    std::fs::write(dir.join("taken/keep.txt"), "mine").unwrap();
    let refused = stiction(&dir, &["optimize", "hopper", "--out", "taken"]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("not empty"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("taken/keep.txt")).unwrap(),
        "mine"
    );

    let out = stiction(&dir, &["optimize", "hopper", "--quiet", "--animate"]);
    assert_ok(&out);
    assert!(stdout(&out).is_empty(), "--quiet printed {}", stdout(&out));
    let run = dir.join("out/hopper/1");
    for csv in ["controls.csv", "states.csv", "trajectory.csv"] {
        assert_file(&run, csv, b"t,");
    }
    assert_file(&run, "iterations.csv", b"iteration,cost,alpha,mu");
    for png in [
        "cost.png",
        "controls.png",
        "states.png",
        "contact_force.png",
    ] {
        assert_file(&run, png, b"\x89PNG");
    }
    assert_file(&run, "animation.gif", b"GIF8");

    let out = stiction(&dir, &["mpc", "hopper", "--out", "closed-loop"]);
    assert_ok(&out);
    let summary = stdout(&out);
    assert!(summary.contains("task error"), "{summary}");
    assert_file(
        &dir.join("closed-loop"),
        "mpc_solves.csv",
        b"t,iterations,cost",
    );
    assert_file(&dir.join("closed-loop"), "controls.csv", b"t,");
}

#[test]
fn bare_stiction_runs_the_demo_into_a_new_folder() {
    let dir = scratch("demo");
    // An earlier run's folder is kept; the demo takes the next number.
    std::fs::create_dir_all(dir.join("out/demo/1")).unwrap();
    let out = stiction(&dir, &[]);
    assert_ok(&out);
    let folder = Path::new("out").join("demo").join("2");
    assert!(
        stdout(&out).contains(&format!("to {}:", folder.display())),
        "{}",
        stdout(&out)
    );
    let folder = dir.join(folder);
    assert_file(&folder, "trajectory.csv", b"t,");
    assert_file(&folder, "positions.png", b"\x89PNG");
    assert_file(&folder, "animation.gif", b"GIF89a");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_malformed_file_fails_with_its_location() {
    let dir = scratch("malformed");
    let text = std::fs::read_to_string(problem("sliding-box")).unwrap();
    let bad = text.replacen("mass = 1.0", "mass = -1.0", 1);
    assert_ne!(bad, text, "test setup: sliding-box.toml has `mass = 1.0`");
    let line = bad
        .lines()
        .position(|l| l.starts_with("mass = -1.0"))
        .unwrap()
        + 1;
    std::fs::write(dir.join("bad.toml"), bad).unwrap();
    let out = stiction(&dir, &["simulate", "bad.toml", "--out", "bad"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out).trim_end(),
        format!("error: bad.toml:{line}:8: field `body[0].mass`: expected a positive finite number, found -1")
    );
    assert!(
        !dir.join("bad").exists(),
        "an output folder was made for a bad file"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn sweep_writes_a_table_and_a_figure_per_stiffness() {
    let dir = scratch("sweep");
    let out = stiction(
        &dir,
        &[
            "sweep",
            &problem("clutter"),
            "--stiffness",
            "1e5:1e7:100",
            "--duration",
            "0.2",
            "--settle",
            "0.05",
            "--model",
            "sap",
            "--out",
            "sw",
        ],
    );
    assert_ok(&out);
    assert!(stdout(&out).contains("rollouts/s"), "{}", stdout(&out));
    let table = std::fs::read_to_string(dir.join("sw/sweep.csv")).unwrap();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(
        lines[0],
        "stiffness,mean_penetration,mean_iterations,max_iterations,mean_log10_condition,steps"
    );
    assert_eq!(lines.len(), 3, "{table}");
    assert!(
        lines[1].starts_with("1e5,") && lines[2].starts_with("1e7,"),
        "{table}"
    );
    assert!(lines[1..].iter().all(|l| l.ends_with(",100")));
    assert_file(&dir.join("sw"), "sweep.png", b"\x89PNG");
    let bad = stiction(&dir, &["sweep", "clutter", "--stiffness", "1e7:1e5:10"]);
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("--stiffness"), "{}", stderr(&bad));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A sweep run as a job array: parts 1/2 and 2/2 of five stiffnesses (interleaved: three
/// and two rows), merged, give byte for byte the sweep.csv of one process, and a figure; a
/// missing part is refused by name. `simulate --shard` runs its share of the files.
#[test]
fn sharded_sweep_merges_into_the_table_of_one_process() {
    let dir = scratch("shard");
    let sweep = |extra: &[&str]| {
        let mut args = vec![
            "sweep",
            "falling-sphere",
            "--stiffness",
            "1e4,1e5,1e6,1e7,1e8",
            "--duration",
            "0.3",
            "--settle",
            "0.1",
            "--quiet",
        ];
        args.extend_from_slice(extra);
        let out = stiction(&dir, &args);
        assert_ok(&out);
    };
    sweep(&["--out", "whole"]);
    sweep(&["--out", "part1", "--shard", "1/2"]);
    sweep(&["--out", "part2", "--shard", "2/2"]);
    let rows = |d: &str| std::fs::read_to_string(dir.join(d).join("sweep.csv")).unwrap();
    assert_eq!(rows("part1").lines().count(), 4, "header and 1e4, 1e6, 1e8");
    assert!(rows("part2").lines().nth(1).unwrap().starts_with("1e5,"));
    // Given in any order.
    let out = stiction(
        &dir,
        &["merge", "part2", "part1", "--out", "merged", "--quiet"],
    );
    assert_ok(&out);
    assert_eq!(
        std::fs::read(dir.join("merged/sweep.csv")).unwrap(),
        std::fs::read(dir.join("whole/sweep.csv")).unwrap()
    );
    assert_file(&dir.join("merged"), "sweep.png", b"\x89PNG");
    let out = stiction(&dir, &["merge", "part1", "--out", "alone"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("part 2/2 missing"),
        "{}",
        stderr(&out)
    );
    // simulate: part 2 of 2 of three files runs the second only.
    let out = stiction(
        &dir,
        &[
            "simulate",
            "falling-sphere",
            "sliding-box",
            "bouncing-sphere",
            "--shard",
            "2/2",
            "--duration",
            "0.01",
            "--quiet",
        ],
    );
    assert_ok(&out);
    assert!(dir.join("out/sliding-box/1/trajectory.csv").is_file());
    assert!(!dir.join("out/falling-sphere").exists() && !dir.join("out/bouncing-sphere").exists());
}

#[test]
fn clutter_runs_with_the_model_flag_and_a_condition_column() {
    let dir = scratch("clutter");
    let out = stiction(
        &dir,
        &[
            "simulate",
            "clutter",
            "--model",
            "regularized-lagged",
            "--linear-solver",
            "sparse",
            "--duration",
            "0.2",
            "--out",
            "c",
            "--quiet",
        ],
    );
    assert_ok(&out);
    let stats = std::fs::read_to_string(dir.join("c/stats.csv")).unwrap();
    let lines: Vec<&str> = stats.lines().collect();
    assert_eq!(
        lines[0],
        "t,iterations,ls_iterations,contacts,residual,condition,criterion,hessian_shift,warnings"
    );
    let last: Vec<&str> = lines.last().unwrap().split(',').collect();
    let condition: f64 = last[5].parse().expect("a condition estimate");
    assert!(condition > 1.0, "{condition}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn simulate_runs_several_problems_in_parallel_into_their_own_folders() {
    let dir = scratch("batch");
    let out = stiction(
        &dir,
        &[
            "simulate",
            "falling-sphere",
            "sliding-box",
            "--duration",
            "0.05",
        ],
    );
    assert_ok(&out);
    assert!(
        stdout(&out).contains("2 rollouts in parallel"),
        "{}",
        stdout(&out)
    );
    for name in ["falling-sphere", "sliding-box"] {
        assert_file(&dir.join("out").join(name).join("1"), "stats.csv", b"t,");
    }
    let refused = stiction(
        &dir,
        &["simulate", "falling-sphere", "sliding-box", "--out", "x"],
    );
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("--out"), "{}", stderr(&refused));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A double pendulum swinging about y (masses 1.5 and 0.8 kg, upper link 0.6 m, centres of
/// mass 0.25 and 0.3 m below the joints, inertias about y 0.04 and 0.02 kg·m²).
const PENDULUM_URDF: &str = include_str!("common/two_link_arm.urdf");

#[test]
fn inspect_prints_the_tree_mass_matrix_and_bias_of_a_urdf() {
    let dir = scratch("inspect-urdf");
    std::fs::write(dir.join("pendulum.urdf"), PENDULUM_URDF).expect("a URDF");
    let (q1, q2, w1, w2): (f64, f64, f64, f64) = (0.3, -0.7, 1.1, -0.4);
    let out = stiction(
        &dir,
        &[
            "inspect",
            "pendulum.urdf",
            "--json",
            "--q",
            &format!("{q1},{q2}"),
            "--v",
            &format!("{w1},{w2}"),
        ],
    );
    assert_ok(&out);
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(
        (report["nq"].as_u64(), report["nv"].as_u64()),
        (Some(2), Some(2))
    );
    let elbow = &report["joints"][1];
    assert_eq!(elbow["name"], "elbow");
    assert_eq!(elbow["type"], "revolute");
    assert_eq!(
        (elbow["q_index"].as_u64(), elbow["v_index"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(elbow["limits"]["lower"].as_f64(), Some(-2.0));
    assert!(
        report["joints"][0]["limits"].is_null(),
        "a continuous joint"
    );
    // The closed form of the double pendulum (see src/import/urdf/tests.rs).
    let (m1, m2, l1, c1, c2, i1, i2, g) = (1.5, 0.8, 0.6, 0.25, 0.3, 0.04, 0.02, 9.81);
    let h = m2 * l1 * c2 * q2.sin();
    let m22 = i2 + m2 * c2 * c2;
    let m12 = m22 + m2 * l1 * c2 * q2.cos();
    let m11 = i1 + m1 * c1 * c1 + i2 + m2 * (l1 * l1 + c2 * c2 + 2.0 * l1 * c2 * q2.cos());
    let bias = [
        -h * (2.0 * w1 * w2 + w2 * w2)
            + g * ((m1 * c1 + m2 * l1) * q1.sin() + m2 * c2 * (q1 + q2).sin()),
        h * w1 * w1 + g * m2 * c2 * (q1 + q2).sin(),
    ];
    let number = |v: &serde_json::Value| v.as_f64().expect("a number");
    let mass_matrix = &report["M"];
    for (r, c, expected) in [(0, 0, m11), (0, 1, m12), (1, 0, m12), (1, 1, m22)] {
        assert!(
            (number(&mass_matrix[r][c]) - expected).abs() < 1e-12,
            "M[{r}][{c}]"
        );
    }
    for (k, expected) in bias.iter().enumerate() {
        assert!(
            (number(&report["bias"][k]) - expected).abs() < 1e-12,
            "bias[{k}]"
        );
    }
    // The text form names the joints with their indices.
    let out = stiction(&dir, &["inspect", "pendulum.urdf"]);
    assert_ok(&out);
    assert!(stdout(&out).contains("elbow (revolute axis [0.000000, 1.000000, 0.000000]) of body lower: q[1..2], v[1..2]; position [-2, 2], velocity 3, effort 5"), "{}", stdout(&out));
    // A wrong size, and a broken file: errors, not panics.
    let out = stiction(&dir, &["inspect", "pendulum.urdf", "--q", "0.1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("expected 2, found 1"),
        "{}",
        stderr(&out)
    );
    std::fs::write(
        dir.join("broken.urdf"),
        PENDULUM_URDF.replace(r#"<child link="lower"/>"#, r#"<child link="forearm"/>"#),
    )
    .expect("a URDF");
    let out = stiction(&dir, &["inspect", "broken.urdf"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out).trim(),
        "error: broken.urdf:11: <joint name=\"elbow\">: child link `forearm` is not a <link> of the file"
    );
}

#[test]
fn simulate_runs_a_urdf_on_the_ground_and_says_what_the_step_leaves_out() {
    let dir = scratch("simulate-urdf");
    std::fs::write(dir.join("pendulum.urdf"), PENDULUM_URDF).expect("a URDF");
    // Hung 1 m up so that it swings clear of the ground.
    let out = stiction(
        &dir,
        &[
            "simulate",
            "pendulum.urdf",
            "--position",
            "0,0,1",
            "--duration",
            "0.05",
            "--out",
            "run",
        ],
    );
    assert_ok(&out);
    assert!(
        stderr(&out).contains("read but not modelled by the step: 1 joint velocity limits (lower)"),
        "{}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("50 steps to t = 0.050000 s"),
        "{}",
        stdout(&out)
    );
    assert_file(&dir.join("run"), "trajectory.csv", b"t,");
    // A floating box dropped from 0.1 m lands on the ground.
    std::fs::write(
        dir.join("box.urdf"),
        r#"<robot name="box"><link name="box">
             <inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
             <collision><geometry><box size="0.2 0.2 0.2"/></geometry></collision>
           </link></robot>"#,
    )
    .expect("a URDF");
    let out = stiction(
        &dir,
        &[
            "simulate",
            "box.urdf",
            "--floating",
            "--position",
            "0,0,0.11",
            "--duration",
            "0.3",
            "--out",
            "drop",
        ],
    );
    assert_ok(&out);
    let contacts = std::fs::read_to_string(dir.join("drop/contacts.csv")).expect("contacts");
    assert!(
        contacts
            .lines()
            .filter(|l| l.contains(",world,box,"))
            .count()
            >= 4,
        "{contacts}"
    );
    let trajectory = std::fs::read_to_string(dir.join("drop/trajectory.csv")).expect("states");
    let header: Vec<&str> = trajectory
        .lines()
        .next()
        .expect("a header")
        .split(',')
        .collect();
    let z = header
        .iter()
        .position(|c| c.contains('z'))
        .expect("a z column");
    let last: Vec<&str> = trajectory
        .lines()
        .last()
        .expect("a row")
        .split(',')
        .collect();
    let z: f64 = last[z].parse().expect("a number");
    assert!((z - 0.1).abs() < 2e-3, "resting height {z} m");
}

/// A stand-in for the `three` npm package: the three files a replay copies, under `dir`.
fn fake_three_js(dir: &Path) -> std::path::PathBuf {
    let three = dir.join("three");
    for file in [
        "build/three.module.js",
        "build/three.core.js",
        "examples/jsm/controls/OrbitControls.js",
    ] {
        let path = three.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("// {file}\n")).unwrap();
    }
    three
}

/// GET `path` from the server at `address` (`127.0.0.1:PORT`): the status line and the body.
fn http_get(address: &str, path: &str) -> (String, Vec<u8>) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {address}\r\n\r\n").unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let split = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&response[..split]).into_owned();
    (
        head.lines().next().unwrap().to_string(),
        response[split + 4..].to_vec(),
    )
}

#[test]
fn replay_is_written_served_and_refused_clearly_without_three_js() {
    use std::io::BufRead;
    let dir = scratch("replay");
    let three = fake_three_js(&dir);
    let args = [
        "simulate",
        "falling-sphere",
        "--out",
        "fs",
        "--duration",
        "0.1",
        "--replay",
    ];
    let out = command(&dir, &args)
        .env("STICTION_THREE_JS", &three)
        .output()
        .unwrap();
    assert_ok(&out);
    assert!(
        stdout(&out).contains("fs/replay/replay.html"),
        "{}",
        stdout(&out)
    );
    let replay = dir.join("fs/replay");
    assert_file(&replay, "replay.html", b"<!doctype html>");
    assert_file(&replay, "three/three.core.js", b"// build/three.core.js");
    let header: serde_json::Value =
        serde_json::from_slice(&std::fs::read(replay.join("rollout.json")).unwrap()).unwrap();
    assert_eq!(header["bodies"][0]["name"], "sphere");
    // 0.1 s at δt = 2e-3: 51 states, all of them frames; 7 f32 per body and frame.
    assert_eq!(header["times"].as_array().unwrap().len(), 51);
    assert_eq!(header["sections"]["poses"]["count"], 51 * 7);
    let bin = std::fs::metadata(replay.join("rollout.bin")).unwrap().len();
    assert!(bin >= 4 * 51 * 7, "{bin} bytes");

    // `stiction view` serves the folder's files on 127.0.0.1, nothing outside it.
    let mut server = command(&dir, &["view", "fs"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(server.stdout.take().unwrap()).lines();
    let url = lines
        .by_ref()
        .map(|l| l.unwrap())
        .find_map(|l| l.trim().strip_prefix("http://").map(str::to_string))
        .expect("the address is printed");
    let address = url.split('/').next().unwrap().to_string();
    let (status, body) = http_get(&address, "/");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(body.starts_with(b"<!doctype html>"));
    let (status, body) = http_get(&address, "/rollout.bin");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(body.len() as u64, bin);
    assert_eq!(
        http_get(&address, "/../run.json").0,
        "HTTP/1.1 404 Not Found"
    );
    assert_eq!(
        http_get(&address, "/missing.js").0,
        "HTTP/1.1 404 Not Found"
    );
    server.kill().unwrap();
    server.wait().unwrap();

    // Without three.js: refused before anything is run or written, naming the setup script.
    let missing = command(
        &dir,
        &["simulate", "falling-sphere", "--out", "none", "--replay"],
    )
    .env("STICTION_THREE_JS", dir.join("nowhere"))
    .output()
    .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains("scripts/viewer/setup.sh"),
        "{}",
        stderr(&missing)
    );
    assert!(!dir.join("none").exists());

    // A folder without a replay says how to write one.
    let empty = stiction(&dir, &["view", "."]);
    assert_eq!(empty.status.code(), Some(1));
    assert!(stderr(&empty).contains("--replay"), "{}", stderr(&empty));
    std::fs::remove_dir_all(&dir).ok();
}

/// `stiction figures` with a figure that cannot be made (the Panda's, its package not on the
/// search path) still makes the others and its index, lists the missing one there with what to
/// install, and exits with that error.
#[test]
fn figures_make_the_others_when_a_robot_package_is_missing() {
    let dir = scratch("figures-missing-package");
    let out = command(
        &dir,
        &[
            "figures",
            "falling-sphere",
            "panda-push-ball",
            "--quick",
            "--out",
            "f",
            "--quiet",
        ],
    )
    .env_remove("STICTION_PACKAGE_PATH")
    .output()
    .expect("the binary runs");
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("install it with `scripts/robots/setup.sh`"),
        "{}",
        stderr(&out)
    );
    assert_file(&dir.join("f"), "falling-sphere.png", b"\x89PNG");
    let index = std::fs::read_to_string(dir.join("f/index.md")).expect("the index");
    assert!(index.contains("## falling-sphere: ICF Sec. IX-B, Fig. 5"));
    assert!(index.contains("## panda-push-ball: ICF ext. Sec. XII-D, Fig. 25\n\nNot made: "));
}
