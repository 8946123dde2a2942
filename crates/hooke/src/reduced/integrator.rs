//! Backward Euler in a skinning subspace with cubature (Trusty et al. 2023, Algorithm 1):
//! each step minimises the reduced potential by subspace FEM (Newton) or
//! subspace mixed FEM (SQP), from the previous step's u (and stretches z),
//! then writes x = X̄ + B u and v = B u̇ with u̇ = (u_{n+1} − uₙ)/h.
//!
//! Iterations never touch full-space quantities. A step expands the state
//! over all vertices (|V|·12m operations) only when its caller needs it: the
//! run loop defers it ([`Integrator::defer_full_state`]), records energies in
//! the subspace ([`ReducedModel::energy_record`]) and expands the state for
//! frames, checkpoints and the end (Trusty et al. 2023, §6). A load that changes
//! with time is reduced again each step.

use super::problem::{ReducedLoads, ReducedModel, SubspaceSettings};
use super::solver::{IterationReport, ReducedMethod};
use crate::error::{HookeError, Result};
use crate::integrate::{
    commit_deferred_step, commit_step, optional_history_from_json, optional_history_to_json, same_time, Capabilities,
    Integrator, StepReport,
};
use crate::model::{Model, State};
use crate::output::EnergyRecord;
use crate::solve::SolverSettings;
use nalgebra::Vector6;
use std::sync::Arc;

/// What a step carries into the next: the reduced state and, for the mixed
/// solver, the stretch unknowns.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct ReducedHistory {
    time: f64,
    u: Vec<f64>,
    velocity: Vec<f64>,
    stretches: Vec<[f64; 6]>,
}

/// The integrator.
pub struct SubspaceBackwardEuler {
    reduced: Arc<ReducedModel>,
    method: ReducedMethod,
    settings: SolverSettings,
    length_scale: f64,
    history: Option<ReducedHistory>,
    /// The history before the last step (a run that rejects a step's result
    /// goes back to that state, and may need it expanded).
    previous: Option<ReducedHistory>,
    /// The loads of the last step's end, for its energy record.
    loads: Option<(f64, ReducedLoads)>,
    /// Steps leave the full state behind (see [`Integrator::defer_full_state`]).
    deferred: bool,
    last_iterations: Vec<IterationReport>,
}

/// What the subspace steps handle: gravity, loads, soft pins that move or
/// are released (reduced again each step), hard pins that hold still (the
/// reduced model refuses others: a skinning subspace cannot follow them).
const SUBSPACE: Capabilities = Capabilities {
    viscoelastic_damping: false,
    rayleigh_damping: false,
    obstacles: false,
    surface_constraints: false,
    loads: true,
    moving_pins: true,
    element_terms: true,
    two_dimensional: false,
    reduced_coordinates: false,
    low_rank_terms: false,
    gradient_only: false,
    barrier_contact: false,
};

impl SubspaceBackwardEuler {
    /// Precomputes the subspace of `model` (eigenmodes, cubature) and builds the stepper.
    pub fn new(
        model: &Model,
        subspace: &SubspaceSettings,
        method: ReducedMethod,
        settings: SolverSettings,
    ) -> Result<SubspaceBackwardEuler> {
        let reduced = Arc::new(ReducedModel::new(model, subspace)?);
        Ok(SubspaceBackwardEuler::with_reduced(model, reduced, method, settings))
    }

    /// With a reduced model already computed (several solvers on one subspace).
    pub fn with_reduced(
        model: &Model,
        reduced: Arc<ReducedModel>,
        method: ReducedMethod,
        settings: SolverSettings,
    ) -> SubspaceBackwardEuler {
        SubspaceBackwardEuler {
            reduced,
            method,
            settings,
            length_scale: model.length_scale(),
            history: None,
            previous: None,
            loads: None,
            deferred: false,
            last_iterations: Vec::new(),
        }
    }

    /// The reduced model it steps.
    pub fn reduced(&self) -> &ReducedModel {
        &self.reduced
    }

    /// The iterations of the last step (the decrement of each, for convergence plots).
    pub fn last_iterations(&self) -> &[IterationReport] {
        &self.last_iterations
    }

    /// The history matching `state`, or a fresh one projected from it (the
    /// first step, or a state changed from outside).
    fn history_for(&self, model: &Model, state: &State) -> Result<ReducedHistory> {
        if let Some(history) = self.history.as_ref().filter(|h| same_time(h.time, state.time)) {
            return Ok(history.clone());
        }
        let (u, velocity) = self.reduced.project_state(model, &state.positions, &state.velocities)?;
        let stretches = self.reduced.stretches(&u).iter().map(|z| (*z).into()).collect();
        Ok(ReducedHistory {
            time: state.time,
            u,
            velocity,
            stretches,
        })
    }
}

