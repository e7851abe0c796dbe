//! The point-contact cases of `shared/CASES.md` (ICF Sec. IX; Castro 2020 note), run from the
//! shipped problem files, asserting the physics each must show.

mod common;
use common::problem;

use stiction::contact::Approximation;
use stiction::problem::Problem;
use stiction::simulate::{run, Recording};
use stiction::step::Speculative;

const G: f64 = 9.81;

fn simulate(name: &str, approximation: Approximation, dt: f64) -> (Problem, Recording) {
    let mut p = problem(name, approximation, dt);
    let rec = run(&mut p.simulator, &p.initial_state, p.duration, |_, _| {})
        .unwrap_or_else(|e| panic!("{name} with {approximation} at δt = {dt}: {e}"));
    for s in &rec.states {
        assert!(
            s.q.iter().chain(s.v.iter()).all(|x| x.is_finite()),
            "{name}: non-finite state at t = {}",
            s.t
        );
    }
    (p, rec)
}

/// Σ fn (N) of step k.
fn total_normal_force(rec: &Recording, k: usize) -> f64 {
    rec.reports[k].contacts.iter().map(|c| c.normal_force).sum()
}

fn max_slip(rec: &Recording, k: usize) -> f64 {
    rec.reports[k]
        .contacts
        .iter()
        .map(|c| c.slip)
        .fold(0.0, f64::max)
}

mod conveyor_oscillating {
    use super::*;

    /// Sliding when the box moves relative to the belt faster than this (m/s); stiction keeps
    /// the slip below the stiction tolerance v_s = 1e-4 m/s.
    const SLIDING: f64 = 1e-3;
    const MASS: f64 = 1.0;

    fn sliding(rec: &Recording) -> Vec<bool> {
        (0..rec.reports.len())
            .map(|k| max_slip(rec, k) > SLIDING)
            .collect()
    }

    /// ICF Fig. 2: Lagged has no vertical motion and the normal force balances the weight in
    /// stick and in slip.
    #[test]
    fn lagged_has_no_vertical_motion_and_weight_is_balanced() {
        let (_, rec) = simulate("conveyor-oscillating", Approximation::Lagged, 0.01);
        let slide = sliding(&rec);
        let transitions = (1..slide.len())
            .filter(|&k| slide[k] != slide[k - 1])
            .count();
        assert!(
            transitions >= 4,
            "stick-slip transitions expected, saw {transitions}"
        );
        assert!(slide.iter().any(|&s| s) && slide.iter().any(|&s| !s));
        for k in 0..rec.reports.len() {
            let t = rec.states[k + 1].t;
            if t <= 0.1 {
                continue;
            }
            let vz = rec.states[k + 1].v[5];
            assert!(vz.abs() < 1e-4, "t = {t}: v_z = {vz}");
            let after_transition = (1..=2).any(|j| k >= j && slide[k + 1 - j] != slide[k - j]);
            if !after_transition {
                let f = total_normal_force(&rec, k);
                assert!((f - MASS * G).abs() < 0.01 * MASS * G, "t = {t}: Σfn = {f}");
            }
        }
    }

    /// ICF Table I: SAP and Similar glide while sliding.
    #[test]
    fn similar_and_sap_glide_while_sliding() {
        for approximation in [Approximation::Similar, Approximation::Sap] {
            let (_, rec) = simulate("conveyor-oscillating", approximation, 0.01);
            let slide = sliding(&rec);
            let max_vz = (0..rec.reports.len())
                .filter(|&k| slide[k] && rec.states[k + 1].t > 0.1)
                .map(|k| rec.states[k + 1].v[5].abs())
                .fold(0.0, f64::max);
            assert!(
                max_vz > 1e-3,
                "{approximation}: max |v_z| while sliding {max_vz}"
            );
        }
    }

