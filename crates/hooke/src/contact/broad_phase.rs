//! The broad phase of barrier contact: which pairs of surface primitives may
//! come within the barrier's reach during a step. Each primitive's box holds
//! its positions at the step's start and end (a swept box, so a vertex that
//! passes through a face within one step is not missed), grown by half the
//! reach on every side; pairs whose boxes overlap are the candidates, which
//! the narrow phase (distances, continuous collision detection) then
//! examines. Pairs that share a vertex are never candidates: their distance
//! is zero by construction.
//!
//! The boxes go into a bounding volume hierarchy (bvh.rs), and the queries
//! run in parallel, in blocks of vertices or edges, each query's partners
//! sorted: the candidates are the same list, in the same order, on any
//! number of threads.

use super::bvh::{Aabb, Bvh};
use super::surface::ContactSurface;
use rayon::prelude::*;

/// The pairs that may meet during a step.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Candidates {
    /// (vertex, face): a model vertex and an index into the surface's faces.
    pub vertex_face: Vec<(usize, usize)>,
    /// (edge, edge): indices into the surface's edges, the first smaller.
    pub edge_edge: Vec<(usize, usize)>,
}

/// Queries per parallel task: enough to pay for the task, few enough to
/// spread the work of a surface with a small contact region.
const QUERIES_PER_TASK: usize = 256;

/// The pairs of each query in `queries` (in order), each query's partners
/// found by `search` (which pushes them) and sorted.
fn pairs_of<T: Sync>(queries: &[T], search: impl Fn(&T, &mut Vec<(usize, usize)>) + Sync) -> Vec<(usize, usize)> {
    let blocks: Vec<Vec<(usize, usize)>> = queries
        .par_chunks(QUERIES_PER_TASK)
        .map(|block| {
            let mut pairs = Vec::new();
            for query in block {
                let from = pairs.len();
                search(query, &mut pairs);
                pairs[from..].sort_unstable();
            }
            pairs
        })
        .collect();
    blocks.concat()
}

/// The candidate pairs of `surface` for a step from positions `start` to
/// `end` (3 per model vertex), with `reach` the distance below which a pair
/// matters (the barrier's d̂): pairs whose swept boxes come within `reach`
/// of each other.
pub fn candidates(surface: &ContactSurface, start: &[f64], end: &[f64], reach: f64) -> Candidates {
    let margin = 0.5 * reach;
    let boxes = |primitives: &[_]| -> Vec<Aabb> {
        primitives
            .par_iter()
            .map(|p: &[usize; 3]| Aabb::swept(p, start, end, margin))
            .collect()
    };
    let faces = Bvh::new(&boxes(&surface.faces));
    let edge_boxes: Vec<Aabb> = surface
        .edges
        .par_iter()
        .map(|e| Aabb::swept(e, start, end, margin))
        .collect();
    let edges = Bvh::new(&edge_boxes);
    let vertex_face = pairs_of(&surface.vertices, |&v, pairs| {
        let query = Aabb::swept(&[v], start, end, margin);
        faces.for_each_overlap(&query, None, |f| {
            if !surface.faces[f].contains(&v) {
                pairs.push((v, f));
            }
        });
    });
    let indexed: Vec<usize> = (0..surface.edges.len()).collect();
    let edge_edge = pairs_of(&indexed, |&i, pairs| {
        let [a0, a1] = surface.edges[i];
        edges.for_each_overlap(&edge_boxes[i], Some(i), |j| {
            if !surface.edges[j].iter().any(|&b| b == a0 || b == a1) {
                pairs.push((i, j));
            }
        });
    });
    Candidates { vertex_face, edge_edge }
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
                    result.vertex_face.push((v, f));
                }
            }
        }
        for i in 0..edges.len() {
            for j in i + 1..edges.len() {
                let shared = surface.edges[j].iter().any(|b| surface.edges[i].contains(b));
                if !shared && overlap(&edges[i], &edges[j]) {
                    result.edge_edge.push((i, j));
                }
            }
        }
        result
    }

    #[test]
    fn the_candidates_are_exactly_the_overlapping_swept_boxes() {
        for (seed, step, reach) in [(1, 0.0, 0.01), (2, 0.05, 0.02), (3, 0.3, 0.0)] {
            let (surface, start, end) = soup(seed, 300, step);
            let found = candidates(&surface, &start, &end, reach);
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
}
