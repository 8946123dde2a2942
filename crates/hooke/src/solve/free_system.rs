//! A linear system on the free DOFs: the restriction of the 3n×3n pattern and a
//! Cholesky factorisation whose symbolic analysis is kept until the DOF map changes
//! (for example when a pin is released).

use crate::error::Result;
use crate::linalg::{FactorizationOutcome, IndefiniteSystem, LowerPattern, SparseCholesky};
use crate::model::DofMap;

pub struct FreeSystem {
    active_pins: Vec<bool>,
    full_nonzeros: usize,
    /// For each entry of the free pattern, its position in the full pattern.
    source: Vec<usize>,
    cholesky: SparseCholesky,
    values: Vec<f64>,
}

impl FreeSystem {
    /// Returns the cached system if it was built for the same DOF map, else builds it.
    pub fn for_dofs<'a>(
        cache: &'a mut Option<FreeSystem>,
        full: &LowerPattern,
        dofs: &DofMap,
    ) -> Result<&'a mut FreeSystem> {
        // Keyed by the active pins and the full pattern's size, so a cache used with another model is rebuilt.
        let stale = cache
            .as_ref()
            .is_none_or(|s| s.active_pins != dofs.active_pins || s.full_nonzeros != full.nonzeros());
        if stale {
            let (pattern, source) = full.restrict(&dofs.free_index);
            let cholesky = SparseCholesky::analyse(&pattern)?;
            *cache = Some(FreeSystem {
                active_pins: dofs.active_pins.clone(),
                full_nonzeros: full.nonzeros(),
                values: vec![0.0; source.len()],
                source,
                cholesky,
            });
        }
        Ok(cache.as_mut().expect("the cache was filled just above"))
    }

    pub fn pattern(&self) -> &LowerPattern {
        self.cholesky.pattern()
    }

    /// Loads the free part of a full-pattern matrix Σ wₖ Aₖ.
    pub fn load(&mut self, terms: &[(f64, &[f64])]) {
        for (value, &k) in self.values.iter_mut().zip(&self.source) {
            *value = terms.iter().map(|(w, a)| w * a[k]).sum();
        }
    }

    /// Factorises the loaded matrix (with a reported diagonal shift if it is indefinite).
    pub fn factorize(&mut self) -> Result<FactorizationOutcome> {
        self.factorize_with(IndefiniteSystem::Shift)
    }

    /// Factorises the loaded matrix, treating an indefinite one as `policy` says.
    pub fn factorize_with(&mut self, policy: IndefiniteSystem) -> Result<FactorizationOutcome> {
        match policy {
            IndefiniteSystem::Shift => self.cholesky.factorize_or_shift(&self.values),
            IndefiniteSystem::Exact => self.cholesky.factorize_or_indefinite(&self.values),
        }
    }

    /// Solves with the last factorisation.
    pub fn solve_in_place(&self, rhs: &mut [f64]) -> Result<()> {
        self.cholesky.solve_in_place(rhs)
    }

    /// Solves for `columns` right-hand sides stored one after the other, in one pass.
    pub fn solve_columns_in_place(&self, rhs: &mut [f64], columns: usize) -> Result<()> {
        self.cholesky.solve_columns_in_place(rhs, columns)
    }
}
