"""Long calls release the interpreter's lock, and Ctrl-C stops them cleanly."""

import _thread
import threading
import time

import pytest

import hooke

LONG_SCENE = {
    "name": "long_bar",
    "gravity": [0, 0, -9.81],
    "simulation": {"duration": 100.0, "time_step": 0.01},
    "bodies": [
        {
            "mesh": {"box": {"size": [0.4, 0.1, 0.1], "cells": [8, 2, 2]}},
            "material": {"model": "stable_neo_hookean", "youngs_modulus": 1e5, "poisson_ratio": 0.4, "density": 1000.0},
        }
    ],
    "pins": [{"select": {"plane": {"point": [0, 0, 0], "normal": [-1, 0, 0]}}}],
    "output": {"vtk_every": 0, "plot": False},
}


def test_another_thread_runs_while_hooke_steps(bar):
    simulation = hooke.Simulation(bar, dt=0.001)
    ticks = []
    done = threading.Event()

    def count():
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    thread = threading.Thread(target=count)
    thread.start()
    started = time.perf_counter()
    simulation.step(300)
    elapsed = time.perf_counter() - started
    done.set()
    thread.join()
    during = [t for t in ticks if started <= t <= started + elapsed]
    assert elapsed > 0.05, "the call was too short to tell"
    # With the lock held the counter would stall for the whole call.
    assert len(during) >= 10, f"{len(during)} ticks in {elapsed:.3f} s"


def test_ctrl_c_stops_a_run_and_it_resumes(tmp_path):
    scene = hooke.Scene.from_dict(LONG_SCENE)
    output = tmp_path / "run"
    timer = threading.Timer(1.0, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        scene.run(output_directory=output, progress=False)
    timer.cancel()
    assert (output / "checkpoint.json").exists()
    # Resume the rest, but shortened: a scene with the same settings is resumed from its own text.
    result_steps = None
    timer = threading.Timer(1.0, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        hooke.Scene.resume(output, progress=False)
    timer.cancel()
    assert (output / "checkpoint.json").exists()
    del result_steps


def test_ctrl_c_stops_a_long_step_call(bar):
    simulation = hooke.Simulation(bar, dt=0.001)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        simulation.step(1_000_000)
    timer.cancel()
    steps = simulation.steps
    assert 0 < steps < 1_000_000
    # The state is that of the last whole step, and stepping goes on.
    simulation.step()
    assert simulation.steps == steps + 1
