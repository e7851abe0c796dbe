#!/usr/bin/env python3
"""Step Jacobians with controls on a 7-joint arm in contact: stiction against MuJoCo, in one sitting.

    benches/peers/setup.sh                                        # MuJoCo, gymnasium, stiction
    target/peers-venv/bin/python benches/peers/transition.py      # default: 3 rounds of 2000 calls
    target/peers-venv/bin/python benches/peers/transition.py --quick

The arm (issue 27, item 5) is gymnasium's Pusher, `pusher.xml` as the gymnasium wheel ships
it: a 7-joint arm with a motor on every joint (nu = 7) and a cylinder on two slide joints on
a table (nq = nv = 11 with the goal marker's two slides). Both simulators load the same file:
MuJoCo as it is, stiction through its MJCF import (`stiction.load(path, ground=False)`: the
file's table plane, no added ground). The state is one where the wrist touches the cylinder:
arm joints drawn uniformly within their ranges (seeded) until MuJoCo reports a contact
between the arm and the cylinder and no contact that penetrates by 3 mm or more (the arm
may touch the table too), the cylinder resting on the table; then the arm moves at 0.2 rad/s on every joint with the motors at half their
range, and the same [q, v, u] goes to both.

Measures, CPU time of this process (`time.process_time`) per call, the median of `--rounds`
rounds of `--calls` calls each, the calls of the simulators interleaved round by round:
- stiction `Simulator.step(x, u, out=...)`: one forward step (its convex solve, Lagged);
- stiction `Simulator.step_jacobians(x, u)`: A = ∂x'/∂x and B = ∂x'/∂u by the implicit
  function theorem on the solver's factor, including its own nominal step;
- MuJoCo `mj_step` from the state (written into mjData before each call);
- MuJoCo `mjd_transitionFD(m, d, eps, centered, A, B, None, None)`: A and B by finite
  differences, forward (its default) and centered.
Both Jacobians are in the tangent space, (2nv, 2nv) and (2nv, nu). The Python call costs
about a microsecond per call on either side and is in the times.

With `--count ENTRY` (`step`, `step_jacobians`, `mj_step`, `mjd_transitionFD`,
`mjd_transitionFD_centered`) only that call runs, `--calls` times after the state search, for
an instruction count under valgrind that the machine's load does not move: the difference of
the counts at two values of `--calls`, divided by the difference, is the instructions per call
(docs/benchmarks.md, "Step Jacobians with controls against MuJoCo's finite differences").
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

def pusher_path() -> Path:
    import gymnasium

    return Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets" / "pusher.xml"


def contact_state(m, d, mujoco, seed: int) -> tuple:
    """q, v, u with the wrist touching the cylinder, and MuJoCo's number of contacts there."""
    obj = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "object")
    arm = 7
    rng = np.random.default_rng(seed)
    lo, hi = m.jnt_range[:arm, 0], m.jnt_range[:arm, 1]
    for _ in range(1_000_000):
        d.qpos[:] = 0.0
        d.qpos[:arm] = lo + (hi - lo) * rng.random(arm)
        d.qvel[:] = 0.0
        mujoco.mj_forward(m, d)
        contacts = d.contact[: d.ncon]
        bodies = [(m.geom_bodyid[c.geom1], m.geom_bodyid[c.geom2]) for c in contacts]
        touching = [c for c, (a, b) in zip(contacts, bodies) if 0 not in (a, b) and obj in (a, b)]
        shallow = all(c.dist > -0.003 for c in contacts)
        if touching and shallow and all(c.dist < 0.0 for c in touching):
            q = d.qpos.copy()
            v = np.zeros(m.nv)
            v[:arm] = 0.2
            u = 0.5 * m.actuator_ctrlrange[:, 1]
            return q, v, u, d.ncon
    sys.exit("no state with the arm touching the cylinder found")


# `--count` names of the timed entries.
COUNTED = {
    "step": "stiction step",
    "step_jacobians": "stiction step_jacobians (IFT)",
    "mj_step": "MuJoCo mj_step",
    "mjd_transitionFD": "MuJoCo mjd_transitionFD, forward",
    "mjd_transitionFD_centered": "MuJoCo mjd_transitionFD, centered",
}


