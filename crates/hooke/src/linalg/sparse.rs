//! Symmetric sparse matrices stored as their lower triangle in compressed
//! sparse columns (CSC): the pattern is built once, values are refilled.

/// Sparsity pattern of the lower triangle (row ≥ column) of a symmetric n×n matrix.
/// Row indices are sorted within each column and every diagonal entry is present.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LowerPattern {
    /// n, the number of rows and columns.
    pub size: usize,
    /// Where each column's entries start in `row_indices` (and the value array), n + 1 of
    /// them, the last the number of entries.
    pub column_starts: Vec<usize>,
    /// The row of each stored entry, column by column.
    pub row_indices: Vec<usize>,
}

impl LowerPattern {
    /// Builds a pattern from per-column row lists (each must be sorted, unique, ≥ the column).
    pub fn from_columns(columns: Vec<Vec<usize>>) -> Self {
        let size = columns.len();
        let mut column_starts = Vec::with_capacity(size + 1);
        column_starts.push(0);
        let mut row_indices = Vec::with_capacity(columns.iter().map(Vec::len).sum());
        for column in columns {
            row_indices.extend_from_slice(&column);
            column_starts.push(row_indices.len());
        }
        LowerPattern {
            size,
            column_starts,
            row_indices,
        }
    }

    /// The number of stored entries (of the lower triangle, the diagonal included).
    pub fn nonzeros(&self) -> usize {
        self.row_indices.len()
    }

    /// Position of entry (row, column) in the value array, for row ≥ column.
    pub fn position(&self, row: usize, column: usize) -> Option<usize> {
        let start = self.column_starts[column];
        let rows = &self.row_indices[start..self.column_starts[column + 1]];
        rows.binary_search(&row).ok().map(|k| start + k)
    }

    /// Positions of the diagonal entries.
    pub fn diagonal_positions(&self) -> Vec<usize> {
        (0..self.size)
            .map(|j| self.column_starts[j]) // the diagonal is the first (smallest) row of each column
            .collect()
    }

    /// The diagonal of the matrix with these values, if every off-diagonal value
    /// is zero (a lumped mass), so that products can be plain scalings.
    pub fn diagonal_if_diagonal(&self, values: &[f64]) -> Option<Vec<f64>> {
        let diagonal = self.diagonal_positions();
        let nonzero = values.iter().filter(|v| **v != 0.0).count();
        let nonzero_diagonal = diagonal.iter().filter(|&&k| values[k] != 0.0).count();
        (nonzero == nonzero_diagonal).then(|| diagonal.iter().map(|&k| values[k]).collect())
    }

    /// y = A x for the symmetric matrix whose lower triangle holds `values`.
    pub fn symmetric_multiply(&self, values: &[f64], x: &[f64], y: &mut [f64]) {
        y.iter_mut().for_each(|v| *v = 0.0);
        for column in 0..self.size {
            let x_column = x[column];
            let mut accumulated = 0.0;
            for k in self.column_starts[column]..self.column_starts[column + 1] {
                let row = self.row_indices[k];
                let a = values[k];
                y[row] += a * x_column;
                if row != column {
                    accumulated += a * x[row];
                }
            }
            y[column] += accumulated;
        }
    }

    /// Y = A X for a block of vectors (the columns of X): one pass over the
    /// matrix serves them all.
    pub fn symmetric_multiply_block(&self, values: &[f64], x: &nalgebra::DMatrix<f64>) -> nalgebra::DMatrix<f64> {
        let width = x.ncols();
        // Rows of X contiguous, so each matrix entry meets all columns at once.
        let rows = x.transpose();
        let mut out = vec![0.0; self.size * width];
        super::kernels::symmetric_block_product(
            &self.column_starts,
            &self.row_indices,
            values,
            rows.as_slice(),
            width,
            &mut out,
        );
        nalgebra::DMatrix::from_row_slice(self.size, width, &out)
    }

    /// The sub-pattern on the kept unknowns. `new_index[i]` is the new index of
    /// unknown i (None when it is removed), and must preserve order. Returns the
    /// pattern and, for each of its entries, the position of the entry it copies.
    pub fn restrict(&self, new_index: &[Option<usize>]) -> (LowerPattern, Vec<usize>) {
        let mut columns = Vec::new();
        let mut source = Vec::new();
        for column in 0..self.size {
            let Some(_) = new_index[column] else { continue };
            let mut rows = Vec::new();
            for k in self.column_starts[column]..self.column_starts[column + 1] {
                if let Some(row) = new_index[self.row_indices[k]] {
                    rows.push(row);
                    source.push(k);
                }
            }
            columns.push(rows);
        }
        (LowerPattern::from_columns(columns), source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symmetric_multiply_and_restriction_match_the_dense_matrix() {
        // Lower triangle of a 4×4 symmetric matrix with a gap at (3, 0).
        let pattern = LowerPattern::from_columns(vec![vec![0, 1, 2], vec![1, 3], vec![2, 3], vec![3]]);
        let values = [4.0, 1.0, 2.0, 5.0, -1.0, 6.0, 0.5, 7.0];
        let dense = [
            [4.0, 1.0, 2.0, 0.0],
            [1.0, 5.0, 0.0, -1.0],
            [2.0, 0.0, 6.0, 0.5],
            [0.0, -1.0, 0.5, 7.0],
        ];
        let x = [1.0, -2.0, 3.0, 0.5];
        let mut y = [0.0; 4];
        pattern.symmetric_multiply(&values, &x, &mut y);
        for i in 0..4 {
            let expected: f64 = (0..4).map(|j| dense[i][j] * x[j]).sum();
            assert!((y[i] - expected).abs() < 1e-14);
        }
        // A block of three columns gives each column's product, bit for bit.
        let block = nalgebra::DMatrix::from_fn(4, 3, |r, c| x[r] * (c as f64 + 1.0) - c as f64);
        let products = pattern.symmetric_multiply_block(&values, &block);
        for c in 0..3 {
            let column: Vec<f64> = block.column(c).iter().copied().collect();
            let mut single = [0.0; 4];
            pattern.symmetric_multiply(&values, &column, &mut single);
            assert_eq!(products.column(c).as_slice(), &single);
        }
        assert_eq!(pattern.position(3, 0), None);
        assert_eq!(pattern.position(3, 1), Some(4));
        // Keep unknowns 1 and 3: the 2×2 block [[5, -1], [-1, 7]].
        let (restricted, source) = pattern.restrict(&[None, Some(0), None, Some(1)]);
        assert_eq!(restricted.size, 2);
        let kept: Vec<f64> = source.iter().map(|&k| values[k]).collect();
        assert_eq!(kept, vec![5.0, -1.0, 7.0]);
        assert_eq!(restricted.diagonal_positions(), vec![0, 2]);
    }
}