    /// ICF Fig. 2's spurious normal-force transients: at the default settings SAP and Similar
    /// lift the box while sliding and land it at slip → stick, so their normal force peaks well
    /// above the weight (measured 25.2 N Similar, 49.1 N SAP at δt = 0.01; an independent
    /// implementation shows 45-448 N over its step sizes), where Lagged's stays at m g within
    /// 1 %. With the old default (the 1 cm margin in every problem) both stayed below 11.7 N.
    #[test]
    fn similar_and_sap_normal_force_spikes() {
        for (approximation, least) in [
            (Approximation::Similar, 2.0 * MASS * G),
            (Approximation::Sap, 4.0 * MASS * G),
        ] {
            let (_, rec) = simulate("conveyor-oscillating", approximation, 0.01);
            let peak = (0..rec.reports.len())
                .filter(|&k| rec.states[k + 1].t > 0.1)
                .map(|k| total_normal_force(&rec, k))
                .fold(0.0, f64::max);
            assert!(peak > least, "{approximation}: peak Σf_n {peak} N");
        }
    }

    /// Box x position (m) sampled every `every` steps.
    fn positions(dt: f64, sample: f64) -> Vec<f64> {
        let (_, rec) = simulate("conveyor-oscillating", Approximation::Lagged, dt);
        let every = (sample / dt).round() as usize;
        rec.states.iter().step_by(every).map(|s| s.q[0]).collect()
    }

    /// ICF Fig. 3: Lagged converges at first order in δt (slope of log e_q vs log δt in
    /// [0.8, 1.2]); reference: Lagged at δt = 2e-4, ten times below the smallest step.
    #[test]
    fn lagged_converges_at_first_order() {
        let steps = [2e-3, 1e-2, 5e-2];
        let reference = positions(2e-4, 5e-2);
        let errors: Vec<f64> = steps
            .iter()
            .map(|&dt| {
                let x = positions(dt, 5e-2);
                let n = x.len().min(reference.len());
                ((0..n).map(|i| (x[i] - reference[i]).powi(2)).sum::<f64>() / n as f64).sqrt()
            })
            .collect();
        let (lx, ly): (Vec<f64>, Vec<f64>) = steps
            .iter()
            .zip(&errors)
            .map(|(d, e)| (d.ln(), e.ln()))
            .unzip();
        let (mx, my) = (lx.iter().sum::<f64>() / 3.0, ly.iter().sum::<f64>() / 3.0);
        let slope = lx
            .iter()
            .zip(&ly)
            .map(|(x, y)| (x - mx) * (y - my))
            .sum::<f64>()
            / lx.iter().map(|x| (x - mx).powi(2)).sum::<f64>();
        assert!(
            (0.8..=1.2).contains(&slope),
            "slope {slope}, errors {errors:?}"
        );
    }
}

mod falling_sphere {
    use super::*;

    const RADIUS: f64 = 0.025;
    const MASS: f64 = 0.5;
    const MU: f64 = 0.5;

    /// (index of the first step with a contact force, its horizontal speed U0, index of the
    /// first rolling step, normal impulse accumulated in between).
    fn touchdown_and_rolling(rec: &Recording) -> (usize, f64, usize, f64) {
        let touch = (0..rec.reports.len())
            .find(|&k| total_normal_force(rec, k) > 0.0)
            .expect("sphere touches down");
        let u0 = rec.states[touch].v[3];
        let rolling = |k: usize| {
            let v = &rec.states[k + 1].v;
            (v[3] - v[1] * RADIUS).abs() < 1e-3
        };
        let roll = (touch..rec.reports.len())
            .find(|&k| rolling(k))
            .expect("sphere starts rolling");
        for k in roll..rec.reports.len() {
            assert!(rolling(k), "slips again at t = {}", rec.states[k + 1].t);
        }
        let dt = rec.states[1].t - rec.states[0].t;
        let impulse = (touch..roll).map(|k| total_normal_force(rec, k) * dt).sum();
        (touch, u0, roll, impulse)
    }

