#![allow(non_snake_case)]
//! The sweep of docs/steppers.md ("Two parallel line contacts on one cylinder"): a 12.33 kg
//! cylinder (r = 5 cm, L = 20 cm) lying on the ground rolls at 0.32 m/s (ω = 6.4 rad/s) into
//! the −x face of a fixed 10 cm box at x = 0.35 m covering y ∈ [−0.27, −0.17], its axis at
//! y = −0.15 (off-centre: the face covers 8 of its 20 cm) or −0.22 (centred), over
//! μ ∈ {0.3, 0.5, 0.8}, e_r ∈ {0.01, 0.05} m and δt ∈ {10, 5, 1} ms, 0.6 s each, with the ncp
//! stepper. Prints one line per run (converged or the time of the failing step, the most
//! Newton iterations of a step, the deepest penetration) and asserts that every run that
//! completes keeps its contacts apart to 1e-11 m.
//!
//! `cargo test --test ncp_cylinder_sweep -- --ignored --nocapture` (a few minutes);
//! `NCP_SWEEP=0.3,0.01,1,off` runs one configuration (μ, e_r in m, δt in ms, off|centred).

use std::ops::ControlFlow;
use std::path::Path;

use stiction::ncp::run_steps;
use stiction::problem::parse_problem;
use stiction::simulate::RunEnd;

/// Deepest penetration allowed in a completed run (m).
const PENETRATION: f64 = 1e-11;

/// The scene of one run: the cylinder's axis at `axis_y` (m).
fn scene(mu: f64, e_r: f64, dt: f64, axis_y: f64) -> String {
    format!(
        r#"
        [simulation]
        dt = {dt}
        duration = 0.6
        stepper = "ncp"
        [contact]
        friction = {mu}
        [ncp]
        e_r = {e_r}
        [[body]]
        name = "cylinder"
        mass = 12.33
        position = [0.2, {axis_y}, 0.05]
        rpy_deg = [90.0, 0.0, 0.0]
        velocity = [0.32, 0.0, 0.0]
        angular_velocity = [0.0, 6.4, 0.0]
        [[geometry]]
        name = "cylinder"
        body = "cylinder"
        shape = "cylinder"
        radius = 0.05
        length = 0.2
        [[geometry]]
        name = "obstacle"
        shape = "box"
        size = [0.1, 0.1, 0.1]
        position = [0.4, -0.22, 0.05]
        [[geometry]]
        name = "ground"
        shape = "half-space"
    "#
    )
}

/// What one run did.
struct Outcome {
    /// Time of the failing step (s), `None` when all steps completed.
    failed_at: Option<f64>,
    /// Most Newton iterations of one step.
    max_iterations: usize,
    /// Newton iterations of all steps.
    total_iterations: usize,
    /// Deepest penetration of any contact (m, ≥ 0).
    penetration: f64,
}

fn run_one(mu: f64, e_r: f64, dt_ms: f64, axis_y: f64) -> Outcome {
    let text = scene(mu, e_r, dt_ms * 1e-3, axis_y);
    let p = parse_problem(&text, Path::new("sweep.toml")).expect("valid scene");
    let mut sim = p.ncp_simulator().expect("scene fits the ncp stepper");
    let steps = (p.duration / (dt_ms * 1e-3)).round() as usize;
    let (mut max_iterations, mut total_iterations, mut penetration) = (0, 0, 0.0_f64);
    let run = run_steps(&mut sim, &p.initial_state, steps, |_, report| {
        max_iterations = max_iterations.max(report.stats.iterations);
        total_iterations += report.stats.iterations;
        for c in &report.contacts {
            penetration = penetration.max(-c.gap);
        }
        ControlFlow::Continue(())
    });
    let failed_at = match run.end {
        RunEnd::Failed(_) => Some(run.recording.states.last().expect("initial state").t),
        _ => None,
    };
    Outcome {
        failed_at,
        max_iterations,
        total_iterations,
        penetration,
    }
}

