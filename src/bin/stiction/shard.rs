//! `--shard I/N` (one part of a job array: Slurm's `--array=1-N`, each task with its own
//! `I`) and `stiction merge`, which joins the parts of a sweep into the table one process
//! would have written.
//!
//! Parts are interleaved: part `I` of `N` takes items `I−1, I−1+N, I−1+2N, …` of the list
//! (stiffnesses of a sweep, files of a `simulate`), so that the parts take about as long. A
//! sweep part writes its rows to `sweep.csv` and what merging needs (its part, the whole
//! stiffness list, the plot title) to `shard.json`.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde_json::json;
use stiction::error::{Error, Result};
use stiction::report::plot::{write_sweep_plot, ImageFormat};
use stiction::simulate::SweepRow;

use crate::output;
use crate::sweep::{SWEEP_CSV, SWEEP_HEADER};

/// File name of a sweep part's description.
pub const SHARD_JSON: &str = "shard.json";

/// Part `index` (from 1) of `count` interleaved parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Which part, 1 ≤ index ≤ count.
    pub index: usize,
    /// How many parts.
    pub count: usize,
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let bad = || format!("expected I/N with 1 ≤ I ≤ N (part I of N), found `{s}`");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            i.trim().parse::<usize>().map_err(|_| bad())?,
            n.trim().parse::<usize>().map_err(|_| bad())?,
        );
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// Whether item `k` (from 0) of the list belongs to this part.
    pub fn takes(&self, k: usize) -> bool {
        k % self.count == self.index - 1
    }
}

/// The rows of a `sweep.csv` (without the header).
fn table_rows(path: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut lines = text.lines();
    if lines.next() != Some(SWEEP_HEADER) {
        return Err(Error::invalid(
            "sweep table",
            path.display(),
            &format!("a sweep.csv with the header {SWEEP_HEADER}"),
        ));
    }
    Ok(lines.map(str::to_string).collect())
}

/// Writes the description of sweep part `shard` into `out`.
pub fn write_sweep_shard(
    out: &Path,
    shard: Shard,
    name: &str,
    stiffness: &[f64],
    title: &str,
) -> Result<()> {
    let path = out.join(SHARD_JSON);
    let text = json!({
        "shard": shard.index,
        "of": shard.count,
        "problem": name,
        "stiffness": stiffness,
        "title": title,
    });
    std::fs::write(&path, format!("{text:#}\n")).map_err(|source| Error::Io { path, source })
}

/// One part read back: its description and its table rows.
struct Part {
    dir: PathBuf,
    shard: Shard,
    problem: String,
    stiffness: Vec<f64>,
    title: String,
    rows: Vec<String>,
}

fn read_part(dir: &Path) -> Result<Part> {
    let path = dir.join(SHARD_JSON);
    let text = std::fs::read_to_string(&path).map_err(|source| Error::Io {
        path: path.clone(),
        source,
    })?;
    let bad = |why: &str| Error::invalid("shard.json", path.display(), why);
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(&format!("valid JSON ({e})")))?;
    let number = |key: &str| {
        v[key]
            .as_u64()
            .map(|x| x as usize)
            .ok_or_else(|| bad(&format!("a whole number `{key}`")))
    };
    let shard = Shard {
        index: number("shard")?,
        count: number("of")?,
    };
    if shard.index == 0 || shard.index > shard.count {
        return Err(bad("1 ≤ shard ≤ of"));
    }
    let stiffness = v["stiffness"]
        .as_array()
        .and_then(|a| a.iter().map(|x| x.as_f64()).collect::<Option<Vec<_>>>())
        .ok_or_else(|| bad("a list of numbers `stiffness`"))?;
    let text = |key: &str| {
        v[key]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| bad(&format!("a text `{key}`")))
    };
    let part = Part {
        dir: dir.to_path_buf(),
        shard,
        problem: text("problem")?,
        title: text("title")?,
        stiffness,
        rows: table_rows(&dir.join(SWEEP_CSV))?,
    };
    let expected = (0..part.stiffness.len())
        .filter(|&k| shard.takes(k))
        .count();
    if part.rows.len() != expected {
        return Err(Error::invalid(
            "sweep table",
            dir.join(SWEEP_CSV).display(),
            &format!(
                "{expected} rows for part {}/{} (an unfinished part?), found {}",
                shard.index,
                shard.count,
                part.rows.len()
            ),
        ));
    }
    Ok(part)
}

