"""Contact geometry against the IPC toolkit's Python bindings (ipctk, the
peer implementation of Li et al. 2020): squared distances with gradients and
Hessians, the edge-edge mollifier and the barrier, on random configurations
of every closest-feature kind."""

import numpy as np
import pytest

import hooke.contact as contact

ipctk = pytest.importorskip("ipctk")


def close(ours, theirs, scale):
    return np.allclose(ours, theirs, rtol=1e-9, atol=1e-12 * scale)


def random_pairs(seed, count):
    rng = np.random.default_rng(seed)
    return [rng.random((4, 3)) for _ in range(count)]


def test_point_triangle_distances_match_ipctk_for_every_feature_kind():
    kinds = set()
    for p, t0, t1, t2 in random_pairs(1, 400):
        # Spread the point around and off the triangle's plane, so that
        # vertex, edge and face cases all occur.
        p = 2.0 * p - 0.5
        d2, gradient, hessian = contact.point_triangle_distance(p, t0, t1, t2)
        kinds.add(ipctk.point_triangle_distance_type(p, t0, t1, t2))
        assert d2 == pytest.approx(ipctk.point_triangle_distance(p, t0, t1, t2), rel=1e-12, abs=1e-15)
        assert close(gradient, ipctk.point_triangle_distance_gradient(p, t0, t1, t2), 1.0)
        assert close(hessian, ipctk.point_triangle_distance_hessian(p, t0, t1, t2), 1.0)
    assert len(kinds) == 7, kinds  # three vertices, three edges, the face


def test_edge_edge_distances_match_ipctk_away_from_parallel_edges():
    kinds = set()
    compared = 0
    for ea0, ea1, eb0, eb1 in random_pairs(2, 400):
        eb0, eb1 = 1.6 * eb0 - 0.3, 1.6 * eb1 - 0.3
        # Near parallel the two libraries may pick different (equally close)
        # features; the mollifier makes that choice immaterial to the barrier.
        sine = np.linalg.norm(np.cross(ea1 - ea0, eb1 - eb0)) / (
            np.linalg.norm(ea1 - ea0) * np.linalg.norm(eb1 - eb0)
        )
        if sine < 0.05:
            continue
        compared += 1
        d2, gradient, hessian = contact.edge_edge_distance(ea0, ea1, eb0, eb1)
        kinds.add(ipctk.edge_edge_distance_type(ea0, ea1, eb0, eb1))
        assert d2 == pytest.approx(ipctk.edge_edge_distance(ea0, ea1, eb0, eb1), rel=1e-12, abs=1e-15)
        assert close(gradient, ipctk.edge_edge_distance_gradient(ea0, ea1, eb0, eb1), 1.0)
        assert close(hessian, ipctk.edge_edge_distance_hessian(ea0, ea1, eb0, eb1), 1.0)
    assert compared > 350
    assert len(kinds) >= 8, kinds  # vertex-vertex (4), vertex-edge (4), edge-edge


def test_the_mollifier_and_its_threshold_match_ipctk():
    rng = np.random.default_rng(3)
    inside = 0
    for _ in range(200):
        ea0, ea1 = rng.random(3), rng.random(3)
        direction = ea1 - ea0
        # Nearly parallel edges (angles up to a few degrees), both sides of ε.
        eb0 = rng.random(3)
        eb1 = eb0 + direction * rng.uniform(0.5, 1.5) + 0.05 * rng.standard_normal(3) * np.linalg.norm(direction)
        eps_x = contact.edge_edge_mollifier_threshold(ea0, ea1, eb0, eb1)
        assert eps_x == pytest.approx(ipctk.edge_edge_mollifier_threshold(ea0, ea1, eb0, eb1), rel=1e-14)
        m, gradient, hessian = contact.edge_edge_mollifier(ea0, ea1, eb0, eb1, eps_x)
        inside += m < 1.0
        assert m == pytest.approx(ipctk.edge_edge_mollifier(ea0, ea1, eb0, eb1, eps_x), rel=1e-12, abs=1e-15)
        scale = max(1.0, np.abs(ipctk.edge_edge_mollifier_gradient(ea0, ea1, eb0, eb1, eps_x)).max())
        assert close(gradient, ipctk.edge_edge_mollifier_gradient(ea0, ea1, eb0, eb1, eps_x), scale)
        scale = max(1.0, np.abs(ipctk.edge_edge_mollifier_hessian(ea0, ea1, eb0, eb1, eps_x)).max())
        assert close(hessian, ipctk.edge_edge_mollifier_hessian(ea0, ea1, eb0, eb1, eps_x), scale)
    assert 20 < inside < 180, inside


