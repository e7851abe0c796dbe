"""optimize and identify return plain dicts of arrays with the numbers of their runs."""

from __future__ import annotations

import numpy as np

import stiction

from conftest import PROBLEMS


def test_optimize_lowers_the_cost_of_push_ball():
    run = stiction.optimize(PROBLEMS / "push-ball.toml", max_iterations=3)
    sim = stiction.load(PROBLEMS / "push-ball.toml")
    T = run["controls"].shape[0]
    assert run["states"].shape == (T + 1, sim.nx) and run["controls"].shape == (T, sim.nu)
    assert run["times"].shape == (T + 1,) and run["times"][0] == 0.0
    assert run["gains"].shape[1:] == (sim.nu, 2 * sim.nv)
    assert run["cost"] < run["initial_cost"]
    assert len(run["iterations"]["cost"]) == 3
    assert run["status"] in {"converged-cost", "converged-gradient", "max-iterations", "no-further-decrease"}
    # The optimized controls reproduce the optimized states (the same step).
    X = sim.rollout(run["states"][0], run["controls"])
    np.testing.assert_array_equal(X, run["states"])


def test_identify_recovers_the_friction_of_the_sliding_box():
    path = PROBLEMS / "identify" / "identify-friction.toml"
    report = stiction.identify(path)
    assert report["names"] == ["friction"] and report["status"] == "converged"
    # The data were simulated with μ = 0.5 (the file's description), without noise: the
    # estimate is the truth to 1e-6, inside its (narrow) 95 % interval.
    mu = report["estimate"][0]
    lo, hi = report["ci95"][0]
    assert abs(mu - 0.5) < 1e-6 and lo <= mu <= hi
    assert report["initial"][0] == 0.75
    assert report["history"]["values"].shape[1] == 1
    fit = report["fits"][0]
    assert fit["measured"].shape == fit["simulated"].shape == (len(fit["times"]), 2)
    # Another start reaches the same estimate.
    again = stiction.identify(path, initial={"friction": 0.3})
    assert again["initial"][0] == 0.3 and abs(again["estimate"][0] - mu) < 1e-6
