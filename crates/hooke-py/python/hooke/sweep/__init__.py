"""Parameter sweeps: many variants of one scene, each run as its own task on
a Dask cluster, gathered into one table.

>>> import hooke
>>> table = hooke.sweep(
...     "scenes/falling_bar.toml",
...     {"bodies[0].material.youngs_modulus": [1e5, 1e6],
...      "simulation.time_step": [0.01, 0.005]},
...     output="bar_sweep",
...     record={"tip": hooke.sweep.trajectory(point=[0.4, 0.05, 0.05])},
... )

``hooke.sweep(scene, parameters, output, ...)`` runs every variant and
returns a pandas DataFrame, one row per variant, also written to
``output/results.parquet``:

- ``variant`` (its number), one column per parameter path with the value it
  took, ``status`` ("completed", "failed" or "interrupted"), ``error``,
  ``steps``, ``final_time`` (s), ``wall_seconds``, the final ``kinetic``,
  ``elastic``, ``gravitational``, ``total`` and ``dissipated`` energies
  (J), one column per recorder, ``directory`` (the variant's run folder,
  ``output/runs/v0007-<key>``, holding what ``hooke run`` writes) and
  ``key`` (a hash of the variant's whole scene).

The scene is a path to a scene file, a ``hooke.Scene`` or a dict in the
scene format. ``parameters`` is a grid ``{path: [values]}`` (every
combination; the last path varies fastest) or a list of override dicts
``[{path: value, ...}, ...]``. Paths are the scene's keys, dotted, with
array indices: ``bodies[0].material.youngs_modulus``. Every variant's scene
is checked before any task starts, so an unknown key or a value out of range
fails at once, naming the path.

``client`` is a ``distributed.Client``; without one a ``LocalCluster`` of
``workers`` processes (default: one per core) on 127.0.0.1 runs the sweep
and is closed at the end. For a cluster, pass ``Client("tcp://host:8786")``:
the workers need this package installed and must see the scene's files and
``output`` at the same paths (a shared file system).

A variant whose run fails is recorded with its error and the others go on.
A task whose worker dies is retried on another (Dask's own rescheduling,
``distributed.scheduler.allowed-failures``), going on from the run's last
checkpoint. Running the same sweep again into the same ``output`` skips the
variants whose rows are there (``rerun_failed=True`` runs the failed ones
again). Ctrl-C cancels what is still running, writes the table of what
finished and raises KeyboardInterrupt; the next run of the sweep goes on.

Recorders (``record={"name": recorder}``) keep more of each run:
``trajectory(vertex=..., point=...)``, ``frequencies(count)``,
``summary(path)``, or any picklable ``f(result, scene)``.

From the command line: ``python -m hooke.sweep SCENE --set PATH=V1,V2 ...
-o DIR`` (``python -m hooke.sweep --help``).

The local cluster's workers are new processes that import the calling
script, so a script that runs a sweep does so under
``if __name__ == "__main__":`` (Dask's own rule for local clusters).

The variants run with one thread each by default (``threads_per_variant``),
the fastest use of the cores when there are at least as many variants as
cores; results are the same bits on any thread count.
"""

import math
import os
import pathlib
import re
import sys
import time
import types
import uuid
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from ..errors import HookeError, SceneError
from . import overrides as _overrides
from .recorders import frequencies, from_text, summary, trajectory
from .task import ENERGIES, ROW_FILE, read_row, run_variant

__all__ = ["run_sweep", "local_cluster", "trajectory", "frequencies", "summary", "load"]

RESULTS_FILE = "results.parquet"
_FIXED_COLUMNS = ("variant", "status", "error", "steps", "final_time", "wall_seconds", *ENERGIES, "directory", "key")


def _read_toml(text: str) -> Dict[str, Any]:
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib
    return tomllib.loads(text)


def _base_scene(scene) -> tuple:
    """(scene dict, base directory, name) of what the user passed."""
    from .. import Scene

    if isinstance(scene, Scene):
        return _read_toml(scene.text), str(scene.base_directory), scene.name
    if isinstance(scene, dict):
        return _overrides.plain(scene), os.getcwd(), str(scene.get("name", "scene"))
    path = pathlib.Path(scene)
    checked = Scene.from_file(str(path))  # the file's own errors, with its lines
    return _read_toml(checked.text), str(path.resolve().parent), checked.name


def _recorders(record) -> Dict[str, Callable]:
    if record is None:
        return {}
    if not isinstance(record, dict):
        raise SceneError("record: a dict of column name → recorder, such as {'tip': hooke.sweep.trajectory(vertex=12)}")
    recorders = {}
    for name, recorder in record.items():
        if name in _FIXED_COLUMNS:
            raise SceneError(f"record `{name}`: the table has a column of that name already; choose another")
        recorders[name] = from_text(recorder) if isinstance(recorder, str) else recorder
        if not callable(recorders[name]):
            raise SceneError(f"record `{name}`: {recorder!r} is neither a recorder nor its text form")
    return recorders


