//! Dense Hessian blocks on groups of vertices that the model's fixed pattern
//! does not couple (contact pairs, which change with the positions), and the
//! sparse matrix that holds them beside a fixed pattern's values.
//!
//! A Newton iteration adds them to the free system: the entries the pattern
//! lacks extend it, so the pattern of that iteration is the fixed one plus
//! the current pairs'. The factorisation keeps its analysis while that union
//! stays the same (linalg/system.rs compares patterns), and analyses again
//! when the set of coupled vertices changes.

use super::LowerPattern;
use std::sync::Arc;

/// Dense symmetric blocks, each on a list of vertices with `dimension`
/// coordinates per vertex: block b couples vertices `vertices[starts[b]..starts[b + 1]]`,
/// its (d·k)² entries stored column by column.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VertexBlocks {
    /// Coordinates per vertex.
    pub dimension: usize,
    /// Each block's vertices, one block after another.
    pub vertices: Vec<usize>,
    /// Where each block's vertices start in `vertices`, and one past the last.
    pub starts: Vec<usize>,
    /// Each block's entries, column-major, one block after another.
    pub values: Vec<f64>,
}

impl VertexBlocks {
    /// No blocks, for vertices of `dimension` coordinates.
    pub fn new(dimension: usize) -> VertexBlocks {
        VertexBlocks {
            dimension,
            vertices: Vec::new(),
            starts: vec![0],
            values: Vec::new(),
        }
    }

    /// The number of blocks.
    pub fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds `weight` times a block on `vertices` whose entries `matrix` are
    /// column-major, (d·k)² of them.
    pub fn push(&mut self, vertices: &[usize], weight: f64, matrix: &[f64]) {
        let n = self.dimension * vertices.len();
        assert_eq!(
            matrix.len(),
            n * n,
            "a block on {} vertices has {n}² entries",
            vertices.len()
        );
        self.vertices.extend_from_slice(vertices);
        self.starts.push(self.vertices.len());
        self.values.extend(matrix.iter().map(|v| weight * v));
    }

    /// Adds `weight` times every block of `other` (of the same dimension).
    pub fn append(&mut self, other: &VertexBlocks, weight: f64) {
        assert_eq!(self.dimension, other.dimension, "blocks of one dimension");
        let shift = self.vertices.len();
        self.vertices.extend_from_slice(&other.vertices);
        self.starts.extend(other.starts[1..].iter().map(|s| s + shift));
        self.values.extend(other.values.iter().map(|v| weight * v));
    }

    /// [`Self::push`] of a block given with 3 coordinates per vertex (as
    /// contact computes in the plane z = 0 of a 2D model): with fewer
    /// coordinates per vertex, only the first `dimension` of each are kept.
    pub fn push_from_3d(&mut self, vertices: &[usize], weight: f64, matrix: &[f64]) {
        let d = self.dimension;
        if d == 3 {
            return self.push(vertices, weight, matrix);
        }
        let (n, m) = (3 * vertices.len(), d * vertices.len());
        assert_eq!(
            matrix.len(),
            n * n,
            "a 3D block on {} vertices has {n}² entries",
            vertices.len()
        );
        let kept = |k: usize| 3 * (k / d) + k % d;
        let reduced: Vec<f64> = (0..m)
            .flat_map(|column| (0..m).map(move |row| matrix[kept(column) * n + kept(row)]))
            .collect();
        self.push(vertices, weight, &reduced)
    }

    /// Calls `entry(row, column, value)` for each entry of the blocks'
    /// lower triangles, in full coordinates (row ≥ column after swapping).
    fn for_each_lower(&self, mut entry: impl FnMut(usize, usize, f64)) {
        let d = self.dimension;
        let mut offset = 0;
        for b in 0..self.len() {
            let vertices = &self.vertices[self.starts[b]..self.starts[b + 1]];
            let n = d * vertices.len();
            let dof = |k: usize| d * vertices[k / d] + k % d;
            for column in 0..n {
                for row in 0..n {
                    let (i, j) = (dof(row), dof(column));
                    // The lower triangle: (i, j) with i > j gathers every slot pair
                    // mapping there, and so does the diagonal (a vertex repeated
                    // in a block lands on it from both slots).
                    if i >= j {
                        entry(i, j, self.values[offset + column * n + row]);
                    }
                }
            }
            offset += n * n;
        }
    }

