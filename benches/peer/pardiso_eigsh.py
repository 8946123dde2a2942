"""Second peer for the eigensolver benchmark in BENCHMARKS.md: scipy's eigsh
in shift-invert mode with Intel MKL PARDISO (through pypardiso) as the
(K - sigma M)^-1 operator, on the K.mtx / M.mtx that
`HOOKE_EXPORT=/tmp/eigen-bar cargo bench -p hooke --bench eigen` writes.
Also times PARDISO's factorisation and solves alone, to set beside Hooke's.
Run: pip install scipy numpy pypardiso; python3 benches/peer/pardiso_eigsh.py /tmp/eigen-bar
"""
import sys
import time

import numpy as np
import pypardiso
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as sla

directory = sys.argv[1] if len(sys.argv) > 1 else "/tmp/eigen-bar"
K = scipy.io.mmread(f"{directory}/K.mtx").tocsr()
M = scipy.io.mmread(f"{directory}/M.mtx").tocsr()
# The same shift as Hooke's automatic one.
sigma = -1e-6 * (K.diagonal().mean() / M.diagonal().mean())
upper = sp.triu(K - sigma * M).tocsr()
rng = np.random.default_rng(0)

for _ in range(3):
    solver = pypardiso.PyPardisoSolver(mtype=2)  # real symmetric positive definite
    start = time.perf_counter()
    solver.factorize(upper)
    factor = time.perf_counter() - start
    timings = []
    for columns in (1, 4):
        rhs = rng.random((upper.shape[0], columns)).squeeze()
        start = time.perf_counter()
        solver.solve(upper, rhs)
        timings.append(1e3 * (time.perf_counter() - start))
    print(f"PARDISO: analysis + factorisation {factor:.3f} s; solve 1 rhs {timings[0]:.1f} ms, 4 rhs {timings[1]:.1f} ms")

times = []
for _ in range(3):
    solver = pypardiso.PyPardisoSolver(mtype=2)
    start = time.perf_counter()
    solver.factorize(upper)
    inverse = sla.LinearOperator(
        upper.shape, matvec=lambda v: solver.solve(upper, np.asarray(v).ravel()), dtype=float
    )
    values = sla.eigsh(K, k=10, M=M, sigma=sigma, which="LM", OPinv=inverse)[0]
    times.append(time.perf_counter() - start)
print(f"scipy eigsh + PARDISO: median {np.median(times):.3f} s over {len(times)} runs")
print("eigenvalues:", np.sort(values))
