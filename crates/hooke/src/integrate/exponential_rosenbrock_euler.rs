//! Exponential Rosenbrock–Euler (Chen 2019 thesis, ch. 4): for u = (x, v) and
//! u' = b(u) = (v, M⁻¹(f − ∇W(x) − D v)), linearised at uₙ with Jacobian
//! J = [[0, I], [−M⁻¹K(xₙ), −M⁻¹D]],
//!   u_{n+1} = uₙ + h φ₁(hJ) b(uₙ),
//! evaluated by the Krylov φ₁ (expokit-style error control) without forming J.
//! Exact for linear systems with constant damping and forces; second order in
//! general. K is the exact (unprojected) stiffness. Pinned vertices are removed
//! from u (position constraints) and then set to their motion; explicit
//! obstacles are handled by closest-point projection after the step (Chen 2019
//! thesis, ch. 4). M⁻¹ is applied at every Krylov step: a division with a lumped mass,
//! a solve with the free-DOF block M_ff (factorised once per step) with a
//! consistent one; as with the explicit methods, the coupling M_fp to
//! accelerating pins is then neglected.

use super::entry::{settings_from, IntegratorEntry};
use super::implicit::split_on_failure;
use super::{commit_step, Capabilities, Integrator, StepReport};
use crate::error::{HookeError, Result};
use crate::linalg::{phi1v, KrylovSettings};
use crate::model::MassKind;
use crate::model::{project_out_of_obstacles, vertex_point, Model, State};
use crate::solve::{FreeSystem, SolverSettings};
use std::cell::RefCell;

/// Exponential Rosenbrock–Euler (Chen 2019 thesis, ch. 4): the step linearised at its start
/// and advanced by the matrix function φ₁, evaluated in a Krylov subspace. Exact for linear
/// systems with constant damping and forces, second order in general.
pub struct ExponentialRosenbrockEuler {
    settings: KrylovSettings,
    mass_system: Option<FreeSystem>,
}

impl ExponentialRosenbrockEuler {
    /// With the Krylov φ₁'s relative local error `tolerance` per unit time (a scene's default
    /// 1e-8; it must lie in (0, 1)) and its subspace dimension `krylov_dimension` (default 30,
    /// at least 2); a scene checks both, `new` does not.
    pub fn new(tolerance: f64, krylov_dimension: usize) -> Self {
        ExponentialRosenbrockEuler {
            settings: KrylovSettings {
                dimension: krylov_dimension,
                tolerance,
            },
            mass_system: None,
        }
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    #[serde(default = "default_krylov_tolerance")]
    krylov_tolerance: f64,
    #[serde(default = "default_krylov_dimension")]
    krylov_dimension: usize,
}

fn default_krylov_tolerance() -> f64 {
    1e-8
}

fn default_krylov_dimension() -> usize {
    30
}

fn build(table: &toml::Table, _: &SolverSettings) -> Result<Box<dyn Integrator>> {
    let s: Settings = settings_from(table)?;
    if !(s.krylov_tolerance > 0.0 && s.krylov_tolerance < 1.0) || s.krylov_dimension < 2 {
        return Err(HookeError::scene(
            "integrator",
            "krylov_tolerance must lie in (0, 1) and krylov_dimension be at least 2",
        ));
    }
    Ok(Box::new(ExponentialRosenbrockEuler::new(
        s.krylov_tolerance,
        s.krylov_dimension,
    )))
}

pub(crate) const ENTRY: IntegratorEntry = IntegratorEntry {
    name: "exponential_rosenbrock_euler",
    aliases: &["ere"],
    summary: "exponential Rosenbrock–Euler (Chen 2019 thesis, ch. 4) with the Krylov φ₁: exact for linear systems, second order",
    keys: &["krylov_tolerance", "krylov_dimension"],
    uses_solver: false,
    build,
};

/// M⁻¹ on free-DOF vectors.
enum MassInverse<'a> {
    Lumped(Vec<f64>),
    Consistent(&'a FreeSystem),
}

impl MassInverse<'_> {
    fn apply(&self, x: &mut [f64]) -> Result<()> {
        match self {
            MassInverse::Lumped(weights) => {
                x.iter_mut().zip(weights).for_each(|(a, w)| *a *= w);
                Ok(())
            }
            MassInverse::Consistent(system) => system.solve_in_place(x),
        }
    }
}

