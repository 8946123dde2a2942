"""Hooke's energy and gradient against pbatoolkit's on the same mesh and the
same deformation, for the Saint Venant–Kirchhoff material (which both define
alike: ψ = μ E:E + λ/2 (tr E)², E = (FᵀF − I)/2).

pbatoolkit stores its reference-tetrahedron weight to six digits (0.166667,
not 1/6), so its energy and gradient are about 2e-6 too large; the two agree
to that.

Needs `pip install pbatoolkit==0.0.11`. Run: python pbatoolkit_comparison.py [edge_length]
"""
import sys

import numpy as np

import hooke

try:
    from pbatoolkit import pbat
except ImportError:
    sys.exit("this example needs pbatoolkit: pip install pbatoolkit==0.0.11")

edge = float(sys.argv[1]) if len(sys.argv) > 1 else 0.05
E, nu, rho = 1e6, 0.45, 1000.0
vertices, tets, _ = hooke.mesh_shape({"box": {"min": [0, 0, 0], "max": [1, 0.1, 0.1]}}, edge)
model = hooke.Model(vertices, tets, {"model": "st_venant_kirchhoff", "youngs_modulus": E, "poisson_ratio": nu, "density": rho})
tets = model.elements  # as Hooke oriented them

# A bent and twisted shape.
x = vertices.copy()
x[:, 2] -= 0.1 * x[:, 0] ** 2
angle = 0.3 * x[:, 0]
y, z = x[:, 1] - 0.05, x[:, 2] - 0.05
x[:, 1], x[:, 2] = 0.05 + np.cos(angle) * y - np.sin(angle) * z, 0.05 + np.sin(angle) * y + np.cos(angle) * z

hooke_energy = model.energy(x)
hooke_gradient = model.gradient(x).ravel()

fem = pbat.fem
X = np.asfortranarray(vertices.T)
T = np.asfortranarray(tets.T.astype(np.int64))
element = fem.Element.Tetrahedron
weights = fem.mesh_quadrature_weights(T, X, element, order=1, quadrature_order=1)
quadrature_elements = np.ascontiguousarray(np.ravel(fem.mesh_quadrature_elements(T, weights)))
weights = np.ascontiguousarray(np.ravel(weights))
gradients = fem.shape_function_gradients(T, X, element=element, order=1, dims=3, quadrature_order=1)
mu, lam = E / (2 * (1 + nu)), E * nu / ((1 + nu) * (1 - 2 * nu))
flags = int(fem.ElementElasticityComputationFlags.Potential) | int(fem.ElementElasticityComputationFlags.Gradient)
result = fem.hyper_elastic_potential(
    T, vertices.shape[0], quadrature_elements, weights, gradients,
    np.full(weights.shape[0], mu), np.full(weights.shape[0], lam), np.ascontiguousarray(x.ravel()),
    energy=fem.HyperElasticEnergy.SaintVenantKirchhoff, flags=flags,
    spd_correction=fem.HyperElasticSpdCorrection.NoCorrection, element=element, order=1, dims=3,
)
pbat_energy, pbat_gradient = result[0], np.asarray(result[1]).ravel()

energy_difference = abs(hooke_energy - pbat_energy) / abs(pbat_energy)
gradient_difference = np.abs(hooke_gradient - pbat_gradient).max() / np.abs(pbat_gradient).max()
print(f"{tets.shape[0]} tets: energy Hooke {hooke_energy:.9g} J, pbatoolkit {pbat_energy:.9g} J")
print(f"relative difference: energy {energy_difference:.2e}, gradient (max norm) {gradient_difference:.2e}")
assert energy_difference < 1e-5 and gradient_difference < 1e-5, "Hooke and pbatoolkit disagree"
