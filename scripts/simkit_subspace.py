#!/usr/bin/env python3
"""Times the peer tool simkit 0.1.8 (the Python toolkit of the authors of Trusty et al. 2023,
`pip install simkit==0.1.8`) on the bars of Hooke's `subspace` benchmark, for
BENCHMARKS.md: precomputation (skinning eigenmodes, spectral cubature, the
reduced operators) and one subspace mixed-FEM SQP iteration.

This drives simkit the way its authors' current 3D example does
(examples/interactive_demos/015_interactive_mixed_fem_3D.py, `MixedFEMSim`
with `simkit.solvers.sqp_mfem`): per-tet Young's modulus as the Laplacian
weight of `skinning_eigenmodes`, `spectral_cubature`, clamped vertices as a
penalty (`dirichlet_penalty`, K = 1e8), gravity, h = 1/60 s. The example's
class is rebuilt here without its GUI and mesh loader (igl), and:

- the material is "arap": simkit 0.1.8 writes only ARAP and Macklin–Müller
  Neo-Hookean in the stretch variable (Hooke's benchmark uses FCR; the
  per-point material work is a small part of either iteration);
- `--chunked-cubature` replaces simkit's `pairwise_distance` inside
  `spectral_cubature` by a chunked computation of the same distances (its own
  builds a k × tets × modes displacement tensor, 8 GB at 105k tets and 36 GB
  at 486k); the chosen points are identical;
- `--random-cubature` skips simkit's k-means (most of its precomputation:
  about 450 s at 105k tets) and takes `--points` random tets, each weighted by
  its share of the volume, for timing iterations only: an iteration's work
  depends on the number of points, not on which tets they are.

Usage:
  python3 scripts/simkit_subspace.py BAR.mesh --modes 16 --points 581 [--threads 1]
Prints one JSON line.
"""
import argparse
import json
import os
import resource
import sys
import time


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mesh", help="MEDIT .mesh file (tet labels: 1 soft, 2 stiff)")
    parser.add_argument("--modes", type=int, required=True)
    parser.add_argument("--points", type=int, required=True)
    parser.add_argument("--iterations", type=int, default=20, help="timed iterations (median)")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads")
    parser.add_argument("--chunked-cubature", action="store_true")
    parser.add_argument("--random-cubature", action="store_true")
    return parser.parse_args()


ARGS = parse_arguments()
for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[variable] = str(ARGS.threads)

import numpy as np  # noqa: E402  (after the thread settings)
import scipy as sp  # noqa: E402
import simkit as sk  # noqa: E402
from simkit.solvers import sqp_mfem  # noqa: E402
from simkit.energies import (  # noqa: E402
    elastic_energy_S, elastic_gradient_S, elastic_hessian_S,
    quadratic_energy, quadratic_gradient, quadratic_hessian,
    kinetic_energy_be, kinetic_gradient_be, kinetic_hessian_be,
)

SOFT, STIFF, POISSON, DENSITY, STEP = 1e5, 1e10, 0.45, 1000.0, 1.0 / 60.0


def read_medit(path):
    """Vertices (n, 3) and tets (t, 4, zero-based) with their labels."""
    tokens = open(path).read().split()
    vertices = tets = labels = None
    i = 0
    while i < len(tokens):
        word = tokens[i]
        if word == "Vertices":
            n = int(tokens[i + 1])
            values = np.array(tokens[i + 2:i + 2 + 4 * n], dtype=float).reshape(n, 4)
            vertices = values[:, :3]
            i += 2 + 4 * n
        elif word == "Tetrahedra":
            n = int(tokens[i + 1])
            values = np.array(tokens[i + 2:i + 2 + 5 * n], dtype=np.int64).reshape(n, 5)
            tets, labels = values[:, :4] - 1, values[:, 4]
            i += 2 + 5 * n
        else:
            i += 1
    return vertices, tets, labels


def chunked_pairwise_distance(x, y, return_displacement=False):
    """simkit's pairwise_distance (rows of x to rows of y) without the 3D tensor."""
    assert not return_displacement
    out = np.empty((x.shape[0], y.shape[0]))
    for start in range(0, x.shape[0], 16):
        block = x[start:start + 16, None, :] - y[None, :, :]
        out[start:start + 16] = np.sqrt((block * block).sum(axis=2))
    return out