def per_call(fn, calls: int) -> float:
    """CPU seconds per call of fn over `calls` calls."""
    start = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=None, help="MJCF file (default: gymnasium's pusher.xml)")
    parser.add_argument("--calls", type=int, default=2000, help="calls per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (the median is reported)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the contact state's search")
    parser.add_argument("--quick", action="store_true", help="smoke run: 1 round of 50 calls")
    parser.add_argument("--out", type=Path, default=None, help="also write the table to this markdown file")
    parser.add_argument("--count", choices=sorted(COUNTED), default=None,
                        help="run only this call, --calls times (for valgrind --tool=callgrind)")
    args = parser.parse_args()
    if args.quick:
        args.calls, args.rounds = 50, 1
    if args.calls < 1 or args.rounds < 1:
        sys.exit("--calls and --rounds must be at least 1")

    import mujoco
    import stiction

    path = args.model or pusher_path()
    if not path.is_file():
        sys.exit(f"no model at {path}")
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    sim = stiction.load(str(path), ground=False)
    if (sim.nq, sim.nv, sim.nu) != (m.nq, m.nv, m.nu):
        sys.exit(f"sizes differ: stiction nq, nv, nu = {sim.nq, sim.nv, sim.nu}, MuJoCo {m.nq, m.nv, m.nu}")
    q, v, u, ncon = contact_state(m, d, mujoco, args.seed)
    x = np.concatenate([q, v])
    out = np.empty_like(x)
    sim.step(x, u, out=out)
    pairs = {tuple(b) for b in sim.contacts()["bodies"]}
    if not any("object" in p and "world" not in p for p in pairs):
        sys.exit(f"stiction sees no arm-cylinder contact at this state: {sorted(pairs)}")

    nx = 2 * m.nv + m.na
    A = np.zeros((nx, nx))
    B = np.zeros((nx, m.nu))
    eps = 1e-6

    def mj_state() -> None:
        d.qpos[:] = q
        d.qvel[:] = v
        d.ctrl[:] = u
        d.time = 0.0

    def mj_step() -> None:
        mj_state()
        mujoco.mj_step(m, d)

    def mj_fd(centered: bool):
        def call() -> None:
            mj_state()
            mujoco.mjd_transitionFD(m, d, eps, centered, A, B, None, None)
        return call

    entries = {
        "stiction step": lambda: sim.step(x, u, out=out),
        "stiction step_jacobians (IFT)": lambda: sim.step_jacobians(x, u),
        "MuJoCo mj_step": mj_step,
        "MuJoCo mjd_transitionFD, forward": mj_fd(False),
        "MuJoCo mjd_transitionFD, centered": mj_fd(True),
    }
    if args.count:
        fn = entries[COUNTED[args.count]]
        for _ in range(args.calls):
            fn()
        return
    times = {k: [] for k in entries}
    loads = [os.getloadavg()[0]]
    for _ in range(args.rounds):
        for name, fn in entries.items():
            fn()
            times[name].append(per_call(fn, args.calls))
        loads.append(os.getloadavg()[0])
    us = {k: 1e6 * statistics.median(t) for k, t in times.items()}

    mj_step_us = us["MuJoCo mj_step"]
    st_step_us = us["stiction step"]
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"{stamp}: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
        f"mujoco {mujoco.__version__}; model {path.name} (nq = {m.nq}, nv = {m.nv}, nu = {m.nu}); "
        f"{args.rounds} rounds of {args.calls} calls; load average {min(loads):.2f}-{max(loads):.2f}; "
        f"arm-cylinder contact, {len(sim.contacts()['bodies'])} stiction contacts, {ncon} MuJoCo contacts",
        "",
        "| call | CPU µs per call | / own forward step | / MuJoCo mj_step |",
        "|---|---|---|---|",
    ]
    for name, t in us.items():
        own = st_step_us if name.startswith("stiction") else mj_step_us
        lines.append(f"| {name} | {t:.2f} | {t / own:.2f} | {t / mj_step_us:.2f} |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
