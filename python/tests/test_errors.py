"""Bad input gives a clear Python exception, never a crash; file errors carry the command
line's located message."""

from __future__ import annotations

import numpy as np
import pytest

import stiction

from conftest import PROBLEMS, run_cli


@pytest.fixture
def sim():
    return stiction.load(PROBLEMS / "falling-sphere.toml")


def test_wrong_shapes_are_value_errors(sim):
    with pytest.raises(ValueError, match=r"x must have shape \(nx=13,\), found \[12\]"):
        sim.step(np.zeros(12))
    with pytest.raises(ValueError, match=r"x must have shape"):
        sim.step(np.zeros((13, 1)))
    with pytest.raises(ValueError, match=r"u must have shape \(nu=0,\)"):
        sim.step(sim.state(), np.zeros(1))
    with pytest.raises(ValueError, match=r"U must have shape \(horizon, nu=0\)"):
        sim.rollout(sim.state(), np.zeros(10))
    with pytest.raises(ValueError, match=r"X0 must have shape \(batch, nx=13\)"):
        stiction.rollout(sim, np.zeros(13), np.zeros((1, 5, 0)))
    with pytest.raises(ValueError, match=r"U must have shape \(batch=2, horizon, nu=0\)"):
        stiction.rollout(sim, np.zeros((2, 13)), np.zeros((3, 5, 0)))
    with pytest.raises(ValueError, match="either U or steps"):
        sim.rollout(sim.state(), np.zeros((3, 0)), steps=3)
    with pytest.raises(MemoryError, match="does not fit in memory"):
        sim.rollout(sim.state(), steps=10**15)
    with pytest.raises(MemoryError):
        stiction.rollout(sim, np.zeros((2, 13)), steps=2**62)
    with pytest.raises(OverflowError):
        sim.rollout(sim.state(), steps=-1)


def test_wrong_dtypes_are_type_errors_and_integers_are_accepted(sim):
    with pytest.raises(TypeError, match="real numbers"):
        sim.step(sim.state().astype(complex))
    with pytest.raises(TypeError, match="real numbers"):
        sim.step(["a"] * 13)
    with pytest.raises(TypeError):
        sim.step(None)
    x = [0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    np.testing.assert_array_equal(sim.step(x), sim.step(np.array(x, dtype=np.float32)))


def test_bad_out_arrays_are_refused_and_change_nothing(sim):
    x = sim.state()
    readonly = np.zeros(13)
    readonly.flags.writeable = False
    cases = [
        (TypeError, r"out must be a numpy array of float64, found list", [0.0] * 13),
        (TypeError, r"found ndarray of dtype float32", np.zeros(13, dtype=np.float32)),
        (ValueError, r"out must have shape \(nx=13,\), found \[12\]", np.zeros(12)),
        (ValueError, r"out must have shape \(nx=13,\), found \[13, 1\]", np.zeros((13, 1))),
        (ValueError, "out is read-only", readonly),
        (ValueError, "out must be contiguous", np.zeros(26)[::2]),
    ]
    for error, message, out in cases:
        before = np.array(out, copy=True)
        with pytest.raises(error, match=message):
            sim.step(x, out=out)
        np.testing.assert_array_equal(out, before)
        assert sim.time == 0.0
    # A failing step leaves out as it was.
    bad = sim.state()
    bad[2] = -1e300
    out = np.full(13, 7.0)
    with pytest.raises(stiction.SolverError):
        sim.step(bad, out=out)
    assert np.all(out == 7.0) and sim.time == 0.0
    np.testing.assert_array_equal(sim.state(), x)


def test_non_finite_states_are_refused(sim):
    x = sim.state()
    x[4] = np.nan
    with pytest.raises(ValueError, match=r"x\[4\] is NaN: x must be finite"):
        sim.step(x)
    X0 = np.tile(sim.state(), (3, 1))
    X0[2, 0] = np.inf
    with pytest.raises(ValueError, match=r"X0\[2, 0\] is inf"):
        stiction.rollout(sim, X0, steps=2)
    with pytest.raises(ValueError, match="finite"):
        sim.set_parameter("friction", float("nan"))


def test_problem_file_errors_carry_the_command_lines_message(tmp_path):
    bad = tmp_path / "bad.toml"
    text = (PROBLEMS / "falling-sphere.toml").read_text().replace("mass = 0.5", "mass = -2.0")
    bad.write_text(text)
    cli = run_cli("simulate", str(bad), "--out", str(tmp_path / "out"), "--quiet", check=False)
    assert cli.returncode == 1
    with pytest.raises(stiction.ProblemFileError) as e:
        stiction.load(bad)
    assert cli.stderr.strip() == f"error: {e.value}"
    assert e.value.field == "body[0].mass" and e.value.line is not None
    assert str(e.value).startswith(f"{bad}:{e.value.line}:{e.value.column}: field `body[0].mass`")
    assert isinstance(e.value, ValueError) and isinstance(e.value, stiction.StictionError)
    with pytest.raises(stiction.ProblemFileError, match="a readable problem file"):
        stiction.load(tmp_path / "missing.toml")


def test_bad_overrides_and_parameters(sim):
    with pytest.raises(TypeError, match="unexpected keyword argument 'dtt'"):
        stiction.load(PROBLEMS / "falling-sphere.toml", dtt=1e-3)
    with pytest.raises(stiction.InvalidParameterError):
        stiction.load(PROBLEMS / "falling-sphere.toml", approximation="implicit")
    with pytest.raises(stiction.InvalidParameterError, match="dt"):
        stiction.load(PROBLEMS / "falling-sphere.toml", dt=-1.0)
    with pytest.raises(stiction.InvalidParameterError, match="robot model files"):
        stiction.load(PROBLEMS / "falling-sphere.toml", floating=True)
    with pytest.raises(stiction.InvalidParameterError, match="no body named `moon`"):
        sim.step_jacobians(sim.state(), params=["mass@moon"])
    with pytest.raises(stiction.InvalidParameterError):
        sim.parameter("colour")
    with pytest.raises(stiction.InvalidParameterError, match="friction"):
        sim.set_parameter("friction", -1.0)
    assert sim.parameter("friction") == 0.5  # unchanged


def test_solver_failures_raise_solver_error_with_statistics():
    sim = stiction.load(PROBLEMS / "falling-sphere.toml")
    x = sim.state()
    x[2] = -1e300  # the sphere 1e300 m below the ground: its contact impulse overflows
    with pytest.raises(stiction.SolverError) as e:
        sim.step(x)
    assert isinstance(e.value, RuntimeError)
    assert e.value.contacts == 1 and e.value.iterations == 0 and np.isnan(e.value.cost)
    assert e.value.stage is not None and e.value.body == "sphere"
    assert str(e.value).startswith(
        "near body `sphere` (in contact with ground): non-finite value in"
    )
    X0 = np.tile(sim.initial_state(), (3, 1))
    X0[1, 2] = -1e300
    with pytest.raises(stiction.SolverError) as e:
        stiction.rollout(sim, X0, steps=3)
    assert e.value.item == 1 and e.value.step == 0
    assert str(e.value).startswith("rollout 1: step 0: ")


def test_a_closed_simulator_refuses_every_call(sim):
    with sim:
        sim.step(sim.state())
    assert sim.closed
    with pytest.raises(stiction.ClosedError, match="closed"):
        sim.state()
    with pytest.raises(stiction.ClosedError):
        stiction.rollout(sim, np.zeros((1, 13)), steps=1)
    assert "closed" in repr(sim)
