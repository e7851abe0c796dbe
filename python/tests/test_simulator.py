"""The Simulator against the `stiction` command line (bit for bit), the batch against the
serial loop (bit for bit), the contacts against the physics of the falling sphere."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import stiction

from conftest import PROBLEMS

# Problems stepped against the command line: a free sphere (point contact), a 7-joint arm with a
# sphere, a belt with prescribed time-dependent motion, a box under actuators with control
# laws, a compliant ball (pressure-field patches).
CLI_PROBLEMS = ["falling-sphere", "arm-push-sphere", "conveyor-oscillating", "box-pivot", "compliant-ball-rest"]


def test_sizes_names_and_initial_state_follow_the_file():
    sim = stiction.load(PROBLEMS / "falling-sphere.toml")
    assert (sim.nq, sim.nv, sim.nu, sim.nx) == (7, 6, 0, 13)
    assert sim.dt == 2e-3 and sim.num_steps == 150 and sim.time == 0.0
    assert sim.body_names == ["sphere"] and sim.joint_names == ["sphere"]
    assert sim.geometry_names == ["sphere", "ground"]
    # q = [position, quaternion w x y z], v = [ω, v]: dropped from 5 cm at 2 m/s along x.
    expected = [0, 0, 0.05, 1, 0, 0, 0, 0, 0, 0, 2, 0, 0]
    np.testing.assert_array_equal(sim.initial_state(), expected)
    np.testing.assert_array_equal(sim.state(), expected)
    arm = stiction.load(PROBLEMS / "arm-push-sphere.toml")
    assert (arm.nq, arm.nv) == (7 + 7, 7 + 6)
    assert arm.body_names[:2] == ["link1", "link2"] and arm.body_names[-1] == "sphere"


@pytest.mark.parametrize("name", CLI_PROBLEMS)
def test_step_loop_equals_the_command_line_bit_for_bit(name, cli_trajectory):
    header, rows = cli_trajectory(name)
    sim = stiction.load(PROBLEMS / f"{name}.toml")
    x = sim.initial_state()
    X = [x]
    for _ in range(sim.num_steps):
        x = sim.step(x)
        X.append(x)
    X = np.array(X)
    assert len(rows) == len(X)
    times = [r[0] for r in rows]
    t = 0.0
    for k, tk in enumerate(times):
        assert tk == t, f"time of row {k}"
        t += sim.dt
    assert sim.time == times[-1]
    states = sim.body_states(X, t0=0.0)
    assert header[1:] == [f"{b}.{c}" for b in sim.body_state_names for c in
                          ["px", "py", "pz", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz"]]
    table = np.array([r[1:] for r in rows]).reshape(states.shape)
    np.testing.assert_array_equal(states, table)
    # The rollout is the same loop, without the GIL, from the simulator's time (t = 0 again).
    sim.reset()
    np.testing.assert_array_equal(sim.rollout(sim.initial_state(), steps=sim.num_steps), X)


def test_a_urdf_robot_loads_and_steps_as_the_command_line_runs_it(tmp_path):
    from conftest import REPO, read_csv, run_cli

    urdf = REPO / "tests" / "common" / "two_link_arm.urdf"
    sim = stiction.load(urdf, duration=0.2)
    assert (sim.nq, sim.nv, sim.nu) == (2, 2, 0)
    assert sim.body_names == ["upper", "lower"] and sim.joint_names == ["shoulder", "elbow"]
    assert "ground" in sim.geometry_names
    assert "ground" not in stiction.load(urdf, ground=False).geometry_names
    run_cli("simulate", str(urdf), "--duration", "0.2", "--out", str(tmp_path / "run"), "--quiet")
    _, rows = read_csv(tmp_path / "run" / "trajectory.csv")
    X = sim.rollout(sim.initial_state(), steps=sim.num_steps)
    table = np.array([r[1:] for r in rows])
    np.testing.assert_array_equal(sim.body_states(X).reshape(table.shape), table)


MJCF_PENDULUM = """
<mujoco model="pendulum">
  <worldbody>
    <body name="arm" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="1"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_an_mjcf_model_loads_and_steps_as_the_command_line_runs_it(tmp_path):
    from conftest import read_csv, run_cli

    xml = tmp_path / "pendulum.xml"
    xml.write_text(MJCF_PENDULUM)
    sim = stiction.load(xml, duration=0.1, ground=False)
    assert (sim.nq, sim.nv, sim.nu) == (1, 1, 0)
    assert sim.body_names == ["arm"] and sim.joint_names == ["hinge"]
    run_cli("simulate", str(xml), "--duration", "0.1", "--no-ground", "--out", str(tmp_path / "run"), "--quiet")
    _, rows = read_csv(tmp_path / "run" / "trajectory.csv")
    X = sim.rollout(sim.initial_state(), steps=sim.num_steps)
    # The horizontal arm falls: gravity swings it down about the hinge.
    assert X[-1, 0] > 0.01
    table = np.array([r[1:] for r in rows])
    np.testing.assert_array_equal(sim.body_states(X).reshape(table.shape), table)


def test_explicit_efforts_drive_the_actuators():
    sim = stiction.load(PROBLEMS / "push-ball.toml")
    assert sim.nu > 0
    x0 = sim.initial_state()
    U = np.zeros((20, sim.nu))
    free = sim.rollout(x0, U)
    U[:, 0] = 5.0
    pushed = sim.rollout(x0, U)
    assert free.shape == (21, sim.nx)
    assert not np.array_equal(free[-1], pushed[-1])
    # Stepping with the same efforts is the rollout.
    x = x0
    for u in U:
        x = sim.step(x, u)
    np.testing.assert_array_equal(x, pushed[-1])


