//! Isosurface stuffing (Labelle & Shewchuk 2007), uniform version: a
//! tetrahedral mesh of the solid {g > 0} with dihedral angles guaranteed to lie
//! between 10.7° and 164.8° (for the α below), from a body-centred cubic
//! lattice whose vertices near the surface are snapped onto it ("warping"), and
//! whose tetrahedra crossing it are cut by a fixed set of stencils.
//!
//! Lattice: cube corners and cube centres, in doubled integer coordinates
//! (corners all even, centres all odd; world = origin + (h/2)·X). Black edges
//! (length h) join neighbours of the same kind along an axis; red edges
//! (length √3h/2) join a centre to its cube's corners. Every lattice tet has
//! its two black edges at positions {0,1} (centre–centre) and {2,3}
//! (corner–corner) of the "parent order" in which it is generated, positively
//! oriented.
//!
//! Details the paper leaves to the implementer, and our choices:
//! - Cut points are roots of the true function along the edge (Illinois
//!   regula falsi), so boundary vertices lie on the surface, not on a chord.
//! - A vertex violated by several cut points snaps to the nearest one.
//! - Tets whose four vertices all lie on the surface are dropped (the rule the
//!   α pair below is quoted with).
//! - Each output tet's volume is checked; the report counts any that needed a
//!   flip or were dropped as degenerate (none should, by the angle bound).

use super::{Shape, TetMesh};
use crate::error::{HookeError, Result};
use nalgebra::Vector3;
use rayon::prelude::*;
use std::collections::HashMap;

/// Warping thresholds (fractions of the edge length) for black and red edges.
const ALPHA_LONG: f64 = 0.24999;
const ALPHA_SHORT: f64 = 0.41189;

/// Refuse lattices beyond this many vertices (about 60 M tets of output).
const MAX_LATTICE_VERTICES: usize = 40_000_000;

/// What the mesher did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct StuffingReport {
    /// Cubes of the body-centred cubic lattice along x, y and z.
    pub lattice_cells: [usize; 3],
    /// Lattice vertices: cube corners and cube centres.
    pub lattice_vertices: usize,
    /// Points where a lattice edge crosses the surface (before warping removes some).
    pub cut_points: usize,
    /// Lattice vertices snapped onto a nearby cut point (warped onto the surface).
    pub warped_vertices: usize,
    /// Output tets whose stencil orientation had to be flipped (should be 0).
    pub flipped: usize,
    /// Output tets dropped as degenerate (should be 0).
    pub dropped: usize,
    /// Surface files of the shape that are not closed, and their open edges.
    pub open_surfaces: Vec<(String, usize)>,
}

impl StuffingReport {
    /// What the user should know about the input: open surfaces.
    pub fn notes(&self) -> Vec<String> {
        self.open_surfaces
            .iter()
            .map(|(file, open)| {
                format!(
                    "{file}: the surface is open ({open} edges border one triangle only); its inside \
                     is decided by winding number, so check the mesh near the holes"
                )
            })
            .collect()
    }
}

struct Lattice {
    origin: Vector3<f64>,
    spacing: f64,
    cells: [usize; 3],
    corner_count: usize,
}

impl Lattice {
    fn vertex_count(&self) -> usize {
        self.corner_count + self.cells.iter().product::<usize>()
    }

    /// The vertex at doubled coordinates X, if it is in the lattice.
    fn id(&self, x: [i64; 3]) -> Option<usize> {
        let parity = x[0].rem_euclid(2);
        if x.iter().any(|c| c.rem_euclid(2) != parity) {
            return None;
        }
        let [nx, ny, nz] = self.cells.map(|c| c as i64);
        if parity == 0 {
            let [i, j, k] = x.map(|c| c / 2);
            if i < 0 || j < 0 || k < 0 || i > nx || j > ny || k > nz {
                return None;
            }
            Some((i + (nx + 1) * (j + (ny + 1) * k)) as usize)
        } else {
            let [i, j, k] = x.map(|c| (c - 1) / 2);
            if x.iter().any(|&c| c < 0) || i >= nx || j >= ny || k >= nz {
                return None;
            }
            Some(self.corner_count + (i + nx * (j + ny * k)) as usize)
        }
    }

