//! Triangular solves L Lᵀ X = B with a supernodal Cholesky factor, for the
//! solves that repeat with one factor: the quasi-Newton and local/global
//! iterations (three right-hand sides each iteration), and the block solves
//! of the eigensolvers.
//!
//! faer's own solve multiplies each supernode's block by the right-hand
//! sides through its general matrix product, whose set-up costs more than
//! the work for the many small supernodes of a sparse factor, and it runs on
//! one thread (split across threads, it was slower still). Here each
//! supernode is a few contiguous loops over its columns, and the work is
//! shared between two threads by the elimination tree: two groups of
//! disjoint subtrees, of about equal work, are solved side by side, and only
//! the supernodes above them (the top separators) one after the other.
//!
//! The arithmetic of every entry is done in one fixed order, whatever the
//! number of threads: a subtree's updates of the rows above it are gathered
//! in the subtree's own buffer and applied afterwards, first group's before
//! the second's. The results are therefore the same bits on any thread
//! count (they differ from faer's solve by rounding).

use super::kernels::{dispatch, dot_in_lanes as dot, Widen};
use faer::sparse::linalg::cholesky::supernodal::SymbolicSupernodalCholesky;

/// Supernodes the split may move up into the serial top in its search.
const MOST_TOP_SUPERNODES: usize = 64;
/// Right-hand sides per factor entry below which one thread is faster
/// (the hand-off costs more than half the work).
const SMALLEST_PARALLEL_WORK: usize = 200_000;

/// One supernode: columns `start..end` of the permuted matrix, the rows
/// below its diagonal block, and where its values start.
struct Supernode {
    start: usize,
    end: usize,
    rows: std::ops::Range<usize>,
    values: usize,
    /// For a supernode of a group: where its rows in the top begin (rows
    /// are increasing, and its ancestors in the group precede those in the
    /// top). For a top supernode: its row count.
    top_rows_from: usize,
}

/// The factor's structure and the two-thread schedule, computed once per
/// symbolic analysis.
pub struct SupernodalSolve {
    size: usize,
    supernodes: Vec<Supernode>,
    /// Rows below each supernode's diagonal block, in 32 bits: the
    /// substitutions read them with the factor, and local/global's solves
    /// follow a gradient pass that fills the cache, so fewer bytes count.
    row_indices: Vec<u32>,
    /// The two groups of subtrees, each supernode list increasing.
    groups: [Vec<usize>; 2],
    /// The supernodes above the groups, increasing.
    top: Vec<usize>,
    /// For each row: its place among the top supernodes' columns, or `NOT_TOP`.
    top_slot: Vec<usize>,
    top_rows: usize,
    /// The most rows below any supernode's diagonal block.
    longest: usize,
    /// The most columns of any supernode.
    widest: usize,
    /// Entries of the factor (the work of one right-hand side, twice).
    entries: usize,
}

const NOT_TOP: usize = usize::MAX;