/// The configurations of the sweep: (μ, e_r (m), δt (ms), off-centre).
fn configurations() -> Vec<(f64, f64, f64, bool)> {
    if let Ok(one) = std::env::var("NCP_SWEEP") {
        let f: Vec<&str> = one.split(',').collect();
        let num = |i: usize| f[i].trim().parse::<f64>().expect("NCP_SWEEP=mu,e_r,dt_ms,off");
        return vec![(num(0), num(1), num(2), f[3].trim() == "off")];
    }
    let mut all = Vec::new();
    for off in [true, false] {
        for dt in [10.0, 5.0, 1.0] {
            for mu in [0.3, 0.5, 0.8] {
                for e_r in [0.01, 0.05] {
                    all.push((mu, e_r, dt, off));
                }
            }
        }
    }
    all
}

#[test]
#[ignore = "a study of a few minutes: cargo test --test ncp_cylinder_sweep -- --ignored --nocapture"]
fn cylinder_rolling_into_a_box_face_sweep() {
    let configurations = configurations();
    let mut converged = 0;
    println!("impact    μ    e_r (m) δt (ms)  result        max it  total it  penetration (m)");
    for &(mu, e_r, dt, off) in &configurations {
        let o = run_one(mu, e_r, dt, if off { -0.15 } else { -0.22 });
        let result = match o.failed_at {
            None => {
                converged += 1;
                assert!(
                    o.penetration <= PENETRATION,
                    "μ {mu} e_r {e_r} δt {dt}: penetration {}",
                    o.penetration
                );
                "converged".to_string()
            }
            Some(t) => format!("fails {t:.3} s"),
        };
        println!(
            "{:<9} {mu:.1}  {e_r:.2}    {dt:>4}     {result:<13} {:>6}  {:>8}  {:.1e}",
            if off { "off" } else { "centred" },
            o.max_iterations,
            o.total_iterations,
            o.penetration
        );
    }
    println!("{converged} of {} runs converged", configurations.len());
}

mod probe {
    use super::*;
    use nalgebra::{DMatrix, DVector};
    use num_dual::Dual64;
    use stiction::ncp::step::recentre_separated;
    use stiction::ncp::{semismooth_newton, MixedComplementarityProblem, NcpSimulator, NcpSolverParams};
    use stiction::step::State;

    pub fn failing_step(mu: f64, e_r: f64, dt_ms: f64, off: bool) -> Option<(NcpSimulator, State)> {
        let text = scene(mu, e_r, dt_ms * 1e-3, if off { -0.15 } else { -0.22 });
        let p = parse_problem(&text, Path::new("sweep.toml")).expect("valid scene");
        let mut sim = p.ncp_simulator().expect("fits");
        let steps = (p.duration / (dt_ms * 1e-3)).round() as usize;
        let run = run_steps(&mut sim, &p.initial_state, steps, |_, _| ControlFlow::Continue(()));
        match run.end {
            RunEnd::Failed(_) => Some((sim, run.recording.states.last().unwrap().clone())),
            _ => None,
        }
    }

    /// (φ, ∂φ/∂a, ∂φ/∂b) of a complementarity function.
    pub type Cf<'a> = &'a dyn Fn(f64, f64) -> (f64, f64, f64);

    pub fn fb(a: f64, b: f64) -> (f64, f64, f64) {
        let r = a.hypot(b);
        if r > 0.0 {
            (a + b - r, 1.0 - a / r, 1.0 - b / r)
        } else {
            let g = 1.0 - std::f64::consts::FRAC_1_SQRT_2;
            (0.0, g, g)
        }
    }

    /// Chen, Chen & Kanzow's penalized FB, in our sign: λ φ_FB − (1−λ) a₊ b₊.
    pub fn cck(lambda: f64) -> impl Fn(f64, f64) -> (f64, f64, f64) {
        move |a, b| {
            let (f, ga, gb) = fb(a, b);
            let (ap, bp) = (a.max(0.0), b.max(0.0));
            (
                lambda * f - (1.0 - lambda) * ap * bp,
                lambda * ga - (1.0 - lambda) * if a > 0.0 { bp } else { 0.0 },
                lambda * gb - (1.0 - lambda) * if b > 0.0 { ap } else { 0.0 },
            )
        }
    }

