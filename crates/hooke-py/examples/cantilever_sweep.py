"""A data set of cantilever variants on a Dask cluster: 64 materials (8
Young's moduli × 8 Poisson ratios), each run for 1 s under gravity, with its
tip trajectory and lowest frequencies, in one Parquet table; and the plot of
the first frequency against E and ν beside Euler–Bernoulli's
f₁ = (1.8751² / 2π L²) √(E I / ρ A).

The table (OUTPUT/results.parquet) has one row per variant: E, ν, status,
the final energies, `tip` (frames × [t, x, y, z]) and `frequencies` (Hz);
each run's own outputs are in OUTPUT/runs/. Running it again skips what is
done.

Run: python cantilever_sweep.py [OUTPUT] [N]  (an N × N grid, default 8:
64 variants, about a minute on 2 cores)
"""
import math
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import hooke  # noqa: E402

output = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "cantilever_sweep")
count = int(sys.argv[2]) if len(sys.argv) > 2 else 8
L, H, rho = 1.0, 0.1, 1000.0
scene = {
    "name": "cantilever_sweep",
    "gravity": [0, 0, -9.81],
    "simulation": {"duration": 1.0, "time_step": 0.01},
    "bodies": [
        {
            "mesh": {"box": {"size": [L, H, H], "cells": [20, 2, 2], "origin": [0, -H / 2, -H / 2]}},
            "material": {"model": "stable_neo_hookean", "youngs_modulus": 1e7, "poisson_ratio": 0.3, "density": rho},
        }
    ],
    "pins": [{"select": {"plane": {"point": [0, 0, 0], "normal": [-1, 0, 0]}}}],
    "output": {"vtk_every": 2, "plot": False},
}
E_values = np.geomspace(1e6, 1e8, count)
nu_values = np.linspace(0.0, 0.45, count)

if __name__ == "__main__":
    table = hooke.sweep(
        scene,
        {"bodies[0].material.youngs_modulus": E_values, "bodies[0].material.poisson_ratio": nu_values},
        output,
        record={"tip": hooke.sweep.trajectory(point=[L, 0, 0]), "frequencies": hooke.sweep.frequencies(3)},
    )
    failed = table[table.status != "completed"]
    print(f"{len(table)} variants, {len(failed)} failed; table in {output / 'results.parquet'}")
    table["first_frequency"] = [f[0] for f in table.frequencies]
    table["tip_lowest"] = [tip[:, 3].min() for tip in table.tip]
    E, nu = "bodies[0].material.youngs_modulus", "bodies[0].material.poisson_ratio"

    def euler_bernoulli(e):
        return 1.8751**2 / (2 * math.pi * L**2) * math.sqrt(e * H**4 / 12 / (rho * H * H))

    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    colours = plt.cm.viridis(np.linspace(0, 0.9, count))
    for colour, (value, group) in zip(colours, table.groupby(nu)):
        left.loglog(group[E], group.first_frequency, "o-", color=colour, markersize=3, label=f"ν = {value:.2f}")
    left.loglog(E_values, [euler_bernoulli(e) for e in E_values], "k--", linewidth=1, label="Euler–Bernoulli")
    left.set_xlabel("Young's modulus E (Pa)")
    left.set_ylabel("first frequency (Hz)")
    left.set_title(f"first frequency of {len(table)} cantilevers")
    left.legend(fontsize=7, ncol=2)
    middle = table[np.isclose(table[nu], nu_values[count // 2])]
    for colour, e, tip in zip(colours, middle[E], middle.tip):
        right.plot(tip[:, 0], tip[:, 3], color=colour, label=f"E = {e:.2g} Pa")
    right.set_xlabel("time (s)")
    right.set_ylabel("tip height (m)")
    right.set_title(f"tip under gravity, ν = {nu_values[count // 2]:.2f}")
    right.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(output / "first_frequency.png", dpi=100)

    ratios = table.first_frequency / table[E].map(euler_bernoulli)
    print(f"first frequency / Euler–Bernoulli: {ratios.min():.3f} to {ratios.max():.3f} "
          "(linear tets are stiff in bending on 20 × 2 × 2 cells)")
    print(f"wrote {output / 'first_frequency.png'}")
