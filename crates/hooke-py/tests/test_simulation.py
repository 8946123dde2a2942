"""Stepping from Python: integrators by name, driven pins, state set between
steps, failures that leave the state as it was, and runs of scenes."""

import numpy as np
import pytest

import hooke
from conftest import RUBBER


def test_every_listed_integrator_has_a_name_and_summary():
    names = [name for name, _ in hooke.integrators()]
    assert "backward_euler" in names and "siere" in names
    assert "stable_neo_hookean" in hooke.materials()


def test_every_listed_solver_takes_its_keys_from_a_dict(bar):
    listed = {name: keys for name, _, keys in hooke.solvers()}
    assert set(listed) == {"newton", "lbfgs", "local_global"}
    assert ("history", "5") in [(key, default) for key, default, _ in listed["lbfgs"]]
    simulation = hooke.Simulation(bar, solver={"kind": "lbfgs", "history": 3, "iterations": 5}, dt=0.005)
    simulation.step(2)
    with pytest.raises(hooke.SceneError, match="newton takes no `history`"):
        hooke.Simulation(bar, solver={"kind": "newton", "history": 3})


@pytest.mark.parametrize("integrator", ["backward_euler", "implicit_midpoint", "bdf2", "siere", "semi_implicit_backward_euler"])
def test_a_pinned_bar_sags_under_gravity(bar, integrator):
    simulation = hooke.Simulation(bar, integrator=integrator, dt=0.005)
    simulation.step(10)
    assert simulation.steps == 10
    assert simulation.time == 0.05
    assert simulation.positions[:, 2].min() < -1e-4
    pinned = bar.pins[0]
    assert np.array_equal(simulation.positions[pinned], bar.rest_positions[pinned])


def test_a_free_fall_keeps_its_shape_and_falls_as_theory_says(bar_mesh):
    vertices, tets, _ = bar_mesh
    model = hooke.Model(vertices, tets, RUBBER, gravity=[0, 0, -9.81])
    simulation = hooke.Simulation(model, integrator="backward_euler", dt=0.01)
    simulation.step(10)
    drop = simulation.positions - vertices
    # Backward Euler: z_k = -g h² k(k+1)/2 for a body that only translates.
    assert np.allclose(drop[:, 2], -9.81 * 0.01**2 * 10 * 11 / 2, rtol=1e-9, atol=1e-12)
    assert np.allclose(drop[:, :2], 0.0, atol=1e-12)


def test_a_driven_pin_reaches_each_target_at_the_end_of_the_step(bar_mesh):
    vertices, tets, _ = bar_mesh
    clamp = np.flatnonzero(vertices[:, 0] < 1e-9)
    handle = np.flatnonzero(vertices[:, 0] > 0.4 - 1e-9)
    model = hooke.Model(vertices, tets, RUBBER, pins=[clamp, handle])
    simulation = hooke.Simulation(model, dt=0.01)
    for k in range(1, 6):
        target = np.array([0.0, 0.01 * k, -0.02 * k])
        simulation.move_pin(1, target)
        simulation.step()
        assert np.allclose(simulation.positions[handle] - vertices[handle], target, atol=1e-14)
        assert np.allclose(simulation.velocities[handle], [0.0, 1.0, -2.0], atol=1e-9)
    # Not moved again: it stays and stops.
    simulation.step()
    assert np.allclose(simulation.positions[handle] - vertices[handle], [0, 0.05, -0.1], atol=1e-14)
    assert np.allclose(simulation.velocities[handle], 0.0)
    # The clamp never moved, and the body between follows.
    assert np.array_equal(simulation.positions[clamp], vertices[clamp])
    assert simulation.positions[:, 1].max() > 0.04
    with pytest.raises(ValueError, match="2 pins"):
        simulation.move_pin(2, [0, 0, 0])


def test_state_set_between_steps_is_the_next_steps_start(bar):
    simulation = hooke.Simulation(bar, dt=0.01)
    other = hooke.Simulation(bar, dt=0.01)
    simulation.step(3)
    other.positions = simulation.positions
    other.velocities = simulation.velocities
    other.time = simulation.time
    simulation.step()
    other.step()
    assert np.array_equal(simulation.positions, other.positions)


