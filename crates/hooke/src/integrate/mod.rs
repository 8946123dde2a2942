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
use crate::solve::{NewtonReport, NewtonSettings};

/// What one step did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct StepReport {
    /// Newton iterations (1 for linearised and explicit steps).
    pub iterations: usize,
    /// Final nonlinear residual ‖∇Φ‖∞ (0 where there is none).
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

/// The integrators a scene can ask for, with their settings.
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
    SymplecticEuler,
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
            IntegratorConfig::SymplecticEuler => Box::new(SymplecticEuler),
            IntegratorConfig::Static { newton } => Box::new(StaticEquilibrium::new(*newton)),
        }
    }
}

/// Wraps a failure inside a step with where it happened.
pub(crate) fn step_failure(state: &State, dt: f64, error: HookeError) -> HookeError {
    match error {
        HookeError::StepFailed { .. } => error,
        other => HookeError::StepFailed {
            step: (state.time / dt).round() as usize + 1,
            time: state.time + dt,
            reason: other.to_string(),
        },
    }
}

/// Checks that a step produced finite values before it is committed.
pub(crate) fn ensure_finite(state: &State) -> Result<()> {
    if state.is_finite() {
        Ok(())
    } else {
        Err(HookeError::Solver {
            reason: "the step produced non-finite positions or velocities (the time step is likely too large for this method)".to_string(),
        })
    }
}
