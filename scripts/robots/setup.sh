#!/usr/bin/env sh
# Installs the robot models and the reference dynamics the robot tests use, from PyPI, into a
# virtual environment: example-robot-data (URDFs and STL meshes of the Panda, UR5, Solo12,
# ANYmal, …, as a cmeel wheel) and Pinocchio (`pin`) for tests/robots.rs; MuJoCo, dm_control
# and gymnasium (their packaged MJCF models) for tests/mjcf_models.rs.
#
#   scripts/robots/setup.sh            # into .venv-robots in the repository
#   scripts/robots/setup.sh DIR        # into DIR (or set STICTION_ROBOTS_VENV)
#
# Then run the robot tests with the same folder:
#   STICTION_ROBOTS_VENV=DIR cargo test --test robots --test mjcf_models -- --ignored
# and give stiction the package folder it prints:
#   stiction simulate ROBOT.urdf --package-path example-robot-data=PRINTED_DIR
set -eu

repo="$(cd "$(dirname "$0")/../.." && pwd)"
venv="${1:-${STICTION_ROBOTS_VENV:-$repo/.venv-robots}}"

# Pinned so that the reference numbers and meshes do not move under the tests.
EXAMPLE_ROBOT_DATA=6.0.0
PIN=4.1.0
NUMPY=2.4.6
MUJOCO=3.3.7
DM_CONTROL=1.0.34
GYMNASIUM=1.2.2

if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet \
    "example-robot-data==$EXAMPLE_ROBOT_DATA" "pin==$PIN" "numpy==$NUMPY" \
    "mujoco==$MUJOCO" "dm_control==$DM_CONTROL" "gymnasium==$GYMNASIUM"

share="$("$venv/bin/python" -c 'import cmeel, os; print(os.path.join(cmeel.__path__[0] + ".prefix", "share"))' 2>/dev/null || true)"
if [ -z "$share" ] || [ ! -d "$share/example-robot-data" ]; then
    share="$(ls -d "$venv"/lib/python*/site-packages/cmeel.prefix/share | head -n 1)"
fi
echo "venv:               $venv"
echo "example-robot-data: $share/example-robot-data"
echo "  package path:     --package-path example-robot-data=$share/example-robot-data"
echo "  Panda:            $share/example-robot-data/robots/panda_description/urdf/panda.urdf"
echo "  UR5:              $share/example-robot-data/robots/ur_description/urdf/ur5_robot.urdf"
echo "  Solo12:           $share/example-robot-data/robots/solo_description/robots/solo12.urdf"
echo "pinocchio:          $("$venv/bin/python" -c 'import pinocchio; print(pinocchio.__version__)')"
echo "mujoco:             $("$venv/bin/python" -c 'import mujoco; print(mujoco.__version__)')"
