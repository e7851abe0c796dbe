//! Contact-implicit iLQR on `problems/box-pivot.toml` from its initial guess, with no contact
//! schedule: prints every iteration, the status and the task error (m).
//!
//! `cargo run --release --example box_pivot`

use std::path::Path;

use stiction::optimize::optimize_file;

fn main() -> stiction::error::Result<()> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems/box-pivot.toml");
    let run = optimize_file(&path, |_| {})?;
    println!("{}", run.describe());
    Ok(())
}
