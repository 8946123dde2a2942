//! What a program that simulates with Hooke needs, in one import:
//!
//! ```
//! use hooke::prelude::*;
//! ```
//!
//! - scenes and runs: [`Scene`], [`BuiltScene`], [`Simulation`] (a run: built
//!   with [`Simulation::new`], configured by its builder methods, started by
//!   [`Simulation::run`]), [`RunSettings`], [`RunOutcome`];
//! - models: [`Model`], [`State`], meshes ([`TetMesh`], [`box_mesh`]), pins
//!   ([`Pin`], [`Motion`], [`Selection`]), [`MassKind`], reduced coordinates
//!   ([`Subspace`]);
//! - the seams to extend: materials ([`Material`], with [`MaterialModel`],
//!   [`MaterialParameters`] and [`IsotropicMaterial`] for the built-in ones),
//!   energy terms ([`EnergyTerm`]), integrators ([`Integrator`]), objectives
//!   and minimisers ([`Objective`], [`Minimizer`], [`SolverSettings`]);
//! - errors: [`HookeError`] and [`Result`].

pub use crate::error::{HookeError, Result};
pub use crate::integrate::{BackwardEuler, Capabilities, Integrator, IntegratorConfig, StepReport};
pub use crate::material::{
    Evaluation, IsotropicMaterial, Material, MaterialCapabilities, MaterialModel, MaterialParameters, MaterialRef, Want,
};
pub use crate::mesh::{box_mesh, BoxMeshOptions, TetMesh, TetsPerHex};
pub use crate::model::MassKind;
pub use crate::model::{
    EnergyTerm, HessianTarget, Model, Motion, Pin, Selection, State, Subspace, TermCapabilities, TermGroup, TermKind,
};
pub use crate::scene::{BuiltScene, Scene};
pub use crate::simulation::{RunOutcome, RunSettings, Simulation};
pub use crate::solve::{
    LbfgsSettings, Minimizer, MinimizerReport, NewtonSettings, Objective, QuasiNewtonMatrix, SolverSettings,
};