    /// ICF Sec. IX-B: slides, then rolls at 5/7 of the touchdown speed (angular momentum about
    /// the contact point is conserved), for every model at δt = 4e-4.
    #[test]
    fn rolls_at_five_sevenths_of_touchdown_speed() {
        for approximation in Approximation::ALL {
            let (_, rec) = simulate("falling-sphere", approximation, 4e-4);
            let (_, u0, _, _) = touchdown_and_rolling(&rec);
            let vx = rec.states.last().unwrap().v[3];
            let expected = 5.0 / 7.0 * u0;
            assert!(
                (vx - expected).abs() < 0.005 * expected,
                "{approximation}: v_x {vx}, 5/7 U0 {expected}"
            );
        }
    }

    /// Strongly coupled models (Similar, SAP) stop slipping when the friction impulse
    /// μ Σγ_n has taken out 2/7 of the momentum: Σγ_n = 2 m U0 / (7 μ).
    #[test]
    fn strongly_coupled_models_roll_when_impulse_reaches_two_sevenths() {
        for approximation in [Approximation::Similar, Approximation::Sap] {
            let (_, rec) = simulate("falling-sphere", approximation, 4e-4);
            let (_, u0, _, impulse) = touchdown_and_rolling(&rec);
            let expected = 2.0 * MASS * u0 / (7.0 * MU);
            assert!(
                (impulse - expected).abs() < 0.05 * expected,
                "{approximation}: Σγ_n {impulse}, expected {expected}"
            );
        }
    }

    /// At δt = 2e-3 every model still ends within 2% of 5/7 of the touchdown speed.
    #[test]
    fn large_steps_end_near_five_sevenths() {
        for approximation in Approximation::ALL {
            let (_, rec) = simulate("falling-sphere", approximation, 2e-3);
            let (_, u0, _, _) = touchdown_and_rolling(&rec);
            let vx = rec.states.last().unwrap().v[3];
            let expected = 5.0 / 7.0 * u0;
            assert!(
                (vx - expected).abs() < 0.02 * expected,
                "{approximation}: v_x {vx}, 5/7 U0 {expected}"
            );
        }
    }

    /// Action at a distance (ICF Fig. 5): with every candidate in their problems
    /// (`speculative = all`), SAP and Similar touch down before Lagged.
    #[test]
    fn with_all_candidates_sap_and_similar_touch_down_before_lagged() {
        let touch = |a| {
            let mut p = problem("falling-sphere", a, 2e-3);
            p.simulator.settings.speculative = Speculative::All;
            let rec = run(&mut p.simulator, &p.initial_state, p.duration, |_, _| {}).unwrap();
            touchdown_and_rolling(&rec).0
        };
        let lagged = touch(Approximation::Lagged);
        assert!(touch(Approximation::Similar) < lagged);
        assert!(touch(Approximation::Sap) < lagged);
    }

    /// Largest upward speed of the sphere (m/s) after its first contact.
    fn rebound(rec: &Recording) -> f64 {
        let touch = (0..rec.reports.len())
            .find(|&k| total_normal_force(rec, k) > 0.0)
            .expect("sphere touches down");
        rec.states[touch + 1..]
            .iter()
            .map(|s| s.v[5])
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// At the default settings (only touching pairs in SAP's and Similar's problems) the
    /// strongly coupled models bounce off the ground while sliding, as an independent
    /// implementation of the same models does (upward speeds of 0.17-0.39 m/s; measured here
    /// 0.196 m/s Similar, 0.371 m/s SAP at δt = 2e-3); Lagged lands (below 1 cm/s; measured
    /// 0.8 mm/s). Before this default (the whole 1 cm margin in every problem) SAP and Similar
    /// were caught millimetres above the ground and never rose.
    #[test]
    fn sap_and_similar_bounce_at_default_settings() {
        for (approximation, range) in [
            (Approximation::Similar, 0.17..0.39),
            (Approximation::Sap, 0.17..0.39),
            (Approximation::Lagged, -1.0..0.01),
        ] {
            let (_, rec) = simulate("falling-sphere", approximation, 2e-3);
            let up = rebound(&rec);
            assert!(range.contains(&up), "{approximation}: rebound {up} m/s");
        }
    }
}

mod sliding_rod {
    use super::*;

