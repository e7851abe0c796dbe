//! ICF ext. Sec. XII-D (Fig. 25) after Kurtz & Lin (IROS 2022): contact-implicit iLQR through
//! pressure-field contact. A 7-joint arm moves a ball on a plane to a target in 0.5 s at
//! δt = 10 ms with no contact schedule: the iLQR of [`crate::optimize`] on
//! `problems/panda-push-ball.toml` (example-robot-data's Panda, its geometries rigid
//! pressure-field meshes, the ball and the ground compliant).
//!
//! Two figures come from one solve: `panda-push-ball`, the top view (y against x) of the ball's
//! centre and of the hand's point between the fingertips, for the initial guess and the
//! optimized controls; and `panda-push-ball-cost`, the cost J of every iteration (accepted or
//! not) on a log scale. Their numbers: the ball's final distance to the target, the cost's fall,
//! the iterations and the wall time, the steps where the hand pushes the ball through a
//! pressure patch, and the share of the ball's contact force carried by patch polygons.
//!
//! The solve runs once per process and quality: the second figure reuses it.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use nalgebra::Vector3;

use super::{number, Loader, PaperFigure, Quality};
use crate::error::{Error, Result};
use crate::multibody::{forward_kinematics, BodyId, MultibodyData, MultibodyModel};
use crate::optimize::ilqr::IterationStats;
use crate::optimize::{optimize_problem, OptimizeRun};
use crate::report::plot::{Curve, LinePanel};
use crate::step::{State, StepReport};

/// The shipped problem.
const CASE: &str = "panda-push-ball";
/// iLQR iterations of the quick version: enough for the first accepted steps through contact.
const QUICK_ITERATIONS: usize = 3;
/// The ball's body in the problem.
const BALL: &str = "ball";
/// The body carrying the hand: the URDF's `panda_hand` is fixed to link 7 and merged into it.
const HAND: &str = "panda_link7";
/// The point between the fingertips (`panda_hand_tcp` of the URDF) in link 7's frame (m): the
/// hand 0.107 m along link 7's z axis, the point 0.1034 m further.
const TCP: [f64; 3] = [0.0, 0.0, 0.2104];
/// What the paper reports about the solve (ICF ext. Sec. XII-D; the figure has no axes).
const PAPER_SOLVE: &str = "\"efficiently solve[s] for an optimal trajectory involving contact between the arm and the ball without explicitly dictating a contact sequence\" (no numbers; Fig. 25 shows frames)";

/// One solve and what the figures draw of it.
#[derive(Debug)]
struct PushBallSolve {
    /// The solved problem.
    run: OptimizeRun,
    /// The initial guess rolled out: states (T + 1).
    guess: Vec<State>,
    /// The initial guess's step reports (T).
    guess_reports: Vec<StepReport>,
    /// The ball's target (m, world).
    target: Vector3<f64>,
    /// Wall time of the solve (s).
    wall_s: f64,
}

/// Solves made in this process, per quality.
static SOLVES: Mutex<Vec<(Quality, Arc<PushBallSolve>)>> = Mutex::new(Vec::new());

/// The solve of `quality`, made now or earlier in this process.
fn solve(load: Loader<'_>, quality: Quality) -> Result<Arc<PushBallSolve>> {
    let cached = SOLVES.lock().ok().and_then(|s| {
        s.iter()
            .find(|(q, _)| *q == quality)
            .map(|(_, s)| s.clone())
    });
    if let Some(s) = cached {
        return Ok(s);
    }
    let problem = load(CASE)?;
    let mut sim = crate::optimize::ilqr::clone_simulator(&problem.simulator)?;
    let start = Instant::now();
    let run = optimize_problem(
        problem,
        |o| {
            if quality == Quality::Quick {
                o.params.max_iterations = QUICK_ITERATIONS;
            }
        },
        &mut |_| std::ops::ControlFlow::Continue(()),
    )?;
    let wall_s = start.elapsed().as_secs_f64();
    let mut guess = vec![run.problem.initial_state.clone()];
    let mut guess_reports = Vec::new();
    for u in &run.optimization.initial_controls {
        let (next, report) = sim.step(guess.last().expect("invariant: x_0 is there"), u)?;
        guess.push(next);
        guess_reports.push(report);
    }
    let target = run
        .optimization
        .task
        .checks
        .first()
        .map(|c| c.target)
        .ok_or_else(|| Error::invalid("optimize.task", CASE, "the ball's target is missing"))?;
    let solved = Arc::new(PushBallSolve {
        run,
        guess,
        guess_reports,
        target,
        wall_s,
    });
    if let Ok(mut s) = SOLVES.lock() {
        s.push((quality, solved.clone()));
    }
    Ok(solved)
}

