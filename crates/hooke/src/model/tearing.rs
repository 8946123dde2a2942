//! Tearing (Liu 2018 thesis, §8.4, without refactorising): after each step,
//! an element stretched beyond a limit tears for good and leaves the energy,
//! its gradient and its Hessian. The prefactorised matrix of L-BFGS and
//! local/global keeps it: refactorising on every tear would cost what those
//! solvers exist to avoid, and the matrix remains an upper bound of the true
//! Hessian, so iterations still descend (the line search sees to it for
//! L-BFGS; for local/global the quadratic model only gets stiffer).
//!
//! Which elements have torn lives beside each tearable term in a mask of
//! atomic flags: evaluations read it, and only the step's commit writes it,
//! between steps, so a run is as deterministic as without tearing.

use crate::error::{HookeError, Result};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The torn elements of one term.
#[derive(Debug, Default)]
pub struct TornMask {
    flags: Vec<AtomicBool>,
    /// How many flags are set.
    count: AtomicUsize,
}

impl TornMask {
    /// A mask of `elements` elements, none torn.
    pub fn new(elements: usize) -> TornMask {
        TornMask {
            flags: (0..elements).map(|_| AtomicBool::new(false)).collect(),
            count: AtomicUsize::new(0),
        }
    }

    /// Whether `element` has torn.
    pub fn is_torn(&self, element: usize) -> bool {
        self.flags[element].load(Ordering::Relaxed)
    }

    /// Marks `element` torn; true when it was whole.
    pub fn tear(&self, element: usize) -> bool {
        let was_whole = !self.flags[element].swap(true, Ordering::Relaxed);
        if was_whole {
            self.count.fetch_add(1, Ordering::Relaxed);
        }
        was_whole
    }

    /// How many elements are torn (it only grows).
    pub fn count(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }

    /// The torn elements, in increasing order.
    pub fn torn(&self) -> Vec<usize> {
        (0..self.flags.len()).filter(|&e| self.is_torn(e)).collect()
    }

    /// The number of elements the mask covers, torn or whole.
    pub fn len(&self) -> usize {
        self.flags.len()
    }

    /// Whether the mask covers no element.
    pub fn is_empty(&self) -> bool {
        self.flags.is_empty()
    }

    /// A copy of the flags as they are now (for a term built from this one).
    pub fn snapshot(&self) -> TornMask {
        TornMask {
            flags: (0..self.flags.len())
                .map(|e| AtomicBool::new(self.is_torn(e)))
                .collect(),
            count: AtomicUsize::new(self.count()),
        }
    }
}

/// What one tearing pass did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Torn {
    /// Elements (springs or finite elements) that tore.
    pub elements: usize,
    /// The energy they held when they tore, J: released, and counted as dissipated.
    pub energy: f64,
}

impl std::ops::AddAssign for Torn {
    fn add_assign(&mut self, other: Torn) {
        self.elements += other.elements;
        self.energy += other.energy;
    }
}

/// A term whose elements can tear.
pub trait Tearable {
    /// Tears every whole element whose largest stretch (a spring's length over
    /// its rest length, a finite element's largest singular value of F) exceeds
    /// `limit` at `x`.
    fn tear_overstretched(&self, x: &[f64], limit: f64) -> Torn;
    /// Which of the term's elements have torn.
    fn torn_mask(&self) -> &TornMask;
}

/// Marks `elements` torn in `mask`, or says which one does not exist.
pub fn restore(mask: &TornMask, elements: &[usize]) -> std::result::Result<(), usize> {
    if let Some(&bad) = elements.iter().find(|&&e| e >= mask.len()) {
        return Err(bad);
    }
    for &e in elements {
        mask.tear(e);
    }
    Ok(())
}

impl super::Model {
    /// Lets every term prepare for the step from `state` to `time` (see
    /// [`super::EnergyTerm::begin_step`]).
    pub fn begin_step(&self, state: &super::State, time: f64) -> Result<()> {
        self.begin_step_with(state, time, None)
    }

    /// [`Self::begin_step`] for a step that will factorise `matrix` over the
    /// free DOFs (model/step_matrix.rs): a term may factorise it at the
    /// step's start and offer the factor to the step.
    pub(crate) fn begin_step_with(
        &self,
        state: &super::State,
        time: f64,
        matrix: Option<super::StepMatrix>,
    ) -> Result<()> {
        self.kept_elastic.open();
        self.step_factor.open(matrix);
        for term in self.terms() {
            term.begin_step(self, state, time)?;
        }
        Ok(())
    }

    /// Elements whose largest stretch exceeds `limit` (> 1) will tear after
    /// each step; None: nothing tears.
    pub fn set_tearing_limit(&mut self, limit: Option<f64>) {
        self.tearing_limit = limit;
    }

    /// The largest stretch an element survives (None: nothing tears).
    pub fn tearing_limit(&self) -> Option<f64> {
        self.tearing_limit
    }

    /// Tears what is overstretched at `x` (nothing without a limit).
    pub fn tear(&self, x: &[f64]) -> Torn {
        self.kept_elastic.close();
        let mut torn = Torn::default();
        if let Some(limit) = self.tearing_limit {
            for term in self.terms() {
                if let Some(tearable) = term.as_tearable() {
                    torn += tearable.tear_overstretched(x, limit);
                }
            }
        }
        torn
    }

    /// The torn elements of each tearable term, in term order (what a
    /// checkpoint keeps).
    pub fn torn_elements(&self) -> Vec<Vec<usize>> {
        self.terms()
            .iter()
            .filter_map(|t| t.as_tearable())
            .map(|t| t.torn_mask().torn())
            .collect()
    }

    /// Tears again what [`Self::torn_elements`] listed (resuming a run).
    pub fn restore_torn(&self, torn: &[Vec<usize>]) -> Result<()> {
        self.kept_elastic.close();
        let tearable: Vec<_> = self.terms().iter().filter_map(|t| t.as_tearable()).collect();
        let mismatch = |reason: String| HookeError::Solver {
            reason: format!("the checkpoint's torn elements do not fit this model: {reason}"),
        };
        if torn.iter().any(|list| !list.is_empty()) && torn.len() != tearable.len() {
            return Err(mismatch(format!(
                "{} tearable terms listed, the model has {}",
                torn.len(),
                tearable.len()
            )));
        }
        for (term, list) in tearable.iter().zip(torn) {
            restore(term.torn_mask(), list).map_err(|e| mismatch(format!("no element {e}")))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mask_tears_each_element_once_and_copies() {
        let mask = TornMask::new(4);
        assert!(mask.tear(2));
        assert!(!mask.tear(2));
        assert!(mask.is_torn(2) && !mask.is_torn(1));
        assert_eq!(mask.torn(), vec![2]);
        assert_eq!(mask.snapshot().torn(), vec![2]);
        assert_eq!(restore(&mask, &[0, 9]), Err(9));
        assert_eq!(restore(&mask, &[0]), Ok(()));
        assert_eq!(mask.torn(), vec![0, 2]);
    }
}
