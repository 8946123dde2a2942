//! Backward Euler: x_{n+1} = argmin Φ(x) with Φ = ½‖x − xₙ − h vₙ‖²_M / h² + W(x)
//! − fᵀx (+ Rayleigh dissipation ½‖x − xₙ‖²_D / h), v_{n+1} = (x_{n+1} − xₙ)/h.
//! First order, unconditionally stable, dissipative.

use super::entry::IntegratorEntry;
use super::implicit::{
    finished_step, solve_implicit_step, with_step_halving, ImplicitStep, StepDamping, StepSolver, ViscoelasticForm,
};
use super::{axpy, commit_step, Capabilities, Integrator, StepReport};
use crate::error::Result;
use crate::model::{Model, State};
use crate::solve::{Inertia, Minimizer, SolverSettings};

/// Backward (implicit) Euler, each step a minimisation of the incremental potential:
/// first order, unconditionally stable, and dissipative (it damps energy, the more so
/// the larger the step).
pub struct BackwardEuler {
    solver: StepSolver,
}

impl BackwardEuler {
    /// With the minimiser `settings` name (the `[solver]` table). Fails if they name no
    /// registered minimiser or hold invalid keys for it.
    pub fn new(settings: SolverSettings) -> Result<Self> {
        Ok(BackwardEuler {
            solver: StepSolver::new(settings)?,
        })
    }

    /// With a minimiser of the caller's (the `[solver]` kinds build theirs from `settings`).
    pub fn with_minimizer(settings: SolverSettings, minimizer: Box<dyn Minimizer>) -> Self {
        BackwardEuler {
            solver: StepSolver::with(settings, minimizer),
        }
    }
}

/// What the minimisation-based one-step methods handle (viscoelastic damping
/// where the method defines it, reduced coordinates).
pub(crate) const IMPLICIT: Capabilities = Capabilities {
    viscoelastic_damping: true,
    reduced_coordinates: true,
    barrier_contact: true,
    ..Capabilities::COMMON
};

fn build(_: &toml::Table, solver: &SolverSettings) -> Result<Box<dyn Integrator>> {
    Ok(Box::new(BackwardEuler::new(solver.clone())?))
}

pub(crate) const ENTRY: IntegratorEntry = IntegratorEntry {
    name: "backward_euler",
    aliases: &["be"],
    summary: "implicit Euler by minimising the incremental potential: order 1, unconditionally stable, dissipative",
    keys: &[],
    uses_solver: true,
    build,
};

/// One backward Euler step of `dt` from `state` (also the start-up step of BDF2).
pub(crate) fn backward_euler_step(
    model: &Model,
    state: &State,
    dt: f64,
    solver: &mut StepSolver,
) -> Result<(State, StepReport)> {
    let end = state.time + dt;
    let predicted = axpy(&state.positions, dt, &state.velocities);
    let mut base = predicted.clone();
    model.apply_prescribed_positions(end, &mut base);
    let step = ImplicitStep {
        contact_at_end: None,
        step_length: Some(dt),
        dof_time: end,
        base,
        inertia: Some(Inertia {
            weight: 1.0 / (dt * dt),
            predicted,
        }),
        damping: Some(StepDamping {
            weight: 1.0 / dt,
            center: state.positions.clone(),
        }),
        force_time: end,
        extra_force: None,
        // x_{k+1} is the unknown itself: k_D/h · W_ref(x).
        viscoelastic: Some(ViscoelasticForm {
            weight: 1.0 / dt,
            scale: 1.0,
            offset: vec![0.0; state.positions.len()],
        }),
    };
    let (positions, report) = solve_implicit_step(model, state, step, solver)?;
    let velocities: Vec<f64> = positions
        .iter()
        .zip(&state.positions)
        .map(|(x1, x0)| (x1 - x0) / dt)
        .collect();
    Ok(finished_step(model, end, positions, velocities, &report))
}

impl Integrator for BackwardEuler {
    fn name(&self) -> &'static str {
        "backward_euler"
    }

    fn iterations_are(&self) -> &'static str {
        self.solver.minimizer.iterations_are()
    }

    fn capabilities(&self) -> Capabilities {
        IMPLICIT
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        let settings = self.solver.settings.clone();
        let solver = &mut self.solver;
        commit_step(model, state, dt, |state| {
            with_step_halving(model, state, dt, &settings, &mut |s, h| {
                backward_euler_step(model, s, h, solver)
            })
        })
    }
}
