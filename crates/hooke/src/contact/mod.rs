//! Intersection-free barrier contact (Li et al. 2020, "Incremental Potential
//! Contact: Intersection- and Inversion-free, Large-Deformation Dynamics",
//! ACM TOG 39(4)), its geometry: the distances between surface primitives
//! (`distance`), the barrier of a distance (`barrier`), the mollifier of
//! nearly parallel edges (`mollifier`), the contact surface of a body
//! (`surface`), the candidate pairs of a step (`broad_phase`), continuous
//! collision detection with the step bound it gives (`ccd`, for
//! `EnergyTerm::feasible_step`), the barrier potential of a surface with its
//! derivatives (`potential`), the barrier's stiffness rule (`stiffness`) and
//! an independent intersection check (`intersection`). The energy term built
//! on them is model/barrier_contact.rs; friction is to follow.

pub mod barrier;
pub mod broad_phase;
pub mod ccd;
pub mod distance;
pub mod intersection;
mod jet;
pub mod mollifier;
pub mod potential;
pub mod stiffness;
pub mod surface;

pub use surface::ContactSurface;