impl SupernodalSolve {
    /// None when the matrix has more rows than 32-bit indices reach.
    pub fn new(symbolic: &SymbolicSupernodalCholesky<usize>) -> Option<SupernodalSolve> {
        u32::try_from(symbolic.nrows()).ok()?;
        let count = symbolic.n_supernodes();
        let (begin, end) = (symbolic.supernode_begin(), symbolic.supernode_end());
        let (row_pointers, value_pointers) = (symbolic.col_ptr_for_row_idx(), symbolic.col_ptr_for_val());
        let supernodes: Vec<Supernode> = (0..count)
            .map(|s| Supernode {
                start: begin[s],
                end: end[s],
                rows: row_pointers[s]..row_pointers[s + 1],
                values: value_pointers[s],
                top_rows_from: row_pointers[s + 1] - row_pointers[s],
            })
            .collect();
        let size = symbolic.nrows();
        let row_indices: Vec<u32> = symbolic.row_idx().iter().map(|&row| row as u32).collect();
        let mut owner = vec![0; size];
        for (s, node) in supernodes.iter().enumerate() {
            owner[node.start..node.end].fill(s);
        }
        // A supernode's parent holds the first row below its diagonal block.
        let parent: Vec<Option<usize>> = supernodes
            .iter()
            .map(|node| row_indices[node.rows.clone()].first().map(|&row| owner[row as usize]))
            .collect();
        let work: Vec<usize> = supernodes
            .iter()
            .map(|node| {
                let width = node.end - node.start;
                width * (width + node.rows.len())
            })
            .collect();
        let (groups, top) = split(&parent, &work);
        let mut supernodes = supernodes;
        let mut top_slot = vec![NOT_TOP; size];
        let mut top_rows = 0;
        for &s in &top {
            for slot in &mut top_slot[supernodes[s].start..supernodes[s].end] {
                *slot = top_rows;
                top_rows += 1;
            }
        }
        for group in &groups {
            for &s in group {
                let node = &mut supernodes[s];
                let rows = &row_indices[node.rows.clone()];
                debug_assert!(rows.windows(2).all(|pair| pair[0] < pair[1]));
                node.top_rows_from = rows
                    .iter()
                    .position(|&row| top_slot[row as usize] != NOT_TOP)
                    .unwrap_or(rows.len());
                debug_assert!(rows[node.top_rows_from..]
                    .iter()
                    .all(|&row| top_slot[row as usize] != NOT_TOP));
            }
        }
        Some(SupernodalSolve {
            longest: supernodes.iter().map(|node| node.rows.len()).max().unwrap_or(0),
            widest: supernodes.iter().map(|node| node.end - node.start).max().unwrap_or(0),
            size,
            supernodes,
            row_indices,
            groups,
            top,
            top_slot,
            top_rows,
            entries: work.iter().sum(),
        })
    }

    /// The reciprocals of the factor's diagonal, in column order: the
    /// substitutions multiply by them (a division per column and right-hand
    /// side waited on its result).
    pub fn reciprocal_diagonal(&self, values: &[f64]) -> Vec<f64> {
        let mut reciprocals = vec![0.0; self.size];
        for node in &self.supernodes {
            let height = node.end - node.start + node.rows.len();
            for (j, reciprocal) in reciprocals[node.start..node.end].iter_mut().enumerate() {
                *reciprocal = 1.0 / values[node.values + j * height + j];
            }
        }
        reciprocals
    }

    /// Solves L Lᵀ X = B in place for `columns` right-hand sides stored as
    /// `layout` says, with `factor` (values and [`Self::reciprocal_diagonal`])
    /// the factor of the matrix permuted by `permutation` (forward and
    /// inverse; none: not permuted).
    pub fn solve(
        &self,
        factor: Factor,
        rhs: &mut [f64],
        columns: usize,
        layout: Layout,
        permutation: Option<(&[usize], &[usize])>,
    ) {
        let n = self.size;
        debug_assert_eq!(rhs.len(), n * columns);
        let at = |i: usize, c: usize| match layout {
            Layout::Columns => c * n + i,
            Layout::Rows => i * columns + c,
        };
        // Row by row (the columns of a row side by side), so that a row's
        // gather and scatter touch one cache line, in the factor's order.
        let mut x = vec![0.0; rhs.len()];
        for (i, row) in x.chunks_exact_mut(columns).enumerate() {
            let source = permutation.map_or(i, |(forward, _)| forward[i]);
            for (c, value) in row.iter_mut().enumerate() {
                *value = rhs[at(source, c)];
            }
        }
        self.solve_rows(factor, &mut x, columns);
        for i in 0..n {
            let source = permutation.map_or(i, |(_, inverse)| inverse[i]);
            for c in 0..columns {
                rhs[at(i, c)] = x[source * columns + c];
            }
        }
    }

