//! A bounding volume hierarchy over axis-aligned boxes: which boxes of a
//! set overlap a query box, for the broad phase and the intersection check.
//!
//! The boxes are sorted along a Morton (Z-order) curve of their centres, so
//! that boxes near each other in space sit near each other in the order,
//! and the tree halves that order recursively down to leaves of a few boxes
//! (a linear BVH, as in Lauterbach et al. 2009, "Fast BVH Construction on
//! GPUs"). Building it is a sort; a query walks the tree with a small stack
//! and reads the leaves' boxes from one contiguous array.
//!
//! The sort breaks ties by index, so the tree, and so the order in which a
//! query meets its boxes, is the same on any number of threads.

use rayon::prelude::*;

/// An axis-aligned box, closed: boxes that touch overlap.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// The smallest corner.
    pub low: [f64; 3],
    /// The largest corner.
    pub high: [f64; 3],
}

impl Aabb {
    /// The box that holds nothing (the identity of [`Aabb::union`]).
    pub const EMPTY: Aabb = Aabb {
        low: [f64::INFINITY; 3],
        high: [f64::NEG_INFINITY; 3],
    };

    /// The box around `vertices` at both `start` and `end` positions (3 per
    /// vertex), grown by `margin` on every side.
    pub fn swept(vertices: &[usize], start: &[f64], end: &[f64], margin: f64) -> Aabb {
        let mut bounds = Aabb::EMPTY;
        for &v in vertices {
            for positions in [start, end] {
                for k in 0..3 {
                    bounds.low[k] = bounds.low[k].min(positions[3 * v + k]);
                    bounds.high[k] = bounds.high[k].max(positions[3 * v + k]);
                }
            }
        }
        Aabb {
            low: bounds.low.map(|x| x - margin),
            high: bounds.high.map(|x| x + margin),
        }
    }

    /// Whether the two boxes share a point.
    #[inline]
    pub fn overlaps(&self, other: &Aabb) -> bool {
        (self.low[0] <= other.high[0] && other.low[0] <= self.high[0])
            && (self.low[1] <= other.high[1] && other.low[1] <= self.high[1])
            && (self.low[2] <= other.high[2] && other.low[2] <= self.high[2])
    }

    /// The smallest box holding both.
    pub fn union(&self, other: &Aabb) -> Aabb {
        Aabb {
            low: std::array::from_fn(|k| self.low[k].min(other.low[k])),
            high: std::array::from_fn(|k| self.high[k].max(other.high[k])),
        }
    }

    fn centre(&self) -> [f64; 3] {
        std::array::from_fn(|k| 0.5 * (self.low[k] + self.high[k]))
    }
}

/// Boxes per leaf: small enough that a leaf's boxes are mostly near the
/// query, large enough that the tree is shallow and its nodes few.
const LEAF_SIZE: usize = 4;

/// A node: its bounds, the range of sorted boxes below it, and the largest
/// index among them (so that a query for partners above an index skips
/// subtrees that hold none). Its first child follows it; `second` is the
/// other child's place, or `LEAF` for a leaf.
#[derive(Clone, Copy, Debug)]
struct Node {
    bounds: Aabb,
    start: u32,
    end: u32,
    largest_index: u32,
    second: u32,
}

const LEAF: u32 = u32::MAX;

/// The hierarchy over a list of boxes, each known by its place in the list.
#[derive(Clone, Debug)]
pub struct Bvh {
    nodes: Vec<Node>,
    /// The boxes in Morton order, with their indices in the list.
    sorted: Vec<(Aabb, u32)>,
}

impl Bvh {
    /// Builds the hierarchy over `boxes`.
    ///
    /// # Panics
    /// When there are 2³² boxes or more.
    pub fn new(boxes: &[Aabb]) -> Bvh {
        assert!(boxes.len() < LEAF as usize, "a BVH holds fewer than 2³² boxes");
        let scene = boxes.iter().fold(Aabb::EMPTY, |a, b| a.union(b));
        let mut keyed: Vec<(u64, Aabb, u32)> = boxes
            .par_iter()
            .enumerate()
            .map(|(i, b)| ((morton(&scene, b.centre()) << 32) | i as u64, *b, i as u32))
            .collect();
        keyed.par_sort_unstable_by_key(|&(key, _, _)| key);
        let sorted: Vec<(Aabb, u32)> = keyed.into_iter().map(|(_, b, i)| (b, i)).collect();
        let mut nodes = Vec::with_capacity(2 * sorted.len() / LEAF_SIZE + 1);
        if !sorted.is_empty() {
            build(&sorted, 0, sorted.len(), &mut nodes);
        }
        Bvh { nodes, sorted }
    }

