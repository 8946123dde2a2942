// The live page: builds a bundled scene in Hooke's WebAssembly module, steps it once a frame,
// draws its surface with WebGL, and lets the pointer grab the body (a spring from the grabbed
// vertex to the pointer). `window.hooke` exposes the state for the browser tests.
import init, { Live } from "./pkg/hooke_web.js";
import { parsePvd, parseVtu, surfaceOf, vertexValues, unitOf, colourOf } from "./vtk.js";

const canvas = document.getElementById("view");
const status = document.getElementById("status");
const hud = document.getElementById("hud");
const picker = document.getElementById("example");

const page = { live: null, frames: 0, paused: false, stepMs: NaN, iterationMs: NaN, energy: NaN, error: null, scene: null, run: null };
window.hooke = page;

function fail(message) {
  page.error = message;
  status.textContent = message;
  status.classList.add("error");
}

const gl = canvas.getContext("webgl", { antialias: true, preserveDrawingBuffer: true });
if (!gl) fail("This browser has no WebGL: the page cannot draw the body.");

// ---- small linear algebra (column-major 4 × 4) ----
const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const add = (a, b) => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
const scale = (a, s) => [a[0] * s, a[1] * s, a[2] * s];
const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
const normalize = (a) => scale(a, 1 / (Math.hypot(a[0], a[1], a[2]) || 1));

function lookAt(eye, target, up) {
  const f = normalize(sub(target, eye)), s = normalize(cross(f, up)), u = cross(s, f);
  return [s[0], u[0], -f[0], 0, s[1], u[1], -f[1], 0, s[2], u[2], -f[2], 0, -dot(s, eye), -dot(u, eye), dot(f, eye), 1];
}
function perspective(fovy, aspect, near, far) {
  const f = 1 / Math.tan(fovy / 2), nf = 1 / (near - far);
  return [f / aspect, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) * nf, -1, 0, 0, 2 * far * near * nf, 0];
}
function multiply(a, b) {
  const out = new Array(16).fill(0);
  for (let c = 0; c < 4; c++) for (let r = 0; r < 4; r++) for (let k = 0; k < 4; k++) out[4 * c + r] += a[4 * k + r] * b[4 * c + k];
  return out;
}

// ---- camera: orbiting the body's centre, z up ----
const camera = { target: [0, 0, 0.5], distance: 3, azimuth: -0.9, elevation: 0.35, fovy: 0.8 };
function eye() {
  const c = Math.cos(camera.elevation);
  return add(camera.target, scale([c * Math.cos(camera.azimuth), c * Math.sin(camera.azimuth), Math.sin(camera.elevation)], camera.distance));
}
function viewProjection() {
  const aspect = canvas.width / Math.max(1, canvas.height);
  return multiply(perspective(camera.fovy, aspect, camera.distance / 100, camera.distance * 20), lookAt(eye(), camera.target, [0, 0, 1]));
}
// The ray through a pixel: origin and unit direction.
function ray(clientX, clientY) {
  const rect = canvas.getBoundingClientRect();
  const x = (2 * (clientX - rect.left)) / rect.width - 1, y = 1 - (2 * (clientY - rect.top)) / rect.height;
  const e = eye(), f = normalize(sub(camera.target, e)), s = normalize(cross(f, [0, 0, 1])), u = cross(s, f);
  const t = Math.tan(camera.fovy / 2), aspect = rect.width / Math.max(1, rect.height);
  return { origin: e, direction: normalize(add(f, add(scale(s, x * t * aspect), scale(u, y * t)))) };
}