def test_integrator_and_solver_settings_by_dict(bar):
    simulation = hooke.Simulation(bar, integrator={"kind": "newmark", "beta": 0.25, "gamma": 0.5}, solver={"tolerance": 1e-10}, dt=0.01)
    simulation.step()
    assert simulation.integrator == "newmark"
    with pytest.raises(hooke.SceneError, match="integrator.betta") as raised:
        hooke.Simulation(bar, integrator={"kind": "newmark", "betta": 0.25})
    assert raised.value.key == "integrator.betta"
    with pytest.raises(hooke.SceneError, match="unknown integrator"):
        hooke.Simulation(bar, integrator="backwards_euler")
    with pytest.raises(hooke.SceneError, match="solver"):
        hooke.Simulation(bar, solver={"tolerence": 1e-3})
    with pytest.raises(ValueError, match="dt"):
        hooke.Simulation(bar, dt=0.0)


def test_a_failed_step_raises_and_keeps_the_state(bar_mesh):
    vertices, tets, _ = bar_mesh
    model = hooke.Model(vertices, tets, {**RUBBER, "model": "neo_hookean"})
    simulation = hooke.Simulation(model, integrator="symplectic_euler", dt=0.01)
    start = vertices.copy()
    start[0] = vertices[0] + [0.3, 0.3, 0.3]  # inverts the elements at a corner
    simulation.positions = start
    with pytest.raises(hooke.HookeError) as raised:
        simulation.step()
    assert isinstance(raised.value, (hooke.StepFailedError, hooke.InvalidDeformationError))
    assert np.array_equal(simulation.positions, start)
    assert simulation.steps == 0


def test_an_inverted_element_is_named(bar_mesh):
    vertices, tets, _ = bar_mesh
    model = hooke.Model(vertices, tets, {**RUBBER, "model": "neo_hookean"})
    x = vertices.copy()
    x[tets[7][0]] = x[tets[7][1:]].mean(axis=0) * 2 - x[tets[7][0]]
    assert model.energy(x) == float("inf")
    with pytest.raises(hooke.InvalidDeformationError) as raised:
        model.gradient(x)
    assert raised.value.element is not None


def test_energies_of_the_state(bar):
    simulation = hooke.Simulation(bar, dt=0.01)
    simulation.step(5)
    energies = simulation.energies()
    assert energies["kinetic"] > 0 and energies["gravitational"] < 0
    assert energies["total"] == pytest.approx(
        energies["kinetic"] + energies["elastic"] + energies["gravitational"] + energies["penalty"]
    )


def test_a_scene_runs_and_returns_its_energies(tmp_path, repository):
    scene = hooke.Scene.from_file(repository / "scenes" / "falling_bar.toml")
    result = scene.run(output_directory=tmp_path / "run", progress=False)
    assert result.status == "completed"
    energies = result.energies
    assert len(energies["time"]) == result.steps + 1
    assert energies["linear_momentum"].shape == (result.steps + 1, 3)
    assert (tmp_path / "run" / "energies.csv").exists()
    table = np.genfromtxt(tmp_path / "run" / "energies.csv", delimiter=",", names=True)
    assert np.allclose(table["kinetic"], energies["kinetic"], rtol=1e-12)


def test_progress_off_a_terminal_is_plain_lines(tmp_path, repository, capsys):
    # pytest's captured stderr is not a terminal: the progress must come as
    # whole lines, a tenth of the run apart, with no carriage returns.
    scene = hooke.Scene.from_file(repository / "scenes" / "falling_bar.toml")
    result = scene.run(output_directory=tmp_path / "run")
    assert result.status == "completed"
    progress = capsys.readouterr().err
    assert "\r" not in progress
    lines = [line for line in progress.splitlines() if ": step " in line]
    assert 2 <= len(lines) <= 11, progress
    assert lines[-1].endswith("(100%)"), progress


def test_a_scene_steps_from_python(repository):
    scene = hooke.Scene.from_file(repository / "scenes" / "falling_bar.toml")
    simulation = scene.simulation()
    assert simulation.dt == scene.time_step
    simulation.step(3)
    assert simulation.time == pytest.approx(3 * scene.time_step)