    /// The solve on rows of `columns` values each.
    fn solve_rows(&self, factor: Factor, x: &mut [f64], columns: usize) {
        let parallel = self.entries * columns >= SMALLEST_PARALLEL_WORK && rayon::current_num_threads() > 1;
        // Every access to x goes through this pointer, the groups' and this
        // thread's alike, never through `x` itself.
        let shared = SharedRows(x.as_mut_ptr(), x.len());
        // Forward: the two groups side by side, their updates of the top
        // rows in their own buffers, applied in a fixed order.
        let group_forward = |group: &Vec<usize>| {
            let mut above = vec![0.0; self.top_rows * columns];
            // SAFETY: a group writes only its own supernodes' rows of x; the
            // top rows go to `above`. The groups' subtrees are disjoint.
            let x = unsafe { shared.get() };
            forward_through(self, group, factor, x, columns, &mut above);
            above
        };
        let [first, second] = match parallel {
            true => {
                let (a, b) = rayon::join(|| group_forward(&self.groups[0]), || group_forward(&self.groups[1]));
                [a, b]
            }
            false => [group_forward(&self.groups[0]), group_forward(&self.groups[1])],
        };
        // From here on x is reached through `shared` alone.
        // SAFETY: the groups are done; this thread is the only one using x.
        let x = unsafe { shared.get() };
        for above in [first, second] {
            for (row, &slot) in self.top_slot.iter().enumerate() {
                if slot != NOT_TOP {
                    for c in 0..columns {
                        x[row * columns + c] -= above[slot * columns + c];
                    }
                }
            }
        }
        forward_through(self, &self.top, factor, x, columns, &mut []);
        // Backward: the top first, then the groups, which only read it.
        backward_through(self, &self.top, factor, x, columns);
        let group_backward = |group: &Vec<usize>| {
            // SAFETY: a group writes only its own supernodes' rows and reads
            // those and the top's, which no one writes now.
            let x = unsafe { shared.get() };
            backward_through(self, group, factor, x, columns);
        };
        match parallel {
            true => {
                rayon::join(|| group_backward(&self.groups[0]), || group_backward(&self.groups[1]));
            }
            false => {
                group_backward(&self.groups[0]);
                group_backward(&self.groups[1]);
            }
        }
    }

