"""One variant of a sweep, as a worker runs it: the scene run into its own
folder, the recorders called, and the variant's row written beside the run
(``variant.json``, replaced atomically) so that a rerun of the sweep can skip
it. A failed run or recorder gives a row with status "failed" and its
error; only the loss of the worker itself reaches the scheduler, which
retries the task elsewhere."""

import json
import math
import os
import pathlib
import time
import traceback
from typing import Any, Dict

import numpy as np

ROW_FILE = "variant.json"
ENERGIES = ("kinetic", "elastic", "gravitational", "total", "dissipated")


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        return value.item()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def write_row(directory: pathlib.Path, row: Dict[str, Any]) -> None:
    """Writes the row (plain JSON values) as the variant's result, whole or not at all."""
    text = json.dumps(row, indent=1, allow_nan=True)
    partial = directory / (ROW_FILE + ".partial")
    partial.write_text(text)
    os.replace(partial, directory / ROW_FILE)


def read_row(directory: pathlib.Path) -> Dict[str, Any]:
    return json.loads((directory / ROW_FILE).read_text())


def _energies(result) -> Dict[str, float]:
    table = result.energies
    return {name: float(table[name][-1]) if len(table[name]) else math.nan for name in ENERGIES}


def run_variant(spec: Dict[str, Any]) -> Dict[str, Any]:
    """Runs one variant (see the module's text) and returns its row."""
    import hooke

    directory = pathlib.Path(spec["directory"])
    directory.mkdir(parents=True, exist_ok=True)
    row: Dict[str, Any] = {
        "variant": spec["variant"],
        "key": spec["key"],
        "overrides": spec["overrides"],
        "status": "failed",
        "error": None,
        "steps": 0,
        "final_time": math.nan,
        "wall_seconds": math.nan,
        **{name: math.nan for name in ENERGIES},
        "recorded": {},
        "resumed": False,
        # What reproduces the variant: its whole scene, and where its relative paths start.
        "scene": spec["scene"],
        "base_directory": spec["base_directory"],
    }
    started = time.perf_counter()
    result = None
    try:
        scene = hooke.Scene.from_dict(spec["scene"], base_directory=spec["base_directory"])
        # A run cut short by a lost worker left a checkpoint: go on from it.
        if (directory / "checkpoint.json").exists():
            try:
                result = hooke.Scene.resume(str(directory), progress=False)
                row["resumed"] = True
            except hooke.HookeError as error:
                if getattr(error, "result", None) is not None:
                    raise
                result = None
        if result is None:
            result = scene.run(str(directory), progress=False)
    except hooke.HookeError as error:
        row["error"] = f"{type(error).__name__}: {error}"
        result = getattr(error, "result", None)
    except Exception as error:  # a bug must not stop the other variants either
        row["error"] = f"{type(error).__name__}: {error}\n{traceback.format_exc()}"
    row["wall_seconds"] = time.perf_counter() - started
    if result is not None:
        row["status"] = result.status
        row["steps"] = result.steps
        row["final_time"] = result.final_time
        row.update(_energies(result))
        if result.status == "completed" and row["error"] is None:
            for name, recorder in spec["record"].items():
                try:
                    row["recorded"][name] = recorder(result, scene)
                except Exception as error:
                    row["status"] = "failed"
                    row["error"] = f"record `{name}`: {type(error).__name__}: {error}"
                    break
    row = json.loads(json.dumps(_jsonable(row), allow_nan=True))
    write_row(directory, row)
    return row
