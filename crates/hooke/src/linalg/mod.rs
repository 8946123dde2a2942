//! Sparse symmetric matrices and their factorisation, and small dense decompositions.

mod cholesky;
mod eigen;
mod eigen_tracking;
mod exponential;
mod kernels;
mod krylov_exponential;
mod ordering;
mod orthonormal;
mod polar;
mod small;
mod sparse;
mod supernodal_solve;
mod system;

pub use cholesky::{FactorizationOutcome, SparseCholesky};
pub use eigen::{
    smallest_eigenpairs, smallest_eigenpairs_reusing, smallest_eigenpairs_with_low_rank, EigenPairs, EigenSettings,
};
pub use eigen_tracking::{track_eigenpairs, ShiftInvert, TrackedPairs, TrackingSettings};
pub use exponential::{expm, phi1_times};
pub(crate) use kernels::{combine3, dot, dot3x3};
pub use krylov_exponential::{dense_operator, expv, phi1v, KrylovReport, KrylovSettings};
pub use orthonormal::MOrthonormal;
pub use polar::{polar_rotation, polar_rotations, LANES as POLAR_LANES};
pub use small::{orthogonal_unit, signed_svd3, symmetric_eigen3, symmetric_eigenvalues3};
pub use sparse::LowerPattern;
pub use system::{IndefiniteSystem, LowRank, SystemMatrix, SystemSolver};
