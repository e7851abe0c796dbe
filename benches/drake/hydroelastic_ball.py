#!/usr/bin/env python3
"""Drake's own hydroelastic / point step ratio on stiction's `compliant-ball-rest` scene.

Builds in pydrake the scene of problems/compliant-ball-rest.toml: a free 1 kg sphere,
R = 5 cm, resting on a rigid half-space z = 0; MultibodyPlant discrete with dt = 1 ms;
friction 0.5, Hunt-Crossley dissipation 20 s/m (Lagged, Similar), relaxation time 0.04 s
(SAP); two contact models:
  - hydroelastic: the sphere compliant (modulus 4e5 Pa, resolution hint 5 / 12.5 / 25 / 50 mm
    as in stiction's bench, and 1.25 / 2.5 mm to reach stiction's polygon count), the
    half-space rigid, polygonal contact surface (Drake's default for discrete plants). Drake
    meshes a compliant sphere as its surface triangles coned to the centre (one interior
    vertex) at every hint, so it has far fewer tetrahedra and polygons than stiction's mesh
    at the same hint;
  - point: the same geometries, pair stiffness 1e6 N/m (stiction's default, as in
    point-vs-hydroelastic.toml; each side 2e6, combined in series), dissipation 20 s/m.

The ball is let settle for 0.5 s (as the Rust bench does); then, from that resting state, one
discrete update of the diagram (`CalcForcedDiscreteVariableUpdate`, the whole plant step:
geometry queries, contact surface, contact problem, solve) is timed with process CPU time,
the state re-set before each update so nothing is served from the cache. `surface` times
SceneGraph's ComputeContactSurfaces alone at the same poses. Updates are timed in
batches; the figure is the median over batches of the per-update time, minus the median cost
of the state re-set alone. A second figure times `simulator.AdvanceTo(t + dt)` (the step plus
the simulator's own bookkeeping).

Run:  python3 -m venv /tmp/drake-venv && /tmp/drake-venv/bin/pip install drake
      nice -n 10 /tmp/drake-venv/bin/python benches/drake/hydroelastic_ball.py
Options: --reps N (batches), --batch B (updates per batch), --approx sap,lagged,similar,
         --hints 0.00125,0.0025,0.005,0.0125,0.025,0.05
"""
import argparse
import statistics
import time

import pydrake
from pydrake.geometry import (
    AddCompliantHydroelasticProperties,
    HydroelasticContactRepresentation,
    AddContactMaterial,
    AddRigidHydroelasticProperties,
    HalfSpace,
    ProximityProperties,
    Sphere,
)
from pydrake.math import RigidTransform
from pydrake.multibody.plant import (
    AddMultibodyPlant,
    CoulombFriction,
    MultibodyPlantConfig,
)
from pydrake.multibody.tree import SpatialInertia
from pydrake.systems.analysis import Simulator
from pydrake.systems.framework import DiagramBuilder

R = 0.05          # m
MASS = 1.0        # kg
E = 4e5           # Pa, hydroelastic modulus
DT = 1e-3         # s
MU = 0.5
HC_D = 20.0       # s/m, Hunt-Crossley dissipation
TAU_D = 0.04      # s, SAP relaxation time (pair value; Drake adds the two sides)
K_POINT = 1e6     # N/m, pair point stiffness (Drake combines the sides in series)
V_S = 1e-4        # m/s, stiction tolerance
G = 9.81
SETTLE = 0.5      # s


def drake_version():
    try:
        from importlib.metadata import version
        return version("drake")
    except Exception:  # pragma: no cover
        return getattr(pydrake, "__version__", "unknown")


