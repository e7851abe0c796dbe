"""The exceptions of stiction.

Every error of the library reaches Python as one of these, with the same message the
``stiction`` command prints (problem-file errors are located: ``FILE:LINE:COLUMN: field
`FIELD`: expected …, found …``). Each also derives from the built-in exception a Python user
would catch for it (``ValueError`` for bad input, ``RuntimeError`` for a solver failure).
"""

from __future__ import annotations

from typing import Optional


class StictionError(Exception):
    """Base class of every stiction error."""


class ProblemFileError(StictionError, ValueError):
    """A problem file, robot model file (URDF, MJCF) or data file that cannot be read or does
    not describe a valid problem.

    Attributes:
        path: the file.
        line: line of the offending value (from 1), or None.
        column: column (from 1), or None (model files give the line only).
        field: the dotted field (``body[0].mass``) or the model element (``<joint name="elbow">``),
            or None.
    """

    path: Optional[str] = None
    line: Optional[int] = None
    column: Optional[int] = None
    field: Optional[str] = None


class InvalidParameterError(StictionError, ValueError):
    """A parameter, setting or override out of its valid range, or sizes that do not agree.

    Attributes:
        name: the parameter (``dt``, ``parameter``, ``x``, …), or None.
        value: the offending value as text, or None.
    """

    name: Optional[str] = None
    value: Optional[str] = None


class SolverError(StictionError, RuntimeError):
    """A step whose contact solver failed: not converged, a non-finite value, a Cholesky
    factorization that met a non-positive pivot.

    Attributes (None where the failure carries no such statistic):
        iterations: Newton iterations performed.
        line_search_iterations: line-search iterations summed over Newton iterations.
        residual: final scaled gradient norm ‖D ∇ℓ‖.
        tolerance: right-hand side of the optimality criterion at the end.
        contacts: number of contacts nc.
        cost: final cost ℓ.
        criterion: what stopped the iterations (``"None"``, ``"Optimality"``,
            ``"CostStagnation"``).
        condition: estimate of the 1-norm condition number of the last Newton Hessian.
        stage: where a non-finite value appeared.
        body: the body whose velocities were furthest from optimality when the solve
            stopped (the message says which geometries it touched), or None.
        step: index of the failing step within a rollout (from 0).
        item: index of the failing rollout within a batch (from 0).
    """

    iterations: Optional[int] = None
    line_search_iterations: Optional[int] = None
    residual: Optional[float] = None
    tolerance: Optional[float] = None
    contacts: Optional[int] = None
    cost: Optional[float] = None
    criterion: Optional[str] = None
    condition: Optional[float] = None
    stage: Optional[str] = None
    body: Optional[str] = None
    step: Optional[int] = None
    item: Optional[int] = None


class ClosedError(StictionError, ValueError):
    """An operation on a Simulator after ``close()``."""