def test_the_barrier_and_its_derivatives_match_ipctk():
    for dhat in [1e-6, 1e-3, 1.0]:
        for d in np.concatenate([dhat * np.linspace(1e-4, 1.2, 60), [0.0, -1.0, dhat]]):
            ours = contact.barrier(float(d), dhat)
            theirs = (
                ipctk.barrier(d, dhat),
                ipctk.barrier_first_derivative(d, dhat),
                ipctk.barrier_second_derivative(d, dhat),
            )
            assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-300), (d, dhat)


def test_additive_ccd_matches_ipctk_and_never_passes_the_exact_time_of_impact():
    rng = np.random.default_rng(4)
    additive = ipctk.AdditiveCCD()
    # Unscaled, the time it reports is the impact itself (within 1e-6).
    exact = ipctk.TightInclusionCCD(conservative_rescaling=1.0)
    hits = 0
    for case in range(600):
        start = rng.random((4, 3)) - 0.5
        end = start + 3.0 * (rng.random((4, 3)) - 0.5)
        ours_ccd, name = [(contact.point_triangle_ccd, "point_triangle_ccd"), (contact.edge_edge_ccd, "edge_edge_ccd")][case % 2]
        ours = ours_ccd(start, end)
        hit, toi = getattr(additive, name)(*start, *end)
        # The same algorithm: the same answer, to rounding.
        assert (ours is not None) == hit, (case, ours, toi)
        if hit:
            assert ours == pytest.approx(toi, rel=1e-9), case
        exact_hit, exact_toi = getattr(exact, name)(*start, *end)
        if exact_hit:
            hits += 1
            assert ours is not None and ours <= exact_toi, (case, ours, exact_toi)
    assert hits > 20, hits


def test_point_edge_distances_in_the_plane_match_ipctk_for_every_feature_kind():
    rng = np.random.default_rng(21)
    kinds = set()
    for _ in range(300):
        p, e0, e1 = 2.0 * rng.random((3, 2)) - 0.5
        d2, gradient, hessian = contact.point_edge_distance(p, e0, e1)
        kinds.add(ipctk.point_edge_distance_type(p, e0, e1))
        assert d2 == pytest.approx(ipctk.point_edge_distance(p, e0, e1), rel=1e-12, abs=1e-15)
        assert close(gradient, ipctk.point_edge_distance_gradient(p, e0, e1), 1.0)
        assert close(hessian, ipctk.point_edge_distance_hessian(p, e0, e1), 1.0)
    assert len(kinds) == 3, kinds  # either end, or the edge's line


def test_point_edge_additive_ccd_in_the_plane_matches_ipctk():
    rng = np.random.default_rng(22)
    additive = ipctk.AdditiveCCD()
    hits = 0
    for case in range(400):
        start = rng.random((3, 2)) - 0.5
        end = start + 3.0 * (rng.random((3, 2)) - 0.5)
        ours = contact.point_edge_ccd(start, end)
        hit, toi = additive.point_edge_ccd(*start, *end)
        assert (ours is not None) == hit, (case, ours, toi)
        if hit:
            hits += 1
            assert ours == pytest.approx(toi, rel=1e-9), case
    assert hits > 30, hits


def square_loop(center, size, angle, cells):
    """The boundary of a square as a closed loop of 4 cells edges, turned by angle."""
    side = np.linspace(-0.5, 0.5, cells + 1)[:-1]
    points = np.concatenate([
        np.stack([side, -0.5 + 0 * side], 1), np.stack([0.5 + 0 * side, side], 1),
        np.stack([-side, 0.5 + 0 * side], 1), np.stack([-0.5 + 0 * side, -side], 1),
    ])
    turn = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    n = len(points)
    edges = np.array([[i, (i + 1) % n] for i in range(n)], dtype=np.int32)
    return center + size * points @ turn.T, edges


