//! BDF2 for the second-order system: with β = 2h/3, x̂ = (4xₙ − x_{n−1})/3 and
//! v̂ = (4vₙ − v_{n−1})/3,
//!   x_{n+1} = x̂ + β v_{n+1},  v_{n+1} = v̂ + β M⁻¹ f(x_{n+1}, v_{n+1}),
//! i.e. minimise ½‖x − x̂ − β v̂‖²_M/β² + ½‖x − x̂‖²_D/β + W(x) − fᵀx.
//! Second order, L-stable, mildly dissipative (less than backward Euler). The
//! first step, and any step whose size differs from the previous one, is a
//! backward Euler step (BDF2 needs two equal steps of history).

use super::backward_euler::backward_euler_step;
use super::implicit::{finished_step, solve_implicit_step, with_step_halving, ImplicitStep, StepDamping};
use super::{axpy, commit_step, Integrator, StepReport};
use crate::error::Result;
use crate::model::{Model, State};
use crate::solve::{FreeSystem, Inertia, NewtonSettings};

pub struct Bdf2 {
    settings: NewtonSettings,
    system: Option<FreeSystem>,
    /// The state one step before the current one, and that step's size.
    previous: Option<(State, f64)>,
}

impl Bdf2 {
    pub fn new(settings: NewtonSettings) -> Self {
        Bdf2 {
            settings,
            system: None,
            previous: None,
        }
    }
}

fn bdf2_step(
    model: &Model,
    state: &State,
    previous: &State,
    dt: f64,
    settings: &NewtonSettings,
    cache: &mut Option<FreeSystem>,
) -> Result<(State, StepReport)> {
    let beta = 2.0 * dt / 3.0;
    let end = state.time + dt;
    let blend = |now: &[f64], before: &[f64]| -> Vec<f64> {
        now.iter().zip(before).map(|(a, b)| (4.0 * a - b) / 3.0).collect()
    };
    let x_hat = blend(&state.positions, &previous.positions);
    let v_hat = blend(&state.velocities, &previous.velocities);
    let predicted = axpy(&x_hat, beta, &v_hat);
    let mut base = predicted.clone();
    model.apply_prescribed_positions(end, &mut base);
    let step = ImplicitStep {
        dof_time: end,
        base,
        inertia: Some(Inertia {
            weight: 1.0 / (beta * beta),
            predicted,
        }),
        damping: Some(StepDamping {
            weight: 1.0 / beta,
            center: x_hat.clone(),
        }),
        force_time: end,
        extra_force: None,
        viscoelastic: None,
    };
    let (positions, newton) = solve_implicit_step(model, state, step, settings, cache)?;
    let velocities: Vec<f64> = positions.iter().zip(&x_hat).map(|(x, h)| (x - h) / beta).collect();
    Ok(finished_step(model, end, positions, velocities, &newton))
}

impl Integrator for Bdf2 {
    fn name(&self) -> &'static str {
        "bdf2"
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        super::viscoelastic_unsupported(model, self.name())?;
        let settings = self.settings;
        let system = &mut self.system;
        let previous = &mut self.previous;
        let report = commit_step(model, state, dt, |state| {
            with_step_halving(state, dt, &settings, &mut |s, h| {
                // History is usable only if it is exactly one step of the same size behind.
                let history = previous
                    .as_ref()
                    .filter(|(p, size)| (size - h).abs() <= 1e-12 * h && (s.time - p.time - h).abs() <= 1e-9 * h);
                let result = match history {
                    Some((p, _)) => bdf2_step(model, s, p, h, &settings, system),
                    None => backward_euler_step(model, s, h, &settings, system),
                };
                if result.is_ok() {
                    *previous = Some((s.clone(), h));
                }
                result
            })
        });
        if report.is_err() {
            // A failed step leaves the state as it was, but the history may now hold a
            // sub-step of it: start afresh (with a backward Euler step) next time.
            self.previous = None;
        }
        report
    }
}
