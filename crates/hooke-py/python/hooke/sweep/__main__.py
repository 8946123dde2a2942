"""``python -m hooke.sweep``: a sweep from the command line.

    python -m hooke.sweep scenes/falling_bar.toml \\
        --set bodies[0].material.youngs_modulus=1e5,1e6 \\
        --set simulation.time_step=0.01,0.005 \\
        --record tip=trajectory:0.4,0.05,0.05 -o bar_sweep

Each ``--set PATH=V1,V2,...`` adds a parameter of the grid; values are TOML
values (``1e5``, ``"text"``, ``[0, 0, -9.81]``), commas inside brackets or
quotes belong to the value. Exit status: 0 when every variant completed, 1
when one failed (the table says which and why), 2 when the sweep could not
start (a bad path or value, named), 130 on Ctrl-C (what finished is kept).
"""

import argparse
import sys

from ..errors import HookeError, SceneError
from . import overrides, run_sweep


def split_values(text: str) -> list:
    """Top-level comma-separated values: commas inside [] or quotes stay."""
    values, depth, quote, current = [], 0, None, ""
    for character in text:
        if quote:
            quote = None if character == quote else quote
        elif character in "\"'":
            quote = character
        elif character == "[":
            depth += 1
        elif character == "]":
            depth -= 1
        elif character == "," and depth == 0:
            values.append(current)
            current = ""
            continue
        current += character
    values.append(current)
    return [v.strip() for v in values]


def parse_value(text: str):
    """A TOML value, or the text itself when it is not one (a bare word)."""
    from . import _read_toml

    try:
        return _read_toml(f"value = {text}")["value"]
    except Exception:
        return text


def parse_setting(setting: str) -> tuple:
    path, equals, values = setting.partition("=")
    if not equals or not path or not values:
        raise SceneError(f"--set {setting}: expected PATH=V1,V2,... such as bodies[0].material.youngs_modulus=1e5,1e6")
    overrides.parse_path(path)
    return path, [parse_value(v) for v in split_values(values)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hooke.sweep",
        description="Run every combination of scene parameters on a Dask cluster; "
        "one row per variant in OUTPUT/results.parquet, each run in OUTPUT/runs/.",
    )
    parser.add_argument("scene", help="the scene file (.toml)")
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="PATH=V1,V2",
                        help="a parameter and its values, e.g. bodies[0].material.youngs_modulus=1e5,1e6 (repeat)")
    parser.add_argument("--record", action="append", default=[], metavar="NAME=WHAT",
                        help="a column to keep: trajectory:VERTEX, trajectory:X,Y,Z, frequencies:COUNT "
                        "or summary:PATH (repeat)")
    parser.add_argument("-o", "--output", required=True, help="the sweep's folder")
    parser.add_argument("--scheduler", help="a Dask scheduler's address (default: a local cluster)")
    parser.add_argument("--workers", type=int, help="worker processes of the local cluster (default: one per core)")
    parser.add_argument("--rerun-failed", action="store_true", help="run again the variants that failed before")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    arguments = parser.parse_args(argv)
    try:
        grid = dict(parse_setting(s) for s in arguments.settings)
        if not grid:
            raise SceneError("no parameters: give at least one --set PATH=V1,V2,...")
        record = {}
        for item in arguments.record:
            name, equals, what = item.partition("=")
            if not equals:
                raise SceneError(f"--record {item}: expected NAME=WHAT such as tip=trajectory:12")
            record[name] = what
        client = None
        if arguments.scheduler:
            from distributed import Client

            client = Client(arguments.scheduler)
        table = run_sweep(arguments.scene, grid, arguments.output, client=client, record=record,
                          workers=arguments.workers, rerun_failed=arguments.rerun_failed,
                          progress=not arguments.quiet)
    except HookeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    failed = table[table.status != "completed"]
    print(f"{len(table)} variants, {len(table) - len(failed)} completed, {len(failed)} failed; "
          f"table: {arguments.output}/results.parquet")
    for _, row in failed.iterrows():
        first_line = str(row.error).splitlines()[0] if row.error else row.status
        print(f"  variant {row.variant} ({row.directory}): {first_line}")
    return 1 if len(failed) else 0


if __name__ == "__main__":
    sys.exit(main())
