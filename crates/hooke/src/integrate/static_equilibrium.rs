//! Static equilibrium: each step solves ∇W(x) = f(t) at the step's end time
//! (quasi-static loading; velocities are zero). With continuation, a load step
//! that Newton cannot take at once is split in two, recursively.

use super::entry::IntegratorEntry;
use super::implicit::{solve_implicit_step, with_step_halving, ImplicitStep, StepSolver};
use super::{commit_step, Capabilities, Integrator, StepReport};
use crate::error::{HookeError, Result};
use crate::model::{Model, State};
use crate::solve::SolverSettings;

/// Static equilibrium: each step solves ∇W(x) = f(t) at its end time, for quasi-static
/// loading (velocities stay zero); a load step the minimiser cannot take at once is split.
pub struct StaticEquilibrium {
    solver: StepSolver,
}

impl StaticEquilibrium {
    /// With the minimiser `settings` name (the `[solver]` table). Fails if they name no
    /// registered minimiser or hold invalid keys for it.
    pub fn new(settings: SolverSettings) -> Result<Self> {
        Ok(StaticEquilibrium {
            solver: StepSolver::new(settings)?,
        })
    }

    /// With a minimiser of the caller's (the `[solver]` kinds build theirs from `settings`).
    pub fn with_minimizer(settings: SolverSettings, minimizer: Box<dyn crate::solve::Minimizer>) -> Self {
        StaticEquilibrium {
            solver: StepSolver::with(settings, minimizer),
        }
    }
}

fn build(_: &toml::Table, solver: &SolverSettings) -> Result<Box<dyn Integrator>> {
    Ok(Box::new(StaticEquilibrium::new(solver.clone())?))
}

pub(crate) const ENTRY: IntegratorEntry = IntegratorEntry {
    name: "static",
    aliases: &[],
    summary: "static equilibrium at each step's end time (quasi-static loading, velocities zero)",
    keys: &[],
    uses_solver: true,
    build,
};

/// A free body has no equilibrium under load: its rigid motions are unconstrained.
fn needs_pins(model: &Model, time: f64) -> Result<()> {
    let anchored = model.terms().iter().any(|t| t.capabilities().anchoring);
    if model.subspace().is_none() && !anchored && !model.pins().iter().any(|p| p.is_active(time)) {
        return Err(HookeError::scene(
            "pins",
            "a static solve needs pinned vertices: a free body has no equilibrium under load (rigid motions are unconstrained)",
        ));
    }
    Ok(())
}

impl Integrator for StaticEquilibrium {
    fn name(&self) -> &'static str {
        "static"
    }

    fn iterations_are(&self) -> &'static str {
        self.solver.minimizer.iterations_are()
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            // A static solve has no motion to damp.
            viscoelastic_damping: true,
            reduced_coordinates: true,
            barrier_contact: true,
            ..Capabilities::COMMON
        }
    }

    fn requirements(&self, model: &Model) -> Result<()> {
        needs_pins(model, 0.0)
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        let settings = self.solver.settings.clone();
        let solver = &mut self.solver;
        commit_step(model, state, dt, |state| {
            needs_pins(model, state.time + dt)?;
            with_step_halving(model, state, dt, &settings, &mut |s, h| {
                let end = s.time + h;
                let mut base = s.positions.clone();
                model.apply_prescribed_positions(end, &mut base);
                let step = ImplicitStep {
                    contact_at_end: None,
                    step_length: None,
                    dof_time: end,
                    base,
                    inertia: None,
                    damping: None,
                    force_time: end,
                    extra_force: None,
                    viscoelastic: None,
                };
                let (positions, report) = solve_implicit_step(model, s, step, solver)?;
                let next = State {
                    time: end,
                    positions,
                    velocities: vec![0.0; model.dof_count()],
                };
                Ok((next, StepReport::from(&report)))
            })
        })
    }
}