@pytest.mark.parametrize("name", ["falling-sphere", "push-ball"])
def test_batch_equals_serial_bit_for_bit(name):
    sim = stiction.load(PROBLEMS / f"{name}.toml")
    rng = np.random.default_rng(7)
    batch, horizon = 6, 60
    X0 = np.tile(sim.initial_state(), (batch, 1))
    X0[:, sim.nq:] += rng.normal(scale=0.2, size=(batch, sim.nv))
    U = rng.normal(scale=2.0, size=(batch, horizon, sim.nu))
    serial = np.array([sim.rollout(X0[i], U[i]) for i in range(batch)])
    for threads in (None, 1, 2):
        X = stiction.rollout(sim, X0, U, threads=threads)
        assert X.shape == (batch, horizon + 1, sim.nx)
        np.testing.assert_array_equal(X, serial)
    # Control laws instead of efforts.
    laws = stiction.rollout(sim, X0, steps=horizon)
    np.testing.assert_array_equal(laws[2], sim.rollout(X0[2], steps=horizon))


def test_contacts_carry_the_weight_of_the_rolling_sphere():
    sim = stiction.load(PROBLEMS / "falling-sphere.toml")
    x = sim.initial_state()
    for _ in range(sim.num_steps):
        x = sim.step(x)
    c = sim.contacts()
    assert c["points"].shape == (1, 3) and c["bodies"] == [("world", "sphere")]
    assert c["geometries"].tolist() == [[1, 0]] or c["geometries"].tolist() == [[0, 1]]
    # Rolling on the ground at t = 0.3 s: the contact carries m g = 0.5 · 9.81 N, upwards,
    # at the ground plane, and slips less than the stiction tolerance (1e-4 m/s).
    m_g = 0.5 * 9.81
    assert abs(c["normal_forces"][0] - m_g) < 1e-3 * m_g
    np.testing.assert_allclose(c["normals"][0], [0, 0, 1], atol=1e-12)
    assert abs(c["forces"][0, 2] - c["normal_forces"][0]) < 1e-9
    assert abs(c["points"][0, 2]) < 1e-4
    assert c["slips"][0] < 1e-4
    assert c["solver"]["contacts"] == 1 and c["patches"]["areas"].shape == (0,)


def test_compliant_ball_reports_its_patch():
    sim = stiction.load(PROBLEMS / "compliant-ball-rest.toml")
    x = sim.initial_state()
    for _ in range(sim.num_steps):
        x = sim.step(x)
    p = sim.contacts()["patches"]
    assert p["areas"].shape[0] >= 1 and np.all(p["areas"] > 0)
    # The patch forces balance the weight at rest (summed over patches, upwards).
    weight = sum(sim.parameter(f"mass@{b}") for b in sim.body_names) * 9.81
    assert abs(p["forces"][:, 2].sum() - weight) < 1e-2 * weight


def test_state_time_and_reset():
    sim = stiction.load(PROBLEMS / "falling-sphere.toml")
    x1 = sim.step(sim.state())
    np.testing.assert_array_equal(sim.state(), x1)
    assert sim.time == sim.dt
    sim.set_state(sim.initial_state(), t=0.5)
    assert sim.time == 0.5
    sim.reset()
    assert sim.time == 0.0 and sim.contacts()["points"].shape == (0, 3)


def test_step_into_out_equals_the_returned_array_bit_for_bit():
    sim = stiction.load(PROBLEMS / "push-ball.toml")
    ref = stiction.load(PROBLEMS / "push-ball.toml")
    rng = np.random.default_rng(3)
    U = rng.normal(scale=2.0, size=(40, sim.nu))
    x = sim.initial_state()  # stepped in place: out is x itself
    buffer = np.empty(sim.nx)
    x_ref = ref.initial_state()
    for k, u in enumerate(U):
        if k % 2:
            assert sim.step(x, u, out=x) is x
        else:
            assert sim.step(x, u, out=buffer) is buffer
            x[:] = buffer
        x_ref = ref.step(x_ref, u)
        np.testing.assert_array_equal(x, x_ref)
        np.testing.assert_array_equal(sim.state(), x_ref)
        assert sim.time == ref.time
    np.testing.assert_array_equal(sim.contacts()["forces"], ref.contacts()["forces"])


def test_step_reads_any_layout_of_x():
    sim = stiction.load(PROBLEMS / "falling-sphere.toml")
    x0 = sim.initial_state()
    expected = sim.step(x0)
    strided = np.zeros((sim.nx, 2))
    strided[:, 1] = x0
    for x in (strided[:, 1], x0.astype(">f8"), list(x0)):
        sim.reset()
        np.testing.assert_array_equal(sim.step(x), expected)


def test_pickled_simulator_steps_identically():
    sim = stiction.load(PROBLEMS / "falling-sphere.toml", dt=1e-3)
    sim.set_parameter("friction", 0.3)
    x = sim.step(sim.state())
    copy = pickle.loads(pickle.dumps(sim))
    assert copy.dt == 1e-3 and copy.parameter("friction") == 0.3 and copy.time == sim.time
    np.testing.assert_array_equal(copy.step(x), sim.step(x))


def test_overrides_apply():
    sim = stiction.load(PROBLEMS / "falling-sphere.toml", dt=1e-3, approximation="sap", duration=0.1)
    assert sim.dt == 1e-3 and sim.num_steps == 100 and sim.overrides["approximation"] == "sap"
