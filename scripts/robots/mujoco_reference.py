#!/usr/bin/env python3
"""MuJoCo's mass matrix and bias forces of an MJCF model at random configurations.

Usage: mujoco_reference.py MODEL.xml [--samples 20] [--seed 0] > reference.json

For each sample: a configuration q (hinge and slide joints uniform in their range if limited,
else uniform in [-pi, pi] rad / [-0.5, 0.5] m about qpos0; free joints at a random position
within 1 m of qpos0 with a random unit quaternion), a velocity v (standard normal), and at
(q, v): M from mj_fullM (armature included) and qfrc_bias (Coriolis, centrifugal and gravity
terms; no damping, springs or other passive forces, which MuJoCo keeps in qfrc_passive).

Frames are MuJoCo's: a free joint's qpos is [x y z qw qx qy qz] and its qvel is
[v (world), omega (body frame)]. The JSON holds nq, nv, the joints in order (name, type,
qposadr, dofadr), and the samples (q, v, M as row-major nested lists, bias).
"""

import argparse
import json
import sys

import numpy as np
import mujoco

JOINT_TYPES = {
    mujoco.mjtJoint.mjJNT_FREE: "free",
    mujoco.mjtJoint.mjJNT_BALL: "ball",
    mujoco.mjtJoint.mjJNT_SLIDE: "slide",
    mujoco.mjtJoint.mjJNT_HINGE: "hinge",
}


def random_configuration(model, rng):
    q = model.qpos0.copy()
    for j in range(model.njnt):
        adr = model.jnt_qposadr[j]
        kind = model.jnt_type[j]
        if kind == mujoco.mjtJoint.mjJNT_FREE:
            q[adr:adr + 3] = model.qpos0[adr:adr + 3] + rng.uniform(-1.0, 1.0, 3)
            quat = rng.normal(size=4)
            q[adr + 3:adr + 7] = quat / np.linalg.norm(quat)
        elif kind == mujoco.mjtJoint.mjJNT_BALL:
            quat = rng.normal(size=4)
            q[adr:adr + 4] = quat / np.linalg.norm(quat)
        else:
            if model.jnt_limited[j]:
                lo, hi = model.jnt_range[j]
                q[adr] = rng.uniform(lo, hi)
            else:
                half = np.pi if kind == mujoco.mjtJoint.mjJNT_HINGE else 0.5
                q[adr] = model.qpos0[adr] + rng.uniform(-half, half)
    return q


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    model = mujoco.MjModel.from_xml_path(args.model)
    data = mujoco.MjData(model)
    rng = np.random.default_rng(args.seed)
    samples = []
    for _ in range(args.samples):
        q = random_configuration(model, rng)
        v = rng.normal(size=model.nv)
        data.qpos[:] = q
        data.qvel[:] = v
        mujoco.mj_forward(model, data)
        M = np.zeros((model.nv, model.nv))
        mujoco.mj_fullM(model, M, data.qM)
        samples.append({
            "q": q.tolist(),
            "v": v.tolist(),
            "M": M.tolist(),
            "bias": data.qfrc_bias.tolist(),
        })
    joints = [{
        "name": mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j) or "",
        "type": JOINT_TYPES[model.jnt_type[j]],
        "qposadr": int(model.jnt_qposadr[j]),
        "dofadr": int(model.jnt_dofadr[j]),
    } for j in range(model.njnt)]
    json.dump({
        "model": args.model,
        "mujoco": mujoco.__version__,
        "nq": int(model.nq),
        "nv": int(model.nv),
        "joints": joints,
        "samples": samples,
    }, sys.stdout)


if __name__ == "__main__":
    main()