// ---- drawing ----
function shader(type, source) {
  const s = gl.createShader(type);
  gl.shaderSource(s, source);
  gl.compileShader(s);
  if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
  return s;
}
let program, buffers;
function setUpDrawing() {
  program = gl.createProgram();
  gl.attachShader(program, shader(gl.VERTEX_SHADER, `
    attribute vec3 position; attribute vec3 normal; attribute vec3 colour;
    uniform mat4 viewProjection; varying vec3 n; varying vec3 c;
    void main() { n = normal; c = colour; gl_Position = viewProjection * vec4(position, 1.0); }`));
  gl.attachShader(program, shader(gl.FRAGMENT_SHADER, `
    precision mediump float; varying vec3 n; varying vec3 c; uniform vec3 light;
    void main() { float d = abs(dot(normalize(n), light)); gl_FragColor = vec4(c * (0.25 + 0.75 * d), 1.0); }`));
  gl.linkProgram(program);
  buffers = { position: gl.createBuffer(), normal: gl.createBuffer(), colour: gl.createBuffer(), index: gl.createBuffer() };
  if (!gl.getExtension("OES_element_index_uint")) throw new Error("this WebGL lacks 32-bit indices (OES_element_index_uint)");
  gl.enable(gl.DEPTH_TEST);
}

// Per scene: the surface, the floor below the body (or a run's obstacles in its place), and the
// arrays drawn each frame. `obstacles`: { triangles, points } of a run's first obstacle frame.
let mesh = null;
function prepareMesh(surface, positions, obstacles = null) {
  const vertices = positions.length / 3;
  let low = [Infinity, Infinity, Infinity], high = [-Infinity, -Infinity, -Infinity];
  for (let v = 0; v < vertices; v++) for (let a = 0; a < 3; a++) {
    low[a] = Math.min(low[a], positions[3 * v + a]);
    high[a] = Math.max(high[a], positions[3 * v + a]);
  }
  const size = Math.hypot(high[0] - low[0], high[1] - low[1], high[2] - low[2]);
  camera.target = scale(add(low, high), 0.5);
  camera.distance = 1.8 * size;
  // The floor: a square four body sizes wide, a quarter of the body's size below its lowest point
  // (room for it to sag or swing). A run with obstacles shows them instead: they are its ground.
  const w = 2 * size, z = low[2] - 0.25 * size, cx = camera.target[0], cy = camera.target[1];
  const floor = obstacles ? [] : [cx - w, cy - w, z, cx + w, cy - w, z, cx + w, cy + w, z, cx - w, cy + w, z];
  const floorVertices = floor.length / 3, obstacleVertices = obstacles ? obstacles.points.length / 3 : 0;
  const total = vertices + floorVertices + obstacleVertices;
  const colours = new Float32Array(3 * total);
  for (let v = 0; v < vertices; v++) colours.set([0.85, 0.55, 0.35], 3 * v);
  for (let k = 0; k < floorVertices; k++) colours.set([0.42, 0.46, 0.5], 3 * (vertices + k));
  for (let k = 0; k < obstacleVertices; k++) colours.set([0.6, 0.58, 0.55], 3 * (vertices + k));
  // Shaded by their own normals: the body's surface and the obstacles' triangles.
  const obstacleTriangles = obstacles ? obstacles.triangles.map((v) => v + vertices) : new Uint32Array(0);
  const shaded = new Uint32Array(surface.length + obstacleTriangles.length);
  shaded.set(surface);
  shaded.set(obstacleTriangles, surface.length);
  const indices = new Uint32Array(shaded.length + (floorVertices ? 6 : 0));
  indices.set(shaded);
  if (floorVertices) indices.set([0, 1, 2, 0, 2, 3].map((k) => vertices + k), shaded.length);
  mesh = {
    surface, shaded, vertices, floor, floorVertices, obstacleVertices, size,
    positions: new Float32Array(3 * total), normals: new Float32Array(3 * total), colours, indices, count: indices.length,
  };
  gl.bindBuffer(gl.ARRAY_BUFFER, buffers.colour);
  gl.bufferData(gl.ARRAY_BUFFER, colours, gl.STATIC_DRAW);
  gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, buffers.index);
  gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, indices, gl.STATIC_DRAW);
}

