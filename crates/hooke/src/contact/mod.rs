//! Intersection-free barrier contact (Li et al. 2020, "Incremental Potential
//! Contact: Intersection- and Inversion-free, Large-Deformation Dynamics",
//! ACM TOG 39(4)), under construction: the distances between surface
//! primitives (`distance`), the barrier of a distance (`barrier`) and the
//! mollifier of nearly parallel edges (`mollifier`) come first; the broad
//! phase, continuous collision detection (feeding
//! `EnergyTerm::feasible_step`), the barrier and friction terms follow.

pub mod barrier;
pub mod distance;
mod jet;
pub mod mollifier;
