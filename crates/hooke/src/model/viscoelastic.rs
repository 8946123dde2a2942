//! The elastic energy measured from another rest shape, for the viscoelastic
//! damping of the Kharevych 2010 thesis, §2.3: the step's start x_k acts as the rest shape of
//! W_ref, and the damping impulse is −k_D ∇W_ref(x_{k+1}).

use super::term::{EnergyTerm, HessianTarget};
use super::Model;
use crate::error::{HookeError, Result};

/// The model's elastic terms rebased onto a reference configuration.
pub struct RebasedElasticity {
    terms: Vec<Box<dyn EnergyTerm>>,
}

impl RebasedElasticity {
    /// Every elastic term of `model` with `reference` (all DOFs) as its rest
    /// shape. Elements flat or inverted there contribute nothing.
    pub fn new(model: &Model, reference: &[f64]) -> Result<RebasedElasticity> {
        let mut terms = Vec::new();
        for term in model.terms() {
            if term.kind() != super::TermKind::Elastic {
                continue;
            }
            match term.as_elasticity() {
                Some(elements) => terms.push(elements.rebased(reference)),
                None => {
                    return Err(HookeError::scene(
                        "damping.viscoelastic_coefficient",
                        format!(
                            "viscoelastic damping acts on elements with materials; {} has none",
                            term.name()
                        ),
                    ))
                }
            }
        }
        Ok(RebasedElasticity { terms })
    }

    /// W_ref(x); +∞ where an element leaves its material's domain.
    pub fn energy(&self, x: &[f64]) -> f64 {
        self.terms.iter().map(|t| t.energy(x, 0.0)).sum()
    }

    /// W_ref and its gradient (written, not added, into `gradient`).
    pub fn gradient(&self, x: &[f64], gradient: &mut [f64]) -> Result<f64> {
        gradient.fill(0.0);
        let mut energy = 0.0;
        for term in &self.terms {
            energy += term.gradient(x, 0.0, gradient, false)?;
        }
        Ok(energy)
    }

    /// W_ref, its gradient and its Hessian (written into `gradient` and `values`).
    pub fn hessian(&self, x: &[f64], project: bool, gradient: &mut [f64], values: &mut [f64]) -> Result<f64> {
        gradient.fill(0.0);
        values.fill(0.0);
        let mut low_rank = Vec::new();
        let mut energy = 0.0;
        for term in &self.terms {
            let mut target = HessianTarget {
                values,
                low_rank: &mut low_rank,
            };
            energy += term.hessian(x, 0.0, project, gradient, &mut target, false)?;
        }
        Ok(energy)
    }
}
