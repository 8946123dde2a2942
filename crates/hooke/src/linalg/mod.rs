//! Sparse symmetric matrices and their factorisation.

mod cholesky;
mod sparse;

pub use cholesky::{FactorizationOutcome, SparseCholesky};
pub use sparse::LowerPattern;
