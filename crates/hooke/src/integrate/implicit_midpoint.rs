//! Implicit midpoint: q_{n+1} = qₙ + h/2 (vₙ + v_{n+1}),
//! v_{n+1} = vₙ + h M⁻¹ f((qₙ + q_{n+1})/2, (vₙ + v_{n+1})/2).
//!
//! Second order, symplectic, no artificial damping (energy of linear problems is
//! kept exactly; for nonlinear materials the energy error is O(h²) and may be
//! either sign: a sudden release that excites unresolved vibrations can show a
//! visible gain at a coarse step, which shrinks fourfold per halving). With u = (qₙ + q_{n+1})/2 the step is a backward Euler step of
//! h/2 for u (minimise ½‖u − qₙ − h/2 vₙ‖²_M/(h/2)² + ½‖u − qₙ‖²_D/(h/2) + W(u) − f(t+h/2)ᵀu),
//! then q_{n+1} = 2u − qₙ and v_{n+1} = 4(u − qₙ)/h − vₙ. Its Newton matrix, scaled
//! by h²/4, is M + (h/2)D + (h²/4)K: the corrected Jacobian of the Chen 2019 thesis, eq. 2.12
//! (the thesis prints ½h² and ¼h² instead of h/2 and h²/4).

use super::backward_euler::IMPLICIT;
use super::entry::IntegratorEntry;
use super::implicit::{
    finished_step, solve_implicit_step, with_step_halving, ImplicitStep, StepDamping, StepSolver, ViscoelasticForm,
};
use super::{axpy, commit_step, Capabilities, Integrator, StepReport};
use crate::error::Result;
use crate::model::{Model, State};
use crate::solve::{Inertia, SolverSettings};

/// The implicit midpoint rule, each step a minimisation: second order, symplectic, with no
/// artificial damping (it keeps the energy of linear problems exactly).
pub struct ImplicitMidpoint {
    solver: StepSolver,
}

impl ImplicitMidpoint {
    /// With the minimiser `settings` name (the `[solver]` table). Fails if they name no
    /// registered minimiser or hold invalid keys for it.
    pub fn new(settings: SolverSettings) -> Result<Self> {
        Ok(ImplicitMidpoint {
            solver: StepSolver::new(settings)?,
        })
    }
}

fn build(_: &toml::Table, solver: &SolverSettings) -> Result<Box<dyn Integrator>> {
    Ok(Box::new(ImplicitMidpoint::new(solver.clone())?))
}

pub(crate) const ENTRY: IntegratorEntry = IntegratorEntry {
    name: "implicit_midpoint",
    aliases: &["im"],
    summary: "implicit midpoint by Newton: order 2, symplectic, no artificial damping",
    keys: &[],
    uses_solver: true,
    build,
};

fn midpoint_step(model: &Model, state: &State, dt: f64, solver: &mut StepSolver) -> Result<(State, StepReport)> {
    let half = 0.5 * dt;
    let end = state.time + dt;
    let predicted = axpy(&state.positions, half, &state.velocities);
    // Pinned DOFs of u sit halfway between their prescribed positions, so that 2u − qₙ lands on the new ones.
    let mut prescribed_end = state.positions.clone();
    model.apply_prescribed_positions(end, &mut prescribed_end);
    let dofs = model.dof_map(end);
    let mut base = predicted.clone();
    for (i, value) in base.iter_mut().enumerate() {
        if dofs.free_index[i].is_none() {
            *value = 0.5 * (state.positions[i] + prescribed_end[i]);
        }
    }
    let step = ImplicitStep {
        step_length: Some(half),
        dof_time: end,
        base,
        inertia: Some(Inertia {
            weight: 1.0 / (half * half),
            predicted,
        }),
        damping: Some(StepDamping {
            weight: 1.0 / half,
            center: state.positions.clone(),
        }),
        force_time: state.time + half,
        extra_force: None,
        // x_{k+1} = 2u − q_k; the half-step potential carries half the impulse weight.
        viscoelastic: Some(ViscoelasticForm {
            weight: 0.5 / dt,
            scale: 2.0,
            offset: state.positions.iter().map(|q| -q).collect(),
        }),
    };
    let (midpoint, report) = solve_implicit_step(model, state, step, solver)?;
    let positions: Vec<f64> = midpoint
        .iter()
        .zip(&state.positions)
        .map(|(u, q)| 2.0 * u - q)
        .collect();
    let velocities: Vec<f64> = midpoint
        .iter()
        .zip(&state.positions)
        .zip(&state.velocities)
        .map(|((u, q), v)| 4.0 * (u - q) / dt - v)
        .collect();
    Ok(finished_step(model, end, positions, velocities, &report))
}

impl Integrator for ImplicitMidpoint {
    fn name(&self) -> &'static str {
        "implicit_midpoint"
    }

    fn iterations_are(&self) -> &'static str {
        self.solver.minimizer.iterations_are()
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            // Its unknown is the midpoint u and the step ends at 2u − qₙ: a
            // barrier felt at u lets the end cross what the CCD at u allows
            // (measured: a cube landing on a plane stalls at the bound).
            barrier_contact: false,
            ..IMPLICIT
        }
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        let settings = self.solver.settings.clone();
        let solver = &mut self.solver;
        commit_step(model, state, dt, |state| {
            with_step_halving(state, dt, &settings, &mut |s, h| midpoint_step(model, s, h, solver))
        })
    }
}
