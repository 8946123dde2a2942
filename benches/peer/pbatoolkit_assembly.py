#!/usr/bin/env python3
# Peer benchmark for BENCHMARKS.md: the pbatoolkit side of Hooke's "assembly"
# criterion benchmark (crates/hooke/benches/assembly.rs, group
# assembly_stable_neo_hookean_psd / energy_gradient_hessian).
#
# What is measured
#   One call that returns the total Stable Neo-Hookean elastic energy, its
#   gradient over all 3n DOFs and the sparse Hessian, with every element Hessian
#   made positive semi-definite before it is summed in. The mesh is a bar of
#   hexahedral cells of edge 0.01 m, each cut into the 6 tetrahedra around the
#   cell's main diagonal (exactly Hooke's TetsPerHex::Six layout and vertex
#   numbering), E = 1e6 Pa, nu = 0.45, evaluated at the bent shape
#   z -= 0.05 * (x / L)^2 * L. Two sizes: cells [28, 8, 8] (10,752 tets) and
#   [58, 17, 17] (100,572 tets).
#
#   pbatoolkit 0.0.11 does the element work and the sparse assembly inside one
#   C++ call, pbat.fem.hyper_elastic_potential, so the timed region is that whole
#   call (element energy/gradient/Hessian on TBB threads, per-element PSD
#   projection, serial gradient scatter, serial triplet -> CSR Hessian build,
#   hand-over to scipy). Mesh building and all rest-shape precomputation
#   (quadrature weights, shape function gradients, Lame arrays) are not timed,
#   just as Hooke builds its model outside the criterion loop.
#
#   For a rough breakdown the script also times, with the same call, energy +
#   gradient only and energy + gradient + Hessian without the projection.
#
# How to run (from the repository root)
#   pip install pbatoolkit==0.0.11 numpy scipy
#   python3 benches/peer/pbatoolkit_assembly.py
# Options: --repeats N (default 5, after one warm-up call), --threads N (pin the
# process to N CPUs before pbatoolkit starts its thread pool; default: all CPUs
# this process may use), --no-breakdown (only the headline measurement).

import argparse
import importlib.metadata
import os
import statistics
import sys
import time

import numpy as np
import scipy.sparse

from pbatoolkit import pbat

fem = pbat.fem

CELL = 0.01  # m, edge of one hexahedral cell
YOUNGS = 1e6  # Pa
POISSON = 0.45
SIZES = [("10k", (28, 8, 8)), ("100k", (58, 17, 17))]

# Corner c of a cell sits at offset (bit0 -> x, bit1 -> y, bit2 -> z); these are
# the six tets around the 0-7 diagonal, in Hooke's order.
SIX_TETS = np.array(
    [[0, 1, 3, 7], [0, 1, 5, 7], [0, 2, 3, 7], [0, 2, 6, 7], [0, 4, 5, 7], [0, 4, 6, 7]],
    dtype=np.int64,
)


def bar_mesh(cells):
    """Vertices (n x 3) and tets (m x 4) numbered exactly like hooke::mesh::box_mesh."""
    nx, ny, nz = cells
    size = np.array(cells, dtype=float) * CELL
    # Vertex (i, j, k) has index i + (nx+1) * (j + (ny+1) * k): i runs fastest.
    k, j, i = np.meshgrid(np.arange(nz + 1), np.arange(ny + 1), np.arange(nx + 1), indexing="ij")
    frac = np.stack([i.ravel() / nx, j.ravel() / ny, k.ravel() / nz], axis=1)
    vertices = size * frac  # origin is zero; same per-coordinate product as Hooke

    ck, cj, ci = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    cell_base = (ci + (nx + 1) * (cj + (ny + 1) * ck)).ravel()
    corner = np.arange(8)
    corner_offset = (corner & 1) + (nx + 1) * (((corner >> 1) & 1) + (ny + 1) * ((corner >> 2) & 1))
    tets = (cell_base[:, None, None] + corner_offset[SIX_TETS][None, :, :]).reshape(-1, 4)

    # Hooke lists the pattern without regard to handedness and then swaps the
    # last two vertices of every negatively oriented tet.
    volume = signed_volumes(vertices, tets)
    flip = volume < 0.0
    tets[flip, 2], tets[flip, 3] = tets[flip, 3].copy(), tets[flip, 2].copy()
    return vertices, tets


def signed_volumes(vertices, tets):
    p = vertices[tets]
    a, b, c = p[:, 1] - p[:, 0], p[:, 2] - p[:, 0], p[:, 3] - p[:, 0]
    return np.einsum("ij,ij->i", np.cross(a, b), c) / 6.0


