//! Matrix Market (coordinate, real, symmetric) output of the lower triangle of a
//! symmetric sparse matrix, for other tools (scipy.io.mmread, MATLAB, Julia).

use crate::error::Result;
use crate::linalg::LowerPattern;
use std::path::Path;

/// Writes the symmetric matrix whose lower triangle is `values` on `pattern`.
pub fn write_symmetric(path: &Path, pattern: &LowerPattern, values: &[f64], comment: &str) -> Result<()> {
    let mut text = String::with_capacity(32 * values.len() + 128);
    text.push_str("%%MatrixMarket matrix coordinate real symmetric\n");
    for line in comment.lines() {
        text.push_str(&format!("% {line}\n"));
    }
    text.push_str(&format!("{} {} {}\n", pattern.size, pattern.size, pattern.nonzeros()));
    for column in 0..pattern.size {
        for k in pattern.column_starts[column]..pattern.column_starts[column + 1] {
            // 1-based (row, column) with row ≥ column, full precision.
            text.push_str(&format!(
                "{} {} {:e}\n",
                pattern.row_indices[k] + 1,
                column + 1,
                values[k]
            ));
        }
    }
    crate::output::atomic::write_bytes_atomically(path, text.as_bytes())
}

/// Writes a dense column vector (Matrix Market array format).
pub fn write_vector(path: &Path, values: &[f64], comment: &str) -> Result<()> {
    let mut text = String::with_capacity(24 * values.len() + 128);
    text.push_str("%%MatrixMarket matrix array real general\n");
    for line in comment.lines() {
        text.push_str(&format!("% {line}\n"));
    }
    text.push_str(&format!("{} 1\n", values.len()));
    for value in values {
        text.push_str(&format!("{value:e}\n"));
    }
    crate::output::atomic::write_bytes_atomically(path, text.as_bytes())
}
