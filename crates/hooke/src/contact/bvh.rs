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
//!
//! The overlapping pairs within one tree, or between two, are found by
//! walking the tree against itself or the other tree ([`Bvh::self_pairs`],
//! [`Bvh::pairs_with`]): a pair of nodes whose boxes are apart is dropped
//! with everything below it, so the work shared by nearby boxes is done
//! once, not once per box as with a query per box. The walk splits into
//! parallel tasks near the root and joins their lists in the walk's order,
//! so the pairs come in one order on any number of threads.

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
        corners_overlap([&self.low, &self.high], [&other.low, &other.high])
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

/// A box in single precision, rounded outward: it holds the box it rounds,
/// so a test against it never rejects what the exact test would accept.
/// Nodes keep their bounds this way, to halve the memory a query walks.
#[derive(Clone, Copy, Debug)]
struct OuterBox {
    low: [f32; 3],
    high: [f32; 3],
}

impl OuterBox {
    fn around(exact: &Aabb) -> OuterBox {
        OuterBox {
            low: exact.low.map(round_down),
            high: exact.high.map(round_up),
        }
    }

    #[inline]
    fn overlaps(&self, other: &OuterBox) -> bool {
        corners_overlap([&self.low, &self.high], [&other.low, &other.high])
    }
}

/// Whether two closed boxes, each given by its [low, high] corners, share a
/// point.
#[inline]
fn corners_overlap<T: PartialOrd>([low_a, high_a]: [&[T; 3]; 2], [low_b, high_b]: [&[T; 3]; 2]) -> bool {
    // Without short circuits: one branch instead of six that the processor
    // cannot predict.
    (low_a[0] <= high_b[0])
        & (low_b[0] <= high_a[0])
        & (low_a[1] <= high_b[1])
        & (low_b[1] <= high_a[1])
        & (low_a[2] <= high_b[2])
        & (low_b[2] <= high_a[2])
}

/// The largest single-precision number at most `x`.
fn round_down(x: f64) -> f32 {
    let y = x as f32;
    if (y as f64) <= x {
        y
    } else if y > 0.0 {
        f32::from_bits(y.to_bits() - 1)
    } else if y == 0.0 {
        -f32::from_bits(1)
    } else {
        f32::from_bits(y.to_bits() + 1)
    }
}

/// The smallest single-precision number at least `x`.
fn round_up(x: f64) -> f32 {
    -round_down(-x)
}

