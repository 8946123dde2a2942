//! Minimisers behind one interface: what minimises an [`Objective`], and
//! the report of what it did. The `[solver]` table (settings.rs) chooses one
//! from the registry (registry.rs).

use super::Objective;
use crate::error::Result;

/// What a minimisation did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct MinimizerReport {
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
    pub assembly_seconds: f64,
    pub solve_seconds: f64,
    /// With `SolverSettings::trace`: Φ at the start (iteration 0) and after
    /// every iteration, with the minimiser's time so far (tracing excluded).
    #[serde(skip)]
    pub trace: Vec<TracePoint>,
}

/// Φ at one iterate, and the seconds the minimiser had spent to reach it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TracePoint {
    pub seconds: f64,
    pub value: f64,
}

/// Records Φ per iterate for comparisons of minimisers; the time spent
/// evaluating Φ only for the record is left out of the seconds.
pub(crate) struct Tracer {
    on: bool,
    started: std::time::Instant,
    excluded: f64,
}

impl Tracer {
    pub(crate) fn new(on: bool) -> Tracer {
        Tracer {
            on,
            started: std::time::Instant::now(),
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
            let evaluating = std::time::Instant::now();
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
pub trait Minimizer: Send {
    /// The `[solver]` kind.
    fn name(&self) -> &'static str;

    /// Minimises `objective` from `u`, leaving the result in `u`; an error
    /// when it does not converge within its limits.
    fn minimize(&mut self, objective: &dyn Objective, u: &mut [f64]) -> Result<MinimizerReport>;
}
