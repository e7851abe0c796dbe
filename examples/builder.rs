//! A scene built in code, no file: a ball rolls into a pendulum that a PD motor holds hanging
//! (at most 5 N·m). Steps one at a time, then for a duration, reading typed results.
use stiction::control::ControlLaw;
use stiction::geometry::Shape::Sphere;
use stiction::scene::{BodyDesc, SceneBuilder};

fn main() -> stiction::error::Result<()> {
    let ball = BodyDesc::free("ball", 0.5, Sphere { radius: 0.05 })
        .at([0.0, 0.0, 0.05])
        .velocity([1.0, 0.0, 0.0]);
    let hang = ControlLaw::pd(40.0, 2.0, 0.0); // kp (N·m/rad), kd (N·m·s/rad), target (rad)
    let pendulum = BodyDesc::revolute("pendulum", 0.3, Sphere { radius: 0.04 }, [0.0, 1.0, 0.0])
        .at([0.3, 0.0, 0.22]) // joint origin; the bob hangs 15 cm below it
        .shape_offset([0.0, 0.0, -0.15])
        .actuated(hang, 5.0);
    let builder = SceneBuilder::new().dt(1e-3).ground();
    let mut scene = builder.body(ball).body(pendulum).build()?;
    for _ in 0..100 {
        let report = scene.step()?; // solver statistics and every contact of the step
        assert!(report.contacts.iter().all(|c| c.normal_force >= 0.0));
    }
    let recording = scene.run_for(0.5)?; // every state and step report of the next 0.5 s
    let angles = recording.states.iter().map(|s| s.q[7].abs()); // q = (ball: 7, pendulum: 1)
    let swing = angles.fold(0.0, f64::max);
    let ball = scene.body("ball").expect("the scene has a ball");
    let (t, x, v) = (scene.state().t, ball.p_WB.x, ball.v_WB.x);
    println!("t = {t:.3} s: ball at x = {x:.3} m, v_x = {v:.3} m/s");
    println!("the pendulum swung up to {swing:.3} rad");
    Ok(())
}
