//! Static equilibrium: each step solves ∇W(x) = f(t) at the step's end time
//! (quasi-static loading; velocities are zero).

use super::{commit_step, solve_incremental_step, Integrator, StepReport};
use crate::error::{HookeError, Result};
use crate::model::{Model, State};
use crate::solve::{FreeSystem, NewtonSettings};

pub struct StaticEquilibrium {
    settings: NewtonSettings,
    system: Option<FreeSystem>,
}

impl StaticEquilibrium {
    pub fn new(settings: NewtonSettings) -> Self {
        StaticEquilibrium { settings, system: None }
    }
}

impl Integrator for StaticEquilibrium {
    fn name(&self) -> &'static str {
        "static"
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        commit_step(model, state, dt, |state| {
            if !model.pins().iter().any(|p| p.is_active(state.time + dt)) {
                return Err(HookeError::Solver {
                    reason: "a static solve needs pinned vertices: a free body has no equilibrium under load (rigid motions are unconstrained)".to_string(),
                });
            }
            let (positions, newton) =
                solve_incremental_step(model, state, dt, false, &self.settings, &mut self.system)?;
            let next = State {
                time: state.time + dt,
                positions,
                velocities: vec![0.0; model.dof_count()],
            };
            Ok((next, StepReport::from(&newton)))
        })
    }
}