/// World position (m) of `point` (body frame, m) of body `body` along `states`.
fn path(
    model: &MultibodyModel<f64>,
    body: usize,
    point: &Vector3<f64>,
    states: &[State],
) -> Vec<Vector3<f64>> {
    let mut data = MultibodyData::new(model);
    states
        .iter()
        .map(|x| {
            forward_kinematics(model, &mut data, &x.q, &x.v);
            data.X_WB[body].transform_point(point)
        })
        .collect()
}

/// A top-view curve (x, y) of `points`.
fn top_view(name: &str, points: &[Vector3<f64>]) -> Curve {
    Curve {
        name: name.to_string(),
        points: points.iter().map(|p| (p.x, p.y)).collect(),
    }
}

/// The target drawn as a cross 1 cm wide (a gap between its two strokes).
fn target_cross(target: &Vector3<f64>) -> Curve {
    let (x, y, h) = (target.x, target.y, 0.005);
    Curve {
        name: "target".to_string(),
        points: vec![
            (x - h, y),
            (x + h, y),
            (x, f64::NAN),
            (x, y - h),
            (x, y + h),
        ],
    }
}

/// Hand–ball contact of the optimized rollout: steps with a patch between a Panda body and
/// the ball, the largest patch force (N), and the share of the ball's total normal force
/// (over all steps and contacts) that patch polygons carry.
fn contact_numbers(
    reports: &[StepReport],
    model: &MultibodyModel<f64>,
    ball: usize,
) -> (usize, f64, f64) {
    let ball = BodyId::Body(ball);
    // The other body of a pair with the ball, if the pair has the ball.
    let other = |a: BodyId, b: BodyId| match (a == ball, b == ball) {
        (true, _) => Some(b),
        (_, true) => Some(a),
        _ => None,
    };
    let is_panda = |id: BodyId| id != BodyId::World && model.name_of(id).starts_with("panda_");
    let mut steps = 0;
    let mut peak = 0.0f64;
    let (mut polygon_force, mut total_force) = (0.0, 0.0);
    for r in reports {
        let pushes: Vec<f64> = r
            .patches
            .iter()
            .filter(|p| other(p.body_a, p.body_b).is_some_and(is_panda))
            .map(|p| p.force.norm())
            .collect();
        steps += usize::from(!pushes.is_empty());
        peak = pushes.into_iter().fold(peak, f64::max);
        for c in r
            .contacts
            .iter()
            .filter(|c| other(c.body_a, c.body_b).is_some())
        {
            total_force += c.normal_force;
            if c.polygon.is_some() {
                polygon_force += c.normal_force;
            }
        }
    }
    let share = if total_force > 0.0 {
        polygon_force / total_force
    } else {
        f64::NAN
    };
    (steps, peak, share)
}

