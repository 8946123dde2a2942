#!/usr/bin/env python3
"""Sweep benchmark for BENCHMARKS.md ("Parameter sweeps on Dask").

16 variants of a small cantilever (1 m × 0.1 m × 0.1 m, 480 tets, stable
neo-Hookean, 100 backward-Euler steps under gravity, E and ν varied: about
a second each on one thread) run by `hooke.sweep` on a local Dask cluster
of 1 worker process and of 2, one thread per variant. Both clusters are
started before the clock; the sweeps alternate pair by pair, each into a
fresh folder (so nothing is skipped), and the ratio is taken per pair. The
tables of the two are checked equal bit for bit.

Run from the repository root after `pip install "./crates/hooke-py[sweep]"`:
    python3 benches/peer/sweep_scaling.py [--pairs 3] [--variants 16]
"""

import argparse
import concurrent.futures
import os
import pathlib
import statistics
import subprocess
import tempfile
import time

import numpy as np

import hooke

SCENE = {
    "name": "scaling_cantilever",
    "gravity": [0, 0, -9.81],
    "simulation": {"duration": 1.0, "time_step": 0.01},
    "bodies": [
        {
            "mesh": {"box": {"size": [1.0, 0.1, 0.1], "cells": [20, 2, 2], "origin": [0, -0.05, -0.05]}},
            "material": {"model": "stable_neo_hookean", "youngs_modulus": 1e7, "poisson_ratio": 0.3, "density": 1000.0},
        }
    ],
    "pins": [{"select": {"plane": {"point": [0, 0, 0], "normal": [-1, 0, 0]}}}],
    "output": {"vtk_every": 10, "plot": False},
}


def cluster(workers):
    started = time.perf_counter()
    client = hooke.sweep.local_cluster(workers)
    return client, time.perf_counter() - started


def plain_runs(scenes, folder, parallel):
    """The scene files run by the hooke program, `parallel` at a time."""
    program = os.environ.get("HOOKE_BIN", str(pathlib.Path(__file__).resolve().parents[2] / "target/release/hooke"))
    environment = dict(os.environ, RAYON_NUM_THREADS="1")

    def run(scene):
        subprocess.run([program, "run", str(scene), "-o", str(folder / scene.stem)], env=environment,
                       check=True, capture_output=True)

    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(parallel) as pool:
        list(pool.map(run, scenes))
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--variants", type=int, default=16)
    arguments = parser.parse_args()
    side = int(round(arguments.variants ** 0.5))
    grid = {
        "bodies[0].material.youngs_modulus": list(np.geomspace(3e6, 1e8, side)),
        "bodies[0].material.poisson_ratio": list(np.linspace(0.0, 0.45, arguments.variants // side)),
    }
    clients = {}
    for workers in (1, 2):
        clients[workers], startup = cluster(workers)
        print(f"local cluster of {workers} worker(s) started in {startup:.2f} s (not timed below)")
    print(f"machine: {os.cpu_count()} cores; {arguments.variants} variants per sweep")
    times = {1: [], 2: []}
    plain = {1: [], 2: []}
    tables = {}
    with tempfile.TemporaryDirectory() as scratch:
        files = []
        for number, overrides in enumerate(hooke.sweep.overrides.expand(grid)):
            scene = hooke.sweep.overrides.variant_scene(SCENE, overrides)
            path = pathlib.Path(scratch) / f"scene_{number:02d}.toml"
            path.write_text(hooke.Scene.from_dict(scene).text)
            files.append(path)
        # Each worker imports hooke on its first task: done here, before the clock.
        for workers, client in clients.items():
            hooke.sweep(SCENE, [{}] * 1 + [{"simulation.duration": 0.05}], os.path.join(scratch, f"warm-{workers}"),
                        client=client, progress=False)
        for pair in range(arguments.pairs):
            for workers in (1, 2):
                started = time.perf_counter()
                tables[workers] = hooke.sweep(SCENE, grid, os.path.join(scratch, f"{pair}-{workers}"),
                                              client=clients[workers], progress=False)
                times[workers].append(time.perf_counter() - started)
            for parallel in (1, 2):
                folder = pathlib.Path(scratch) / f"plain-{pair}-{parallel}"
                plain[parallel].append(plain_runs(files, folder, parallel))
            print(f"pair {pair + 1}: 1 worker {times[1][-1]:.2f} s, 2 workers {times[2][-1]:.2f} s, "
                  f"speed-up {times[1][-1] / times[2][-1]:.2f}×; hooke run one/two at a time "
                  f"{plain[1][-1]:.2f} s / {plain[2][-1]:.2f} s, {plain[1][-1] / plain[2][-1]:.2f}×")
    for workers in (1, 2):
        assert set(tables[workers].status) == {"completed"}
    assert list(tables[1].total) == list(tables[2].total), "the two sweeps differ"
    ratios = [one / two for one, two in zip(times[1], times[2])]
    serial = statistics.median(tables[1].wall_seconds)
    print(f"median: 1 worker {statistics.median(times[1]):.2f} s, 2 workers {statistics.median(times[2]):.2f} s; "
          f"speed-up {statistics.median(ratios):.2f}× (pairs: {', '.join(f'{r:.2f}' for r in ratios)}); "
          f"one variant's run {serial:.2f} s; busy share of the 2 workers "
          f"{tables[2].wall_seconds.sum() / (2 * statistics.median(times[2])):.0%}")
    plain_ratios = [one / two for one, two in zip(plain[1], plain[2])]
    print(f"without Dask: hooke run one at a time {statistics.median(plain[1]):.2f} s, two at a time "
          f"{statistics.median(plain[2]):.2f} s; speed-up {statistics.median(plain_ratios):.2f}× "
          f"(pairs: {', '.join(f'{r:.2f}' for r in plain_ratios)}); the sweep on 1 worker against hooke run "
          f"one at a time: {statistics.median(times[1]) / statistics.median(plain[1]):.2f}×")
    for client in clients.values():
        local = client.cluster
        client.close()
        local.close()


if __name__ == "__main__":
    main()
