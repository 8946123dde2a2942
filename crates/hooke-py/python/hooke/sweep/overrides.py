"""A sweep's variants: dotted scene paths, grids of values, and the scene
dict each variant runs.

A path names one key of the scene format, tables separated by dots and
arrays indexed in brackets: ``bodies[0].material.youngs_modulus``,
``simulation.time_step``, ``obstacles[1].shape.plane.point[2]``. A table
missing along the way is made (``contact.friction`` on a scene without
``[contact]`` adds the table); an array index must exist. Whether the key
itself is one the scene format knows is left to Hooke's own scene check,
which every variant passes before any run starts.
"""

import copy
import hashlib
import itertools
import json
import re
from typing import Any, Dict, List, Sequence, Tuple, Union

from ..errors import SceneError

_STEP = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[-?\d+\])*)$")
_INDEX = re.compile(r"\[(-?\d+)\]")

Step = Union[str, int]


def parse_path(path: str) -> List[Step]:
    """``"bodies[0].material.youngs_modulus"`` → ``["bodies", 0, "material",
    "youngs_modulus"]``; a malformed path raises SceneError naming it."""
    if not isinstance(path, str) or not path:
        raise _error(path, "a parameter is a dotted scene path such as bodies[0].material.youngs_modulus")
    steps: List[Step] = []
    for part in path.split("."):
        match = _STEP.match(part)
        if match is None:
            raise _error(
                path,
                f"`{part}` is not a key name followed by optional [index] "
                "(paths look like bodies[0].material.youngs_modulus)",
            )
        steps.append(match.group(1))
        steps.extend(int(i) for i in _INDEX.findall(match.group(2)))
    return steps


def _error(path: Any, reason: str) -> SceneError:
    error = SceneError(f"sweep parameter `{path}`: {reason}")
    error.key = str(path)
    return error


def plain(value: Any) -> Any:
    """A value as the scene dict holds it: numpy scalars and arrays become
    Python numbers and lists, so variants hash and serialise alike."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return value


def apply(scene: Dict[str, Any], path: str, value: Any) -> None:
    """Sets `path` in the scene dict `scene` to `value` (in place)."""
    steps = parse_path(path)
    node: Any = scene
    walked = ""
    for position, step in enumerate(steps):
        last = position == len(steps) - 1
        if isinstance(step, int):
            if not isinstance(node, list):
                raise _error(path, f"`{walked}` is not an array, so it takes no index [{step}]")
            if not -len(node) <= step < len(node):
                count = len(node)
                raise _error(
                    path,
                    f"`{walked}` has {count} entr{'y' if count == 1 else 'ies'}, so [{step}] does not exist",
                )
            walked += f"[{step}]"
            if last:
                node[step] = value
            else:
                node = node[step]
            continue
        if not isinstance(node, dict):
            raise _error(path, f"`{walked}` is a value, not a table, so it has no key `{step}`")
        walked = f"{walked}.{step}" if walked else step
        if last:
            node[step] = value
        else:
            following = steps[position + 1]
            if step not in node:
                if isinstance(following, int):
                    raise _error(path, f"the scene has no array `{walked}` to index")
                node[step] = {}
            node = node[step]


def expand(parameters: Union[Dict[str, Sequence[Any]], Sequence[Dict[str, Any]]]) -> List[Dict[str, Any]]:
    """The variants' overrides: every combination of a grid
    ``{path: [values]}`` (the last path varies fastest), or an explicit list
    of override dicts as given."""
    if isinstance(parameters, dict):
        paths = list(parameters)
        for path in paths:
            parse_path(path)
            values = parameters[path]
            if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
                raise _error(path, "a grid gives each parameter a list of values")
            if len(list(values)) == 0:
                raise _error(path, "the list of values is empty, so the grid has no variants")
        columns = [[plain(v) for v in parameters[p]] for p in paths]
        return [dict(zip(paths, combination)) for combination in itertools.product(*columns)]
    variants = []
    for number, overrides in enumerate(parameters):
        if not isinstance(overrides, dict):
            raise SceneError(f"sweep variant {number}: an explicit variant is a dict of path → value, got {overrides!r}")
        for path in overrides:
            parse_path(path)
        variants.append({path: plain(value) for path, value in overrides.items()})
    if not variants:
        raise SceneError("the sweep has no variants: the list of overrides is empty")
    return variants


def variant_scene(base: Dict[str, Any], overrides: Dict[str, Any]) -> Dict[str, Any]:
    """The base scene dict with the overrides applied (the base is not changed)."""
    scene = copy.deepcopy(base)
    for path, value in overrides.items():
        apply(scene, path, value)
    return scene


def fingerprint(scene: Dict[str, Any], record_names: Tuple[str, ...]) -> str:
    """A variant's identity: its full scene and what it records. Reruns of a
    sweep find a finished variant by it, whatever its number."""
    text = json.dumps({"scene": scene, "record": sorted(record_names)}, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:12]
