"""stiction: differentiable simulation of multibody systems with frictional contact, from Python.

Load a problem file or a robot model, step it with numpy arrays, differentiate the step, run
batches of rollouts in parallel, optimize trajectories and identify parameters::

    import numpy as np
    import stiction

    sim = stiction.load("problems/falling-sphere.toml")
    x = sim.initial_state()            # x = [q, v], shape (nx,)
    for _ in range(100):
        x = sim.step(x)                # one step of sim.dt seconds
    A, B, dp = sim.step_jacobians(x, params=["friction"])
    X = stiction.rollout(sim, np.tile(sim.initial_state(), (8, 1)), np.zeros((8, 500, sim.nu)))

Every function and class is documented in ``docs/python.md`` and by its docstring;
``stiction.distributed`` maps the same jobs over a Ray cluster.
"""

from __future__ import annotations

from ._errors import (
    ClosedError,
    InvalidParameterError,
    ProblemFileError,
    SolverError,
    StictionError,
)
from ._stiction import Simulator, gradcheck, identify, load, optimize, rollout

__all__ = [
    "ClosedError",
    "InvalidParameterError",
    "ProblemFileError",
    "Simulator",
    "SolverError",
    "StictionError",
    "gradcheck",
    "identify",
    "load",
    "optimize",
    "rollout",
]


def _rebuild(path, overrides, x, t, parameters):
    """Unpickles a Simulator: loads ``path`` with ``overrides``, sets the ``parameters`` that
    were set on it, and makes ``x`` at time ``t`` its current state."""
    sim = load(path, **overrides)
    for name, value in parameters:
        sim.set_parameter(name, value)
    sim.set_state(x, t)
    return sim
