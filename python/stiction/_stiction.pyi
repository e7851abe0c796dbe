"""Type stubs of the compiled module ``stiction._stiction`` (re-exported by ``stiction``).

State vectors are x = [q, v] (nx = nq + nv), float64. Arrays may be given as any array-like
of real numbers; they are checked for shape and finiteness (ValueError) and dtype (TypeError).
"""

from os import PathLike
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

_Path = Union[str, "PathLike[str]"]
_F64 = NDArray[np.float64]

class Simulator:
    """A problem file or robot model loaded as ``stiction simulate`` loads it, with a current
    state and time (like MuJoCo's mjData). Made by ``stiction.load``."""

    @property
    def nq(self) -> int:
        """Number of generalized positions."""
    @property
    def nv(self) -> int:
        """Number of generalized velocities (the tangent-space size of q)."""
    @property
    def nu(self) -> int:
        """Number of actuators."""
    @property
    def nx(self) -> int:
        """nq + nv."""
    @property
    def dt(self) -> float:
        """Time step δt (s)."""
    @property
    def time(self) -> float:
        """Time of the current state (s)."""
    @property
    def duration(self) -> float:
        """The problem's simulated duration (s)."""
    @property
    def num_steps(self) -> int:
        """round(duration / dt): the steps ``stiction simulate`` runs."""
    @property
    def name(self) -> str:
        """The problem's name (the file's stem)."""
    @property
    def path(self) -> str:
        """The file it was loaded from."""
    @property
    def overrides(self) -> Dict[str, Any]:
        """The keyword arguments it was loaded with."""
    @property
    def body_names(self) -> List[str]:
        """Bodies of the multibody tree, in the order of their joints in q and v."""
    @property
    def joint_names(self) -> List[str]:
        """One name per joint (joint i moves body i); unnamed joints are known by their body."""
    @property
    def geometry_names(self) -> List[str]:
        """Collision geometries, indexed by ``contacts()["geometries"]``."""
    @property
    def body_state_names(self) -> List[str]:
        """Bodies of ``body_states``: tree bodies, then bodies with prescribed motion."""
    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called."""
    def state(self) -> _F64:
        """The current state x (nx,), a copy."""
    def set_state(self, x: ArrayLike, t: Optional[float] = None) -> None:
        """Makes x (nx,) the current state at time t (s; the current time if None)."""
    def initial_state(self) -> _F64:
        """The problem's initial state x0 (nx,) at t = 0."""
    def reset(self) -> None:
        """Makes the initial state current again at t = 0."""
    def step(
        self, x: ArrayLike, u: Optional[ArrayLike] = None, *, out: Optional[_F64] = None
    ) -> _F64:
        """One step from x (nx,) at the current time with efforts u (nu,) (the problem's
        control laws if None); returns x_next (nx,), which becomes current one δt later: a new
        array, or ``out`` (a writeable, contiguous float64 array of shape (nx,), x itself
        allowed) filled with it. Raises SolverError if the contact solver fails, leaving the
        current state and ``out`` unchanged."""
    def step_jacobians(
        self,
        x: ArrayLike,
        u: Optional[ArrayLike] = None,
        params: Sequence[str] = (),
        *,
        out: Optional[_F64] = None,
    ) -> Tuple[_F64, _F64, _F64]:
        """(A, B, dparams) of one step by the implicit function theorem, in the tangent space:
        A = ∂x'/∂x (2nv, 2nv) with rows [δq', δv'] and columns [δq, δv]; B = ∂x'/∂u (2nv, nu);
        dparams = ∂x'/∂θ (2nv, len(params)). q ⊕ δq = ``retract(q, δq)``, δq' =
        ``difference(q', q'_0)``. ``out`` (as ``step``'s) receives x', the step they are taken
        along (what ``step(x, u)`` returns). Leaves the current state unchanged."""
    def retract(self, q: ArrayLike, dq: ArrayLike) -> _F64:
        """q ⊕ δq (nq,) for q (nq,) and a tangent vector δq (nv,)."""
    def difference(self, q1: ArrayLike, q0: ArrayLike) -> _F64:
        """q1 ⊖ q0 (nv,), the inverse of ``retract``."""
    def rollout(
        self, x0: ArrayLike, U: Optional[ArrayLike] = None, *, steps: Optional[int] = None
    ) -> _F64:
        """X (steps + 1, nx) from x0 (nx,) at the current time with efforts U (horizon, nu),
        or ``steps`` steps under the control laws (default: the problem's duration). X[0] = x0.
        Runs without the GIL; leaves the current state unchanged."""
    def body_states(self, X: ArrayLike, t0: Optional[float] = None) -> _F64:
        """(n, nbodies, 13): px py pz qw qx qy qz vx vy vz wx wy wz of every body along X
        (n, nx), the columns of trajectory.csv."""
    def parameter(self, name: str) -> float:
        """The value of a named parameter (``friction``, ``mass@BODY``, …)."""
    def set_parameter(self, name: str, value: float) -> None:
        """Sets a named parameter (kept when the simulator is pickled)."""
    def contacts(self) -> Dict[str, Any]:
        """The last step's contacts (points, normals, forces, impulses (nc, 3); normal and
        tangential forces, slips, normal velocities, penetrations, stiction tolerances (nc,);
        bodies; geometries (nc, 2)), its pressure-field ``patches`` and ``solver`` statistics."""
    def close(self) -> None:
        """Releases the simulator; later calls raise ClosedError."""
    def __enter__(self) -> "Simulator": ...
    def __exit__(self, *exc: object) -> bool: ...

def load(path: _Path, **overrides: Any) -> Simulator:
    """Loads a problem file (.toml) or robot model (.urdf, .xml). Overrides: dt, approximation,
    linear_solver, duration; for robot models floating, package_path, position, ground."""

def rollout(
    sim: Simulator,
    X0: ArrayLike,
    U: Optional[ArrayLike] = None,
    *,
    steps: Optional[int] = None,
    threads: Optional[int] = None,
) -> _F64:
    """X (batch, steps + 1, nx) from X0 (batch, nx) with U (batch, horizon, nu) or the control
    laws, in parallel (rayon, GIL released), bit-identical to serial ``Simulator.rollout``."""

def gradcheck(
    sim: Simulator,
    x: Optional[ArrayLike] = None,
    u: Optional[ArrayLike] = None,
    params: Optional[Sequence[str]] = None,
    steps: int = 1,
) -> Dict[str, Any]:
    """IFT Jacobians against direct duals and central differences: ``blocks``, ``rows``,
    ``columns`` (worst corrected relative errors) and ms per path."""

def optimize(path: _Path, *, max_iterations: Optional[int] = None) -> Dict[str, Any]:
    """Contact-implicit iLQR on the file's ``[optimize]`` task: times, states, controls,
    gains, cost, status, iterations, task errors."""

def identify(
    path: _Path,
    *,
    data: Optional[Sequence[_Path]] = None,
    method: Optional[str] = None,
    initial: Optional[Dict[str, float]] = None,
    max_iterations: Optional[int] = None,
) -> Dict[str, Any]:
    """Parameter estimates with 95 % intervals, covariance, history and fits."""
