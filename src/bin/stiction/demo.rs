//! A bare `stiction`: simulate a shipped scene, write everything, and say where.

use std::path::Path;

use stiction::error::Result;
use stiction::report::Projection;

use crate::output;
use crate::progress::Progress;
use crate::shipped::shipped;
use crate::simulate::{run_into, summarize, Outputs};

/// The scene of the demo: short, with sliding, rolling and a landing.
const DEMO: &str = "falling-sphere";

/// Runs the demo into a new numbered folder under `out/demo/` of the working directory.
pub fn demo() -> Result<()> {
    let mut problem = shipped(DEMO).expect("invariant: the demo problem is shipped")?;
    println!("stiction demo: {DEMO}");
    println!("  {}", problem.description);
    let out = output::numbered(Path::new("out/demo"))?;
    let outputs = Outputs {
        png: true,
        svg: false,
        animation: Some(Projection::Xz),
        patch_geometry: false,
        replay: false,
        progress: true,
    };
    let steps =
        stiction::simulate::recording_steps(&problem.simulator, "duration", problem.duration)?;
    let mut progress = Progress::new(steps, problem.duration, false);
    let finished = run_into(&mut problem, &out, outputs, |t| progress.step(t))?;
    let wall = progress.finish();
    summarize(&problem, &finished.recording, wall, &out, &finished.written);
    finished.end?;
    println!();
    println!(
        "Look at {}/animation.gif and the PNG figures. Next:",
        out.display()
    );
    println!("  stiction list                                  the shipped problems");
    println!("  stiction simulate {DEMO} --approximation sap --plot --animate");
    println!(
        "  stiction simulate problems/{DEMO}.toml --out out/mine --plot   (after editing a copy)"
    );
    println!("  stiction --help                                every command and option");
    Ok(())
}
