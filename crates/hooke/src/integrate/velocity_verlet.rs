//! Velocity Verlet: v½ = vₙ + h/2 aₙ, x_{n+1} = xₙ + h v½, v_{n+1} = v½ + h/2 a_{n+1}.
//! Second order, symplectic and time-reversible for conservative forces; explicit.

use super::explicit::{explicit_step, ExplicitMethod};
use super::{Integrator, StepReport};
use crate::error::Result;
use crate::model::{Model, State};
use crate::solve::FreeSystem;

#[derive(Default)]
pub struct VelocityVerlet {
    mass_system: Option<FreeSystem>,
}

impl Integrator for VelocityVerlet {
    fn name(&self) -> &'static str {
        "velocity_verlet"
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
