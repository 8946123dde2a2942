"""hooke.sweep: variants of a scene on a local Dask cluster (loopback only),
against the same scenes run one after another in this process."""

import _thread
import json
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import hooke

distributed = pytest.importorskip("distributed")
pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

BAR = {
    "name": "sweep_bar",
    "gravity": [0, 0, -9.81],
    "simulation": {"duration": 0.2, "time_step": 0.01},
    "bodies": [
        {
            "mesh": {"box": {"size": [0.4, 0.1, 0.1], "cells": [8, 2, 2]}},
            "material": {"model": "stable_neo_hookean", "youngs_modulus": 1e5, "poisson_ratio": 0.4, "density": 1000.0},
        }
    ],
    "pins": [{"select": {"plane": {"point": [0, 0, 0], "normal": [-1, 0, 0]}}}],
    "output": {"vtk_every": 5, "plot": False},
}
GRID = {
    "bodies[0].material.youngs_modulus": [1e5, 3e5],
    "bodies[0].material.poisson_ratio": [0.3, 0.45],
    "simulation.time_step": [0.01, 0.02],
}
TIP = [0.4, 0.1, 0.1]


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address="127.0.0.1:0",
        env={"RAYON_NUM_THREADS": "1"},
    )
    with distributed.Client(cluster) as connected:
        yield connected
    cluster.close()


def serial_run(overrides, directory):
    scene = hooke.sweep.overrides.variant_scene(BAR, overrides)
    return hooke.Scene.from_dict(scene).run(str(directory), progress=False)


def test_eight_variants_equal_serial_runs_bit_for_bit(client, tmp_path):
    record = {"tip": hooke.sweep.trajectory(point=TIP), "f": hooke.sweep.frequencies(2),
              "iterations": hooke.sweep.summary("statistics.total_iterations")}
    table = hooke.sweep(BAR, GRID, tmp_path / "sweep", client=client, record=record, progress=False)
    assert len(table) == 8
    assert list(table.status) == ["completed"] * 8
    # The grid's last path varies fastest.
    assert list(table["simulation.time_step"]) == [0.01, 0.02] * 4
    assert list(table["bodies[0].material.youngs_modulus"]) == [1e5] * 4 + [3e5] * 4
    for row in table.itertuples():
        overrides = {path: getattr(row, f"_{i + 2}") for i, path in enumerate(GRID)}
        assert overrides == {path: table.loc[row.Index, path] for path in GRID}
        serial = serial_run(overrides, tmp_path / "serial" / str(row.variant))
        assert row.steps == serial.steps
        assert row.total == serial.energies["total"][-1]
        assert row.kinetic == serial.energies["kinetic"][-1]
        sweep_folder = pathlib.Path(row.directory)
        assert (sweep_folder / "energies.csv").read_bytes() == (serial.directory / "energies.csv").read_bytes()
        expected = hooke.sweep.trajectory(point=TIP)(serial, None)
        assert np.array_equal(row.tip, expected)
        scene = hooke.Scene.from_dict(hooke.sweep.overrides.variant_scene(BAR, overrides))
        assert np.array_equal(row.f, hooke.modes(scene.model(), 2)[0])
        summary = json.loads((serial.directory / "summary.json").read_text())
        assert row.iterations == summary["statistics"]["total_iterations"]
    # The tip falls, more for the softer bar.
    drop = np.array([tip[-1, 3] - tip[0, 3] for tip in table.tip])
    assert np.all(drop < 0)
    assert drop[0] < drop[4]
    # The table on disk is the one returned.
    stored = hooke.sweep.load(tmp_path / "sweep")
    assert list(stored.columns) == list(table.columns)
    assert np.array_equal(np.stack(stored.tip[3]), table.tip[3])
    assert list(stored.total) == list(table.total)


