//! Time integrators, all behind [`Integrator`]: a scene switches between them by
//! changing one line.

mod backward_euler;
mod semi_implicit_euler;
mod static_equilibrium;
mod symplectic_euler;

pub use backward_euler::BackwardEuler;
pub use semi_implicit_euler::SemiImplicitBackwardEuler;
pub use static_equilibrium::StaticEquilibrium;
pub use symplectic_euler::SymplecticEuler;

use crate::error::{HookeError, Result};
use crate::model::{Model, State};
use crate::solve::{minimize, FreeSystem, IncrementalPotential, NewtonReport, NewtonSettings};

/// What one step did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct StepReport {
    /// Newton iterations (1 for linearised and explicit steps).
    pub iterations: usize,
    /// Nonlinear residual ‖∇Φ‖∞ where the last Newton iteration started (0 where there is none).
    pub residual: f64,
    pub line_search_reductions: usize,
    /// Factorisations of an indefinite matrix that needed a diagonal shift.
    pub shifted_factorizations: usize,
    pub assembly_seconds: f64,
    pub solve_seconds: f64,
    pub total_seconds: f64,
}

impl From<&NewtonReport> for StepReport {
    fn from(newton: &NewtonReport) -> Self {
        StepReport {
            iterations: newton.iterations,
            residual: newton.residual,
            line_search_reductions: newton.line_search_reductions,
            shifted_factorizations: newton.shifted_factorizations,
            assembly_seconds: newton.assembly_seconds,
            solve_seconds: newton.solve_seconds,
            total_seconds: 0.0,
        }
    }
}

/// Advances a state by one time step.
pub trait Integrator {
    /// The scene-file name of the method.
    fn name(&self) -> &'static str;

    /// Advances `state` by `dt`. On failure the state is left as it was.
    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport>;
}

/// The integrators a scene can ask for, with their settings. Variants without
/// settings are empty structs so that serde still rejects unknown keys in them.
#[derive(Clone, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum IntegratorConfig {
    /// Backward (implicit) Euler by Newton on the incremental potential: first order,
    /// unconditionally stable, dissipates energy (more at larger steps).
    BackwardEuler {
        #[serde(flatten)]
        newton: NewtonSettings,
    },
    /// One linearised backward Euler step (Baraff–Witkin): first order, one
    /// factorisation per step, stable for moderate stiffness.
    SemiImplicitBackwardEuler {
        #[serde(default = "default_true")]
        project_hessian: bool,
    },
    /// Symplectic (semi-implicit) Euler: first order, explicit, conserves momentum
    /// and keeps energy bounded, stable only below a step set by the stiffest mode.
    SymplecticEuler {},
    /// Static equilibrium at each step's end time (velocities zero): quasi-static loading.
    Static {
        #[serde(flatten)]
        newton: NewtonSettings,
    },
}

fn default_true() -> bool {
    true
}

impl IntegratorConfig {
    pub fn validate(&self) -> Result<()> {
        match self {
            IntegratorConfig::BackwardEuler { newton } | IntegratorConfig::Static { newton } => {
                newton.validate("integrator")
            }
            _ => Ok(()),
        }
    }

    /// Builds the integrator.
    pub fn build(&self) -> Box<dyn Integrator> {
        match self {
            IntegratorConfig::BackwardEuler { newton } => Box::new(BackwardEuler::new(*newton)),
            IntegratorConfig::SemiImplicitBackwardEuler { project_hessian } => {
                Box::new(SemiImplicitBackwardEuler::new(*project_hessian))
            }
            IntegratorConfig::SymplecticEuler {} => Box::new(SymplecticEuler),
            IntegratorConfig::Static { newton } => Box::new(StaticEquilibrium::new(*newton)),
        }
    }
}

/// Runs one step attempt and commits it: on success the state is replaced and
/// the step's wall time recorded; on failure (an error, or non-finite values)
/// the state is left as it was and the error says at which step and time.
pub(crate) fn commit_step(
    model: &Model,
    state: &mut State,
    dt: f64,
    attempt: impl FnOnce(&State) -> Result<(State, StepReport)>,
) -> Result<StepReport> {
    let started = std::time::Instant::now();
    let outcome = attempt(state).and_then(|(next, report)| {
        if !next.is_finite() {
            return Err(HookeError::Solver {
                reason: "the step produced non-finite positions or velocities (the time step is likely too large for this method)".to_string(),
            });
        }
        // Explicit and linearised steps can land where a material is undefined
        // (an inverted Neo-Hookean element); such a state is not a result.
        let mut gradient = vec![0.0; next.positions.len()];
        model.elastic_gradient(&next.positions, &mut gradient)?;
        Ok((next, report))
    });
    match outcome {
        Ok((next, mut report)) => {
            *state = next;
            report.total_seconds = started.elapsed().as_secs_f64();
            Ok(report)
        }
        Err(error @ HookeError::StepFailed { .. }) => Err(error),
        Err(other) => Err(HookeError::StepFailed {
            step: (state.time / dt).round() as usize + 1,
            time: state.time + dt,
            reason: other.to_string(),
        }),
    }
}

/// Minimises the incremental potential of a step ending at t + h and returns
/// the new positions. With `inertia`, it is backward Euler's
/// ½‖x − xₙ − h vₙ‖²_M/h² + ½‖x − xₙ‖²_D/h + W(x) − fᵀx; without, the static W(x) − fᵀx.
pub(crate) fn solve_incremental_step(
    model: &Model,
    state: &State,
    dt: f64,
    inertia: bool,
    settings: &NewtonSettings,
    cache: &mut Option<FreeSystem>,
) -> Result<(Vec<f64>, NewtonReport)> {
    let next_time = state.time + dt;
    let dofs = model.dof_map(next_time);
    let (inertia, damping, mut base) = if inertia {
        let predicted: Vec<f64> = state
            .positions
            .iter()
            .zip(&state.velocities)
            .map(|(x, v)| x + dt * v)
            .collect();
        let damping = model
            .damping_values(&state.positions)?
            .map(|values| (1.0 / dt, values, state.positions.clone()));
        (Some((1.0 / (dt * dt), predicted.clone())), damping, predicted)
    } else {
        (None, None, state.positions.clone())
    };
    model.apply_prescribed_positions(next_time, &mut base);
    let mut external_force = vec![0.0; model.dof_count()];
    model.external_force(next_time, &mut external_force);
    let potential = IncrementalPotential {
        model,
        dofs: &dofs,
        base,
        inertia,
        damping,
        external_force,
        project_hessian: settings.project_hessian,
    };
    let system = FreeSystem::for_dofs(cache, model.pattern(), &dofs)?;
    let mut free = dofs.gather(&potential.base);
    // The predictor xₙ + h vₙ may invert an element of a model undefined there;
    // the current positions (with the pins moved) are then a feasible start.
    if !potential.value(&free).is_finite() {
        free = dofs.gather(&state.positions);
        if !potential.value(&free).is_finite() {
            return Err(HookeError::Solver {
                reason: "no feasible starting point: both the predicted and the current positions invert an element whose material is undefined there".to_string(),
            });
        }
    }
    let newton = minimize(&potential, &mut free, system, settings, model.length_scale())?;
    Ok((potential.full_positions(&free), newton))
}
