//! Contact-implicit trajectory optimization on the shipped problems (CASES.md "Optimization"):
//! each is solved from its initial guess, with no contact schedule, and must achieve its task
//! with a cost that decreases monotonically over accepted iterations.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use nalgebra::{DVector, Vector3};

use stiction::multibody::{forward_kinematics, MultibodyData};
use stiction::optimize::cost::{
    BodyPositionCost, BodyRelativeCost, ControlCost, Schedule, Stages, StateCost,
};
use stiction::optimize::ilqr::{
    linearize, make_workers, shifted_start, solve_from, IlqrStart, IterationStats,
};
use stiction::optimize::{
    check_cost_derivatives, optimization, optimize_file, run_mpc, solve_shooting, CostDerivatives,
    DerivativeMethod, IlqrParams, IlqrReport, MpcSettings, OptimizeRun, ShootingParams, StageCost,
    StagePoint,
};
use stiction::problem::load_problem;
use stiction::step::{State, StepReport};

fn path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("problems")
        .join(format!("{name}.toml"))
}

/// Accepted iterations never raise the cost, and the final cost is below the initial one.
fn assert_monotone(run: &OptimizeRun) {
    let mut previous = run.report.initial_cost;
    for s in run.report.iterations.iter().filter(|s| s.accepted) {
        assert!(
            s.cost < previous,
            "iteration {} raised the cost {previous} -> {}",
            s.iteration,
            s.cost
        );
        previous = s.cost;
    }
    assert!(run.report.trajectory.cost < run.report.initial_cost);
    assert_eq!(previous, run.report.trajectory.cost);
}

/// Whether any step has a contact between the two named bodies.
fn touches(run: &OptimizeRun, reports: &[StepReport], a: &str, b: &str) -> bool {
    let model = &run.problem.simulator.model;
    reports.iter().any(|r| {
        r.contacts.iter().any(|c| {
            let names = (model.name_of(c.body_a), model.name_of(c.body_b));
            names == (a, b) || names == (b, a)
        })
    })
}

/// The initial guess rolled out.
fn initial_rollout(run: &mut OptimizeRun) -> Vec<StepReport> {
    run.optimization
        .problem
        .rollout(
            &mut run.problem.simulator,
            &run.optimization.initial_controls,
        )
        .expect("initial guess simulates")
        .reports
}

#[test]
fn push_ball_reaches_its_target_within_1_cm() {
    let mut run = optimize_file(&path("push-ball"), |_| {}).expect("push-ball solves");
    assert!(
        run.outcome.achieved,
        "ball {} m from target\n{}",
        run.outcome.error,
        run.describe()
    );
    assert!(run.outcome.error < 0.01);
    assert_monotone(&run);
    // No contact in the initial guess; the optimizer found the push.
    let initial = initial_rollout(&mut run);
    assert!(!touches(&run, &initial, "finger", "ball"));
    assert!(touches(
        &run,
        &run.report.trajectory.reports,
        "finger",
        "ball"
    ));
    // Controls within their bounds.
    for u in &run.report.trajectory.controls {
        assert!(u.iter().all(|x| x.abs() <= 5.0));
    }
}

#[test]
fn hopper_jumps_to_its_target_height_and_lands() {
    let mut run = optimize_file(&path("hopper"), |_| {}).expect("hopper solves");
    assert!(run.report.status.converged(), "{}", run.describe());
    assert!(run.outcome.achieved, "{}", run.describe());
    assert_monotone(&run);
    let model = &run.problem.simulator.model;
    let leg = model.body_index("leg").unwrap();
    let mut data = MultibodyData::new(model);
    let foot_height = |x: &State, data: &mut MultibodyData<f64>| {
        forward_kinematics(model, data, &x.q, &x.v);
        data.X_WB[leg].p.z
    };
    // The foot (3 cm radius) leaves the floor: flight with no contact at all ...
    let states = &run.report.trajectory.states;
    let apex = states.iter().find(|x| (x.t - 0.4).abs() < 1e-6).unwrap();
    assert!(foot_height(apex, &mut data) > 0.1);
    let k = states
        .iter()
        .position(|x| (x.t - 0.4).abs() < 1e-6)
        .unwrap();
    assert!(run.report.trajectory.reports[k].contacts.is_empty());
    // ... and touches down again: the last step has the foot on the floor.
    assert!(!run
        .report
        .trajectory
        .reports
        .last()
        .unwrap()
        .contacts
        .is_empty());
    // The initial guess (holding the weight) never leaves the floor.
    let initial = initial_rollout(&mut run);
    assert!(initial.iter().all(|r| !r.contacts.is_empty()));
}

