//! Mutation fuzzing of the problem-file loader and the first steps (issue 25 item 7), on a
//! fixed seed so that it runs in every `cargo test`: each shipped problem is mutated many
//! times — a number replaced by an extreme or malformed value, a line deleted, duplicated or
//! cut short, an array item added — then loaded and, when it loads, stepped a few times with
//! its stepper. Every mutant must give `Ok` or an `Err` with a message; a panic is a failure
//! (the test reports the mutant that caused it). The reproducers that used to panic,
//! abort or run silently are in `tests/fault_tolerance.rs`; this test looks for new ones.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use stiction::problem::{parse_problem, Stepper};

/// Mutants per shipped problem (about 20 problems).
const MUTANTS: usize = 60;
/// Steps taken by a mutant that loads.
const STEPS: usize = 3;

/// Values a number is replaced with: extremes, signs, non-numbers and malformed text.
const VALUES: &[&str] = &[
    "0",
    "-0.0",
    "-1",
    "1e308",
    "-1e308",
    "1e-308",
    "1e-300",
    "5e-324",
    "nan",
    "inf",
    "-inf",
    "1e30",
    "\"junk\"",
    "[]",
    "[1e308, 1e308, 1e308]",
    "true",
    "18446744073709551616",
    "-9223372036854775809",
    "0.5",
    "1e9",
];

/// The shipped problems that load without installed robot packages.
fn shipped() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("problems");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("problems/") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).expect("readable");
            if !text.contains("[[model]]") {
                out.push((path.display().to_string(), text));
            }
        }
    }
    out.sort();
    out
}

/// One random mutation of `text`.
fn mutate(text: &str, rng: &mut StdRng) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let i = rng.random_range(0..lines.len());
    match rng.random_range(0..6) {
        // Replace one number on a line that has numbers.
        0..=2 => {
            let candidates: Vec<usize> = lines
                .iter()
                .enumerate()
                .filter(|(_, l)| l.contains('=') && l.chars().any(|c| c.is_ascii_digit()))
                .map(|(k, _)| k)
                .collect();
            if let Some(&k) = candidates.get(rng.random_range(0..candidates.len().max(1))) {
                lines[k] =
                    replace_a_number(&lines[k], VALUES[rng.random_range(0..VALUES.len())], rng);
            }
        }
        3 => {
            lines.remove(i);
        }
        4 => {
            let line = lines[i].clone();
            lines.insert(i, line);
        }
        _ => {
            if let Some(open) = lines[i].find('[') {
                lines[i].insert_str(open + 1, "7.0, ");
            } else {
                let cut = rng.random_range(0..=lines[i].len());
                let cut = (0..=cut)
                    .rev()
                    .find(|&c| lines[i].is_char_boundary(c))
                    .unwrap_or(0);
                lines[i].truncate(cut);
            }
        }
    }
    lines.join("\n")
}

/// `line` with one of its numeric tokens replaced by `value`.
fn replace_a_number(line: &str, value: &str, rng: &mut StdRng) -> String {
    let Some(eq) = line.find('=') else {
        return line.to_string();
    };
    let (key, rest) = line.split_at(eq + 1);
    let tokens: Vec<(usize, usize)> = token_spans(rest);
    if tokens.is_empty() {
        return line.to_string();
    }
    let (a, b) = tokens[rng.random_range(0..tokens.len())];
    format!("{key}{}{value}{}", &rest[..a], &rest[b..])
}

/// Spans of the numeric tokens of `s`.
fn token_spans(s: &str) -> Vec<(usize, usize)> {
    let bytes = s.as_bytes();
    let mut spans = Vec::new();
    let mut k = 0;
    while k < bytes.len() {
        let numeric = |c: u8| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'-' | b'+');
        if bytes[k].is_ascii_digit()
            || (bytes[k] == b'-' && bytes.get(k + 1).is_some_and(u8::is_ascii_digit))
        {
            let start = k;
            while k < bytes.len() && numeric(bytes[k]) {
                k += 1;
            }
            spans.push((start, k));
        } else {
            k += 1;
        }
    }
    spans
}

/// Loads `text` and steps it [`STEPS`] times; `Ok(true)` if it loaded and stepped,
/// `Ok(false)` if it was refused or a step failed with an error.
fn load_and_step(text: &str) -> bool {
    let Ok(p) = parse_problem(text, Path::new("mutant.toml")) else {
        return false;
    };
    match p.stepper {
        Stepper::Convex => {
            let mut sim = p.simulator;
            let mut state = p.initial_state;
            for _ in 0..STEPS {
                let u = p.controller.effort(&state, sim.model.nu());
                match sim.step(&state, &u) {
                    Ok((next, _)) => state = next,
                    Err(_) => return false,
                }
            }
            assert!(state.q.iter().chain(state.v.iter()).all(|x| x.is_finite()));
            true
        }
        Stepper::Ncp => {
            let Ok(mut sim) = p.ncp_simulator() else {
                return false;
            };
            let mut state = p.initial_state;
            for _ in 0..STEPS {
                match sim.step(&state) {
                    Ok((next, _)) => state = next,
                    Err(_) => return false,
                }
            }
            true
        }
    }
}

/// 60 mutants of every shipped problem (about 1,200 in all, seed 25): no panic; the ones that
/// load step without a non-finite state or fail with an error.
#[test]
fn mutated_problem_files_never_panic() {
    let mut rng = StdRng::seed_from_u64(25);
    let (mut total, mut stepped) = (0, 0);
    for (path, text) in shipped() {
        for _ in 0..MUTANTS {
            let mutant = mutate(&text, &mut rng);
            let outcome = catch_unwind(AssertUnwindSafe(|| load_and_step(&mutant)));
            match outcome {
                Ok(ran) => stepped += usize::from(ran),
                Err(_) => panic!("a mutant of {path} panicked:\n{mutant}"),
            }
            total += 1;
        }
    }
    println!("{total} mutants, {stepped} loaded and stepped");
    assert!(total >= 1000, "{total}");
    assert!(
        stepped > total / 4,
        "most mutants should still load: {stepped} of {total}"
    );
}
