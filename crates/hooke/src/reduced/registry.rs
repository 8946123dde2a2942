//! The solvers that step a body with an integrator of their own instead of
//! minimising the incremental potential: those of a `[subspace]` (subspace
//! FEM and subspace mixed FEM) and the mixed formulation's SQP in full space.
//! A `[solver]` table names them by `kind` like a minimiser; scenes, `hooke
//! solvers` and the docs read this list beside the minimisers'.

use super::solver::ReducedMethod;
use crate::error::Result;
use crate::integrate::Integrator;
use crate::model::Model;
use crate::solve::SolverSettings;

/// Builds a solver's own integrator over every DOF of a model.
pub type FullSpaceBuild = fn(&Model, &SolverSettings) -> Result<Box<dyn Integrator>>;

/// One solver of a subspace or of the mixed formulation.
pub struct ReducedSolverEntry {
    /// The `kind` of the `[solver]` table.
    pub name: &'static str,
    /// One line: the method, and its source.
    pub summary: &'static str,
    /// Its iteration on a `[subspace]`'s reduced model.
    pub subspace_method: ReducedMethod,
    /// Without `[subspace]`: its own backward Euler integrator over every DOF.
    /// None: outside a subspace the minimiser of the same name steps.
    pub full_space: Option<FullSpaceBuild>,
}

fn full_mixed(model: &Model, settings: &SolverSettings) -> Result<Box<dyn Integrator>> {
    Ok(Box::new(super::FullMixedBackwardEuler::new(model, settings.clone())?))
}

/// Every solver of a subspace or of the mixed formulation.
pub const REDUCED_SOLVERS: &[ReducedSolverEntry] = &[
    ReducedSolverEntry {
        name: "mixed_sqp",
        summary: "sequential quadratic programming on the mixed formulation: positions, per-element stretches and their multipliers (Trusty et al. 2023); subspace mixed FEM in a [subspace], over every DOF without",
        subspace_method: ReducedMethod::MixedSqp,
        full_space: Some(full_mixed),
    },
    ReducedSolverEntry {
        name: "newton",
        summary: "subspace FEM: Newton on the reduced model's cubature, in a [subspace] only (over every DOF, the newton minimiser steps)",
        subspace_method: ReducedMethod::Newton,
        full_space: None,
    },
];

/// The entry for a name.
pub fn entry(name: &str) -> Option<&'static ReducedSolverEntry> {
    REDUCED_SOLVERS.iter().find(|e| e.name == name)
}

/// The names, for messages.
pub fn names() -> String {
    REDUCED_SOLVERS.iter().map(|e| e.name).collect::<Vec<_>>().join(", ")
}
