"""One step of each browser example: the WebAssembly module (run by Node.js) against the native
library on one thread, alternately in the same run, with the same precomputed subspace. Run after
scripts/build-web (which also builds target/release/hooke) and
`cargo build --release -p hooke-web --example reference_run`:

    python3 benches/web/step_vs_native.py [STEPS] [PAIRS]

Prints, per example, the median step time of each and the median of the pair ratios."""

import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
NODE_RUN = """
const fs = require('fs');
const { Live } = require(process.argv[1]);
const [scene, steps, subspace] = process.argv.slice(2);
const live = new Live(fs.readFileSync(scene, 'utf8'), scene, fs.readFileSync(subspace));
const started = performance.now();
for (let i = 0; i < +steps; i++) live.step();
console.log(JSON.stringify({ step_ms: (performance.now() - started) / steps }));
"""


def main():
    steps = sys.argv[1] if len(sys.argv) > 1 else "120"
    pairs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    module = ROOT / "target" / "web" / "node" / "hooke_web.js"
    native = ROOT / "target" / "release" / "examples" / "reference_run"
    env = {**os.environ, "RAYON_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory() as folder:
        for scene in sorted((ROOT / "web" / "scenes").glob("*.toml")):
            subspace = pathlib.Path(folder) / (scene.stem + ".subspace.json")
            times = {"native": [], "wasm": []}
            for _ in range(pairs):
                run = subprocess.run([native, scene, steps, subspace], check=True, capture_output=True, env=env)
                times["native"].append(json.loads(run.stdout)["step_ms"])
                run = subprocess.run(["node", "-e", NODE_RUN, module, scene, steps, subspace], check=True, capture_output=True)
                times["wasm"].append(json.loads(run.stdout)["step_ms"])
            ratios = [w / n for w, n in zip(times["wasm"], times["native"])]
            print(
                f"{scene.stem:26s} native {statistics.median(times['native']):6.2f} ms"
                f"  wasm {statistics.median(times['wasm']):6.2f} ms"
                f"  wasm/native {statistics.median(ratios):.2f}× (pairs {min(ratios):.2f}–{max(ratios):.2f})"
            )


if __name__ == "__main__":
    main()