def test_scene_errors_name_their_place(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('[simulation]\nduration = 1.0\ntime_step = 0.01\n\n[[bodies]]\nmesh = { box = { size = [1, 1, 1], cells = [1, 1, 1] } }\nmaterial = { model = "linear", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000, colour = "red" }\n')
    with pytest.raises(hooke.ParseError) as raised:
        hooke.Scene.from_file(path)
    assert raised.value.line == 7 and "colour" in str(raised.value)
    with pytest.raises(hooke.HookeIOError) as raised:
        hooke.Scene.from_file(tmp_path / "missing.toml")
    assert raised.value.path.endswith("missing.toml")
    with pytest.raises(hooke.SceneError) as raised:
        hooke.Scene.from_dict({"simulation": {"duration": 1.0, "time_step": -0.01}, "bodies": []})
    assert raised.value.key is not None
    with pytest.raises(TypeError, match="simulation.duration"):
        hooke.Scene.from_dict({"simulation": {"duration": object()}})


def test_obstacles_damping_and_forces_from_dicts_and_arrays(bar_mesh):
    vertices, tets, _ = bar_mesh
    floor = {"shape": {"plane": {"point": [0, 0, -0.01], "normal": [0, 0, 1]}}, "stiffness": 1e5}
    falling = hooke.Model(vertices, tets, RUBBER, gravity=[0, 0, -9.81], obstacles=[floor])
    simulation = hooke.Simulation(falling, dt=0.005)
    simulation.step(60)
    # It landed and rests on the floor, a little into the penalty layer (g/κ ≈ 0.1 mm).
    assert -0.0115 < simulation.positions[:, 2].min() < -0.0099
    assert simulation.energies()["penalty"] > 0
    # A mesh obstacle is barrier contact's, which scenes take: a model refuses it, naming the key.
    bowl = {"shape": {"mesh": {"file": "bowl.obj"}}, "stiffness": 1e5}
    with pytest.raises(ValueError, match=r"obstacles\[0\]\.shape"):
        hooke.Model(vertices, tets, RUBBER, obstacles=[bowl])
    # Rayleigh damping takes energy out of a swinging bar.
    pins = vertices[:, 0] < 1e-9
    free = hooke.Simulation(hooke.Model(vertices, tets, RUBBER, pins=pins, gravity=[0, 0, -9.81]), dt=0.01)
    damped = hooke.Simulation(
        hooke.Model(vertices, tets, RUBBER, pins=pins, gravity=[0, 0, -9.81], damping={"mass_coefficient": 5.0}), dt=0.01
    )
    free.step(20)
    damped.step(20)
    assert damped.energies()["kinetic"] < 0.5 * free.energies()["kinetic"]
    # Nodal forces: a constant pull on the free end is a load the potential carries (E = -f·x + const).
    tip = np.flatnonzero(vertices[:, 0] > 0.4 - 1e-9)
    forces = np.zeros_like(vertices)
    forces[tip, 2] = 0.1
    pulled = hooke.Model(vertices, tets, RUBBER, pins=pins, forces=forces)
    shift = np.zeros_like(vertices)
    shift[:, 2] = 1e-3
    work = pulled.energy(vertices + shift) - pulled.energy(vertices)
    assert work == pytest.approx(-0.1 * len(tip) * 1e-3, rel=1e-9)
    assert np.allclose(pulled.gradient(vertices)[tip], [0, 0, -0.1])
    with pytest.raises(hooke.SceneError, match="damping"):
        hooke.Model(vertices, tets, RUBBER, damping={"mass_coeficient": 1.0})
    # Not-a-number, infinite, negative and absurd coefficients are input faults
    # named by their key, not solver failures later.
    for key, value, words in [
        ("mass_coefficient", float("nan"), "finite"),
        ("stiffness_coefficient", float("inf"), "finite"),
        ("viscoelastic_coefficient", -1.0, "≥ 0"),
        ("stiffness_coefficient", 1e308, "beyond any damping"),
    ]:
        with pytest.raises(hooke.SceneError, match=f"damping.{key}.*{words}"):
            hooke.Model(vertices, tets, RUBBER, damping={key: value})