def build(contact_model, approx, hint):
    builder = DiagramBuilder()
    config = MultibodyPlantConfig(
        time_step=DT,
        contact_model=contact_model,            # "hydroelastic" or "point"
        discrete_contact_approximation=approx,  # "sap", "lagged", "similar"
        contact_surface_representation="polygon",
        stiction_tolerance=V_S,
        use_sampled_output_ports=False,  # contact results from the current state
    )
    plant, scene_graph = AddMultibodyPlant(config, builder)
    ball = plant.AddRigidBody(
        "ball", SpatialInertia.SolidSphereWithMass(MASS, R))

    def material(props):
        AddContactMaterial(
            dissipation=HC_D,
            point_stiffness=2 * K_POINT,        # 2k in series with 2k = k
            friction=CoulombFriction(MU, MU),
            properties=props)
        props.AddProperty("material", "relaxation_time", TAU_D / 2)  # τ_A + τ_B = τ_d
        return props

    ball_props = material(ProximityProperties())
    AddCompliantHydroelasticProperties(hint, E, ball_props)
    ball_geom = plant.RegisterCollisionGeometry(
        ball, RigidTransform(), Sphere(R), "ball", ball_props)

    ground_props = material(ProximityProperties())
    AddRigidHydroelasticProperties(ground_props)
    plant.RegisterCollisionGeometry(
        plant.world_body(), RigidTransform(), HalfSpace(), "ground", ground_props)
    plant.Finalize()

    diagram = builder.Build()
    simulator = Simulator(diagram)
    context = simulator.get_mutable_context()
    plant_context = plant.GetMyMutableContextFromRoot(context)
    plant.SetFreeBodyPose(plant_context, ball, RigidTransform([0.0, 0.0, R]))
    simulator.Initialize()
    return dict(diagram=diagram, plant=plant, scene_graph=scene_graph, ball=ball,
                ball_geom=ball_geom, simulator=simulator, context=context,
                plant_context=plant_context)


def mesh_size(s):
    """Tetrahedra of the ball's compliant mesh (if pydrake exposes it)."""
    try:
        sg_context = s["scene_graph"].GetMyContextFromRoot(s["context"])
        inspector = s["scene_graph"].get_query_output_port().Eval(sg_context).inspector()
        gid = s["plant"].GetCollisionGeometriesForBody(s["ball"])[0]
        mesh = inspector.maybe_get_hydroelastic_mesh(gid)
        return mesh.num_elements()
    except Exception:
        return None


def contact_summary(s):
    plant, pc = s["plant"], s["plant_context"]
    results = plant.get_contact_results_output_port().Eval(pc)
    polygons, fz = 0, 0.0
    for i in range(results.num_hydroelastic_contacts()):
        info = results.hydroelastic_contact_info(i)
        polygons += info.contact_surface().num_faces()
        fz += abs(info.F_Ac_W().translational()[2])
    for i in range(results.num_point_pair_contacts()):
        fz += abs(results.point_pair_contact_info(i).contact_force()[2])
    z = plant.GetFreeBodyPose(pc, s["ball"]).translation()[2]
    return polygons, fz, R - z


def time_update(s, reps, batch):
    """Median CPU time (s) of one forced discrete update from the resting state."""
    diagram, context = s["diagram"], s["context"]
    plant, pc = s["plant"], s["plant_context"]
    x0 = plant.GetPositionsAndVelocities(pc).copy()
    xd = diagram.AllocateDiscreteVariables()
    # Warm up.
    for _ in range(batch):
        plant.SetPositionsAndVelocities(pc, x0)
        diagram.CalcForcedDiscreteVariableUpdate(context, xd)
    full, reset = [], []
    for _ in range(reps):
        t0 = time.process_time()
        for _ in range(batch):
            plant.SetPositionsAndVelocities(pc, x0)
            diagram.CalcForcedDiscreteVariableUpdate(context, xd)
        t1 = time.process_time()
        for _ in range(batch):
            plant.SetPositionsAndVelocities(pc, x0)
        t2 = time.process_time()
        full.append((t1 - t0) / batch)
        reset.append((t2 - t1) / batch)
    plant.SetPositionsAndVelocities(pc, x0)
    return statistics.median(full) - statistics.median(reset)


def time_surface(s, reps, batch):
    """Median CPU time (s) of SceneGraph's contact-surface query alone (BVH and clipping,
    plus pybind's copy of the returned surfaces), at the present poses."""
    sg_context = s["scene_graph"].GetMyContextFromRoot(s["context"])
    query = s["scene_graph"].get_query_output_port().Eval(sg_context)
    rep = HydroelasticContactRepresentation.kPolygon
    query.ComputeContactSurfaces(rep)
    out = []
    for _ in range(reps):
        t0 = time.process_time()
        for _ in range(batch):
            query.ComputeContactSurfaces(rep)
        out.append((time.process_time() - t0) / batch)
    return statistics.median(out)


