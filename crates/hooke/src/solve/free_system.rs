//! A linear system on the free DOFs: the model's matrices restricted to them
//! (plus an optional low-rank part), factorised with the symbolic analysis kept
//! until the free DOFs change (for example when a pin is released).

use crate::error::Result;
use crate::linalg::{
    FactorOf, FactorizationOutcome, IndefiniteSystem, LowRank, LowerPattern, SystemMatrix, SystemSolver,
};
use crate::model::{DofMap, Model, Restriction};
use std::sync::Arc;

/// A matrix on the free DOFs of a model (a restriction of its pattern, plus
/// an optional low-rank part) and its factorisation, kept while the free DOFs
/// stay the same.
pub struct FreeSystem {
    restriction: Arc<Restriction>,
    matrix: SystemMatrix,
    solver: SystemSolver,
}

impl FreeSystem {
    /// Returns the cached system if it was built for the same free DOFs of this
    /// model, else builds it.
    pub fn for_dofs<'a>(cache: &'a mut Option<FreeSystem>, model: &Model, dofs: &DofMap) -> Result<&'a mut FreeSystem> {
        let restriction = model.restriction(dofs);
        match cache {
            Some(system) if Arc::ptr_eq(&system.restriction, &restriction) => {}
            _ => {
                *cache = Some(FreeSystem {
                    matrix: SystemMatrix::zeros_on(restriction.pattern.clone()),
                    restriction,
                    solver: SystemSolver::new(),
                });
            }
        }
        Ok(cache.as_mut().expect("the cache was filled just above"))
    }

    /// The pattern of the restricted matrix (its lower triangle, on the free DOFs).
    pub fn pattern(&self) -> &LowerPattern {
        &self.restriction.pattern
    }

    /// Loads the free part of a full-pattern matrix Σ wₖ Aₖ (and no low-rank part).
    pub fn load(&mut self, terms: &[(f64, &[f64])]) {
        if let SystemMatrix::Sparse { values, low_rank, .. } = &mut self.matrix {
            self.restriction.load(terms, values);
            *low_rank = None;
        }
    }

    /// Adds a low-rank part over all DOFs (its rows on the free ones are kept).
    pub fn set_low_rank(&mut self, low_rank: Option<LowRank>, dofs: &DofMap) {
        if let SystemMatrix::Sparse { low_rank: slot, .. } = &mut self.matrix {
            *slot = low_rank.map(|l| l.restricted(&dofs.free_dofs));
        }
    }

    /// Factorises the loaded matrix (with a reported diagonal shift if it is indefinite).
    pub fn factorize(&mut self) -> Result<FactorizationOutcome> {
        self.factorize_with(IndefiniteSystem::Shift)
    }

    /// Factorises the loaded matrix, treating an indefinite one as `policy` says.
    pub fn factorize_with(&mut self, policy: IndefiniteSystem) -> Result<FactorizationOutcome> {
        self.solver.factorize(&self.matrix, policy)
    }

    /// [`Self::factorize_with`], solving with `offered` instead when it is a
    /// factorisation of exactly the loaded sparse part ([`SystemSolver::factorize_adopting`]).
    pub fn factorize_adopting(
        &mut self,
        policy: IndefiniteSystem,
        offered: Option<FactorOf>,
    ) -> Result<FactorizationOutcome> {
        self.solver.factorize_adopting(&self.matrix, policy, offered)
    }

    /// Whether the last factorisation took an offered factor instead of computing one.
    pub fn adopted(&self) -> bool {
        self.solver.adopted()
    }

    /// Solves with the last factorisation.
    pub fn solve_in_place(&self, rhs: &mut [f64]) -> Result<()> {
        self.solver.solve_in_place(rhs)
    }

    /// Solves for `columns` right-hand sides stored one after the other, in one pass.
    pub fn solve_columns_in_place(&self, rhs: &mut [f64], columns: usize) -> Result<()> {
        self.solver.solve_columns_in_place(rhs, columns)
    }
}
