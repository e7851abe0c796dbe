"""Speed of the Python package against MuJoCo's Python bindings, same session, same threads.

    python benches/python/bench.py [--threads N] [--repeat R] [--count-loop NAME]

Needs `stiction` (scripts/python/setup.sh) and `mujoco` (pip install mujoco==3.3.7) in the
same environment. A bench, not a test: it prints CPU figures; docs/python.md records them.

1. Per-call overhead of one step from Python on the falling sphere: the time per call of
   `x = sim.step(x)` in a Python loop minus the time per step of the same steps inside one
   native call (`sim.rollout`); for MuJoCo, `mujoco.mj_step(m, d)` in a loop minus
   `mujoco.rollout.rollout` on one thread. Same trajectory (1500 steps), same scene (a 0.5 kg,
   2.5 cm sphere dropped from 5 cm at 2 m/s onto a plane, δt = 2 ms). The four loops (and
   `sim.step(x, out=x)`, which writes into x instead of returning a new array) run in turn
   within each of the `repeat` rounds, and each keeps its best round: a change of the machine's
   load then cannot fall between a loop and the native run it is compared with.
2. Batched rollouts per second on the falling sphere and the 7-joint arm pushing a sphere
   (problems/arm-push-sphere.toml; the MJCF below matches its bodies, joints, capsules,
   damping and initial state): `stiction.rollout(sim, X0, steps=H, threads=N)` against
   `mujoco.rollout.rollout(m, [MjData] * N, initial_state, nstep=H)`.
3. With `--count-loop NAME`, only the overhead loop NAME runs, 1 + R times, for a count of
   instructions under `valgrind --tool=callgrind`: the difference of the counts of two values
   of R, per step, is a figure that the machine's load does not move (docs/python.md).

Times are process CPU time per thread where one thread runs (time.process_time), and wall
time for the threaded batches (the CPU time of N threads adds up); the load average is
printed with every figure, since the machine may be shared.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import mujoco
import numpy as np
from mujoco import rollout as mj_rollout

import stiction

REPO = Path(__file__).resolve().parents[2]

SPHERE_XML = """
<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <geom name="ground" type="plane" size="0 0 1" friction="0.5"/>
    <body name="sphere" pos="0 0 0.05">
      <freejoint/>
      <geom type="sphere" size="0.025" mass="0.5" friction="0.5"/>
    </body>
  </worldbody>
</mujoco>
"""

ARM_LINKS = [
    # name, mass, joint axis, origin (in the parent), capsule half-length, radius, centre, q0, v0
    ("link1", 3.0, "0 0 1", "0 0 1.04", 0.005, 0.04, -0.06, 0.3, 0.5),
    ("link2", 3.0, "0 1 0", "0 0 -0.12", 0.045, 0.04, -0.1, -0.7, 3.0),
    ("link3", 2.5, "0 1 0", "0 0 -0.2", 0.045, 0.04, -0.1, 0.15, 0.5),
    ("link4", 2.0, "0 0 1", "0 0 -0.2", 0.005, 0.04, -0.06, 0.4, 1.0),
    ("link5", 1.5, "0 1 0", "0 0 -0.12", 0.025, 0.04, -0.08, 0.25, -1.0),
    ("link6", 1.0, "0 1 0", "0 0 -0.16", 0.005, 0.035, -0.055, 0.2, 0.5),
    ("hand", 1.0, "0 0 1", "0 0 -0.11", 0.0075, 0.035, -0.0575, 0.0, 2.0),
]


def arm_xml() -> str:
    opened, closed = "", ""
    for name, mass, axis, origin, half, radius, centre, _, _ in ARM_LINKS:
        opened += (
            f'<body name="{name}" pos="{origin}"><joint type="hinge" axis="{axis}" damping="0.5"/>'
            f'<geom type="capsule" size="{radius} {half}" pos="0 0 {centre}" mass="{mass}" friction="0.5"/>'
        )
        closed += "</body>"
    return f"""
<mujoco>
  <option timestep="0.001"/>
  <worldbody>
    <geom name="ground" type="plane" size="0 0 1" friction="0.5"/>
    {opened}{closed}
    <body name="sphere" pos="-0.05 0 0.05"><freejoint/>
      <geom type="sphere" size="0.05" mass="0.5" friction="0.5"/></body>
  </worldbody>