/// A row of `sweep.csv` parsed back, for the plot.
fn parse_row(line: &str) -> Option<SweepRow> {
    let f: Vec<&str> = line.split(',').collect();
    let opt = |s: &str| -> Option<Option<f64>> {
        if s.is_empty() {
            Some(None)
        } else {
            s.parse().ok().map(Some)
        }
    };
    match f.as_slice() {
        [k, p, mean, max, cond, steps] => Some(SweepRow {
            stiffness: k.parse().ok()?,
            mean_penetration: opt(p)?,
            mean_iterations: mean.parse().ok()?,
            max_iterations: max.parse().ok()?,
            mean_log10_condition: opt(cond)?,
            steps: steps.parse().ok()?,
        }),
        _ => None,
    }
}

/// `stiction merge DIR…`: the sweep parts in `dirs` joined, in the order of the whole
/// stiffness list, into `sweep.csv` (byte for byte what one process writes) and `sweep.png`,
/// in `out` or a new numbered folder `out/PROBLEM-sweep/N`. Every part from 1 to N must be
/// there once, of the same sweep.
pub fn merge(dirs: &[PathBuf], out: &output::OutArgs, quiet: bool) -> Result<()> {
    let mut parts = dirs
        .iter()
        .map(|d| read_part(d))
        .collect::<Result<Vec<_>>>()?;
    parts.sort_by_key(|p| p.shard.index);
    let first = &parts[0];
    let count = first.shard.count;
    for p in &parts {
        if p.shard.count != count || p.stiffness != first.stiffness || p.problem != first.problem {
            return Err(Error::invalid(
                "merge",
                p.dir.display(),
                &format!(
                    "parts of one sweep ({} over the stiffnesses of {}, in {count} parts)",
                    first.problem,
                    first.dir.display()
                ),
            ));
        }
    }
    let missing: Vec<String> = (1..=count)
        .filter(|k| parts.iter().all(|p| p.shard.index != *k))
        .map(|k| format!("{k}/{count}"))
        .collect();
    let repeated = (1..parts.len()).find(|&i| parts[i].shard.index == parts[i - 1].shard.index);
    if !missing.is_empty() || repeated.is_some() {
        let why = if missing.is_empty() {
            format!(
                "part {}/{count} given twice",
                parts[repeated.unwrap_or(0)].shard.index
            )
        } else {
            format!("part {} missing", missing.join(", "))
        };
        return Err(Error::invalid(
            "merge",
            dirs.len(),
            &format!("every part 1..{count} of the sweep once ({why})"),
        ));
    }
    let mut next = vec![0usize; count];
    let mut lines = Vec::with_capacity(first.stiffness.len());
    for k in 0..first.stiffness.len() {
        let part = k % count;
        lines.push(parts[part].rows[next[part]].clone());
        next[part] += 1;
    }
    let out =
        output::explicit_or_numbered(out.prepare_explicit()?, &format!("{}-sweep", first.problem))?;
    let csv = out.join(SWEEP_CSV);
    let mut text = format!("{SWEEP_HEADER}\n");
    for line in &lines {
        text += line;
        text.push('\n');
    }
    std::fs::write(&csv, text).map_err(|source| Error::Io {
        path: csv.clone(),
        source,
    })?;
    let rows = lines
        .iter()
        .map(|l| {
            parse_row(l)
                .ok_or_else(|| Error::invalid("sweep row", l, "six numbers of a sweep.csv row"))
        })
        .collect::<Result<Vec<_>>>()?;
    let plots = write_sweep_plot(&rows, &first.title, &out, &[ImageFormat::Png])?;
    if !quiet {
        println!("merged {count} parts, {} rows:", lines.len());
        println!("  {}", csv.display());
        for p in plots {
            println!("  {}", p.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_interleaved_and_cover_the_list_once() {
        let parts: Vec<Shard> = (1..=3).map(|i| format!("{i}/3").parse().unwrap()).collect();
        for k in 0..10 {
            assert_eq!(parts.iter().filter(|s| s.takes(k)).count(), 1);
        }
        assert!(parts[1].takes(1) && parts[1].takes(4) && !parts[1].takes(2));
        for bad in ["0/3", "4/3", "1", "a/b", "1/0"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }
}
