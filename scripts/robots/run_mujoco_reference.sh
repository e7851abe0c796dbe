#!/usr/bin/env sh
# Installs MuJoCo, dm_control and gymnasium into a venv (default: .venv-robots in the
# repository) and runs the MJCF tests that compare stiction's mass matrix and bias forces with
# MuJoCo's on the packages' standard models, then run each model 2 s with contact.
#
#   scripts/robots/run_mujoco_reference.sh            # venv at .venv-robots
#   STICTION_ROBOTS_VENV=/path/to/venv scripts/robots/run_mujoco_reference.sh
set -eu
cd "$(dirname "$0")/../.."
venv="${STICTION_ROBOTS_VENV:-$PWD/.venv-robots}"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet mujoco==3.3.7 dm_control==1.0.34 gymnasium==1.2.2
STICTION_ROBOTS_VENV="$venv" cargo test --test mjcf_models -- --ignored --nocapture
