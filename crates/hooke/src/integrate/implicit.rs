//! What every Newton-based step shares: the incremental potential it minimises,
//! a feasible starting point, and step-halving continuation (Chen 2019 thesis, §4.2.3).
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
    ContactAtEnd, Coordinates, DampingPart, IncrementalPotential, Inertia, Minimizer, MinimizerReport, Objective,
    SolverSettings, ViscoelasticTerm,
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
    /// Barrier contact and friction felt at the step's end rather than at
    /// the unknown (implicit midpoint). None: at the unknown.
    pub contact_at_end: Option<ContactAtEnd>,
    /// The time over which the unknown moves (h; h/2 for a midpoint unknown),
    /// None for a static solve: `[solver] velocity_tolerance` scales with it.
    pub step_length: Option<f64>,
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

/// The minimiser of an implicit integrator and the `[solver]` settings it came from.
pub(crate) struct StepSolver {
    pub settings: SolverSettings,
    pub minimizer: Box<dyn Minimizer>,
}

impl StepSolver {
    /// The minimiser the settings name, built by its registry entry.
    pub fn new(settings: SolverSettings) -> Result<StepSolver> {
        Ok(StepSolver {
            minimizer: settings.minimizer()?,
            settings,
        })
    }

    /// Any minimiser, with `settings` for the rest (continuation depth, projection).
    pub fn with(settings: SolverSettings, minimizer: Box<dyn Minimizer>) -> StepSolver {
        StepSolver { settings, minimizer }
    }
}

/// Minimises the step's potential over the model's coordinates (the free DOFs,
/// or its subspace); returns the full positions of the minimiser.
pub(crate) fn solve_implicit_step(
    model: &Model,
    state: &State,
    step: ImplicitStep,
    solver: &mut StepSolver,
) -> Result<(Vec<f64>, MinimizerReport)> {
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
        (true, None) => return Err(super::capabilities::viscoelastic_refused("this integrator")),
    };
    let coordinates = match model.subspace() {
        Some(subspace) => Coordinates::Reduced(subspace),
        None => Coordinates::Free {
            dofs: &dofs,
            restriction: model.restriction(&dofs),
        },
    };
    let potential = IncrementalPotential {
        model,
        coordinates,
        base: step.base,
        inertia: step.inertia,
        damping,
        time: step.force_time,
        extra_force: step.extra_force,
        project_hessian: solver.settings.project_hessian,
        viscoelastic,
        contact_at_end: step.contact_at_end,
        step_length: step.step_length,
    };
    // Moving obstacles go first as far as the bodies at the step's start let
    // them; the rest of their way alternates with solves below.
    let mut obstacles_there = model.advance_motion(&state.positions)?;
    let mut unknowns = potential.unknowns_of(&potential.base)?;
    // Where a term bounds the steps, the predictor may lie outside the
    // admissible set: start at the furthest admissible point on the way from
    // the current positions to it.
    if model.bounds_steps() {
        let current = potential.unknowns_of(&state.positions)?;
        let toward: Vec<f64> = unknowns.iter().zip(&current).map(|(p, c)| p - c).collect();
        let fraction = potential.feasible_step(&current, &toward)?;
        unknowns = current.iter().zip(&toward).map(|(c, d)| c + fraction * d).collect();
    }
    // The predictor may invert an element of a model undefined there; the
    // current positions (with the pins moved) are then a feasible start.
    if !potential.value(&unknowns).is_finite() {
        unknowns = potential.unknowns_of(&state.positions)?;
        if !potential.value(&unknowns).is_finite() {
            return Err(HookeError::Solver {
                reason: "no feasible starting point: both the predicted and the current positions invert an element whose material is undefined there".to_string(),
            });
        }
    }
    let size = unknowns.len();
    let mut report = crate::workers::with_workers_awake(size, || solver.minimizer.minimize(&potential, &mut unknowns))?;
    // A moving obstacle the bodies were in the way of: move it on as far as
    // the bodies, pushed aside by the last solve, let it, and solve again,
    // until it is where its motion has it at the step's end.
    let mut stages = 1;
    while !obstacles_there {
        if stages == MOTION_STAGES {
            return Err(HookeError::Solver {
                reason: format!(
                    "a moving obstacle could not reach its place at t = {:.6} s in {MOTION_STAGES} stages: the bodies in its way cannot move aside (squeezed against another obstacle?); a smaller time_step or a slower motion may pass",
                    step.force_time
                ),
            });
        }
        obstacles_there = model.advance_motion(&potential.contact_positions(&unknowns))?;
        let more = crate::workers::with_workers_awake(size, || solver.minimizer.minimize(&potential, &mut unknowns))?;
        report.absorb(&more);
        stages += 1;
    }
    // Friction's lag taken again where the solve ended, and the step solved
    // again, as many times as `[contact] friction_updates` asks.
    let mut round = 1;
    while model.update_lags(&potential.contact_positions(&unknowns), round)? {
        let more = crate::workers::with_workers_awake(size, || solver.minimizer.minimize(&potential, &mut unknowns))?;
        report.absorb(&more);
        round += 1;
    }
    Ok((potential.full_positions(&unknowns), report))
}

