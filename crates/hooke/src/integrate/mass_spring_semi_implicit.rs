//! MSSI, the mass-spring semi-implicit splitting of the Chen 2019 thesis, ch. 5: the stiff
//! material part of the spring Hessian, K_s = Σ k ŝŝᵀ (and the contact
//! penalty), is implicit; the geometric part k(1 − l₀/l)(I − ŝŝᵀ) is explicit.
//! This is Chen's Eq. 5.8 with its sign corrected (+h²K_s, as K = −∂f/∂x requires)
//! and its missing −h K_s vₙ term restored:
//!   (M + hD + h²K_s) Δv = h (f(xₙ) − D vₙ − h K_s vₙ),  x_{n+1} = xₙ + h v_{n+1}.
//! K_s is positive semi-definite whatever the deformation, so the system never
//! needs a shift, unlike semi-implicit Euler on compressed springs.

use super::entry::IntegratorEntry;
use super::semi_implicit_euler::Linearisation;
use super::{commit_step, Capabilities, Integrator, StepReport};
use crate::error::{HookeError, Result};
use crate::model::{Model, State};
use crate::solve::{FreeSystem, SolverSettings};
use web_time::Instant;

fn build(_: &toml::Table, _: &SolverSettings) -> Result<Box<dyn Integrator>> {
    Ok(Box::new(MassSpringSemiImplicit::default()))
}

pub(crate) const ENTRY: IntegratorEntry = IntegratorEntry {
    name: "mass_spring_semi_implicit",
    aliases: &["mssi"],
    summary:
        "MSSI (Chen 2019 thesis, ch. 5): semi-implicit Euler with only the springs' material stiffness implicit; spring networks only",
    keys: &[],
    uses_solver: false,
    build,
};

/// MSSI, the mass-spring semi-implicit splitting of the Chen 2019 thesis (ch. 5): semi-implicit
/// Euler with only the springs' material stiffness implicit, so its system is never
/// indefinite. Spring networks only.
#[derive(Default)]
pub struct MassSpringSemiImplicit {
    system: Option<FreeSystem>,
}

impl Integrator for MassSpringSemiImplicit {
    fn name(&self) -> &'static str {
        "mass_spring_semi_implicit"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            element_terms: false,
            two_dimensional: false,
            ..Capabilities::COMMON
        }
    }

    fn requirements(&self, model: &Model) -> Result<()> {
        match model.terms().iter().find(|t| !t.capabilities().material_stiffness) {
            Some(term) => Err(HookeError::scene(
                "integrator.kind",
                format!(
                    "mass_spring_semi_implicit splits spring stiffness only; this model has {} (use semi_implicit_backward_euler or siere)",
                    term.name()
                ),
            )),
            None => Ok(()),
        }
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        commit_step(model, state, dt, |state| {
            let started = Instant::now();
            let n = model.dof_count();
            let mut gradient = vec![0.0; n];
            let mut stiffness = vec![0.0; model.pattern().nonzeros()];
            model.gradient(&state.positions, state.time + dt, &mut gradient)?;
            self.requirements(model)?;
            for term in model.terms() {
                term.add_material_stiffness(&state.positions, state.time, &mut stiffness);
            }
            Linearisation::from_parts(model, state, dt, gradient, stiffness, started)?.semi_implicit_step(
                &mut self.system,
                model,
                state,
                dt,
                started,
            )
        })
    }
}