#[test]
fn warm_start_from_a_solution_stops_at_once() {
    let run = optimize_file(&path("hopper"), |_| {}).expect("hopper solves");
    let mut problem = load_problem(&path("hopper")).unwrap();
    let opt = optimization(&problem).unwrap();
    let again = stiction::optimize::solve(
        &mut problem.simulator,
        &opt.problem,
        &run.report.trajectory.controls,
        &opt.params,
    )
    .unwrap();
    assert!(again.status.converged(), "{:?}", again.status);
    assert!(again.iterations.len() <= 2, "{:?}", again.iterations);
    assert!(again.trajectory.cost <= run.report.trajectory.cost);
    assert_eq!(again.initial_cost, run.report.trajectory.cost);
}

#[test]
fn box_pivot_drags_the_box_by_friction() {
    // The task is achieved well before the cost stops decreasing (200 iterations in the
    // file); 40 keep the test fast and must already achieve it.
    let mut run = optimize_file(&path("box-pivot"), |o| o.params.max_iterations = 40)
        .expect("box-pivot solves");
    assert!(run.outcome.achieved, "{}", run.describe());
    assert_monotone(&run);
    let initial = initial_rollout(&mut run);
    assert!(!touches(&run, &initial, "finger", "box"));
    assert!(touches(
        &run,
        &run.report.trajectory.reports,
        "finger",
        "box"
    ));
    // Dragged from the top: every finger–box contact normal is vertical.
    let model = &run.problem.simulator.model;
    for r in &run.report.trajectory.reports {
        for c in &r.contacts {
            let names = (model.name_of(c.body_a), model.name_of(c.body_b));
            if names == ("finger", "box") || names == ("box", "finger") {
                assert!(c.normal.z.abs() > 0.9, "normal {:?}", c.normal);
            }
        }
    }
}

#[test]
fn mpc_on_the_hopper_achieves_the_task_in_closed_loop() {
    let mut problem = load_problem(&path("hopper")).unwrap();
    let mut opt = optimization(&problem).unwrap();
    let report = run_mpc(
        &mut problem.simulator,
        &mut opt.problem,
        &opt.initial_controls,
        &opt.mpc,
        &opt.params,
    )
    .expect("closed loop runs");
    assert_eq!(report.controls.len(), opt.mpc.steps);
    assert_eq!(report.solves.len(), opt.mpc.steps);
    // The problem is restored.
    assert_eq!(opt.problem.num_steps, opt.initial_controls.len());
    let outcome = opt.task.evaluate(&problem.simulator.model, &report.states);
    assert!(outcome.achieved, "{outcome:?}");
    // Each step of the closed loop is the simulator's step from the previous state.
    let (next, _) = problem
        .simulator
        .step(&report.states[10], &report.controls[10])
        .unwrap();
    assert_eq!(next, report.states[11]);
}

#[test]
fn shooting_baseline_lowers_the_hopper_cost() {
    let mut problem = load_problem(&path("hopper")).unwrap();
    let opt = optimization(&problem).unwrap();
    let params = ShootingParams {
        max_iterations: 10,
        ..ShootingParams::default()
    };
    let report = solve_shooting(
        &mut problem.simulator,
        &opt.problem,
        &opt.initial_controls,
        &params,
    )
    .expect("L-BFGS runs");
    assert!(
        report.trajectory.cost < 0.5 * report.initial_cost,
        "{report:?}"
    );
    assert!(report.iterations <= 10);
    let b = opt.problem.bounds.as_ref().unwrap();
    for u in &report.trajectory.controls {
        assert!(u[0] >= b.lower[0] && u[0] <= b.upper[0]);
    }
}