</mujoco>
"""


def load_average() -> str:
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def mujoco_scene(xml: str, qpos=None, qvel=None):
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    if qpos is not None:
        d.qpos[:] = qpos
    if qvel is not None:
        d.qvel[:] = qvel
    mujoco.mj_forward(m, d)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state = np.empty(mujoco.mj_stateSize(m, spec))
    mujoco.mj_getState(m, d, state, spec)
    return m, d, state


def cpu(f, repeat: int) -> float:
    """Best CPU seconds of `repeat` runs of f()."""
    best = np.inf
    for _ in range(repeat):
        t = time.process_time()
        f()
        best = min(best, time.process_time() - t)
    return best


def wall(f, repeat: int) -> float:
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best


# 3 s of the falling sphere (landing, sliding, rolling): long enough for the difference of two
# timings to stand above their scatter.
OVERHEAD_STEPS = 1500


def overhead_loops() -> dict:
    """The loops of the per-call overhead measure, each running OVERHEAD_STEPS steps."""
    steps = OVERHEAD_STEPS
    sim = stiction.load(REPO / "problems" / "falling-sphere.toml", duration=3.0)
    x0 = sim.initial_state()

    def stiction_loop():
        x = x0
        for _ in range(steps):
            x = sim.step(x)

    def stiction_loop_out():
        x = x0.copy()
        for _ in range(steps):
            sim.step(x, out=x)

    m, d, state0 = mujoco_scene(SPHERE_XML, qvel=[2, 0, 0, 0, 0, 0])
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS

    def mujoco_loop():
        mujoco.mj_setState(m, d, state0, spec)
        for _ in range(steps):
            mujoco.mj_step(m, d)

    return {
        "loop": stiction_loop,
        "loop_out": stiction_loop_out,
        "native": lambda: sim.rollout(x0, steps=steps),
        "m_loop": mujoco_loop,
        "m_native": lambda: mj_rollout.rollout(m, d, state0[None], nstep=steps),
    }


def per_call_overhead(repeat: int) -> None:
    steps = OVERHEAD_STEPS
    loops = overhead_loops()
    best = dict.fromkeys(loops, np.inf)
    for _ in range(repeat):
        for name, f in loops.items():
            best[name] = min(best[name], cpu(f, 1))
    t = {name: seconds / steps * 1e6 for name, seconds in best.items()}
    overhead = t["loop"] - t["native"]
    m_overhead = t["m_loop"] - t["m_native"]
    print(f"per-call overhead, falling sphere, {steps} steps, best of {repeat} ({load_average()}):")
    print(f"  stiction  x = sim.step(x)             {t['loop']:8.2f} µs/step, native {t['native']:8.2f} µs/step, overhead {overhead:6.2f} µs/call")
    print(f"  stiction  sim.step(x, out=x)          {t['loop_out']:8.2f} µs/step, native {t['native']:8.2f} µs/step, overhead {t['loop_out'] - t['native']:6.2f} µs/call")
    print(f"  mujoco    mj_step(m, d)               {t['m_loop']:8.2f} µs/step, native {t['m_native']:8.2f} µs/step, overhead {m_overhead:6.2f} µs/call")
    print(f"  overhead ratio stiction / mujoco (x = sim.step(x)): {overhead / m_overhead:.2f}")


def batch(name, sim, xml, qpos, qvel, nbatch, steps, threads, repeat) -> None:
    X0 = np.tile(sim.initial_state(), (nbatch, 1))
    t_ours = wall(lambda: stiction.rollout(sim, X0, steps=steps, threads=threads), repeat)
    m, d, state0 = mujoco_scene(xml, qpos, qvel)
    datas = [mujoco.MjData(m) for _ in range(threads)]
    states = np.tile(state0, (nbatch, 1))
    t_mj = wall(lambda: mj_rollout.rollout(m, datas, states, nstep=steps), repeat)
    print(f"batched rollouts, {name}: {nbatch} rollouts × {steps} steps, {threads} thread(s), best of {repeat} ({load_average()}):")
    print(f"  stiction.rollout       {nbatch / t_ours:10.1f} rollouts/s ({t_ours / (nbatch * steps) * 1e6:7.2f} µs/step)")
    print(f"  mujoco.rollout         {nbatch / t_mj:10.1f} rollouts/s ({t_mj / (nbatch * steps) * 1e6:7.2f} µs/step)")
    print(f"  throughput ratio mujoco / stiction: {t_ours / t_mj:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--count-loop",
        choices=["loop", "loop_out", "native", "m_loop", "m_native"],
        help="only run this overhead loop, once and then --repeat times, printing nothing "
        "(for an instruction count under valgrind, see docs/python.md)",
    )
    args = parser.parse_args()
    if args.count_loop:
        f = overhead_loops()[args.count_loop]
        for _ in range(1 + args.repeat):
            f()
        return
    print(f"stiction ({Path(stiction._stiction.__file__).name}) vs mujoco {mujoco.__version__}, {os.cpu_count()} cores")
    per_call_overhead(args.repeat)
    sphere = stiction.load(REPO / "problems" / "falling-sphere.toml")
    arm = stiction.load(REPO / "problems" / "arm-push-sphere.toml")
    q_arm = [link[7] for link in ARM_LINKS] + [-0.05, 0, 0.05, 1, 0, 0, 0]
    v_arm = [link[8] for link in ARM_LINKS] + [0] * 6
    for threads in sorted({1, args.threads}):
        batch("falling sphere", sphere, SPHERE_XML, None, [2, 0, 0, 0, 0, 0], 64, 150, threads, args.repeat)
        batch("7-joint arm + sphere", arm, arm_xml(), q_arm, v_arm, 16, 500, threads, args.repeat)


if __name__ == "__main__":
    main()
