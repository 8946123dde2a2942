//! Studies over scenes, outside the simulation core: the comparisons behind
//! `hooke compare` (integrators, minimisers, resolutions with EigenFit and
//! DAC, subspaces, discretisations, coarsening), the grid of subspace sizes,
//! and the entry points of the fuzzers. They use the core through its public
//! interface; the core imports none of them.

pub mod coarsening;
pub mod discretizations;
pub mod fuzz_targets;
pub mod integrators;
pub mod resolution;
pub mod solvers;
pub mod subspace;
pub mod subspace_grid;
