//! The incremental potential of an implicit step, minimised over the free DOFs:
//!
//! Φ(x) = w_M/2 ‖x − x̃‖²_M + w_D/2 ‖x − x_prev‖²_D + W(x) − fᵀx
//!
//! Backward Euler uses w_M = 1/h², x̃ = xₙ + h vₙ, w_D = 1/h (Rayleigh damping as a
//! dissipation potential); a static solve uses w_M = w_D = 0. Pinned DOFs keep
//! their prescribed values inside `base`, so couplings through M, D and K are exact.

use super::FreeSystem;
use crate::error::Result;
use crate::fem::ElementGeometry;
use crate::model::{DofMap, Model};

/// The potential of the viscoelastic damping impulse, w · W_ref(s x + o): the
/// elastic energy of the configuration s x + o measured from the step's start
/// (`reference`) as the rest shape.
pub struct ViscoelasticTerm {
    pub weight: f64,
    pub scale: f64,
    pub offset: Vec<f64>,
    pub reference: Vec<ElementGeometry>,
}

impl ViscoelasticTerm {
    fn configuration(&self, x: &[f64]) -> Vec<f64> {
        x.iter().zip(&self.offset).map(|(xi, o)| self.scale * xi + o).collect()
    }
}

pub struct IncrementalPotential<'a> {
    pub model: &'a Model,
    pub dofs: &'a DofMap,
    /// Full positions; pinned entries hold their prescribed values.
    pub base: Vec<f64>,
    /// (w_M, x̃): inertia weight and predicted positions.
    pub inertia: Option<(f64, Vec<f64>)>,
    /// (w_D, D values on the pattern, x_prev).
    pub damping: Option<(f64, std::borrow::Cow<'a, [f64]>, Vec<f64>)>,
    /// External force over all DOFs (constant during the step).
    pub external_force: Vec<f64>,
    /// Viscoelastic damping (seed 001 §2.6) as w · W_ref(s x + o).
    pub viscoelastic: Option<ViscoelasticTerm>,
    pub project_hessian: bool,
}

impl IncrementalPotential<'_> {
    /// Full positions for the given free values.
    pub fn full_positions(&self, free: &[f64]) -> Vec<f64> {
        let mut x = self.base.clone();
        self.dofs.scatter(free, &mut x);
        x
    }

    fn quadratic(
        &self,
        values_times: impl Fn(&[f64], &mut [f64]),
        x: &[f64],
        center: &[f64],
        weight: f64,
    ) -> (f64, Vec<f64>) {
        let difference: Vec<f64> = x.iter().zip(center).map(|(a, b)| a - b).collect();
        let mut product = vec![0.0; x.len()];
        values_times(&difference, &mut product);
        let value = 0.5 * weight * difference.iter().zip(&product).map(|(a, b)| a * b).sum::<f64>();
        product.iter_mut().for_each(|p| *p *= weight);
        (value, product)
    }

    /// Φ and its full gradient at full positions x (elastic part included).
    fn value_and_optional_gradient(
        &self,
        x: &[f64],
        elastic_gradient: Option<&[f64]>,
        elastic: f64,
    ) -> (f64, Option<Vec<f64>>) {
        let mut value = elastic - self.external_force.iter().zip(x).map(|(f, y)| f * y).sum::<f64>();
        let mut gradient = elastic_gradient.map(|g| {
            g.iter()
                .zip(&self.external_force)
                .map(|(g, f)| g - f)
                .collect::<Vec<_>>()
        });
        if let Some((weight, predicted)) = &self.inertia {
            let (v, g) = self.quadratic(|a, b| self.model.mass_multiply(a, b), x, predicted, *weight);
            value += v;
            if let Some(total) = gradient.as_mut() {
                total.iter_mut().zip(&g).for_each(|(t, g)| *t += g);
            }
        }
        if let Some((weight, values, previous)) = &self.damping {
            let pattern = self.model.pattern();
            let (v, g) = self.quadratic(|a, b| pattern.symmetric_multiply(values, a, b), x, previous, *weight);
            value += v;
            if let Some(total) = gradient.as_mut() {
                total.iter_mut().zip(&g).for_each(|(t, g)| *t += g);
            }
        }
        (value, gradient)
    }

    /// Φ at the given free values; +∞ where an element leaves its material's domain.
    pub fn value(&self, free: &[f64]) -> f64 {
        let x = self.full_positions(free);
        let elastic = self.model.potential_energy(&x);
        if !elastic.is_finite() {
            return f64::INFINITY;
        }
        let damping = match &self.viscoelastic {
            Some(term) => term.weight * self.model.energy_from(&term.reference, &term.configuration(&x)),
            None => 0.0,
        };
        self.value_and_optional_gradient(&x, None, elastic).0 + damping
    }

    /// Φ and its gradient with respect to the free values; with `system`, also
    /// loads the Hessian (K + w_M M + w_D D) into it.
    pub fn evaluate(&self, free: &[f64], system: Option<&mut FreeSystem>) -> Result<(f64, Vec<f64>)> {
        let x = self.full_positions(free);
        let nonzeros = self.model.pattern().nonzeros();
        let mut elastic_gradient = vec![0.0; x.len()];
        let want_hessian = system.is_some();
        let mut stiffness = if want_hessian { vec![0.0; nonzeros] } else { Vec::new() };
        let elastic = if want_hessian {
            self.model
                .potential_hessian(&x, self.project_hessian, Some(&mut elastic_gradient), &mut stiffness)?
        } else {
            self.model.potential_gradient(&x, &mut elastic_gradient)?
        };
        // The viscoelastic term: value, gradient w s ∇W_ref and Hessian w s² K_ref.
        let mut damping_value = 0.0;
        let mut damping_stiffness = Vec::new();
        if let Some(term) = &self.viscoelastic {
            let y = term.configuration(&x);
            let mut gradient = vec![0.0; x.len()];
            if want_hessian {
                damping_stiffness = vec![0.0; nonzeros];
            }
            let energy = self.model.derivatives_from(
                &term.reference,
                &y,
                self.project_hessian,
                &mut gradient,
                want_hessian.then_some(damping_stiffness.as_mut_slice()),
            )?;
            damping_value = term.weight * energy;
            elastic_gradient
                .iter_mut()
                .zip(&gradient)
                .for_each(|(e, g)| *e += term.weight * term.scale * g);
        }
        if let Some(system) = system {
            let mut terms: Vec<(f64, &[f64])> = vec![(1.0, &stiffness)];
            if let Some((weight, _)) = &self.inertia {
                terms.push((*weight, self.model.mass_values()));
            }
            if let Some((weight, values, _)) = &self.damping {
                terms.push((*weight, values));
            }
            if let Some(term) = &self.viscoelastic {
                terms.push((term.weight * term.scale * term.scale, &damping_stiffness));
            }
            system.load(&terms);
        }
        let (value, gradient) = self.value_and_optional_gradient(&x, Some(&elastic_gradient), elastic);
        let gradient = gradient.expect("a gradient was passed in");
        Ok((value + damping_value, self.dofs.gather(&gradient)))
    }
}
