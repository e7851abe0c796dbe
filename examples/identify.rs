//! Identify the friction coefficient μ and the contact stiffness k from one trajectory.
//!
//! The tumbling box (`problems/tumbling-box.toml`: μ = 0.4, k = 2e4 N/m) is simulated and its
//! trajectory written as `trajectory.csv`, exactly as `stiction simulate` does. Gaussian noise
//! (σ = 1 mm, 1 mm/s, …) is added to every value. Then μ and k are identified from that file,
//! starting from μ = 0.6 and k = 6e4 N/m, by Levenberg–Marquardt with rollout sensitivities,
//! and printed with their 95 % confidence intervals.
//!
//! `cargo run --release --example identify`

use std::path::Path;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use stiction::error::Result;
use stiction::identify::{
    identify, read_trajectory_csv, IdentificationProblem, IdentifySettings, ParamSpec,
};
use stiction::problem::load_problem;
use stiction::report::csv::write_trajectory;
use stiction::simulate::run;

fn main() -> Result<()> {
    let scene = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/tumbling-box.toml");
    let mut truth = load_problem(&scene)?;
    let recording = run(
        &mut truth.simulator,
        &truth.initial_state,
        truth.duration,
        |_, _| {},
    )?;
    let dir =
        std::env::temp_dir().join(format!("stiction-identify-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|source| stiction::error::Error::Io {
        path: dir.clone(),
        source,
    })?;
    let csv = write_trajectory(&recording, &truth.simulator, &dir)?;

    let sigma = 1e-3;
    let mut data = read_trajectory_csv(&csv, truth.simulator.settings.dt, Some(sigma))?;
    let tree_columns: Vec<String> = data
        .columns
        .iter()
        .filter(|c| c.starts_with("box."))
        .cloned()
        .collect();
    data = data.select(&tree_columns)?;
    let mut rng = StdRng::seed_from_u64(7);
    data.values.apply(|y| {
        // Box–Muller: a standard normal sample from two uniform ones.
        let (u1, u2): (f64, f64) = (rng.random::<f64>().max(f64::MIN_POSITIVE), rng.random());
        *y += sigma * (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
    });

    let model = load_problem(&scene)?;
    let parameters = vec![
        ParamSpec::new(&model.simulator, "friction", Some(0.6))?,
        ParamSpec::new(&model.simulator, "stiffness", Some(6e4))?,
    ];
    let problem = IdentificationProblem::new(
        "tumbling-box",
        model.simulator,
        model.initial_state,
        parameters,
        vec![data],
    )?;
    let report = identify(&problem, &IdentifySettings::default())?;
    println!(
        "{}: {} after {} iterations, {:.3} s",
        report.problem,
        report.status.name(),
        report.iterations,
        report.wall_s
    );
    for (e, true_value) in report.estimates.iter().zip([0.4, 2e4]) {
        let (lo, hi) = (e.ci95.0.unwrap_or(f64::NAN), e.ci95.1.unwrap_or(f64::NAN));
        println!(
            "{:<10} start {:>9.4}  estimate {:>11.6}  95 % interval [{lo:.6}, {hi:.6}]  (true {true_value})",
            e.name,
            e.initial,
            e.estimate.unwrap_or(f64::NAN),
        );
    }
    std::fs::remove_dir_all(&dir)
        .map_err(|source| stiction::error::Error::Io { path: dir, source })?;
    Ok(())
}