    /// Supernode `s`, the rows below its diagonal block, and its values
    /// (column-major, its columns' full height).
    #[inline(always)]
    fn supernode<'a, T>(&'a self, s: usize, values: &'a [T]) -> (&'a Supernode, &'a [u32], &'a [T]) {
        let node = &self.supernodes[s];
        let rows = &self.row_indices[node.rows.clone()];
        let width = node.end - node.start;
        (
            node,
            rows,
            &values[node.values..node.values + (width + rows.len()) * width],
        )
    }

    /// Forward substitution through supernode `s`: its diagonal block, then
    /// its rows below, subtracted from x, or, for the top's rows when `above`
    /// is not empty (a group's supernode), added to `above`. `update` holds
    /// a column of updates after another.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn forward<T: Widen>(
        &self,
        s: usize,
        values: &[T],
        reciprocals: &[f64],
        x: &mut [f64],
        columns: usize,
        above: &mut [f64],
        scratch: &mut Scratch,
    ) {
        let Scratch { solved, rows: update } = scratch;
        let (node, rows, block) = self.supernode(s, values);
        let (width, height) = (node.end - node.start, node.end - node.start + rows.len());
        // The diagonal block, a column of x at a time (contiguous, so vectorised).
        let diagonal = &mut x[node.start * columns..node.end * columns];
        let solved = &mut solved[..width * columns];
        for (c, solved) in solved.chunks_exact_mut(width).enumerate() {
            for (j, value) in solved.iter_mut().enumerate() {
                *value = diagonal[j * columns + c];
            }
        }
        // A column of the block meets every right-hand side while it is in
        // the nearest cache (each entry still sees the same operations).
        for j in 0..width {
            let column = &block[j * height + j + 1..j * height + width];
            let reciprocal = reciprocals[node.start + j];
            for solved in solved.chunks_exact_mut(width) {
                let value = solved[j] * reciprocal;
                solved[j] = value;
                for (d, l) in solved[j + 1..].iter_mut().zip(column) {
                    *d -= l.widen() * value;
                }
            }
        }
        for (c, solved) in solved.chunks_exact(width).enumerate() {
            for (j, value) in solved.iter().enumerate() {
                diagonal[j * columns + c] = *value;
            }
        }
        let p = rows.len();
        if p == 0 {
            return;
        }
        let update = &mut update[..p * columns];
        update.fill(0.0);
        // Four columns of the block at a time: each pass over `update` does
        // four multiply-adds per entry it loads and stores, and the four
        // serve every right-hand side before the next four are read.
        let below = |j: usize| &block[j * height + width..(j + 1) * height];
        let mut j = 0;
        while j + 4 <= width {
            let (l0, l1, l2, l3) = (below(j), below(j + 1), below(j + 2), below(j + 3));
            for (update, solved) in update.chunks_exact_mut(p).zip(solved.chunks_exact(width)) {
                let (v0, v1, v2, v3) = (solved[j], solved[j + 1], solved[j + 2], solved[j + 3]);
                for i in 0..p {
                    update[i] += l0[i].widen() * v0 + l1[i].widen() * v1 + l2[i].widen() * v2 + l3[i].widen() * v3;
                }
            }
            j += 4;
        }
        for j in j..width {
            for (update, solved) in update.chunks_exact_mut(p).zip(solved.chunks_exact(width)) {
                for (u, l) in update.iter_mut().zip(below(j)) {
                    *u += l.widen() * solved[j];
                }
            }
        }
        let split = match above.is_empty() {
            true => p,
            false => node.top_rows_from,
        };
        for (i, row) in rows[..split].iter().enumerate() {
            let row = *row as usize;
            for c in 0..columns {
                x[row * columns + c] -= update[c * p + i];
            }
        }
        for (i, row) in rows.iter().enumerate().skip(split) {
            let row = *row as usize;
            let slot = self.top_slot[row];
            for c in 0..columns {
                above[slot * columns + c] += update[c * p + i];
            }
        }
    }

    /// Backward substitution through supernode `s`: the rows below it, then
    /// its diagonal block transposed. `gathered` holds a column of x's rows
    /// below after another.
    #[inline(always)]
    fn backward<T: Widen>(
        &self,
        s: usize,
        values: &[T],
        reciprocals: &[f64],
        x: &mut [f64],
        columns: usize,
        scratch: &mut Scratch,
    ) {
        let Scratch { solved, rows: gathered } = scratch;
        let (node, rows, block) = self.supernode(s, values);
        let (width, height) = (node.end - node.start, node.end - node.start + rows.len());
        let p = rows.len();
        let gathered = &mut gathered[..p * columns];
        for (i, row) in rows.iter().enumerate() {
            let row = *row as usize;
            for c in 0..columns {
                gathered[c * p + i] = x[row * columns + c];
            }
        }
        let diagonal = &mut x[node.start * columns..node.end * columns];
        if p > 0 {
            for j in 0..width {
                let below = &block[j * height + width..(j + 1) * height];
                for (c, gathered) in gathered.chunks_exact(p).enumerate() {
                    diagonal[j * columns + c] -= dot(below, gathered);
                }
            }
        }
        let solved = &mut solved[..width * columns];
        for (c, solved) in solved.chunks_exact_mut(width).enumerate() {
            for (j, value) in solved.iter_mut().enumerate() {
                *value = diagonal[j * columns + c];
            }
        }
        for j in (0..width).rev() {
            let column = &block[j * height + j + 1..j * height + width];
            let reciprocal = reciprocals[node.start + j];
            for solved in solved.chunks_exact_mut(width) {
                let value = solved[j] - dot(column, &solved[j + 1..]);
                solved[j] = value * reciprocal;
            }
        }
        for (c, solved) in solved.chunks_exact(width).enumerate() {
            for (j, value) in solved.iter().enumerate() {
                diagonal[j * columns + c] = *value;
            }
        }
    }
}

dispatch! {
    /// Forward substitution through the supernodes of `list`, in order.
    forward_through(
        solve: &SupernodalSolve,
        list: &[usize],
        factor: Factor,
        x: &mut [f64],
        columns: usize,
        above: &mut [f64]
    ) -> () {
        match factor.values {
            Values::Double(values) => forward_list(solve, list, values, factor.reciprocals, x, columns, above),
            Values::Single(values) => forward_list(solve, list, values, factor.reciprocals, x, columns, above),
        }
    }
}

dispatch! {
    /// Backward substitution through the supernodes of `list`, in reverse.
    backward_through(solve: &SupernodalSolve, list: &[usize], factor: Factor, x: &mut [f64], columns: usize) -> () {
        match factor.values {
            Values::Double(values) => backward_list(solve, list, values, factor.reciprocals, x, columns),
            Values::Single(values) => backward_list(solve, list, values, factor.reciprocals, x, columns),
        }
    }
}