/// A user cost: `½ c ‖v_ball‖²` on the ball's linear velocity coordinates, with analytic
/// derivatives.
#[derive(Debug)]
struct BallSpeed {
    start: usize,
    c: f64,
}

impl StageCost for BallSpeed {
    fn calc(&self, p: &StagePoint<'_>) -> f64 {
        0.5 * self.c * p.x.v.rows(self.start, 3).norm_squared()
    }

    fn calc_diff(&self, p: &StagePoint<'_>, d: &mut CostDerivatives) {
        let nv = p.model.nv();
        d.l += self.calc(p);
        for i in 0..3 {
            d.lx[nv + self.start + i] += self.c * p.x.v[self.start + i];
            d.lxx[(nv + self.start + i, nv + self.start + i)] += self.c;
        }
    }
}

/// Gradients of every built-in term and of a user term agree with central differences;
/// Hessians agree where the term is exact (controls, velocities, revolute joints).
#[test]
fn cost_derivatives_match_central_differences() {
    // Gradient agreement: central differences at h = 1e-6 leave O(h²) ≈ 1e-12 plus round-off
    // ε|ℓ|/h ≈ 1e-10 relative.
    const GRADIENT_TOL: f64 = 1e-7;
    // Exact Hessians against differences of the analytic gradient: same budget.
    const HESSIAN_TOL: f64 = 1e-6;
    let problem = load_problem(&path("push-ball")).unwrap();
    let model = &problem.simulator.model;
    let (nv, nu) = (model.nv(), model.nu());
    let mut x = problem.initial_state.clone();
    // A generic state: joints moved, the ball displaced, rotated and moving.
    x.q[0] += 0.3;
    x.q[2] -= 0.2;
    x.q.rows_mut(3, 7)
        .copy_from_slice(&[0.6, 0.1, 0.05, 0.95, 0.2, -0.1, 0.3]);
    let norm = x.q.rows(6, 4).norm();
    for i in 6..10 {
        x.q[i] /= norm;
    }
    x.v = DVector::from_fn(nv, |i, _| 0.1 * i as f64 - 0.3);
    let u = DVector::from_vec(vec![0.5, -1.0, 2.0]);
    let ball = model.body_index("ball").unwrap();
    let finger = model.body_index("finger").unwrap();
    let running = Schedule::always(Stages::Running);
    let all = Schedule::always(Stages::All);
    let q_target = problem.initial_state.q.clone();
    let exact_state = StateCost {
        q_target: q_target.clone(),
        v_target: DVector::from_element(nv, 0.1),
        q_weight: DVector::from_vec(vec![1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 4.0, 5.0, 6.0]),
        v_weight: DVector::from_element(nv, 0.5),
        schedule: all,
    };
    let terms: Vec<(Box<dyn StageCost>, bool)> = vec![
        (
            Box::new(ControlCost {
                target: DVector::from_vec(vec![0.1, 0.2, 0.3]),
                weight: DVector::from_vec(vec![1.0, 2.0, 3.0]),
                schedule: running,
            }),
            true,
        ),
        (Box::new(exact_state), true),
        (
            Box::new(StateCost {
                q_target,
                v_target: DVector::zeros(nv),
                q_weight: DVector::from_element(nv, 2.0),
                v_weight: DVector::zeros(nv),
                schedule: all,
            }),
            false,
        ),
        (
            Box::new(BodyPositionCost {
                body: ball,
                p_BP: Vector3::new(0.01, 0.02, 0.03),
                target: Vector3::new(0.55, 0.15, 0.05),
                weight: Vector3::new(100.0, 50.0, 10.0),
                schedule: all,
            }),
            false,
        ),
        (
            Box::new(BodyRelativeCost {
                body_a: finger,
                p_AP: Vector3::new(0.1, 0.0, -0.1),
                body_b: ball,
                p_BQ: Vector3::zeros(),
                offset: Vector3::new(0.01, 0.0, 0.0),
                weight: Vector3::new(20.0, 20.0, 5.0),
                schedule: running,
            }),
            false,
        ),
        (Box::new(BallSpeed { start: 6, c: 3.0 }), true),
    ];
    for (term, exact_hessian) in &terms {
        let check = check_cost_derivatives(term.as_ref(), model, &x, &u, false);
        assert!(check.value_error < 1e-12, "{term:?}: {check:?}");
        assert!(check.lx_error < GRADIENT_TOL, "{term:?}: {check:?}");
        assert!(check.lu_error < GRADIENT_TOL, "{term:?}: {check:?}");
        if *exact_hessian {
            assert!(check.hessian_error < HESSIAN_TOL, "{term:?}: {check:?}");
        }
    }
    // Schedules: the control cost is zero on the terminal stage.
    let data = {
        let mut d = MultibodyData::new(model);
        forward_kinematics(model, &mut d, &x.q, &x.v);
        d
    };
    let p = StagePoint {
        model,
        data: &data,
        x: &x,
        u: &u,
        terminal: true,
    };
    assert_eq!(terms[0].0.calc(&p), 0.0);
    assert_eq!(nu, 3);
}

