"""Shared fixtures: a small bar, the repository root and the `hooke` command."""

import os
import pathlib
import subprocess

import numpy as np
import pytest

import hooke

ROOT = pathlib.Path(__file__).resolve().parents[3]
RUBBER = {"model": "stable_neo_hookean", "youngs_modulus": 1e5, "poisson_ratio": 0.4, "density": 1000.0}


@pytest.fixture(scope="session")
def repository():
    return ROOT


@pytest.fixture(scope="session")
def hooke_command():
    """The CLI binary of this checkout (built if the Rust tests have not built it)."""
    path = pathlib.Path(os.environ.get("HOOKE_BIN", ROOT / "target" / "release" / "hooke"))
    if not path.exists():
        subprocess.run(["cargo", "build", "--release", "-p", "hooke-cli"], cwd=ROOT, check=True)
    return path


@pytest.fixture(scope="session")
def bar_mesh():
    """A 0.4 m × 0.1 m × 0.1 m bar of about 400 tets."""
    return hooke.mesh_shape({"box": {"min": [0, 0, 0], "max": [0.4, 0.1, 0.1]}}, 0.05)


@pytest.fixture
def bar(bar_mesh):
    vertices, tets, _ = bar_mesh
    return hooke.Model(vertices, tets, RUBBER, pins=vertices[:, 0] < 1e-9, gravity=[0, 0, -9.81])


def bent(vertices, amount=0.2):
    """A smooth, non-rigid deformation of rest positions."""
    x = np.array(vertices, dtype=float)
    x[:, 2] -= amount * x[:, 0] ** 2
    x[:, 1] += 0.5 * amount * x[:, 0] * x[:, 2]
    return x
