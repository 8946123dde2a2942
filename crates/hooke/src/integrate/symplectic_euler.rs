//! Symplectic Euler: v_{n+1} = vₙ + h a(xₙ, vₙ, tₙ), x_{n+1} = xₙ + h v_{n+1}.
//! First order, explicit; conserves linear and angular momentum of a free,
//! undamped body exactly and keeps energy bounded; stable only for h below
//! about 2/ω_max of the stiffest mode. With viscoelastic damping it applies the
//! explicit impulse −k_D ∇W(F(x_{k−1}, x_k)) (seed 001 §2.6), which is torque-free
//! about x_k: linear and angular momentum stay exact.

use super::explicit::{explicit_step, ExplicitMethod, PreviousPositions};
use super::{Integrator, StepReport};
use crate::error::Result;
use crate::model::{Model, State};
use crate::solve::FreeSystem;

#[derive(Default)]
pub struct SymplecticEuler {
    mass_system: Option<FreeSystem>,
    /// Positions before the current state, for the viscoelastic damping impulse.
    previous: PreviousPositions,
}

impl Integrator for SymplecticEuler {
    fn name(&self) -> &'static str {
        "symplectic_euler"
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        explicit_step(
            model,
            state,
            dt,
            ExplicitMethod::SymplecticEuler,
            &mut self.mass_system,
            Some(&mut self.previous),
        )
    }
}