def _check(base: Dict[str, Any], variants, base_directory: str) -> List[Dict[str, Any]]:
    """Every variant's scene dict, each checked by Hooke's scene reader; the
    first that fails raises, naming its parameter."""
    from .. import Scene

    def check(scene, what):
        try:
            Scene.from_dict(scene, base_directory=base_directory)
        except HookeError as error:
            # The line of the dict's TOML text means nothing to the user.
            message = re.sub(r"^the scene dict \(as TOML text: Scene\.text\)(, line \d+)?: ", "", str(error))
            raised = type(error)(f"{what}: {message}")
            for field in ("key", "element"):
                setattr(raised, field, getattr(error, field, None))
            raise raised from None

    check(base, "the sweep's scene")
    scenes = []
    for number, overrides in enumerate(variants):
        scene = _overrides.variant_scene(base, overrides)
        try:
            Scene.from_dict(scene, base_directory=base_directory)
        except HookeError:
            # Name the parameter: the first one that fails on its own.
            for path, value in overrides.items():
                check(_overrides.variant_scene(base, {path: value}), f"sweep parameter `{path}` = {value!r}")
            check(scene, f"sweep variant {number} {overrides}")
        scenes.append(scene)
    return scenes


class _Progress:
    """One line on stderr: rewritten in place on a terminal, else a line
    every tenth of the sweep."""

    def __init__(self, total: int, shown: bool):
        self.total, self.shown = total, shown and total > 0
        self.terminal = shown and sys.stderr.isatty()
        self.started = time.perf_counter()
        self.last = -1

    def show(self, done: int, failed: int, skipped: int) -> None:
        if not self.shown:
            return
        tenth = done * 10 // self.total
        if not self.terminal and tenth == self.last and done != self.total:
            return
        self.last = tenth
        width = 30
        bar = "#" * (done * width // self.total) + "-" * (width - done * width // self.total)
        elapsed = time.perf_counter() - self.started
        line = (
            f"sweep [{bar}] {done}/{self.total} variants"
            f" ({failed} failed, {skipped} already done) {elapsed:.0f} s"
        )
        sys.stderr.write(("\r" + line + ("\n" if done == self.total else "")) if self.terminal else line + "\n")
        sys.stderr.flush()


def _finished(runs: pathlib.Path) -> Dict[str, pathlib.Path]:
    """Folders of variants whose rows are written, by key."""
    found = {}
    if runs.is_dir():
        for folder in sorted(runs.iterdir()):
            if (folder / ROW_FILE).is_file():
                found[folder.name.rpartition("-")[2]] = folder
    return found


def _table(rows: List[Dict[str, Any]], paths: List[str], record_names: List[str]):
    import numpy as np
    import pandas as pd

    records = []
    for row in sorted(rows, key=lambda r: r["variant"]):
        record = {"variant": row["variant"]}
        for path in paths:
            record[path] = row["overrides"].get(path)
        for name in ("status", "error", "steps", "final_time", "wall_seconds", *ENERGIES):
            record[name] = row[name]
        for name in record_names:
            value = row["recorded"].get(name)
            record[name] = np.asarray(value) if isinstance(value, list) else value
        record["directory"] = row["directory"]
        record["key"] = row["key"]
        records.append(record)
    columns = ["variant", *paths, "status", "error", "steps", "final_time", "wall_seconds", *ENERGIES,
               *record_names, "directory", "key"]
    return pd.DataFrame.from_records(records, columns=columns)


def _write_table(table, path: pathlib.Path) -> None:
    """Parquet, written whole or not at all; array cells become lists."""
    import numpy as np

    stored = table.copy()
    for column in stored.columns:
        if stored[column].dtype == object:
            stored[column] = [v.tolist() if isinstance(v, np.ndarray) else v for v in stored[column]]
    partial = path.with_suffix(".parquet.partial")
    stored.to_parquet(partial, index=False)
    os.replace(partial, path)


def load(output) -> "Any":
    """The table a sweep wrote into ``output`` (its results.parquet)."""
    import pandas as pd

    return pd.read_parquet(pathlib.Path(output) / RESULTS_FILE)


def local_cluster(workers: Optional[int] = None, threads_per_variant: int = 1):
    """A ``distributed.Client`` on a cluster of ``workers`` processes (default:
    one per core) on 127.0.0.1, set up as a sweep sets up its own: one task
    at a time per worker, ``threads_per_variant`` threads for Hooke in each,
    and the workers' statistical profiler off (it samples the running task
    every 10 ms, which cost about 5 % of a variant's time on 2 cores). Pass
    it as ``client=`` to run several sweeps on one cluster; close it with
    ``client.close(); client.cluster.close()``."""
    import dask
    from distributed import Client, LocalCluster

    count = workers or os.cpu_count() or 1
    # The workers take the configuration in force when they start.
    with dask.config.set({"distributed.worker.profile.enabled": False}):
        cluster = LocalCluster(
            n_workers=count,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            env={"RAYON_NUM_THREADS": str(threads_per_variant)},
        )
    return Client(cluster)


def run_sweep(
    scene,
    parameters: Union[Dict[str, Sequence[Any]], Sequence[Dict[str, Any]]],
    output,
    client=None,
    record: Optional[Dict[str, Any]] = None,
    workers: Optional[int] = None,
    threads_per_variant: int = 1,
    retries: int = 2,
    rerun_failed: bool = False,
    progress: bool = True,
):
    """Runs the sweep described in this module's text and returns its table
    (``hooke.sweep(...)`` calls this)."""
    base, base_directory, name = _base_scene(scene)
    recorders = _recorders(record)
    variants = _overrides.expand(parameters)
    paths = list(dict.fromkeys(path for overrides in variants for path in overrides))
    scenes = _check(base, variants, base_directory)
    record_names = list(recorders)

    output = pathlib.Path(output).resolve()
    runs = output / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    finished = _finished(runs)
    rows: List[Dict[str, Any]] = []
    pending = []
    seen: Dict[str, int] = {}
    for number, (overrides, variant) in enumerate(zip(variants, scenes)):
        key = _overrides.fingerprint(variant, tuple(record_names))
        if key in seen:
            raise SceneError(
                f"sweep variants {seen[key]} and {number} are the same scene ({overrides}); "
                "each variant runs once, so list it once"
            )
        seen[key] = number
        if key in finished:
            row = read_row(finished[key])
            if row["status"] == "completed" or not rerun_failed:
                row.update(variant=number, overrides=overrides, directory=str(finished[key]))
                rows.append(row)
                continue
        directory = finished.get(key, runs / f"v{number:04d}-{key}")
        pending.append({
            "variant": number,
            "key": key,
            "overrides": overrides,
            "scene": variant,
            "base_directory": base_directory,
            "directory": str(directory),
            "record": recorders,
        })
    skipped = len(rows)
    bar = _Progress(len(variants), progress)
    bar.show(skipped, sum(r["status"] != "completed" for r in rows), skipped)

    own_client = None
    if pending and client is None:
        own_client = client = local_cluster(workers, threads_per_variant)
    futures = []
    try:
        if pending:
            from distributed import as_completed

            # Keys unique to this submission: a key the scheduler still holds
            # from an earlier sweep would hand back that result without running.
            submission = uuid.uuid4().hex[:8]
            futures = [
                client.submit(run_variant, spec, key=f"hooke-{name}-{spec['key']}-{submission}", retries=retries)
                for spec in pending
            ]
            by_future = dict(zip(futures, pending))
            for future in as_completed(futures):
                spec = by_future[future]
                try:
                    row = future.result()
                except Exception as error:  # the task itself was lost (a worker died too often)
                    row = {
                        "variant": spec["variant"], "key": spec["key"], "status": "failed",
                        "error": f"{type(error).__name__}: {error}", "steps": 0, "final_time": math.nan,
                        "wall_seconds": math.nan, **{e: math.nan for e in ENERGIES}, "recorded": {},
                    }
                row.update(overrides=spec["overrides"], directory=spec["directory"])
                rows.append(row)
                bar.show(len(rows), sum(r["status"] != "completed" for r in rows), skipped)
    except KeyboardInterrupt:
        for future in futures:
            future.cancel()
        # A variant a worker finished whose result had not reached us yet is on disk.
        reported = {row["key"] for row in rows}
        for spec in pending:
            folder = pathlib.Path(spec["directory"])
            if spec["key"] not in reported and (folder / ROW_FILE).is_file():
                row = read_row(folder)
                row.update(variant=spec["variant"], overrides=spec["overrides"], directory=spec["directory"])
                rows.append(row)
        table = _table(rows, paths, record_names)
        _write_table(table, output / RESULTS_FILE)
        sys.stderr.write(
            f"\nsweep stopped: {len(rows)} of {len(variants)} variants finished, kept in "
            f"{output / RESULTS_FILE}; run the same sweep again to go on\n"
        )
        raise
    finally:
        if own_client is not None:
            cluster = own_client.cluster
            own_client.close()
            cluster.close()
    table = _table(rows, paths, record_names)
    _write_table(table, output / RESULTS_FILE)
    return table


class _CallableModule(types.ModuleType):
    """``hooke.sweep`` is this module and also the function that runs a sweep."""

    def __call__(self, *args, **kwargs):
        return run_sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
