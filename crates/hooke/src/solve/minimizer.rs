//! Minimisers behind one interface, and the `[solver]` table of scenes that
//! chooses and tunes them for every implicit integrator and the static solve.

use super::{Lbfgs, Newton, Objective};
use crate::error::{HookeError, Result};

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
pub trait Minimizer: Send {
    /// The `[solver]` kind.
    fn name(&self) -> &'static str;

    fn minimize(&mut self, objective: &dyn Objective, u: &mut [f64]) -> Result<MinimizerReport>;
}

/// The minimisers a scene can choose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MinimizerKind {
    /// Newton's method with a backtracking line search; the Hessian is
    /// factorised every iteration.
    #[default]
    Newton,
    /// L-BFGS on a constant matrix (inertia plus weighted Laplacian)
    /// factorised once while it stays the same (seed 004 §2.10–2.11): cheap
    /// iterations for any material, linear convergence.
    Lbfgs,
    /// Local/global iterations (fast mass-springs and projective dynamics,
    /// seed 004 §2.8–2.9): the same constant matrix, no history and full
    /// steps, which for projective energies (springs, ARAP, soft pins,
    /// gravity and loads) decrease Φ at every iteration; other energies are refused.
    LocalGlobal,
    /// Sequential quadratic programming on the mixed formulation (positions,
    /// per-element stretches and their multipliers; seed 002): in a
    /// `[subspace]` only, where the subspace integrator runs it.
    MixedSqp,
}

/// The `[solver]` table: which minimiser, and its settings.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct SolverSettings {
    pub kind: MinimizerKind,
    /// Converged when the increment ‖Δx‖∞ is below this fraction of the body's size.
    pub tolerance: f64,
    /// The most iterations a step may take before it fails (default: 50 for
    /// Newton, 1000 for L-BFGS).
    pub max_iterations: Option<usize>,
    /// A fixed budget: exactly this many iterations per step unless the
    /// tolerance is met first; reaching it is not a failure (real-time use).
    pub iterations: Option<usize>,
    /// L-BFGS: the number of (Δx, Δ∇Φ) pairs kept (0: the plain quasi-Newton
    /// iteration with the constant matrix).
    pub history: usize,
    /// [low, high]: the stretches over which each material's Laplacian
    /// stiffness is fitted (L-BFGS, local/global); default [0.5, 1.5].
    pub laplacian_stretches: Option<[f64; 2]>,
    /// Record Φ after every iteration in the report (solver comparisons; not a scene key).
    #[serde(skip)]
    pub trace: bool,
    /// Project each element's Hessian to positive semi-definite, so that the system is SPD.
    pub project_hessian: bool,
    /// Backtrack along the search direction until the objective decreases enough.
    pub line_search: bool,
    /// When the minimiser fails, split the step in two, recursively, at most this
    /// deep (2^depth sub-steps; seed 000 §2.4). 0 turns continuation off.
    pub max_step_halvings: usize,
    /// What a step whose iteration stalls at rounding level, above the
    /// tolerance, does: accept the result and report it, or fail.
    pub stagnation: Stagnation,
    /// Solve each linear system by this many preconditioned conjugate-gradient
    /// iterations instead of a factorisation (seed 004 Figs. 7.7–7.8):
    /// Newton's Hessian with a Jacobi preconditioner, L-BFGS's initial Hessian
    /// with an incomplete Cholesky one (of that matrix, or of the rest pose's
    /// Hessian when it is the frame's). None: a direct solve.
    pub cg_iterations: Option<usize>,
    /// L-BFGS: the initial Hessian A₀ its two-loop recursion starts from.
    pub initial_hessian: InitialHessian,
}

/// The matrix L-BFGS's two-loop recursion applies the inverse of.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InitialHessian {
    /// M/h² plus the weighted Laplacian, constant while the time step and
    /// the free DOFs are (seed 004's method).
    #[default]
    Laplacian,
    /// The (projected) Hessian at the start of each frame, recomputed every
    /// frame (seed 004 Fig. 7.8's comparison).
    FrameHessian,
}

/// What to do when the minimiser stalls at rounding level above the tolerance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stagnation {
    /// Accept the step; the step report, the summary and the run's message say so.
    #[default]
    Report,
    /// Fail the step (which then splits, if `max_step_halvings` allows).
    Fail,
}

impl Default for SolverSettings {
    fn default() -> Self {
        SolverSettings {
            kind: MinimizerKind::Newton,
            tolerance: 1e-8,
            max_iterations: None,
            iterations: None,
            history: 5,
            laplacian_stretches: None,
            trace: false,
            project_hessian: true,
            line_search: true,
            max_step_halvings: 4,
            stagnation: Stagnation::Report,
            cg_iterations: None,
            initial_hessian: InitialHessian::Laplacian,
        }
    }
}

/// The keys of the `[solver]` table, which earlier versions read from `[integrator]`.
pub const SOLVER_KEYS: [&str; 6] = [
    "tolerance",
    "max_iterations",
    "project_hessian",
    "line_search",
    "max_step_halvings",
    "stagnation",
];