function draw() {
  const dpr = window.devicePixelRatio || 1;
  const width = Math.round(canvas.clientWidth * dpr), height = Math.round(canvas.clientHeight * dpr);
  if (canvas.width !== width || canvas.height !== height) { canvas.width = width; canvas.height = height; }
  gl.viewport(0, 0, canvas.width, canvas.height);
  gl.clearColor(0.13, 0.14, 0.16, 1);
  gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
  if (!mesh || (!page.live && !page.run)) return;
  const { positions, normals, shaded, vertices, floorVertices } = mesh;
  positions.set(page.run ? page.run.frames[page.run.index].points : page.live.positions());
  positions.set(mesh.floor, 3 * vertices);
  if (page.run && page.run.obstacles) positions.set(page.run.obstacles.frames[page.run.index], 3 * vertices);
  if (page.run) colourRun();
  normals.fill(0);
  for (let t = 0; t < shaded.length; t += 3) {
    const [a, b, c] = [shaded[t], shaded[t + 1], shaded[t + 2]];
    const pa = [positions[3 * a], positions[3 * a + 1], positions[3 * a + 2]];
    const n = cross(sub([positions[3 * b], positions[3 * b + 1], positions[3 * b + 2]], pa), sub([positions[3 * c], positions[3 * c + 1], positions[3 * c + 2]], pa));
    for (const v of [a, b, c]) for (let k = 0; k < 3; k++) normals[3 * v + k] += n[k];
  }
  for (let k = 0; k < floorVertices; k++) normals.set([0, 0, 1], 3 * (vertices + k));
  gl.useProgram(program);
  for (const [name, data] of [["position", positions], ["normal", normals], ["colour", page.run ? mesh.colours : null]]) {
    gl.bindBuffer(gl.ARRAY_BUFFER, buffers[name]);
    if (data) gl.bufferData(gl.ARRAY_BUFFER, data, gl.DYNAMIC_DRAW);
    const at = gl.getAttribLocation(program, name);
    gl.enableVertexAttribArray(at);
    gl.vertexAttribPointer(at, 3, gl.FLOAT, false, 0, 0);
  }
  gl.uniformMatrix4fv(gl.getUniformLocation(program, "viewProjection"), false, viewProjection());
  gl.uniform3fv(gl.getUniformLocation(program, "light"), normalize(add(sub(eye(), camera.target), [0, 0, camera.distance])));
  gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, buffers.index);
  gl.drawElements(gl.TRIANGLES, mesh.count, gl.UNSIGNED_INT, 0);
}

// ---- the pointer: grab the body or turn the view ----
let drag = null;
canvas.addEventListener("pointerdown", (event) => {
  if (!mesh) return;
  canvas.setPointerCapture(event.pointerId);
  const { origin, direction } = ray(event.clientX, event.clientY);
  const vertex = page.live ? page.live.pick(...origin, ...direction, 0.03 * mesh.size) : -1;
  if (vertex >= 0) {
    const p = page.live.positions().slice(3 * vertex, 3 * vertex + 3);
    const point = [p[0], p[1], p[2]];
    // The pointer moves in the plane through the grabbed point facing the camera.
    drag = { kind: "grab", vertex, point, normal: normalize(sub(eye(), point)) };
    page.live.grab(vertex, ...point);
  } else {
    drag = { kind: "orbit", x: event.clientX, y: event.clientY };
  }
});
canvas.addEventListener("pointermove", (event) => {
  if (!drag) return;
  if (drag.kind === "orbit") {
    camera.azimuth -= (event.clientX - drag.x) * 0.01;
    camera.elevation = Math.max(-1.5, Math.min(1.5, camera.elevation + (event.clientY - drag.y) * 0.01));
    drag.x = event.clientX;
    drag.y = event.clientY;
    return;
  }
  const { origin, direction } = ray(event.clientX, event.clientY);
  const along = dot(sub(drag.point, origin), drag.normal) / dot(direction, drag.normal);
  if (Number.isFinite(along) && along > 0) {
    drag.target = add(origin, scale(direction, along));
    page.live.dragTo(...drag.target);
  }
});
const letGo = () => {
  if (drag && drag.kind === "grab" && page.live) page.live.release();
  drag = null;
};
canvas.addEventListener("pointerup", letGo);
canvas.addEventListener("pointercancel", letGo);
canvas.addEventListener("wheel", (event) => {
  event.preventDefault();
  camera.distance *= Math.exp(event.deltaY * 0.001);
}, { passive: false });
window.addEventListener("keydown", (event) => {
  if (event.key === " " && page.run) { playRun(!page.run.playing); event.preventDefault(); return; }
  if (event.key === " ") { page.paused = !page.paused; event.preventDefault(); }
  if (event.key === "r" && page.live) {
    page.live.reset();
    page.frames = 0;
    page.error = null;
    status.classList.remove("error");
    status.textContent = `${page.scene}: started again`;
  }
});

