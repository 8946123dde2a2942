//! Semi-implicit backward Euler (Baraff & Witkin 1998): one Newton iteration of
//! backward Euler, linearised at the start of the step.
//!
//! (M + hD + h²K) Δv = h (f(xₙ) − D vₙ − h K vₙ),  v_{n+1} = vₙ + Δv,  x_{n+1} = xₙ + h v_{n+1},
//! with K = K(xₙ) (optionally projected to PSD) and the external force at t_{n+1}.

use super::{axpy, commit_step, Integrator, StepReport};
use crate::error::Result;
use crate::linalg::FactorizationOutcome;
use crate::model::{Model, State};
use crate::solve::FreeSystem;
use std::time::Instant;

pub struct SemiImplicitBackwardEuler {
    project_hessian: bool,
    system: Option<FreeSystem>,
}

impl SemiImplicitBackwardEuler {
    pub fn new(project_hessian: bool) -> Self {
        SemiImplicitBackwardEuler {
            project_hessian,
            system: None,
        }
    }
}

impl Integrator for SemiImplicitBackwardEuler {
    fn name(&self) -> &'static str {
        "semi_implicit_backward_euler"
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        super::viscoelastic_unsupported(model, self.name())?;
        let started = Instant::now();
        let next_time = state.time + dt;
        let n = model.dof_count();
        commit_step(model, state, dt, |state| {
            let dofs = model.dof_map(next_time);
            let pattern = model.pattern();
            let mut elastic_gradient = vec![0.0; n];
            let mut stiffness = vec![0.0; pattern.nonzeros()];
            model.potential_hessian(
                &state.positions,
                self.project_hessian,
                Some(&mut elastic_gradient),
                &mut stiffness,
            )?;
            let assembly_seconds = started.elapsed().as_secs_f64();
            let damping = model.damping_values(&state.positions)?;

            // Full system matrix A = M + hD + h²K, needed for the pinned-DOF coupling too.
            let mut terms: Vec<(f64, &[f64])> = vec![(1.0, model.mass_values()), (dt * dt, &stiffness)];
            if let Some(d) = &damping {
                terms.push((dt, d));
            }
            let system_values: Vec<f64> = (0..pattern.nonzeros())
                .map(|k| terms.iter().map(|(w, a)| w * a[k]).sum())
                .collect();

            // Right-hand side h (f − D vₙ − h K vₙ) over all DOFs.
            let mut external = vec![0.0; n];
            model.external_force(next_time, &mut external);
            let mut stiffness_velocity = vec![0.0; n];
            pattern.symmetric_multiply(&stiffness, &state.velocities, &mut stiffness_velocity);
            let mut damping_velocity = vec![0.0; n];
            if let Some(d) = &damping {
                pattern.symmetric_multiply(d, &state.velocities, &mut damping_velocity);
            }
            let mut rhs: Vec<f64> = (0..n)
                .map(|i| dt * (external[i] - elastic_gradient[i] - damping_velocity[i] - dt * stiffness_velocity[i]))
                .collect();

            // Pinned DOFs have a prescribed Δv; move their column of A to the right-hand side.
            let mut prescribed = state.positions.clone();
            model.apply_prescribed_positions(next_time, &mut prescribed);
            let mut pinned_change = vec![0.0; n];
            for (i, slot) in pinned_change.iter_mut().enumerate() {
                if dofs.free_index[i].is_none() {
                    *slot = (prescribed[i] - state.positions[i]) / dt - state.velocities[i];
                }
            }
            let mut coupling = vec![0.0; n];
            pattern.symmetric_multiply(&system_values, &pinned_change, &mut coupling);
            rhs.iter_mut().zip(&coupling).for_each(|(r, c)| *r -= c);

            let system = FreeSystem::for_dofs(&mut self.system, pattern, &dofs)?;
            system.load(&[(1.0, &system_values)]);
            let shifted = matches!(system.factorize()?, FactorizationOutcome::Shifted { .. });
            let mut velocity_change = dofs.gather(&rhs);
            system.solve_in_place(&mut velocity_change)?;
            dofs.scatter(&velocity_change, &mut pinned_change);

            let velocities: Vec<f64> = state
                .velocities
                .iter()
                .zip(&pinned_change)
                .map(|(v, dv)| v + dv)
                .collect();
            let mut positions = axpy(&state.positions, dt, &velocities);
            model.apply_prescribed_positions(next_time, &mut positions);
            let next = State {
                time: next_time,
                positions,
                velocities,
            };
            Ok((
                next,
                StepReport {
                    iterations: 1,
                    shifted_factorizations: usize::from(shifted),
                    assembly_seconds,
                    solve_seconds: started.elapsed().as_secs_f64() - assembly_seconds,
                    ..StepReport::default()
                },
            ))
        })
    }
}
