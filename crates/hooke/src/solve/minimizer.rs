//! Minimisers behind one interface: what minimises an [`Objective`], and
//! the report of what it did. The `[solver]` table (settings.rs) chooses one
//! from the registry (registry.rs).

use super::Objective;
use crate::error::Result;

/// What a minimisation did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct MinimizerReport {
    /// Iterations taken.
    pub iterations: usize,
    /// ‖∇Φ‖∞ where the last iteration started (before its update).
    pub residual: f64,
    /// Size of the last increment, in length units.
    pub increment: f64,
    /// The same as a fraction of the body's size (what the tolerance bounds).
    pub relative_increment: f64,
    /// The iteration stalled at rounding level above the tolerance and stopped
    /// there (the result is as accurate as rounding allows, not as asked).
    pub short_of_tolerance: bool,
    /// Step-length halvings over all iterations.
    pub line_search_reductions: usize,
    /// Iterations whose step the objective's feasible step bound shortened
    /// (the largest fraction of the direction that keeps the state admissible).
    pub bounded_steps: usize,
    /// Sparse factorisations (Newton: one an iteration; L-BFGS and local/global:
    /// only when their constant matrix changes).
    pub factorizations: usize,
    /// Factorisations that needed a diagonal shift (indefinite Hessian without projection).
    pub shifted_factorizations: usize,
    /// Seconds spent evaluating the objective (values, gradients, Hessians).
    pub assembly_seconds: f64,
    /// Seconds spent in linear solves and factorisations.
    pub solve_seconds: f64,
    /// With `SolverSettings::trace`: Φ at the start (iteration 0) and after
    /// every iteration, with the minimiser's time so far (tracing excluded).
    #[serde(skip)]
    pub trace: Vec<TracePoint>,
}

impl MinimizerReport {
    /// Adds a later solve of the same step: counts and times summed, the
    /// last iteration's figures from `later`.
    pub fn absorb(&mut self, later: &MinimizerReport) {
        self.iterations += later.iterations;
        self.residual = later.residual;
        self.increment = later.increment;
        self.relative_increment = later.relative_increment;
        self.short_of_tolerance |= later.short_of_tolerance;
        self.line_search_reductions += later.line_search_reductions;
        self.bounded_steps += later.bounded_steps;
        self.factorizations += later.factorizations;
        self.shifted_factorizations += later.shifted_factorizations;
        self.assembly_seconds += later.assembly_seconds;
        self.solve_seconds += later.solve_seconds;
        self.trace.extend_from_slice(&later.trace);
    }
}

/// Φ at one iterate, and the seconds the minimiser had spent to reach it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TracePoint {
    /// The minimiser's seconds so far.
    pub seconds: f64,
    /// Φ at the iterate.
    pub value: f64,
}

/// Records Φ per iterate for comparisons of minimisers; the time spent
/// evaluating Φ only for the record is left out of the seconds.
pub(crate) struct Tracer {
    on: bool,
    started: web_time::Instant,
    excluded: f64,
}

impl Tracer {
    pub(crate) fn new(on: bool) -> Tracer {
        Tracer {
            on,
            started: web_time::Instant::now(),
            excluded: 0.0,
        }
    }

    /// Records `value` if known, else evaluates Φ at `u` (off the clock).
    pub(crate) fn record(
        &mut self,
        report: &mut MinimizerReport,
        objective: &dyn Objective,
        u: &[f64],
        value: Option<f64>,
    ) {
        if !self.on {
            return;
        }
        let seconds = self.started.elapsed().as_secs_f64() - self.excluded;
        let value = value.unwrap_or_else(|| {
            let evaluating = web_time::Instant::now();
            let value = objective.value(u);
            self.excluded += evaluating.elapsed().as_secs_f64();
            value
        });
        report.trace.push(TracePoint { seconds, value });
    }
}

/// Finds a minimiser of an objective, starting from `u` and writing the result into it.
///
/// A minimiser sees only the [`Objective`]: values, gradients, the Hessian
/// when it needs one, the constant approximation of the Hessian, and the
/// feasible step bound, which every step it takes must respect (a line search
/// starts from the bound; a full step is cut to it). Register one with a
/// [`MinimizerEntry`](super::registry::MinimizerEntry) to make it a `[solver]`
/// kind, or hand it to an integrator directly
/// (`BackwardEuler::with_minimizer`).
///
/// Gradient descent with a backtracking line search, written outside the
/// crate and used by backward Euler on a sagging bar:
///
/// ```
/// use hooke::prelude::*;
/// use hooke::solve::backtrack;
/// use nalgebra::Vector3;
///
/// struct GradientDescent;
///
/// impl Minimizer for GradientDescent {
///     fn name(&self) -> &'static str {
///         "gradient_descent"
///     }
///     fn minimize(&mut self, objective: &dyn Objective, u: &mut [f64]) -> hooke::Result<MinimizerReport> {
///         let mut report = MinimizerReport::default();
///         let mut gradient = vec![0.0; objective.size()];
///         for iteration in 1..=200 {
///             report.iterations = iteration;
///             let value = objective.gradient(u, &mut gradient)?;
///             let direction: Vec<f64> = gradient.iter().map(|g| -1e-3 * g).collect();
///             report.increment = objective.increment_size(&direction);
///             if report.increment < 1e-10 * objective.length_scale() {
///                 break;
///             }
///             let slope: f64 = gradient.iter().zip(&direction).map(|(g, d)| g * d).sum();
///             // The line search starts from the objective's feasible step bound.
///             let step = backtrack(objective, u, &direction, value, slope)?.step;
///             u.iter_mut().zip(&direction).for_each(|(x, d)| *x += step * d);
///         }
///         Ok(report)
///     }
/// }
///
/// # fn main() -> hooke::Result<()> {
/// let mesh = box_mesh(&BoxMeshOptions {
///     origin: Vector3::zeros(),
///     size: Vector3::new(0.3, 0.1, 0.1),
///     cells: [3, 1, 1],
///     tets_per_hex: TetsPerHex::Six,
/// })?;
/// let soft = MaterialParameters { youngs_modulus: 1e4, poisson_ratio: 0.3, density: 1000.0 };
/// let material = IsotropicMaterial::shared(MaterialModel::Corotational, &soft);
/// let mut model = Model::new(mesh.clone(), vec![material; mesh.tet_count()], MassKind::Lumped)?;
/// let clamped = Selection::Plane { point: [0.0; 3], normal: [-1.0, 0.0, 0.0], tolerance: None }
///     .vertices(model.mesh(), "clamp")?;
/// model.add_pin(Pin::new(clamped, Motion::Fixed {}, None));
/// model.set_gravity(Vector3::new(0.0, 0.0, -9.81));
/// let mut integrator = BackwardEuler::with_minimizer(SolverSettings::default(), Box::new(GradientDescent));
/// let mut state = model.initial_state();
/// integrator.step(&model, &mut state, 0.01)?;
/// assert!(state.positions.iter().skip(2).step_by(3).any(|&z| z < 0.0), "the bar sags");
/// # Ok(())
/// # }
/// ```
pub trait Minimizer: Send {
    /// The `[solver]` kind.
    fn name(&self) -> &'static str;

    /// Minimises `objective` from `u`, leaving the result in `u`; an error
    /// when it does not converge within its limits.
    fn minimize(&mut self, objective: &dyn Objective, u: &mut [f64]) -> Result<MinimizerReport>;

    /// What its iterations are called where a run reports their count
    /// ("Newton iterations"); the default says "minimiser iterations".
    fn iterations_are(&self) -> &'static str {
        "minimiser iterations"
    }
}
