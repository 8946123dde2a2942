"""Contact geometry of Incremental Potential Contact (Li et al. 2020).

The pieces Hooke's barrier contact is built from, each with its derivatives
with respect to the stacked coordinates of the pair (3 per vertex, in the
order of the arguments):

- ``point_triangle_distance(p, t0, t1, t2)`` and
  ``edge_edge_distance(ea0, ea1, eb0, eb1)``: the *squared* distance, its
  gradient (12,) and Hessian (12, 12), through the closest features;
- ``edge_edge_mollifier(ea0, ea1, eb0, eb1, eps_x)`` and
  ``edge_edge_mollifier_threshold(...)`` (of the edges at rest): the factor
  that smooths the edge-edge barrier of nearly parallel edges;
- ``barrier(d, dhat)``: b(d, d̂) = -(d - d̂)² ln(d/d̂), with its first and
  second derivatives in d (Hooke applies it to squared distances);
- ``point_triangle_ccd(start, end)`` and ``edge_edge_ccd(start, end)``: the
  time in [0, 1] at which a pair moving from ``start`` to ``end`` (each four
  points, (4, 3)) is to stop short of touching (additive CCD, Li et al.
  2021), or None when it does not meet within the step;
- ``barrier_potential(vertices, faces, dhat, rest=None, project=False)``:
  the barrier potential of a triangle surface (stiffness 1), its gradient
  (n, 3) and its Hessian (3n, 3n), over the pairs closer than dhat; with
  ``project``, each pair's Hessian projected to positive semi-definite;
- ``friction_potential(lagged, vertices, faces, dhat, stiffness, mu, eps_v,
  dt, rest=None)``: the lagged, smoothed Coulomb friction potential (§5), J,
  with normal forces and tangent planes of the pairs at ``lagged`` and the
  slip from ``lagged`` to ``vertices`` over the step ``dt``; its gradient
  (n, 3) and Hessian (3n, 3n) with respect to ``vertices``.

In 2D (plane strain), contact is between points and edges:

- ``point_edge_distance(p, e0, e1)``: the squared distance of a point and
  an edge of the plane (2 numbers each), its gradient (6,) and Hessian (6, 6);
- ``barrier_potential_2d(vertices, edges, dhat, project=False)``: the
  barrier potential of curves ``edges`` ((m, 2) indices) over ``vertices``
  (n, 2), its gradient (n, 2) and Hessian (2n, 2n);
- ``point_edge_ccd(start, end)``: additive CCD of a point and an edge of
  the plane (each (3, 2)), as ``point_triangle_ccd``;
- ``collision_free_step_2d(start, end, edges)``: the largest fraction of
  the motion from ``start`` to ``end`` (each (n, 2)) that no point can cross
  an edge in.

A surface queried many times is built once: ``Surface(faces, vertex_count)``
keeps its triangles, edges and vertices, and its ``candidate_counts(start,
end, reach)`` and ``collision_free_step(start, end)`` answer as the functions
of those names do, for that surface.

>>> import hooke.contact as contact
>>> d2, gradient, hessian = contact.point_triangle_distance([0, 0, 1], [0, 0, 0], [1, 0, 0], [0, 1, 0])
>>> d2
1.0
"""

from ._hooke import (
    barrier_potential,
    barrier_potential_2d,
    barrier_with_derivatives as barrier,
    candidate_counts,
    collision_free_step,
    collision_free_step_2d,
    edge_edge_ccd,
    edge_edge_distance,
    edge_edge_mollifier,
    edge_edge_mollifier_threshold,
    friction_potential,
    initial_barrier_stiffness,
    point_edge_ccd,
    point_edge_distance,
    point_triangle_ccd,
    point_triangle_distance,
    updated_barrier_stiffness,
    Surface,
)

__all__ = [
    "Surface",
    "barrier",
    "barrier_potential",
    "barrier_potential_2d",
    "candidate_counts",
    "collision_free_step",
    "collision_free_step_2d",
    "edge_edge_ccd",
    "edge_edge_distance",
    "edge_edge_mollifier",
    "edge_edge_mollifier_threshold",
    "friction_potential",
    "initial_barrier_stiffness",
    "point_edge_ccd",
    "point_edge_distance",
    "point_triangle_ccd",
    "point_triangle_distance",
    "updated_barrier_stiffness",
]