    fn coordinates(&self, id: usize) -> [i64; 3] {
        let [nx, ny, _] = self.cells.map(|c| c as i64);
        if id < self.corner_count {
            let id = id as i64;
            let (i, rest) = (id % (nx + 1), id / (nx + 1));
            [2 * i, 2 * (rest % (ny + 1)), 2 * (rest / (ny + 1))]
        } else {
            let id = (id - self.corner_count) as i64;
            let (i, rest) = (id % nx, id / nx);
            [2 * i + 1, 2 * (rest % ny) + 1, 2 * (rest / ny) + 1]
        }
    }

    /// The lattice neighbours of a vertex, each with whether the edge is black.
    fn neighbours<'a>(
        &'a self,
        offsets: &'a [([i64; 3], bool); 14],
        id: usize,
    ) -> impl Iterator<Item = (usize, bool)> + 'a {
        let x = self.coordinates(id);
        offsets
            .iter()
            .filter_map(move |(d, black)| self.id([x[0] + d[0], x[1] + d[1], x[2] + d[2]]).map(|n| (n, *black)))
    }

    fn position(&self, x: [i64; 3]) -> Vector3<f64> {
        self.origin + Vector3::new(x[0] as f64, x[1] as f64, x[2] as f64) * (0.5 * self.spacing)
    }
}

/// The 14 lattice neighbours' offsets: 6 black, then 8 red.
fn neighbour_offsets() -> [([i64; 3], bool); 14] {
    let mut offsets = [([0; 3], false); 14];
    let mut n = 0;
    for axis in 0..3 {
        for sign in [-2, 2] {
            let mut d = [0; 3];
            d[axis] = sign;
            offsets[n] = (d, true);
            n += 1;
        }
    }
    for dx in [-1, 1] {
        for dy in [-1, 1] {
            for dz in [-1, 1] {
                offsets[n] = ([dx, dy, dz], false);
                n += 1;
            }
        }
    }
    offsets
}

/// A cut point on the edge (low, high) (low < high), at parameter t from low.
#[derive(Clone, Copy)]
struct Cut {
    position: Vector3<f64>,
    t: f64,
}

/// The root of g on [a, b] with g(a) > 0 > g(b): its parameter from a (Illinois regula falsi).
fn root(g: &(impl Fn(&Vector3<f64>) -> f64 + Sync), a: &Vector3<f64>, b: &Vector3<f64>, ga: f64, gb: f64) -> f64 {
    let (mut lo, mut hi, mut g_lo, mut g_hi) = (0.0, 1.0, ga, gb);
    let mut side = 0;
    let mut t = 0.5;
    for _ in 0..60 {
        t = (lo * g_hi - hi * g_lo) / (g_hi - g_lo);
        if !(t > lo && t < hi) {
            t = 0.5 * (lo + hi);
        }
        let value = g(&(a + (b - a) * t));
        if value == 0.0 || hi - lo < 1e-10 {
            break;
        }
        if value > 0.0 {
            lo = t;
            g_lo = value;
            if side == 1 {
                g_hi *= 0.5;
            }
            side = 1;
        } else {
            hi = t;
            g_hi = value;
            if side == -1 {
                g_lo *= 0.5;
            }
            side = -1;
        }
    }
    t
}

/// A vertex of the output: a lattice vertex or the cut point on a lattice edge.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Node {
    Lattice(usize),
    Cut(usize, usize),
}

fn cut(a: usize, b: usize) -> Node {
    Node::Cut(a.min(b), a.max(b))
}

/// Meshes the inside of `shape` with lattice spacing `edge_length` (the long
/// lattice edge; output edges range from about 0.4 to 1.2 times it).
pub fn stuff_shape(shape: &Shape, edge_length: f64) -> Result<(TetMesh, StuffingReport)> {
    let (lo, hi) = shape.bounds();
    let (mesh, mut report) = stuff(|p| -shape.distance(p), lo, hi, edge_length)?;
    report.open_surfaces = shape.open_surfaces();
    Ok((mesh, report))
}

