#!/usr/bin/env python3
"""Where a clutter run's instructions go, from a callgrind profile (docs/benchmarks.md,
"Cost per Newton iteration").

Usage: benches/callgrind/split.py OUT...   (callgrind output files of `stiction simulate`,
RAYON_NUM_THREADS=1). Inclusive counts of the step's functions from
`callgrind_annotate --inclusive=yes --tree=caller`; Newton iterations are the calls of
`IterationData::factor_hessian` (one factorization per iteration, summed over the islands).
The step is `Simulator::step` on the main thread plus the rayon jobs it hands to the worker
(narrow phase, islands). valgrind counts each byte `rep stosb` writes as one instruction, so
memset (zeroing of freshly allocated dense matrices) is shown apart and left out of the total.
"""
import re
import subprocess
import sys

ROWS = [
    # (label, function, file it is attributed to, per: "step" or "iteration")
    ("contact assembly (free motion, Jacobians, potentials)",
     "stiction::step::assemble::assemble_contacts", "step/assemble.rs", "step"),
    ("narrow phase", "stiction::collision::point::narrow_phase", "collision/point.rs", "step"),
    ("Newton layout (whole problem and islands)",
     "stiction::solver::workspace::NewtonWorkspace::prepare", "solver/workspace.rs", "step"),
    ("islands' cut-out problems", "stiction::solver::workspace::islands::Island::cut",
     "workspace/islands.rs", "step"),
    ("Newton iterations", "stiction::solver::workspace::IterationData::iterate",
     "solver/workspace.rs", "iteration"),
    ("factorization", "stiction::solver::workspace::IterationData::factor_hessian",
     "solver/workspace.rs", "iteration"),
    ("Hessian assembly", "stiction::solver::workspace::NewtonLayout::assemble_hessian",
     "solver/workspace.rs", "iteration"),
    ("line search", "stiction::solver::workspace::IterationData::iterate",
     "solver/line_search.rs", "iteration"),
    ("solves (sparse)", "stiction::solver::linalg::sparse::SparseCholesky::solve_columns",
     "linalg/sparse.rs", "iteration"),
    ("solves (dense)", "stiction::solver::linalg::dense::DenseCholesky::solve_columns",
     "linalg/dense.rs", "iteration"),
]
SPARSE = ("<stiction::solver::linalg::sparse::SparseCholesky as "
          "stiction::solver::linalg::SpdSolver>::factor", "linalg/sparse.rs")
FAER = ("faer::sparse::linalg::cholesky::SymbolicCholesky<I>::factorize_numeric_llt",
        "cholesky.rs")
STEP = ("stiction::step::Simulator::step", "step/mod.rs")
JOBS = ("<rayon_core::job::StackJob<L,F,R> as rayon_core::job::Job>::execute", None)
MEMSET = ("__memset_avx2_unaligned_erms", None)
LINE = re.compile(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+([*<>])\s+(.*?)(?: \((\d[\d,]*)x\))?\s*(\[.*\])?\s*$")


def load(path):
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--tree=caller", path],
                         capture_output=True, text=True, check=True).stdout
    counts, callers = {}, []
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            callers = []
            continue
        ir, kind, name = int(m.group(1).replace(",", "")), m.group(2), m.group(3).strip()
        if kind == "<":
            callers.append(int((m.group(4) or "0").replace(",", "")))
        elif kind == "*":
            if counts.get(name, (0, 0))[0] < ir:
                counts[name] = (ir, sum(callers))
            callers = []
    return counts


def get(counts, function, file_hint):
    best = (0, 0)
    for key, value in counts.items():
        f, _, fn = key.partition(":")
        if fn == function and (file_hint is None or f.endswith(file_hint)) and value[0] > best[0]:
            best = value
    return best


for path in sys.argv[1:]:
    c = load(path)
    steps = get(c, *STEP)[1]
    iterations = get(c, "stiction::solver::workspace::IterationData::factor_hessian",
                     "solver/workspace.rs")[1]
    memset = get(c, *MEMSET)[0]
    total = get(c, *STEP)[0] + get(c, *JOBS)[0] - memset
    print(f"{path}: {steps} steps, {iterations} Newton iterations ({iterations / steps:.2f} per step)")
    print(f"  step without memset: {total / steps / 1e6:.3f} M per step, "
          f"{total / iterations / 1e3:.1f} k per Newton iteration; memset {memset / steps / 1e6:.3f} M per step")
    for label, function, hint, per in ROWS:
        ir, calls = get(c, function, hint)
        n, unit, scale = (steps, "M/step", 1e6) if per == "step" else (iterations, "k/iteration", 1e3)
        print(f"  {label:55s} {ir / n / scale:9.3f} {unit}")
    for label, (function, hint) in [("sparse factorization", SPARSE), ("  faer's numeric LLT", FAER)]:
        ir, calls = get(c, function, hint)
        print(f"  {label:55s} {ir / max(calls, 1) / 1e3:9.1f} k per call ({calls} calls)")
