"""Modal analysis of a cantilever, plotted with matplotlib: the lowest
frequencies against Euler–Bernoulli theory, and the first mode's shape.

f₁ = (1.8751² / 2π L²) √(E I / ρ A) for a clamped-free beam; linear
tetrahedra are stiff in bending, so the finite element frequency lies above
it and comes down as the mesh is refined.

Run: python modal_analysis.py [edge_length] [output.png]
"""
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import hooke  # noqa: E402

edge = float(sys.argv[1]) if len(sys.argv) > 1 else 0.025
output = sys.argv[2] if len(sys.argv) > 2 else "cantilever_modes.png"
E, nu, rho, L, h = 1e6, 0.3, 1000.0, 1.0, 0.1
vertices, tets, _ = hooke.mesh_shape({"box": {"min": [0, -h / 2, -h / 2], "max": [L, h / 2, h / 2]}}, edge)
material = {"model": "linear", "youngs_modulus": E, "poisson_ratio": nu, "density": rho}
model = hooke.Model(vertices, tets, material, pins=vertices[:, 0] < 1e-9)
frequencies, shapes = hooke.modes(model, 6)

theory = [b**2 / (2 * math.pi * L**2) * math.sqrt(E * h**4 / 12 / (rho * h * h)) for b in (1.8751, 4.6941)]
print("mode  Hooke (Hz)")
for i, f in enumerate(frequencies):
    print(f"{i + 1:4d}  {f:9.4f}")
print(f"Euler–Bernoulli bending: {theory[0]:.4f} Hz, {theory[1]:.4f} Hz (each twice: y and z)")

figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
left.bar(range(1, len(frequencies) + 1), frequencies, color="tab:blue", label="Hooke (linear tets)")
for f in theory:
    left.axhline(f, color="tab:red", linestyle="--", linewidth=1)
left.set_xlabel("mode")
left.set_ylabel("frequency (Hz)")
left.set_title("lowest modes; dashed: Euler–Bernoulli")
left.legend()
first = shapes[0]
component = abs(first).max(axis=0).argmax()
right.scatter(vertices[:, 0], first[:, component], s=4)
right.set_xlabel("x (m)")
right.set_ylabel(f"mode 1, {'xyz'[component]} displacement")
right.set_title(f"first mode: {frequencies[0]:.3f} Hz")
figure.tight_layout()
figure.savefig(output, dpi=100)
print(f"wrote {output}")