    const STICTION_TOLERANCE: f64 = 1e-4;

    /// Time of the first stick (slip below v_s while pushing: the jam) and the first time
    /// after it that the tip is more than 1 mm above the ground.
    fn jam_and_lift_off(rec: &Recording) -> (Option<f64>, Option<f64>) {
        let mut jam = None;
        for (k, r) in rec.reports.iter().enumerate() {
            let t = rec.states[k + 1].t;
            let pushing = r.contacts.iter().any(|c| c.normal_force > 0.0);
            if jam.is_none() && pushing && r.contacts.iter().any(|c| c.slip < STICTION_TOLERANCE) {
                jam = Some(t);
            }
            if jam.is_some() && !pushing && r.contacts.iter().all(|c| c.penetration < -1e-3) {
                return (jam, Some(t));
            }
        }
        (jam, None)
    }

    /// Time of the first step ending with a pushing contact that slips less than v_s (s), and
    /// the peak Σf_n (N).
    fn jam_and_peak(rec: &Recording) -> (Option<f64>, f64) {
        let jam = rec.reports.iter().enumerate().find_map(|(k, r)| {
            r.contacts
                .iter()
                .any(|c| c.normal_force > 0.0 && c.slip < STICTION_TOLERANCE)
                .then(|| rec.states[k + 1].t)
        });
        let peak = (0..rec.reports.len())
            .map(|k| total_normal_force(rec, k))
            .fold(0.0, f64::max);
        (jam, peak)
    }

    /// The rod starts touching (ICF Sec. IX-C): Lagged jams at 0.0204 s at δt = 4e-5 and peaks
    /// at 709 N at δt = 1e-5 as an independent implementation does (within 1 %: measured
    /// 0.02056 s and 710.3 N); started 0.25 mm above the ground it jammed at 0.0225 s and
    /// peaked at 517 N. At δt = 1e-5 SAP and Similar jam within 10 % of Lagged's time
    /// (measured 0.01741 s and 0.01684 s against 0.01822 s).
    #[test]
    fn touching_start_jam_time_and_peak_force() {
        let (jam, _) = jam_and_peak(&simulate("sliding-rod", Approximation::Lagged, 4e-5).1);
        let jam = jam.expect("Lagged jams at δt = 4e-5");
        assert!((jam - 0.0204).abs() < 0.01 * 0.0204, "jam at {jam} s");
        let (lagged, peak) = jam_and_peak(&simulate("sliding-rod", Approximation::Lagged, 1e-5).1);
        assert!((peak - 709.0).abs() < 0.01 * 709.0, "peak {peak} N");
        let lagged = lagged.expect("Lagged jams at δt = 1e-5");
        for approximation in [Approximation::Sap, Approximation::Similar] {
            let (jam, _) = jam_and_peak(&simulate("sliding-rod", approximation, 1e-5).1);
            let jam = jam.unwrap_or(f64::INFINITY);
            assert!(
                (jam - lagged).abs() < 0.1 * lagged,
                "{approximation}: jam at {jam} s, Lagged at {lagged} s"
            );
        }
    }

    /// ICF Sec. IX-C without dissipation: no failure and finite values at every step size; the
    /// rod jams and jumps with Lagged at δt ≤ 1.6e-4 and with every model at δt = 1e-5; Lagged's
    /// jam time converges as δt decreases.
    #[test]
    fn rod_jams_and_jumps() {
        let mut lagged_jams = Vec::new();
        for approximation in Approximation::ALL {
            for dt in [6.4e-4, 1.6e-4, 4e-5, 1e-5] {
                let (_, rec) = simulate("sliding-rod", approximation, dt);
                let (jam, lift) = jam_and_lift_off(&rec);
                let must_jam =
                    dt == 1e-5 || (approximation == Approximation::Lagged && dt <= 1.6e-4);
                if must_jam {
                    assert!(
                        jam.is_some() && lift.is_some(),
                        "{approximation} δt {dt}: jam {jam:?} lift-off {lift:?}"
                    );
                }
                if approximation == Approximation::Lagged && dt <= 1.6e-4 {
                    lagged_jams.push(jam.unwrap());
                }
            }
        }
        assert!(
            lagged_jams.windows(2).all(|w| w[1] < w[0]),
            "jam times not monotone: {lagged_jams:?}"
        );
        let (a, b) = (lagged_jams[1], lagged_jams[2]);
        assert!((a - b).abs() < 0.2 * b, "jam times {lagged_jams:?}");
    }
}

mod sliding_box {
    use super::*;

