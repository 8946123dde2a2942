//! BDF2 for the second-order system: with β = 2h/3, x̂ = (4xₙ − x_{n−1})/3 and
//! v̂ = (4vₙ − v_{n−1})/3,
//!   x_{n+1} = x̂ + β v_{n+1},  v_{n+1} = v̂ + β M⁻¹ f(x_{n+1}, v_{n+1}),
//! i.e. minimise ½‖x − x̂ − β v̂‖²_M/β² + ½‖x − x̂‖²_D/β + W(x) − fᵀx.
//! Second order, L-stable, mildly dissipative (less than backward Euler). The
//! first step, any step whose size differs from the previous one, and the first
//! step after a pin is released, is a backward Euler step (BDF2 needs two equal
//! steps of history over the same unknowns).

use super::backward_euler::backward_euler_step;
use super::entry::IntegratorEntry;
use super::implicit::{finished_step, solve_implicit_step, with_step_halving, ImplicitStep, StepDamping, StepSolver};
use super::{axpy, commit_step, history_from_json, history_to_json, Capabilities, Integrator, StepReport};
use crate::error::Result;
use crate::model::{Model, State};
use crate::solve::{Inertia, SolverSettings};

/// The second-order backward differentiation formula, each step a minimisation: L-stable
/// and mildly dissipative (less than backward Euler). Its first step, and any step after a
/// change of step size or a released pin, is a backward Euler step.
pub struct Bdf2 {
    solver: StepSolver,
    previous: Option<History>,
}

/// The state one step before the current one, that step's size, and the pins
/// that held during it.
#[derive(serde::Serialize, serde::Deserialize)]
struct History {
    state: State,
    step: f64,
    active_pins: Vec<bool>,
}

impl Bdf2 {
    /// With the minimiser `settings` name (the `[solver]` table). Fails if they name no
    /// registered minimiser or hold invalid keys for it.
    pub fn new(settings: SolverSettings) -> Result<Self> {
        Ok(Bdf2 {
            solver: StepSolver::new(settings)?,
            previous: None,
        })
    }
}

fn build(_: &toml::Table, solver: &SolverSettings) -> Result<Box<dyn Integrator>> {
    Ok(Box::new(Bdf2::new(solver.clone())?))
}

pub(crate) const ENTRY: IntegratorEntry = IntegratorEntry {
    name: "bdf2",
    aliases: &[],
    summary: "second-order backward differentiation by Newton: L-stable, mildly dissipative; its first step is backward Euler",
    keys: &[],
    uses_solver: true,
    build,
};

fn bdf2_step(
    model: &Model,
    state: &State,
    previous: &State,
    dt: f64,
    solver: &mut StepSolver,
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
        contact_at_end: None,
        step_length: Some(dt),
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
    let (positions, report) = solve_implicit_step(model, state, step, solver)?;
    let velocities: Vec<f64> = positions.iter().zip(&x_hat).map(|(x, h)| (x - h) / beta).collect();
    Ok(finished_step(model, end, positions, velocities, &report))
}

impl Integrator for Bdf2 {
    fn name(&self) -> &'static str {
        "bdf2"
    }

    fn iterations_are(&self) -> &'static str {
        self.solver.minimizer.iterations_are()
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            reduced_coordinates: true,
            barrier_contact: true,
            ..Capabilities::COMMON
        }
    }

    fn history(&self) -> Result<serde_json::Value> {
        history_to_json(&self.previous)
    }

    fn restore_history(&mut self, history: &serde_json::Value) -> Result<()> {
        self.previous = history_from_json(self.name(), history)?;
        Ok(())
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        let settings = self.solver.settings.clone();
        let solver = &mut self.solver;
        let previous = &mut self.previous;
        let report = commit_step(model, state, dt, |state| {
            with_step_halving(model, state, dt, &settings, &mut |s, h| {
                // History is usable only if it is exactly one step of the same size
                // behind, over the same free DOFs (the pins holding then still hold).
                let pins = model.dof_map(s.time + h).active_pins;
                let history = previous.as_ref().filter(|p| {
                    (p.step - h).abs() <= 1e-12 * h
                        && (s.time - p.state.time - h).abs() <= 1e-9 * h
                        && p.active_pins == pins
                });
                let result = match history {
                    Some(p) => bdf2_step(model, s, &p.state, h, solver),
                    None => backward_euler_step(model, s, h, solver),
                };
                if result.is_ok() {
                    *previous = Some(History {
                        state: s.clone(),
                        step: h,
                        active_pins: pins,
                    });
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
