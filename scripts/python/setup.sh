#!/usr/bin/env sh
# Builds the Python package `stiction` (python/, PyO3 + maturin) and installs it, with what its
# tests need (pytest, matplotlib, Ray), into a virtual environment.
#
#   scripts/python/setup.sh            # into .venv-python in the repository
#   scripts/python/setup.sh DIR        # into DIR (or set STICTION_PYTHON_VENV)
#
# pip builds the package from source with maturin (fetched from PyPI as the PEP 517 build
# backend) and cargo, in release mode, into the workspace's target/ folder. Then:
#   DIR/bin/python -m pytest python/tests
set -eu

repo="$(cd "$(dirname "$0")/../.." && pwd)"
venv="${1:-${STICTION_PYTHON_VENV:-$repo/.venv-python}}"

# Pinned so that the test environment does not move under the tests.
NUMPY=2.4.6
PYTEST=9.2.0
MATPLOTLIB=3.11.2
RAY=2.60.0

if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet \
    "numpy==$NUMPY" "pytest==$PYTEST" "matplotlib==$MATPLOTLIB" "ray==$RAY"
# --force-reinstall of the package only: the version number does not change with the sources.
"$venv/bin/python" -m pip install --quiet --force-reinstall --no-deps "$repo/python"
"$venv/bin/python" -m pip install --quiet "$repo/python[ray,test]"
echo "venv:     $venv"
echo "stiction: $("$venv/bin/python" -c 'import stiction, os; print(os.path.dirname(stiction.__file__))')"
