"""stiction.distributed on a local Ray instance (ray.init(num_cpus=2)): the same results as
the local batch, and failed items reported per item."""

from __future__ import annotations

import numpy as np
import pytest

import stiction

from conftest import PROBLEMS

ray = pytest.importorskip("ray")
import stiction.distributed as sd  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_rollouts_equal_the_local_batch_and_report_failed_items():
    sim = stiction.load(PROBLEMS / "push-ball.toml")
    rng = np.random.default_rng(3)
    batch, horizon = 7, 40
    X0 = np.tile(sim.initial_state(), (batch, 1))
    X0[:, sim.nq:] += rng.normal(scale=0.1, size=(batch, sim.nv))
    U = rng.normal(size=(batch, horizon, sim.nu))
    local = stiction.rollout(sim, X0, U)
    out = sd.rollouts(sim, X0, U, items_per_task=3)
    assert out.errors == {}
    np.testing.assert_array_equal(out.X, local)
    # One bad item: its rows are NaN and its error names it; the others are unchanged.
    X0[4, 0] = np.nan
    out = sd.rollouts(PROBLEMS / "push-ball.toml", X0, U, items_per_task=3)
    assert out.failed == [4] and "x0[0] is NaN" in out.errors[4]
    assert np.isnan(out.X[4]).all()
    np.testing.assert_array_equal(np.delete(out.X, 4, axis=0), np.delete(local, 4, axis=0))


def test_a_parameter_sweep_equals_the_local_loop():
    points = [{"friction": mu} for mu in (0.1, 0.3, 0.6)] + [{"friction": -1.0}]
    out = sd.sweep(PROBLEMS / "falling-sphere.toml", points, steps=50)
    assert out.failed == [3] and "friction" in out.errors[3]
    for i, p in enumerate(points[:3]):
        sim = stiction.load(PROBLEMS / "falling-sphere.toml")
        sim.set_parameter("friction", p["friction"])
        np.testing.assert_array_equal(out.X[i], sim.rollout(sim.initial_state(), steps=50))
    # More friction stops the slide sooner: less distance travelled along x.
    assert out.X[0, -1, 0] > out.X[1, -1, 0] > out.X[2, -1, 0]


def test_identification_multi_starts_equal_local_runs():
    path = PROBLEMS / "identify" / "identify-friction.toml"
    starts = [{"friction": 0.3}, {"friction": 0.9}, {"friction": -1.0}]
    results, errors = sd.identify_starts(path, starts)
    assert list(errors) == [2] and results[2] is None
    for start, result in zip(starts[:2], results[:2]):
        local = stiction.identify(path, initial=start)
        np.testing.assert_array_equal(result["estimate"], local["estimate"])
        assert result["cost"] == local["cost"]


def test_a_task_whose_worker_dies_fails_its_items_and_no_others():
    # A worker killed outright (os._exit), retried once by Ray and dead again: the items of
    # its task are reported failed with Ray's error; the other task's items are kept.
    import os

    @ray.remote(max_retries=1)
    def dies():
        os._exit(1)

    @ray.remote
    def fine():
        return np.ones((2, 3, 4)), {}

    out = sd._gather(ray, [fine.remote(), dies.remote()], [2, 2], (3, 4))
    assert out.failed == [2, 3] and "task failed" in out.errors[2]
    assert out.X.shape == (4, 3, 4) and (out.X[:2] == 1).all() and np.isnan(out.X[2:]).all()