class MixedFEMSim:
    """The example's simulator: p = [u; a; λ], x = B u + q."""

    def __init__(self, X, T, youngs, pins, m, k, timings):
        self.X, self.T, self.dim, self.h = X, T, 3, STEP
        self.material = "arap"
        self.q = X.reshape(-1, 1)
        started = time.perf_counter()
        W, _, B = sk.skinning_eigenmodes(X, T, m, mu=youngs)
        timings["eigenmodes"] = time.perf_counter() - started
        started = time.perf_counter()
        if ARGS.random_cubature:
            cI = np.random.default_rng(0).choice(T.shape[0], size=k, replace=False)
            cW = np.full(k, sk.volume(X, T).sum() / k)
        else:
            cI, cW, _ = sk.spectral_cubature(X, T, W, k, return_labels=True)
        timings["cubature"] = time.perf_counter() - started
        started = time.perf_counter()
        self.B, self.cI, self.vol = B, cI, cW.reshape(-1, 1)
        mu, lam = sk.ympr_to_lame(youngs, POISSON)
        self.mu, self.lam = mu[cI], lam[cI]
        Mn = sk.massmatrix(X, T, rho=DENSITY)
        self.M = sp.sparse.kron(Mn, sp.sparse.identity(3))
        self.kin_pre = B.T @ self.M @ B
        G = sk.selection_matrix(cI, T.shape[0])
        Ge = sp.sparse.kron(G, sp.sparse.identity(9))
        J = sk.deformation_jacobian(X, T)
        self.GJB = Ge @ J @ B
        self.GJq = Ge @ J @ self.q
        self.C, self.Ci = sk.symmetric_stretch_map(cI.shape[0], 3)
        self.w = np.kron(self.vol, np.array([[1.0, 1.0, 1.0, 2.0, 2.0, 2.0]]).T)
        self.W = sp.sparse.diags(self.w.flatten())
        self.nz, self.na = B.shape[1], self.Ci.shape[0]
        Qp, bp = sk.dirichlet_penalty(pins, X[pins, :], X.shape[0], 1e8)
        b_gravity = -sk.gravity_force(X, T, a=-9.81, rho=DENSITY).reshape(-1, 1)
        self._Q = B.T @ Qp @ B
        self._b = B.T @ (Qp @ self.q + bp + b_gravity)
        self.u = sk.project_into_subspace(X.reshape(-1, 1) - self.q, B, M=self.M)
        a = np.ones((cI.shape[0], 6))
        a[:, 3:] = 0.0
        self.a, self.ll = a.reshape(-1, 1), np.zeros((a.size, 1))
        self.u_prev = self.u.copy()
        timings["setup"] = time.perf_counter() - started

    def split(self, p):
        return p[:self.nz], p[self.nz:self.nz + self.na], p[self.nz + self.na:]

    def energy(self, p):
        u, a, ll = self.split(p)
        F = (self.GJB @ u + self.GJq).reshape(-1, 3, 3)
        elastic = elastic_energy_S(a.reshape(-1, 6), self.mu, self.lam, self.vol, self.material)
        kinetic = kinetic_energy_be(u, self.u, self.u_prev, self.kin_pre, self.h)
        quadratic = quadratic_energy(u, self._Q, self._b)
        wc = self.w * (self.Ci @ sk.stretch(F) - a)
        return elastic + kinetic + quadratic + float((ll.T @ wc).item())

    def grad_blocks(self, p):
        u, a, _ = self.split(p)
        F = (self.GJB @ u + self.GJq).reshape(-1, 3, 3)
        wc = self.w * (self.Ci @ sk.stretch(F) - a)
        f_u = kinetic_gradient_be(u, self.u, self.u_prev, self.kin_pre, self.h) + quadratic_gradient(u, self._Q, self._b)
        f_z = elastic_gradient_S(a.reshape(-1, 6), self.mu, self.lam, self.vol, self.material).reshape(-1, 1)
        return [f_u, f_z, wc]

    def hess_blocks(self, p):
        u, a, _ = self.split(p)
        dsdz = sk.stretch_gradient_dz(u, self.GJB, Ci=self.Ci, dim=3, GJq=self.GJq)
        G_u = dsdz @ self.W
        H_u = kinetic_hessian_be(self.kin_pre, self.h) + quadratic_hessian(self._Q)
        H_z = sp.sparse.block_diag(list(elastic_hessian_S(a.reshape(-1, 6), self.mu, self.lam, self.vol, self.material)))
        G_z = -self.W
        G_zi = sp.sparse.diags(1.0 / G_z.diagonal())
        return [H_u, H_z, G_u, G_z, G_zi]

    def iterate(self, iterations):
        p = np.vstack([self.u, self.a, self.ll])
        return sqp_mfem(p, self.energy, self.hess_blocks, self.grad_blocks,
                        tolerance=0.0, max_iter=iterations, do_line_search=True)

    def step(self, iterations=2):
        u, self.a, self.ll = self.split(self.iterate(iterations))
        self.u_prev, self.u = self.u.copy(), u.copy()


def main():
    if ARGS.chunked_cubature:
        # The submodule, not the function simkit exports under the same name.
        sys.modules["simkit.spectral_cubature"].pairwise_distance = chunked_pairwise_distance
    X, T, labels = read_medit(ARGS.mesh)
    youngs = np.where(labels == 1, SOFT, STIFF).astype(float).reshape(-1, 1)
    pins = np.flatnonzero(X[:, 0] < 1e-9)
    timings = {}
    started = time.perf_counter()
    sim = MixedFEMSim(X, T, youngs, pins, ARGS.modes, ARGS.points, timings)
    timings["total"] = time.perf_counter() - started
    for _ in range(3):  # fall a little under gravity: a deformed, moving state
        sim.step()
    samples = []
    for _ in range(ARGS.iterations):
        started = time.perf_counter()
        sim.iterate(1)
        samples.append(time.perf_counter() - started)
    print(json.dumps({
        "tool": "simkit " + getattr(sk, "__version__", "0.1.8"),
        "mesh": os.path.basename(ARGS.mesh),
        "tets": int(T.shape[0]),
        "modes": ARGS.modes,
        "points": ARGS.points,
        "threads": ARGS.threads,
        "material": sim.material,
        "cubature": "random (iterations only)" if ARGS.random_cubature
        else "chunked distances" if ARGS.chunked_cubature else "simkit's own",
        "precompute_seconds": {key: round(value, 3) for key, value in timings.items()},
        "mfem_iteration_ms": round(1e3 * float(np.median(samples)), 3),
        "peak_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
    }))


if __name__ == "__main__":
    sys.exit(main())
