"""A step, and one iteration of its solver, of each browser example: the WebAssembly module run by
Node.js and by headless Chromium against the native library on one thread, one after the other in
each round of the same run, all given the same precomputed subspace. Run after scripts/build-web
and `cargo build --release -p hooke-web --example reference_run`, with the Python of
scripts/test-web (which has selenium) for the Chromium column:

    target/web-venv/bin/python benches/web/step_vs_native.py [STEPS] [ROUNDS]

Prints, per example, the median step and iteration times of each, and the medians (and ranges)
of the per-round ratios to native. Without selenium or Chromium it measures Node.js only."""

import functools
import http.server
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import threading

ROOT = pathlib.Path(__file__).resolve().parents[2]
SITE = ROOT / "target" / "web"
NODE_RUN = """
const fs = require('fs');
const { Live } = require(process.argv[1]);
const [scene, steps, subspace] = process.argv.slice(2);
const live = new Live(fs.readFileSync(scene, 'utf8'), scene, fs.readFileSync(subspace));
const started = performance.now();
for (let i = 0; i < +steps; i++) live.step();
console.log(JSON.stringify({ step_ms: (performance.now() - started) / steps, iteration_ms: live.iteration_ms() }));
"""
PAGE_RUN = """
const [name, steps, done] = arguments;
(async () => {
  const module = await import('./pkg/hooke_web.js');
  await module.default();
  const text = await (await fetch('scenes/' + name + '.toml')).text();
  const subspace = new Uint8Array(await (await fetch('scenes/' + name + '.subspace.json')).arrayBuffer());
  const live = new module.Live(text, name + '.toml', subspace);
  const started = performance.now();
  for (let i = 0; i < steps; i++) live.step();
  done({ step_ms: (performance.now() - started) / steps, iteration_ms: live.iteration_ms() });
})().catch((error) => done(String(error)));
"""


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm"}

    def log_message(self, *args):
        pass


def chromium():
    """A headless Chromium on the site, or None (with the reason) when it cannot start."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        print("(no selenium here: Node.js only; run with target/web-venv/bin/python)", file=sys.stderr)
        return None, None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(SITE)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage"]:
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
    driver.set_script_timeout(600)
    # A blank page of the site: the module and the scenes load from it, nothing else runs.
    driver.get(f"http://127.0.0.1:{server.server_address[1]}/examples.json")
    return driver, server


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 120
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    module = SITE / "node" / "hooke_web.js"
    native = ROOT / "target" / "release" / "examples" / "reference_run"
    env = {**os.environ, "RAYON_NUM_THREADS": "1"}
    driver, server = chromium()
    kinds = ["native", "node"] + (["chromium"] if driver else [])
    try:
        for scene in sorted((ROOT / "web" / "scenes").glob("*.toml")):
            subspace = SITE / "scenes" / (scene.stem + ".subspace.json")
            times = {kind: [] for kind in kinds}
            for _ in range(rounds):
                run = subprocess.run([native, scene, str(steps), subspace], check=True, capture_output=True, env=env)
                times["native"].append(json.loads(run.stdout))
                run = subprocess.run(
                    ["node", "-e", NODE_RUN, module, scene, str(steps), subspace], check=True, capture_output=True
                )
                times["node"].append(json.loads(run.stdout))
                if driver:
                    result = driver.execute_async_script(PAGE_RUN, scene.stem, steps)
                    if not isinstance(result, dict):
                        raise SystemExit(f"{scene.stem} in Chromium: {result}")
                    times["chromium"].append(result)
            line = f"{scene.stem:25s}"
            for what in ["step_ms", "iteration_ms"]:
                line += f"\n  {what[:-3]:9s}"
                for kind in kinds:
                    median = statistics.median(t[what] for t in times[kind])
                    line += f"  {kind} {median:6.2f} ms"
                    if kind != "native":
                        ratios = [t[what] / n[what] for t, n in zip(times[kind], times["native"])]
                        line += f" ({statistics.median(ratios):.2f}×, {min(ratios):.2f}–{max(ratios):.2f})"
            print(line, flush=True)
    finally:
        if driver:
            driver.quit()
            server.shutdown()


if __name__ == "__main__":
    main()