#[inline(always)]
fn forward_list<T: Widen>(
    solve: &SupernodalSolve,
    list: &[usize],
    values: &[T],
    reciprocals: &[f64],
    x: &mut [f64],
    columns: usize,
    above: &mut [f64],
) {
    let mut scratch = Scratch::new(solve, columns);
    for &s in list {
        solve.forward(s, values, reciprocals, x, columns, above, &mut scratch);
    }
}

#[inline(always)]
fn backward_list<T: Widen>(
    solve: &SupernodalSolve,
    list: &[usize],
    values: &[T],
    reciprocals: &[f64],
    x: &mut [f64],
    columns: usize,
) {
    let mut scratch = Scratch::new(solve, columns);
    for &s in list.iter().rev() {
        solve.backward(s, values, reciprocals, x, columns, &mut scratch);
    }
}

/// How right-hand sides are stored: one column after another, or row by
/// row (entry (i, c) at i·columns + c, as a vertex's coordinates are).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Layout {
    Columns,
    Rows,
}

/// A factor's values below and beside the diagonal, as computed or rounded
/// to single precision (then half the memory a solve reads).
#[derive(Clone, Copy)]
pub enum Values<'a> {
    Double(&'a [f64]),
    Single(&'a [f32]),
}

/// A numeric factor: its values and its diagonal's reciprocals (from the
/// values as computed).
#[derive(Clone, Copy)]
pub struct Factor<'a> {
    pub values: Values<'a>,
    pub reciprocals: &'a [f64],
}

/// A thread's working columns: the diagonal block's rows and the rows below
/// it, each for one right-hand side after another.
struct Scratch {
    solved: Vec<f64>,
    rows: Vec<f64>,
}

impl Scratch {
    fn new(solve: &SupernodalSolve, columns: usize) -> Scratch {
        Scratch {
            solved: vec![0.0; solve.widest * columns],
            rows: vec![0.0; solve.longest * columns],
        }
    }
}

/// x shared by the two groups, which write disjoint rows of it.
#[derive(Clone, Copy)]
struct SharedRows(*mut f64, usize);

// SAFETY: see `solve_rows`: the threads write disjoint entries.
unsafe impl Send for SharedRows {}
unsafe impl Sync for SharedRows {}

impl SharedRows {
    /// SAFETY: callers write only entries no other thread reads or writes meanwhile.
    #[allow(clippy::mut_from_ref)]
    unsafe fn get(&self) -> &mut [f64] {
        unsafe { std::slice::from_raw_parts_mut(self.0, self.1) }
    }
}

/// Two groups of disjoint subtrees and the supernodes above them, for the
/// least time: the top's work plus the larger group's. Starting from the
/// roots, the heaviest subtree of the frontier moves its root up into the
/// top, the frontier is shared out (heaviest first, to the lighter group),
/// and the best of these splits is kept.
fn split(parent: &[Option<usize>], work: &[usize]) -> ([Vec<usize>; 2], Vec<usize>) {
    let count = parent.len();
    let mut children = vec![Vec::new(); count];
    let mut subtree = work.to_vec();
    // Children precede their parents, so one increasing pass sums subtrees.
    for s in 0..count {
        if let Some(p) = parent[s] {
            debug_assert!(p > s);
            children[p].push(s);
            subtree[p] += subtree[s];
        }
    }
    let share_out = |frontier: &[usize]| -> (usize, [Vec<usize>; 2]) {
        let mut sorted = frontier.to_vec();
        sorted.sort_by_key(|&s| (std::cmp::Reverse(subtree[s]), s));
        let mut bins: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
        let mut loads = [0usize; 2];
        for s in sorted {
            let lighter = usize::from(loads[1] < loads[0]);
            bins[lighter].push(s);
            loads[lighter] += subtree[s];
        }
        (loads[0].max(loads[1]), bins)
    };
    let mut top = Vec::new();
    let mut top_work = 0;
    let mut frontier: Vec<usize> = (0..count).filter(|&s| parent[s].is_none()).collect();
    let (larger, bins) = share_out(&frontier);
    let mut best = (larger, 0, bins);
    while top.len() < MOST_TOP_SUPERNODES {
        let Some((position, _)) = frontier.iter().enumerate().max_by_key(|&(_, &s)| (subtree[s], s)) else {
            break;
        };
        let heaviest = frontier.swap_remove(position);
        top.push(heaviest);
        top_work += work[heaviest];
        frontier.extend(&children[heaviest]);
        let (larger, bins) = share_out(&frontier);
        if top_work + larger < best.0 {
            best = (top_work + larger, top.len(), bins);
        }
    }
    let (_, top_count, bins) = best;
    top.truncate(top_count);
    top.sort_unstable();
    // Each group lists every supernode of its subtrees, increasing.
    let groups = bins.map(|roots| {
        let mut members = Vec::new();
        let mut stack = roots;
        while let Some(s) = stack.pop() {
            members.push(s);
            stack.extend(&children[s]);
        }
        members.sort_unstable();
        members
    });
    (groups, top)
}

