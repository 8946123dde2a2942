//! Time integrators, all behind [`Integrator`] and listed once in
//! [`registry::INTEGRATORS`]: a scene switches between them by changing one line.

mod acceleration;
mod backward_euler;
mod bdf2;
mod capabilities;
mod corotational_reversible;
mod dgsi;
mod entry;
mod explicit;
mod exponential_rosenbrock_euler;
mod forward_euler;
mod implicit;
mod implicit_midpoint;
mod mass_spring_semi_implicit;
mod newmark;
pub mod registry;
mod runge_kutta4;
mod semi_implicit_euler;
mod siere;
mod static_equilibrium;
mod symplectic_adaptive;
mod symplectic_euler;
mod time_reversible_adaptive;
mod variational_midpoint;
mod velocity_verlet;

pub use backward_euler::BackwardEuler;
pub use bdf2::Bdf2;
pub use capabilities::Capabilities;
pub use corotational_reversible::CorotationalReversible;
pub use dgsi::Dgsi;
pub use exponential_rosenbrock_euler::ExponentialRosenbrockEuler;
pub use forward_euler::ForwardEuler;
pub use implicit_midpoint::ImplicitMidpoint;
pub use mass_spring_semi_implicit::MassSpringSemiImplicit;
pub use newmark::Newmark;
pub use registry::{IntegratorConfig, IntegratorEntry, INTEGRATORS};
pub use runge_kutta4::RungeKutta4;
pub use semi_implicit_euler::SemiImplicitBackwardEuler;
pub use siere::{undamped_modal_phi1, ModeRefresh, Siere};
pub use static_equilibrium::StaticEquilibrium;
pub use symplectic_adaptive::SymplecticAdaptive;
pub use symplectic_euler::SymplecticEuler;
pub use time_reversible_adaptive::{StepSizeRule, TimeReversibleAdaptive};
pub use variational_midpoint::VariationalMidpoint;
pub use velocity_verlet::VelocityVerlet;

use crate::error::{HookeError, Result};
use crate::model::{Model, State, StepMatrix};
use crate::solve::MinimizerReport;

/// What one step did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct StepReport {
    /// Minimiser iterations (1 for linearised steps, force evaluations for explicit ones).
    pub iterations: usize,
    /// Nonlinear residual ‖∇Φ‖∞ where the last iteration started (0 where there is none).
    pub residual: f64,
    /// Step-length halvings of the line search over all iterations.
    pub line_search_reductions: usize,
    /// Sparse factorisations by the minimiser (see `MinimizerReport::factorizations`);
    /// a factor a term made at the step's start and the step used is not counted.
    pub factorizations: usize,
    /// Factorisations of an indefinite matrix that needed a diagonal shift.
    pub shifted_factorizations: usize,
    /// Seconds spent evaluating the objective (values, gradients, Hessians).
    pub assembly_seconds: f64,
    /// Seconds spent in linear solves and factorisations.
    pub solve_seconds: f64,
    /// Wall-clock seconds of the whole step.
    pub total_seconds: f64,
    /// Times the step was split in two because the minimiser failed (continuation).
    pub halvings: usize,
    /// The minimiser's last increment as a fraction of the body's size (what the
    /// tolerance bounds; the largest over sub-steps; 0 where there is none).
    pub relative_increment: f64,
    /// The minimiser stalled at rounding level above its tolerance in this step
    /// (or a sub-step) and stopped there.
    pub short_of_tolerance: bool,
    /// Elements that tore at the end of the step.
    pub torn_elements: usize,
    /// The elastic energy the torn elements held, J.
    pub torn_energy: f64,
}

impl StepReport {
    /// Adds the work of a sub-step to this report.
    pub fn absorb(&mut self, other: &StepReport) {
        self.iterations += other.iterations;
        self.residual = self.residual.max(other.residual);
        self.line_search_reductions += other.line_search_reductions;
        self.factorizations += other.factorizations;
        self.shifted_factorizations += other.shifted_factorizations;
        self.assembly_seconds += other.assembly_seconds;
        self.solve_seconds += other.solve_seconds;
        self.halvings += other.halvings;
        self.relative_increment = self.relative_increment.max(other.relative_increment);
        self.short_of_tolerance |= other.short_of_tolerance;
        self.torn_elements += other.torn_elements;
        self.torn_energy += other.torn_energy;
    }
}

