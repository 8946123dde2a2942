//! The explicit methods, each a few lines over one acceleration evaluation:
//!
//! | method | update | order | evaluations |
//! |---|---|---|---|
//! | forward Euler | x += h v; v += h a(x, v) (both from the old state) | 1 | 1 |
//! | symplectic Euler | v += h a(x, v); x += h v (new v) | 1 | 1 |
//! | velocity Verlet | v½ = v + h/2 a; x += h v½; v = v½ + h/2 a(x_new, v½) | 2 | 1 (a is reused) |
//! | RK4 | classical fourth order on (x, v)' = (v, a(x, v, t)) | 4 | 4 |
//!
//! All are stable only for h below a limit set by the stiffest mode (≈ 2/ω_max;
//! forward Euler is unstable for undamped oscillation at any h). Pinned vertices
//! follow their motion: prescribed positions and velocities overwrite the update.

use super::acceleration::Acceleration;
use super::{axpy, commit_step, StepReport, Timed};
use crate::error::Result;
use crate::model::{project_out_of_obstacles, Model, RebasedElasticity, State};
use crate::solve::FreeSystem;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ExplicitMethod {
    ForwardEuler,
    SymplecticEuler,
    VelocityVerlet,
    RungeKutta4,
}

impl ExplicitMethod {
    fn name(self) -> &'static str {
        match self {
            ExplicitMethod::ForwardEuler => "forward_euler",
            ExplicitMethod::SymplecticEuler => "symplectic_euler",
            ExplicitMethod::VelocityVerlet => "velocity_verlet",
            ExplicitMethod::RungeKutta4 => "runge_kutta4",
        }
    }
}

/// The explicit viscoelastic damping impulse of the Kharevych 2010 thesis (§2.3), −k_D ∇W(F(x_{k−1}, x_k)),
/// torque-free about x_k, needs the previous positions: `previous` holds them,
/// keyed by the time of the state they precede.
pub(crate) type PreviousPositions = Option<Timed<Vec<f64>>>;

/// Takes one step of an explicit method. `previous` is given by the methods that
/// support viscoelastic damping (symplectic Euler); the others refuse it.
pub(crate) fn explicit_step(
    model: &Model,
    state: &mut State,
    dt: f64,
    method: ExplicitMethod,
    mass_system: &mut Option<FreeSystem>,
    previous: Option<&mut PreviousPositions>,
) -> Result<StepReport> {
    let coefficient = model.viscoelastic_coefficient();
    if coefficient > 0.0 && previous.is_none() {
        return Err(super::capabilities::viscoelastic_refused(method.name()));
    }
    let mut remembered = None;
    let before = state.positions.clone();
    let start_time = state.time;
    let report = commit_step(model, state, dt, |s| {
        let started = web_time::Instant::now();
        let end = s.time + dt;
        // The DOFs free during the step: a pin released at its start no longer holds.
        let dofs = model.dof_map(end);
        let damping = model.damping_values(&s.positions)?;
        let acceleration = Acceleration {
            model,
            dofs: &dofs,
            damping: damping.as_deref(),
        };
        // Stage states keep pinned vertices on their path.
        let pinned = |time: f64, mut x: Vec<f64>, mut v: Vec<f64>| {
            model.apply_prescribed_positions(time, &mut x);
            model.apply_prescribed_velocities(time, &mut v);
            (x, v)
        };
        let (x, v) = (&s.positions, &s.velocities);
        let mut mass = std::mem::take(mass_system);
        let mut a = |x: &[f64], v: &[f64], t: f64| acceleration.at(x, v, t, &mut mass);
        let (positions, velocities, evaluations) = match method {
            ExplicitMethod::ForwardEuler => {
                let a0 = a(x, v, s.time)?;
                (axpy(x, dt, v), axpy(v, dt, &a0), 1)
            }
            ExplicitMethod::SymplecticEuler => {
                let a0 = a(x, v, s.time)?;
                let mut v1 = axpy(v, dt, &a0);
                let last = previous.as_ref().and_then(|p| p.as_ref()).and_then(|p| p.at(s.time));
                if let (true, Some(x_previous)) = (coefficient > 0.0, last) {
                    let mut gradient = vec![0.0; x.len()];
                    RebasedElasticity::new(model, x_previous)?.gradient(x, &mut gradient)?;
                    let impulse: Vec<f64> = gradient.iter().map(|g| -coefficient * g).collect();
                    let change = super::acceleration::solve_mass(model, &dofs, &impulse, &mut mass)?;
                    v1.iter_mut().zip(&change).for_each(|(v, dv)| *v += dv);
                }
                (axpy(x, dt, &v1), v1, 1)
            }
            ExplicitMethod::VelocityVerlet => {
                // The velocity-dependent (damping) force is taken at the half-step velocity.
                let a0 = a(x, v, s.time)?;
                let half = axpy(v, 0.5 * dt, &a0);
                let (x1, half) = pinned(end, axpy(x, dt, &half), half);
                let a1 = a(&x1, &half, end)?;
                let v1 = axpy(&half, 0.5 * dt, &a1);
                (x1, v1, 2)
            }
            ExplicitMethod::RungeKutta4 => {
                let mid = s.time + 0.5 * dt;
                let k1x = v.clone();
                let k1v = a(x, v, s.time)?;
                let (x2, v2) = pinned(mid, axpy(x, 0.5 * dt, &k1x), axpy(v, 0.5 * dt, &k1v));
                let k2v = a(&x2, &v2, mid)?;
                let (x3, v3) = pinned(mid, axpy(x, 0.5 * dt, &v2), axpy(v, 0.5 * dt, &k2v));
                let k3v = a(&x3, &v3, mid)?;
                let (x4, v4) = pinned(end, axpy(x, dt, &v3), axpy(v, dt, &k3v));
                let k4v = a(&x4, &v4, end)?;
                let combine = |y: &[f64], k: [&[f64]; 4]| -> Vec<f64> {
                    (0..y.len())
                        .map(|i| y[i] + dt / 6.0 * (k[0][i] + 2.0 * k[1][i] + 2.0 * k[2][i] + k[3][i]))
                        .collect()
                };
                (
                    combine(x, [&k1x, &v2, &v3, &v4]),
                    combine(v, [&k1v, &k2v, &k3v, &k4v]),
                    4,
                )
            }
        };
        *mass_system = mass;
        remembered = Some(Timed::new(end, before.clone()));
        let (mut positions, mut velocities) = pinned(end, positions, velocities);
        project_out_of_obstacles(model.obstacles(), model.dimension(), &mut positions, &mut velocities);
        let seconds = started.elapsed().as_secs_f64();
        Ok((
            State {
                time: end,
                positions,
                velocities,
            },
            StepReport {
                iterations: evaluations,
                assembly_seconds: seconds,
                ..StepReport::default()
            },
        ))
    });
    if let (Ok(_), Some(slot)) = (&report, previous) {
        // The positions this step started from precede the new state.
        *slot = remembered.filter(|p| p.time > start_time);
    }
    report
}