    /// The sparse matrix `values` on `pattern` (over the unknowns numbered by
    /// `unknown_of`, None for coordinates that are not unknowns; coordinates
    /// past its end are not either: a fixed obstacle's vertices) plus the
    /// blocks: its pattern is `pattern` extended by the blocks' couplings
    /// (the same `Arc` when they add none), and its values.
    pub fn add_to(
        &self,
        pattern: &Arc<LowerPattern>,
        values: &[f64],
        unknown_of: &[Option<usize>],
    ) -> (Arc<LowerPattern>, Vec<f64>) {
        let mut entries: Vec<(usize, usize, f64)> = Vec::with_capacity(self.values.len() / 2);
        self.for_each_lower(|i, j, v| {
            if let (Some(&Some(a)), Some(&Some(b))) = (unknown_of.get(i), unknown_of.get(j)) {
                entries.push((a.max(b), a.min(b), v));
            }
        });
        let missing: Vec<(usize, usize)> = {
            let mut m: Vec<(usize, usize)> = entries
                .iter()
                .filter(|&&(r, c, _)| pattern.position(r, c).is_none())
                .map(|&(r, c, _)| (c, r))
                .collect();
            m.sort_unstable();
            m.dedup();
            m
        };
        let (extended, mut summed) = if missing.is_empty() {
            (pattern.clone(), values.to_vec())
        } else {
            let mut columns: Vec<Vec<usize>> = (0..pattern.size)
                .map(|c| pattern.row_indices[pattern.column_starts[c]..pattern.column_starts[c + 1]].to_vec())
                .collect();
            for &(c, r) in &missing {
                columns[c].push(r);
            }
            columns.iter_mut().for_each(|rows| rows.sort_unstable());
            let extended = LowerPattern::from_columns(columns);
            let mut summed = vec![0.0; extended.nonzeros()];
            for c in 0..pattern.size {
                for k in pattern.column_starts[c]..pattern.column_starts[c + 1] {
                    let at = extended.position(pattern.row_indices[k], c).expect("kept");
                    summed[at] = values[k];
                }
            }
            (Arc::new(extended), summed)
        };
        for (r, c, v) in entries {
            summed[extended.position(r, c).expect("added above")] += v;
        }
        (extended, summed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;

    /// The dense symmetric matrix of a lower-triangle sparse one.
    fn dense(pattern: &LowerPattern, values: &[f64]) -> DMatrix<f64> {
        let mut a = DMatrix::zeros(pattern.size, pattern.size);
        for c in 0..pattern.size {
            for k in pattern.column_starts[c]..pattern.column_starts[c + 1] {
                let r = pattern.row_indices[k];
                a[(r, c)] = values[k];
                a[(c, r)] = values[k];
            }
        }
        a
    }

    #[test]
    fn blocks_added_to_a_pattern_equal_the_dense_sum_on_the_unknowns() {
        // Four vertices in 2D: a diagonal pattern over the 6 unknowns of
        // vertices 0, 2 and 3 (vertex 1 pinned), then a 3-vertex block and a
        // block that repeats a vertex.
        let unknown_of = [Some(0), Some(1), None, None, Some(2), Some(3), Some(4), Some(5)];
        let diagonal = Arc::new(LowerPattern::from_columns((0..6).map(|c| vec![c]).collect()));
        let base: Vec<f64> = (0..6).map(|k| 10.0 + k as f64).collect();
        let mut blocks = VertexBlocks::new(2);
        let block = DMatrix::from_fn(6, 6, |i, j| 1.0 + (i * j) as f64 + (i + j) as f64);
        blocks.push(&[3, 1, 0], 2.0, block.as_slice());
        let repeated = DMatrix::from_fn(4, 4, |i, j| (i + j) as f64 + 0.5);
        blocks.push(&[2, 2], 1.0, repeated.as_slice());
        let (pattern, values) = blocks.add_to(&diagonal, &base, &unknown_of);

        // The reference: the full 8×8 sum, then its unknowns' rows and columns.
        let mut full = DMatrix::zeros(8, 8);
        let scatter = |full: &mut DMatrix<f64>, vertices: &[usize], m: &DMatrix<f64>, w: f64| {
            for (a, &va) in vertices.iter().enumerate() {
                for (b, &vb) in vertices.iter().enumerate() {
                    for i in 0..2 {
                        for j in 0..2 {
                            full[(2 * va + i, 2 * vb + j)] += w * m[(2 * a + i, 2 * b + j)];
                        }
                    }
                }
            }
        };
        scatter(&mut full, &[3, 1, 0], &block, 2.0);
        scatter(&mut full, &[2, 2], &repeated, 1.0);
        let kept = [0, 1, 4, 5, 6, 7];
        let mut expected = DMatrix::from_fn(6, 6, |i, j| full[(kept[i], kept[j])]);
        for k in 0..6 {
            expected[(k, k)] += base[k];
        }
        let got = dense(&pattern, &values);
        assert!((&got - &expected).amax() < 1e-12, "{got} against {expected}");
        // Entries of the pinned vertex are dropped, and the pattern grew only where needed.
        assert!(pattern.nonzeros() > 6 && pattern.nonzeros() <= 21);
    }

    #[test]
    fn blocks_inside_the_pattern_keep_it() {
        let full = Arc::new(LowerPattern::from_columns(vec![vec![0, 1], vec![1]]));
        let mut blocks = VertexBlocks::new(1);
        blocks.push(&[1, 0], 1.0, &[1.0, 2.0, 2.0, 3.0]);
        let (pattern, values) = blocks.add_to(&full, &[1.0, 1.0, 1.0], &[Some(0), Some(1)]);
        assert!(Arc::ptr_eq(&pattern, &full));
        assert_eq!(values, vec![4.0, 3.0, 2.0]);
    }

    #[test]
    fn appended_blocks_equal_the_same_blocks_pushed_with_the_weight_multiplied() {
        let (a, b) = ([1.0, 2.0, 2.0, 5.0], [3.0, -1.0, -1.0, 4.0]);
        let mut first = VertexBlocks::new(1);
        first.push(&[0, 2], 2.0, &a);
        let mut second = VertexBlocks::new(1);
        second.push(&[1, 3], 3.0, &b);
        second.push(&[2, 1], 1.0, &a);
        first.append(&second, 0.5);
        let mut expected = VertexBlocks::new(1);
        expected.push(&[0, 2], 2.0, &a);
        expected.push(&[1, 3], 1.5, &b);
        expected.push(&[2, 1], 0.5, &a);
        assert_eq!(first, expected);
    }

    #[test]
    fn a_3d_block_on_a_2d_model_keeps_the_x_and_y_coordinates_of_each_vertex() {
        // Entry (i, j) of the 6 × 6 block is 10 i + j.
        let matrix: Vec<f64> = (0..36).map(|k| (10 * (k % 6) + k / 6) as f64).collect();
        let mut blocks = VertexBlocks::new(2);
        blocks.push_from_3d(&[4, 7], 2.0, &matrix);
        // Kept coordinates 0, 1, 3, 4; column-major.
        let kept = [0, 1, 3, 4];
        let expected: Vec<f64> = (0..16).map(|k| 2.0 * (10 * kept[k % 4] + kept[k / 4]) as f64).collect();
        assert_eq!(blocks.values, expected);
        let mut same = VertexBlocks::new(3);
        same.push_from_3d(&[4, 7], 1.0, &matrix);
        assert_eq!(same.values, matrix);
    }
}