def test_the_2d_barrier_potential_and_step_bound_of_two_close_squares_match_ipctk():
    rng = np.random.default_rng(23)
    dhat = 0.05
    checked = 0
    for trial in range(12):
        a, ea = square_loop(np.zeros(2), 1.0, 0.0, 4)
        b, eb = square_loop(np.zeros(2), 0.7, rng.uniform(0.2, 1.2), 3)
        b[:, 1] += 0.5 - b[:, 1].min() + rng.uniform(0.005, 0.04)
        b[:, 0] += rng.uniform(-0.3, 0.3)
        vertices = np.vstack([a, b]) + 0.002 * rng.standard_normal((len(a) + len(b), 2))
        edges = np.vstack([ea, eb + len(a)])
        mesh = ipctk.CollisionMesh(vertices, edges)
        collisions = ipctk.NormalCollisions()
        collisions.build(mesh, vertices, dhat)
        if len(collisions) == 0:
            continue
        checked += 1
        potential = ipctk.BarrierPotential(dhat, 1.0)
        energy, gradient, hessian = contact.barrier_potential_2d(vertices, edges, dhat)
        assert energy == pytest.approx(potential(collisions, mesh, vertices), rel=1e-9), trial
        their_gradient = potential.gradient(collisions, mesh, vertices).reshape(-1, 2)
        scale = np.abs(their_gradient).max()
        assert np.allclose(gradient, their_gradient, rtol=1e-8, atol=1e-10 * scale), trial
        their_hessian = potential.hessian(collisions, mesh, vertices).toarray()
        scale = np.abs(their_hessian).max()
        assert np.allclose(hessian, their_hessian, rtol=1e-7, atol=1e-9 * scale), trial
        _, _, projected = contact.barrier_potential_2d(vertices, edges, dhat, project=True)
        clamp = ipctk.PSDProjectionMethod.CLAMP
        their_projected = potential.hessian(collisions, mesh, vertices, project_hessian_to_psd=clamp).toarray()
        assert np.allclose(projected, their_projected, rtol=1e-7, atol=1e-9 * scale), trial
        # The upper square dropped through the lower one: the step stops short,
        # never past ipctk's exact time of impact.
        end = vertices.copy()
        end[len(a):, 1] -= 0.5
        ours = contact.collision_free_step_2d(vertices, end, edges)
        exact = ipctk.compute_collision_free_stepsize(mesh, vertices, end, broad_phase=ipctk.BruteForce(),
                                                      narrow_phase_ccd=ipctk.TightInclusionCCD(conservative_rescaling=1.0))
        assert 0.0 < ours <= exact, (trial, ours, exact)
    assert checked >= 8, checked


def cube(center, size, rotation):
    corners = np.array([[x, y, z] for z in (0, 1) for y in (0, 1) for x in (0, 1)], dtype=float) - 0.5
    faces = np.array(
        [[0, 2, 1], [1, 2, 3], [4, 5, 6], [5, 7, 6], [0, 1, 4], [1, 5, 4],
         [2, 6, 3], [3, 6, 7], [0, 4, 2], [2, 4, 6], [1, 3, 5], [3, 7, 5]],
        dtype=np.int32,
    )
    return center + size * corners @ rotation.T, faces


def rotation_about(axis, angle):
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


