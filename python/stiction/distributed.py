"""Rollout batches, parameter sweeps and identification multi-starts over a Ray cluster.

Each job is cut into Ray tasks (``ray.remote``); every task loads its own Simulator from the
problem's path (with the same overrides and parameters) and runs the local, native code
(``stiction.rollout``, ``stiction.identify``) on its share, so the results are identical, bit
for bit, to one local batch. Nothing here schedules or communicates by itself: Ray does both.

    import ray, stiction, stiction.distributed as sd
    ray.init()                                  # or ray.init(address="ray://HEAD:10001")
    sim = stiction.load("problems/falling-sphere.toml")
    out = sd.rollouts(sim, X0, U)               # X0 (batch, nx), U (batch, horizon, nu)
    out.X                                       # (batch, horizon + 1, nx), NaN rows if failed
    out.errors                                  # {item: message} of the items that failed

On a real cluster every node must see the problem file (and the files it names) at the same
absolute path (a shared file system, or Ray's ``runtime_env={"working_dir": ...}``), and have
``stiction`` installed (``pip install ./python[ray]``).

A task that raises is not retried (the error is the item's result); a task whose worker dies
is retried by Ray up to ``max_retries`` times, and reported as failed if it keeps dying.
Requires the ``ray`` extra: ``pip install ./python[ray]``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

import stiction

__all__ = ["BatchResult", "rollouts", "sweep", "identify_starts"]

_Path = Union[str, "os.PathLike[str]"]


@dataclass
class BatchResult:
    """Results of a distributed job, one item per input row.

    Attributes:
        X: states (items, steps + 1, nx); the rows of a failed item are NaN.
        errors: {item index: the error message} for the items that failed.
    """

    X: np.ndarray
    errors: Dict[int, str] = field(default_factory=dict)

    @property
    def failed(self) -> List[int]:
        """Indices of the failed items, ascending."""
        return sorted(self.errors)


def _ray():
    try:
        import ray
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "stiction.distributed needs Ray: pip install ./python[ray] (or pip install ray)"
        ) from e
    if not ray.is_initialized():
        raise RuntimeError(
            "Ray is not initialized: call ray.init() (local) or ray.init(address=...) first"
        )
    return ray


@dataclass(frozen=True)
class _Source:
    """How a task makes its own Simulator: path, overrides, parameters, start time."""

    path: str
    overrides: Mapping[str, Any]
    parameters: Tuple[Tuple[str, float], ...]
    t0: float

    def load(self) -> "stiction.Simulator":
        sim = stiction.load(self.path, **dict(self.overrides))
        for name, value in self.parameters:
            sim.set_parameter(name, value)
        sim.set_state(sim.initial_state(), self.t0)
        return sim


def _source(sim_or_path: Union["stiction.Simulator", _Path], overrides) -> _Source:
    if isinstance(sim_or_path, stiction.Simulator):
        if overrides:
            raise ValueError("overrides apply to a path; a Simulator brings its own")
        # What pickling a Simulator keeps: path, overrides, state, time, parameters set on it.
        _, (path, kwargs, _x, t, parameters) = sim_or_path.__reduce__()
        return _Source(os.path.abspath(path), dict(kwargs), tuple(parameters), t)
    return _Source(os.path.abspath(os.fspath(sim_or_path)), dict(overrides or {}), (), 0.0)


def _rollout_items(source: _Source, X0: np.ndarray, U: Optional[np.ndarray], steps):
    """A task: rollouts of its items, each alone if the batch fails (per-item errors)."""
    sim = source.load()
    try:
        return stiction.rollout(sim, X0, U, steps=steps, threads=1), {}
    except (stiction.StictionError, ValueError):
        pass
    X = np.full((X0.shape[0], _steps(U, steps, sim) + 1, sim.nx), np.nan)
    errors = {}
    for i in range(X0.shape[0]):
        try:
            X[i] = sim.rollout(X0[i], None if U is None else U[i], steps=steps)
        except (stiction.StictionError, ValueError) as e:
            errors[i] = str(e)
    return X, errors


def _steps(U, steps, sim) -> int:
    if U is not None:
        return U.shape[1]
    return sim.num_steps if steps is None else steps


def _gather(ray, refs, sizes, shape_of) -> BatchResult:
    """Collects the tasks' (X, errors) in order; a task lost to Ray fails all its items."""
    parts, errors, start = [], {}, 0
    for ref, n in zip(refs, sizes):
        try:
            X, errs = ray.get(ref)
            parts.append(np.full((n,) + shape_of, np.nan) if X is None else X)
            errors.update({start + i: m for i, m in errs.items()})
        except ray.exceptions.RayError as e:
            parts.append(np.full((n,) + shape_of, np.nan))
            errors.update({start + i: f"task failed: {e}" for i in range(n)})
        start += n
    return BatchResult(np.concatenate(parts, axis=0), errors)


