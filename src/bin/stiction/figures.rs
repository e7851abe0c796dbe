//! `stiction figures [NAME…] [--out DIR] [--quick] [--list]`: the seed papers' figures,
//! recomputed from the shipped problems ([`stiction::figures`]), into one folder: per figure
//! `NAME.png` (the panels), `NAME.csv` (the plotted points) and `NAME-numbers.csv` (the paper's
//! numbers beside ours), and an `index.md` that shows each figure with its numbers and the
//! command that made it (docs/figures.md).

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;

use stiction::error::{Error, Result};
use stiction::figures::{figure, FigureSpec, PaperFigure, Quality, FIGURES};
use stiction::problem::Problem;
use stiction::report::plot::{write_line_figure, ImageFormat};

use crate::output::{explicit_or_numbered, OutArgs};
use crate::shipped;

/// Options of `stiction figures`.
#[derive(Args)]
pub struct FiguresArgs {
    /// Figures to make (all when none): see --list.
    #[arg(value_name = "NAME")]
    names: Vec<String>,
    /// Coarse versions (fewer or larger steps, shorter references) that run in minutes, for CI.
    #[arg(long)]
    quick: bool,
    /// List the figures with their sources and exit.
    #[arg(long)]
    list: bool,
    #[command(flatten)]
    output: OutArgs,
    /// Print nothing but errors.
    #[arg(long)]
    quiet: bool,
}

