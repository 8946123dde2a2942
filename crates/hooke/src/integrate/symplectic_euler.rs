//! Symplectic Euler: v_{n+1} = vₙ + h a(xₙ, vₙ, tₙ), x_{n+1} = xₙ + h v_{n+1}.
//! First order, explicit; conserves linear and angular momentum of a free,
//! undamped body exactly and keeps energy bounded; stable only for h below
//! about 2/ω_max of the stiffest mode.

use super::explicit::{explicit_step, ExplicitMethod};
use super::{Integrator, StepReport};
use crate::error::Result;
use crate::model::{Model, State};
use crate::solve::FreeSystem;

#[derive(Default)]
pub struct SymplecticEuler {
    mass_system: Option<FreeSystem>,
}

impl Integrator for SymplecticEuler {
    fn name(&self) -> &'static str {
        "symplectic_euler"
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        explicit_step(model, state, dt, ExplicitMethod::SymplecticEuler, &mut self.mass_system)
    }
}
