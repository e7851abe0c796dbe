#!/usr/bin/env python3
"""Stiction, Drake and MuJoCo on the same clutter at 10 to 640 bodies, in one sitting.

    benches/peers/setup.sh                                   # Drake and MuJoCo into a venv
    target/peers-venv/bin/python benches/peers/peers.py      # all sizes, 3 s each
    target/peers-venv/bin/python benches/peers/peers.py --quick
    target/peers-venv/bin/python benches/peers/peers.py --sizes 10,20,40 --duration 1.5

The scene (issue 27, item 1) is the clutter of ICF Sec. X-A (problems/clutter.toml) grown by
columns: N / 10 columns of ten bodies (spheres of 10 cm diameter and 0.524 kg, boxes of 10 cm
and 1 kg, alternating, dropped from 0.1 m every 0.15 m), one column per 40 × 40 cm cell of a
grid, inside an open box whose floor is the grid (walls 80 cm high, 5 cm thick) and which grows
with the columns. The first four columns are the four columns of problems/clutter.toml, bodies
and poses as written there, so that N = 40 (a 2 × 2 grid, the 80 cm box) is the ICF scene
itself; N = 10 and 20 take its first one and two columns; the columns beyond the fourth are
drawn from `--seed` with the same spread as the file's (±1 cm across, roll and pitch within
±20°, yaw within ±45°). Every simulator gets the same bodies: a stiction problem TOML, a MuJoCo
MJCF and a pydrake MultibodyPlant, all written or built from one list.

Contact: point contact, μ = 1, k = 1e7 N/m, Hunt-Crossley d = 10 s/m (Lagged), relaxation
time 1e-4 s (SAP), stiction tolerance 1e-4 m/s, δt = 2 ms, 3 s. Drake takes the stiffness and
dissipation per geometry and combines a pair in series (each geometry 2e7 N/m gives the pair
1e7 N/m) and adds the relaxation times (each 5e-5 s); its friction is 2μ₁μ₂/(μ₁ + μ₂) = 1.
MuJoCo has no stiffness parameter: it runs at its default and at its stiffest stable setting,
`solref="0.004 1"` (time constant 2 δt, the least it accepts) and
`solimp="0.999 0.9999 0.001"`; Newton solver, pyramidal cone, Euler integrator (its defaults).

Measures, per simulator and N:
- CPU milliseconds per step. Stiction runs as a child process, the release binary's
  `stiction sweep FILE --stiffness 1e7 --model M` (one rollout, no per-step tables written),
  with RAYON_NUM_THREADS=1 (the peers run on one thread) and `[solver] condition_estimate =
  false` (the condition number of stats.csv, a diagnostic the peers do not compute, about 7 %
  of a step at N = 40); its CPU time is the child's
  (`resource.getrusage(RUSAGE_CHILDREN)`), minus that of the same command for a single step
  (loading, the summary and its figure), over the steps after the first. Drake
  (`Simulator.AdvanceTo` one step at a time) and MuJoCo (`mj_step`) run in this process, each
  step timed with the process's CPU clock, the reading of the results outside the timings.
- Newton iterations per step, mean and max: stiction's from its sweep.csv, MuJoCo's
  `solver_niter` (the largest over its constraint islands, when it splits the problem into
  islands); pydrake does not expose the iterations of Drake's solvers (shown as "-").
- Mean penetration (m) over the last 1.25 s (scaled with `--duration`): the mean over the
  steps of that window of every contact that pushes (normal force > 0); negative is a gap.
  Stiction's is its end-of-step penetration `x0 − δt v_n`; Drake's the depth of its point
  pairs at the start of the step, MuJoCo's `−dist` of its contacts at the start of the step.

The runs are interleaved: for each N, each simulator in turn, smallest N first; with
`--rounds R` every simulator runs R times at each N, round by round (each simulator once,
then again), and its CPU time is the median of its R runs (the fastest and slowest are kept
too), which a shared machine's load moves less than one run. Printed and
written to `--out` (default target/peers/DATE): results.csv, results.md (the tables with the
date, the machine and the load averages), and the scenes (clutter-N.toml, clutter-N.xml).
The exponent of the cost per step against N is fitted by least squares on log-log axes.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import math
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLUTTER = REPO / "problems" / "clutter.toml"

PER_COLUMN = 10        # bodies per column
CELL = 0.4             # m, side of the square cell of one column
WALL_THICKNESS = 0.05  # m
WALL_HEIGHT = 0.8      # m
RADIUS = 0.05          # m, sphere radius
SIDE = 0.1             # m, box side
SPHERE_MASS = 0.524    # kg
BOX_MASS = 1.0         # kg
STIFFNESS = 1e7        # N/m, pair stiffness
SIZES = [10, 20, 40, 80, 160, 320, 640]

SIMULATORS = [
    # name, kind, setting
    ("stiction Lagged", "stiction", "lagged"),
    ("stiction SAP", "stiction", "sap"),
    ("Drake Lagged", "drake", "lagged"),
    ("Drake SAP", "drake", "sap"),
    ("MuJoCo Newton, default", "mujoco", "default"),
    ("MuJoCo Newton, stiffest stable", "mujoco", "stiffest"),
]


@dataclass
class Body:
    name: str
    kind: str       # "sphere" or "box"
    position: tuple  # m
    rpy_deg: tuple   # roll, pitch, yaw (deg): R = Rz(yaw) Ry(pitch) Rx(roll)


@dataclass
class Scene:
    n: int
    nx: int  # columns along x
    ny: int  # columns along y
    bodies: list

    @property
    def half(self) -> tuple:
        """Half the inside of the box along x and y (m)."""
        return (CELL * self.nx / 2, CELL * self.ny / 2)

    def walls(self) -> list:
        """The four walls: (name, centre, full size)."""
        hx, hy = self.half
        t, h = WALL_THICKNESS, WALL_HEIGHT
        return [
            ("wall-x-", (-(hx + t / 2), 0.0, h / 2), (t, 2 * hy + 2 * t, h)),
            ("wall-x+", (hx + t / 2, 0.0, h / 2), (t, 2 * hy + 2 * t, h)),
            ("wall-y-", (0.0, -(hy + t / 2), h / 2), (2 * hx, t, h)),
            ("wall-y+", (0.0, hy + t / 2, h / 2), (2 * hx, t, h)),
        ]


def grid(columns: int) -> tuple:
    """nx × ny = columns, as square as it divides (8 → 4 × 2, 32 → 8 × 4)."""
    ny = int(math.isqrt(columns))
    while columns % ny:
        ny -= 1
    return columns // ny, ny


def column_centre(j: int, nx: int, ny: int) -> tuple:
    return (CELL * (j % nx + 0.5 - nx / 2), CELL * (j // nx + 0.5 - ny / 2))


def clutter_columns() -> list:
    """The four columns of problems/clutter.toml: per column, its bodies as (kind, offset from
    the column's centre, rpy_deg)."""
    problem = tomllib.loads(CLUTTER.read_text())
    shapes = {g["body"]: g["shape"] for g in problem["geometry"] if "body" in g}
    bodies = problem["body"]
    columns = []
    for j in range(len(bodies) // PER_COLUMN):
        cx, cy = column_centre(j, 2, 2)
        column = []
        for b in bodies[j * PER_COLUMN:(j + 1) * PER_COLUMN]:
            x, y, z = b["position"]
            column.append((shapes[b["name"]], (x - cx, y - cy, z), tuple(b.get("rpy_deg", (0.0, 0.0, 0.0)))))
        columns.append(column)
    return columns


def make_scene(n: int, seed: int) -> Scene:
    """The clutter of n bodies (a multiple of 10); see the module doc."""
    if n <= 0 or n % PER_COLUMN:
        raise ValueError(f"the number of bodies must be a positive multiple of {PER_COLUMN}, not {n}")
    columns = n // PER_COLUMN
    nx, ny = grid(columns)
    base = clutter_columns()
    rng = random.Random(seed)
    bodies = []
    for j in range(columns):
        if j < len(base):
            column = base[j]
        else:
            column = []
            for i in range(PER_COLUMN):
                kind = "sphere" if (i + j) % 2 == 0 else "box"
                offset = (round(rng.uniform(-0.01, 0.01), 4), round(rng.uniform(-0.01, 0.01), 4), 0.1 + 0.15 * i)
                rpy = (0.0, 0.0, 0.0)
                if kind == "box":
                    rpy = tuple(round(rng.uniform(-a, a), 1) for a in (20.0, 20.0, 45.0))
                column.append((kind, offset, rpy))
        cx, cy = column_centre(j, nx, ny)
        for kind, (dx, dy, z), rpy in column:
            k = len(bodies)
            bodies.append(Body(f"{kind}{k}", kind, (round(cx + dx, 4), round(cy + dy, 4), z), rpy))
    return Scene(n, nx, ny, bodies)


# ---------------------------------------------------------------- stiction


def stiction_toml(scene: Scene, duration: float) -> str:
    """The stiction problem: [simulation], [solver] and [contact] as problems/clutter.toml."""
    base = tomllib.loads(CLUTTER.read_text())
    sim, solver, contact = base["simulation"], base["solver"], base["contact"]
    lines = [
        f'description = "The clutter of problems/clutter.toml grown to {scene.n} bodies '
        f'({scene.nx} x {scene.ny} columns; benches/peers/peers.py)"',
        "",
        "[simulation]",
        f"dt = {sim['dt']}",
        f"duration = {duration}",
        f'approximation = "{sim["approximation"]}"',
        "",
        "[solver]",
        f"max_iterations = {solver['max_iterations']}",
        # The peers compute no condition number: stiction's diagnostic for stats.csv is off.
        "condition_estimate = false",
        "",
        "[contact]",
    ]
    lines += [f"{key} = {value}" for key, value in contact.items()]
    for b in scene.bodies:
        lines += ["", "[[body]]", f'name = "{b.name}"']
        lines.append(f"mass = {SPHERE_MASS if b.kind == 'sphere' else BOX_MASS}")
        lines.append("position = [%.4f, %.4f, %.3f]" % b.position)
        if b.kind == "box":
            lines.append("rpy_deg = [%.1f, %.1f, %.1f]" % b.rpy_deg)
        lines += ["", "[[geometry]]", f'name = "{b.name}"', f'body = "{b.name}"', f'shape = "{b.kind}"']
        lines.append(f"radius = {RADIUS}" if b.kind == "sphere" else f"size = [{SIDE}, {SIDE}, {SIDE}]")
    lines += ["", "[[geometry]]", 'name = "ground"', 'shape = "half-space"']
    for name, centre, size in scene.walls():
        lines += ["", "[[geometry]]", f'name = "{name}"', 'shape = "box"']
        lines.append("size = [%.4f, %.4f, %.4f]" % size)
        lines.append("position = [%.4f, %.4f, %.4f]" % centre)
    return "\n".join(lines) + "\n"


def child_cpu(command: list, env: dict) -> float:
    """CPU seconds (user + system) of running `command` to completion."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run_stiction(binary: Path, problem: Path, model: str, duration: float, settle: float, dt: float, work: Path) -> dict:
    env = dict(os.environ, RAYON_NUM_THREADS="1")
    steps = round(duration / dt)

    def sweep(out: Path, seconds: float) -> list:
        return [str(binary), "sweep", str(problem), "--stiffness", f"{STIFFNESS:g}", "--model", model,
                "--duration", repr(seconds), "--settle", repr(min(settle, seconds)),
                "--out", str(out), "--force", "--quiet"]

    one = work / f"{problem.stem}-{model}-1"
    full = work / f"{problem.stem}-{model}"
    fixed = child_cpu(sweep(one, dt), env)
    total = child_cpu(sweep(full, duration), env)
    with open(full / "sweep.csv") as f:
        row = next(csv.DictReader(f))
    return {
        "cpu_ms": (total - fixed) / (steps - 1) * 1e3,
        "iterations_mean": float(row["mean_iterations"]),
        "iterations_max": int(float(row["max_iterations"])),
        "penetration": float(row["mean_penetration"]) if row["mean_penetration"] else math.nan,
        "steps": int(row["steps"]),
    }


# ---------------------------------------------------------------- MuJoCo


def quaternion(rpy_deg: tuple) -> tuple:
    """(w, x, y, z) of R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = (math.radians(a) / 2 for a in rpy_deg)
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return (cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy, cr * cp * sy - sr * sp * cy)


def mjcf(scene: Scene, dt: float, stiffest: bool) -> str:
    solver = ' solref="0.004 1" solimp="0.999 0.9999 0.001"' if stiffest else ""
    geoms = ['    <geom name="ground" type="plane" size="0 0 1"/>']
    for name, centre, size in scene.walls():
        geoms.append('    <geom name="%s" type="box" size="%.4f %.4f %.4f" pos="%.4f %.4f %.4f"/>'
                     % ((name,) + tuple(s / 2 for s in size) + centre))
    for b in scene.bodies:
        shape = (f'type="sphere" size="{RADIUS}" mass="{SPHERE_MASS}"' if b.kind == "sphere"
                 else f'type="box" size="{SIDE / 2} {SIDE / 2} {SIDE / 2}" mass="{BOX_MASS}"')
        geoms.append('    <body name="%s" pos="%.4f %.4f %.3f" quat="%.9f %.9f %.9f %.9f"><freejoint/><geom %s/></body>'
                     % ((b.name,) + b.position + quaternion(b.rpy_deg) + (shape,)))
    body = "\n".join(geoms)
    return f"""<mujoco model="clutter-{scene.n}">
  <option timestep="{dt}" solver="Newton"/>
  <default><geom friction="1 0.005 0.0001"{solver}/></default>
  <worldbody>
{body}
  </worldbody>
</mujoco>
"""


def run_mujoco(xml: str, duration: float, settle: float, dt: float) -> dict:
    import mujoco
    import numpy as np

    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    steps = round(duration / dt)
    first_steady = steps - round(settle / dt)
    force = np.zeros(6)
    cpu, iterations, depth, count = 0.0, [], 0.0, 0
    clock = time.process_time
    for k in range(steps):
        start = clock()
        mujoco.mj_step(m, d)
        cpu += clock() - start
        islands = max(int(getattr(d, "nisland", 0)), 1)
        iterations.append(int(np.max(d.solver_niter[:islands])))
        if k >= first_steady:
            for i in range(d.ncon):
                mujoco.mj_contactForce(m, d, i, force)
                if force[0] > 0:
                    depth -= d.contact[i].dist
                    count += 1
    if not np.all(np.isfinite(d.qpos)):
        raise RuntimeError("MuJoCo diverged (non-finite positions)")
    return {
        "cpu_ms": cpu / steps * 1e3,
        "iterations_mean": sum(iterations) / steps,
        "iterations_max": max(iterations),
        "penetration": depth / count if count else math.nan,
        "steps": steps,
    }


# ---------------------------------------------------------------- Drake


def run_drake(scene: Scene, approximation: str, duration: float, settle: float, dt: float) -> dict:
    from pydrake.geometry import AddContactMaterial, Box, HalfSpace, ProximityProperties, Sphere
    from pydrake.math import RigidTransform, RollPitchYaw
    from pydrake.multibody.plant import AddMultibodyPlant, CoulombFriction, MultibodyPlantConfig
    from pydrake.multibody.tree import SpatialInertia
    from pydrake.systems.analysis import Simulator
    from pydrake.systems.framework import DiagramBuilder

    base = tomllib.loads(CLUTTER.read_text())["contact"]
    builder = DiagramBuilder()
    config = MultibodyPlantConfig(
        time_step=dt,
        contact_model="point",
        discrete_contact_approximation=approximation,
        stiction_tolerance=base["stiction_tolerance"],
    )
    plant, _ = AddMultibodyPlant(config, builder)

    def material() -> ProximityProperties:
        props = ProximityProperties()
        AddContactMaterial(
            dissipation=base["dissipation"],
            point_stiffness=2 * base["stiffness"],  # in series with another 2k: k
            friction=CoulombFriction(base["friction"], base["friction"]),
            properties=props,
        )
        props.AddProperty("material", "relaxation_time", base["relaxation_time"] / 2)  # summed
        return props

    world = plant.world_body()
    plant.RegisterCollisionGeometry(world, RigidTransform(), HalfSpace(), "ground", material())
    for name, centre, size in scene.walls():
        plant.RegisterCollisionGeometry(world, RigidTransform(list(centre)), Box(*size), name, material())
    bodies = []
    for b in scene.bodies:
        if b.kind == "sphere":
            inertia, shape = SpatialInertia.SolidSphereWithMass(SPHERE_MASS, RADIUS), Sphere(RADIUS)
        else:
            inertia, shape = SpatialInertia.SolidBoxWithMass(BOX_MASS, SIDE, SIDE, SIDE), Box(SIDE, SIDE, SIDE)
        body = plant.AddRigidBody(b.name, inertia)
        plant.RegisterCollisionGeometry(body, RigidTransform(), shape, b.name, material())
        bodies.append(body)
    plant.Finalize()
    diagram = builder.Build()
    simulator = Simulator(diagram)
    context = simulator.get_mutable_context()
    plant_context = plant.GetMyMutableContextFromRoot(context)
    for b, body in zip(scene.bodies, bodies):
        pose = RigidTransform(RollPitchYaw([math.radians(a) for a in b.rpy_deg]), list(b.position))
        plant.SetFreeBodyPose(plant_context, body, pose)
    simulator.Initialize()

    steps = round(duration / dt)
    first_steady = steps - round(settle / dt)
    cpu, depth, count = 0.0, 0.0, 0
    clock = time.process_time
    for k in range(steps):
        start = clock()
        simulator.AdvanceTo((k + 1) * dt)
        cpu += clock() - start
        if k >= first_steady:
            # The contact results of the step just taken (sampled output ports, the default).
            results = plant.get_contact_results_output_port().Eval(plant_context)
            for i in range(results.num_point_pair_contacts()):
                info = results.point_pair_contact_info(i)
                pair = info.point_pair()
                if -info.contact_force().dot(pair.nhat_BA_W) > 0:
                    depth += pair.depth
                    count += 1
    return {
        "cpu_ms": cpu / steps * 1e3,
        "iterations_mean": math.nan,
        "iterations_max": None,
        "penetration": depth / count if count else math.nan,
        "steps": steps,
    }


# ---------------------------------------------------------------- the sitting


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def load() -> float:
    return os.getloadavg()[0]


def versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for package in ("drake", "mujoco"):
        try:
            out.append(f"{package} {version(package)}")
        except PackageNotFoundError:
            out.append(f"{package} not installed")
    return ", ".join(out)


def exponent(points: list) -> float:
    """Least-squares slope of log(cost) against log(N)."""
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(c) for _, c in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx > 0 else math.nan


def fmt_iterations(r: dict) -> str:
    if r.get("iterations_max") is None:
        return "-"
    return f"{r['iterations_mean']:.1f} / {r['iterations_max']}"


def fmt(x, spec=".3g") -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def markdown(rows: list, header: dict) -> str:
    sims = [name for name, _, _ in SIMULATORS if any(r["simulator"] == name for r in rows)]
    sizes = sorted({r["n"] for r in rows})
    by = {(r["simulator"], r["n"]): r for r in rows}
    out = [
        f"Date {header['date']}; machine {header['machine']}; {header['versions']}, stiction "
        f"{header['stiction']}; load average {header['load_start']:.2f} at the start, "
        f"{header['load_end']:.2f} at the end; command `{header['command']}`.",
        "",
        "CPU ms per step:",
        "",
        "| N | " + " | ".join(sims) + " |",
        "|---|" + "---|" * len(sims),
    ]
    for n in sizes:
        cells = [fmt(by[(s, n)]["cpu_ms"]) if (s, n) in by else "-" for s in sims]
        out.append(f"| {n} | " + " | ".join(cells) + " |")
    fits = []
    for s in sims:
        points = [(n, by[(s, n)]["cpu_ms"]) for n in sizes if (s, n) in by and by[(s, n)]["cpu_ms"] > 0]
        fits.append(f"N^{exponent(points):.2f}" if len(points) > 1 else "-")
    out.append("| fit | " + " | ".join(fits) + " |")
    def ratio(a, b, n, key):
        if (a, n) in by and (b, n) in by and by[(b, n)].get(key, 0) > 0:
            return f"{by[(a, n)][key] / by[(b, n)][key]:.2f}"
        return "-"

    # With rounds, the ratios of the fastest runs too: a shared machine only ever slows a run
    # down, so the fastest of R is the least disturbed (as Python's timeit reports).
    tables = [("cpu_ms", "Ratios of CPU time per step (> 1: the first is slower):")]
    if any(r.get("rounds", 1) > 1 for r in rows):
        tables[0] = ("cpu_ms", "Ratios of CPU time per step, medians of the rounds (> 1: the first is slower):")
        tables.append(("cpu_ms_min", "The same ratios from the fastest run of each simulator:"))
    for key, title in tables:
        out += ["", title, "",
                "| N | Drake Lagged / stiction Lagged | Drake SAP / stiction SAP | stiction Lagged / MuJoCo default | stiction Lagged / MuJoCo stiffest |",
                "|---|---|---|---|---|"]
        for n in sizes:
            out.append(f"| {n} | {ratio('Drake Lagged', 'stiction Lagged', n, key)} | {ratio('Drake SAP', 'stiction SAP', n, key)} | "
                       f"{ratio('stiction Lagged', 'MuJoCo Newton, default', n, key)} | "
                       f"{ratio('stiction Lagged', 'MuJoCo Newton, stiffest stable', n, key)} |")
    out += ["", "Per size: Newton iterations per step (mean / max) and mean penetration over the steady window (m, negative: a gap):", "",
            "| N | simulator | CPU ms/step (median of the rounds, fastest-slowest) | iterations (mean / max) | mean penetration | load |",
            "|---|---|---|---|---|---|"]
    for n in sizes:
        for s in sims:
            if (s, n) in by:
                r = by[(s, n)]
                if r.get("error"):
                    out.append(f"| {n} | {s} | failed: {r['error']} | | | {r['load']:.2f} |")
                    continue
                cpu = fmt(r["cpu_ms"])
                if r.get("rounds", 1) > 1:
                    cpu += f" ({fmt(r['cpu_ms_min'])}-{fmt(r['cpu_ms_max'])})"
                out.append(f"| {n} | {s} | {cpu} | {fmt_iterations(r)} | {fmt(r['penetration'], '.2e')} | {r['load']:.2f} |")
    return "\n".join(out) + "\n"


def check_scene(seed: int) -> None:
    """The smoke test of the scene generator, without any simulator: N = 40 is
    problems/clutter.toml table for table (the condition estimate apart), every size has N bodies in a box that holds its
    grid, and no two bodies overlap at the start."""
    reference = tomllib.loads(CLUTTER.read_text())
    generated = tomllib.loads(stiction_toml(make_scene(40, seed), reference["simulation"]["duration"]))
    # The bench's one addition: the condition estimate off (a diagnostic, not the physics).
    assert generated["solver"].pop("condition_estimate") is False
    for table in ("simulation", "solver", "contact", "body", "geometry"):
        assert generated[table] == reference[table], f"N = 40: [{table}] differs from problems/clutter.toml"
    for n in SIZES:
        scene = make_scene(n, seed)
        hx, hy = scene.half
        assert len(scene.bodies) == n and scene.nx * scene.ny == n // PER_COLUMN
        for b in scene.bodies:
            x, y, _ = b.position
            # A box's half diagonal across is below 0.075 m; a cell's centre is 0.2 m from its walls.
            assert abs(x) + 0.075 < hx and abs(y) + 0.075 < hy, f"N = {n}: {b.name} outside the box"
        bound = {"sphere": RADIUS, "box": SIDE * math.sqrt(3) / 2}  # bounding spheres
        for i, a in enumerate(scene.bodies):
            for b in scene.bodies[i + 1:]:
                assert math.dist(a.position, b.position) > bound[a.kind] + bound[b.kind], \
                    f"N = {n}: {a.name} and {b.name} overlap"
        assert tomllib.loads(stiction_toml(scene, 3.0))["body"][-1]["name"] == scene.bodies[-1].name
    print(f"scene check passed: N = 40 is problems/clutter.toml; sizes {SIZES} well formed")


def combine(runs: list) -> dict:
    """One simulator's row at one N from its runs (rounds): the median CPU time, with the
    fastest and slowest; the iterations and penetration of the first run (a run is
    deterministic: every round gives the same); the mean load; the first error, if any."""
    failed = [r for r in runs if r.get("error")]
    if failed:
        return dict(failed[0], rounds=len(runs))
    cpu = sorted(r["cpu_ms"] for r in runs)
    return dict(runs[0], cpu_ms=statistics.median(cpu), cpu_ms_min=cpu[0], cpu_ms_max=cpu[-1],
                rounds=len(runs), load=statistics.fmean(r["load"] for r in runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="numbers of bodies, multiples of 10")
    parser.add_argument("--duration", type=float, default=3.0, help="simulated time (s), default 3")
    parser.add_argument("--quick", action="store_true", help="a smoke run: sizes 10,20, 0.2 s")
    parser.add_argument("--seed", type=int, default=27, help="seed of the columns beyond the fourth")
    parser.add_argument("--only", default="stiction,drake,mujoco", help="simulators to run: any of stiction, drake, mujoco")
    parser.add_argument("--binary", type=Path, default=REPO / "target" / "release" / "stiction",
                        help="stiction's release binary (cargo build --release)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="runs of each simulator at each N, interleaved; the CPU time is their median")
    parser.add_argument("--out", type=Path, help="output folder, default target/peers/DATE")
    parser.add_argument("--check-scene", action="store_true",
                        help="only check the scene generator (no simulator needed) and exit")
    args = parser.parse_args()
    if args.check_scene:
        check_scene(args.seed)
        return
    if args.quick:
        args.sizes, args.duration = "10,20", 0.2
    if args.rounds < 1:
        sys.exit("--rounds must be at least 1")
    sizes = [int(s) for s in args.sizes.split(",")]
    only = set(args.only.split(","))
    dt = tomllib.loads(CLUTTER.read_text())["simulation"]["dt"]
    settle = 1.25 * args.duration / 3.0  # ICF: the last 1.25 s of 3 s
    if "stiction" in only and not args.binary.is_file():
        sys.exit(f"no stiction binary at {args.binary}: run `cargo build --release` first")
    now = datetime.datetime.now(datetime.timezone.utc)
    out = args.out or REPO / "target" / "peers" / now.strftime("%Y-%m-%dT%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    work = out / "runs"
    work.mkdir(exist_ok=True)
    stiction_version = "-"
    if "stiction" in only:
        stiction_version = subprocess.run([str(args.binary), "--version"], capture_output=True, text=True).stdout.strip().removeprefix("stiction ")
    header = {
        "date": now.strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "versions": versions(),
        "stiction": stiction_version,
        "load_start": load(),
        "command": " ".join(["python", os.path.relpath(__file__, REPO)] + sys.argv[1:]),
    }
    print(f"{header['date']}: {header['machine']}; {header['versions']}; stiction {stiction_version}; "
          f"load average {header['load_start']:.2f}; {args.duration} s at δt = {dt} s")
    rows = []
    for n in sizes:
        scene = make_scene(n, args.seed)
        toml = out / f"clutter-{n}.toml"
        toml.write_text(stiction_toml(scene, args.duration))
        xmls = {s: mjcf(scene, dt, s == "stiffest") for s in ("default", "stiffest")}
        (out / f"clutter-{n}.xml").write_text(xmls["default"])
        (out / f"clutter-{n}-stiffest.xml").write_text(xmls["stiffest"])
        runs = {}
        for _ in range(args.rounds):
            for name, kind, setting in SIMULATORS:
                if kind not in only:
                    continue
                row = {"n": n, "simulator": name, "load": load()}
                try:
                    if kind == "stiction":
                        row.update(run_stiction(args.binary, toml, setting, args.duration, settle, dt, work))
                    elif kind == "drake":
                        row.update(run_drake(scene, setting, args.duration, settle, dt))
                    else:
                        row.update(run_mujoco(xmls[setting], args.duration, settle, dt))
                except Exception as e:  # a failed run is a row of the table, not the end of the sitting
                    detail = e.stderr.strip().splitlines()[-1] if getattr(e, "stderr", None) else str(e)
                    row.update(error=detail, cpu_ms=math.nan, iterations_mean=math.nan, iterations_max=None, penetration=math.nan)
                runs.setdefault(name, []).append(row)
                print(f"N = {n:4d}  {name:32s} {fmt(row['cpu_ms']):>8s} ms/step  iterations {fmt_iterations(row):>11s}  "
                      f"penetration {fmt(row['penetration'], '.2e'):>9s}  load {row['load']:.2f}"
                      + (f"  FAILED: {row['error']}" if row.get("error") else ""), flush=True)
        rows += [combine(r) for r in runs.values()]
    header["load_end"] = load()
    with open(out / "results.csv", "w", newline="") as f:
        fields = ["n", "simulator", "cpu_ms", "iterations_mean", "iterations_max", "penetration", "steps", "load", "error",
                  "rounds", "cpu_ms_min", "cpu_ms_max"]
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    table = markdown(rows, header)
    (out / "results.md").write_text(table)
    print()
    print(table)
    print(f"written: {out}/results.csv, results.md")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