    /// Calls `found` with the index of every box that overlaps `query` and
    /// whose index is above `above` (None: every box), in the tree's order.
    #[inline]
    pub fn for_each_overlap(&self, query: &Aabb, above: Option<usize>, mut found: impl FnMut(usize)) {
        if self.nodes.is_empty() {
            return;
        }
        let floor = above.map_or(0, |a| a as u64 + 1);
        // A halving tree over fewer than 2³² boxes is at most 32 levels deep.
        let mut stack = [0u32; 64];
        let mut depth = 1;
        while depth > 0 {
            depth -= 1;
            let place = stack[depth];
            let node = &self.nodes[place as usize];
            if (node.largest_index as u64) < floor || !node.bounds.overlaps(query) {
                continue;
            }
            if node.second == LEAF {
                for (bounds, index) in &self.sorted[node.start as usize..node.end as usize] {
                    if *index as u64 >= floor && bounds.overlaps(query) {
                        found(*index as usize);
                    }
                }
            } else {
                // The first child follows its parent; it is walked first.
                stack[depth] = node.second;
                stack[depth + 1] = place + 1;
                depth += 2;
            }
        }
    }
}

/// Appends the subtree over sorted[start..end] to `nodes` (the node first,
/// then its first subtree, then its second), and returns its place.
fn build(sorted: &[(Aabb, u32)], start: usize, end: usize, nodes: &mut Vec<Node>) -> u32 {
    let place = nodes.len();
    let range = &sorted[start..end];
    nodes.push(Node {
        bounds: range.iter().fold(Aabb::EMPTY, |a, (b, _)| a.union(b)),
        start: start as u32,
        end: end as u32,
        largest_index: range.iter().map(|&(_, i)| i).max().unwrap_or(0),
        second: LEAF,
    });
    if end - start > LEAF_SIZE {
        let middle = start + (end - start) / 2;
        build(sorted, start, middle, nodes);
        nodes[place].second = build(sorted, middle, end, nodes);
    }
    place as u32
}

/// The 30-bit Morton code of `point` within `scene`: 10 bits per axis,
/// interleaved.
fn morton(scene: &Aabb, point: [f64; 3]) -> u64 {
    let mut code = 0u64;
    for k in 0..3 {
        let extent = scene.high[k] - scene.low[k];
        let unit = if extent > 0.0 {
            (point[k] - scene.low[k]) / extent
        } else {
            0.0
        };
        let cell = (unit * 1024.0).clamp(0.0, 1023.0) as u64;
        code |= spread(cell) << k;
    }
    code
}

/// Spreads the 10 low bits of `x` to every third bit.
fn spread(mut x: u64) -> u64 {
    x &= 0x3ff;
    x = (x | (x << 16)) & 0x030000ff;
    x = (x | (x << 8)) & 0x0300f00f;
    x = (x | (x << 4)) & 0x030c30c3;
    x = (x | (x << 2)) & 0x09249249;
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `count` random boxes of sizes up to `size` in the unit cube.
    fn random_boxes(seed: u64, count: usize, size: f64) -> Vec<Aabb> {
        let mut state = seed;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        (0..count)
            .map(|_| {
                let low: [f64; 3] = std::array::from_fn(|_| next());
                let high = std::array::from_fn(|k| low[k] + size * next());
                Aabb { low, high }
            })
            .collect()
    }

    #[test]
    fn a_query_finds_exactly_the_overlapping_boxes_above_its_floor() {
        for (seed, count, size) in [(1, 1, 0.5), (2, 5, 0.3), (3, 1000, 0.05), (4, 3000, 0.2)] {
            let boxes = random_boxes(seed, count, size);
            let tree = Bvh::new(&boxes);
            for (q, query) in random_boxes(seed + 100, 50, 0.1).iter().enumerate() {
                let above = (q % 2 == 1).then_some(q * count / 50);
                let mut found = Vec::new();
                tree.for_each_overlap(query, above, |i| found.push(i));
                found.sort_unstable();
                let expected: Vec<usize> = (0..count)
                    .filter(|&i| above.is_none_or(|a| i > a) && boxes[i].overlaps(query))
                    .collect();
                assert_eq!(found, expected, "seed {seed}, query {q}");
            }
        }
    }

    #[test]
    fn touching_boxes_overlap_and_degenerate_sets_are_handled() {
        let unit = Aabb {
            low: [0.0; 3],
            high: [1.0; 3],
        };
        let beside = Aabb {
            low: [1.0, 0.0, 0.0],
            high: [2.0, 1.0, 1.0],
        };
        assert!(unit.overlaps(&beside) && beside.overlaps(&unit));
        // No boxes; and many boxes at one point (a zero-size scene).
        Bvh::new(&[]).for_each_overlap(&unit, None, |_| panic!("nothing to find"));
        let point = Aabb {
            low: [0.5; 3],
            high: [0.5; 3],
        };
        let mut found = Vec::new();
        Bvh::new(&vec![point; 100]).for_each_overlap(&unit, None, |i| found.push(i));
        found.sort_unstable();
        assert_eq!(found, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn the_tree_is_the_same_on_one_thread_and_on_two() {
        let boxes = random_boxes(9, 5000, 0.05);
        let order = |threads: usize| {
            let tree = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| Bvh::new(&boxes));
            let mut found = Vec::new();
            tree.for_each_overlap(
                &Aabb {
                    low: [0.2; 3],
                    high: [0.6; 3],
                },
                None,
                |i| found.push(i),
            );
            found
        };
        assert_eq!(order(1), order(2));
    }
}