impl SolverSettings {
    /// Checks the ranges; `key` names the table in errors.
    pub fn validate(&self, key: &str) -> Result<()> {
        if !(self.tolerance > 0.0 && self.tolerance < 1.0) {
            return Err(HookeError::scene(
                format!("{key}.tolerance"),
                format!("must lie in (0, 1), got {}", self.tolerance),
            ));
        }
        if self.max_step_halvings > 20 {
            return Err(HookeError::scene(
                format!("{key}.max_step_halvings"),
                format!("at most 20 (a million sub-steps), got {}", self.max_step_halvings),
            ));
        }
        if self.max_iterations == Some(0) {
            return Err(HookeError::scene(format!("{key}.max_iterations"), "must be at least 1"));
        }
        if self.iterations == Some(0) {
            return Err(HookeError::scene(format!("{key}.iterations"), "must be at least 1"));
        }
        if let Some([low, high]) = self.laplacian_stretches {
            if !(low > 0.0 && low < 1.0 && high > 1.0 && high.is_finite()) {
                return Err(HookeError::scene(
                    format!("{key}.laplacian_stretches"),
                    format!("needs 0 < low < 1 < high, got [{low}, {high}]"),
                ));
            }
        }
        if self.cg_iterations == Some(0) {
            return Err(HookeError::scene(format!("{key}.cg_iterations"), "must be at least 1"));
        }
        if self.cg_iterations.is_some() && !matches!(self.kind, MinimizerKind::Newton | MinimizerKind::Lbfgs) {
            return Err(HookeError::scene(
                format!("{key}.cg_iterations"),
                "serves newton and lbfgs only (local/global's decrease rests on exact solves)",
            ));
        }
        if self.initial_hessian != InitialHessian::Laplacian && self.kind != MinimizerKind::Lbfgs {
            return Err(HookeError::scene(format!("{key}.initial_hessian"), "serves lbfgs only"));
        }
        if self.history > 1000 {
            return Err(HookeError::scene(
                format!("{key}.history"),
                format!("at most 1000 pairs, got {}", self.history),
            ));
        }
        Ok(())
    }

    /// The iterations a step may take: the fixed budget, else `max_iterations`,
    /// else the kind's default.
    pub fn iteration_limit(&self) -> usize {
        self.iterations.or(self.max_iterations).unwrap_or(match self.kind {
            MinimizerKind::Newton => 50,
            MinimizerKind::Lbfgs | MinimizerKind::LocalGlobal => 1000,
            MinimizerKind::MixedSqp => 50,
        })
    }

    /// Whether these settings can minimise `model`'s steps: a local/global
    /// solver needs every energy projective and damping that is a multiple of
    /// the mass. `key` names the table in errors.
    pub fn check_model(&self, model: &crate::model::Model, key: &str) -> Result<()> {
        if self.kind == MinimizerKind::MixedSqp {
            return Err(mixed_needs_its_integrator(key));
        }
        if self.kind != MinimizerKind::LocalGlobal {
            return Ok(());
        }
        let refused = model.non_projective_terms();
        if !refused.is_empty() {
            return Err(HookeError::scene(
                format!("{key}.kind"),
                format!(
                    "local_global minimises only projective energies (springs, the arap, strain_limit and volume materials, soft pins, gravity and loads); {} {} not: use \"lbfgs\" or \"newton\"",
                    refused.join(", "),
                    if refused.len() == 1 { "is" } else { "are" }
                ),
            ));
        }
        if model
            .damping()
            .is_some_and(|d| d.stiffness_coefficient != 0.0 || d.viscoelastic_coefficient != 0.0)
        {
            return Err(HookeError::scene(
                format!("{key}.kind"),
                "local_global takes mass-proportional damping only (damping.stiffness_coefficient and viscoelastic_coefficient must be 0): use \"lbfgs\" or \"newton\"",
            ));
        }
        Ok(())
    }

    /// The minimiser these settings describe.
    pub fn minimizer(&self) -> Box<dyn Minimizer> {
        match self.kind {
            MinimizerKind::Newton => Box::new(Newton::new(*self)),
            MinimizerKind::Lbfgs => Box::new(Lbfgs::new(*self)),
            MinimizerKind::LocalGlobal => Box::new(Lbfgs::local_global(*self)),
            MinimizerKind::MixedSqp => Box::new(SubspaceOnly),
        }
    }
}

/// The refusal of `mixed_sqp` outside a subspace.
fn mixed_needs_its_integrator(key: &str) -> HookeError {
    HookeError::scene(
        format!("{key}.kind"),
        "mixed_sqp is stepped by its own integrators (a scene's backward_euler with [solver] kind = \"mixed_sqp\", with or without [subspace]), not by a minimiser of the incremental potential",
    )
}

/// What `mixed_sqp` gives a step of the incremental potential: an error,
/// never a silent stand-in (scenes build the mixed-FEM integrators instead).
struct SubspaceOnly;

impl Minimizer for SubspaceOnly {
    fn name(&self) -> &'static str {
        "mixed_sqp"
    }

    fn minimize(&mut self, _objective: &dyn Objective, _u: &mut [f64]) -> Result<MinimizerReport> {
        Err(mixed_needs_its_integrator("solver"))
    }
}