/// ICF ext. Sec. XII-D, Fig. 25: the top view of the ball and the hand, initial guess and
/// optimized.
pub(super) fn panda_push_ball(load: Loader<'_>, quality: Quality) -> Result<PaperFigure> {
    let s = solve(load, quality)?;
    let model = &s.run.problem.simulator.model;
    let body = |name: &str| {
        model
            .body_index(name)
            .ok_or_else(|| Error::invalid("figure body", name, "not a body of panda-push-ball"))
    };
    let (ball, hand) = (body(BALL)?, body(HAND)?);
    let states = &s.run.report.trajectory.states;
    let tcp = Vector3::from(TCP);
    let ball_path = path(model, ball, &Vector3::zeros(), states);
    let hand_path = path(model, hand, &tcp, states);
    let ball_guess = path(model, ball, &Vector3::zeros(), &s.guess);
    let hand_guess = path(model, hand, &tcp, &s.guess);
    let last = ball_path.last().copied().unwrap_or_default();
    let first = ball_path.first().copied().unwrap_or_default();
    let distance = (last - s.target).xy().norm();
    let (push_steps, peak, share) = contact_numbers(&s.run.report.trajectory.reports, model, ball);
    let (guess_push_steps, _, _) = contact_numbers(&s.guess_reports, model, ball);
    let dt = s.run.problem.simulator.settings.dt;
    let horizon = dt * s.run.report.trajectory.controls.len() as f64;
    let numbers = vec![
        number("dt".into(), "time step δt".into(), "10 ms", dt, "s"),
        number("horizon".into(), "horizon".into(), "0.5 s", horizon, "s"),
        number(
            "ball.start_distance".into(),
            "ball's distance to the target at t = 0 (x, y)".into(),
            "start and target not stated (Kurtz & Lin's Panda: 0.2 m)",
            (first - s.target).xy().norm(),
            "m",
        ),
        number(
            "ball.final_distance".into(),
            "ball's distance to the target at the end (x, y)".into(),
            "reached (Fig. 25)",
            distance,
            "m",
        ),
        number(
            "hand.push_steps".into(),
            "steps in which the hand pushes the ball through a pressure patch".into(),
            "contact found by the optimizer, no schedule",
            push_steps as f64,
            "1",
        ),
        number(
            "guess.push_steps".into(),
            "steps of the initial guess in which the hand touches the ball".into(),
            "no contact schedule: the optimizer starts from the initial guess's contacts",
            guess_push_steps as f64,
            "1",
        ),
        number(
            "hand.peak_force".into(),
            "largest hand–ball patch force".into(),
            "not reported",
            peak,
            "N",
        ),
        number(
            "ball.polygon_share".into(),
            "share of the ball's normal force carried by pressure-patch polygons".into(),
            "all geometries hydroelastic",
            share,
            "1",
        ),
    ];
    let mut notes = vec![
        "The seed names the Kinova Gen3; example-robot-data's Kinova is the 6-joint Jaco 2, so the arm is its 7-joint Franka Panda, with Kurtz & Lin's Panda set-up (ball R = 10 cm, 0.258 kg, from x = 0.6 m to 0.8 m, E = 5 MPa, their costs); problems/panda-push-ball.toml says what differs.".to_string(),
        "No reach term: the hand starts about 12 mm behind the ball and the initial guess (0.9 of the gravity torques, as Kurtz & Lin's Kinova script) lets the arm sag onto the ball and the ground.".to_string(),
        "Every contact is a pressure-field polygon except the two closed fingers against each other (two rigid geometries: point contact, at most 0.2 N).".to_string(),
    ];
    if quality == Quality::Quick {
        notes.push(format!(
            "Quick version: {QUICK_ITERATIONS} iLQR iterations; the ball is not yet at the target."
        ));
    }
    Ok(PaperFigure {
        name: "panda-push-ball",
        title: format!(
            "ICF ext. Fig. 25 (Panda): top view, δt = {dt} s, {} iterations",
            s.run.report.iterations.len()
        ),
        x_label: "x (m)",
        panels: vec![LinePanel {
            y_label: "y (m)",
            curves: vec![
                top_view("ball, optimized", &ball_path),
                top_view("hand (between fingertips), optimized", &hand_path),
                top_view("ball, initial guess", &ball_guess),
                top_view("hand, initial guess", &hand_guess),
                target_cross(&s.target),
            ],
        }],
        equal_aspect: true,
        numbers,
        notes,
    })
}

/// The cost of every iteration of the same solve (log10 J), with the solve's numbers.
pub(super) fn panda_push_ball_cost(load: Loader<'_>, quality: Quality) -> Result<PaperFigure> {
    let s = solve(load, quality)?;
    let report = &s.run.report;
    let point = |i: &IterationStats| (i.iteration as f64, i.cost.log10());
    let (accepted, rejected): (Vec<_>, Vec<_>) = report.iterations.iter().partition(|i| i.accepted);
    let mut best = vec![(0.0, report.initial_cost.log10())];
    best.extend(accepted.iter().map(|i| point(i)));
    let final_cost = report.trajectory.cost;
    let numbers = vec![
        number(
            "cost.initial".into(),
            "cost J of the initial guess".into(),
            "not reported",
            report.initial_cost,
            "1",
        ),
        number(
            "cost.final".into(),
            "cost J after the solve".into(),
            "not reported",
            final_cost,
            "1",
        ),
        number(
            "cost.ratio".into(),
            "initial over final cost".into(),
            "not reported",
            report.initial_cost / final_cost,
            "1",
        ),
        number(
            "iterations".into(),
            "iLQR iterations (accepted and rejected)".into(),
            PAPER_SOLVE,
            report.iterations.len() as f64,
            "1",
        ),
        number(
            "accepted".into(),
            "accepted iterations".into(),
            "not reported",
            accepted.len() as f64,
            "1",
        ),
        number(
            "wall".into(),
            "wall time of the solve on this machine".into(),
            "not reported (Drake, Kurtz & Lin's Python iLQR)",
            s.wall_s,
            "s",
        ),
    ];
    Ok(PaperFigure {
        name: "panda-push-ball-cost",
        title: format!("ICF ext. Sec. XII-D (Panda): cost per iLQR iteration, {}", report.status.name()),
        x_label: "iteration",
        panels: vec![LinePanel {
            y_label: "log10 J",
            curves: vec![
                Curve {
                    name: "cost after each accepted iteration".into(),
                    points: best,
                },
                Curve {
                    name: "rejected iteration (cost kept, μ raised)".into(),
                    points: rejected.iter().map(|i| point(i)).collect(),
                },
            ],
        }],
        equal_aspect: false,
        numbers,
        notes: vec![format!(
            "J = Σ_t [½‖p_ball − p*‖²_W + ½ uᵀRu + ½ vᵀW_v v] + terminal terms: Kurtz & Lin's costs with weights 2 δt Q (running) and 2 Q_f (terminal); {} iterations, stopped: {}.",
            report.iterations.len(),
            report.status.name()
        )],
    })
}