    pub fn system(p: &MixedComplementarityProblem, z: &DVector<f64>, cf: Cf) -> (DVector<f64>, DMatrix<f64>) {
        let size = p.unknowns();
        let (eqs, pairs) = p.residual(z.as_slice());
        let ne = eqs.len();
        let vals: Vec<(f64, f64, f64)> = pairs.iter().map(|(a, b)| cf(*a, *b)).collect();
        let phi = DVector::from_iterator(size, eqs.iter().copied().chain(vals.iter().map(|v| v.0)));
        let mut J = DMatrix::zeros(size, size);
        let mut zd: Vec<Dual64> = z.iter().map(|x| Dual64::from(*x)).collect();
        for j in 0..size {
            zd[j].eps = 1.0;
            let (de, dp) = p.residual(&zd);
            zd[j].eps = 0.0;
            for (i, e) in de.iter().enumerate() {
                J[(i, j)] = e.eps;
            }
            for (k, ((a, b), v)) in dp.iter().zip(&vals).enumerate() {
                J[(ne + k, j)] = v.1 * a.eps + v.2 * b.eps;
            }
        }
        (phi, J)
    }

    #[derive(Clone, Copy)]
    pub struct Lm {
        pub max_iterations: usize,
        pub memory: usize,
        /// λ = min(c ‖Φ‖^power, cap)
        pub c: f64,
        pub power: f64,
        pub cap: f64,
        pub tolerance: f64,
        /// Marquardt's scaling: λ diag(JᵀJ) in place of λ I.
        pub scaled: bool,
    }

    /// LM with a nonmonotone Armijo search on ½‖Φ_cf‖²; returns (converged, iterations).
    pub fn lm(p: &MixedComplementarityProblem, z: &mut DVector<f64>, cf: Cf, o: &Lm, verbose: bool) -> (bool, usize) {
        let (mut phi, mut J) = system(p, z, cf);
        let mut merits = std::collections::VecDeque::new();
        for it in 0..o.max_iterations {
            let res = phi.amax();
            if verbose && (it % 20 == 0) {
                let g = J.tr_mul(&phi);
                println!("  it {it} ‖Φ‖∞ {res:.3e} ‖∇ψ‖ {:.3e}", g.norm());
            }
            if !res.is_finite() { return (false, it); }
            if res <= o.tolerance { return (true, it); }
            let psi = 0.5 * phi.norm_squared();
            if merits.len() == o.memory.max(1) { merits.pop_front(); }
            merits.push_back(psi);
            let reference = merits.iter().copied().fold(psi, f64::max);
            let g = J.tr_mul(&phi);
            let lambda = (o.c * phi.norm().powf(o.power)).min(o.cap);
            let mut H = J.tr_mul(&J);
            let floor = 1e-14 * H.diagonal().amax().max(1e-300);
            for i in 0..H.nrows() {
                let d = if o.scaled { H[(i, i)].max(1e-10) } else { 1.0 };
                H[(i, i)] += lambda * d + floor;
            }
            let Some(ch) = H.cholesky() else { return (false, it) };
            let d = -ch.solve(&g);
            let slope = g.dot(&d);
            let mut alpha = 1.0;
            let mut ok = false;
            for _ in 0..40 {
                let t = &*z + &d * alpha;
                let (pt, jt) = system(p, &t, cf);
                if 0.5 * pt.norm_squared() <= reference + 1e-4 * alpha * slope && pt.iter().all(|x| x.is_finite()) {
                    *z = t; phi = pt; J = jt; ok = true; break;
                }
                alpha *= 0.5;
            }
            if !ok { return (false, it); }
        }
        (phi.amax() <= o.tolerance, o.max_iterations)
    }

    pub fn smoothed(eps: f64) -> impl Fn(f64, f64) -> (f64, f64, f64) {
        move |a, b| {
            if eps == 0.0 { return fb(a, b); }
            let r = (a * a + b * b + 2.0 * eps * eps).sqrt();
            (a + b - r, 1.0 - a / r, 1.0 - b / r)
        }
    }

