"""Broad phase and continuous collision detection of barrier contact: Hooke
against the IPC toolkit (ipctk, the peer implementation of Li et al. 2020),
on the same surfaces and motion, in the same process.

Two boxes whose faces are n × n grids of triangle pairs, the upper one moving
down through the lower one's top over the step, so that the step bound is
below 1 and every pair near the contact is a candidate. Each side's surface
(Hooke's `contact.Surface`, ipctk's `CollisionMesh`) is built once, outside
the timer, and each timed call reads the two position arrays from numpy and
answers; the functions that also build Hooke's surface on every call are
timed beside them. Times are the best of `--repeats` calls, each side on all
the machine's threads.

    target/python-venv/bin/python benches/peer/ipctk_contact.py --cells 64   # after scripts/test-python
"""

import argparse
import os
import time

import numpy as np

import hooke.contact as contact
import ipctk


def box_surface(cells, origin, size):
    """The triangulated surface of an axis-aligned box: vertices (n, 3), faces (m, 3)."""
    vertices = {}
    faces = []

    def vertex(p):
        key = tuple(np.round(p, 12))
        if key not in vertices:
            vertices[key] = len(vertices)
        return vertices[key]

    ticks = np.linspace(0.0, 1.0, cells + 1)
    for axis in range(3):
        u, v = [(axis + 1) % 3, (axis + 2) % 3]
        for side in (0.0, 1.0):
            for i in range(cells):
                for j in range(cells):
                    corners = []
                    for a, b in ((i, j), (i + 1, j), (i + 1, j + 1), (i, j + 1)):
                        p = np.zeros(3)
                        p[axis], p[u], p[v] = side, ticks[a], ticks[b]
                        corners.append(vertex(np.asarray(origin) + p * np.asarray(size)))
                    a, b, c, d = corners
                    # Outward: flip the winding on the low side.
                    if side == 0.0:
                        faces += [[a, c, b], [a, d, c]]
                    else:
                        faces += [[a, b, c], [a, c, d]]
    points = np.zeros((len(vertices), 3))
    for key, index in vertices.items():
        points[index] = key
    return points, np.asarray(faces, dtype=np.int64)


def best_of(repeats, call):
    best, value = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        value = call()
        best = min(best, time.perf_counter() - start)
    return best, value


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=64, help="grid cells along each face's side")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    lower, lower_faces = box_surface(args.cells, [0.0, 0.0, 0.0], [1.0, 1.0, 1.0])
    upper, upper_faces = box_surface(args.cells, [0.1, 0.13, 1.02], [1.0, 1.0, 1.0])
    vertices = np.vstack([lower, upper])
    faces = np.vstack([lower_faces, upper_faces + len(lower)])
    end = vertices.copy()
    end[len(lower):, 2] -= 0.1  # 10 cm down: meets the lower box's top 2 cm in
    # A small deformation too, so that no two pairs move alike.
    rng = np.random.default_rng(0)
    end += 1e-4 * rng.standard_normal(end.shape)

    mesh = ipctk.CollisionMesh(np.asfortranarray(vertices), ipctk.edges(faces), faces)
    v0, v1 = np.asfortranarray(vertices), np.asfortranarray(end)
    reach = 1e-3
    print(f"{len(faces)} triangles, {len(vertices)} vertices, {os.cpu_count()} threads")

    def ipctk_candidates():
        candidates = ipctk.Candidates()
        candidates.build(mesh, v0, v1, 0.5 * reach)
        return len(candidates)

    surface = contact.Surface(faces, len(vertices))
    ours_broad, ours_counts = best_of(args.repeats, lambda: surface.candidate_counts(vertices, end, reach))
    theirs_broad, theirs_count = best_of(args.repeats, ipctk_candidates)
    with_build, _ = best_of(args.repeats, lambda: contact.candidate_counts(vertices, end, faces, reach))
    print(
        f"broad phase: hooke {1e3 * ours_broad:.1f} ms ({sum(ours_counts)} candidates), "
        f"ipctk {1e3 * theirs_broad:.1f} ms ({theirs_count}); ratio {theirs_broad / ours_broad:.2f}x "
        f"(hooke building its surface in each call: {1e3 * with_build:.1f} ms, {theirs_broad / with_build:.2f}x)"
    )

    ours_ccd, ours_step = best_of(args.repeats, lambda: surface.collision_free_step(vertices, end))
    additive = ipctk.AdditiveCCD()
    theirs_ccd, theirs_step = best_of(
        args.repeats,
        lambda: ipctk.compute_collision_free_stepsize(mesh, v0, v1, narrow_phase_ccd=additive),
    )
    print(
        f"broad phase + additive CCD (step bound): hooke {1e3 * ours_ccd:.1f} ms (α = {ours_step:.4f}), "
        f"ipctk {1e3 * theirs_ccd:.1f} ms (α = {theirs_step:.4f}); ratio {theirs_ccd / ours_ccd:.2f}x"
    )


if __name__ == "__main__":
    main()
