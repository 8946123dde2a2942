//! Nonlinear solvers for implicit steps: the objective interface, the
//! incremental potential every implicit step builds, interchangeable
//! minimisers (Newton, L-BFGS, local/global) registered once and chosen by the
//! `[solver]` table, and linear systems on the free DOFs.

mod entry;
mod free_system;
mod incremental_potential;
mod lbfgs;
mod line_search;
mod local_global;
mod minimizer;
mod newton;
mod objective;
pub mod registry;
mod settings;
#[cfg(test)]
mod test_objectives;

pub use crate::linalg::IndefiniteSystem;
pub use free_system::FreeSystem;
pub use incremental_potential::{
    ContactAtEnd, Coordinates, DampingPart, IncrementalPotential, Inertia, ViscoelasticTerm,
};
pub use lbfgs::{InitialHessian, Lbfgs, LbfgsSettings};
pub use line_search::{backtrack, backtrack_with, backtrack_with_gradient, LineSearch, GAP_FRACTION};
pub use local_global::LocalGlobalSettings;
pub use minimizer::{Minimizer, MinimizerReport, TracePoint};
pub use newton::{Newton, NewtonSettings};
pub use objective::{Objective, QuasiNewtonMatrix};
pub use settings::{MinimizerSettings, SolverSettings, Stagnation, SHARED_SOLVER_KEYS};
