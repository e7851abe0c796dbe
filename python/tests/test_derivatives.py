"""Step Jacobians by the implicit function theorem against central finite differences taken
in Python, on the manifold (retract / difference), and the gradient check of the library."""

from __future__ import annotations

import numpy as np
import pytest

import stiction

from conftest import PROBLEMS

# Central differences of a step: truncation O(h²) and the solver's convergence error over h.
# A steel sphere at rest on the ground penetrates it by m g / k = 0.5 µm, so a position step
# must stay far below that or the difference leaves the contact's smooth piece: 1 nm. A
# velocity step δv moves the penetration by δt δv: 1e-7 m/s. Efforts and parameters move
# smoothly: a relative step of 1e-6. Newton converges quadratically, so the solutions are
# accurate far below the solver's tolerance and the differences agree with the IFT to about
# 1e-7 of the largest entry.
H_Q = 1e-9
H_V = 1e-7
H = 1e-6
RTOL = 1e-5


def fd_jacobians(sim, x, u, params=()):
    """(A, B, dparams) by central differences in the tangent space, each column scaled back."""
    nq, nv, nu = sim.nq, sim.nv, sim.nu
    t = sim.time

    def f(x, u):
        sim.set_state(x, t)
        return sim.step(x, u)

    x_ref = f(x, u)

    def delta(xa, xb):
        return np.concatenate([sim.difference(xa[:nq], xb[:nq]), xa[nq:] - xb[nq:]])

    def moved(dx):
        return np.concatenate([sim.retract(x[:nq], dx[:nv]), x[nq:] + dx[nv:]])

    A = np.zeros((2 * nv, 2 * nv))
    for j in range(2 * nv):
        h = H_Q if j < nv else H_V
        e = np.zeros(2 * nv)
        e[j] = h
        A[:, j] = (delta(f(moved(e), u), x_ref) - delta(f(moved(-e), u), x_ref)) / (2 * h)
    B = np.zeros((2 * nv, nu))
    for j in range(nu):
        e = np.zeros(nu)
        e[j] = H
        B[:, j] = (delta(f(x, u + e), x_ref) - delta(f(x, u - e), x_ref)) / (2 * H)
    P = np.zeros((2 * nv, len(params)))
    for j, name in enumerate(params):
        value = sim.parameter(name)
        h = H * abs(value)
        sim.set_parameter(name, value + h)
        plus = f(x, u)
        sim.set_parameter(name, value - h)
        minus = f(x, u)
        sim.set_parameter(name, value)
        P[:, j] = (delta(plus, x_ref) - delta(minus, x_ref)) / (2 * h)
    sim.set_state(x, t)
    return A, B, P


def assert_close(ift, fd, what):
    scale = max(np.abs(fd).max(), 1.0)
    err = np.abs(ift - fd).max() / scale
    assert err < RTOL, f"{what}: max |IFT − FD| / max(|FD|, 1) = {err:.2e}"


def sliding_state(sim, steps):
    x = sim.initial_state()
    for _ in range(steps):
        x = sim.step(x)
    return x


@pytest.mark.parametrize("steps", [5, 40])
def test_sphere_jacobians_agree_with_central_differences(steps):
    # 5 steps: in flight above the ground; 40 steps: sliding on it (contact, friction).
    sim = stiction.load(PROBLEMS / "falling-sphere.toml")
    x = sliding_state(sim, steps)
    in_contact = sim.contacts()["points"].shape[0] > 0
    assert in_contact == (steps == 40)
    params = ["friction", "stiffness", "mass@sphere"]
    A, B, P = sim.step_jacobians(x, params=params)
    assert A.shape == (12, 12) and B.shape == (12, 0) and P.shape == (12, 3)
    np.testing.assert_array_equal(sim.state(), x)  # unchanged by the derivatives
    A_fd, _, P_fd = fd_jacobians(sim, x, np.zeros(0), params)
    assert_close(A, A_fd, "A")
    assert_close(P, P_fd, "dparams")
    if in_contact:
        # Sliding: friction and stiffness move the next state.
        assert np.abs(P[:, 0]).max() > 0 and np.abs(P[:, 1]).max() > 0


def test_actuated_jacobian_b_agrees_with_central_differences():
    sim = stiction.load(PROBLEMS / "push-ball.toml")
    x = sliding_state(sim, 10)
    u = np.full(sim.nu, 1.5)
    A, B, _ = sim.step_jacobians(x, u)
    A_fd, B_fd, _ = fd_jacobians(sim, x, u)
    assert_close(A, A_fd, "A")
    assert_close(B, B_fd, "B")
    assert np.abs(B).max() > 0


def test_step_jacobians_write_their_step_into_out():
    # One call per step of a rollout with its derivatives: out is what step(x, u) returns.
    sim = stiction.load(PROBLEMS / "push-ball.toml")
    x = sliding_state(sim, 10)
    u = np.full(sim.nu, 1.5)
    x_next = np.full(sim.nx, np.nan)
    A, B, _ = sim.step_jacobians(x, u, out=x_next)
    np.testing.assert_array_equal(sim.state(), x)  # still unchanged
    np.testing.assert_array_equal(x_next, sim.step(x, u))
    A2, B2, _ = sim.step_jacobians(x, u)
    np.testing.assert_array_equal(A, A2)
    np.testing.assert_array_equal(B, B2)
    # A bad out is refused before the derivatives, and left as it was.
    short = np.full(sim.nx - 1, 7.0)
    with pytest.raises(ValueError, match=r"out must have shape"):
        sim.step_jacobians(x, u, out=short)
    assert np.all(short == 7.0)


def test_gradcheck_matches_the_command_line_bars():
    sim = stiction.load(PROBLEMS / "falling-sphere.toml")
    sim.set_state(sliding_state(sim, 40), sim.time)
    check = stiction.gradcheck(sim, steps=2)
    assert set(check["blocks"]) == {"state", "friction", "stiffness", "dissipation"}
    for name, b in check["blocks"].items():
        assert b["ift_vs_fd"] < 1e-6, name
        assert b["ift_vs_direct"] < 1e-9, name
    assert len(check["columns"]["names"]) == 12 + 3
    assert check["rows"]["ift_vs_fd"].shape == (12,)
    assert check["ms_ift"] > 0
