"""What a sweep keeps of each run besides its status, time and final
energies: a recorder is called on the worker after the run, as
``recorder(result, scene)`` with the run's ``hooke.RunResult`` and the
variant's ``hooke.Scene``, and its value becomes the variant's cell in the
column of its name. Any picklable callable works; these are the common ones,
also named in text for the command line (``trajectory:12``,
``trajectory:1,0.05,0.05``, ``frequencies:3``,
``summary:statistics.total_iterations``).
"""

import json
import pathlib
import xml.etree.ElementTree as ElementTree
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..errors import SceneError


def frame_times(directory) -> tuple:
    """The frames a run wrote, from its ``frame.pvd``: (times, paths)."""
    index = pathlib.Path(directory) / "frame.pvd"
    if not index.exists():
        raise SceneError(
            f"{index}: the run wrote no frames, so there is no trajectory to record "
            "(set output.vtk_every to a number of steps)"
        )
    sets = ElementTree.parse(index).getroot().iter("DataSet")
    entries = [(float(s.get("timestep")), index.parent / s.get("file")) for s in sets]
    return [t for t, _ in entries], [p for _, p in entries]


class trajectory:
    """The path of one vertex over the run's frames, as an array (frames, 4)
    of [t, x, y, z] (s, m). The vertex is a number, or the vertex nearest a
    point of the body at rest (``point=[1.0, 0.05, 0.05]``: the tip of a
    cantilever whatever its mesh). Frames are written every
    ``output.vtk_every`` steps, so that key sets the sampling."""

    def __init__(self, vertex: Optional[int] = None, point: Optional[Sequence[float]] = None):
        if (vertex is None) == (point is None):
            raise SceneError("trajectory: give a vertex number or a rest point, one of the two")
        self.vertex = vertex
        self.point = None if point is None else [float(c) for c in point]

    def __call__(self, result, scene) -> np.ndarray:
        from .. import read_frame

        times, paths = frame_times(result.directory)
        frames = [read_frame(path) for path in paths]
        vertex = self.vertex
        if vertex is None:
            rest = frames[0]["rest_positions"]
            point = np.zeros(3)
            point[: len(self.point)] = self.point
            vertex = int(np.argmin(np.linalg.norm(rest - point, axis=1)))
        count = frames[0]["positions"].shape[0]
        if not 0 <= vertex < count:
            raise SceneError(f"trajectory: vertex {vertex} does not exist; the run's frames have {count} vertices")
        path = np.array([frame["positions"][vertex] for frame in frames])
        return np.column_stack([times, path])

    def __repr__(self) -> str:
        where = f"vertex={self.vertex}" if self.point is None else f"point={self.point}"
        return f"trajectory({where})"


class frequencies:
    """The ``count`` lowest vibration frequencies (Hz) of the variant's model
    at rest, pins held, as an array: the spectrum a material study compares."""

    def __init__(self, count: int = 1):
        if int(count) < 1:
            raise SceneError(f"frequencies: count is at least 1, got {count}")
        self.count = int(count)

    def __call__(self, result, scene) -> np.ndarray:
        from .. import modes

        values, _ = modes(scene.model(), self.count)
        return np.asarray(values)

    def __repr__(self) -> str:
        return f"frequencies({self.count})"


class summary:
    """One entry of the run's summary.json by its dotted path, such as
    ``statistics.total_iterations`` or ``final_energy.total``."""

    def __init__(self, path: str):
        self.path = path

    def __call__(self, result, scene) -> Any:
        value: Any = json.loads((pathlib.Path(result.directory) / "summary.json").read_text())
        for key in self.path.split("."):
            if not isinstance(value, dict) or key not in value:
                raise SceneError(f"summary:{self.path}: summary.json has no `{key}` there")
            value = value[key]
        return value

    def __repr__(self) -> str:
        return f"summary({self.path!r})"


def from_text(text: str) -> Callable:
    """A recorder from its command-line form: ``trajectory:VERTEX``,
    ``trajectory:X,Y,Z`` (the vertex nearest that rest point),
    ``frequencies:COUNT`` or ``summary:PATH``."""
    kind, _, argument = text.partition(":")
    try:
        if kind == "trajectory":
            numbers = [float(a) for a in argument.split(",")]
            if len(numbers) == 1 and numbers[0].is_integer():
                return trajectory(vertex=int(numbers[0]))
            return trajectory(point=numbers)
        if kind == "frequencies":
            return frequencies(int(argument or 1))
        if kind == "summary" and argument:
            return summary(argument)
    except ValueError:
        pass
    raise SceneError(
        f"record `{text}`: not one of trajectory:VERTEX, trajectory:X,Y,Z, frequencies:COUNT, summary:PATH"
    )