impl From<&MinimizerReport> for StepReport {
    fn from(minimizer: &MinimizerReport) -> Self {
        StepReport {
            iterations: minimizer.iterations,
            residual: minimizer.residual,
            line_search_reductions: minimizer.line_search_reductions,
            factorizations: minimizer.factorizations,
            shifted_factorizations: minimizer.shifted_factorizations,
            assembly_seconds: minimizer.assembly_seconds,
            solve_seconds: minimizer.solve_seconds,
            total_seconds: 0.0,
            halvings: 0,
            relative_increment: minimizer.relative_increment,
            short_of_tolerance: minimizer.short_of_tolerance,
            torn_elements: 0,
            torn_energy: 0.0,
        }
    }
}

/// A value that belongs to the state at `time` (a momentum, an acceleration,
/// previous positions): integrators keep history this way and use it only for
/// the state it belongs to.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Timed<T> {
    /// The time of the state it belongs to, s.
    pub time: f64,
    /// The value itself.
    pub value: T,
}

impl<T> Timed<T> {
    /// `value`, belonging to the state at `time` (s).
    pub fn new(time: f64, value: T) -> Timed<T> {
        Timed { time, value }
    }

    /// The value, if it belongs to the state at `time`.
    pub fn at(&self, time: f64) -> Option<&T> {
        same_time(self.time, time).then_some(&self.value)
    }
}

/// Advances a state by one time step.
///
/// An integrator of your own: symplectic Euler with lumped masses, written
/// with the model's public interface (the gradient of its potential, its
/// pins). Registering it for scenes is one line in [`registry`]
/// (docs/architecture.md, "Add an integrator").
///
/// ```
/// use hooke::prelude::*;
/// use nalgebra::Vector3;
///
/// struct SymplecticByHand;
///
/// impl Integrator for SymplecticByHand {
///     fn name(&self) -> &'static str {
///         "symplectic_by_hand"
///     }
///     fn capabilities(&self) -> Capabilities {
///         Capabilities { gradient_only: true, ..Capabilities::COMMON }
///     }
///     fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> hooke::Result<StepReport> {
///         let mut gradient = vec![0.0; model.dof_count()];
///         model.gradient(&state.positions, state.time, &mut gradient)?;
///         let end = state.time + dt;
///         for &dof in &model.dof_map(end).free_dofs {
///             state.velocities[dof] -= dt * gradient[dof] / model.mass().of_dof(dof);
///             state.positions[dof] += dt * state.velocities[dof];
///         }
///         state.time = end;
///         model.apply_prescribed_positions(end, &mut state.positions);
///         model.apply_prescribed_velocities(end, &mut state.velocities);
///         Ok(StepReport { iterations: 1, ..StepReport::default() })
///     }
/// }
///
/// # fn main() -> hooke::Result<()> {
/// let mesh = box_mesh(&BoxMeshOptions {
///     origin: Vector3::zeros(),
///     size: Vector3::new(0.4, 0.1, 0.1),
///     cells: [4, 1, 1],
///     tets_per_hex: TetsPerHex::Six,
/// })?;
/// let material = IsotropicMaterial::shared(MaterialModel::Corotational, &MaterialParameters {
///     youngs_modulus: 1e5,
///     poisson_ratio: 0.3,
///     density: 1000.0,
/// });
/// let mut model = Model::new(mesh.clone(), vec![material; mesh.tet_count()], MassKind::Lumped)?;
/// model.set_gravity(Vector3::new(0.0, 0.0, -9.81));
/// let mut integrator = SymplecticByHand;
/// integrator.check(&model)?;
/// let mut state = model.initial_state();
/// for _ in 0..100 {
///     integrator.step(&model, &mut state, 1e-3)?;
/// }
/// // A free body falls as a whole: its centre drops ½ g t² (to first order in h).
/// let drop = state.positions.iter().skip(2).step_by(3).sum::<f64>() / mesh.vertex_count() as f64 - 0.05;
/// assert!((drop + 0.5 * 9.81 * 0.01).abs() < 1e-3, "{drop}");
/// # Ok(())
/// # }
/// ```
/// `Send`, so that a run may go on in a thread of its own (the Python package
/// steps with the interpreter's lock released).
pub trait Integrator: Send {
    /// The scene-file name of the method.
    fn name(&self) -> &'static str;

    /// The model features it handles.
    fn capabilities(&self) -> Capabilities;