    /// Castro's note: decelerates at μg and stops at v0/(μg); Lagged's normal force is the
    /// weight within 1%.
    #[test]
    fn stops_at_v0_over_mu_g_with_weight_balanced() {
        let t_stop = 1.0 / (0.5 * G);
        for dt in [1e-2, 1e-3] {
            let (_, rec) = simulate("sliding-box", Approximation::Lagged, dt);
            let k = (0..rec.reports.len())
                .find(|&k| rec.states[k + 1].v[3] < 1e-3)
                .expect("box stops");
            let t = rec.states[k + 1].t;
            assert!(
                (t - t_stop).abs() <= 2.0 * dt,
                "δt {dt}: stops at {t}, expected {t_stop}"
            );
            for k in 0..rec.reports.len() {
                let f = total_normal_force(&rec, k);
                assert!(
                    (f - G).abs() < 0.01 * G,
                    "δt {dt}, t = {}: Σfn = {f}",
                    rec.states[k + 1].t
                );
            }
            let v_half = rec.states.iter().find(|s| s.t >= 0.1 - 1e-12).unwrap().v[3];
            assert!(
                (v_half - (1.0 - 0.5 * G * 0.1)).abs() < 0.5 * G * 2.0 * dt,
                "deceleration is μg: v(0.1) = {v_half}"
            );
        }
    }

    /// Resting on four corners, each point carries the pair's stiffness: the box sinks
    /// m g / (4 k), and the weight is balanced to 1e-6 with the solver at ε_r = 1e-10.
    #[test]
    fn weight_is_balanced_at_rest() {
        let mut p = problem("sliding-box", Approximation::Lagged, 1e-3);
        p.simulator.settings.solver = stiction::solver::SolverParams::default()
            .with_relative_tolerance(1e-10)
            .unwrap();
        p.initial_state.v.fill(0.0);
        let rec = run(&mut p.simulator, &p.initial_state, 0.05, |_, _| {}).unwrap();
        let last = rec.reports.len() - 1;
        let f = total_normal_force(&rec, last);
        assert!((f - G).abs() < 1e-6 * G, "Σfn = {f}");
        for c in &rec.reports[last].contacts {
            assert!(
                (c.penetration - G / (4.0 * 1e7)).abs() < 1e-3 * G / 4e7,
                "penetration {}",
                c.penetration
            );
        }
    }
}

mod conveyor_constant {
    use super::*;

    /// Steady state at δt = 1e-3 (ICF eq. (41), Table I): Lagged sinks m g/(n k); SAP glides at
    /// μ(δt + τ_d)‖v_t‖ and Similar at μ δt ‖v_t‖.
    #[test]
    fn steady_penetration_and_gliding() {
        let (dt, mu, slip, tau_d) = (1e-3, 0.5, 0.1, 1e-3);
        let cases = [
            (Approximation::Lagged, G / (4.0 * 1e7), 0.01),
            (Approximation::Sap, -mu * (dt + tau_d) * slip, 0.05),
            (Approximation::Similar, -mu * dt * slip, 0.05),
        ];
        for (approximation, expected, tolerance) in cases {
            let (_, rec) = simulate("conveyor-constant", approximation, dt);
            let last = rec.reports.last().unwrap();
            assert_eq!(last.contacts.len(), 4);
            let x = last.contacts.iter().map(|c| c.penetration).sum::<f64>() / 4.0;
            assert!(
                (x - expected).abs() < tolerance * expected.abs(),
                "{approximation}: penetration {x}, expected {expected}"
            );
        }
    }
}
