"""A cantilever in ten lines: a soft bar clamped at x = 0 sags under gravity.

Run: python cantilever.py [edge_length]   (default 0.05 m; smaller is finer)
"""
import sys

import hooke

edge = float(sys.argv[1]) if len(sys.argv) > 1 else 0.05
vertices, tets, _ = hooke.mesh_shape({"box": {"min": [0, -0.05, -0.05], "max": [1, 0.05, 0.05]}}, edge)
rubber = {"model": "stable_neo_hookean", "youngs_modulus": 1e6, "poisson_ratio": 0.45, "density": 1000}
model = hooke.Model(vertices, tets, rubber, pins=vertices[:, 0] < 1e-9, gravity=[0, 0, -9.81])
simulation = hooke.Simulation(model, integrator="backward_euler", dt=0.01)
simulation.step(100)
tip = simulation.positions[vertices[:, 0] > 1 - 1e-9]
print(f"t = {simulation.time:.2f} s: the tip hangs {-tip[:, 2].mean() * 1000:.1f} mm below the axis")