// ---- the run viewer: a run's frame.pvd and .vtu files, opened or dropped ----
const runControls = document.getElementById("run-controls");
const slider = document.getElementById("run-frame");
const fieldPicker = document.getElementById("run-field");
const playButton = document.getElementById("run-play");
const colourBar = document.getElementById("colour-bar");

// The obstacles beside a run's frames (obstacle.pvd and its .vtu files, written at the same
// times), or null when the files have none.
async function openObstacles(files, frameCount) {
  if (!files.has("obstacle.pvd")) return null;
  const listed = parsePvd(await files.get("obstacle.pvd").text(), "obstacle.pvd");
  if (listed.length !== frameCount) throw new Error(`obstacle.pvd lists ${listed.length} frames and the body ${frameCount}: they are not of one run`);
  const missing = listed.filter((f) => !files.has(f.file.split("/").pop()));
  if (missing.length) throw new Error(`obstacle.pvd names ${missing.length} file(s) not among the files, first ${missing[0].file}`);
  let triangles = null;
  const frames = [];
  for (const entry of listed) {
    const name = entry.file.split("/").pop();
    const frame = parseVtu(await files.get(name).text(), name);
    triangles ??= surfaceOf(frame).triangles;
    if (frames.length && frame.points.length !== frames[0].length) throw new Error(`${name} has ${frame.points.length / 3} points, the first obstacle frame ${frames[0].length / 3}`);
    frames.push(frame.points);
  }
  return { triangles, frames };
}

async function openRun(fileList) {
  const files = new Map([...fileList].map((f) => [f.name, f]));
  const collection = files.has("frame.pvd") ? "frame.pvd" : [...files.keys()].find((n) => n.endsWith(".pvd") && n !== "obstacle.pvd");
  try {
    if (!collection) throw new Error("pick a run's folder or its files: frame.pvd and its .vtu frames (none is a .pvd)");
    const listed = parsePvd(await files.get(collection).text(), collection);
    const missing = listed.filter((f) => !files.has(f.file.split("/").pop()));
    if (missing.length) throw new Error(`${collection} names ${missing.length} frame(s) not among the files, first ${missing[0].file}`);
    status.classList.remove("error");
    const frames = [];
    for (const [k, entry] of listed.entries()) {
      status.textContent = `reading frame ${k + 1} of ${listed.length}…`;
      const name = entry.file.split("/").pop();
      const frame = parseVtu(await files.get(name).text(), name);
      frame.time = entry.time;
      frames.push(frame);
    }
    const surface = surfaceOf(frames[0]);
    if (surface.triangles.length === 0) throw new Error(`${listed[0].file} has no triangles or tetrahedra to draw`);
    const obstacles = await openObstacles(files, frames.length);
    page.live = null;
    page.error = null;
    page.run = { frames, surface, obstacles, index: 0, playing: false, field: null, range: [0, 1], name: collection };
    prepareMesh(surface.triangles, frames[0].points, obstacles && { triangles: obstacles.triangles, points: obstacles.frames[0] });
    fieldPicker.replaceChildren(...Object.keys({ ...frames[0].pointData, ...frames[0].cellData }).map((n) => new Option(n, n)));
    fieldPicker.value = frames[0].pointData.displacement ? "displacement" : fieldPicker.options[0]?.value;
    slider.max = frames.length - 1;
    runControls.hidden = false;
    chooseField(fieldPicker.value);
    showRunFrame();
    status.textContent = `${collection}: ${frames.length} frames, t = ${frames[0].time} … ${frames[frames.length - 1].time} s` +
      (obstacles ? `, with obstacles (${obstacles.triangles.length / 3} triangles)` : "");
  } catch (error) {
    fail(`The run could not be opened: ${error.message ?? error}`);
  }
}

