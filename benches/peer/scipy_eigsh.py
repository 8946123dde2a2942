"""Peer side of the eigensolver benchmark in BENCHMARKS.md: the 10 smallest
generalized eigenpairs of the K.mtx / M.mtx that
`HOOKE_EXPORT=/tmp/eigen-bar cargo bench -p hooke --bench eigen` writes,
with scipy's eigsh in shift-invert mode (sigma below the spectrum).
Run: pip install scipy numpy; python3 benches/peer/scipy_eigsh.py /tmp/eigen-bar
"""
import sys
import time

import numpy as np
import scipy
import scipy.io
import scipy.sparse.linalg as sla

directory = sys.argv[1] if len(sys.argv) > 1 else "/tmp/eigen-bar"
K = scipy.io.mmread(f"{directory}/K.mtx").tocsc()
M = scipy.io.mmread(f"{directory}/M.mtx").tocsc()
sigma = -1e-3 * (K.diagonal().mean() / M.diagonal().mean())
times = []
for _ in range(5):
    start = time.perf_counter()
    values = sla.eigsh(K, k=10, M=M, sigma=sigma, which="LM", return_eigenvectors=True)[0]
    times.append(time.perf_counter() - start)
print(f"scipy {scipy.__version__}: {K.shape[0]} unknowns, median {np.median(times):.3f} s over {len(times)} runs")
print("eigenvalues:", np.sort(values))