impl Integrator for SubspaceBackwardEuler {
    fn name(&self) -> &'static str {
        "backward_euler"
    }

    fn iterations_are(&self) -> &'static str {
        match self.method {
            ReducedMethod::Newton => "Newton iterations",
            ReducedMethod::MixedSqp => "SQP iterations",
        }
    }

    fn capabilities(&self) -> Capabilities {
        SUBSPACE
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        let start = self.history_for(model, state)?;
        let reduced = self.reduced.clone();
        let (method, settings, length_scale) = (self.method, self.settings.clone(), self.length_scale);
        let end_time = state.time + dt;
        type Finished = (ReducedHistory, ReducedLoads, Vec<IterationReport>);
        let mut finished: Option<Finished> = None;
        let attempt = || -> Result<(Finished, StepReport)> {
            let loads = reduced.loads(model, end_time)?;
            let step = reduced.step_potential(&start.u, &start.velocity, dt, &loads);
            let mut u = start.u.clone();
            let mut z: Vec<Vector6<f64>> = start.stretches.iter().map(|s| Vector6::from_column_slice(s)).collect();
            let mut multipliers = Vec::new();
            let threshold = settings.tolerance * length_scale;
            let limit = settings.iterations.unwrap_or(settings.max_iterations.unwrap_or(50));
            let mut iterations = Vec::new();
            let mut converged = false;
            let started = web_time::Instant::now();
            // A term that bounds steps (checked on the full positions, which
            // only then are formed at each iteration).
            let model_bound =
                |u: &[f64], du: &[f64]| model.feasible_step(&reduced.positions(u), &reduced.basis.displacement(du));
            let bound: Option<&super::solver::StepBound<'_>> = match model.bounds_steps() {
                true => Some(&model_bound),
                false => None,
            };
            for _ in 0..limit {
                let report = match method {
                    ReducedMethod::Newton => reduced.newton_iteration_within(&step, &mut u, bound)?,
                    ReducedMethod::MixedSqp => {
                        reduced.mixed_iteration_within(&step, &mut u, &mut z, &mut multipliers, bound)?
                    }
                };
                iterations.push(report);
                // No descent left (α = 0) means rounding level: as converged as it gets.
                if report.increment <= threshold || report.step_length == 0.0 {
                    converged = true;
                    break;
                }
            }
            if !converged && settings.iterations.is_none() {
                return Err(HookeError::Solver {
                    reason: format!(
                        "the subspace solver did not converge in {limit} iterations (last increment {:.3e} of the body's size, tolerance {:.3e})",
                        iterations.last().map_or(0.0, |r| r.increment / length_scale),
                        settings.tolerance
                    ),
                });
            }
            let solve_seconds = started.elapsed().as_secs_f64();
            if u.iter().any(|x| !x.is_finite()) {
                return Err(HookeError::Solver {
                    reason: "the step produced non-finite subspace coordinates".to_string(),
                });
            }
            let velocity: Vec<f64> = u.iter().zip(&start.u).map(|(a, b)| (a - b) / dt).collect();
            let report = StepReport {
                iterations: iterations.len(),
                factorizations: iterations.len(),
                line_search_reductions: iterations
                    .iter()
                    .map(|r| (-r.step_length.max(f64::MIN_POSITIVE).log2()).round() as usize)
                    .sum(),
                solve_seconds,
                relative_increment: iterations.last().map_or(0.0, |r| r.increment / length_scale),
                // A fixed budget (real-time use) is not meant to reach the tolerance.
                short_of_tolerance: !converged && settings.iterations.is_none(),
                ..StepReport::default()
            };
            let history = ReducedHistory {
                time: end_time,
                u,
                velocity,
                stretches: z.iter().map(|s| (*s).into()).collect(),
            };
            Ok(((history, loads, iterations), report))
        };
        let report = match self.deferred {
            true => commit_deferred_step(model, state, dt, || {
                let (done, report) = attempt()?;
                finished = Some(done);
                Ok(report)
            })?,
            false => commit_step(model, state, dt, |_| {
                let (done, report) = attempt()?;
                let next = reduced.full_state(done.0.time, &done.0.u, &done.0.velocity);
                finished = Some(done);
                Ok((next, report))
            })?,
        };
        if let Some((mut history, loads, iterations)) = finished {
            // The run loop rounds times to step × h; the history follows it.
            history.time = state.time;
            self.previous = self.history.replace(history);
            self.loads = Some((state.time, loads));
            self.last_iterations = iterations;
        }
        Ok(report)
    }

    fn energy_record(&self, model: &Model, state: &State) -> Result<EnergyRecord> {
        let history = self.history_for(model, state)?;
        let loads = match &self.loads {
            Some((time, loads)) if same_time(*time, state.time) => loads.clone(),
            _ => self.reduced.loads(model, state.time)?,
        };
        // Mixed FEM records the energy it minimises, ψ at its stretch unknowns.
        let stretches: Vec<Vector6<f64>> = match self.method {
            ReducedMethod::MixedSqp => history
                .stretches
                .iter()
                .map(|s| Vector6::from_column_slice(s))
                .collect(),
            ReducedMethod::Newton => Vec::new(),
        };
        let stretches = (self.method == ReducedMethod::MixedSqp).then_some(stretches.as_slice());
        Ok(self
            .reduced
            .energy_record(&history.u, &history.velocity, stretches, &loads, state.time))
    }

    fn defer_full_state(&mut self, defer: bool) {
        self.deferred = defer;
    }

    fn expand_state(&self, _model: &Model, state: &mut State) -> Result<()> {
        if !self.deferred {
            return Ok(());
        }
        let history = [&self.history, &self.previous]
            .into_iter()
            .flatten()
            .find(|h| same_time(h.time, state.time));
        // None: no step since the state was given in full.
        if let Some(history) = history {
            *state = self.reduced.full_state(state.time, &history.u, &history.velocity);
        }
        Ok(())
    }

    fn history(&self) -> Result<serde_json::Value> {
        optional_history_to_json(&self.history)
    }

    fn restore_history(&mut self, history: &serde_json::Value) -> Result<()> {
        self.history = optional_history_from_json("subspace", history)?;
        Ok(())
    }
}
