//! Real-time subspace simulation of heterogeneous bodies (Trusty et al. 2023): a
//! linear-blend-skinning subspace of material-aware skinning eigenmodes
//! ([`skinning`]), a training-free cubature ([`spectral_cubature`]), the reduced
//! model they give ([`ReducedModel`]), and its two solvers, subspace FEM (Newton)
//! and subspace mixed FEM (SQP on stretches and multipliers, [`ReducedMethod`],
//! built on [`stretch`]), stepped by backward Euler ([`SubspaceBackwardEuler`]),
//! whose energies are recorded without leaving the subspace
//! ([`ReducedModel::energy_record`]). The cost of an iteration is O(m²|𝒞|)
//! whatever the mesh size. [`FullMixedBackwardEuler`] is the same mixed
//! formulation without reduction, the baseline whose cost grows with the mesh.

mod cubature;
mod full_mixed;
mod integrator;
mod problem;
mod record;
pub mod registry;
pub mod skinning;
mod solver;
pub mod stretch;

pub use cubature::{spectral_cubature, Cubature};
pub use full_mixed::FullMixedBackwardEuler;
pub use integrator::SubspaceBackwardEuler;
pub use problem::{CubaturePoint, ReducedLoads, ReducedModel, ReducedPart, SubspaceSettings};
pub use skinning::{skinning_eigenmodes, SkinningBasis, SkinningEigenmodes};
pub use solver::{IterationReport, ReducedMethod, StepPotential};