def test_a_failing_variant_is_recorded_and_the_others_finish(client, tmp_path):
    # An explicit integrator far past its stability limit diverges mid-run.
    variants = [
        {"simulation.time_step": 0.001},
        {"simulation.time_step": 0.001, "integrator.kind": "symplectic_euler", "bodies[0].material.youngs_modulus": 1e9},
        {"simulation.time_step": 0.002},
    ]
    table = hooke.sweep(BAR, variants, tmp_path / "sweep", client=client, progress=False)
    assert list(table.status) == ["completed", "failed", "completed"]
    assert table.error.isna().tolist() == [True, False, True]
    assert "step" in table.error[1]
    assert table.steps[1] < 200
    # What the failed run finished is on disk, as hooke run keeps it.
    assert (pathlib.Path(table.directory[1]) / "energies.csv").exists()


def test_unknown_or_misplaced_keys_are_refused_before_any_task(tmp_path):
    with pytest.raises(hooke.errors.HookeError, match=r"`bodies\[0\]\.material\.youngs_modulu` = 100000.0: unknown field"):
        hooke.sweep(BAR, {"bodies[0].material.youngs_modulu": [1e5, 2e5]}, tmp_path / "a", progress=False)
    with pytest.raises(hooke.SceneError, match=r"`bodies` has 1 entry, so \[3\] does not exist"):
        hooke.sweep(BAR, {"bodies[3].material.youngs_modulus": [1e5]}, tmp_path / "b", progress=False)
    with pytest.raises(hooke.errors.HookeError, match=r"poisson_ratio` = 0\.5"):
        hooke.sweep(BAR, {"bodies[0].material.poisson_ratio": [0.3, 0.5]}, tmp_path / "c", progress=False)
    with pytest.raises(hooke.SceneError, match="variants 0 and 2 are the same scene"):
        hooke.sweep(BAR, [{"gravity": [0, 0, -1]}, {}, {"gravity": [0, 0, -1]}], tmp_path / "e", progress=False)
    with pytest.raises(hooke.SceneError, match="not a key name"):
        hooke.sweep(BAR, {"bodies.0.material": [1]}, tmp_path / "d", progress=False)
    for folder in "abcde":
        assert not any((tmp_path / folder / "runs").glob("*")) if (tmp_path / folder).exists() else True


