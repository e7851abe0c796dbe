//! The geared finger of ICF ext. Sec. XII-C (`problems/geared-finger.toml`, the figures
//! `geared-finger` and `geared-finger-spectrum`): the clutch held by stiction through the
//! loading, driving and breakaway phases, asserted on the quick figures' numbers. Tolerances
//! are stated beside each assertion with the value measured when it was written.

#[path = "common/figures.rs"]
mod figures;

use figures::{n, quick};

/// The thread's lead per radian (m/rad): 0.5 mm per turn.
const LEAD_PER_RAD: f64 = 0.5e-3 / (2.0 * std::f64::consts::PI);

/// All three phases in one run (the quick figure, δt = 1 ms).
#[test]
fn clutch_loads_sticks_while_driving_and_slips_at_the_obstacle() {
    let fig = quick("geared-finger");
    // The clutch's stiction tolerance (m/s) in the file.
    let v_s = 1e-6;

    // Loading: the motor stalls at 0.6 N·cm, 0.06 N·m on the worm gear (ratio 10), which the
    // clutch's friction and the thread's back-torque F·lead/2π share: within 2 % (measured
    // 0.05834 + 0.00186 = 0.06020 N·m, F = 23.39 N).
    let loaded = n(&fig, "loading.torque");
    let force = n(&fig, "loading.force");
    let balance = loaded + LEAD_PER_RAD * force;
    assert!(
        (balance - 0.06).abs() < 0.02 * 0.06,
        "stall balance {balance} N·m"
    );
    // The effective radius of the uniform washer pressure is 2/3 of the 4 mm radius, within
    // 5 % (measured 2.564 mm: the pressure falls to zero at the rim, the rigid face is an
    // inscribed polygon).
    let r_eff = n(&fig, "loading.r_eff");
    assert!(
        (r_eff - 2.0 / 3.0 * 4e-3).abs() < 0.05 * 2.0 / 3.0 * 4e-3,
        "r_eff {r_eff} m"
    );
    // The clutch slid into the stall: its torque is near the Coulomb bound μ Σ r f_n (within
    // 5 %, measured 0.973: the last millimetres wind in at creep speed).
    let c = n(&fig, "loading.coulomb");
    assert!((c - 1.0).abs() < 0.05, "loaded torque / μ Σ r f_n = {c}");

    // Driving: the clutch sticks (every clutch contact slips slower than 10 v_s = 1e-5 m/s
    // after the first 20 % of the phase; measured 7.7e-7 m/s), its torque stays below the
    // loaded torque (measured 0.50 of it, the teeth's hammering included), and the link
    // follows the gear at −15/60 (within 0.5 %, measured −0.25005).
    let slip = n(&fig, "driving.slip");
    assert!(slip < 10.0 * v_s, "clutch slip while driving {slip} m/s");
    let driving = n(&fig, "driving.max_torque");
    assert!(driving < 0.8, "driving torque / loaded torque = {driving}");
    let ratio = n(&fig, "driving.ratio");
    assert!(
        (ratio + 0.25).abs() < 0.005 * 0.25,
        "proximal / gear turn {ratio}"
    );

    // Breakaway: the link meets the obstacle (2 rad at 0.647 s), the clutch torque rises to
    // the loaded torque (within 5 %, measured 1.0005) and slides at μ Σ r_i f_n,i — μ × normal
    // force × effective radius — within 5 % (measured 1.030 at δt = 1 ms, 1.008 at 0.25 ms:
    // Lagged's friction uses the previous step's normal force, which falls while the nut
    // unwinds), the clutch lets go (at 0.696 s), the link stays at the obstacle (below
    // 0.001 rad, measured 9.5e-5) and the distal link follows the worm gear at 1/3 (within
    // 0.1 %, measured 0.333333).
    let hit = n(&fig, "breakaway.hit");
    let release = n(&fig, "breakaway.release");
    assert!(
        hit.is_finite() && release > hit,
        "hit {hit} s, release {release} s"
    );
    let peak = n(&fig, "breakaway.torque");
    assert!(
        (peak - 1.0).abs() < 0.05,
        "breakaway torque / loaded torque {peak}"
    );
    let coulomb = n(&fig, "breakaway.coulomb");
    assert!(
        (coulomb - 1.0).abs() < 0.05,
        "torque / μ Σ r f_n while sliding {coulomb}"
    );
    let held = n(&fig, "breakaway.proximal");
    assert!(held.abs() < 1e-3, "proximal turn after the slip {held} rad");
    let distal = n(&fig, "breakaway.distal_ratio");
    assert!(
        (distal - 1.0 / 3.0).abs() < 1e-3 / 3.0,
        "distal / worm gear {distal}"
    );
}

/// The teeth's torque while driving peaks at the tooth-passing frequency.
#[test]
fn torque_spectrum_shows_the_tooth_passing_frequency() {
    let fig = quick("geared-finger-spectrum");
    let f = n(&fig, "tooth_passing");
    // 15 teeth at 16.4 rad/s of the worm gear (the motor's 164 rad/s through the worm
    // stage): 39.1 Hz.
    assert!((30.0..50.0).contains(&f), "tooth-passing frequency {f} Hz");
    // The peak within one frequency bin (2.5 Hz of the 0.4 s window, 6 %) of it: measured 1.031.
    let k = n(&fig, "teeth.peak");
    assert!(
        (k - 1.0).abs() < 0.065,
        "teeth's peak at {k} × the tooth-passing frequency"
    );
}
