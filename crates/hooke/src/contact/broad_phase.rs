//! The broad phase of barrier contact: which pairs of surface primitives may
//! come within the barrier's reach during a step. Each primitive's box holds
//! its positions at the step's start and end (a swept box, so a vertex that
//! passes through a face within one step is not missed), grown by half the
//! reach on every side; pairs whose boxes overlap are the candidates, which
//! the narrow phase (distances, continuous collision detection) then
//! examines. Pairs that share a vertex are never candidates: their distance
//! is zero by construction.
//!
//! The boxes go into R-trees (the `rstar` crate's bulk-loaded R*-tree), and
//! the queries run in parallel, one per vertex or edge, each returning its
//! partners sorted: the candidates are the same list, in the same order, on
//! any number of threads.

use super::surface::ContactSurface;
use rayon::prelude::*;
use rstar::{RTree, RTreeObject, AABB};

/// The pairs that may meet during a step.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Candidates {
    /// (vertex, face): a model vertex and an index into the surface's faces.
    pub vertex_face: Vec<(usize, usize)>,
    /// (edge, edge): indices into the surface's edges, the first smaller.
    pub edge_edge: Vec<(usize, usize)>,
}

/// A primitive's index with its box.
pub(super) struct Boxed {
    pub(super) index: usize,
    pub(super) envelope: AABB<[f64; 3]>,
}

impl RTreeObject for Boxed {
    type Envelope = AABB<[f64; 3]>;
    fn envelope(&self) -> Self::Envelope {
        self.envelope
    }
}

/// The box around `vertices` at both `start` and `end` positions, grown by
/// `margin` on every side.
pub(super) fn swept_box(vertices: &[usize], start: &[f64], end: &[f64], margin: f64) -> AABB<[f64; 3]> {
    let mut low = [f64::INFINITY; 3];
    let mut high = [f64::NEG_INFINITY; 3];
    for &v in vertices {
        for positions in [start, end] {
            for k in 0..3 {
                low[k] = low[k].min(positions[3 * v + k]);
                high[k] = high[k].max(positions[3 * v + k]);
            }
        }
    }
    AABB::from_corners(low.map(|x| x - margin), high.map(|x| x + margin))
}

/// The candidate pairs of `surface` for a step from positions `start` to
/// `end` (3 per model vertex), with `reach` the distance below which a pair
/// matters (the barrier's d̂): pairs whose swept boxes come within `reach`
/// of each other.
pub fn candidates(surface: &ContactSurface, start: &[f64], end: &[f64], reach: f64) -> Candidates {
    let margin = 0.5 * reach;
    let faces = RTree::bulk_load(
        surface
            .faces
            .par_iter()
            .enumerate()
            .map(|(index, f)| Boxed {
                index,
                envelope: swept_box(f, start, end, margin),
            })
            .collect(),
    );
    let edge_boxes: Vec<AABB<[f64; 3]>> = surface
        .edges
        .par_iter()
        .map(|e| swept_box(e, start, end, margin))
        .collect();
    let edges = RTree::bulk_load(
        edge_boxes
            .iter()
            .enumerate()
            .map(|(index, &envelope)| Boxed { index, envelope })
            .collect(),
    );
    let vertex_face: Vec<Vec<(usize, usize)>> = surface
        .vertices
        .par_iter()
        .map(|&v| {
            let query = swept_box(&[v], start, end, margin);
            let mut found: Vec<(usize, usize)> = faces
                .locate_in_envelope_intersecting(query)
                .filter(|f| !surface.faces[f.index].contains(&v))
                .map(|f| (v, f.index))
                .collect();
            found.sort_unstable();
            found
        })
        .collect();
    let edge_edge: Vec<Vec<(usize, usize)>> = edge_boxes
        .par_iter()
        .enumerate()
        .map(|(i, query)| {
            let [a0, a1] = surface.edges[i];
            let mut found: Vec<(usize, usize)> = edges
                .locate_in_envelope_intersecting(*query)
                .filter(|e| e.index > i && !surface.edges[e.index].iter().any(|&b| b == a0 || b == a1))
                .map(|e| (i, e.index))
                .collect();
            found.sort_unstable();
            found
        })
        .collect();
    Candidates {
        vertex_face: vertex_face.into_iter().flatten().collect(),
        edge_edge: edge_edge.into_iter().flatten().collect(),
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
        let boxes = |list: &[Vec<usize>]| -> Vec<AABB<[f64; 3]>> {
            list.iter().map(|p| swept_box(p, start, end, 0.5 * reach)).collect()
        };
        let overlap = |a: &AABB<[f64; 3]>, b: &AABB<[f64; 3]>| {
            (0..3).all(|k| a.lower()[k] <= b.upper()[k] && b.lower()[k] <= a.upper()[k])
        };
        let faces = boxes(&surface.faces.iter().map(|f| f.to_vec()).collect::<Vec<_>>());
        let edges = boxes(&surface.edges.iter().map(|e| e.to_vec()).collect::<Vec<_>>());
        let mut result = Candidates::default();
        for &v in &surface.vertices {
            let query = swept_box(&[v], start, end, 0.5 * reach);
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
