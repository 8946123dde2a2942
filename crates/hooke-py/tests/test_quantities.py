"""Energy, gradient, Hessian and mass from Python: derivatives, symmetry,
agreement with the `hooke export` command, and models from arrays equal to
models from scenes."""

import subprocess

import numpy as np
import scipy.io
import scipy.sparse

import hooke
from conftest import RUBBER, bent


def test_gradient_is_the_derivative_of_the_energy(bar):
    x = bent(bar.rest_positions)
    gradient = bar.gradient(x)
    rng = np.random.default_rng(1)
    direction = rng.standard_normal(x.shape)
    h = 1e-6
    numeric = (bar.energy(x + h * direction) - bar.energy(x - h * direction)) / (2 * h)
    # Central differences are good to about 1e-6 here (rounding of E over h).
    assert abs(numeric - np.sum(gradient * direction)) <= 1e-5 * abs(numeric)


def test_hessian_is_the_derivative_of_the_gradient(bar):
    x = bent(bar.rest_positions)
    hessian = bar.hessian(x, project=False)
    assert scipy.sparse.isspmatrix_csr(hessian)
    assert hessian.shape == (bar.dof_count, bar.dof_count)
    assert abs(hessian - hessian.T).max() == 0.0
    rng = np.random.default_rng(2)
    direction = rng.standard_normal(x.size)
    h = 1e-6
    flat = x.ravel()
    numeric = (bar.gradient(flat + h * direction) - bar.gradient(flat - h * direction)) / (2 * h)
    exact = hessian @ direction
    assert np.abs(numeric - exact).max() <= 1e-5 * np.abs(exact).max()


def test_projected_hessian_is_positive_semidefinite(bar):
    x = bent(bar.rest_positions, 2.0)
    smallest = np.linalg.eigvalsh(bar.hessian(x, project=True).toarray()).min()
    largest = np.linalg.eigvalsh(bar.hessian(x, project=True).toarray()).max()
    assert smallest >= -1e-10 * largest


def test_mass_matrix_holds_the_body_mass(bar):
    mass = bar.mass_matrix()
    volume = 0.4 * 0.1 * 0.1
    # Each coordinate carries the whole mass once.
    assert abs(mass.sum() - 3 * 1000.0 * volume) < 1e-9
    assert abs(bar.vertex_masses.sum() - 1000.0 * volume) < 1e-12


def test_gradient_keeps_the_shape_of_x(bar):
    x = bar.rest_positions
    assert bar.gradient(x).shape == x.shape
    assert bar.gradient(x.ravel()).shape == (x.size,)


def test_agrees_with_the_export_command(tmp_path, hooke_command, repository):
    """The same scene's energy, gradient and stiffness from Python and from `hooke export`."""
    scene_path = repository / "scenes" / "twisting_bar.toml"
    out = tmp_path / "export"
    subprocess.run([str(hooke_command), "export", str(scene_path), "-o", str(out)], check=True, capture_output=True)
    model = hooke.Scene.from_file(scene_path).model()
    x = model.rest_positions
    free = model.free_dofs()
    stiffness = scipy.io.mmread(out / "K.mtx").tocsr()
    hessian = model.hessian(x, project=False)[free][:, free]
    assert stiffness.shape == hessian.shape
    assert abs(stiffness - hessian).max() <= 1e-12 * abs(hessian).max()
    gradient = scipy.io.mmread(out / "g.mtx").ravel()
    ours = model.gradient(x).ravel()[free]
    assert np.abs(gradient - ours).max() <= 1e-12 * max(np.abs(ours).max(), 1e-300)
    energy = float((out / "energy.txt").read_text())
    assert abs(energy - model.energy(x)) <= 1e-12 * max(abs(energy), 1e-300)
    mass = scipy.io.mmread(out / "M.mtx").tocsr()
    assert abs(mass - model.mass_matrix()[free][:, free]).max() <= 1e-12 * abs(mass).max()


def test_a_model_from_arrays_equals_the_scenes(tmp_path):
    """A scene's body rebuilt from its arrays gives the same potential."""
    scene = hooke.Scene.from_dict(
        {
            "gravity": [0, 0, -9.81],
            "simulation": {"duration": 0.01, "time_step": 0.01},
            "bodies": [{"mesh": {"box": {"size": [0.4, 0.1, 0.1], "cells": [4, 1, 1]}}, "material": RUBBER}],
            "pins": [{"select": {"plane": {"point": [0, 0, 0], "normal": [-1, 0, 0]}}}],
        }
    )
    from_scene = scene.model()
    vertices = from_scene.rest_positions
    pins = np.flatnonzero(vertices[:, 0] < 1e-12)
    from_arrays = hooke.Model(vertices, from_scene.elements, RUBBER, pins=pins, gravity=[0, 0, -9.81])
    x = bent(vertices)
    assert from_arrays.energy(x) == from_scene.energy(x)
    assert np.array_equal(from_arrays.gradient(x), from_scene.gradient(x))
    assert abs(from_arrays.hessian(x) - from_scene.hessian(x)).max() == 0.0
    assert np.array_equal(from_arrays.free_dofs(), from_scene.free_dofs())


def test_per_element_parameters(bar_mesh):
    """A numpy array of one Young's modulus per element: doubling every value doubles the energy."""
    vertices, tets, _ = bar_mesh
    rng = np.random.default_rng(3)
    moduli = rng.uniform(1e4, 1e6, len(tets))
    x = bent(vertices)
    soft = hooke.Model(vertices, tets, {**RUBBER, "model": "linear", "youngs_modulus": moduli})
    stiff = hooke.Model(vertices, tets, {**RUBBER, "model": "linear", "youngs_modulus": 2 * moduli})
    assert abs(stiff.energy(x) - 2 * soft.energy(x)) <= 1e-12 * stiff.energy(x)
    # By label: two materials on two halves.
    labels = (np.asarray(tets) @ np.zeros(4, dtype=int)) + (vertices[tets].mean(axis=1)[:, 0] > 0.2)
    halves = hooke.Model(vertices, tets, {0: {**RUBBER, "model": "linear"}, 1: {**RUBBER, "model": "linear", "youngs_modulus": 1e7}}, labels=labels)
    assert halves.energy(x) > soft.energy(x) * 0  # finite and built
    assert np.array_equal(halves.labels, labels.astype(np.int32))


def test_modes_of_a_free_body_start_with_six_rigid_motions(bar_mesh):
    vertices, tets, _ = bar_mesh
    model = hooke.Model(vertices, tets, RUBBER)
    frequencies, shapes = hooke.modes(model, 8)
    assert shapes.shape == (8, len(vertices), 3)
    assert np.all(frequencies[:6] == 0.0)
    assert frequencies[6] > 1.0
    # Mass-normalised: φᵀ M φ = 1.
    mass = model.mass_matrix()
    phi = shapes[6].ravel()
    assert abs(phi @ (mass @ phi) - 1.0) < 1e-8


def test_a_planar_model(tmp_path):
    vertices = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=float)
    triangles = np.array([[0, 1, 2], [0, 2, 3]])
    model = hooke.Model(vertices, triangles, {"model": "linear", "youngs_modulus": 1e5, "poisson_ratio": 0.3, "density": 1.0})
    assert model.dimension == 2
    x = vertices * [1.1, 1.0]
    assert model.energy(x) > 0
    assert model.gradient(x).shape == (4, 2)
    assert model.hessian(x).shape == (8, 8)
