//! Static equilibrium: each step solves ∇W(x) = f(t) at the step's end time
//! (quasi-static loading; velocities are zero).

use super::{ensure_finite, step_failure, Integrator, StepReport};
use crate::error::{HookeError, Result};
use crate::model::{Model, State};
use crate::solve::{minimize, FreeSystem, IncrementalPotential, NewtonSettings};
use std::time::Instant;

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
        let started = Instant::now();
        let next_time = state.time + dt;
        let attempt = (|| {
            let dofs = model.dof_map(next_time);
            if !model.pins().iter().any(|p| p.is_active(next_time)) {
                return Err(HookeError::Solver {
                    reason: "a static solve needs pinned vertices: a free body has no equilibrium under load (rigid motions are unconstrained)".to_string(),
                });
            }
            let mut base = state.positions.clone();
            model.apply_prescribed_positions(next_time, &mut base);
            let mut external_force = vec![0.0; model.dof_count()];
            model.external_force(next_time, &mut external_force);
            let potential = IncrementalPotential {
                model,
                dofs: &dofs,
                damping: None,
                inertia: None,
                external_force,
                project_hessian: self.settings.project_hessian,
                base,
            };
            let system = FreeSystem::for_dofs(&mut self.system, model.pattern(), &dofs)?;
            let mut free = dofs.gather(&potential.base);
            let newton = minimize(&potential, &mut free, system, &self.settings, model.length_scale())?;
            let next = State {
                time: next_time,
                positions: potential.full_positions(&free),
                velocities: vec![0.0; model.dof_count()],
            };
            ensure_finite(&next)?;
            Ok((next, StepReport::from(&newton)))
        })();
        let (next, mut report) = attempt.map_err(|e| step_failure(state, dt, e))?;
        *state = next;
        report.total_seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }
}