#[cfg(test)]
mod tests {
    use crate::linalg::{LowerPattern, SparseCholesky};

    /// A 3D grid graph's Laplacian plus a diagonal (7-point stencil), SPD:
    /// the shape of the quasi-Newton matrices, large enough for supernodes
    /// and for nested dissection.
    fn grid(side: [usize; 3]) -> (LowerPattern, Vec<f64>) {
        let index = |i: usize, j: usize, k: usize| i + side[0] * (j + side[1] * k);
        let n = side.iter().product();
        let mut columns = vec![Vec::new(); n];
        for k in 0..side[2] {
            for j in 0..side[1] {
                for i in 0..side[0] {
                    let v = index(i, j, k);
                    columns[v].push(v);
                    if i + 1 < side[0] {
                        columns[v].push(index(i + 1, j, k));
                    }
                    if j + 1 < side[1] {
                        columns[v].push(index(i, j + 1, k));
                    }
                    if k + 1 < side[2] {
                        columns[v].push(index(i, j, k + 1));
                    }
                }
            }
        }
        let pattern = LowerPattern::from_columns(columns);
        let mut values = vec![-1.0; pattern.nonzeros()];
        for k in pattern.diagonal_positions() {
            values[k] = 6.5;
        }
        (pattern, values)
    }

    fn right_hand_sides(n: usize, columns: usize) -> Vec<f64> {
        (0..n * columns).map(|i| ((i * 37 % 101) as f64 - 50.0) / 7.0).collect()
    }

    /// The solve satisfies A X = B to rounding for one, three and thirteen
    /// right-hand sides, on a factor that is supernodal, stored as columns or
    /// row by row.
    #[test]
    fn it_solves_several_right_hand_sides() {
        let (pattern, values) = grid([12, 10, 14]);
        let mut cholesky = SparseCholesky::analyse(&pattern).unwrap();
        assert!(cholesky.has_own_solve(), "the test needs a supernodal factor");
        cholesky.factorize(&values).unwrap();
        let n = pattern.size;
        for columns in [1, 3, 13] {
            let b = right_hand_sides(n, columns);
            let mut x = b.clone();
            cholesky.solve_columns_in_place(&mut x, columns).unwrap();
            for c in 0..columns {
                let mut product = vec![0.0; n];
                pattern.symmetric_multiply(&values, &x[c * n..(c + 1) * n], &mut product);
                let worst = product
                    .iter()
                    .zip(&b[c * n..])
                    .map(|(p, q)| (p - q).abs())
                    .fold(0.0, f64::max);
                assert!(worst < 1e-12, "{columns} columns: residual {worst:e}");
            }
            // Row by row, the same solve: the same bits.
            let mut rows: Vec<f64> = (0..n * columns).map(|k| b[(k % columns) * n + k / columns]).collect();
            cholesky.solve_rows_in_place(&mut rows, columns).unwrap();
            assert!((0..n * columns).all(|k| rows[k].to_bits() == x[(k % columns) * n + k / columns].to_bits()));
        }
    }

