//! Forward (explicit) Euler: x_{n+1} = xₙ + h vₙ, v_{n+1} = vₙ + h a(xₙ, vₙ).
//! First order; it adds energy to every undamped oscillation at any step size,
//! so it is offered as a reference, not for production runs.

use super::entry::IntegratorEntry;
use super::explicit::{explicit_step, ExplicitMethod};
use super::{Capabilities, Integrator, StepReport};
use crate::error::Result;
use crate::model::{Model, State};
use crate::solve::{FreeSystem, SolverSettings};

fn build(_: &toml::Table, _: &SolverSettings) -> Result<Box<dyn Integrator>> {
    Ok(Box::new(ForwardEuler::default()))
}

pub(crate) const ENTRY: IntegratorEntry = IntegratorEntry {
    name: "forward_euler",
    aliases: &["fe"],
    summary: "explicit Euler: order 1; gains energy on undamped oscillation (a reference only)",
    keys: &[],
    uses_solver: false,
    build,
};

/// Forward (explicit) Euler: first order, and it gains energy on every undamped
/// oscillation at any step size; a reference, not for production runs.
#[derive(Default)]
pub struct ForwardEuler {
    mass_system: Option<FreeSystem>,
}

impl Integrator for ForwardEuler {
    fn name(&self) -> &'static str {
        "forward_euler"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            gradient_only: true,
            ..Capabilities::COMMON
        }
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        explicit_step(
            model,
            state,
            dt,
            ExplicitMethod::ForwardEuler,
            &mut self.mass_system,
            None,
        )
    }
}