/// A node: its bounds and the range of sorted boxes below it. Its first
/// child follows it; `second` is the other child's place, or `LEAF` for a
/// leaf.
#[derive(Clone, Copy, Debug)]
struct Node {
    bounds: OuterBox,
    start: u32,
    end: u32,
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
        // The key holds the index in its low half: sorting the keys alone
        // (8 bytes each, not the boxes) breaks ties by index.
        let mut keys: Vec<u64> = boxes
            .par_iter()
            .enumerate()
            .map(|(i, b)| (morton(&scene, b.centre()) << 32) | i as u64)
            .collect();
        keys.par_sort_unstable();
        let sorted: Vec<(Aabb, u32)> = keys
            .par_iter()
            .map(|&key| (boxes[key as u32 as usize], key as u32))
            .collect();
        let mut nodes = Vec::with_capacity(2 * sorted.len() / LEAF_SIZE + 1);
        if !sorted.is_empty() {
            build(&sorted, 0, sorted.len(), &mut nodes);
        }
        Bvh { nodes, sorted }
    }

    /// Calls `found` with the index of every box that overlaps `query`, in
    /// the tree's order.
    #[inline]
    pub fn for_each_overlap(&self, query: &Aabb, mut found: impl FnMut(usize)) {
        if self.nodes.is_empty() {
            return;
        }
        let outer = OuterBox::around(query);
        // A halving tree over fewer than 2³² boxes is at most 32 levels deep.
        let mut stack = [0u32; 64];
        let mut depth = 1;
        while depth > 0 {
            depth -= 1;
            let place = stack[depth];
            let node = &self.nodes[place as usize];
            if !node.bounds.overlaps(&outer) {
                continue;
            }
            if node.second == LEAF {
                for (bounds, index) in &self.sorted[node.start as usize..node.end as usize] {
                    if bounds.overlaps(query) {
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

    /// `item` of each box's index, in the tree's order: what [`Bvh::self_pairs`]
    /// and [`Bvh::pairs_with`] name a box by is its place in this list.
    /// Reading a walk's data from such a list, rather than by index, reads
    /// memory in the order the walk meets the boxes.
    pub fn in_order<T: Send>(&self, item: impl Fn(usize) -> T + Sync) -> Vec<T> {
        self.sorted.par_iter().map(|&(_, i)| item(i as usize)).collect()
    }

    /// Every pair of overlapping boxes of this tree, once, as `emit` makes
    /// it from the two boxes' places in the tree's order ([`Bvh::in_order`]);
    /// it pushes none, one or several items.
    pub fn self_pairs<T: Send>(&self, emit: impl Fn(usize, usize, &mut Vec<T>) + Sync) -> Vec<T> {
        let mut lists = Vec::new();
        if !self.nodes.is_empty() {
            lists = Walk {
                a: self,
                b: self,
                emit: &emit,
            }
            .within(0);
        }
        joined(lists)
    }

    /// Every pair of a box of this tree and a box of `other` that overlap,
    /// as `emit` makes it from their places in the trees' orders (this
    /// tree's first).
    pub fn pairs_with<T: Send>(&self, other: &Bvh, emit: impl Fn(usize, usize, &mut Vec<T>) + Sync) -> Vec<T> {
        let mut lists = Vec::new();
        if !self.nodes.is_empty() && !other.nodes.is_empty() {
            lists = Walk {
                a: self,
                b: other,
                emit: &emit,
            }
            .between(0, 0);
        }
        joined(lists)
    }
}

/// The lists one after another, moved into one.
fn joined<T>(lists: Vec<Vec<T>>) -> Vec<T> {
    let mut all = Vec::with_capacity(lists.iter().map(Vec::len).sum());
    for list in lists {
        all.extend(list);
    }
    all
}

/// Subtrees with at least this many boxes split their walk into parallel
/// tasks; below it a task walks on alone.
const BOXES_PER_TASK: usize = 2048;

/// A walk of tree `a` against tree `b` (the same tree for pairs within one),
/// collecting `emit`'s items in lists, one per task, in the walk's order.
struct Walk<'w, E> {
    a: &'w Bvh,
    b: &'w Bvh,
    emit: &'w E,
}

impl<E> Walk<'_, E> {
    fn node_a(&self, place: u32) -> &Node {
        &self.a.nodes[place as usize]
    }

    fn node_b(&self, place: u32) -> &Node {
        &self.b.nodes[place as usize]
    }

    /// The pairs within subtree `place` of `a` (against itself).
    fn within<T: Send>(&self, place: u32) -> Vec<Vec<T>>
    where
        E: Fn(usize, usize, &mut Vec<T>) + Sync,
    {
        let node = self.node_a(place);
        if node.second == LEAF || ((node.end - node.start) as usize) < BOXES_PER_TASK {
            let mut list = Vec::new();
            self.within_alone(place, &mut list);
            return vec![list];
        }
        let (first, second) = (place + 1, node.second);
        let (mut lists, (more, across)) = rayon::join(
            || self.within(first),
            || rayon::join(|| self.within(second), || self.between(first, second)),
        );
        lists.extend(more);
        lists.extend(across);
        lists
    }

    /// The pairs of subtree `a` of `a` and subtree `b` of `b`.
    fn between<T: Send>(&self, a: u32, b: u32) -> Vec<Vec<T>>
    where
        E: Fn(usize, usize, &mut Vec<T>) + Sync,
    {
        let (node_a, node_b) = (self.node_a(a), self.node_b(b));
        let (size_a, size_b) = (
            (node_a.end - node_a.start) as usize,
            (node_b.end - node_b.start) as usize,
        );
        if size_a + size_b < BOXES_PER_TASK || !node_a.bounds.overlaps(&node_b.bounds) {
            let mut list = Vec::new();
            self.between_alone(a, b, &mut list);
            return vec![list];
        }
        let [(a0, b0), (a1, b1)] = self.halves(a, b);
        let (mut lists, more) = rayon::join(|| self.between(a0, b0), || self.between(a1, b1));
        lists.extend(more);
        lists
    }

    /// The two pairs of subtrees that subtrees `a` and `b`, not both
    /// leaves, split into: the larger side is split (a leaf cannot be).
    fn halves(&self, a: u32, b: u32) -> [(u32, u32); 2] {
        let (node_a, node_b) = (self.node_a(a), self.node_b(b));
        let larger_a = node_a.end - node_a.start >= node_b.end - node_b.start;
        if node_b.second == LEAF || (node_a.second != LEAF && larger_a) {
            [(a + 1, b), (node_a.second, b)]
        } else {
            [(a, b + 1), (a, node_b.second)]
        }
    }

    /// [`Walk::within`] on this thread, into `list`.
    fn within_alone<T>(&self, place: u32, list: &mut Vec<T>)
    where
        E: Fn(usize, usize, &mut Vec<T>),
    {
        let node = self.node_a(place);
        if node.second == LEAF {
            let range = node.start as usize..node.end as usize;
            for p in range.clone() {
                for q in p + 1..range.end {
                    if self.a.sorted[p].0.overlaps(&self.a.sorted[q].0) {
                        (self.emit)(p, q, list);
                    }
                }
            }
        } else {
            self.within_alone(place + 1, list);
            self.within_alone(node.second, list);
            self.between_alone(place + 1, node.second, list);
        }
    }

    /// [`Walk::between`] on this thread, into `list`.
    fn between_alone<T>(&self, a: u32, b: u32, list: &mut Vec<T>)
    where
        E: Fn(usize, usize, &mut Vec<T>),
    {
        let (node_a, node_b) = (self.node_a(a), self.node_b(b));
        if !node_a.bounds.overlaps(&node_b.bounds) {
            return;
        }
        if node_a.second == LEAF && node_b.second == LEAF {
            for p in node_a.start as usize..node_a.end as usize {
                for q in node_b.start as usize..node_b.end as usize {
                    if self.a.sorted[p].0.overlaps(&self.b.sorted[q].0) {
                        (self.emit)(p, q, list);
                    }
                }
            }
        } else {
            for (a, b) in self.halves(a, b) {
                self.between_alone(a, b, list);
            }
        }
    }
}

/// Appends the subtree over sorted[start..end] to `nodes` (the node first,
/// then its first subtree, then its second), and returns its exact bounds.
fn build(sorted: &[(Aabb, u32)], start: usize, end: usize, nodes: &mut Vec<Node>) -> Aabb {
    let place = nodes.len();
    nodes.push(Node {
        bounds: OuterBox::around(&Aabb::EMPTY),
        start: start as u32,
        end: end as u32,
        second: LEAF,
    });
    let bounds = if end - start > LEAF_SIZE {
        let middle = start + (end - start) / 2;
        let first = build(sorted, start, middle, nodes);
        nodes[place].second = nodes.len() as u32;
        // From the children: each box is read once, not once per level.
        first.union(&build(sorted, middle, end, nodes))
    } else {
        sorted[start..end].iter().fold(Aabb::EMPTY, |a, (b, _)| a.union(b))
    };
    nodes[place].bounds = OuterBox::around(&bounds);
    bounds
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
    fn a_query_finds_exactly_the_overlapping_boxes() {
        for (seed, count, size) in [(1, 1, 0.5), (2, 5, 0.3), (3, 1000, 0.05), (4, 3000, 0.2)] {
            let boxes = random_boxes(seed, count, size);
            let tree = Bvh::new(&boxes);
            for (q, query) in random_boxes(seed + 100, 50, 0.1).iter().enumerate() {
                let mut found = Vec::new();
                tree.for_each_overlap(query, |i| found.push(i));
                found.sort_unstable();
                let expected: Vec<usize> = (0..count).filter(|&i| boxes[i].overlaps(query)).collect();
                assert_eq!(found, expected, "seed {seed}, query {q}");
            }
        }
    }

    #[test]
    fn the_pairs_within_a_tree_are_every_overlapping_pair_once() {
        for (seed, count, size) in [(5, 1, 0.5), (6, 2, 0.9), (7, 9, 0.3), (8, 6000, 0.04)] {
            let boxes = random_boxes(seed, count, size);
            let tree = Bvh::new(&boxes);
            let index = tree.in_order(|i| i);
            let mut found = tree.self_pairs(|p, q, list| {
                let (i, j) = (index[p], index[q]);
                list.push((i.min(j), i.max(j)))
            });
            let met = found.len();
            found.sort_unstable();
            found.dedup();
            assert_eq!(found.len(), met, "seed {seed}: a pair met twice");
            let expected: Vec<(usize, usize)> = (0..count)
                .flat_map(|i| (i + 1..count).map(move |j| (i, j)))
                .filter(|&(i, j)| boxes[i].overlaps(&boxes[j]))
                .collect();
            assert_eq!(found, expected, "seed {seed}");
        }
    }

    #[test]
    fn the_pairs_between_two_trees_are_every_overlapping_pair_once() {
        // Small and large trees on either side, so that the walk splits
        // both the first and the second (and into tasks).
        for (seed, left, right, size) in [
            (10, 1, 7, 2.0),
            (11, 7, 1, 2.0),
            (12, 300, 9000, 0.04),
            (13, 9000, 40, 0.04),
        ] {
            let (a, b) = (random_boxes(seed, left, size), random_boxes(seed + 50, right, size));
            let (tree_a, tree_b) = (Bvh::new(&a), Bvh::new(&b));
            let (index_a, index_b) = (tree_a.in_order(|i| i), tree_b.in_order(|i| i));
            let mut found = tree_a.pairs_with(&tree_b, |p, q, list| list.push((index_a[p], index_b[q])));
            let met = found.len();
            found.sort_unstable();
            found.dedup();
            assert_eq!(found.len(), met, "seed {seed}: a pair met twice");
            let expected: Vec<(usize, usize)> = (0..left)
                .flat_map(|i| (0..right).map(move |j| (i, j)))
                .filter(|&(i, j)| a[i].overlaps(&b[j]))
                .collect();
            assert!(!expected.is_empty(), "seed {seed}");
            assert_eq!(found, expected, "seed {seed}");
        }
    }

    #[test]
    fn outer_boxes_hold_the_boxes_they_round() {
        for x in [
            0.0, -0.0, 1.0, -1.0, 0.1, -0.1, 1e-40, -1e-40, 1e-300, 3.0e38, 1e300, -1e300, 16777217.0,
        ] {
            let (low, high) = (round_down(x), round_up(x));
            assert!((low as f64) <= x && x <= high as f64, "{x}: {low} {high}");
            // At most one step of f32 apart.
            assert!(
                high == low || f32::from_bits(low.to_bits().wrapping_add(1)) >= high || low < 0.0,
                "{x}"
            );
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
        Bvh::new(&[]).for_each_overlap(&unit, |_| panic!("nothing to find"));
        let point = Aabb {
            low: [0.5; 3],
            high: [0.5; 3],
        };
        let mut found = Vec::new();
        Bvh::new(&vec![point; 100]).for_each_overlap(&unit, |i| found.push(i));
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
                |i| found.push(i),
            );
            // The walks split into tasks above 2048 boxes.
            let within = tree.self_pairs(|i, j, list| list.push((i, j)));
            let between = tree.pairs_with(&Bvh::new(&boxes[..3000]), |i, j, list| list.push((i, j)));
            (found, within, between)
        };
        assert_eq!(order(1), order(2));
    }
}
