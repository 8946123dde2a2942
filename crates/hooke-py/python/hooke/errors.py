"""The exceptions Hooke raises. Each carries the message the ``hooke`` command
prints, and, where known, the place it names: ``path`` and ``line`` of a file,
``key`` of a scene or material table, ``element``, ``step`` and ``time``."""

from typing import Optional


class HookeError(Exception):
    """Base class of every error Hooke raises."""

    path: Optional[str] = None
    line: Optional[int] = None
    key: Optional[str] = None
    element: Optional[int] = None
    step: Optional[int] = None
    time: Optional[float] = None


class HookeIOError(HookeError, OSError):
    """A file could not be read or written (``path``)."""


class ParseError(HookeError, ValueError):
    """A file (or scene dict) was read but is malformed (``path``, ``line``)."""


class SceneError(HookeError, ValueError):
    """A scene key, or a keyword argument standing for one, is missing,
    unknown or out of range (``key``)."""


class MaterialError(HookeError, ValueError):
    """A material parameter is out of its physical range (``key``)."""


class MeshError(HookeError, ValueError):
    """A mesh is unusable: an index out of range, a degenerate element."""


class InvalidDeformationError(HookeError, ArithmeticError):
    """A quantity was asked for where the material is undefined, such as an
    inverted element of a Neo-Hookean body (``element``)."""


class SolverError(HookeError, ArithmeticError):
    """A linear or nonlinear solve failed."""


class StepFailedError(SolverError):
    """A time step failed (``step``, ``time``); the simulation's state is the
    one before the step."""


class RunInterrupted(HookeError):
    """A run stopped on request after ``step`` (its outputs and checkpoint are
    on disk)."""
