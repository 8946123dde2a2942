"""The browser build, tested as a visitor meets it: scripts/test-web runs this after
scripts/build-web has written target/web/.

- The WebAssembly module (run by Node.js) steps a scene to the same positions as the native
  library, to 1e-9 relative, given the same precomputed subspace.
- The page, served on 127.0.0.1 and opened in headless Chromium: it loads without console errors,
  draws the body, the body moves under gravity, a drag pulls the grabbed point toward the pointer,
  and the frame time and energy it shows are finite. Screenshots go to target/web-test/.
"""

import functools
import http.server
import json
import math
import os
import pathlib
import subprocess
import threading
import time

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains

ROOT = pathlib.Path(__file__).resolve().parents[2]
SITE = ROOT / "target" / "web"
ARTIFACTS = ROOT / "target" / "web-test"
REFERENCE_RUN = ROOT / "target" / "release" / "examples" / "reference_run"

NODE_RUN = """
const fs = require('fs');
const { Live } = require(process.argv[1]);
const [scene, steps, subspace] = process.argv.slice(2);
const live = new Live(fs.readFileSync(scene, 'utf8'), scene, fs.readFileSync(subspace));
for (let i = 0; i < +steps; i++) live.step();
console.log(JSON.stringify({ energy: live.energy(), positions: Array.from(live.positions_f64()) }));
"""


