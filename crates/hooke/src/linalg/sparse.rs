//! Symmetric sparse matrices stored as their lower triangle in compressed
//! sparse columns (CSC): the pattern is built once, values are refilled.

/// Sparsity pattern of the lower triangle (row ≥ column) of a symmetric n×n matrix.
/// Row indices are sorted within each column and every diagonal entry is present.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LowerPattern {
    pub size: usize,
    pub column_starts: Vec<usize>,
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
