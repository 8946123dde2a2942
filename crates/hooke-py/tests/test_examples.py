"""Every example runs, on a coarse mesh."""

import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize(
    "name, arguments, expected",
    [
        ("cantilever.py", ["0.1"], "below the axis"),
        ("cantilever_sweep.py", ["{tmp}/sweep", "2"], "4 variants, 0 failed"),
        ("drive_pin.py", ["0.1"], "t = 1.00 s"),
        ("modal_analysis.py", ["0.1", "{tmp}/modes.png"], "Euler–Bernoulli"),
        ("pbatoolkit_comparison.py", ["0.1"], "relative difference"),
    ],
)
def test_example(tmp_path, name, arguments, expected):
    if name.startswith("cantilever_sweep"):
        pytest.importorskip("distributed")
    if name.startswith("pbatoolkit"):
        pytest.importorskip("pbatoolkit")
    arguments = [a.format(tmp=tmp_path) for a in arguments]
    done = subprocess.run([sys.executable, str(EXAMPLES / name), *arguments], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert expected in done.stdout
