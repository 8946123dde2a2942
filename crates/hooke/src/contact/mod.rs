//! Intersection-free barrier contact (Li et al. 2020, "Incremental Potential
//! Contact: Intersection- and Inversion-free, Large-Deformation Dynamics",
//! ACM TOG 39(4)), under construction: the distances between surface
//! primitives come first (`distance`); the broad phase, continuous collision
//! detection (feeding `EnergyTerm::feasible_step`), the barrier and friction
//! terms follow.

pub mod distance;
mod jet;
