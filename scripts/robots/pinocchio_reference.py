#!/usr/bin/env python3
"""Reference mass matrices and bias forces of a URDF robot from Pinocchio.

Loads ROBOT.urdf with Pinocchio (`pin`; kinematics and inertias only, no meshes), draws N
configurations with a fixed seed (joint positions uniform within the joint limits, the
free-flyer position uniform in [-1, 1]^3 and its orientation a uniform random unit
quaternion, velocities standard normal) and writes, as JSON:

    {"pinocchio": VERSION, "urdf": PATH, "floating": BOOL, "nq": NQ, "nv": NV,
     "joints": [{"name", "shortname", "idx_q", "idx_v", "nq", "nv"}],   # Pinocchio's order
     "samples": [{"q": [...], "v": [...], "M": [[...]], "bias": [...]}]}

in Pinocchio's own conventions: a free flyer's q = [x, y, z, qx, qy, qz, qw], its
v = [v_local, w_local] (body frame); a continuous joint's q = [cos t, sin t]; M is
`pin.crba` made symmetric, bias = `pin.rnea(model, data, q, v, 0)` (Coriolis, centrifugal
and gravity: M dv + bias = tau). The consumer (tests/robots.rs) maps joints by name.

Usage: pinocchio_reference.py ROBOT.urdf --out FILE.json [--floating] [--samples 20] [--seed 7]
"""

import argparse
import json

import numpy as np
import pinocchio as pin


def sample_configuration(model, rng):
    """A configuration within the joint limits (see the module doc)."""
    q = pin.neutral(model)
    for joint in model.joints[1:]:
        i, nq = joint.idx_q, joint.nq
        short = joint.shortname()
        if short == "JointModelFreeFlyer":
            quat = rng.normal(size=4)
            quat /= np.linalg.norm(quat)
            q[i : i + 3] = rng.uniform(-1.0, 1.0, size=3)
            q[i + 3 : i + 7] = quat  # x, y, z, w
        elif nq == 2 and joint.nv == 1:  # continuous (unbounded revolute): cos, sin
            angle = rng.uniform(-np.pi, np.pi)
            q[i : i + 2] = [np.cos(angle), np.sin(angle)]
        elif nq == 1:
            lower = model.lowerPositionLimit[i]
            upper = model.upperPositionLimit[i]
            if not (np.isfinite(lower) and np.isfinite(upper)) or lower >= upper:
                lower, upper = -np.pi, np.pi
            q[i] = rng.uniform(lower, upper)
        else:
            raise SystemExit(f"joint {model.names[joint.id]} ({short}) is not sampled")
    return q


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("urdf")
    parser.add_argument("--out", required=True)
    parser.add_argument("--floating", action="store_true")
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    if args.floating:
        model = pin.buildModelFromUrdf(args.urdf, pin.JointModelFreeFlyer())
    else:
        model = pin.buildModelFromUrdf(args.urdf)
    data = model.createData()
    rng = np.random.default_rng(args.seed)
    samples = []
    for _ in range(args.samples):
        q = sample_configuration(model, rng)
        v = rng.normal(size=model.nv)
        M = pin.crba(model, data, q)
        M = np.triu(M) + np.triu(M, 1).T
        bias = pin.rnea(model, data, q, v, np.zeros(model.nv))
        samples.append(
            {"q": q.tolist(), "v": v.tolist(), "M": M.tolist(), "bias": bias.tolist()}
        )
    joints = [
        {
            "name": model.names[j.id],
            "shortname": j.shortname(),
            "idx_q": j.idx_q,
            "idx_v": j.idx_v,
            "nq": j.nq,
            "nv": j.nv,
        }
        for j in model.joints[1:]
    ]
    report = {
        "pinocchio": pin.__version__,
        "urdf": args.urdf,
        "floating": args.floating,
        "nq": model.nq,
        "nv": model.nv,
        "joints": joints,
        "samples": samples,
    }
    with open(args.out, "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main()
