#!/usr/bin/env sh
# Installs the peers of benches/peers/peers.py and transition.py into a virtual environment:
# Drake and MuJoCo from PyPI (pinned: the figures of docs/benchmarks.md are of these
# versions), numpy, gymnasium (for its MJCF models: transition.py's arm), and stiction's own
# Python package built from this checkout (python/, maturin; a release build of minutes).
#
#   benches/peers/setup.sh            # into target/peers-venv in the repository
#   benches/peers/setup.sh DIR        # into DIR (or set STICTION_PEERS_VENV)
#
# Then: DIR/bin/python benches/peers/peers.py --quick   (see benches/peers/README.md)
# The drake wheel needs Python 3.10-3.13 on x86-64 or arm64 Linux / macOS (checked: 3.11).
set -eu

repo="$(cd "$(dirname "$0")/../.." && pwd)"
venv="${1:-${STICTION_PEERS_VENV:-$repo/target/peers-venv}}"

DRAKE=1.51.1
MUJOCO=4.0.0
NUMPY=2.4.6
GYMNASIUM=1.2.2

if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "drake==$DRAKE" "mujoco==$MUJOCO" "numpy==$NUMPY" \
    "gymnasium==$GYMNASIUM"
"$venv/bin/python" -m pip install --quiet "$repo/python"
echo "venv:   $venv"
"$venv/bin/python" -c 'import mujoco, pydrake, stiction; from importlib.metadata import version; print("drake", version("drake"), "mujoco", mujoco.__version__, "stiction", version("stiction"))'
