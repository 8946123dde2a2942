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
//!
//! Barrier contact must hold where the step ends, not at u: the barrier and
//! friction are felt at q_{n+1} = 2u − qₙ ([`ContactAtEnd`]), and the step bound is
//! CCD along q_{n+1}'s path. The barrier's impulse follows the trapezoidal rule,
//! h (f_B(qₙ) + f_B(q_{n+1}))/2, as in Newmark, so a bounce keeps its energy;
//! friction's is h f_F(q_{n+1}), the impulse its lag is built for.

use super::backward_euler::IMPLICIT;
use super::entry::IntegratorEntry;
use super::implicit::{
    finished_step, solve_implicit_step, with_step_halving, ImplicitStep, StepDamping, StepSolver, ViscoelasticForm,
};
use super::{axpy, commit_step, Capabilities, Integrator, StepReport};
use crate::error::Result;
use crate::model::{Model, State, TermGroup};
use crate::solve::{ContactAtEnd, Inertia, SolverSettings};

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
    // The step's end, q_{n+1} = 2u − qₙ.
    let (scale, offset): (f64, Vec<f64>) = (2.0, state.positions.iter().map(|q| -q).collect());
    // The barrier's half of the trapezoid at the step's start, f_B(qₙ)/2, as a constant force.
    let (contact_at_end, start_force) = match model.changes_couplings() {
        false => (None, None),
        true => {
            let mut gradient = vec![0.0; state.positions.len()];
            model.gradient_of(TermGroup::Barrier, &state.positions, state.time + half, &mut gradient)?;
            let map = ContactAtEnd {
                scale,
                offset: offset.clone(),
                barrier_weight: 0.25,
                friction_weight: 0.5,
            };
            (Some(map), Some(gradient.iter().map(|g| -0.5 * g).collect()))
        }
    };
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
        extra_force: start_force,
        // The half-step potential carries half the impulse weight.
        viscoelastic: Some(ViscoelasticForm {
            weight: 0.5 / dt,
            scale,
            offset,
        }),
        contact_at_end,
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
        IMPLICIT
    }

    fn step(&mut self, model: &Model, state: &mut State, dt: f64) -> Result<StepReport> {
        let settings = self.solver.settings.clone();
        let solver = &mut self.solver;
        commit_step(model, state, dt, |state| {
            with_step_halving(model, state, dt, &settings, &mut |s, h| {
                midpoint_step(model, s, h, solver)
            })
        })
    }
}
