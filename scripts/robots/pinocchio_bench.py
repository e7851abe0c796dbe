#!/usr/bin/env python3
"""Times Pinocchio's crba and rnea(q, v, 0) on a URDF, for benches/robots.rs (issue 22, item 7).

Usage: pinocchio_bench.py URDF [CALLS]

At 20 random configurations within the joint limits (as the Rust bench), cycled, CALLS calls
of each (default 200000). Prints per-call CPU time (process time) in µs: raw, then with the
Python-to-C++ call overhead subtracted. The overhead is measured on `pin.computeTotalMass(model,
data)`, a call with the same two bound arguments that does almost no work; crba and rnea also
convert one or two numpy vectors, so the corrected figure still includes that conversion.
"""
import sys
import time

import numpy as np
import pinocchio as pin


def per_call(fn, args, calls):
    n = len(args)
    start = time.process_time()
    for i in range(calls):
        fn(*args[i % n])
    return (time.process_time() - start) / calls * 1e6


def main():
    urdf = sys.argv[1]
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 200000
    model = pin.buildModelFromUrdf(urdf)
    data = model.createData()
    rng = np.random.default_rng(22)
    lo = np.maximum(model.lowerPositionLimit, -3.0)
    hi = np.minimum(model.upperPositionLimit, 3.0)
    states = [(rng.uniform(lo, hi), rng.uniform(-1.0, 1.0, model.nv)) for _ in range(20)]
    zero = np.zeros(model.nv)
    crba = per_call(pin.crba, [(model, data, q) for q, _ in states], calls)
    rnea = per_call(pin.rnea, [(model, data, q, v, zero) for q, v in states], calls)
    overhead = per_call(pin.computeTotalMass, [(model, data)] * 20, calls)
    print(f"pinocchio {pin.__version__}, nv = {model.nv}, {calls} calls each")
    print(f"crba: {crba:.3f} us per call, {crba - overhead:.3f} us without the call overhead")
    print(f"rnea: {rnea:.3f} us per call, {rnea - overhead:.3f} us without the call overhead")
    print(f"call overhead (computeTotalMass): {overhead:.3f} us")


if __name__ == "__main__":
    main()