// The colour range of a field over every frame, so colours mean the same all along the run.
function chooseField(field) {
  const run = page.run;
  run.field = field;
  let low = Infinity, high = -Infinity;
  for (const frame of run.frames) {
    for (const value of vertexValues(frame, field, run.surface)) {
      low = Math.min(low, value);
      high = Math.max(high, value);
    }
  }
  run.range = [low, high > low ? high : low + 1];
  const unit = unitOf(field);
  const stops = [0, 0.25, 0.5, 0.75, 1].map((s) => `rgb(${colourOf(s).map((c) => Math.round(255 * c)).join(",")})`);
  colourBar.style.background = `linear-gradient(to right, ${stops.join(",")})`;
  document.getElementById("colour-low").textContent = `${low.toPrecision(3)}`;
  document.getElementById("colour-high").textContent = `${high.toPrecision(3)} ${unit}`;
  document.getElementById("colour-name").textContent = `${field}${unit ? ` (${unit})` : ""}${run.frames[0].pointData[field]?.components > 1 || run.frames[0].cellData[field]?.components > 1 ? ", length" : ""}`;
}

function colourRun() {
  const run = page.run, frame = run.frames[run.index];
  if (!run.field) return;
  const values = vertexValues(frame, run.field, run.surface);
  const [low, high] = run.range;
  for (let v = 0; v < values.length; v++) mesh.colours.set(colourOf((values[v] - low) / (high - low)), 3 * v);
}

function showRunFrame() {
  slider.value = page.run.index;
  hud.textContent = `frame ${page.run.index + 1} of ${page.run.frames.length}\nt = ${Number(page.run.frames[page.run.index].time.toPrecision(6))} s`;
}

function playRun(playing) {
  page.run.playing = playing;
  playButton.textContent = playing ? "pause" : "play";
}

function closeRun() {
  page.run = null;
  runControls.hidden = true;
}

document.getElementById("run-files").addEventListener("change", (event) => openRun(event.target.files));
slider.addEventListener("input", () => { page.run.index = Number(slider.value); showRunFrame(); });
fieldPicker.addEventListener("change", () => chooseField(fieldPicker.value));
playButton.addEventListener("click", () => playRun(!page.run.playing));
canvas.addEventListener("dragover", (event) => event.preventDefault());
canvas.addEventListener("drop", (event) => { event.preventDefault(); openRun(event.dataTransfer.files); });

