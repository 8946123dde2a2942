//! Real-time subspace simulation of heterogeneous bodies (Trusty et al. 2023): a
//! linear-blend-skinning subspace of material-aware skinning eigenmodes
//! ([`skinning`]), a training-free cubature ([`cubature`]), the reduced model
//! they give ([`problem`]), and its two solvers, subspace FEM (Newton) and
//! subspace mixed FEM (SQP on stretches and multipliers, [`solver`], built
//! on [`stretch`]), stepped by backward Euler ([`integrator`]), whose energies
//! are recorded without leaving the subspace ([`record`]). The cost of an
//! iteration is O(m²|𝒞|) whatever the mesh size. [`full_mixed`] is the same
//! mixed formulation without reduction, the baseline whose cost grows with the mesh.

pub mod cubature;
pub mod full_mixed;
pub mod integrator;
pub mod problem;
pub mod record;
pub mod registry;
pub mod skinning;
pub mod solver;
pub mod stretch;

pub use cubature::{spectral_cubature, Cubature};
pub use full_mixed::FullMixedBackwardEuler;
pub use integrator::SubspaceBackwardEuler;
pub use problem::{CubaturePoint, ReducedLoads, ReducedModel, ReducedPart, SubspaceSettings};
pub use skinning::{skinning_eigenmodes, SkinningBasis, SkinningEigenmodes};
pub use solver::{IterationReport, ReducedMethod, StepPotential};