def test_the_barrier_potential_of_two_close_cubes_matches_ipctk():
    rng = np.random.default_rng(5)
    dhat = 0.08
    checked = 0
    for trial in range(12):
        # A cube, and a second one tilted and brought within d̂ of it
        # (corner to face, edge to edge), both a little deformed.
        a, fa = cube(np.zeros(3), 1.0, np.eye(3))
        turn = rotation_about(rng.standard_normal(3), rng.uniform(0.2, 1.0))
        b, fb = cube(np.zeros(3), 0.8, turn)
        lowest = b[:, 2].min()
        b[:, 2] += 0.5 - lowest + rng.uniform(0.01, 0.06)
        b[:, :2] += rng.uniform(-0.3, 0.3, 2)
        rest = np.vstack([a, b])
        vertices = rest + 0.004 * rng.standard_normal(rest.shape)
        faces = np.vstack([fa, fb + 8])
        mesh = ipctk.CollisionMesh(rest, ipctk.edges(faces), faces)
        collisions = ipctk.NormalCollisions()
        collisions.build(mesh, vertices, dhat)
        if len(collisions) == 0:
            continue
        checked += 1
        potential = ipctk.BarrierPotential(dhat, 1.0)
        energy, gradient, hessian = contact.barrier_potential(vertices, faces, dhat, rest=rest)
        theirs = potential(collisions, mesh, vertices)
        assert energy == pytest.approx(theirs, rel=1e-9), trial
        their_gradient = potential.gradient(collisions, mesh, vertices).reshape(-1, 3)
        scale = np.abs(their_gradient).max()
        assert np.allclose(gradient, their_gradient, rtol=1e-8, atol=1e-10 * scale), trial
        their_hessian = potential.hessian(collisions, mesh, vertices).toarray()
        scale = np.abs(their_hessian).max()
        assert np.allclose(hessian, their_hessian, rtol=1e-7, atol=1e-9 * scale), trial
        # Each pair's part projected to positive semi-definite, as Newton takes it.
        _, _, projected = contact.barrier_potential(vertices, faces, dhat, rest=rest, project=True)
        clamp = ipctk.PSDProjectionMethod.CLAMP
        their_projected = potential.hessian(collisions, mesh, vertices, project_hessian_to_psd=clamp).toarray()
        assert np.allclose(projected, their_projected, rtol=1e-7, atol=1e-9 * scale), trial
        assert np.linalg.eigvalsh(projected).min() > -1e-9 * scale
    assert checked >= 8, checked


def test_the_adaptive_barrier_stiffness_matches_ipctk():
    rng = np.random.default_rng(7)
    barrier = ipctk.ClampedLogBarrier()
    for diagonal, dhat, mass in [(1.0, 1e-3, 1e-3), (0.6, 5e-4, 2.0), (10.0, 1e-2, 50.0)]:
        for _ in range(20):
            energy = rng.normal(size=30) * 10.0 ** rng.uniform(-3, 8)
            gradient = rng.normal(size=30) * 10.0 ** rng.uniform(-3, 3)
            ours = contact.initial_barrier_stiffness(diagonal, dhat, mass, energy, gradient)
            theirs = ipctk.initial_barrier_stiffness(diagonal, barrier, dhat, mass, energy, gradient)
            assert ours == pytest.approx(theirs, rel=1e-12)
        # No barrier gradient: the floor.
        zero = np.zeros(6)
        assert contact.initial_barrier_stiffness(diagonal, dhat, mass, zero, zero) == pytest.approx(
            ipctk.initial_barrier_stiffness(diagonal, barrier, dhat, mass, zero, zero), rel=1e-12
        )
    tiny = (1e-9 * 2.0) ** 2
    for previous, now in [(0.5 * tiny, 0.25 * tiny), (0.25 * tiny, 0.5 * tiny), (2 * tiny, 0.5 * tiny), (0.9 * tiny, 0.1 * tiny)]:
        for kappa in [3.0, 80.0]:
            assert contact.updated_barrier_stiffness(previous, now, kappa, 100.0, 2.0) == ipctk.update_barrier_stiffness(
                previous, now, 100.0, kappa, 2.0
            )