def bend(vertices, length):
    bent = vertices.copy()
    bent[:, 2] -= 0.05 * (vertices[:, 0] / length) ** 2 * length
    return bent


def lame(youngs, poisson):
    mu = youngs / (2.0 * (1.0 + poisson))
    lam = youngs * poisson / ((1.0 + poisson) * (1.0 - 2.0 * poisson))
    return mu, lam


class Problem:
    """Everything pbatoolkit needs that depends only on the rest shape."""

    def __init__(self, cells):
        vertices, tets = bar_mesh(cells)
        self.cells = cells
        self.n_tets = tets.shape[0]
        self.n_nodes = vertices.shape[0]
        self.length = cells[0] * CELL

        volumes = signed_volumes(vertices, tets)
        assert np.all(volumes > 0.0), "re-orientation left a non-positive tet"
        box_volume = float(np.prod(np.array(cells) * CELL))
        assert abs(volumes.sum() - box_volume) <= 1e-12 * box_volume, "tets do not tile the box"

        # pbatoolkit wants dims x nodes coordinates and nodes-per-element x elements
        # connectivity, column-major; linear tets use the geometric vertices as nodes.
        self.X = np.asfortranarray(vertices.T)
        self.E = np.asfortranarray(tets.T.astype(np.int64))
        tet = fem.Element.Tetrahedron
        # Linear tets: a one-point rule is exact for the (constant-F) integrand.
        wg = fem.mesh_quadrature_weights(self.E, self.X, tet, order=1, quadrature_order=1)
        self.eg = np.ascontiguousarray(np.ravel(fem.mesh_quadrature_elements(self.E, wg)))
        self.wg = np.ascontiguousarray(np.ravel(wg))
        self.GNeg = fem.shape_function_gradients(
            self.E, self.X, element=tet, order=1, dims=3, quadrature_order=1
        )
        assert self.wg.shape[0] == self.n_tets
        # pbatoolkit's reference-tet weight is stored to 6 significant digits
        # (0.166667, not 1/6), so its weights, and hence energy, gradient and
        # Hessian, are about 2e-6 too large. Kept as is: this is how the library
        # integrates. Reported below.
        self.weight_bias = float(np.max(np.abs(self.wg / volumes - 1.0)))
        assert self.weight_bias < 1e-5, "quadrature weight != tet volume"
        mu, lam = lame(YOUNGS, POISSON)
        self.mug = np.full(self.wg.shape[0], mu)
        self.lambdag = np.full(self.wg.shape[0], lam)

        # Flattened as x0, y0, z0, x1, ... (column-major 3 x n), like Hooke's x.
        self.x_rest = np.ascontiguousarray(vertices.ravel())
        self.x_bent = np.ascontiguousarray(bend(vertices, self.length).ravel())

    def evaluate(self, x, flags, correction):
        return fem.hyper_elastic_potential(
            self.E,
            self.n_nodes,
            self.eg,
            self.wg,
            self.GNeg,
            self.mug,
            self.lambdag,
            x,
            energy=fem.HyperElasticEnergy.StableNeoHookean,
            flags=int(flags),
            spd_correction=correction,
            element=fem.Element.Tetrahedron,
            order=1,
            dims=3,
        )


FLAGS = fem.ElementElasticityComputationFlags
ALL = int(FLAGS.Potential) | int(FLAGS.Gradient) | int(FLAGS.Hessian)
ENERGY_GRADIENT = int(FLAGS.Potential) | int(FLAGS.Gradient)


def time_call(call, repeats):
    """Median wall time after one warm-up; also CPU-time/wall-time ratio."""
    result = call()  # warm-up (first touch of buffers, thread pool start)
    walls = []
    cpu_start = time.process_time()
    wall_start = time.perf_counter()
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = call()
        walls.append(time.perf_counter() - t0)
    busy = (time.process_time() - cpu_start) / (time.perf_counter() - wall_start)
    return statistics.median(walls), walls, busy, result


def check(problem, result):
    energy, gradient, hessian = result
    ndof = 3 * problem.n_nodes
    assert np.isfinite(energy) and energy > 0.0, f"energy {energy} not finite and positive"
    assert gradient.shape == (ndof,) and np.all(np.isfinite(gradient)), "bad gradient"
    gnorm = float(np.linalg.norm(gradient))
    assert gnorm > 0.0, "gradient is zero at a bent shape"
    assert scipy.sparse.issparse(hessian) and hessian.shape == (ndof, ndof), "bad Hessian"
    assert np.all(np.isfinite(hessian.data)), "non-finite Hessian entries"
    scale = float(abs(hessian).max())
    asym = float(abs(hessian - hessian.T).max())
    assert asym <= 1e-10 * scale, f"Hessian not symmetric: max |H - H^T| = {asym:e} vs {scale:e}"
    # Sum of PSD element matrices is PSD: spot-check with a few random directions.
    rng = np.random.default_rng(7)
    probes = rng.standard_normal((ndof, 4))
    curv = np.einsum("ij,ij->j", probes, hessian @ probes)
    assert np.all(curv >= -1e-9 * scale * np.einsum("ij,ij->j", probes, probes)), "Hessian not PSD"
    return energy, gnorm, hessian.nnz, asym / scale


