//! Backward Euler: x_{n+1} = argmin Φ(x) with Φ = ½‖x − xₙ − h vₙ‖²_M / h² + W(x)
//! − fᵀx (+ Rayleigh dissipation ½‖x − xₙ‖²_D / h), v_{n+1} = (x_{n+1} − xₙ)/h.

use super::{commit_step, solve_incremental_step, Integrator, StepReport};
use crate::error::Result;
use crate::model::{Model, State};
use crate::solve::{FreeSystem, NewtonSettings};

pub struct BackwardEuler {
    settings: NewtonSettings,
    system: Option<FreeSystem>,
}

impl BackwardEuler {
    pub fn new(settings: NewtonSettings) -> Self {
        BackwardEuler { settings, system: None }
    }
}

impl Integrator for BackwardEuler {
    fn name(&self) -> &'static str {
        "backward_euler"
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        commit_step(model, state, dt, |state| {
            let (positions, newton) = solve_incremental_step(model, state, dt, true, &self.settings, &mut self.system)?;
            let velocities = positions
                .iter()
                .zip(&state.positions)
                .map(|(x1, x0)| (x1 - x0) / dt)
                .collect();
            let next = State {
                time: state.time + dt,
                positions,
                velocities,
            };
            Ok((next, StepReport::from(&newton)))
        })
    }
}
