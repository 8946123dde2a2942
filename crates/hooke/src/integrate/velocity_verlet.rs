//! Velocity Verlet: v½ = vₙ + h/2 aₙ, x_{n+1} = xₙ + h v½, v_{n+1} = v½ + h/2 a_{n+1}.
//! Second order, symplectic and time-reversible for conservative forces; explicit.

use super::entry::IntegratorEntry;
use super::explicit::{explicit_step, ExplicitMethod};
use super::{Capabilities, Integrator, StepReport};
use crate::error::Result;
use crate::model::{Model, State};
use crate::solve::{FreeSystem, SolverSettings};

fn build(_: &toml::Table, _: &SolverSettings) -> Result<Box<dyn Integrator>> {
    Ok(Box::new(VelocityVerlet::default()))
}

pub(crate) const ENTRY: IntegratorEntry = IntegratorEntry {
    name: "velocity_verlet",
    aliases: &["vv"],
    summary: "velocity Verlet: order 2, explicit, symplectic",
    keys: &[],
    uses_solver: false,
    build,
};

/// Velocity Verlet: second order and explicit; symplectic and time-reversible for
/// conservative forces.
#[derive(Default)]
pub struct VelocityVerlet {
    mass_system: Option<FreeSystem>,
}

impl Integrator for VelocityVerlet {
    fn name(&self) -> &'static str {
        "velocity_verlet"
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
            ExplicitMethod::VelocityVerlet,
            &mut self.mass_system,
            None,
        )
    }
}
