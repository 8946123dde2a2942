//! Symplectic Euler: v_{n+1} = vₙ + h a(xₙ, vₙ, tₙ), x_{n+1} = xₙ + h v_{n+1}.
//! First order, explicit; conserves linear and angular momentum of a free,
//! undamped body exactly and keeps energy bounded; stable only for h below
//! about 2/ω_max of the stiffest mode. With viscoelastic damping it applies the
//! explicit impulse −k_D ∇W(F(x_{k−1}, x_k)) (Kharevych 2010 thesis, §2.3), which is torque-free
//! about x_k: linear and angular momentum stay exact.

use super::entry::IntegratorEntry;
use super::explicit::{explicit_step, ExplicitMethod, PreviousPositions};
use super::{history_from_json, history_to_json, Capabilities, Integrator, StepReport};
use crate::error::Result;
use crate::model::{Model, State};
use crate::solve::{FreeSystem, SolverSettings};

fn build(_: &toml::Table, _: &SolverSettings) -> Result<Box<dyn Integrator>> {
    Ok(Box::new(SymplecticEuler::default()))
}

pub(crate) const ENTRY: IntegratorEntry = IntegratorEntry {
    name: "symplectic_euler",
    aliases: &["se"],
    summary: "symplectic Euler: order 1, explicit, momentum-conserving, energy bounded; explicit viscoelastic damping",
    keys: &[],
    uses_solver: false,
    build,
};

/// Symplectic Euler: first order and explicit; it conserves the linear and angular momentum
/// of a free undamped body exactly and keeps its energy bounded, but is stable only below
/// about 2/ω_max of the stiffest mode. Viscoelastic damping acts as an explicit impulse
/// (Kharevych 2010 thesis, §2.3).
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

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            viscoelastic_damping: true,
            gradient_only: true,
            ..Capabilities::COMMON
        }
    }

    /// The positions before the current state feed the viscoelastic impulse.
    fn history(&self) -> Result<serde_json::Value> {
        history_to_json(&self.previous)
    }

    fn restore_history(&mut self, history: &serde_json::Value) -> Result<()> {
        self.previous = history_from_json(self.name(), history)?;
        Ok(())
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