impl Integrator for ExponentialRosenbrockEuler {
    fn name(&self) -> &'static str {
        "exponential_rosenbrock_euler"
    }

    fn iterations_are(&self) -> &'static str {
        "Krylov substeps"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::COMMON
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        let settings = self.settings;
        let mass_system = &mut self.mass_system;
        let mut attempt = |s: &State, dt: f64| -> Result<(State, StepReport)> {
            let started = web_time::Instant::now();
            let end = s.time + dt;
            let dofs = model.dof_map(end);
            let n = model.dof_count();
            let free = dofs.free_count();
            let pattern = model.pattern();
            // K(xₙ) (exact), D, and the force at tₙ.
            let mut gradient = vec![0.0; n];
            let mut stiffness = vec![0.0; pattern.nonzeros()];
            let mut low_rank = Vec::new();
            model.hessian(
                &s.positions,
                s.time,
                false,
                &mut gradient,
                &mut stiffness,
                &mut low_rank,
            )?;
            add_resting_contact_stiffness(model, &s.positions, &mut stiffness);
            let low_rank = crate::linalg::LowRank::combined(&low_rank.iter().map(|l| (1.0, l)).collect::<Vec<_>>());
            let damping = model.damping_values(&s.positions)?;
            let mut damping_force = vec![0.0; n];
            if let Some(d) = &damping {
                pattern.symmetric_multiply(d, &s.velocities, &mut damping_force);
            }
            let inverse_mass = match model.mass().kind() {
                MassKind::Lumped => {
                    MassInverse::Lumped(dofs.free_dofs.iter().map(|&d| 1.0 / model.mass().of_dof(d)).collect())
                }
                MassKind::Consistent => {
                    let system = FreeSystem::for_dofs(mass_system, model, &dofs)?;
                    system.load(&[(1.0, model.mass().values())]);
                    system.factorize()?;
                    MassInverse::Consistent(&*system)
                }
            };
            // b(uₙ) on the free DOFs: (v, M⁻¹(f − ∇W − Dv)).
            let mut acceleration: Vec<f64> = dofs
                .free_dofs
                .iter()
                .map(|&d| -gradient[d] - damping_force[d])
                .collect();
            inverse_mass.apply(&mut acceleration)?;
            let mut b = Vec::with_capacity(2 * free);
            b.extend(dofs.free_dofs.iter().map(|&d| s.velocities[d]));
            b.extend(acceleration);
            // J z = (z_v, −M⁻¹(K z_x + D z_v)), with pinned entries zero. The Krylov
            // code takes an infallible operator, so a solve error is kept for after.
            let failure = RefCell::new(None);
            let jacobian = |z: &[f64], y: &mut [f64]| {
                let (zx, zv) = z.split_at(free);
                let mut full_x = vec![0.0; n];
                let mut full_v = vec![0.0; n];
                dofs.scatter(zx, &mut full_x);
                dofs.scatter(zv, &mut full_v);
                let mut kx = vec![0.0; n];
                pattern.symmetric_multiply(&stiffness, &full_x, &mut kx);
                if let Some(l) = &low_rank {
                    l.multiply_add(1.0, &full_x, &mut kx);
                }
                if let Some(d) = &damping {
                    let mut dv = vec![0.0; n];
                    pattern.symmetric_multiply(d, &full_v, &mut dv);
                    kx.iter_mut().zip(&dv).for_each(|(a, b)| *a += b);
                }
                y[..free].copy_from_slice(zv);
                let mut pulled: Vec<f64> = dofs.free_dofs.iter().map(|&d| -kx[d]).collect();
                if let Err(error) = inverse_mass.apply(&mut pulled) {
                    failure.borrow_mut().get_or_insert(error);
                }
                y[free..].copy_from_slice(&pulled);
            };
            let (increment, krylov) = phi1v(dt, &jacobian, &b, &settings)?;
            if let Some(error) = failure.into_inner() {
                return Err(error);
            }
            let mut positions = s.positions.clone();
            let mut velocities = s.velocities.clone();
            for (i, &d) in dofs.free_dofs.iter().enumerate() {
                positions[d] += increment[i];
                velocities[d] += increment[free + i];
            }
            model.apply_prescribed_positions(end, &mut positions);
            model.apply_prescribed_velocities(end, &mut velocities);
            project_out_of_obstacles(model.obstacles(), model.dimension(), &mut positions, &mut velocities);
            // A linearised step can land where a material is undefined (an
            // inverted Neo-Hookean element), or create energy where nothing
            // does work: failures the halving retries.
            if model.may_be_undefined() {
                let mut force = vec![0.0; n];
                if let Err(error) = model.gradient(&positions, end, &mut force) {
                    return Err(HookeError::Solver {
                        reason: format!("the exponential step landed where a material is undefined: {error}"),
                    });
                }
            }
            if !model.does_work_on_the_body() {
                let before = EnergyBalance::of(model, &s.positions, &s.velocities, s.time);
                let after = EnergyBalance::of(model, &positions, &velocities, end);
                let created = after.total - before.total;
                let in_motion = before
                    .in_motion
                    .max(after.in_motion)
                    .max((after.gravitational - before.gravitational).abs());
                if created > CREATED_ENERGY_LIMIT * in_motion {
                    return Err(HookeError::Solver {
                        reason: format!(
                            "the exponential step created {created:.3e} J with no work done on the body, {:.0}% of the {in_motion:.3e} J in motion",
                            100.0 * created / in_motion
                        ),
                    });
                }
            }
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
        };
        commit_step(model, state, dt, |s| {
            split_on_failure(s, dt, MAX_STEP_HALVINGS, &mut attempt)
        })
    }
}