/// The most solves one step may alternate with moves of its obstacles.
const MOTION_STAGES: usize = 200;

/// The state an implicit step ends in: pinned vertices get their motion's velocity
/// (the update formula would make theirs oscillate), and the step's report.
pub(crate) fn finished_step(
    model: &Model,
    end: f64,
    positions: Vec<f64>,
    mut velocities: Vec<f64>,
    report: &MinimizerReport,
) -> (State, StepReport) {
    model.apply_prescribed_velocities(end, &mut velocities);
    (
        State {
            time: end,
            positions,
            velocities,
        },
        StepReport::from(report),
    )
}

/// Takes a step of `dt`; when the nonlinear solve fails, takes two steps of
/// dt/2 instead, recursively, at most `settings.max_step_halvings` times deep
/// (numerical continuation, Chen 2019 thesis, §4.2.3). Reports are summed.
/// The model's terms were prepared for the whole step ([`Model::begin_step`]);
/// each shorter step prepares them again for itself, so that moving obstacles
/// aim at its end and friction measures slip from its start.
pub(crate) fn with_step_halving(
    model: &Model,
    state: &State,
    dt: f64,
    settings: &SolverSettings,
    attempt: &mut StepAttempt,
) -> Result<(State, StepReport)> {
    let mut whole = true;
    split_on_failure(state, dt, settings.max_step_halvings, &mut |s, h| {
        if !std::mem::take(&mut whole) {
            model.begin_step(s, s.time + h)?;
        }
        attempt(s, h)
    })
}

use super::StepReport;

/// One try at a step of a given size from a given state.
pub(crate) type StepAttempt<'a> = dyn FnMut(&State, f64) -> Result<(State, StepReport)> + 'a;

/// Takes a step of `dt` by `attempt`; on a solver failure, two steps of dt/2,
/// recursively, at most `depth_left` times deep. Reports are summed.
pub(crate) fn split_on_failure(
    state: &State,
    dt: f64,
    depth_left: usize,
    attempt: &mut StepAttempt,
) -> Result<(State, StepReport)> {
    match attempt(state, dt) {
        Ok(result) => Ok(result),
        Err(HookeError::Solver { .. }) if depth_left > 0 => {
            let (middle, first) = split_on_failure(state, dt / 2.0, depth_left - 1, attempt)?;
            let (end, second) = split_on_failure(&middle, dt / 2.0, depth_left - 1, attempt)?;
            let mut report = first;
            report.absorb(&second);
            report.halvings += 1;
            Ok((end, report))
        }
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_half_of_a_split_step_moves_the_obstacles_toward_its_own_end() {
        // A plate 1 m above a cube, coming down at 1 m/s.
        let text = r#"
[simulation]
duration = 0.1
time_step = 0.1
[[bodies]]
mesh = { box = { size = [0.1, 0.1, 0.1], cells = [1, 1, 1] } }
material = { model = "neo_hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }
[[obstacles]]
shape = { plane = { point = [0.0, 0.0, 1.1], normal = [0.0, 0.0, -1.0] } }
motion = { velocity = [0.0, 0.0, -1.0] }
[contact]
"#;
        let scene = crate::scene::Scene::from_text(text, "<test>", std::path::PathBuf::from(".")).unwrap();
        let built = scene.build().unwrap();
        let model = &built.model;
        let state = built.initial_state.clone();
        let dt = 0.1;
        model.begin_step(&state, dt).unwrap();
        let settings = SolverSettings {
            max_step_halvings: 2,
            ..SolverSettings::default()
        };
        // The whole step fails; each quarter moves the plate to its own end.
        let mut ends = Vec::new();
        let (end, _) = with_step_halving(model, &state, dt, &settings, &mut |s, h| {
            if h > 0.3 * dt {
                return Err(HookeError::Solver {
                    reason: "too long".into(),
                });
            }
            assert!(model.advance_motion(&s.positions).unwrap());
            let plate = model.barrier_contact().unwrap().planes()[0].point.z;
            ends.push((s.time + h, plate));
            let next = State {
                time: s.time + h,
                ..s.clone()
            };
            Ok((next, StepReport::default()))
        })
        .unwrap();
        assert!((end.time - dt).abs() < 1e-15);
        assert_eq!(ends.len(), 4);
        for (time, plate) in ends {
            assert!(
                (plate - (1.1 - time)).abs() < 1e-12,
                "at t = {time} the plate is at z = {plate}"
            );
        }
    }
}