class DieOnce:
    """A recorder whose first call kills its worker process outright."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __call__(self, result, scene):
        if not os.path.exists(self.marker):
            pathlib.Path(self.marker).write_text(str(os.getpid()))
            os._exit(1)
        return result.steps


def test_a_worker_killed_during_the_sweep_leaves_a_complete_result(client, tmp_path):
    marker = tmp_path / "died"
    variants = [{"simulation.time_step": dt} for dt in (0.01, 0.02, 0.04, 0.05)]
    table = hooke.sweep(BAR, variants, tmp_path / "sweep", client=client,
                        record={"steps_seen": DieOnce(marker)}, progress=False)
    assert marker.exists(), "no worker was killed"
    assert list(table.status) == ["completed"] * 4
    assert list(table.steps_seen) == list(table.steps) == [20, 10, 5, 4]
    client.wait_for_workers(2, timeout=60)


def test_a_rerun_skips_what_is_done(client, tmp_path):
    variants = [{"bodies[0].material.youngs_modulus": e} for e in (1e5, 2e5, 4e5)]
    first = hooke.sweep(BAR, variants, tmp_path / "sweep", client=client, progress=False)
    rows = {d: (pathlib.Path(d) / "variant.json").stat().st_mtime_ns for d in first.directory}
    # Lose one variant's result, as an interrupted sweep would.
    (pathlib.Path(first.directory[1]) / "variant.json").unlink()
    second = hooke.sweep(BAR, variants, tmp_path / "sweep", client=client, progress=False)
    assert list(second.directory) == list(first.directory)
    assert list(second.total) == list(first.total)
    for number, directory in enumerate(second.directory):
        changed = (pathlib.Path(directory) / "variant.json").stat().st_mtime_ns != rows[directory]
        assert changed == (number == 1)
    # A larger sweep over the same output runs only what is new.
    more = variants + [{"bodies[0].material.youngs_modulus": 8e5}]
    third = hooke.sweep(BAR, more, tmp_path / "sweep", client=client, progress=False)
    assert len(third) == 4 and list(third.status) == ["completed"] * 4
    assert len(list((tmp_path / "sweep" / "runs").iterdir())) == 4


def test_a_variant_cut_short_goes_on_from_its_checkpoint(tmp_path):
    """What a worker does when its task comes back after the worker was lost
    mid-run: the run's checkpoint is there, and the variant resumes from it
    to the same bits as a run never stopped."""
    from hooke.sweep.task import run_variant

    overrides = {"simulation.duration": 1.0, "simulation.time_step": 0.002}
    scene = hooke.sweep.overrides.variant_scene(BAR, overrides)
    folder = tmp_path / "variant"
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        hooke.Scene.from_dict(scene).run(str(folder), progress=False)
    timer.cancel()
    assert (folder / "checkpoint.json").exists()
    spec = {"variant": 0, "key": "k", "overrides": overrides, "scene": scene, "base_directory": str(tmp_path),
            "directory": str(folder), "record": {}}
    row = run_variant(spec)
    assert row["resumed"] and row["status"] == "completed" and row["steps"] == 500
    whole = serial_run(overrides, tmp_path / "whole")
    assert (folder / "energies.csv").read_bytes() == (whole.directory / "energies.csv").read_bytes()
    assert row["total"] == whole.energies["total"][-1]


def write_scene(path):
    path.write_text(
        'name = "sweep_bar"\ngravity = [0, 0, -9.81]\n'
        "[simulation]\nduration = 0.2\ntime_step = 0.01\n"
        "[[bodies]]\nmesh = { box = { size = [0.4, 0.1, 0.1], cells = [8, 2, 2] } }\n"
        'material = { model = "stable_neo_hookean", youngs_modulus = 1e5, poisson_ratio = 0.4, density = 1000.0 }\n'
        "[[pins]]\nselect = { plane = { point = [0, 0, 0], normal = [-1, 0, 0] } }\n"
        "[output]\nvtk_every = 5\nplot = false\n"
    )
    return path


def test_the_command_line_runs_a_grid_and_stops_cleanly_on_ctrl_c(tmp_path):
    scene = write_scene(tmp_path / "bar.toml")
    command = [sys.executable, "-m", "hooke.sweep", str(scene), "--workers", "2", "--quiet",
               "--set", "bodies[0].material.youngs_modulus=1e5,2e5",
               "--set", "gravity=[0, 0, -9.81],[0, -9.81, 0]",
               "--record", "tip=trajectory:0.4,0.1,0.1", "--record", "iterations=summary:statistics.total_iterations",
               "-o", str(tmp_path / "out")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "4 variants, 4 completed, 0 failed" in done.stdout
    table = hooke.sweep.load(tmp_path / "out")
    assert [list(g) for g in table.gravity] == [[0, 0, -9.81], [0, -9.81, 0]] * 2
    assert all(i > 0 for i in table.iterations)
    assert np.stack(table.tip[1]).shape == (5, 4)

    bad = subprocess.run(command[:-2] + ["--set", "simulation.time_stp=1", "-o", str(tmp_path / "bad")],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "simulation.time_stp" in bad.stderr

    # Ctrl-C: longer runs, stopped once the first variant is in.
    long = [*command[:4], "--set", "simulation.duration=5.0",
            "--set", "bodies[0].material.youngs_modulus=1e5,2e5,3e5,4e5,5e5,6e5,7e5,8e5", "-o", str(tmp_path / "long")]
    running = subprocess.Popen(long, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 240
    while not list((tmp_path / "long").glob("runs/*/variant.json")) and time.time() < deadline:
        time.sleep(0.2)
    running.send_signal(signal.SIGINT)
    _, stderr = running.communicate(timeout=120)
    assert running.returncode == 130, stderr
    assert "sweep stopped" in stderr
    kept = hooke.sweep.load(tmp_path / "long")
    assert 1 <= len(kept) < 8 and set(kept.status) == {"completed"}
    # The same command again finishes the rest.
    again = subprocess.run(long, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert len(hooke.sweep.load(tmp_path / "long")) == 8
