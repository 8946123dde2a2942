//! The broad phase of barrier contact: which pairs of surface primitives may
//! come within the barrier's reach during a step. Each primitive's box holds
//! its positions at the step's start and end (a swept box, so a vertex that
//! passes through a face within one step is not missed), grown by half the
//! reach on every side; pairs whose boxes overlap are the candidates, which
//! the narrow phase (distances, continuous collision detection) then
//! examines. Pairs that share a vertex are never candidates: their distance
//! is zero by construction.
//!
//! The boxes of vertices, edges and faces go into bounding volume
//! hierarchies (bvh.rs), walked against each other in parallel: vertices
//! against faces, edges against themselves (each pair once). The candidates
//! are the same list, in the same order, on any number of threads; the order
//! is the walk's, not sorted.

use super::bvh::{Aabb, Bvh};
use super::surface::ContactSurface;
use rayon::prelude::*;

/// The pairs that may meet during a step. Indices are 32-bit: the lists
/// run to millions of pairs, and half the bytes make them markedly faster
/// to write and to read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Candidates {
    /// (vertex, face): a model vertex and an index into the surface's faces.
    pub vertex_face: Vec<(u32, u32)>,
    /// (edge, edge): indices into the surface's edges, the first smaller.
    /// Each pair appears once.
    pub edge_edge: Vec<(u32, u32)>,
    /// (vertex, edge) of a planar surface (2D contact): a model vertex and an
    /// index into the surface's edges. Empty for a 3D surface, whose
    /// point–edge distances come within point–triangle and edge–edge pairs.
    pub vertex_edge: Vec<(u32, u32)>,
}

/// The candidate pairs of `surface` for a step from positions `start` to
/// `end` (3 per model vertex), with `reach` the distance below which a pair
/// matters (the barrier's d̂): pairs whose swept boxes come within `reach`
/// of each other.
pub fn candidates(surface: &ContactSurface, start: &[f64], end: &[f64], reach: f64) -> Candidates {
    // A surface of 2³² vertices would not fit in memory anyway.
    assert!(
        surface.vertices.last().is_none_or(|&v| v < u32::MAX as usize),
        "the broad phase names vertices by 32-bit indices"
    );
    let margin = 0.5 * reach;
    let swept = |vertices: &[usize]| Aabb::swept(vertices, start, end, margin);
    if surface.planar {
        return planar_candidates(surface, &swept);
    }
    // The three trees at once: each build has serial parts.
    let (faces, (edges, points)) = rayon::join(
        || Bvh::new(&surface.faces.par_iter().map(|f| swept(f)).collect::<Vec<_>>()),
        || edge_and_vertex_trees(surface, &swept),
    );
    // Each tree's primitives in its order, with their indices: the walks
    // read them as they meet them.
    let point_list = points.in_order(|p| surface.vertices[p]);
    let face_list = faces.in_order(|f| (f, surface.faces[f]));
    let edge_list = edges.in_order(|e| (e, surface.edges[e]));
    let vertex_face = points.pairs_with(&faces, |p, f, pairs| {
        let (v, (face, corners)) = (point_list[p], face_list[f]);
        if !corners.contains(&v) {
            pairs.push((v as u32, face as u32));
        }
    });
    let edge_edge = edges.self_pairs(|p, q, pairs| {
        let ((i, [a0, a1]), (j, [b0, b1])) = (edge_list[p], edge_list[q]);
        if a0 != b0 && a0 != b1 && a1 != b0 && a1 != b1 {
            pairs.push((i.min(j) as u32, i.max(j) as u32));
        }
    });
    Candidates {
        vertex_face,
        edge_edge,
        vertex_edge: Vec::new(),
    }
}

/// The BVHs of the surface's edges and of its vertices, built at once.
fn edge_and_vertex_trees(surface: &ContactSurface, swept: &(impl Fn(&[usize]) -> Aabb + Sync)) -> (Bvh, Bvh) {
    rayon::join(
        || Bvh::new(&surface.edges.par_iter().map(|e| swept(e)).collect::<Vec<_>>()),
        || {
            let vertices = surface.vertices.par_iter();
            Bvh::new(&vertices.map(|v| swept(std::slice::from_ref(v))).collect::<Vec<_>>())
        },
    )
}

