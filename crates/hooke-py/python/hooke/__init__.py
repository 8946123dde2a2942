"""Hooke: finite element elastodynamics of deformable solids, from Python.

numpy arrays in, numpy arrays (and scipy.sparse matrices) out. Units are SI:
metres, kilograms, seconds, newtons, pascals, joules.

>>> import hooke
>>> vertices, tets, labels = hooke.mesh_shape({"box": {"min": [0, 0, 0], "max": [1, 0.1, 0.1]}}, 0.05)
>>> model = hooke.Model(vertices, tets,
...                     material={"model": "stable_neo_hookean", "youngs_modulus": 1e6,
...                               "poisson_ratio": 0.45, "density": 1000},
...                     pins=vertices[:, 0] < 1e-9, gravity=[0, 0, -9.81])
>>> sim = hooke.Simulation(model, integrator="backward_euler", dt=0.01)
>>> report = sim.step(10)

The pieces:

- ``Model(vertices, elements, material, ...)``: a body from arrays, with
  ``energy``, ``gradient``, ``hessian`` (scipy CSR) and ``mass_matrix``;
- ``modes(model, k)``: the k lowest vibration frequencies (Hz) and shapes;
- ``Simulation(model, integrator=..., solver=..., dt=...)``: ``step()``,
  ``positions``, ``velocities``, ``time``, ``move_pin``;
- ``Scene.from_file(path)`` / ``Scene.from_dict({...})``: a scene in Hooke's
  TOML format; ``scene.run()`` runs it as ``hooke run`` does;
- ``mesh_shape``, ``read_mesh``, ``read_surface``, ``write_mesh``,
  ``write_surface``: meshes as arrays;
- ``hooke.errors``: the exceptions, carrying the file, line, key or element;
- ``hooke.sweep(scene, parameters, output=...)``: many variants of a scene
  run on a Dask cluster, gathered into a pandas table (``hooke.sweep``'s
  text; needs the ``sweep`` extra: ``pip install "hooke[sweep]"``);
- ``read_frame(path)``: a frame a run wrote, as arrays;
- ``hooke.contact``: the distances, mollifier and barrier of barrier contact
  (Li et al. 2020), with their derivatives.
"""

from . import contact, errors, sweep
from ._hooke import (
    Model,
    RunResult,
    Scene,
    Simulation,
    integrators,
    materials,
    mesh_shape,
    modes,
    read_frame,
    read_mesh,
    read_surface,
    solvers,
    write_mesh,
    write_surface,
)
from .errors import (
    HookeError,
    HookeIOError,
    InvalidDeformationError,
    MaterialError,
    MeshError,
    ParseError,
    RunInterrupted,
    SceneError,
    SolverError,
    StepFailedError,
)

__all__ = [
    "Model",
    "RunResult",
    "Scene",
    "Simulation",
    "integrators",
    "materials",
    "mesh_shape",
    "modes",
    "read_frame",
    "read_mesh",
    "read_surface",
    "solvers",
    "write_mesh",
    "write_surface",
    "errors",
    "sweep",
    "HookeError",
    "HookeIOError",
    "InvalidDeformationError",
    "MaterialError",
    "MeshError",
    "ParseError",
    "RunInterrupted",
    "SceneError",
    "SolverError",
    "StepFailedError",
]
