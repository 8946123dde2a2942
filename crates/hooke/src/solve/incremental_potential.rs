//! The incremental potential of an implicit step, minimised over the free DOFs:
//!
//! Φ(x) = w_M/2 ‖x − x̃‖²_M + w_D/2 ‖x − c‖²_D + E(x, t) − f_extraᵀx (+ viscoelastic term)
//!
//! with E the model's potential (elasticity, springs, contact, gravity and
//! loads at the step's force time t). Backward Euler uses w_M = 1/h², x̃ = xₙ + h vₙ,
//! w_D = 1/h (Rayleigh damping as a dissipation potential); a static solve uses
//! no inertia and no damping. Pinned DOFs keep their prescribed values inside
//! `base`, so couplings through M, D and K are exact.

use super::FreeSystem;
use crate::error::Result;
use crate::model::{DofMap, Model, RebasedElasticity};
use std::borrow::Cow;

/// The inertia part w_M/2 ‖x − x̃‖²_M.
pub struct Inertia {
    pub weight: f64,
    pub predicted: Vec<f64>,
}

/// The Rayleigh dissipation part w_D/2 ‖x − c‖²_D.
pub struct DampingPart<'a> {
    pub weight: f64,
    /// D on the model's pattern.
    pub values: Cow<'a, [f64]>,
    pub center: Vec<f64>,
}

/// The potential of the viscoelastic damping impulse, w · W_ref(s x + o): the
/// elastic energy of the configuration s x + o measured from the step's start
/// (`reference`) as the rest shape.
pub struct ViscoelasticTerm {
    pub weight: f64,
    pub scale: f64,
    pub offset: Vec<f64>,
    pub reference: RebasedElasticity,
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
    pub inertia: Option<Inertia>,
    pub damping: Option<DampingPart<'a>>,
    /// Time at which loads are evaluated.
    pub time: f64,
    /// A constant force besides the model's loads (Newmark's −D c, the
    /// variational midpoint's momentum term).
    pub extra_force: Option<Vec<f64>>,
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

    /// The inertia, damping and extra-force parts of Φ at full positions x, and
    /// their gradient added to `gradient` when given.
    fn step_parts(&self, x: &[f64], mut gradient: Option<&mut [f64]>) -> f64 {
        let mut value = 0.0;
        if let Some(extra) = &self.extra_force {
            value -= extra.iter().zip(x).map(|(f, y)| f * y).sum::<f64>();
            if let Some(g) = gradient.as_deref_mut() {
                g.iter_mut().zip(extra).for_each(|(g, f)| *g -= f);
            }
        }
        if let Some(inertia) = &self.inertia {
            let (v, g) = self.quadratic(
                |a, b| self.model.mass_multiply(a, b),
                x,
                &inertia.predicted,
                inertia.weight,
            );
            value += v;
            if let Some(total) = gradient.as_deref_mut() {
                total.iter_mut().zip(&g).for_each(|(t, g)| *t += g);
            }
        }
        if let Some(damping) = &self.damping {
            let pattern = self.model.pattern();
            let (v, g) = self.quadratic(
                |a, b| pattern.symmetric_multiply(&damping.values, a, b),
                x,
                &damping.center,
                damping.weight,
            );
            value += v;
            if let Some(total) = gradient.as_mut() {
                total.iter_mut().zip(&g).for_each(|(t, g)| *t += g);
            }
        }
        value
    }

    /// Φ at the given free values; +∞ where an element leaves its material's domain.
    pub fn value(&self, free: &[f64]) -> f64 {
        let x = self.full_positions(free);
        let potential = self.model.energy(&x, self.time);
        if !potential.is_finite() {
            return f64::INFINITY;
        }
        let damping = match &self.viscoelastic {
            Some(term) => term.weight * term.reference.energy(&term.configuration(&x)),
            None => 0.0,
        };
        potential + self.step_parts(&x, None) + damping
    }

    /// Φ and its gradient with respect to the free values; with `system`, also
    /// loads the Hessian (K + w_M M + w_D D) into it.
    pub fn evaluate(&self, free: &[f64], system: Option<&mut FreeSystem>) -> Result<(f64, Vec<f64>)> {
        let x = self.full_positions(free);
        let nonzeros = self.model.pattern().nonzeros();
        let mut gradient = vec![0.0; x.len()];
        let want_hessian = system.is_some();
        let mut stiffness = if want_hessian { vec![0.0; nonzeros] } else { Vec::new() };
        let mut low_rank = Vec::new();
        let potential = if want_hessian {
            self.model.hessian(
                &x,
                self.time,
                self.project_hessian,
                &mut gradient,
                &mut stiffness,
                &mut low_rank,
            )?
        } else {
            self.model.gradient(&x, self.time, &mut gradient)?
        };
        // The viscoelastic term: value, gradient w s ∇W_ref and Hessian w s² K_ref.
        let mut damping_value = 0.0;
        let mut damping_stiffness = Vec::new();
        if let Some(term) = &self.viscoelastic {
            let y = term.configuration(&x);
            let mut reference_gradient = vec![0.0; x.len()];
            let energy = if want_hessian {
                damping_stiffness = vec![0.0; nonzeros];
                term.reference.hessian(
                    &y,
                    self.project_hessian,
                    &mut reference_gradient,
                    &mut damping_stiffness,
                )?
            } else {
                term.reference.gradient(&y, &mut reference_gradient)?
            };
            damping_value = term.weight * energy;
            gradient
                .iter_mut()
                .zip(&reference_gradient)
                .for_each(|(e, g)| *e += term.weight * term.scale * g);
        }
        if let Some(system) = system {
            let mut terms: Vec<(f64, &[f64])> = vec![(1.0, &stiffness)];
            if let Some(inertia) = &self.inertia {
                terms.push((inertia.weight, self.model.mass().values()));
            }
            if let Some(damping) = &self.damping {
                terms.push((damping.weight, &damping.values));
            }
            if let Some(term) = &self.viscoelastic {
                terms.push((term.weight * term.scale * term.scale, &damping_stiffness));
            }
            system.load(&terms);
        }
        let value = potential + self.step_parts(&x, Some(&mut gradient)) + damping_value;
        Ok((value, self.dofs.gather(&gradient)))
    }
}