def rollouts(
    sim_or_path: Union["stiction.Simulator", _Path],
    X0,
    U=None,
    *,
    steps: Optional[int] = None,
    overrides: Optional[Mapping[str, Any]] = None,
    items_per_task: int = 16,
    max_retries: int = 3,
) -> BatchResult:
    """``stiction.rollout`` over Ray: rollouts from each row of X0 (batch, nx) with U (batch,
    horizon, nu) or ``steps`` steps of the control laws, ``items_per_task`` rollouts per task.

    ``sim_or_path`` is a Simulator (its path, overrides, current time and the parameters set on
    it travel to the tasks) or a file with ``overrides``.
    Returns a BatchResult equal, item by item, to the local ``stiction.rollout``.
    """
    ray = _ray()
    source = _source(sim_or_path, overrides)
    local = source.load()
    X0 = np.ascontiguousarray(X0, dtype=np.float64)
    if X0.ndim != 2 or X0.shape[1] != local.nx:
        raise ValueError(f"X0 must have shape (batch, nx={local.nx}), found {X0.shape}")
    if U is not None:
        U = np.ascontiguousarray(U, dtype=np.float64)
        if U.ndim != 3 or U.shape[0] != X0.shape[0] or U.shape[2] != local.nu:
            raise ValueError(
                f"U must have shape (batch={X0.shape[0]}, horizon, nu={local.nu}), found {U.shape}"
            )
    if items_per_task < 1:
        raise ValueError("items_per_task must be at least 1")
    n_steps = _steps(U, steps, local)
    task = ray.remote(num_cpus=1, max_retries=max_retries)(_rollout_items)
    source_ref = ray.put(source)
    refs, sizes = [], []
    for a in range(0, X0.shape[0], items_per_task):
        b = min(a + items_per_task, X0.shape[0])
        refs.append(task.remote(source_ref, X0[a:b], None if U is None else U[a:b], steps))
        sizes.append(b - a)
    return _gather(ray, refs, sizes, (n_steps + 1, local.nx))


def _sweep_item(source: _Source, values: Dict[str, float], x0, U, steps):
    """A task: one rollout with the parameters ``values`` set (the item's error if it fails)."""
    sim = source.load()
    try:
        for name, value in values.items():
            sim.set_parameter(name, value)
        X0 = sim.state() if x0 is None else x0
        return sim.rollout(X0, U, steps=steps)[None], {}
    except (stiction.StictionError, ValueError) as e:
        return None, {0: str(e)}


def sweep(
    sim_or_path: Union["stiction.Simulator", _Path],
    points: Sequence[Mapping[str, float]],
    x0=None,
    U=None,
    *,
    steps: Optional[int] = None,
    overrides: Optional[Mapping[str, Any]] = None,
    max_retries: int = 3,
) -> BatchResult:
    """A parameter sweep over Ray: one rollout per point of ``points`` (each a mapping of
    parameter names, as ``Simulator.set_parameter`` takes them, to values), from x0 (the
    initial state if None) with efforts U (horizon, nu) or ``steps`` steps of the control laws.
    Returns a BatchResult with X (len(points), steps + 1, nx)."""
    ray = _ray()
    source = _source(sim_or_path, overrides)
    local = source.load()
    if x0 is not None:
        x0 = np.ascontiguousarray(x0, dtype=np.float64)
    if U is not None:
        U = np.ascontiguousarray(U, dtype=np.float64)
    n_steps = U.shape[0] if U is not None else (local.num_steps if steps is None else steps)
    task = ray.remote(num_cpus=1, max_retries=max_retries)(_sweep_item)
    source_ref = ray.put(source)
    refs = [task.remote(source_ref, dict(p), x0, U, steps) for p in points]
    return _gather(ray, refs, [1] * len(refs), (n_steps + 1, local.nx))


def _identify_item(path: str, initial: Dict[str, float], kwargs: Dict[str, Any]):
    try:
        return stiction.identify(path, initial=initial, **kwargs), None
    except (stiction.StictionError, ValueError) as e:
        return None, str(e)


def identify_starts(
    path: _Path,
    starts: Sequence[Mapping[str, float]],
    *,
    max_retries: int = 3,
    **kwargs: Any,
) -> Tuple[List[Optional[Dict[str, Any]]], Dict[int, str]]:
    """Identification multi-starts over Ray: ``stiction.identify(path, initial=start,
    **kwargs)`` for each start (a mapping of parameter names to initial values), one task each.
    Returns (results, errors): the result dict of each start (None where it failed) and
    {start index: message} of the failed ones. The best start is the one of least ``cost``."""
    ray = _ray()
    path = os.path.abspath(os.fspath(path))
    task = ray.remote(num_cpus=1, max_retries=max_retries)(_identify_item)
    refs = [task.remote(path, dict(s), kwargs) for s in starts]
    results: List[Optional[Dict[str, Any]]] = []
    errors: Dict[int, str] = {}
    for i, ref in enumerate(refs):
        try:
            result, error = ray.get(ref)
        except ray.exceptions.RayError as e:
            result, error = None, f"task failed: {e}"
        results.append(result)
        if error is not None:
            errors[i] = error
    return results, errors