/// The candidates of a planar surface: vertices against edges (in 2D two
/// edges cannot cross before a vertex of one meets the other).
fn planar_candidates(surface: &ContactSurface, swept: &(impl Fn(&[usize]) -> Aabb + Sync)) -> Candidates {
    let (edges, points) = edge_and_vertex_trees(surface, swept);
    let point_list = points.in_order(|p| surface.vertices[p]);
    let edge_list = edges.in_order(|e| (e, surface.edges[e]));
    let vertex_edge = points.pairs_with(&edges, |p, e, pairs| {
        let (v, (edge, ends)) = (point_list[p], edge_list[e]);
        if !ends.contains(&v) {
            pairs.push((v as u32, edge as u32));
        }
    });
    Candidates {
        vertex_edge,
        ..Candidates::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator in [0, 1).
    fn generator(seed: u64) -> impl FnMut() -> f64 {
        let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// A soup of `count` small random triangles in the unit cube, moved by a
    /// random step, its positions at the start and the end.
    fn soup(seed: u64, count: usize, step: f64) -> (ContactSurface, Vec<f64>, Vec<f64>) {
        let mut next = generator(seed);
        let mut start = Vec::new();
        let mut faces = Vec::new();
        for f in 0..count {
            let centre = [next(), next(), next()];
            for _ in 0..3 {
                for c in centre {
                    start.push(c + 0.05 * (next() - 0.5));
                }
            }
            faces.push([3 * f, 3 * f + 1, 3 * f + 2]);
        }
        // Some triangles share an edge with the next one, so that adjacency occurs.
        for f in (0..count - 1).step_by(7) {
            faces.push([3 * f, 3 * f + 1, 3 * (f + 1)]);
        }
        let end = start.iter().map(|x| x + step * (next() - 0.5)).collect();
        (ContactSurface::of_triangles(faces), start, end)
    }

    /// All pairs by testing every box against every other.
    fn brute_force(surface: &ContactSurface, start: &[f64], end: &[f64], reach: f64) -> Candidates {
        let boxes = |list: &[Vec<usize>]| -> Vec<Aabb> {
            list.iter().map(|p| Aabb::swept(p, start, end, 0.5 * reach)).collect()
        };
        let overlap = |a: &Aabb, b: &Aabb| (0..3).all(|k| a.low[k] <= b.high[k] && b.low[k] <= a.high[k]);
        let faces = boxes(&surface.faces.iter().map(|f| f.to_vec()).collect::<Vec<_>>());
        let edges = boxes(&surface.edges.iter().map(|e| e.to_vec()).collect::<Vec<_>>());
        let mut result = Candidates::default();
        for &v in &surface.vertices {
            let query = Aabb::swept(&[v], start, end, 0.5 * reach);
            for (f, face) in surface.faces.iter().enumerate() {
                if !face.contains(&v) && overlap(&query, &faces[f]) {
                    result.vertex_face.push((v as u32, f as u32));
                }
            }
        }
        for i in 0..edges.len() {
            for j in i + 1..edges.len() {
                let shared = surface.edges[j].iter().any(|b| surface.edges[i].contains(b));
                if !shared && overlap(&edges[i], &edges[j]) {
                    result.edge_edge.push((i as u32, j as u32));
                }
            }
        }
        result
    }

    #[test]
    fn the_candidates_are_exactly_the_overlapping_swept_boxes() {
        for (seed, step, reach) in [(1, 0.0, 0.01), (2, 0.05, 0.02), (3, 0.3, 0.0)] {
            let (surface, start, end) = soup(seed, 300, step);
            let mut found = candidates(&surface, &start, &end, reach);
            found.vertex_face.sort_unstable();
            found.edge_edge.sort_unstable();
            assert_eq!(found, brute_force(&surface, &start, &end, reach), "seed {seed}");
            assert!(
                !found.vertex_face.is_empty() && !found.edge_edge.is_empty(),
                "seed {seed}"
            );
        }
    }

    #[test]
    fn the_candidates_are_the_same_on_one_thread_and_on_two() {
        let (surface, start, end) = soup(4, 500, 0.05);
        let on = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| candidates(&surface, &start, &end, 0.01))
        };
        assert_eq!(on(1), on(2));
    }

    #[test]
    fn a_vertex_that_passes_through_a_face_within_a_step_is_a_candidate() {
        let surface = ContactSurface::of_triangles(vec![[0, 1, 2], [3, 4, 5]]);
        // A triangle at z = 0, and a vertex of another far above it that
        // ends far below: neither end is near, the sweep crosses it.
        let start = [
            0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, //
            0.2, 0.2, 1.0, 5.0, 5.0, 5.0, 5.0, 6.0, 5.0,
        ];
        let mut end = start;
        end[11] = -1.0;
        let found = candidates(&surface, &start, &end, 1e-3);
        assert!(found.vertex_face.contains(&(3, 0)), "{found:?}");
        assert!(!candidates(&surface, &start, &start, 1e-3).vertex_face.contains(&(3, 0)));
    }

    #[test]
    fn a_planar_surface_has_exactly_the_overlapping_vertex_edge_boxes_the_same_on_any_thread_count() {
        // Random segments in z = 0, some chained, moved in the plane.
        let mut next = generator(11);
        let count = 2500;
        let mut start = Vec::new();
        let mut edges = Vec::new();
        for e in 0..count {
            let centre = [next(), next()];
            for _ in 0..2 {
                start.extend([
                    centre[0] + 0.04 * (next() - 0.5),
                    centre[1] + 0.04 * (next() - 0.5),
                    0.0,
                ]);
            }
            edges.push([2 * e, 2 * e + 1]);
            if e % 5 == 0 && e + 1 < count {
                edges.push([2 * e + 1, 2 * e + 2]);
            }
        }
        let end: Vec<f64> = start
            .iter()
            .enumerate()
            .map(|(i, x)| if i % 3 == 2 { 0.0 } else { x + 0.02 * (next() - 0.5) })
            .collect();
        let surface = ContactSurface::of_plane_edges(edges);
        let reach = 0.005;
        let on = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| candidates(&surface, &start, &end, reach))
        };
        let found = on(2);
        assert_eq!(found, on(1));
        assert!(found.vertex_face.is_empty() && found.edge_edge.is_empty());
        let mut sorted = found.vertex_edge.clone();
        sorted.sort_unstable();
        let mut expected = Vec::new();
        let overlap = |a: &Aabb, b: &Aabb| (0..3).all(|k| a.low[k] <= b.high[k] && b.low[k] <= a.high[k]);
        let boxes: Vec<Aabb> = surface
            .edges
            .iter()
            .map(|e| Aabb::swept(e, &start, &end, 0.5 * reach))
            .collect();
        for &v in &surface.vertices {
            let query = Aabb::swept(&[v], &start, &end, 0.5 * reach);
            for (e, edge) in surface.edges.iter().enumerate() {
                if !edge.contains(&v) && overlap(&query, &boxes[e]) {
                    expected.push((v as u32, e as u32));
                }
            }
        }
        assert!(expected.len() > 100, "{}", expected.len());
        assert_eq!(sorted, expected);
    }
}