    /// With the factor rounded to single precision a solve applies the
    /// inverse of an SPD matrix near A: symmetric and positive to
    /// double-precision rounding (uᵀS v = vᵀS u, uᵀS u > 0), with residuals
    /// near single precision's, not double's; a new factorisation is exact again.
    #[test]
    fn a_single_precision_factor_applies_a_nearby_spd_inverse() {
        let (pattern, values) = grid([12, 10, 14]);
        let n = pattern.size;
        let mut cholesky = SparseCholesky::analyse(&pattern).unwrap();
        cholesky.factorize(&values).unwrap();
        assert!(cholesky.keep_in_single_precision());
        let (u, v) = (
            right_hand_sides(n, 1),
            (0..n).map(|i| (i as f64 * 0.37).sin()).collect::<Vec<_>>(),
        );
        let (mut su, mut sv) = (u.clone(), v.clone());
        cholesky.solve_in_place(&mut su).unwrap();
        cholesky.solve_in_place(&mut sv).unwrap();
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
        let (a, b) = (dot(&u, &sv), dot(&v, &su));
        assert!((a - b).abs() <= 1e-13 * a.abs().max(b.abs()), "{a} against {b}");
        assert!(dot(&u, &su) > 0.0);
        let residual = |x: &[f64], b: &[f64]| {
            let mut product = vec![0.0; n];
            pattern.symmetric_multiply(&values, x, &mut product);
            product.iter().zip(b).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max)
        };
        let rounded = residual(&su, &u);
        assert!(
            rounded > 1e-12 && rounded < 1e-4,
            "single-precision residual {rounded:e}"
        );
        cholesky.factorize(&values).unwrap();
        let mut exact = u.clone();
        cholesky.solve_in_place(&mut exact).unwrap();
        assert!(residual(&exact, &u) < 1e-12);
    }

    /// One thread and two give the same bits: the groups' updates of the
    /// top are applied in one order either way.
    #[test]
    fn any_thread_count_gives_the_same_bits() {
        let (pattern, values) = grid([12, 10, 14]);
        let mut cholesky = SparseCholesky::analyse(&pattern).unwrap();
        cholesky.factorize(&values).unwrap();
        let b = right_hand_sides(pattern.size, 3);
        let solved: Vec<Vec<f64>> = [1, 2]
            .map(|threads| {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let mut x = b.clone();
                pool.install(|| cholesky.solve_columns_in_place(&mut x, 3)).unwrap();
                x
            })
            .into();
        assert!(solved[0]
            .iter()
            .zip(&solved[1])
            .all(|(a, b)| a.to_bits() == b.to_bits()));
    }

    /// The schedule: every supernode is in one group or the top, a group's
    /// supernodes have their parents in the same group or the top, and the
    /// two threads share the work.
    #[test]
    fn the_split_covers_the_tree_with_two_balanced_independent_groups() {
        let (pattern, values) = grid([40, 10, 12]);
        let mut cholesky = SparseCholesky::analyse(&pattern).unwrap();
        cholesky.factorize(&values).unwrap();
        let solve = cholesky.own_solve().unwrap();
        let count = solve.supernodes.len();
        let mut place = vec![None; count];
        for (name, list) in [(0, &solve.groups[0]), (1, &solve.groups[1]), (2, &solve.top)] {
            for &s in list {
                assert!(place[s].is_none(), "supernode {s} in two places");
                place[s] = Some(name);
            }
        }
        assert!(place.iter().all(Option::is_some));
        let mut owner = vec![0; solve.size];
        for (s, node) in solve.supernodes.iter().enumerate() {
            owner[node.start..node.end].fill(s);
        }
        for (s, node) in solve.supernodes.iter().enumerate() {
            for &row in &solve.row_indices[node.rows.clone()] {
                let above = place[owner[row as usize]].unwrap();
                assert!(
                    above == 2 || Some(above) == place[s],
                    "supernode {s} reaches into the other group"
                );
            }
        }
        let work = |list: &[usize]| {
            list.iter()
                .map(|&s| {
                    let node = &solve.supernodes[s];
                    (node.end - node.start) * (node.end - node.start + node.rows.len())
                })
                .sum::<usize>() as f64
        };
        // The estimated time, the top's work and the larger group's, against
        // the whole factor's on one thread. The tree of this grid allows
        // 0.70 (the 16,665-vertex bar of the benchmarks 0.53).
        let (a, b, top) = (work(&solve.groups[0]), work(&solve.groups[1]), work(&solve.top));
        assert!(top + a.max(b) <= 0.75 * (top + a + b), "top {top}, groups {a} and {b}");
    }
}
