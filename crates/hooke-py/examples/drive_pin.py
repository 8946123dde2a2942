"""Driving a pinned vertex from Python: a bar clamped at x = 0 whose free end
is held by a second pin that a control loop moves around a circle.

Each step, `move_pin` gives the pin a straight segment to its next target,
reached at the end of the step; the body follows under backward Euler.

Run: python drive_pin.py [edge_length]
"""
import math
import sys

import numpy as np

import hooke

edge = float(sys.argv[1]) if len(sys.argv) > 1 else 0.05
vertices, tets, _ = hooke.mesh_shape({"box": {"min": [0, -0.05, -0.05], "max": [1, 0.05, 0.05]}}, edge)
clamp = np.flatnonzero(vertices[:, 0] < 1e-9)
handle = np.flatnonzero(vertices[:, 0] > 1 - 1e-9)
rubber = {"model": "stable_neo_hookean", "youngs_modulus": 1e5, "poisson_ratio": 0.4, "density": 1000}
model = hooke.Model(vertices, tets, rubber, pins=[clamp, handle])
simulation = hooke.Simulation(model, integrator="backward_euler", dt=0.01)

radius, period, steps = 0.2, 1.0, 100
for k in range(1, steps + 1):
    angle = 2 * math.pi * k * simulation.dt / period
    # The handle's displacement from rest: a circle in the y-z plane.
    simulation.move_pin(1, [0.0, radius * math.sin(angle), radius * (math.cos(angle) - 1)])
    simulation.step()
    if k % 25 == 0:
        centre = simulation.positions[handle].mean(axis=0) - vertices[handle].mean(axis=0)
        middle = simulation.positions[np.abs(vertices[:, 0] - 0.5) < edge / 2].mean(axis=0)
        print(f"t = {simulation.time:.2f} s  handle offset {np.round(centre, 4)}  middle at {np.round(middle, 4)}")