/// Meshes {g > 0} inside the box [lo, hi] (g ≤ 0 on and outside its boundary).
///
/// One function of about 175 lines: the stages of isosurface stuffing (the lattice, the cut points,
/// warping, the stencils that fill each tetrahedron) share the lattice's vertex maps.
pub fn stuff(
    g: impl Fn(&Vector3<f64>) -> f64 + Sync,
    lo: Vector3<f64>,
    hi: Vector3<f64>,
    edge_length: f64,
) -> Result<(TetMesh, StuffingReport)> {
    if !(edge_length > 0.0 && edge_length.is_finite()) {
        return Err(HookeError::Mesh {
            reason: format!("the edge length must be positive, got {edge_length}"),
        });
    }
    if (0..3).any(|a| hi[a] < lo[a] || !lo[a].is_finite() || !hi[a].is_finite()) {
        return Err(HookeError::Mesh {
            reason: "the shape has an empty or infinite bounding box".to_string(),
        });
    }
    // The body-centred cubic lattice makes 12 tetrahedra per cell it fills: the
    // cells of the bounding box bound the output before anything is allocated.
    let filled = [0, 1, 2].map(|a| ((hi[a] - lo[a]) / edge_length).ceil().max(1.0));
    let most_tets = 12.0 * filled.iter().product::<f64>();
    if most_tets > super::limits::MAX_GENERATED_ELEMENTS as f64 {
        return Err(HookeError::Mesh {
            reason: format!(
                "edge length {edge_length} could make up to {most_tets:.3e} tetrahedra in the shape's bounding box (the limit is {}); use a larger edge length",
                super::limits::MAX_GENERATED_ELEMENTS
            ),
        });
    }
    // Two cells of padding: every boundary vertex of the lattice is outside.
    let cells = [0, 1, 2].map(|a| ((hi[a] - lo[a]) / edge_length).ceil().max(1.0) as usize + 4);
    let lattice_size = cells.iter().map(|c| (c + 1) as f64).product::<f64>() * 2.0;
    if lattice_size > MAX_LATTICE_VERTICES as f64 {
        return Err(HookeError::Mesh {
            reason: format!(
                "edge length {edge_length} gives a lattice of {lattice_size:.0} vertices (the limit is {MAX_LATTICE_VERTICES}); use a larger edge length"
            ),
        });
    }
    let lattice = Lattice {
        origin: lo - Vector3::repeat(2.0 * edge_length),
        spacing: edge_length,
        cells,
        corner_count: cells.iter().map(|c| c + 1).product(),
    };
    let count = lattice.vertex_count();
    let mut positions: Vec<Vector3<f64>> = (0..count).map(|id| lattice.position(lattice.coordinates(id))).collect();
    let values: Vec<f64> = positions.par_iter().map(&g).collect();
    let mut signs: Vec<i8> = values
        .iter()
        .map(|&v| {
            if v > 0.0 {
                1
            } else if v < 0.0 {
                -1
            } else {
                0
            }
        })
        .collect();
    let offsets = neighbour_offsets();
    let neighbours = |id: usize| lattice.neighbours(&offsets, id);

    // Cut points on every edge with strictly opposite signs.
    let found: Vec<((usize, usize), Cut)> = (0..count)
        .into_par_iter()
        .filter(|&u| signs[u] > 0)
        .flat_map_iter(|u| {
            let (positions, values, signs, g) = (&positions, &values, &signs, &g);
            neighbours(u).filter(|&(w, _)| signs[w] < 0).map(move |(w, _)| {
                let t = root(g, &positions[u], &positions[w], values[u], values[w]);
                let position = positions[u] + (positions[w] - positions[u]) * t;
                let key = (u.min(w), u.max(w));
                let t_low = if key.0 == u { t } else { 1.0 - t };
                (key, Cut { position, t: t_low })
            })
        })
        .collect();
    let cut_points = found.len();
    let mut cuts: HashMap<(usize, usize), Cut> = found.into_iter().collect();

    // Warping: a vertex too close to a cut point on one of its edges moves onto it.
    let mut warped = 0;
    for v in 0..count {
        if signs[v] == 0 {
            continue;
        }
        let mut best: Option<(f64, Vector3<f64>)> = None;
        for (w, black) in neighbours(v) {
            let key = (v.min(w), v.max(w));
            if let Some(c) = cuts.get(&key) {
                let t_from_v = if key.0 == v { c.t } else { 1.0 - c.t };
                let alpha = if black { ALPHA_LONG } else { ALPHA_SHORT };
                if t_from_v < alpha {
                    let distance = (c.position - positions[v]).norm();
                    if best.is_none_or(|(d, _)| distance < d) {
                        best = Some((distance, c.position));
                    }
                }
            }
        }
        if let Some((_, target)) = best {
            positions[v] = target;
            signs[v] = 0;
            warped += 1;
            for (w, _) in neighbours(v) {
                cuts.remove(&(v.min(w), v.max(w)));
            }
        }
    }

    // Stencils over every lattice tet.
    let mut output = Output::default();
    let mut report = StuffingReport {
        lattice_cells: cells,
        lattice_vertices: count,
        cut_points,
        warped_vertices: warped,
        ..StuffingReport::default()
    };
    let node_position = |node: &Node| match node {
        Node::Lattice(id) => positions[*id],
        Node::Cut(a, b) => cuts[&(*a, *b)].position,
    };
    for k in 0..cells[2] {
        for j in 0..cells[1] {
            for i in 0..cells[0] {
                let c = [i as i64, j as i64, k as i64];
                for axis in 0..3 {
                    let mut next = c;
                    next[axis] += 1;
                    if next[axis] >= cells[axis] as i64 {
                        continue;
                    }
                    let centre = |q: [i64; 3]| lattice.id(q.map(|v| 2 * v + 1)).expect("cube in range");
                    let (b_axis, d_axis) = ((axis + 1) % 3, (axis + 2) % 3);
                    let corner = |db: i64, dd: i64| {
                        let mut q = next;
                        q[b_axis] += db;
                        q[d_axis] += dd;
                        lattice.id(q.map(|v| 2 * v)).expect("corner in range")
                    };
                    let square = [corner(0, 0), corner(1, 0), corner(1, 1), corner(0, 1)];
                    for m in 0..4 {
                        let parent = [centre(c), centre(next), square[m], square[(m + 1) % 4]];
                        let s = parent.map(|v| signs[v]);
                        if !s.contains(&1) {
                            continue;
                        }
                        for tet in stencil(&parent, &s, &lattice) {
                            let corners = tet.map(|n| node_position(&n));
                            let volume = (corners[1] - corners[0])
                                .cross(&(corners[2] - corners[0]))
                                .dot(&(corners[3] - corners[0]));
                            let tiny = 1e-12 * edge_length.powi(3);
                            if volume.abs() <= tiny {
                                report.dropped += 1;
                                continue;
                            }
                            let tet = if volume < 0.0 {
                                report.flipped += 1;
                                [tet[1], tet[0], tet[2], tet[3]]
                            } else {
                                tet
                            };
                            output.push(tet, &node_position);
                        }
                    }
                }
            }
        }
    }
    let labels = vec![0; output.tets.len()];
    let mesh = TetMesh::new(output.vertices, output.tets, labels)?;
    Ok((mesh, report))
}