    /// What [`StepReport::iterations`] counts, in words, for a run's closing
    /// line: by default "force evaluations" for a method that uses gradients
    /// only and "linear solves" for a linearised one; implicit methods name
    /// their minimiser's iterations ("Newton iterations").
    fn iterations_are(&self) -> &'static str {
        if self.capabilities().gradient_only {
            "force evaluations"
        } else {
            "linear solves"
        }
    }

    /// Requirements on the model beyond [`Capabilities`] (materials, pins).
    fn requirements(&self, _model: &Model) -> Result<()> {
        Ok(())
    }

    /// Whether it can run `model`: a scene error naming the key if not. Scenes
    /// call this when they are built, and runs before their first step.
    fn check(&self, model: &Model) -> Result<()> {
        self.capabilities().check(self.name(), model)?;
        self.requirements(model)
    }

    /// What the user should know before running `model` from `start` with
    /// steps of `time_step` (a stability limit the scene may cross, say).
    fn notes(&self, _model: &Model, _start: &State, _time_step: f64) -> Result<Vec<String>> {
        Ok(Vec::new())
    }

    /// Advances `state` by `dt`. On failure the state is left as it was.
    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport>;

    /// The energies and momenta of `state`, the state the last step produced
    /// (or the initial one). Integrators in their own coordinates (a
    /// subspace) compute them there, without the full state.
    fn energy_record(&self, model: &Model, state: &State) -> Result<crate::output::EnergyRecord> {
        Ok(crate::energy_record::energy_record(model, state))
    }

    /// Lets later steps advance only `state.time`, keeping positions and
    /// velocities in the integrator's own coordinates, for a caller that calls
    /// [`Integrator::expand_state`] before it reads a state (the run loop,
    /// which needs the full state only for frames, checkpoints and the end).
    /// Integrators without coordinates of their own ignore it. `false` goes
    /// back to writing the full state at every step.
    fn defer_full_state(&mut self, _defer: bool) {}

    /// Writes the full state into `state` after steps that deferred it (a
    /// no-op otherwise).
    fn expand_state(&self, _model: &Model, _state: &mut State) -> Result<()> {
        Ok(())
    }

    /// What the integrator carries from one step into the next (a previous
    /// state, an acceleration, a momentum, a step size, a basis), for a
    /// checkpoint; `Null` when nothing. Caches rebuilt identically from the
    /// model and the current state are left out.
    fn history(&self) -> Result<serde_json::Value> {
        Ok(serde_json::Value::Null)
    }

    /// Takes back what [`Integrator::history`] gave, on an integrator built
    /// afresh from the same scene, so the next step is the one it would have
    /// taken without the interruption.
    fn restore_history(&mut self, history: &serde_json::Value) -> Result<()> {
        match history {
            serde_json::Value::Null => Ok(()),
            _ => Err(HookeError::Solver {
                reason: format!("{} keeps no history, but the checkpoint holds one", self.name()),
            }),
        }
    }
}

/// A history as JSON, for [`Integrator::history`].
pub(crate) fn history_to_json<T: serde::Serialize>(history: &T) -> Result<serde_json::Value> {
    serde_json::to_value(history).map_err(|error| HookeError::Solver {
        reason: format!("the integrator history could not be saved: {error}"),
    })
}

/// A history back from JSON, for [`Integrator::restore_history`].
pub(crate) fn history_from_json<T: serde::de::DeserializeOwned>(name: &str, history: &serde_json::Value) -> Result<T> {
    serde_json::from_value(history.clone()).map_err(|error| HookeError::Solver {
        reason: format!("the checkpoint's {name} history does not fit this version: {error}"),
    })
}

/// [`Integrator::history`] of an integrator whose history may be absent (before its first step).
pub(crate) fn optional_history_to_json<T: serde::Serialize>(history: &Option<T>) -> Result<serde_json::Value> {
    match history {
        Some(history) => history_to_json(history),
        None => Ok(serde_json::Value::Null),
    }
}

/// [`Integrator::restore_history`] for the same.
pub(crate) fn optional_history_from_json<T: serde::de::DeserializeOwned>(
    name: &str,
    history: &serde_json::Value,
) -> Result<Option<T>> {
    match history {
        serde_json::Value::Null => Ok(None),
        value => history_from_json(name, value).map(Some),
    }
}