/// How many times a failed step is split in two (down to 1/16 of the step).
/// Linearised at its start, a step across a sudden change (a pin released
/// from a sagging bar) can create energy, or invert an element, where
/// smaller steps do not: on the falling bar of the Chen 2019 thesis the step
/// of the release at h = 0.01 s created 12 J (30% of the energy in motion)
/// and the next inverted an element, while at h = 0.005 s the release step
/// creates 0.33 J and the run goes through. The steps split are counted in
/// the run's notes.
const MAX_STEP_HALVINGS: usize = 4;

/// The energy a step may create, as a fraction of the energy in motion, when
/// nothing does work on the body. ERE is not conservative, so some energy
/// drift is expected: at h = 0.005 s the falling bar's steps stay within 3%.
/// A step that creates more is split.
const CREATED_ENERGY_LIMIT: f64 = 0.02;

/// The total energy of a state and the part of it in motion.
struct EnergyBalance {
    total: f64,
    in_motion: f64,
    gravitational: f64,
}

impl EnergyBalance {
    fn of(model: &Model, positions: &[f64], velocities: &[f64], time: f64) -> EnergyBalance {
        let kinetic = model.kinetic_energy(velocities);
        let parts = model.energies(positions, time);
        EnergyBalance {
            total: kinetic + parts.elastic + parts.gravitational + parts.contact,
            in_motion: kinetic + parts.elastic + parts.contact,
            gravitational: parts.gravitational,
        }
    }
}

/// Adds the contact stiffness κ m n nᵀ of the vertices that rest on the
/// surface of a projecting obstacle (within 1e-9 of it, outside), where the
/// penalty itself is zero. Closest-point projection leaves vertices exactly
/// there, so a linearised step that ignored them would let the cloth's
/// compressed springs buckle freely into the obstacle: the exponential
/// integrator then grows those unstable modes over the whole step and the
/// projection pumps energy in (the cloth on a sphere of Chen's thesis, §4.2.3). Counting them
/// as in contact for the step keeps its Jacobian honest.
fn add_resting_contact_stiffness(model: &Model, x: &[f64], values: &mut [f64]) {
    let pattern = model.pattern();
    let d = model.dimension();
    for obstacle in model.obstacles().iter().filter(|o| o.project) {
        for v in 0..x.len() / d {
            let proximity = obstacle.shape.proximity(&vertex_point(x, v, d));
            if !(0.0..=1e-9).contains(&proximity.distance) {
                continue;
            }
            let k = obstacle.stiffness.unwrap_or(0.0) * model.mass().lumped()[v];
            let n = proximity.normal;
            for a in 0..d {
                for b in 0..=a {
                    if let Some(position) = pattern.position(d * v + a, d * v + b) {
                        values[position] += k * n[a] * n[b];
                    }
                }
            }
        }
    }
}