// ---- for the browser tests: what a person would see and where to put the pointer ----
// Mean and standard deviation of the canvas's grey levels (a blank canvas has none).
page.pixelStats = () => {
  const pixels = new Uint8Array(4 * canvas.width * canvas.height);
  gl.readPixels(0, 0, canvas.width, canvas.height, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
  let sum = 0, squares = 0;
  const n = canvas.width * canvas.height;
  for (let k = 0; k < n; k++) {
    const grey = (pixels[4 * k] + pixels[4 * k + 1] + pixels[4 * k + 2]) / 3;
    sum += grey;
    squares += grey * grey;
  }
  const mean = sum / n;
  return { mean, deviation: Math.sqrt(Math.max(0, squares / n - mean * mean)) };
};
page.vertex = (v) => Array.from(page.live.positions_f64().slice(3 * v, 3 * v + 3));
// The surface vertex nearest the eye (never hidden) and its place on screen (CSS pixels).
page.nearestVertexOnScreen = () => {
  const e = eye(), p = page.live.positions_f64();
  let best = -1, distance = Infinity;
  for (const v of mesh.surface) {
    const d = Math.hypot(p[3 * v] - e[0], p[3 * v + 1] - e[1], p[3 * v + 2] - e[2]);
    if (d < distance) { distance = d; best = v; }
  }
  const m = viewProjection(), q = [p[3 * best], p[3 * best + 1], p[3 * best + 2], 1];
  const clip = [0, 1, 3].map((r) => m[r] * q[0] + m[4 + r] * q[1] + m[8 + r] * q[2] + m[12 + r] * q[3]);
  const rect = canvas.getBoundingClientRect();
  return { vertex: best, x: rect.left + ((clip[0] / clip[2] + 1) / 2) * rect.width, y: rect.top + ((1 - clip[1] / clip[2]) / 2) * rect.height };
};
page.grabbed = () => (drag && drag.kind === "grab" ? { vertex: drag.vertex, target: drag.target ?? drag.point } : null);

// ---- the loop: one step a frame ----
function frame() {
  if (page.live && !page.paused && !page.error) {
    try {
      const started = performance.now();
      page.live.step();
      page.stepMs = performance.now() - started;
      // The solver's iterations alone, mean since the start (performance.now() is coarse; a mean is not).
      page.iterationMs = page.live.iteration_ms();
      page.energy = page.live.energy();
      page.frames += 1;
      // From the navigation's start (performance.now()'s origin) to the first simulated frame.
      if (page.firstFrameMs === undefined) page.firstFrameMs = performance.now();
    } catch (error) {
      fail(`The simulation stopped: ${error.message ?? error}. Press r to start again.`);
    }
  }
  if (page.run && page.run.playing) {
    page.run.index = (page.run.index + 1) % page.run.frames.length;
    showRunFrame();
  }
  draw();
  if (page.live) {
    hud.textContent = `t = ${page.live.time().toFixed(2)} s${page.paused ? " (paused)" : ""}\n` +
      `step ${page.stepMs.toFixed(2)} ms (iteration ${page.iterationMs.toFixed(2)} ms)\nenergy ${page.energy.toExponential(3)} J`;
  }
  requestAnimationFrame(frame);
}

async function load(entry) {
  page.live = null;
  page.error = null;
  status.classList.remove("error");
  status.textContent = `building ${entry.scene}…`;
  await new Promise((resolve) => setTimeout(resolve, 20)); // let the message show first
  try {
    const response = await fetch(`scenes/${entry.scene}`);
    if (!response.ok) throw new Error(`the scene file was not found (HTTP ${response.status})`);
    const text = await response.text();
    // The subspace `hooke export-web` precomputed, when the site has it (else the page computes it).
    const precomputed = await fetch(`scenes/${entry.scene.replace(/\.toml$/, ".subspace.json")}`);
    const subspace = precomputed.ok ? new Uint8Array(await precomputed.arrayBuffer()) : new Uint8Array();
    const started = performance.now();
    const live = new Live(text, entry.scene, subspace);
    closeRun();
    prepareMesh(live.surface(), live.positions());
    page.live = live;
    page.scene = entry.scene;
    page.frames = 0;
    page.buildSeconds = (performance.now() - started) / 1000;
    status.textContent = `${entry.title} (built in ${page.buildSeconds.toFixed(1)} s${subspace.length ? ", subspace precomputed" : ""})`;
  } catch (error) {
    fail(`${entry.scene} could not be built: ${error.message ?? error}`);
  }
}

async function main() {
  if (!gl) return;
  if (typeof WebAssembly !== "object") return fail("This browser cannot run WebAssembly, which the simulation needs.");
  await init();
  setUpDrawing();
  const examples = await (await fetch("examples.json")).json();
  for (const [k, entry] of examples.entries()) picker.add(new Option(entry.title, k));
  const wanted = new URLSearchParams(location.search).get("scene");
  const first = Math.max(0, examples.findIndex((e) => e.scene === wanted));
  picker.value = first;
  picker.addEventListener("change", () => load(examples[picker.value]));
  requestAnimationFrame(frame);
  await load(examples[first]);
}
main().catch((error) => fail(`The page could not start: ${error.message ?? error}`));
