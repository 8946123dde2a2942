//! Nonlinear solvers for implicit steps: the incremental potential they share,
//! and Newton's method with a backtracking line search.

mod free_system;
mod incremental_potential;
mod newton;

pub use crate::linalg::IndefiniteSystem;
pub use free_system::FreeSystem;
pub use incremental_potential::{DampingPart, IncrementalPotential, Inertia, ViscoelasticTerm};
pub use newton::{minimize, NewtonReport, NewtonSettings};
