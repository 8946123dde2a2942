//! Nonlinear solvers for implicit steps: the objective interface, the
//! incremental potential every implicit step builds, interchangeable
//! minimisers (Newton, L-BFGS) chosen by the `[solver]` table, and linear systems
//! on the free DOFs.

mod free_system;
mod incremental_potential;
mod lbfgs;
mod line_search;
mod minimizer;
mod newton;
mod objective;

pub use crate::linalg::IndefiniteSystem;
pub use free_system::FreeSystem;
pub use incremental_potential::{Coordinates, DampingPart, IncrementalPotential, Inertia, ViscoelasticTerm};
pub use lbfgs::Lbfgs;
pub use line_search::{backtrack, backtrack_with, backtrack_with_gradient};
pub use minimizer::{
    InitialHessian, Minimizer, MinimizerKind, MinimizerReport, SolverSettings, Stagnation, TracePoint, SOLVER_KEYS,
};
pub use newton::Newton;
pub use objective::{Objective, QuasiNewtonMatrix};