#[derive(Default)]
struct Output {
    ids: HashMap<Node, usize>,
    vertices: Vec<Vector3<f64>>,
    tets: Vec<[usize; 4]>,
}

impl Output {
    fn push(&mut self, tet: [Node; 4], position: &impl Fn(&Node) -> Vector3<f64>) {
        let ids = tet.map(|node| {
            *self.ids.entry(node).or_insert_with(|| {
                self.vertices.push(position(&node));
                self.vertices.len() - 1
            })
        });
        self.tets.push(ids);
    }
}

/// The parity rule (Labelle & Shewchuk §3.3) for a quadrilateral on the face
/// {e1, e2, w} whose black edge is e1e2: returns the endpoint E from which the
/// diagonal E – cut(F, w) leaves. In doubled coordinates, with k the black
/// edge's axis, par(E) = ([E_k > F_k] + Σ_{j≠k} [w_j < E_j]) mod 2; corner
/// edges take the odd endpoint, centre edges the even one. It depends on the
/// face only, so both tets sharing the face agree.
fn parity_choice(e1: usize, e2: usize, w: usize, lattice: &Lattice) -> usize {
    let (x1, x2, xw) = (lattice.coordinates(e1), lattice.coordinates(e2), lattice.coordinates(w));
    let k = (0..3)
        .find(|&a| x1[a] != x2[a])
        .expect("a black edge changes one coordinate");
    let parity = |e: &[i64; 3], f: &[i64; 3]| {
        let mut count = usize::from(e[k] > f[k]);
        for j in (0..3).filter(|&j| j != k) {
            count += usize::from(xw[j] < e[j]);
        }
        count % 2
    };
    let wanted = if x1[0].rem_euclid(2) == 0 { 1 } else { 0 };
    if parity(&x1, &x2) == wanted {
        e1
    } else {
        e2
    }
}

