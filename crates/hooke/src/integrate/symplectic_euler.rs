//! Symplectic Euler: v_{n+1} = vₙ + h M⁻¹ (f(xₙ) − D vₙ), x_{n+1} = xₙ + h v_{n+1}.
//! Explicit, so it uses the lumped (diagonal) mass; stable only for h below
//! about 2/ω_max of the stiffest mode.

use super::{commit_step, Integrator, StepReport};
use crate::error::{HookeError, Result};
use crate::fem::MassKind;
use crate::model::{Model, State};
use std::time::Instant;

#[derive(Default)]
pub struct SymplecticEuler;

impl Integrator for SymplecticEuler {
    fn name(&self) -> &'static str {
        "symplectic_euler"
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        let started = Instant::now();
        let next_time = state.time + dt;
        let n = model.dof_count();
        commit_step(model, state, dt, |state| {
            if model.mass_kind() != MassKind::Lumped {
                return Err(HookeError::scene(
                    "mass",
                    "symplectic_euler is explicit and needs mass = \"lumped\"",
                ));
            }
            let mut force = vec![0.0; n];
            model.external_force(state.time, &mut force);
            let mut elastic_gradient = vec![0.0; n];
            model.elastic_gradient(&state.positions, &mut elastic_gradient)?;
            let mut damping_velocity = vec![0.0; n];
            if let Some(d) = model.damping_values(&state.positions)? {
                model
                    .pattern()
                    .symmetric_multiply(&d, &state.velocities, &mut damping_velocity);
            }
            let masses = model.lumped_masses();
            let mut velocities: Vec<f64> = (0..n)
                .map(|i| {
                    state.velocities[i] + dt * (force[i] - elastic_gradient[i] - damping_velocity[i]) / masses[i / 3]
                })
                .collect();
            let mut positions: Vec<f64> = state
                .positions
                .iter()
                .zip(&velocities)
                .map(|(x, v)| x + dt * v)
                .collect();
            // Pinned vertices follow their motion; their velocity is the finite difference of it.
            model.apply_prescribed_positions(next_time, &mut positions);
            let dofs = model.dof_map(next_time);
            for (i, v) in velocities.iter_mut().enumerate() {
                if dofs.free_index[i].is_none() {
                    *v = (positions[i] - state.positions[i]) / dt;
                }
            }
            let next = State {
                time: next_time,
                positions,
                velocities,
            };
            let assembly_seconds = started.elapsed().as_secs_f64();
            Ok((
                next,
                StepReport {
                    iterations: 1,
                    assembly_seconds,
                    ..StepReport::default()
                },
            ))
        })
    }
}