/// Runs `stiction figures`.
pub fn figures(args: &FiguresArgs) -> Result<()> {
    if args.list {
        for f in FIGURES {
            println!("{:<22} {:<30} {}", f.name, f.source, f.summary);
        }
        return Ok(());
    }
    let specs: Vec<&FigureSpec> = if args.names.is_empty() {
        FIGURES.iter().collect()
    } else {
        args.names
            .iter()
            .map(|n| figure(n))
            .collect::<Result<_>>()?
    };
    let explicit = args.output.prepare_explicit()?;
    let dir = explicit_or_numbered(explicit, "figures")?;
    let quality = if args.quick {
        Quality::Quick
    } else {
        Quality::Full
    };
    let load = |name: &str| -> Result<Problem> {
        shipped::shipped(name).unwrap_or_else(|| Err(shipped::not_found(Path::new(name))))
    };
    let command = command_line(args, &dir);
    let (mut made, mut failed) = (Vec::new(), Vec::new());
    for spec in specs {
        let start = Instant::now();
        // A figure that cannot be made (a robot package not installed) leaves the others to
        // make; the index lists it and the command fails at the end with its error.
        let fig = match (spec.compute)(&load, quality) {
            Ok(fig) => fig,
            Err(e) => {
                eprintln!("{}: not made: {e}", spec.name);
                failed.push((spec, e));
                continue;
            }
        };
        write_figure(&fig, &dir)?;
        let seconds = start.elapsed().as_secs_f64();
        if !args.quiet {
            println!(
                "{:<22} {:>7.1} s  {}",
                fig.name,
                seconds,
                dir.join(format!("{}.png", fig.name)).display()
            );
        }
        made.push((spec, fig, seconds));
    }
    let index = dir.join("index.md");
    write(
        &index,
        &index_markdown(&made, &failed, quality, (&command, &dir)),
    )?;
    if !args.quiet {
        println!("{}", index.display());
    }
    match failed.into_iter().next() {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

/// The command that remakes the figures, for the index.
fn command_line(args: &FiguresArgs, dir: &Path) -> String {
    let mut c = String::from("stiction figures");
    for n in &args.names {
        c.push(' ');
        c.push_str(n);
    }
    if args.quick {
        c.push_str(" --quick");
    }
    let _ = write!(c, " --out {}", dir.display());
    c
}

/// Writes `NAME.png`, `NAME.csv` (panel, curve, x, y) and `NAME-numbers.csv`.
fn write_figure(fig: &PaperFigure, dir: &Path) -> Result<()> {
    write_line_figure(
        (fig.name, &fig.title),
        (fig.x_label, fig.x_range(), fig.equal_aspect),
        &fig.panels,
        dir,
        ImageFormat::Png,
    )?;
    let mut csv = String::from("panel,curve,x,y\n");
    for p in &fig.panels {
        for c in &p.curves {
            for (x, y) in &c.points {
                let _ = writeln!(csv, "{},{},{x},{y}", quoted(p.y_label), quoted(&c.name));
            }
        }
    }
    write(&dir.join(format!("{}.csv", fig.name)), &csv)?;
    let mut numbers = String::from("key,what,paper,measured,unit\n");
    for n in &fig.numbers {
        let _ = writeln!(
            numbers,
            "{},{},{},{},{}",
            quoted(&n.key),
            quoted(&n.what),
            quoted(&n.paper),
            n.measured,
            n.unit
        );
    }
    write(&dir.join(format!("{}-numbers.csv", fig.name)), &numbers)
}

/// `text` as a CSV field: quoted, inner quotes doubled.
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// The index: per figure its source, image, numbers (paper beside ours), notes and command;
/// then the figures not made, with their errors.
fn index_markdown(
    made: &[(&FigureSpec, PaperFigure, f64)],
    failed: &[(&FigureSpec, Error)],
    quality: Quality,
    (command, dir): (&str, &Path),
) -> String {
    let mut md = String::from("# The papers' figures, recomputed\n\n");
    let _ = writeln!(
        md,
        "Made by `{command}` ({} versions). Each figure's plotted points are in `NAME.csv`, its numbers in `NAME-numbers.csv`; docs/figures.md says what each shows.\n",
        match quality {
            Quality::Quick => "quick",
            Quality::Full => "full",
        }
    );
    for (spec, fig, seconds) in made {
        let _ = writeln!(md, "## {}: {}\n", fig.name, spec.source);
        let _ = writeln!(md, "{}. Computed in {seconds:.1} s.\n", spec.summary);
        let _ = writeln!(md, "![{}]({}.png)\n", fig.title, fig.name);
        md.push_str("| number | paper | measured |\n|---|---|---|\n");
        for n in &fig.numbers {
            let _ = writeln!(
                md,
                "| {} | {} | {} |",
                n.what.replace('|', "\\|"),
                n.paper.replace('|', "\\|"),
                measured(n.measured, n.unit)
            );
        }
        md.push('\n');
        for note in &fig.notes {
            let _ = writeln!(md, "- {note}");
        }
        let single = format!(
            "stiction figures {}{} --out {}",
            fig.name,
            if quality == Quality::Quick {
                " --quick"
            } else {
                ""
            },
            dir.display()
        );
        let _ = writeln!(md, "\nThis figure alone: `{single}`\n");
    }
    for (spec, e) in failed {
        let _ = writeln!(md, "## {}: {}\n\nNot made: {e}\n", spec.name, spec.source);
    }
    md
}

/// A measured value with its unit, four significant digits; "did not happen" for NaN.
fn measured(value: f64, unit: &str) -> String {
    if !value.is_finite() {
        return "did not happen".into();
    }
    let unit = if unit == "1" { "" } else { unit };
    format!("{} {unit}", significant(value))
        .trim_end()
        .to_string()
}

/// `value` to four significant digits.
fn significant(value: f64) -> String {
    if value == 0.0 {
        return "0".into();
    }
    let magnitude = value.abs().log10().floor() as i32;
    if (-3..5).contains(&magnitude) {
        format!("{:.*}", (3 - magnitude).max(0) as usize, value)
    } else {
        format!("{value:.3e}")
    }
}

/// Writes `text` to `path`.
fn write(path: &PathBuf, text: &str) -> Result<()> {
    fs::write(path, text).map_err(|source| Error::Io {
        path: path.clone(),
        source,
    })
}
