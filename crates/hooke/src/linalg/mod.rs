//! Sparse symmetric matrices and their factorisation, and small dense decompositions.

mod blocks;
mod cholesky;
mod conjugate_gradient;
mod eigen;
mod eigen_tracking;
mod exponential;
pub(crate) mod kernels;
mod krylov_exponential;
mod ordering;
mod orthonormal;
mod polar;
mod small;
mod sparse;
mod supernodal_solve;
mod system;

pub use blocks::VertexBlocks;
pub use cholesky::{FactorOf, FactorizationOutcome, SparseCholesky};
pub use conjugate_gradient::{conjugate_gradient, CgSolution, IncompleteCholesky, Jacobi, Preconditioner};
pub use eigen::{
    near_equal_runs, smallest_eigenpairs, smallest_eigenpairs_reusing, smallest_eigenpairs_with_low_rank, EigenPairs,
    EigenSettings, NEAR_EQUAL_GAP,
};
pub use eigen_tracking::{track_eigenpairs, ShiftInvert, TrackedPairs, TrackingSettings};
pub use exponential::{expm, phi1_times};
pub(crate) use kernels::{combine3, dot, dot3x3};
pub use krylov_exponential::{dense_operator, expv, phi1v, KrylovReport, KrylovSettings};
pub use orthonormal::MOrthonormal;
pub use polar::{polar_rotation, polar_rotations, LANES as POLAR_LANES};
pub use small::{
    orthogonal_unit, signed_svd3, signed_svd3_lanes, symmetric_eigen3, symmetric_eigenvalues3, SignedSvd, SVD_LANES,
};
pub use sparse::LowerPattern;
pub use system::{IndefiniteSystem, LowRank, SystemMatrix, SystemSolver};

/// Solves right-hand sides stored row by row (entry (i, c) at i·columns + c)
/// with a solver that takes them one column after another.
pub(crate) fn solve_rows_as_columns(
    rhs: &mut [f64],
    columns: usize,
    solve_columns: impl FnOnce(&mut [f64]) -> crate::error::Result<()>,
) -> crate::error::Result<()> {
    let rows = rhs.len() / columns.max(1);
    let mut by_columns = vec![0.0; rhs.len()];
    for (k, value) in rhs.iter().enumerate() {
        by_columns[(k % columns) * rows + k / columns] = *value;
    }
    solve_columns(&mut by_columns)?;
    for (k, value) in rhs.iter_mut().enumerate() {
        *value = by_columns[(k % columns) * rows + k / columns];
    }
    Ok(())
}