def test_the_friction_potential_of_two_close_cubes_matches_ipctk():
    # ipctk's friction potential takes velocities with ε_v; Hooke's takes the
    # step's displacement with ε_v h, so D = h · D_ipctk(v = Δx / h), its
    # gradient in x equals ipctk's in v, and its Hessian is ipctk's over h.
    rng = np.random.default_rng(11)
    dhat, stiffness, mu, eps_v, dt = 0.08, 3.0e3, 0.4, 0.05, 0.01
    checked = 0
    for trial in range(12):
        a, fa = cube(np.zeros(3), 1.0, np.eye(3))
        turn = rotation_about(rng.standard_normal(3), rng.uniform(0.2, 1.0))
        b, fb = cube(np.zeros(3), 0.8, turn)
        b[:, 2] += 0.5 - b[:, 2].min() + rng.uniform(0.01, 0.06)
        b[:, :2] += rng.uniform(-0.3, 0.3, 2)
        rest = np.vstack([a, b])
        lagged = rest + 0.004 * rng.standard_normal(rest.shape)
        # Slips from well below ε_v h (static) to well above it (kinetic).
        vertices = lagged + rng.choice([1e-4, 1e-3, 1e-2]) * rng.standard_normal(rest.shape)
        faces = np.vstack([fa, fb + 8])
        mesh = ipctk.CollisionMesh(rest, ipctk.edges(faces), faces)
        collisions = ipctk.NormalCollisions()
        collisions.build(mesh, lagged, dhat)
        if len(collisions) == 0:
            continue
        tangential = ipctk.TangentialCollisions()
        tangential.build(mesh, lagged, collisions, ipctk.BarrierPotential(dhat, stiffness), mu)
        if len(tangential) == 0:
            continue
        checked += 1
        potential = ipctk.FrictionPotential(eps_v)
        velocities = (vertices - lagged) / dt
        energy, gradient, hessian = contact.friction_potential(
            lagged, vertices, faces, dhat, stiffness, mu, eps_v, dt, rest=rest
        )
        theirs = dt * potential(tangential, mesh, velocities)
        assert energy == pytest.approx(theirs, rel=1e-9), trial
        their_gradient = potential.gradient(tangential, mesh, velocities).reshape(-1, 3)
        scale = np.abs(their_gradient).max()
        assert np.allclose(gradient, their_gradient, rtol=1e-8, atol=1e-10 * scale), trial
        their_hessian = potential.hessian(tangential, mesh, velocities).toarray() / dt
        scale = np.abs(their_hessian).max()
        assert np.allclose(hessian, their_hessian, rtol=1e-7, atol=1e-9 * scale), trial
        # Convex with the lag fixed: semi-definite without projection.
        assert np.linalg.eigvalsh(hessian).min() > -1e-9 * scale
    assert checked >= 8, checked


def test_friction_refuses_a_step_that_is_not_positive():
    a, faces = cube(np.zeros(3), 1.0, np.eye(3))
    with pytest.raises(ValueError, match="dt"):
        contact.friction_potential(a, a, faces, 0.1, 1.0, 0.5, 1e-3, 0.0)


def test_a_surface_built_once_finds_ipctks_candidates_and_a_safe_step():
    rng = np.random.default_rng(3)
    for trial in range(6):
        # A tilted cube moving down through a cube's top over the step.
        a, fa = cube(np.zeros(3), 1.0, np.eye(3))
        b, fb = cube(np.zeros(3), 0.8, rotation_about(rng.standard_normal(3), rng.uniform(0.2, 1.0)))
        b[:, 2] += 0.5 - b[:, 2].min() + 0.05
        b[:, :2] += rng.uniform(-0.3, 0.3, 2)
        start, faces = np.vstack([a, b]), np.vstack([fa, fb + 8])
        end = start.copy()
        end[8:, 2] -= 0.3
        end += 1e-3 * rng.standard_normal(end.shape)
        surface = contact.Surface(faces, len(start))
        assert surface.counts() == (24, 36, 16)
        reach = 0.01
        found = surface.candidate_counts(start, end, reach)
        assert found == contact.candidate_counts(start, end, faces, reach), trial
        mesh = ipctk.CollisionMesh(start, ipctk.edges(faces), faces)
        theirs = ipctk.Candidates()
        theirs.build(mesh, start, end, 0.5 * reach)  # ipctk inflates each box by half the reach
        assert sum(found) == len(theirs), trial
        step = surface.collision_free_step(start, end)
        assert step == contact.collision_free_step(start, end, faces)
        exact = ipctk.compute_collision_free_stepsize(
            mesh, start, end, broad_phase=ipctk.BruteForce(), narrow_phase_ccd=ipctk.TightInclusionCCD()
        )
        # Conservative, and not far short of the exact time of impact.
        assert 0.7 * exact < step <= exact, trial
    with pytest.raises(ValueError, match="16 vertices, but start and end have 5 points"):
        surface.candidate_counts(start[:5], end[:5], reach)