def time_advance(s, reps, batch):
    """Median CPU time (s) of simulator.AdvanceTo(t + dt), continuing from rest."""
    sim, context = s["simulator"], s["context"]
    out = []
    for _ in range(reps):
        t0 = time.process_time()
        for _ in range(batch):
            sim.AdvanceTo(context.get_time() + DT)
        out.append((time.process_time() - t0) / batch)
    return statistics.median(out)


def measure(model, approx, hint, reps, batch):
    s = build(model, approx, hint)
    s["simulator"].AdvanceTo(SETTLE)
    polygons, fz, depth = contact_summary(s)
    upd = time_update(s, reps, batch)
    surf = time_surface(s, reps, batch) if model == "hydroelastic" else None
    adv = time_advance(s, max(reps // 4, 5), batch)
    return dict(polygons=polygons, fz=fz, depth=depth, update=upd, advance=adv, surface=surf,
                tets=mesh_size(s) if model == "hydroelastic" else None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=60)
    ap.add_argument("--batch", type=int, default=20)
    ap.add_argument("--approx", default="sap,lagged")
    ap.add_argument("--hints", default="0.00125,0.0025,0.005,0.0125,0.025,0.05")
    args = ap.parse_args()
    approxes = [a for a in args.approx.split(",") if a]
    hints = [float(h) for h in args.hints.split(",") if h]

    print(f"Drake {drake_version()} (pydrake {pydrake.__file__.rsplit('/', 2)[0]})")
    print(f"scene: sphere R = {R} m, m = {MASS} kg, E = {E:g} Pa, rigid half-space, "
          f"dt = {DT:g} s, mu = {MU}, d = {HC_D} s/m, tau_d = {TAU_D} s, "
          f"point k = {K_POINT:g} N/m; weight {MASS * G:.3f} N; settle {SETTLE} s; "
          f"{args.reps} batches x {args.batch} updates, median, process CPU time")
    for approx in approxes:
        free = build("point", approx, hints[0])
        free["plant"].SetFreeBodyPose(free["plant_context"], free["ball"],
                                      RigidTransform([0.0, 0.0, 1.0]))
        free_update = time_update(free, args.reps, args.batch)
        point = measure("point", approx, hints[0], args.reps, args.batch)
        print(f"\n[{approx}] point contact: Fz = {point['fz']:.4f} N, "
              f"depth = {point['depth'] * 1e3:.4f} mm, "
              f"update {point['update'] * 1e6:.1f} us, AdvanceTo {point['advance'] * 1e6:.1f} us; "
              f"no contact (ball at z = 1 m): update {free_update * 1e6:.1f} us")
        print(f"{'hint (mm)':>9} {'tets':>7} {'polygons':>8} {'Fz (N)':>8} {'depth (mm)':>10} "
              f"{'surface (us)':>12} {'hydro (us)':>10} {'point (us)':>10} {'ratio':>6} "
              f"{'hydro Adv (us)':>14} {'point Adv (us)':>14} {'ratio':>6}")
        for hint in hints:
            h = measure("hydroelastic", approx, hint, args.reps, args.batch)
            tets = "?" if h["tets"] is None else str(h["tets"])
            print(f"{hint * 1e3:>9.2f} {tets:>7} {h['polygons']:>8d} {h['fz']:>8.4f} "
                  f"{h['depth'] * 1e3:>10.4f} {h['surface'] * 1e6:>12.1f} "
                  f"{h['update'] * 1e6:>10.1f} "
                  f"{point['update'] * 1e6:>10.1f} {h['update'] / point['update']:>6.1f} "
                  f"{h['advance'] * 1e6:>14.1f} {point['advance'] * 1e6:>14.1f} "
                  f"{h['advance'] / point['advance']:>6.1f}", flush=True)


if __name__ == "__main__":
    main()
