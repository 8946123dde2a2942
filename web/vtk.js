// Reading a run's frames in the page: the ParaView collection (frame.pvd) and its
// unstructured grids (.vtu, XML). Hooke writes inline binary data (base64, a UInt64 byte count
// before each array); ASCII arrays are read too. Compressed or appended data, which other tools
// may write, is refused with a message that says so.

const TYPES = {
  Float64: Float64Array, Float32: Float32Array,
  Int64: BigInt64Array, UInt64: BigUint64Array,
  Int32: Int32Array, UInt32: Uint32Array,
  Int16: Int16Array, UInt16: Uint16Array,
  Int8: Int8Array, UInt8: Uint8Array,
};

/** The frames of a collection: [{ time, file }] in time order. */
export function parsePvd(text, name = "frame.pvd") {
  const xml = new DOMParser().parseFromString(text, "application/xml");
  if (xml.querySelector("parsererror")) throw new Error(`${name} is not XML`);
  const frames = [...xml.querySelectorAll("Collection > DataSet")].map((d) => ({
    time: Number(d.getAttribute("timestep")),
    file: d.getAttribute("file"),
  }));
  if (frames.length === 0) throw new Error(`${name} lists no frames (no <DataSet> in its <Collection>)`);
  if (frames.some((f) => !f.file || !Number.isFinite(f.time))) throw new Error(`${name}: a <DataSet> has no file or no timestep`);
  return frames.sort((a, b) => a.time - b.time);
}

function decodeBase64(text) {
  const binary = atob(text.replace(/\s+/g, ""));
  const bytes = new Uint8Array(binary.length);
  for (let k = 0; k < binary.length; k++) bytes[k] = binary.charCodeAt(k);
  return bytes;
}

// One <DataArray> as numbers (Float64Array, or plain numbers for integer types).
function readArray(element, header, name) {
  const type = element.getAttribute("type");
  const format = element.getAttribute("format") || "ascii";
  const label = `${name}: ${element.getAttribute("Name") || "an array"}`;
  const Kind = TYPES[type];
  if (!Kind) throw new Error(`${label} has the type ${type}, which the viewer does not read`);
  if (format === "ascii") {
    return Float64Array.from(element.textContent.trim().split(/\s+/).filter(Boolean), Number);
  }
  if (format !== "binary") throw new Error(`${label} is ${format} data; the viewer reads inline binary or ascii (as Hooke writes them)`);
  const bytes = decodeBase64(element.textContent);
  const headerBytes = header === "UInt64" ? 8 : 4;
  const view = new DataView(bytes.buffer);
  const count = headerBytes === 8 ? Number(view.getBigUint64(0, true)) : view.getUint32(0, true);
  if (count + headerBytes > bytes.length) throw new Error(`${label} is cut short (${bytes.length - headerBytes} of ${count} bytes)`);
  const data = new Kind(bytes.buffer.slice(headerBytes, headerBytes + count));
  return Float64Array.from(data, Number);
}

function fields(container, header, name) {
  const out = {};
  if (!container) return out;
  for (const element of container.querySelectorAll(":scope > DataArray")) {
    out[element.getAttribute("Name")] = {
      components: Number(element.getAttribute("NumberOfComponents") || 1),
      values: readArray(element, header, name),
    };
  }
  return out;
}

