//! Newmark (β, γ):
//!   x_{n+1} = xₙ + h vₙ + h² ((½ − β) aₙ + β a_{n+1}),
//!   v_{n+1} = vₙ + h ((1 − γ) aₙ + γ a_{n+1}),  M a_{n+1} = f(x_{n+1}, v_{n+1}).
//! With x̃ = xₙ + h vₙ + h²(½ − β) aₙ and c = vₙ + h(1 − γ) aₙ, the step minimises
//! ½‖x − x̃‖²_M/(βh²) + ½ (γ/(βh)) ‖x − x̃‖²_D + W(x) − (f − D c)ᵀx.
//! (β, γ) = (¼, ½), the default, is the trapezoidal rule: second order,
//! unconditionally stable, energy-conserving for linear problems. γ > ½ adds
//! numerical damping (first order); β must be > 0 (the explicit β = 0 is not offered).

use super::acceleration::Acceleration;
use super::entry::{settings_from, IntegratorEntry};
use super::implicit::{solve_implicit_step, with_step_halving, ImplicitStep, StepDamping, StepSolver};
use super::{commit_step, history_from_json, history_to_json, Capabilities, Integrator, StepReport, Timed};
use crate::error::{HookeError, Result};
use crate::model::{Model, State};
use crate::numbers::{readable, significant};
use crate::solve::{FreeSystem, Inertia, SolverSettings};

/// The Newmark (β, γ) family, each step a minimisation. (¼, ½), the default, is the
/// trapezoidal rule: second order, unconditionally stable, energy-conserving for linear
/// problems; γ > ½ adds numerical damping (first order).
pub struct Newmark {
    beta: f64,
    gamma: f64,
    solver: StepSolver,
    mass_system: Option<FreeSystem>,
    /// aₙ of the current state, and the pins that held when it was computed
    /// (a released pin frees DOFs whose aₙ must then come from the forces).
    acceleration: Option<(Timed<Vec<f64>>, Vec<bool>)>,
}

impl Newmark {
    /// With the parameters β (`beta`, 0 < β ≤ ½) and γ (`gamma`, ½ ≤ γ ≤ 1), which a scene
    /// checks but `new` does not, and the minimiser `settings` name. Fails if they name no
    /// registered minimiser or hold invalid keys for it.
    pub fn new(beta: f64, gamma: f64, settings: SolverSettings) -> Result<Self> {
        Ok(Newmark {
            beta,
            gamma,
            solver: StepSolver::new(settings)?,
            mass_system: None,
            acceleration: None,
        })
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    #[serde(default = "default_beta")]
    beta: f64,
    #[serde(default = "default_gamma")]
    gamma: f64,
}

fn default_beta() -> f64 {
    0.25
}

fn default_gamma() -> f64 {
    0.5
}

fn build(table: &toml::Table, solver: &SolverSettings) -> Result<Box<dyn Integrator>> {
    let Settings { beta, gamma } = settings_from(table)?;
    if !(beta > 0.0 && beta <= 0.5) {
        return Err(HookeError::scene(
            "integrator.beta",
            format!("must lie in (0, 0.5], got {beta}"),
        ));
    }
    if !(0.5..=1.0).contains(&gamma) {
        return Err(HookeError::scene(
            "integrator.gamma",
            format!("must lie in [0.5, 1], got {gamma}"),
        ));
    }
    Ok(Box::new(Newmark::new(beta, gamma, solver.clone())?))
}

pub(crate) const ENTRY: IntegratorEntry = IntegratorEntry {
    name: "newmark",
    aliases: &["nm"],
    summary: "Newmark (beta, gamma) by Newton; (1/4, 1/2), the default, is the energy-conserving trapezoidal rule",
    keys: &["beta", "gamma"],
    uses_solver: true,
    build,
};

impl Integrator for Newmark {
    fn name(&self) -> &'static str {
        "newmark"
    }