def test_the_module_steps_to_the_native_positions(tmp_path):
    scene = ROOT / "web" / "scenes" / "wound_pendulum.toml"
    subspace = tmp_path / "subspace.json"
    steps = "90"  # past the release of the wound block at t = 1 s
    native = json.loads(
        subprocess.run(
            [REFERENCE_RUN, scene, steps, subspace],
            check=True,
            capture_output=True,
            text=True,
            env={**os.environ, "RAYON_NUM_THREADS": "1"},
        ).stdout
    )
    wasm = json.loads(
        subprocess.run(
            ["node", "-e", NODE_RUN, str(SITE / "node" / "hooke_web.js"), scene, steps, subspace],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    reference, positions = native["positions"], wasm["positions"]
    assert len(positions) == len(reference)
    size = max(abs(x) for x in reference)
    difference = max(abs(a - b) for a, b in zip(positions, reference))
    assert difference <= 1e-9 * size, f"largest difference {difference:.3e} m"
    start = json.loads(
        subprocess.run(
            [REFERENCE_RUN, scene, "0", subspace], check=True, capture_output=True, text=True
        ).stdout
    )["positions"]
    assert max(abs(a - b) for a, b in zip(positions, start)) > 1e-2, "the pendulum moved"


@pytest.fixture(scope="module")
def site():
    handler = functools.partial(QuietHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm"}

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in [
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1000,700",
        # WebGL on the CPU, as a machine without a GPU has it.
        "--use-angle=swiftshader",
        "--enable-unsafe-swiftshader",
    ]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()


def wait_for(driver, condition, seconds, what, error_expected=False):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        error = driver.execute_script("return window.hooke && window.hooke.error")
        assert error_expected or not error, f"the page says: {error}"
        if driver.execute_script(f"return !!({condition})"):
            return
        time.sleep(0.05)
    raise AssertionError(f"{what} did not happen within {seconds} s")


def console_errors(driver):
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def test_the_page_runs_a_body_a_visitor_can_pull(browser, site):
    browser.get(f"{site}/index.html?scene=heterogeneous_cantilever.toml")
    wait_for(browser, "window.hooke.live && window.hooke.frames >= 1", 60, "the first frame")
    start = browser.execute_script("return Array.from(window.hooke.live.positions_f64())")
    wait_for(browser, "window.hooke.frames >= 120", 60, "120 frames")
    browser.save_screenshot(str(ARTIFACTS / "live.png"))
    assert console_errors(browser) == []

    stats = browser.execute_script("return window.hooke.pixelStats()")
    assert stats["deviation"] > 5, f"the canvas looks blank: {stats}"
    now = browser.execute_script("return Array.from(window.hooke.live.positions_f64())")
    sag = max(a - b for a, b in zip(start[2::3], now[2::3]))
    assert sag > 1e-3, f"under gravity the body moved down by {sag} m"
    step_ms, energy = browser.execute_script("return [window.hooke.stepMs, window.hooke.energy]")
    assert math.isfinite(step_ms) and step_ms > 0
    assert math.isfinite(energy)
    status = browser.find_element("id", "status").text
    assert "built in" in status, status

    # Grab the vertex nearest the eye and pull it 100 pixels up.
    nearest = browser.execute_script("return window.hooke.nearestVertexOnScreen()")
    before = browser.execute_script(f"return window.hooke.vertex({nearest['vertex']})")
    canvas = browser.find_element("id", "view")
    rect = browser.execute_script("return arguments[0].getBoundingClientRect().toJSON()", canvas)
    x = nearest["x"] - rect["left"] - rect["width"] / 2
    y = nearest["y"] - rect["top"] - rect["height"] / 2
    actions = ActionChains(browser, duration=50)
    actions.move_to_element_with_offset(canvas, int(x), int(y)).click_and_hold()
    for _ in range(10):
        actions.move_by_offset(0, -10)
    actions.perform()
    held = browser.execute_script("return window.hooke.grabbed()")
    assert held is not None, "the click on the body grabbed nothing"
    frames = browser.execute_script("return window.hooke.frames")
    wait_for(browser, f"window.hooke.frames >= {frames + 90}", 60, "90 frames of pulling")
    held = browser.execute_script("return window.hooke.grabbed()")
    after = browser.execute_script(f"return window.hooke.vertex({held['vertex']})")
    browser.save_screenshot(str(ARTIFACTS / "drag.png"))
    ActionChains(browser).release().perform()
    target = held["target"]
    gap_before = math.dist(before, target)
    gap_after = math.dist(after, target)
    assert gap_after < 0.5 * gap_before, f"the grabbed point went from {gap_before} m to {gap_after} m of the pointer"
    assert after[2] > before[2], "pulled up, it rose"
    assert browser.execute_script("return window.hooke.grabbed()") is None
    assert console_errors(browser) == []


def test_every_bundled_example_starts_and_steps(browser, site):
    examples = json.loads((SITE / "examples.json").read_text())
    timings = {}
    for entry in examples:
        browser.get(f"{site}/index.html?scene={entry['scene']}")
        wait_for(browser, "window.hooke.live && window.hooke.frames >= 30", 60, f"30 frames of {entry['scene']}")
        first, build, step, iteration = browser.execute_script(
            "return [window.hooke.firstFrameMs, window.hooke.buildSeconds, window.hooke.stepMs, window.hooke.iterationMs]"
        )
        assert math.isfinite(iteration) and iteration > 0, f"an iteration took {iteration} ms"
        assert "subspace precomputed" in browser.find_element("id", "status").text
        browser.save_screenshot(str(ARTIFACTS / entry["scene"].replace(".toml", ".png")))
        timings[entry["scene"]] = {"first_frame_ms": first, "build_s": build, "step_ms": step, "iteration_ms": iteration}
        # A generous bound that catches a page that freezes; the figures are in BENCHMARKS.md.
        assert first < 10_000, f"{entry['scene']}: first frame after {first:.0f} ms"
        assert console_errors(browser) == []
    (ARTIFACTS / "timings.json").write_text(json.dumps(timings, indent=1))


RUN_SCENE = """
gravity = [0.0, 0.0, -9.81]
[simulation]
duration = 0.2
time_step = 0.02
[[bodies]]
mesh = { box = { size = [1.0, 0.2, 0.2], cells = [6, 2, 2] } }
material = { model = "neo_hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }
[[pins]]
select = { plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }
[[obstacles]]
shape = { sphere = { center = [0.9, 0.1, -0.35], radius = 0.2 } }
stiffness = 1e4
"""


def test_the_viewer_plays_a_run_made_by_hooke_run(browser, site, tmp_path):
    scene = tmp_path / "sag.toml"
    scene.write_text(RUN_SCENE)
    run = tmp_path / "run"
    subprocess.run([ROOT / "target" / "release" / "hooke", "run", scene, "-o", run, "--quiet"], check=True)
    files = sorted(str(p) for p in run.iterdir() if p.suffix in (".pvd", ".vtu"))
    frames = len([f for f in files if pathlib.Path(f).name.startswith("frame_")])
    assert frames == 11
    assert len([f for f in files if pathlib.Path(f).name.startswith("obstacle_")]) == frames

    browser.get(f"{site}/index.html?scene=heterogeneous_cantilever.toml")
    wait_for(browser, "window.hooke.live && window.hooke.frames >= 1", 60, "the first frame")
    browser.find_element("id", "run-files").send_keys("\n".join(files))
    wait_for(browser, "window.hooke.run", 30, "the run to open")
    assert browser.execute_script("return window.hooke.live") is None, "the live scene stopped"
    assert browser.execute_script("return window.hooke.run.frames.length") == frames
    # The ball under the beam, from the run's obstacle files, at every frame (16 × 32 bands).
    triangles, centre, count = browser.execute_script(
        "const o = window.hooke.run.obstacles; const p = o.frames[0]; const n = p.length / 3;"
        "const c = [0, 1, 2].map((a) => p.filter((_, i) => i % 3 == a).reduce((s, x) => s + x, 0) / n);"
        "return [o.triangles.length / 3, c, o.frames.length]"
    )
    assert (triangles, count) == (960, frames)
    assert max(abs(a - b) for a, b in zip(centre, [0.9, 0.1, -0.35])) < 1e-2, centre
    assert "with obstacles" in browser.find_element("id", "status").text
    assert browser.find_element("id", "run-field").get_attribute("value") == "displacement"
    assert "(m)" in browser.find_element("id", "colour-name").text

    # Scrub to the last frame: the tip hangs lower than at the start, by what the file says.
    slider = browser.find_element("id", "run-frame")
    browser.execute_script(
        "arguments[0].value = arguments[0].max; arguments[0].dispatchEvent(new Event('input'))", slider
    )
    index, hud = browser.execute_script("return [window.hooke.run.index, document.getElementById('hud').textContent]")
    assert index == frames - 1
    assert f"frame {frames} of {frames}" in hud and "t = 0.2 s" in hud, hud
    low = browser.execute_script(
        "const f = window.hooke.run.frames; const z = (k) => Math.min(...f[k].points.filter((_, i) => i % 3 == 2)); return [z(0), z(f.length - 1)]"
    )
    assert low[1] < low[0] - 1e-3, f"the lowest point went from {low[0]} to {low[1]}"
    time.sleep(0.3)
    stats = browser.execute_script("return window.hooke.pixelStats()")
    assert stats["deviation"] > 5, f"the canvas looks blank: {stats}"
    browser.save_screenshot(str(ARTIFACTS / "viewer.png"))

    # Colour by a cell field, play and pause.
    browser.execute_script(
        "const s = document.getElementById('run-field'); s.value = 'strain_energy_density'; s.dispatchEvent(new Event('change'))"
    )
    assert "J/m³" in browser.find_element("id", "colour-name").text
    browser.find_element("id", "run-play").click()
    time.sleep(0.5)
    browser.find_element("id", "run-play").click()
    assert browser.execute_script("return window.hooke.run.playing") is False
    assert console_errors(browser) == []

    # A folder without its collection is refused in words.
    browser.get(f"{site}/index.html?scene=heterogeneous_cantilever.toml")
    wait_for(browser, "window.hooke.live", 60, "the page")
    browser.find_element("id", "run-files").send_keys(str(run / "frame_0001.vtu"))
    wait_for(browser, "window.hooke.error", 10, "the refusal", error_expected=True)
    assert "frame.pvd" in browser.execute_script("return window.hooke.error")

    # The obstacles' collection without its files is refused, naming it.
    browser.get(f"{site}/index.html?scene=heterogeneous_cantilever.toml")
    wait_for(browser, "window.hooke.live", 60, "the page")
    browser.find_element("id", "run-files").send_keys("\n".join(f for f in files if "obstacle_" not in f))
    wait_for(browser, "window.hooke.error", 30, "the refusal", error_expected=True)
    assert "obstacle.pvd names 11 file(s) not among the files" in browser.execute_script("return window.hooke.error")


def test_the_page_steps_to_the_native_positions(browser, site):
    """The same check as the Node one, in the browser: the page's module, given the site's
    precomputed subspace, against the native library given the same file."""
    browser.get(f"{site}/index.html?scene=heterogeneous_cantilever.toml")
    wait_for(browser, "window.hooke.live", 60, "the page")
    browser.set_script_timeout(120)
    positions = browser.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        (async () => {
          const module = await import('./pkg/hooke_web.js');
          const text = await (await fetch('scenes/wound_pendulum.toml')).text();
          const subspace = new Uint8Array(await (await fetch('scenes/wound_pendulum.subspace.json')).arrayBuffer());
          const live = new module.Live(text, 'wound_pendulum.toml', subspace);
          for (let i = 0; i < 90; i++) live.step();
          done(Array.from(live.positions_f64()));
        })().catch((error) => done(String(error)));
        """
    )
    assert isinstance(positions, list), positions
    native = json.loads(
        subprocess.run(
            [REFERENCE_RUN, ROOT / "web" / "scenes" / "wound_pendulum.toml", "90", SITE / "scenes" / "wound_pendulum.subspace.json"],
            check=True,
            capture_output=True,
            text=True,
            env={**os.environ, "RAYON_NUM_THREADS": "1"},
        ).stdout
    )["positions"]
    size = max(abs(x) for x in native)
    difference = max(abs(a - b) for a, b in zip(positions, native))
    assert len(positions) == len(native) and difference <= 1e-9 * size, f"largest difference {difference:.3e} m"