/// The output tets for one lattice tet (parent order, signs after warping),
/// positively oriented for undistorted positions.
fn stencil(parent: &[usize; 4], s: &[i8; 4], lattice: &Lattice) -> Vec<[Node; 4]> {
    let count = |sign: i8| s.iter().filter(|&&x| x == sign).count();
    let (plus, zero, minus) = (count(1), count(0), count(-1));
    let l = |position: usize| Node::Lattice(parent[position]);
    let c = |a: usize, b: usize| cut(parent[a], parent[b]);
    let partner = |position: usize| position ^ 1;
    let positions = |sign: i8| (0..4).filter(move |&i| s[i] == sign);
    if plus == 0 {
        return Vec::new();
    }
    if minus == 0 {
        return vec![[l(0), l(1), l(2), l(3)]];
    }
    // Emits tets given in role order `roles` (parent positions), fixing the orientation.
    let oriented = |roles: [usize; 4], tets: Vec<[Node; 4]>| -> Vec<[Node; 4]> {
        let inversions = (0..4)
            .flat_map(|i| (i + 1..4).map(move |j| (i, j)))
            .filter(|&(i, j)| roles[i] > roles[j])
            .count();
        if inversions % 2 == 0 {
            tets
        } else {
            tets.into_iter().map(|t| [t[1], t[0], t[2], t[3]]).collect()
        }
    };
    if plus == 1 {
        let p = positions(1).next().expect("one + vertex");
        let node = |i: usize| if s[i] < 0 { c(p, i) } else { l(i) };
        return vec![[node(0), node(1), node(2), node(3)]];
    }
    // Among the two + vertices of a black pair, the one the parity rule picks for face {pair, w}.
    let by_parity = |a: usize, b: usize, w: usize| {
        if parity_choice(parent[a], parent[b], parent[w], lattice) == parent[a] {
            (a, b)
        } else {
            (b, a)
        }
    };
    match (plus, zero, minus) {
        (2, 1, 1) => {
            let z = positions(0).next().expect("one 0 vertex");
            let m = positions(-1).next().expect("one − vertex");
            if s[partner(z)] == 1 {
                // A1: z's black partner is +.
                let (p, q) = (partner(z), partner(m));
                oriented(
                    [z, p, q, m],
                    vec![[l(z), l(p), l(q), c(q, m)], [l(z), l(p), c(q, m), c(p, m)]],
                )
            } else {
                // A2: the two + vertices form a black edge.
                let pair: Vec<usize> = positions(1).collect();
                let (a, b) = by_parity(pair[0], pair[1], m);
                oriented(
                    [a, b, z, m],
                    vec![[l(a), l(b), l(z), c(b, m)], [l(a), c(b, m), l(z), c(a, m)]],
                )
            }
        }
        (2, 0, 2) => {
            let pluses: Vec<usize> = positions(1).collect();
            if s[partner(pluses[0])] < 0 {
                // B1: each black edge has one + and one −.
                let (p, q) = (pluses[0], pluses[1]);
                let (m, n) = (partner(p), partner(q));
                oriented(
                    [p, m, q, n],
                    vec![
                        [l(p), c(p, m), c(q, n), c(p, n)],
                        [l(p), c(p, m), l(q), c(q, n)],
                        [l(q), c(p, m), c(q, m), c(q, n)],
                    ],
                )
            } else {
                // B2: the + vertices form one black edge, the − the other.
                let minuses: Vec<usize> = positions(-1).collect();
                let (cc, d) = (minuses[0], minuses[1]);
                let (a, b) = by_parity(pluses[0], pluses[1], cc);
                oriented(
                    [a, b, cc, d],
                    vec![
                        [l(a), c(a, cc), c(a, d), c(b, cc)],
                        [l(a), c(a, d), l(b), c(b, cc)],
                        [c(a, d), l(b), c(b, cc), c(b, d)],
                    ],
                )
            }
        }
        (3, 0, 1) => {
            let m = positions(-1).next().expect("one − vertex");
            let r = partner(m);
            let pair: Vec<usize> = (0..4).filter(|&i| i != m && i != r).collect();
            let (a, b) = by_parity(pair[0], pair[1], m);
            oriented(
                [a, b, r, m],
                vec![
                    [l(a), l(b), l(r), c(r, m)],
                    [l(a), l(b), c(r, m), c(b, m)],
                    [l(a), c(a, m), c(b, m), c(r, m)],
                ],
            )
        }
        _ => unreachable!("every sign pattern with a + and a − vertex is covered above"),
    }
}
