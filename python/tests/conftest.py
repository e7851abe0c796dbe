"""Shared fixtures: the repository's paths and the `stiction` command line, whose output is
the contract the Python package is tested against."""

from __future__ import annotations

import csv
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PROBLEMS = REPO / "problems"


def stiction_command() -> list:
    """The release `stiction` binary: $STICTION_BIN if set, else `cargo run --release`."""
    binary = os.environ.get("STICTION_BIN")
    if binary:
        return [binary]
    return ["cargo", "run", "--quiet", "--release", "--manifest-path", str(REPO / "Cargo.toml"), "--"]


def run_cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Runs `stiction ARGS…` from the repository root."""
    return subprocess.run(
        stiction_command() + list(args), cwd=REPO, capture_output=True, text=True, check=check
    )


def read_csv(path: Path):
    """A CSV table as (header, rows of floats parsed from the shortest round-trip text)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], [[float(x) for x in row] for row in rows[1:]]


@pytest.fixture(scope="session")
def cli_trajectory(tmp_path_factory):
    """`stiction simulate problems/NAME.toml --out DIR --quiet`'s trajectory.csv, run once
    per problem: (header, rows)."""
    cache = {}

    def get(name: str):
        if name not in cache:
            out = tmp_path_factory.mktemp(name)
            run_cli("simulate", f"problems/{name}.toml", "--out", str(out / "run"), "--quiet")
            cache[name] = read_csv(out / "run" / "trajectory.csv")
        return cache[name]

    return get