    /// Smoothing continuation with the given LM: ε = eps0, eps0/10, … then exact.
    pub fn continuation(p: &MixedComplementarityProblem, z: &mut DVector<f64>, eps0: f64, o: &Lm) -> (bool, usize) {
        let mut eps = eps0;
        let mut total = 0;
        while eps > o.tolerance {
            let start = z.clone();
            let level = Lm { tolerance: (0.1 * eps).max(o.tolerance), ..*o };
            let (ok, it) = lm(p, z, &smoothed(eps), &level, false);
            total += it;
            if !ok { z.copy_from(&start); }
            eps *= 0.1;
        }
        let (ok, it) = lm(p, z, &fb, o, false);
        (ok, total + it)
    }

    pub fn describe(p: &MixedComplementarityProblem, z: &DVector<f64>) {
        let (eqs, pairs) = p.residual(z.as_slice());
        let (phi, J) = system(p, z, &fb);
        println!("  ‖Φ‖∞ {:.3e}, ‖JᵀΦ‖ {:.3e}", phi.amax(), J.tr_mul(&phi).norm());
        let ne = eqs.len();
        let mut rows: Vec<(usize, f64)> = phi.iter().copied().enumerate().collect();
        rows.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
        for (i, v) in rows.iter().take(6) {
            if *i < ne { println!("  eq row {i}: {v:.3e}"); } else {
                let (a, b) = pairs[i - ne];
                println!("  cp {}: φ {v:.3e} a {a:.3e} b {b:.3e}", i - ne);
            }
        }
        for (k, (a, b)) in pairs.iter().enumerate() {
            if a.abs() < 1e-3 && b.abs() < 1e-3 {
                println!("  near-kink cp {k}: a {a:.3e} b {b:.3e}");
            }
        }
        for c in 0..p.pairs.len() {
            let s = p.pair_solution(z.as_slice(), c);
            println!("  pair {c}: a1 {:?} gap {:.3e} p {:?} σ {:.3e} l1 {:?} l2 {:?}", s.a1.as_slice(), s.gap, s.p, s.sigma, s.l1, s.l2);
        }
        let sv = J.clone().svd(false, false).singular_values;
        println!("  σ_min(J) {:.3e} σ_max {:.3e}", sv.min(), sv.max());
    }

