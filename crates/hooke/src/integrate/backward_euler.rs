//! Backward Euler: x_{n+1} = argmin Φ(x) with Φ = ½‖x − xₙ − h vₙ‖²_M / h² + W(x)
//! − fᵀx (+ Rayleigh dissipation ½‖x − xₙ‖²_D / h), v_{n+1} = (x_{n+1} − xₙ)/h.

use super::{ensure_finite, step_failure, Integrator, StepReport};
use crate::error::Result;
use crate::model::{Model, State};
use crate::solve::{minimize, FreeSystem, IncrementalPotential, NewtonSettings};
use std::time::Instant;

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
        let started = Instant::now();
        let next_time = state.time + dt;
        let attempt = (|| {
            let dofs = model.dof_map(next_time);
            let predicted: Vec<f64> = state
                .positions
                .iter()
                .zip(&state.velocities)
                .map(|(x, v)| x + dt * v)
                .collect();
            let mut base = predicted.clone();
            model.apply_prescribed_positions(next_time, &mut base);
            let mut external_force = vec![0.0; model.dof_count()];
            model.external_force(next_time, &mut external_force);
            let potential = IncrementalPotential {
                model,
                dofs: &dofs,
                damping: model
                    .damping_values(&state.positions)?
                    .map(|values| (1.0 / dt, values, state.positions.clone())),
                inertia: Some((1.0 / (dt * dt), predicted)),
                external_force,
                project_hessian: self.settings.project_hessian,
                base,
            };
            let system = FreeSystem::for_dofs(&mut self.system, model.pattern(), &dofs)?;
            let mut free = dofs.gather(&potential.base);
            let newton = minimize(&potential, &mut free, system, &self.settings, model.length_scale())?;
            let positions = potential.full_positions(&free);
            let velocities = positions
                .iter()
                .zip(&state.positions)
                .map(|(x1, x0)| (x1 - x0) / dt)
                .collect();
            let next = State {
                time: next_time,
                positions,
                velocities,
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
