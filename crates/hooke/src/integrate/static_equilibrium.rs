//! Static equilibrium: each step solves ∇W(x) = f(t) at the step's end time
//! (quasi-static loading; velocities are zero). With continuation, a load step
//! that Newton cannot take at once is split in two, recursively.

use super::implicit::{solve_implicit_step, with_step_halving, ImplicitStep};
use super::{commit_step, Integrator, StepReport};
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
        let settings = self.settings;
        let system = &mut self.system;
        commit_step(model, state, dt, |state| {
            if !model.pins().iter().any(|p| p.is_active(state.time + dt)) {
                return Err(HookeError::Scene {
                    key: "pins".to_string(),
                    reason: "a static solve needs pinned vertices: a free body has no equilibrium under load (rigid motions are unconstrained)".to_string(),
                });
            }
            with_step_halving(state, dt, &settings, &mut |s, h| {
                let end = s.time + h;
                let mut base = s.positions.clone();
                model.apply_prescribed_positions(end, &mut base);
                let step = ImplicitStep {
                    dof_time: end,
                    base,
                    inertia: None,
                    damping: None,
                    force_time: end,
                    extra_force: None,
                    viscoelastic: None,
                };
                let (positions, newton) = solve_implicit_step(model, s, step, &settings, system)?;
                let next = State {
                    time: end,
                    positions,
                    velocities: vec![0.0; model.dof_count()],
                };
                Ok((next, StepReport::from(&newton)))
            })
        })
    }
}
