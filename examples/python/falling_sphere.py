"""The falling sphere from Python, notebook style: load, step, read the contacts, differentiate,
run a batch, plot.

    python examples/python/falling_sphere.py [OUT.png]     (default out/python/falling_sphere.png)

A 0.5 kg steel sphere dropped from 5 cm with 2 m/s horizontal speed (ICF Sec. IX-B) lands,
slides while friction spins it up, then rolls: its contact force settles at m g and its slip
speed falls to zero when v = ω r.
"""

# %% Load the problem file and look at it.
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import stiction  # noqa: E402

repo = Path(__file__).resolve().parents[2]
out = Path(sys.argv[1]) if len(sys.argv) > 1 else repo / "out" / "python" / "falling_sphere.png"
sim = stiction.load(repo / "problems" / "falling-sphere.toml")
print(sim)  # nq = 7 (position, quaternion), nv = 6 (ω, v), dt = 2 ms

# %% Step it, keeping the height, the horizontal speed and the contact of every step.
x = sim.initial_state()
t, height, speed, normal_force, slip = [], [], [], [], []
for _ in range(sim.num_steps):
    x = sim.step(x)
    c = sim.contacts()
    t.append(sim.time)
    height.append(x[2])
    speed.append(x[sim.nq + 3])
    normal_force.append(c["normal_forces"].sum())
    slip.append(c["slips"].max() if len(c["slips"]) else np.nan)
print(f"t = {sim.time:.3f} s: contact force {normal_force[-1]:.4f} N (m g = {0.5 * 9.81:.4f} N)")

# %% Differentiate the last step: how the next state moves with friction and the state.
A, B, dp = sim.step_jacobians(x, params=["friction"])
print(f"A is {A.shape} (tangent space: [δq (nv), δv (nv)]); ∂v'_x/∂μ = {dp[sim.nv + 3, 0]:.4f} m/s")

# %% A batch: eight initial speeds at once, in parallel, without the GIL.
sim.reset()  # back to t = 0: batches start at the simulator's time
speeds = np.linspace(0.5, 4.0, 8)
X0 = np.tile(sim.initial_state(), (len(speeds), 1))
X0[:, sim.nq + 3] = speeds
X = stiction.rollout(sim, X0, steps=sim.num_steps)

# %% Plot.
fig, axes = plt.subplots(2, 2, figsize=(10, 7), sharex=True)
axes[0, 0].plot(t, np.array(height) * 100)
axes[0, 0].set_ylabel("centre height (cm)")
axes[0, 1].plot(t, normal_force, label="normal force")
axes[0, 1].axhline(0.5 * 9.81, color="gray", ls="--", label="m g")
axes[0, 1].set_ylabel("contact force (N)")
axes[0, 1].legend()
axes[1, 0].semilogy(t, slip)
axes[1, 0].set_ylabel("slip speed (m/s)")
axes[1, 0].set_xlabel("t (s)")
times = np.arange(X.shape[1]) * sim.dt
for s, rollout in zip(speeds, X):
    axes[1, 1].plot(times, rollout[:, sim.nq + 3], label=f"{s:.1f} m/s")
axes[1, 1].set_ylabel("horizontal speed (m/s)")
axes[1, 1].set_xlabel("t (s)")
axes[1, 1].legend(fontsize=7, ncol=2)
fig.suptitle("falling sphere: lands, slides, rolls (batch of 8 initial speeds)")
fig.tight_layout()
out.parent.mkdir(parents=True, exist_ok=True)
fig.savefig(out, dpi=100)
print(f"wrote {out}")