/// Whether two times are the same instant. Integrators key their history (previous
/// positions, momentum, acceleration) by the time of the state it belongs to; the
/// run loop may round that time (to step × h), so equality is up to rounding.
pub(crate) fn same_time(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

/// x + h y, elementwise: the predictor of every step.
pub(crate) fn axpy(x: &[f64], h: f64, y: &[f64]) -> Vec<f64> {
    x.iter().zip(y).map(|(a, b)| a + h * b).collect()
}

/// Runs one step attempt and commits it: on success the state is replaced and
/// the step's wall time recorded; on failure (an error, or non-finite values)
/// the state is left as it was and the error says at which step and time.
pub(crate) fn commit_step(
    model: &Model,
    state: &mut State,
    dt: f64,
    attempt: impl FnOnce(&State) -> Result<(State, StepReport)> + Send,
) -> Result<StepReport> {
    commit_step_factorising(model, state, dt, None, attempt)
}

/// [`commit_step`] for a step that will factorise `matrix` over the free
/// DOFs at the step's start (model/step_matrix.rs).
pub(crate) fn commit_step_factorising(
    model: &Model,
    state: &mut State,
    dt: f64,
    matrix: Option<StepMatrix>,
    attempt: impl FnOnce(&State) -> Result<(State, StepReport)> + Send,
) -> Result<StepReport> {
    // The step runs on a thread of the worker pool: called from outside it,
    // every parallel loop would leave the caller blocked and its workers
    // spinning beside the caller's serial work, three threads on two cores
    // (measured: an L-BFGS frame of 100k tets, 233 → 154 ms on 2 cores).
    rayon::scope(|_| commit_step_on_worker(model, state, (dt, matrix), attempt))
}

fn commit_step_on_worker(
    model: &Model,
    state: &mut State,
    (dt, matrix): (f64, Option<StepMatrix>),
    attempt: impl FnOnce(&State) -> Result<(State, StepReport)> + Send,
) -> Result<StepReport> {
    let started = web_time::Instant::now();
    // Ether drag acts on the velocities every step starts from, whatever the method.
    let dragged = model
        .dragged_velocities(&state.velocities, state.time)
        .map(|velocities| State {
            velocities,
            ..state.clone()
        });
    let prepared = model.begin_step_with(state, state.time + dt, matrix);
    let outcome = prepared.and_then(|_| attempt(dragged.as_ref().unwrap_or(state))).and_then(|(next, report)| {
        if !next.is_finite() {
            return Err(HookeError::Solver {
                reason: "the step produced non-finite positions or velocities (the time step is likely too large for this method)".to_string(),
            });
        }
        // Explicit and linearised steps can land where a material is undefined
        // (an inverted Neo-Hookean element); such a state is not a result.
        if model.may_be_undefined() {
            let mut gradient = vec![0.0; next.positions.len()];
            model.gradient(&next.positions, next.time, &mut gradient)?;
        }
        Ok((next, report))
    });
    match outcome {
        Ok((next, mut report)) => {
            // Tearing acts between steps, on the state just committed.
            let torn = model.tear(&next.positions);
            report.torn_elements += torn.elements;
            report.torn_energy += torn.energy;
            *state = next;
            report.total_seconds = started.elapsed().as_secs_f64();
            Ok(report)
        }
        Err(error) => Err(step_failure(error, state, dt)),
    }
}

/// [`commit_step`] for an integrator that keeps the state in its own
/// coordinates: `attempt` advances those, and only `state.time` moves (see
/// [`Integrator::defer_full_state`]). It has no ether drag or tearing to
/// apply: such integrators refuse models with them.
pub(crate) fn commit_deferred_step(
    model: &Model,
    state: &mut State,
    dt: f64,
    attempt: impl FnOnce() -> Result<StepReport> + Send,
) -> Result<StepReport> {
    let started = web_time::Instant::now();
    let outcome = rayon::scope(|_| model.begin_step(state, state.time + dt).and_then(|_| attempt()));
    match outcome {
        Ok(mut report) => {
            state.time += dt;
            report.total_seconds = started.elapsed().as_secs_f64();
            Ok(report)
        }
        Err(error) => Err(step_failure(error, state, dt)),
    }
}

/// A step's error as the run reports it: where it happened, unless it says so
/// already or is the input's fault.
fn step_failure(error: HookeError, state: &State, dt: f64) -> HookeError {
    match error {
        error @ HookeError::StepFailed { .. } => error,
        error if error.is_user_error() => error,
        other => HookeError::StepFailed {
            step: (state.time / dt).round() as usize + 1,
            time: state.time + dt,
            reason: other.to_string(),
        },
    }
}