def tbb_threads_seen():
    """OS threads in this process (main thread + pbatoolkit's TBB workers, once started)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--no-breakdown", action="store_true")
    args = parser.parse_args()
    if args.repeats < 5:
        parser.error("use at least 5 repeats")

    # pbatoolkit exposes no thread-count setting; its (statically linked) TBB
    # sizes its pool from the CPUs this process may run on, so restricting the
    # affinity mask before the first parallel call is the way to choose.
    if args.threads is not None:
        allowed = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, allowed[: args.threads])
    cpus = len(os.sched_getaffinity(0))
    threads_before = tbb_threads_seen()

    print(f"pbatoolkit {importlib.metadata.version('pbatoolkit')}, numpy {np.__version__}, "
          f"scipy {importlib.metadata.version('scipy')}, python {sys.version.split()[0]}")
    print(f"CPUs available to this process (TBB default concurrency): {cpus} "
          f"of {os.cpu_count()} online")
    print("energy: pbat.fem.HyperElasticEnergy.StableNeoHookean, linear tets, 1-point rule; "
          "Hessian SPD correction: HyperElasticSpdCorrection.Projection")
    print(f"repeats: {args.repeats} timed calls after 1 warm-up, median reported")
    print("load average at start (1/5/15 min): " + " ".join(f"{v:.2f}" for v in os.getloadavg()))
    print()

    for label, cells in SIZES:
        problem = Problem(cells)
        median, walls, busy, result = time_call(
            lambda: problem.evaluate(problem.x_bent, ALL, fem.HyperElasticSpdCorrection.Projection),
            args.repeats,
        )
        energy, gnorm, nnz, rel_asym = check(problem, result)
        rest_energy = problem.evaluate(problem.x_rest, FLAGS.Potential, fem.HyperElasticSpdCorrection.NoCorrection)[0]
        threads = tbb_threads_seen()
        print(f"[{label}] cells {list(cells)}: {problem.n_tets} tets, {problem.n_nodes} nodes, "
              f"{3 * problem.n_nodes} dofs")
        print(f"  energy + gradient + PSD-projected sparse Hessian: median {median * 1e3:.1f} ms "
              f"-> {problem.n_tets / median:,.0f} tets/s")
        print(f"    runs (ms): {', '.join(f'{w * 1e3:.1f}' for w in walls)}")
        print(f"    CPU time / wall time during the timed runs: {busy:.2f} (below the thread count "
              f"when other processes compete for the CPUs)")
        print(f"    threads: {threads - threads_before} TBB worker(s) started by pbatoolkit + the calling "
              f"thread = {threads - threads_before + 1} (process has {threads} OS threads, {threads_before} "
              f"before the first pbatoolkit call)")
        print(f"  check: energy {energy:.6e} J (pbat's SNH at rest: {rest_energy:.6e} J, "
              f"difference {energy - rest_energy:.6e} J), |gradient| {gnorm:.6e} N, "
              f"Hessian nnz {nnz} (full, both triangles), max|H-H^T|/max|H| {rel_asym:.1e} -> OK")
        print(f"  note: pbatoolkit quadrature weight / exact tet volume - 1 = {problem.weight_bias:.1e}")

        if not args.no_breakdown:
            eg_median, _, _, eg_result = time_call(
                lambda: problem.evaluate(problem.x_bent, ENERGY_GRADIENT, fem.HyperElasticSpdCorrection.NoCorrection),
                args.repeats,
            )
            np_median, _, _, np_result = time_call(
                lambda: problem.evaluate(problem.x_bent, ALL, fem.HyperElasticSpdCorrection.NoCorrection),
                args.repeats,
            )
            assert np.isclose(eg_result[0], energy, rtol=1e-12) and np.isclose(np_result[0], energy, rtol=1e-12)
            print(f"  breakdown (same call, other options): energy+gradient only {eg_median * 1e3:.1f} ms; "
                  f"+ Hessian without projection {np_median * 1e3:.1f} ms; "
                  f"+ projection {median * 1e3:.1f} ms")
        print()


if __name__ == "__main__":
    main()