    fn iterations_are(&self) -> &'static str {
        self.solver.minimizer.iterations_are()
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            barrier_contact: true,
            ..Capabilities::COMMON
        }
    }

    /// With 2β < γ the method is only conditionally stable (Hughes, The Finite
    /// Element Method, §9.1): undamped, a mode of frequency ω stays bounded
    /// while ω h ≤ Ω = 1/√(γ/2 − β).
    fn notes(&self, model: &Model, start: &State, time_step: f64) -> Result<Vec<String>> {
        if 2.0 * self.beta >= self.gamma {
            return Ok(Vec::new());
        }
        let critical = 1.0 / (0.5 * self.gamma - self.beta).sqrt();
        let highest = crate::modal::highest_frequency_bound(model, start)?;
        let limit = critical / highest;
        let verdict = if time_step > limit {
            format!(
                "the scene's step {} s is above it: the run will likely diverge",
                readable(time_step)
            )
        } else {
            format!("the scene's step {} s is below it", readable(time_step))
        };
        Ok(vec![format!(
            "Newmark with 2β < γ (β = {}, γ = {}) is only conditionally stable: ω h must stay below {}; \
             the stiffest mode has ω ≤ {} rad/s, so h ≤ {} s keeps every mode stable, and {verdict} \
             (2β ≥ γ, as β = 1/4, γ = 1/2, is stable at any step)",
            self.beta,
            self.gamma,
            significant(critical, 3),
            significant(highest, 3),
            significant(limit, 3)
        )])
    }

    fn history(&self) -> Result<serde_json::Value> {
        history_to_json(&self.acceleration)
    }

    fn restore_history(&mut self, history: &serde_json::Value) -> Result<()> {
        self.acceleration = history_from_json(self.name(), history)?;
        Ok(())
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        let (beta, gamma, settings) = (self.beta, self.gamma, self.solver.settings.clone());
        let solver = &mut self.solver;
        let mass_system = &mut self.mass_system;
        let stored = &mut self.acceleration;
        commit_step(model, state, dt, |state| {
            // aₙ is known from the last step, or computed from the equations of motion at
            // the start: on the first step, and when the free DOFs change (a pin is released).
            let dofs = model.dof_map(state.time + dt);
            let known = stored
                .as_ref()
                .filter(|(_, pins)| *pins == dofs.active_pins)
                .and_then(|(a, _)| a.at(state.time));
            let initial = match known {
                Some(a) => a.clone(),
                None => {
                    let damping = model.damping_values(&state.positions)?;
                    Acceleration {
                        model,
                        dofs: &dofs,
                        damping: damping.as_deref(),
                    }
                    .at(&state.positions, &state.velocities, state.time, mass_system)?
                }
            };
            let mut accelerations: Vec<Timed<Vec<f64>>> = Vec::new();
            let mut current = Timed::new(state.time, initial);
            let result = with_step_halving(model, state, dt, &settings, &mut |s, h| {
                if current.at(s.time).is_none() {
                    // After a failed half step the acceleration of `s` is the one recorded for it.
                    if let Some(found) = accelerations.iter().rev().find(|a| a.at(s.time).is_some()) {
                        current = found.clone();
                    }
                }
                let a = &current.value;
                let end = s.time + h;
                let predicted: Vec<f64> = (0..s.positions.len())
                    .map(|i| s.positions[i] + h * s.velocities[i] + h * h * (0.5 - beta) * a[i])
                    .collect();
                let carried: Vec<f64> = (0..s.velocities.len())
                    .map(|i| s.velocities[i] + h * (1.0 - gamma) * a[i])
                    .collect();
                let extra_force = match model.damping_values(&s.positions)? {
                    Some(d) => {
                        let mut product = vec![0.0; carried.len()];
                        model.pattern().symmetric_multiply(&d, &carried, &mut product);
                        Some(product.into_iter().map(|p| -p).collect())
                    }
                    None => None,
                };
                let mut base = predicted.clone();
                model.apply_prescribed_positions(end, &mut base);
                let step = ImplicitStep {
                    contact_at_end: None,
                    step_length: Some(h),
                    dof_time: end,
                    base,
                    inertia: Some(Inertia {
                        weight: 1.0 / (beta * h * h),
                        predicted: predicted.clone(),
                    }),
                    damping: Some(StepDamping {
                        weight: gamma / (beta * h),
                        center: predicted.clone(),
                    }),
                    force_time: end,
                    extra_force,
                    viscoelastic: None,
                };
                let (positions, report) = solve_implicit_step(model, s, step, solver)?;
                let new_acceleration: Vec<f64> = positions
                    .iter()
                    .zip(&predicted)
                    .map(|(x, p)| (x - p) / (beta * h * h))
                    .collect();
                let mut velocities: Vec<f64> = carried
                    .iter()
                    .zip(&new_acceleration)
                    .map(|(c, a)| c + gamma * h * a)
                    .collect();
                model.apply_prescribed_velocities(end, &mut velocities);
                accelerations.push(current.clone());
                current = Timed::new(end, new_acceleration);
                Ok((
                    State {
                        time: end,
                        positions,
                        velocities,
                    },
                    StepReport::from(&report),
                ))
            });
            if result.is_ok() {
                *stored = Some((current.clone(), dofs.active_pins.clone()));
            }
            result
        })
    }
}