#[test]
#[cfg(feature = "cli")]
fn optimize_json_prints_one_object() {
    let out = std::env::temp_dir().join(format!("stiction-ilqr-json-{}", std::process::id()));
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_stiction"))
        .args(["optimize", path("hopper").to_str().unwrap(), "--out"])
        .arg(&out)
        .args(["--json", "--force"])
        .output()
        .expect("binary runs");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(text.trim().lines().count(), 1, "{text}");
    let value: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    let keys = [
        "problem",
        "status",
        "iterations",
        "initial_cost",
        "final_cost",
        "task_error",
        "wall_s",
    ];
    let found: Vec<&String> = value.as_object().unwrap().keys().collect();
    assert_eq!(found, keys, "keys of {text}");
    assert_eq!(value["problem"], "hopper");
    assert!(value["task_error"].as_f64().unwrap() < 0.05);
    for f in [
        "controls.csv",
        "states.csv",
        "iterations.csv",
        "trajectory.csv",
        "contacts.csv",
        "cost.png",
        "controls.png",
        "states.png",
        "contact_force.png",
    ] {
        assert!(out.join(f).is_file(), "{f} not written");
    }
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn optimize_table_errors_name_the_field() {
    let base = std::fs::read_to_string(path("hopper")).unwrap();
    let cases = [
        (
            base.replace("horizon = 0.8\n", "horizon = 0.8\nhorizn = 1.0\n"),
            "optimize",
        ),
        (
            base.replace(
                "body = \"body\"\ntarget = [0.0, 0.0, 0.45]\nweight",
                "body = \"nobody\"\ntarget = [0.0, 0.0, 0.45]\nweight",
            ),
            "optimize.cost[1].body",
        ),
        (
            base.replace(
                "initial_controls = [9.81]",
                "initial_controls = [9.81, 1.0]",
            ),
            "optimize.initial_controls",
        ),
        (
            base.replace(
                "[[actuator]]\nbody = \"leg\"\n",
                "[[actuator]]\nbody = \"leg\"\ncontrol = { type = \"pd\", kp = 1.0, kd = 0.1, position = 0.3 }\n",
            ),
            "actuator[0].control",
        ),
    ];
    for (text, field) in cases {
        let problem = stiction::problem::parse_problem(&text, Path::new("hopper-bad.toml"));
        let err = match problem {
            Err(e) => e,
            Ok(p) => optimization(&p).expect_err("invalid [optimize] table"),
        };
        let message = err.to_string();
        assert!(message.contains(field), "{field}: {message}");
        // Every error is located: `hopper-bad.toml:LINE:COLUMN: …`.
        let location: Vec<&str> = message.splitn(4, ':').collect();
        assert_eq!(location[0], "hopper-bad.toml", "{message}");
        assert!(
            location[1].parse::<usize>().is_ok() && location[2].parse::<usize>().is_ok(),
            "{field}: no line and column in {message}"
        );
    }
}

/// The shifted solution of a warm start ([`shifted_start`]) is what rolling out and
/// differentiating the shifted controls from the predicted state gives, for a shrinking and
/// for a receding horizon (extended by its last control).
#[test]
fn shifted_start_is_the_rollout_of_the_shifted_solution() {
    let mut problem = load_problem(&path("hopper")).unwrap();
    let mut opt = optimization(&problem).unwrap();
    opt.problem.num_steps = opt.mpc.horizon;
    let params = IlqrParams {
        max_iterations: 3,
        ..opt.params.clone()
    };
    let sim = &mut problem.simulator;
    let guess = opt.initial_controls[..opt.mpc.horizon].to_vec();
    let mut report = stiction::optimize::solve(sim, &opt.problem, &guess, &params).unwrap();
    let mut workers = make_workers(sim, &params).unwrap();
    report.linearization = Some(
        linearize(
            &mut workers,
            &opt.problem,
            &report.trajectory,
            DerivativeMethod::Ift,
        )
        .unwrap(),
    );
    report.mu = 0.25;
    let t_len = opt.mpc.horizon;
    let next = &mut opt.problem;
    for t_new in [t_len - 1, t_len] {
        next.x0 = report.trajectory.states[1].clone();
        next.num_steps = t_new;
        let shifted =
            shifted_start(sim, &mut workers, next, &report, DerivativeMethod::Ift).unwrap();
        let mut controls = report.trajectory.controls[1..].to_vec();
        controls.resize(t_new, controls.last().unwrap().clone());
        let rolled = IlqrStart::rollout(sim, next, &controls, 0.0).unwrap();
        assert_eq!(shifted.trajectory.states, rolled.trajectory.states);
        assert_eq!(shifted.trajectory.controls, rolled.trajectory.controls);
        assert_eq!(shifted.trajectory.cost, rolled.trajectory.cost);
        assert_eq!(shifted.mu, 0.25);
        let (stages, terminal) = shifted.linearization.unwrap();
        let (stages_ref, terminal_ref) = linearize(
            &mut workers,
            next,
            &rolled.trajectory,
            DerivativeMethod::Ift,
        )
        .unwrap();
        assert_eq!(stages.len(), t_new);
        for (s, r) in stages.iter().zip(&stages_ref) {
            assert_eq!((&s.fx, &s.fu, &s.cost), (&r.fx, &r.fu, &r.cost));
        }
        assert_eq!(terminal, terminal_ref);
    }
    // A state off the prediction, or a horizon that does not follow, has no shifted start.
    next.x0.v[0] += 1e-9;
    assert!(shifted_start(sim, &mut workers, next, &report, DerivativeMethod::Ift).is_none());
    next.x0 = report.trajectory.states[1].clone();
    next.num_steps = t_len + 1;
    assert!(shifted_start(sim, &mut workers, next, &report, DerivativeMethod::Ift).is_none());
}

/// Starting from a trajectory with its derivatives gives the iterations of starting from the
/// trajectory alone: the reused derivatives are those the first iteration would compute.
#[test]
fn a_start_with_its_derivatives_solves_as_without() {
    let mut problem = load_problem(&path("hopper")).unwrap();
    let opt = optimization(&problem).unwrap();
    let params = IlqrParams {
        max_iterations: 6,
        ..opt.params.clone()
    };
    let sim = &mut problem.simulator;
    let mut workers = make_workers(sim, &params).unwrap();
    let bare =
        IlqrStart::rollout(sim, &opt.problem, &opt.initial_controls, params.mu_init).unwrap();
    let with = IlqrStart {
        linearization: Some(
            linearize(
                &mut workers,
                &opt.problem,
                &bare.trajectory,
                DerivativeMethod::Ift,
            )
            .unwrap(),
        ),
        ..bare.clone()
    };
    let continue_ = &mut |_: &IterationStats| ControlFlow::Continue(());
    let a = solve_from(sim, &mut workers, &opt.problem, bare, &params, continue_).unwrap();
    let b = solve_from(sim, &mut workers, &opt.problem, with, &params, continue_).unwrap();
    assert_eq!(a.trajectory.controls, b.trajectory.controls);
    assert_eq!(a.trajectory.cost, b.trajectory.cost);
    assert_eq!(a.mu, b.mu);
    let costs = |r: &IlqrReport| r.iterations.iter().map(|s| s.cost).collect::<Vec<_>>();
    assert_eq!(costs(&a), costs(&b));
    // A start that is not a trajectory of the problem is refused.
    let mut short = IlqrStart::rollout(sim, &opt.problem, &opt.initial_controls, 0.0).unwrap();
    short.trajectory.states.pop();
    assert!(solve_from(sim, &mut workers, &opt.problem, short, &params, continue_).is_err());
}

/// With a shrinking horizon and the simulator as the plant, every re-solve starts from the
/// tail of the previous plan and only lowers its cost, so the closed loop costs at most the
/// first plan (Bellman's principle) and reaches the hopper's task.
#[test]
fn shrinking_mpc_costs_at_most_its_first_plan() {
    let mut problem = load_problem(&path("hopper")).unwrap();
    let mut opt = optimization(&problem).unwrap();
    opt.mpc = MpcSettings::new(opt.problem.num_steps, 1, opt.problem.num_steps, true);
    let report = run_mpc(
        &mut problem.simulator,
        &mut opt.problem,
        &opt.initial_controls,
        &opt.mpc,
        &opt.params,
    )
    .expect("closed loop runs");
    assert_eq!(report.controls.len(), opt.mpc.steps);
    assert!(report.solves[1..].iter().all(|s| s.iterations <= 1));
    let mut data = MultibodyData::new(&problem.simulator.model);
    let closed_loop = opt.problem.total_cost(
        &problem.simulator,
        &mut data,
        &report.states,
        &report.controls,
    );
    let first_plan = report.solves[0].cost;
    assert!(
        closed_loop <= first_plan * (1.0 + 1e-12),
        "closed loop {closed_loop} above the first plan {first_plan}"
    );
    // Each plan costs at most the previous one less the stage cost it applied.
    let model = &problem.simulator.model;
    for k in 1..report.solves.len() {
        let applied = opt.problem.cost.calc(
            model,
            &mut data,
            &report.states[k - 1],
            &report.controls[k - 1],
            false,
        );
        let bound = report.solves[k - 1].cost - applied;
        assert!(
            report.solves[k].cost <= bound + 1e-9 * bound.abs().max(1.0),
            "re-solve {k}: {} above {bound}",
            report.solves[k].cost
        );
    }
    let outcome = opt.task.evaluate(model, &report.states);
    assert!(outcome.achieved, "{outcome:?}");
}

/// The line search rolls its trial steps out in batches, one per worker: on one worker (one
/// by one) and on three it accepts the same steps, so the hopper's iterates, with their
/// backtracked and rejected steps, are the same to the bit.
#[test]
fn the_line_search_accepts_the_same_steps_on_one_or_three_workers() {
    let mut problem = load_problem(&path("hopper")).unwrap();
    let opt = optimization(&problem).unwrap();
    let solve_on = |sim: &mut stiction::step::Simulator, threads: usize| {
        let params = IlqrParams {
            threads,
            ..opt.params.clone()
        };
        stiction::optimize::solve(sim, &opt.problem, &opt.initial_controls, &params).unwrap()
    };
    let one = solve_on(&mut problem.simulator, 1);
    let three = solve_on(&mut problem.simulator, 3);
    let steps = |r: &IlqrReport| {
        r.iterations
            .iter()
            .map(|s| (s.alpha, s.cost, s.accepted))
            .collect::<Vec<_>>()
    };
    assert_eq!(steps(&one), steps(&three));
    assert!(one.iterations.iter().any(|s| s.accepted && s.alpha < 1.0));
    assert!(one.iterations.iter().any(|s| !s.accepted));
    assert_eq!(one.trajectory.controls, three.trajectory.controls);
}
