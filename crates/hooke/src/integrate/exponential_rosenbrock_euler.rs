//! Exponential Rosenbrock–Euler (seed 000 ch. 4): for u = (x, v) and
//! u' = b(u) = (v, M⁻¹(f − ∇W(x) − D v)), linearised at uₙ with Jacobian
//! J = [[0, I], [−M⁻¹K(xₙ), −M⁻¹D]],
//!   u_{n+1} = uₙ + h φ₁(hJ) b(uₙ),
//! evaluated by the Krylov φ₁ (expokit-style error control) without forming J.
//! Exact for linear systems with constant damping and forces; second order in
//! general. K is the exact (unprojected) stiffness. Pinned vertices are removed
//! from u (position constraints) and then set to their motion; explicit
//! obstacles are handled by closest-point projection after the step (seed 000
//! ch. 4). Needs a lumped mass (M⁻¹ is applied at every Krylov step).

use super::{commit_step, Integrator, StepReport};
use crate::error::{HookeError, Result};
use crate::fem::MassKind;
use crate::linalg::{phi1v, KrylovSettings};
use crate::model::{Model, State};

pub struct ExponentialRosenbrockEuler {
    settings: KrylovSettings,
}

impl ExponentialRosenbrockEuler {
    pub fn new(tolerance: f64, krylov_dimension: usize) -> Self {
        ExponentialRosenbrockEuler {
            settings: KrylovSettings {
                dimension: krylov_dimension,
                tolerance,
            },
        }
    }
}

impl Integrator for ExponentialRosenbrockEuler {
    fn name(&self) -> &'static str {
        "exponential_rosenbrock_euler"
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        if model.mass_kind() != MassKind::Lumped {
            return Err(HookeError::scene(
                "simulation.mass",
                "exponential_rosenbrock_euler needs mass = \"lumped\"",
            ));
        }
        super::viscoelastic_unsupported(model, self.name())?;
        let settings = self.settings;
        commit_step(model, state, dt, |s| {
            let started = std::time::Instant::now();
            let end = s.time + dt;
            let dofs = model.dof_map(end);
            let n = model.dof_count();
            let free = dofs.free_count();
            let pattern = model.pattern();
            // K(xₙ) (exact), D, and the force at tₙ.
            let mut gradient = vec![0.0; n];
            let mut stiffness = vec![0.0; pattern.nonzeros()];
            model.potential_hessian(&s.positions, false, Some(&mut gradient), &mut stiffness)?;
            let damping = model.damping_values(&s.positions)?;
            let mut force = vec![0.0; n];
            model.external_force(s.time, &mut force);
            let mut damping_force = vec![0.0; n];
            if let Some(d) = &damping {
                pattern.symmetric_multiply(d, &s.velocities, &mut damping_force);
            }
            let masses = model.lumped_masses();
            let inverse_mass: Vec<f64> = dofs.free_dofs.iter().map(|&d| 1.0 / masses[d / 3]).collect();
            // b(uₙ) on the free DOFs: (v, M⁻¹(f − ∇W − Dv)).
            let mut b = Vec::with_capacity(2 * free);
            b.extend(dofs.free_dofs.iter().map(|&d| s.velocities[d]));
            b.extend(
                dofs.free_dofs
                    .iter()
                    .zip(&inverse_mass)
                    .map(|(&d, w)| w * (force[d] - gradient[d] - damping_force[d])),
            );
            // J z = (z_v, −M⁻¹(K z_x + D z_v)), with pinned entries zero.
            let jacobian = |z: &[f64], y: &mut [f64]| {
                let (zx, zv) = z.split_at(free);
                let mut full_x = vec![0.0; n];
                let mut full_v = vec![0.0; n];
                dofs.scatter(zx, &mut full_x);
                dofs.scatter(zv, &mut full_v);
                let mut kx = vec![0.0; n];
                pattern.symmetric_multiply(&stiffness, &full_x, &mut kx);
                if let Some(d) = &damping {
                    let mut dv = vec![0.0; n];
                    pattern.symmetric_multiply(d, &full_v, &mut dv);
                    kx.iter_mut().zip(&dv).for_each(|(a, b)| *a += b);
                }
                y[..free].copy_from_slice(zv);
                for (i, &d) in dofs.free_dofs.iter().enumerate() {
                    y[free + i] = -inverse_mass[i] * kx[d];
                }
            };
            let (increment, krylov) = phi1v(dt, &jacobian, &b, &settings)?;
            let mut positions = s.positions.clone();
            let mut velocities = s.velocities.clone();
            for (i, &d) in dofs.free_dofs.iter().enumerate() {
                positions[d] += increment[i];
                velocities[d] += increment[free + i];
            }
            model.apply_prescribed_positions(end, &mut positions);
            model.apply_prescribed_velocities(end, &mut velocities);
            model.project_out_of_obstacles(&mut positions, &mut velocities);
            Ok((
                State {
                    time: end,
                    positions,
                    velocities,
                },
                StepReport {
                    iterations: krylov.substeps,
                    solve_seconds: started.elapsed().as_secs_f64(),
                    ..StepReport::default()
                },
            ))
        })
    }
}
