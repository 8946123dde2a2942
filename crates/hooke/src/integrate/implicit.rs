//! What every Newton-based step shares: the incremental potential it minimises,
//! a feasible starting point, and step-halving continuation (seed 000 §2.4).
//!
//! Φ(x) = w_M/2 ‖x − x̃‖²_M + w_D/2 ‖x − c‖²_D + W(x) − (f(t_f) + f_extra)ᵀx
//!
//! Backward Euler, implicit midpoint (as a half step), BDF2, Newmark and the
//! static solve differ only in the weights, x̃, c, the force time and how the
//! new state is read off the minimiser.

use crate::error::{HookeError, Result};
use crate::model::RebasedElasticity;
use crate::model::{Model, State};
use crate::solve::{
    minimize, DampingPart, FreeSystem, IncrementalPotential, Inertia, NewtonReport, NewtonSettings, ViscoelasticTerm,
};

/// One incremental potential to minimise.
pub(crate) struct ImplicitStep {
    /// The DOF map (which pins hold) is taken at this time.
    pub dof_time: f64,
    /// Full vector: values of pinned DOFs, and the first guess for free ones.
    pub base: Vec<f64>,
    pub inertia: Option<Inertia>,
    /// w_D and c; D is the model's damping matrix for a step starting at the current state.
    pub damping: Option<StepDamping>,
    /// The external force is evaluated at this time.
    pub force_time: f64,
    /// A constant force added to the external one (Newmark's −D c).
    pub extra_force: Option<Vec<f64>>,
    /// How the viscoelastic damping potential k_D/h · W_ref(x_{k+1}) reads in
    /// this step's unknown. None: the method does not support it.
    pub viscoelastic: Option<ViscoelasticForm>,
}

/// The weight and centre of a step's Rayleigh dissipation potential.
pub(crate) struct StepDamping {
    pub weight: f64,
    pub center: Vec<f64>,
}

/// x_{k+1} = scale · unknown + offset, and the weight of W_ref per unit of k_D.
pub(crate) struct ViscoelasticForm {
    pub weight: f64,
    pub scale: f64,
    pub offset: Vec<f64>,
}

/// Minimises the step's potential; returns the full minimiser.
pub(crate) fn solve_implicit_step(
    model: &Model,
    state: &State,
    step: ImplicitStep,
    settings: &NewtonSettings,
    cache: &mut Option<FreeSystem>,
) -> Result<(Vec<f64>, NewtonReport)> {
    let dofs = model.dof_map(step.dof_time);
    let damping = match step.damping {
        Some(StepDamping { weight, center }) => {
            model
                .damping_values(&state.positions)?
                .map(|values| DampingPart { weight, values, center })
        }
        None => None,
    };
    let coefficient = model.viscoelastic_coefficient();
    let viscoelastic = match (coefficient > 0.0, step.viscoelastic) {
        // A static solve has no motion to damp.
        (false, _) => None,
        (true, None) if step.inertia.is_none() => None,
        (true, Some(form)) => Some(ViscoelasticTerm {
            weight: coefficient * form.weight,
            scale: form.scale,
            offset: form.offset,
            reference: RebasedElasticity::new(model, &state.positions)?,
        }),
        (true, None) => {
            return Err(HookeError::Scene {
                key: "damping.viscoelastic_coefficient".to_string(),
                reason: "viscoelastic damping is available with backward_euler, implicit_midpoint, variational_midpoint and symplectic_euler".to_string(),
            })
        }
    };
    let potential = IncrementalPotential {
        model,
        dofs: &dofs,
        base: step.base,
        inertia: step.inertia,
        damping,
        time: step.force_time,
        extra_force: step.extra_force,
        project_hessian: settings.project_hessian,
        viscoelastic,
    };
    let system = FreeSystem::for_dofs(cache, model.pattern(), &dofs)?;
    let mut free = dofs.gather(&potential.base);
    // The predictor may invert an element of a model undefined there; the
    // current positions (with the pins moved) are then a feasible start.
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

/// The state a Newton step ends in: pinned vertices get their motion's velocity
/// (the update formula would make theirs oscillate), and the step's report.
pub(crate) fn finished_step(
    model: &Model,
    end: f64,
    positions: Vec<f64>,
    mut velocities: Vec<f64>,
    newton: &NewtonReport,
) -> (State, StepReport) {
    model.apply_prescribed_velocities(end, &mut velocities);
    (
        State {
            time: end,
            positions,
            velocities,
        },
        StepReport::from(newton),
    )
}

/// Takes a step of `dt`; when the nonlinear solve fails, takes two steps of
/// dt/2 instead, recursively, at most `settings.max_step_halvings` times deep
/// (numerical continuation, seed 000 §2.4). Reports are summed.
pub(crate) fn with_step_halving(
    state: &State,
    dt: f64,
    settings: &NewtonSettings,
    attempt: &mut StepAttempt,
) -> Result<(State, StepReport)> {
    halve(state, dt, settings.max_step_halvings, attempt)
}

use super::StepReport;

/// One try at a step of a given size from a given state.
pub(crate) type StepAttempt<'a> = dyn FnMut(&State, f64) -> Result<(State, StepReport)> + 'a;

fn halve(state: &State, dt: f64, depth_left: usize, attempt: &mut StepAttempt) -> Result<(State, StepReport)> {
    match attempt(state, dt) {
        Ok(result) => Ok(result),
        Err(HookeError::Solver { .. }) if depth_left > 0 => {
            let (middle, first) = halve(state, dt / 2.0, depth_left - 1, attempt)?;
            let (end, second) = halve(&middle, dt / 2.0, depth_left - 1, attempt)?;
            let mut report = first;
            report.absorb(&second);
            report.halvings += 1;
            Ok((end, report))
        }
        Err(error) => Err(error),
    }
}
