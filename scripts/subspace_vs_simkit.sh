#!/usr/bin/env bash
# Hooke's subspace benchmark and simkit 0.1.8 (by the authors of Trusty et al. 2023) on the same
# bars, one after the other in one run (BENCHMARKS.md, "Subspace mixed FEM").
# Needs `pip install 'simkit[mesh,solvers]==0.1.8'`. Writes target/subspace-vs-simkit/.
# PYTHON=path picks the interpreter that has simkit (default python3).
# SKIP_HOOKE=1 runs simkit alone (on meshes already written). ITERATIONS_ONLY=1 times
# iterations alone (no precomputation on either side: about 12 minutes instead of 20).
# SIMKIT_LARGE=1 also times simkit's precomputation on the 486k-tet bar (about 35
# minutes; its own cubature would need 36 GB, so the chunked distances are used).
set -euo pipefail
cd "$(dirname "$0")/.."
out="$PWD/target/subspace-vs-simkit"
mkdir -p "$out"
if [ "${SKIP_HOOKE:-0}" != 1 ]; then
    HOOKE_WRITE_MESHES="$out" cargo bench -p hooke --bench subspace
    filter='subspace_iteration|subspace_precompute'
    [ "${ITERATIONS_ONLY:-0}" = 1 ] && filter='subspace_iteration'
    cargo bench -p hooke --bench subspace -- "$filter" 2>&1 | tee "$out/hooke.txt"
fi
simkit() { "${PYTHON:-python3}" scripts/simkit_subspace.py "$@" 2>"$out/simkit.err" | grep '^{' | tee -a "$out/simkit.jsonl"; }
: > "$out/simkit.jsonl"
for tets in 9216 104976 486000; do
    for pair in "5 227" "10 192" "16 342" "16 581"; do
        set -- $pair
        simkit "$out/bar_$tets.mesh" --modes "$1" --points "$2" --random-cubature
    done
done
[ "${ITERATIONS_ONLY:-0}" = 1 ] && exit 0
simkit "$out/bar_9216.mesh" --modes 16 --points 581 --iterations 5
simkit "$out/bar_104976.mesh" --modes 16 --points 581 --iterations 5
if [ "${SIMKIT_LARGE:-0}" = 1 ]; then
    simkit "$out/bar_486000.mesh" --modes 16 --points 581 --iterations 5 --chunked-cubature
fi
