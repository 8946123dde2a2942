#!/usr/bin/env python3
"""Python package benchmark for BENCHMARKS.md ("Python package").

1. The overhead of stepping from Python: on a 10,752-tet bar (stable
   neo-Hookean, clamped, under gravity, backward Euler, h = 0.01 s), k steps
   taken as k calls of `sim.step()` against the same k steps taken inside Rust
   by one call `sim.step(k)`. Both start from the same state and do the same
   work bit for bit (the positions are compared), so the difference is what a
   Python call per step costs. Pairs alternate, so drift hits both alike.
2. `model.hessian(x, project=True)` (energy terms, PSD projection, assembly,
   CSR of both triangles handed to scipy) against pbatoolkit 0.0.11's
   `hyper_elastic_potential` asked for the projected Hessian on the same mesh
   and deformation (its stable neo-Hookean, the simpler form without the log
   term; the work per element is of the same kind), alternating pairs.

Run from the repository root after `pip install ./crates/hooke-py pbatoolkit==0.0.11`:
    python3 benches/peer/python_overhead.py [--pairs 5] [--steps 20]
"""

import argparse
import statistics
import time

import numpy as np

import hooke

SCENE = {
    "gravity": [0, 0, -9.81],
    "simulation": {"duration": 1.0, "time_step": 0.01},
    "bodies": [
        {
            "mesh": {"box": {"size": [0.28, 0.08, 0.08], "cells": [28, 8, 8], "tets_per_hex": 6}},
            "material": {"model": "stable_neo_hookean", "youngs_modulus": 1e6, "poisson_ratio": 0.45, "density": 1000.0},
        }
    ],
    "pins": [{"select": {"plane": {"point": [0, 0, 0], "normal": [-1, 0, 0]}}}],
    "integrator": {"kind": "backward_euler"},
}


def step_overhead(pairs, steps):
    scene = hooke.Scene.from_dict(SCENE)
    warm = scene.simulation()
    warm.step(5)  # a state that is already moving
    start = (warm.positions, warm.velocities, warm.time)
    per_call, one_call = [], []
    for _ in range(pairs):
        for mode in ("python", "rust"):
            sim = scene.simulation()
            sim.positions, sim.velocities, sim.time = start
            t0 = time.perf_counter()
            if mode == "python":
                for _ in range(steps):
                    sim.step()
            else:
                sim.step(steps)
            elapsed = (time.perf_counter() - t0) / steps
            (per_call if mode == "python" else one_call).append((elapsed, sim.positions))
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(per_call, one_call)), "the two did different work"
    python = statistics.median(t for t, _ in per_call)
    rust = statistics.median(t for t, _ in one_call)
    ratios = [a[0] / b[0] - 1 for a, b in zip(per_call, one_call)]
    print(f"tets: {scene.model().element_count}")
    print(f"step from Python, one call per step: median {python * 1e3:.2f} ms/step")
    print(f"steps inside Rust, one call:         median {rust * 1e3:.2f} ms/step")
    print(f"overhead per pair (%): {' '.join(f'{100 * r:+.2f}' for r in ratios)}; median {100 * statistics.median(ratios):+.2f}%")
    return rust


def call_cost(pairs, steps=20000):
    """What one Python call costs beyond the step itself: steps of a one-tetrahedron
    model (symplectic Euler, about a microsecond each) taken one call each and in one call."""
    vertices = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=float)
    model = hooke.Model(vertices, np.array([[0, 1, 2, 3]]), {"model": "linear", "youngs_modulus": 1e3, "poisson_ratio": 0.3, "density": 1.0})
    costs = []
    for _ in range(pairs):
        sim = hooke.Simulation(model, integrator="symplectic_euler", dt=1e-4)
        t0 = time.perf_counter()
        for _ in range(steps):
            sim.step()
        each = (time.perf_counter() - t0) / steps
        sim = hooke.Simulation(model, integrator="symplectic_euler", dt=1e-4)
        t0 = time.perf_counter()
        sim.step(steps)
        inside = (time.perf_counter() - t0) / steps
        costs.append(each - inside)
    cost = statistics.median(costs)
    print(f"cost of one sim.step() call beyond the step: median {cost * 1e6:.2f} us "
          f"(pairs: {' '.join(f'{c * 1e6:.2f}' for c in costs)})")
    return cost


def hessian_against_pbatoolkit(pairs):
    from pbatoolkit import pbat

    model = hooke.Scene.from_dict(SCENE).model()
    vertices = model.rest_positions
    tets = model.elements
    x = vertices.copy()
    x[:, 2] -= 0.05 * (x[:, 0] / 0.28) ** 2 * 0.28
    fem = pbat.fem
    X = np.asfortranarray(vertices.T)
    T = np.asfortranarray(tets.T.astype(np.int64))
    element = fem.Element.Tetrahedron
    weights = fem.mesh_quadrature_weights(T, X, element, order=1, quadrature_order=1)
    quadrature_elements = np.ascontiguousarray(np.ravel(fem.mesh_quadrature_elements(T, weights)))
    weights = np.ascontiguousarray(np.ravel(weights))
    gradients = fem.shape_function_gradients(T, X, element=element, order=1, dims=3, quadrature_order=1)
    E, nu = 1e6, 0.45
    mu, lam = E / (2 * (1 + nu)), E * nu / ((1 + nu) * (1 - 2 * nu))
    flags = int(fem.ElementElasticityComputationFlags.Hessian)
    flat = np.ascontiguousarray(x.ravel())

    def pbatoolkit():
        return fem.hyper_elastic_potential(
            T, vertices.shape[0], quadrature_elements, weights, gradients,
            np.full(weights.shape[0], mu), np.full(weights.shape[0], lam), flat,
            energy=fem.HyperElasticEnergy.StableNeoHookean, flags=flags,
            spd_correction=fem.HyperElasticSpdCorrection.Projection, element=element, order=1, dims=3,
        )

    def ours():
        return model.hessian(x, project=True)

    ours()
    pbatoolkit()
    times = {"hooke": [], "pbatoolkit": []}
    for _ in range(pairs):
        for name, call in (("hooke", ours), ("pbatoolkit", pbatoolkit)):
            t0 = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - t0)
    h, p = statistics.median(times["hooke"]), statistics.median(times["pbatoolkit"])
    print(f"projected Hessian, {len(tets)} tets: hooke.Model.hessian {h * 1e3:.1f} ms, pbatoolkit {p * 1e3:.1f} ms "
          f"(ratios per pair: {' '.join(f'{b / a:.2f}' for a, b in zip(times['hooke'], times['pbatoolkit']))}; "
          f"median {p / h:.2f}x)")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    step = step_overhead(args.pairs, args.steps)
    cost = call_cost(args.pairs)
    print(f"so a Python call adds {100 * cost / step:.4f}% to a step of the 10k-tet bar (target <= 2%)")
    hessian_against_pbatoolkit(args.pairs)


if __name__ == "__main__":
    main()