/** One frame: points (x y z each), cells (connectivity, offsets, types) and point and cell fields. */
export function parseVtu(text, name = "frame.vtu") {
  const xml = new DOMParser().parseFromString(text, "application/xml");
  if (xml.querySelector("parsererror")) throw new Error(`${name} is not XML`);
  const root = xml.documentElement;
  if (root.getAttribute("type") !== "UnstructuredGrid") throw new Error(`${name} is not an unstructured grid (.vtu)`);
  if (root.getAttribute("compressor")) throw new Error(`${name} is compressed; the viewer reads uncompressed files (as Hooke writes them)`);
  if ((root.getAttribute("byte_order") || "LittleEndian") !== "LittleEndian") throw new Error(`${name} is big-endian`);
  const header = root.getAttribute("header_type") || "UInt32";
  const piece = xml.querySelector("Piece");
  if (!piece) throw new Error(`${name} has no <Piece>`);
  const points = readArray(piece.querySelector("Points > DataArray"), header, name);
  const cells = fields(piece.querySelector("Cells"), header, name);
  for (const key of ["connectivity", "offsets", "types"]) {
    if (!cells[key]) throw new Error(`${name} has no cell ${key}`);
  }
  return {
    points,
    connectivity: cells.connectivity.values,
    offsets: cells.offsets.values,
    types: cells.types.values,
    pointData: fields(piece.querySelector("PointData"), header, name),
    cellData: fields(piece.querySelector("CellData"), header, name),
  };
}

const TETRA = 10, TRIANGLE = 5;

/** The triangles to draw (each with the cell it belongs to): a tet mesh's boundary, every triangle. */
export function surfaceOf(frame) {
  const { connectivity, offsets, types } = frame;
  const faces = new Map();
  const triangles = [], owners = [];
  for (let c = 0; c < types.length; c++) {
    const end = offsets[c], start = c === 0 ? 0 : offsets[c - 1];
    const v = Array.from(connectivity.subarray(start, end));
    if (types[c] === TRIANGLE) {
      triangles.push(v[0], v[1], v[2]);
      owners.push(c);
    } else if (types[c] === TETRA) {
      // Outward faces of a positively oriented tetrahedron.
      for (const [a, b, d] of [[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]]) {
        const face = [v[a], v[b], v[d]];
        const key = [...face].sort((x, y) => x - y).join(",");
        if (faces.has(key)) faces.delete(key);
        else faces.set(key, { face, cell: c });
      }
    }
  }
  for (const { face, cell } of faces.values()) {
    triangles.push(...face);
    owners.push(cell);
  }
  return { triangles: Uint32Array.from(triangles), owners };
}

const UNITS = {
  displacement: "m", continuous_displacement: "m", velocity: "m/s", contact_force: "N",
  strain_energy_density: "J/m³", material: "", label: "",
};
/** The unit of a field Hooke writes ("" when it has none or is not known). */
export const unitOf = (name) => UNITS[name] ?? "";

/** Per-vertex values of a field (a vector's length), point fields directly, cell fields averaged
 * over the surface triangles around each vertex. */
export function vertexValues(frame, field, surface) {
  const vertices = frame.points.length / 3;
  const magnitude = (data, k) => {
    if (data.components === 1) return data.values[k];
    let sum = 0;
    for (let a = 0; a < data.components; a++) sum += data.values[data.components * k + a] ** 2;
    return Math.sqrt(sum);
  };
  const out = new Float64Array(vertices);
  if (frame.pointData[field]) {
    for (let v = 0; v < vertices; v++) out[v] = magnitude(frame.pointData[field], v);
    return out;
  }
  const data = frame.cellData[field];
  const count = new Float64Array(vertices);
  for (let t = 0; t < surface.owners.length; t++) {
    const value = magnitude(data, surface.owners[t]);
    for (let k = 0; k < 3; k++) {
      out[surface.triangles[3 * t + k]] += value;
      count[surface.triangles[3 * t + k]] += 1;
    }
  }
  for (let v = 0; v < vertices; v++) out[v] = count[v] ? out[v] / count[v] : 0;
  return out;
}

// A perceptually ordered colour map (viridis, five stops, linear between them).
const STOPS = [[0.267, 0.005, 0.329], [0.229, 0.322, 0.546], [0.128, 0.567, 0.551], [0.369, 0.789, 0.383], [0.993, 0.906, 0.144]];
export function colourOf(s) {
  const x = Math.min(1, Math.max(0, s)) * (STOPS.length - 1);
  const k = Math.min(STOPS.length - 2, Math.floor(x)), f = x - k;
  return STOPS[k].map((c, a) => c + f * (STOPS[k + 1][a] - c));
}