    pub fn starts(sim: &mut NcpSimulator, state: &State) -> (MixedComplementarityProblem, Vec<(&'static str, DVector<f64>)>) {
        let (problem, warm) = sim.prepared_problem(state).unwrap();
        let cold = sim.initial_guess(&problem, true);
        let mut rw = warm.clone();
        recentre_separated(&problem, &mut rw);
        let mut rc = cold.clone();
        recentre_separated(&problem, &mut rc);
        (problem, vec![("warm", warm), ("cold", cold), ("warm-recentred", rw), ("cold-recentred", rc)])
    }

    #[test]
    #[ignore = "diagnosis"]
    fn diagnose() {
        for &(mu, e_r, dt, off) in &configurations() {
            let Some((mut sim, state)) = failing_step(mu, e_r, dt, off) else {
                println!("μ {mu} e_r {e_r} δt {dt} off {off}: no failure");
                continue;
            };
            println!("μ {mu} e_r {e_r} δt {dt} off {off}: fails at t = {:.4}", state.t);
            let (problem, starts) = starts(&mut sim, &state);
            let which = std::env::var("PROBE").unwrap_or_default();
            for (name, z0) in &starts {
                let mut z = z0.clone();
                let r = semismooth_newton(&mut z, problem.pairs.len(), &NcpSolverParams::default(), |z| problem.fischer_burmeister_system(z));
                println!(" {name}: semismooth_newton {:?}", r.as_ref().map(|s| s.iterations).map_err(|e| e.to_string()));
                if r.is_err() && which.contains("describe") { describe(&problem, &z); }
                if which.contains("only") { continue; }
                if which.contains("predict") {
                    for pn in [0.5, 2.0, 3.95, 6.0] {
                        for ground in [false, true] {
                            let mut z = z0.clone();
                            let o0 = problem.pair_offset(0);
                            z[o0 + 7] = pn;
                            if ground { let o1 = problem.pair_offset(1); z[o1 + 7] = 0.0; }
                            for (lmname, o) in [
                                ("lm-yf", Lm { max_iterations: 300, memory: 1, c: 1.0, power: 2.0, cap: 1e-6, tolerance: 1e-10, scaled: false }),
                                ("slm-yf", Lm { max_iterations: 300, memory: 1, c: 1.0, power: 2.0, cap: 1e-2, tolerance: 1e-10, scaled: true }),
                            ] {
                                let mut z = z.clone();
                                let (ok, it) = lm(&problem, &mut z, &fb, &o, false);
                                let s0 = problem.pair_solution(z.as_slice(), 0);
                                let s1 = problem.pair_solution(z.as_slice(), 1);
                                println!("   p_n {pn} ground0 {ground} {lmname}: {ok} {it} ‖Φ‖∞ {:.2e} wall p {:?} gap {:.1e}; ground p_n {:.3e} gap {:.2e}; v {:?}", system(&problem, &z, &fb).0.amax(), s0.p, s0.gap, s1.p[0], s1.gap, &z.as_slice()[..6]);
                            }
                        }
                    }
                    continue;
                }
                if which.contains("cont") {
                    for eps0 in [1e-1, 1e-2, 1e-3] {
                        for (lmname, o) in [
                            ("lm-yf", Lm { max_iterations: 100, memory: 1, c: 1.0, power: 2.0, cap: 1e-6, tolerance: 1e-10, scaled: false }),
                            ("slm-yf", Lm { max_iterations: 100, memory: 1, c: 1.0, power: 2.0, cap: 1e-2, tolerance: 1e-10, scaled: true }),
                            ("slm-yf-nm", Lm { max_iterations: 100, memory: 10, c: 1.0, power: 2.0, cap: 1e-2, tolerance: 1e-10, scaled: true }),
                            ("slm-yf-6", Lm { max_iterations: 100, memory: 1, c: 1.0, power: 2.0, cap: 1e-6, tolerance: 1e-10, scaled: true }),
                        ] {
                            let mut z = z0.clone();
                            let (ok, it) = continuation(&problem, &mut z, eps0, &o);
                            println!("   cont {eps0:.0e} {lmname}: {ok} {it} ‖Φ‖∞ {:.2e}", system(&problem, &z, &fb).0.amax());
                        }
                    }
                    continue;
                }
                for (label, cf) in [
                    ("fb", Box::new(fb) as Box<dyn Fn(f64, f64) -> (f64, f64, f64)>),
                    ("cck0.95", Box::new(cck(0.95))),
                    ("cck0.8", Box::new(cck(0.8))),
                ] {
                    for (lmname, o) in [
                        ("lm-yf", Lm { max_iterations: 500, memory: 10, c: 1.0, power: 2.0, cap: 1e-2, tolerance: 1e-10, scaled: false }),
                        ("lm-fy", Lm { max_iterations: 500, memory: 10, c: 1.0, power: 1.0, cap: 1e-1, tolerance: 1e-10, scaled: false }),
                        ("slm-yf", Lm { max_iterations: 500, memory: 10, c: 1.0, power: 2.0, cap: 1e-2, tolerance: 1e-10, scaled: true }),
                        ("slm-fy", Lm { max_iterations: 500, memory: 10, c: 1.0, power: 1.0, cap: 1e-1, tolerance: 1e-10, scaled: true }),
                        ("slm-yf-mono", Lm { max_iterations: 500, memory: 1, c: 1.0, power: 2.0, cap: 1e-2, tolerance: 1e-10, scaled: true }),
                    ] {
                        let mut z = z0.clone();
                        let (ok, it) = lm(&problem, &mut z, &*cf, &o, false);
                        // Polish with exact FB if cck converged.
                        let exact = if ok { lm(&problem, &mut z, &fb, &Lm { max_iterations: 100, memory: 1, c: 1.0, power: 2.0, cap: 1e-6, tolerance: 1e-10, scaled: false }, false) } else { (false, 0) };
                        println!("   {label} {lmname}: {ok} {it} exact {exact:?} ‖Φ‖∞ {:.2e}", system(&problem, &z, &fb).0.amax());
                    }
                }
            }
        }
    }
}
