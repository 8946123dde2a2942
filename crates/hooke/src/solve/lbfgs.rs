//! Quasi-Newton minimisation by L-BFGS with a constant initial Hessian
//! (Liu 2018 thesis, §7.1–7.2, Algorithm 4).
//!
//! Newton factorises a new Hessian every iteration. Here one matrix A₀ (for an
//! implicit step, the inertia M/h² plus the weighted Laplacian L of the
//! elements, springs and soft pins) is factorised once and kept while it stays
//! the same (same time step, same free DOFs); every iteration then costs a
//! gradient, one solve with A₀ and the two-loop recursion over the last `w`
//! pairs (s, t) of position and gradient changes. With w = 0 this is the
//! source's Algorithm 3, the plain quasi-Newton iteration with A₀. Any
//! hyperelastic material works: A₀ need only be SPD, and a backtracking line
//! search keeps every step a descent. Terms without a Laplacian (contact,
//! loads, fibres) act through the gradient alone (§2.13).

use super::entry::{MinimizerCapabilities, MinimizerEntry, SettingKey};
use super::line_search::{backtrack_with_gradient, feasible_bound, small_against_gaps};
use super::minimizer::Tracer;
use super::newton::{line_search_failed, stalled_over, ROUND_OFF_LEVEL};
use super::settings::MinimizerSettings;
use super::{Minimizer, MinimizerReport, Objective, QuasiNewtonMatrix, SolverSettings, Stagnation};
use crate::error::{HookeError, Result};
use crate::linalg::{conjugate_gradient, IncompleteCholesky, IndefiniteSystem, SystemMatrix, SystemSolver};
use std::collections::VecDeque;
use web_time::Instant;

/// L-BFGS's own `[solver]` keys.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct LbfgsSettings {
    /// The number of (Δx, Δ∇Φ) pairs kept (0: the plain quasi-Newton
    /// iteration with the constant matrix; at most 1000).
    pub history: usize,
    /// Backtrack along each direction until Φ decreases enough (off: full
    /// steps, cut only by the feasible step bound).
    pub line_search: bool,
    /// Solve with A₀ by this many preconditioned conjugate-gradient
    /// iterations instead of a factorisation (Liu 2018 thesis, Fig. 7.8):
    /// incomplete Cholesky of A₀, or of the rest pose's Hessian when A₀ is
    /// the frame's Hessian. None: a direct solve.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cg_iterations: Option<usize>,
    /// The initial Hessian A₀ the two-loop recursion starts from.
    pub initial_hessian: InitialHessian,
}

impl Default for LbfgsSettings {
    fn default() -> Self {
        LbfgsSettings {
            history: 5,
            line_search: true,
            cg_iterations: None,
            initial_hessian: InitialHessian::Laplacian,
        }
    }
}

impl MinimizerSettings for LbfgsSettings {
    const NAME: &'static str = "lbfgs";
}

/// The matrix L-BFGS's two-loop recursion applies the inverse of.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InitialHessian {
    /// M/h² plus the weighted Laplacian, constant while the time step and
    /// the free DOFs are (Liu 2018 thesis, §2.10).
    #[default]
    Laplacian,
    /// The (projected) Hessian at the start of each frame, recomputed every
    /// frame (Liu 2018 thesis, Fig. 7.8's comparison).
    FrameHessian,
}

fn build(settings: &SolverSettings) -> Result<Box<dyn Minimizer>> {
    let own: LbfgsSettings = settings.own_settings("solver")?;
    if own.cg_iterations == Some(0) {
        return Err(HookeError::scene("solver.cg_iterations", "must be at least 1"));
    }
    if own.history > 1000 {
        return Err(HookeError::scene(
            "solver.history",
            format!("at most 1000 pairs, got {}", own.history),
        ));
    }
    Ok(Box::new(Lbfgs::new(settings.clone(), own)))
}

pub(crate) const ENTRY: MinimizerEntry = MinimizerEntry {
    name: "lbfgs",
    aliases: &["l_bfgs"],
    summary: "L-BFGS on a constant initial Hessian (inertia plus weighted Laplacian) factorised once (Liu, Bouaziz and Kavan 2017): cheap iterations for any material, linear convergence",
    keys: &[
        SettingKey {
            name: "history",
            default: "5",
            meaning: "(Δx, Δ∇Φ) pairs kept; 0: the plain quasi-Newton iteration",
        },
        SettingKey {
            name: "line_search",
            default: "true",
            meaning: "backtrack until Φ decreases enough; off: full steps",
        },
        SettingKey {
            name: "cg_iterations",
            default: "",
            meaning: "solve with A₀ by this many incomplete-Cholesky-preconditioned CG iterations instead of a factorisation",
        },
        SettingKey {
            name: "initial_hessian",
            default: "\"laplacian\"",
            meaning: "A₀: \"laplacian\" (constant) or \"frame_hessian\" (the Hessian at each frame's start)",
        },
    ],
    capabilities: MinimizerCapabilities {
        hessian: false,
        constant_matrix: true,
        projective_energies_only: false,
    },
    default_iteration_limit: 1000,
    build,
};

/// The source's sufficient-decrease constant (γ = 0.03, with halving β = 0.5).
const ARMIJO: f64 = 0.03;

/// A local/global step with the exact factor lowers Φ by at least half its
/// slope |∇Φᵀd|. With the rounded factor, a step that raises Φ by more than
/// that and by more than this fraction of |Φ| (both far above the rounding
/// of Φ's sums) has lost the decrease: the rounding is turned off. Should
/// rounding noise ever pass both, the cost is speed, not the result.
const DECREASE_SLACK: f64 = 1e-10;

/// Matrices whose rounded factor lost local/global's decrease, remembered
/// so that one coming back (a step size tried again) is factorised exact.
const EXACT_KEYS_KEPT: usize = 16;

/// Iterations without a new smallest increment after which a linearly
/// convergent iteration at rounding level has stalled.
const LINEAR_STALL_WINDOW: usize = 50;

/// One pair of the history: s = Δx, t = Δ∇Φ, ρ = tᵀs > 0.
struct Pair {
    s: Vec<f64>,
    t: Vec<f64>,
    rho: f64,
}

/// IC(0) of a sparse system's matrix (its low-rank part left out: the
/// factor only preconditions).
fn incomplete_cholesky(matrix: &SystemMatrix) -> Result<IncompleteCholesky> {
    match matrix {
        SystemMatrix::Sparse { pattern, values, .. } => IncompleteCholesky::new(pattern, values),
        SystemMatrix::Dense(_) => Err(HookeError::Solver {
            reason: "cg_iterations with lbfgs needs a sparse system (not reduced coordinates)".to_string(),
        }),
    }
}

/// L-BFGS (and, with no history and full steps, local/global iterations).
pub struct Lbfgs {
    name: &'static str,
    settings: SolverSettings,
    own: LbfgsSettings,
    solver: SystemSolver,
    /// The key of the matrix factorised in `solver`.
    factorized: Option<u64>,
    /// Coordinates the factorised matrix acts on alike (1: it is the whole A₀).
    coordinates: usize,
    /// Whether solves read the factor rounded to single precision.
    rounded: bool,
    /// The keys of matrices whose rounded factor lost local/global's
    /// decrease: their factors are used as computed.
    needs_exact: VecDeque<u64>,
    /// With `cg_iterations`: A₀ itself, solved by preconditioned CG.
    iterative: Option<SystemMatrix>,
    /// The incomplete Cholesky factor preconditioning those solves (of A₀,
    /// or of the rest pose's Hessian for the frame Hessian), with the key of
    /// the matrix it was built for.
    preconditioner: Option<(Option<u64>, IncompleteCholesky)>,
}

impl Lbfgs {
    /// L-BFGS with the shared `[solver]` settings and its own.
    pub fn new(settings: SolverSettings, own: LbfgsSettings) -> Lbfgs {
        Lbfgs {
            name: "lbfgs",
            settings,
            own,
            solver: SystemSolver::new(),
            factorized: None,
            coordinates: 1,
            rounded: false,
            needs_exact: VecDeque::new(),
            iterative: None,
            preconditioner: None,
        }
    }

    /// Local/global iterations (Liu 2018 thesis, ch. 5–6; its Algorithm 3 without a
    /// line search): no history and full steps x ← x − A₀⁻¹∇Φ. For projective
    /// energies this is exactly the global solve after the local projections,
    /// and Φ decreases at every iteration, so no line search is needed.
    pub fn local_global(settings: SolverSettings) -> Lbfgs {
        Lbfgs {
            name: "local_global",
            ..Lbfgs::new(
                settings,
                LbfgsSettings {
                    history: 0,
                    line_search: false,
                    ..LbfgsSettings::default()
                },
            )
        }
    }

    /// Makes A₀ ready to solve with: the Laplacian's factor (or incomplete
    /// factor) unless the one prepared already is the same, or the Hessian
    /// at `x`, where the frame starts.
    fn prepare(&mut self, objective: &dyn Objective, x: &[f64], report: &mut MinimizerReport) -> Result<()> {
        match self.own.initial_hessian {
            InitialHessian::Laplacian => self.prepare_laplacian(objective, report),
            InitialHessian::FrameHessian => self.prepare_frame_hessian(objective, x, report),
        }
    }

    /// A₀ = the objective's Hessian at the frame's start (Liu 2018 thesis, Fig. 7.8
    /// b–d): factorised, or with `cg_iterations` solved by CG preconditioned
    /// with the incomplete Cholesky factor of the rest pose's Hessian, which
    /// is kept while the objective's constant matrix is the same.
    fn prepare_frame_hessian(
        &mut self,
        objective: &dyn Objective,
        x: &[f64],
        report: &mut MinimizerReport,
    ) -> Result<()> {
        let started = Instant::now();
        let mut hessian = objective.hessian_matrix();
        let mut gradient = vec![0.0; objective.size()];
        objective.hessian(x, &mut gradient, &mut hessian)?;
        report.assembly_seconds += started.elapsed().as_secs_f64();
        let started = Instant::now();
        let mut rest_assembly = 0.0;
        self.factorized = None;
        self.coordinates = 1;
        self.rounded = false;
        match self.own.cg_iterations {
            None => {
                self.iterative = None;
                if let crate::linalg::FactorizationOutcome::Shifted { .. } =
                    self.solver.factorize(&hessian, IndefiniteSystem::Shift)?
                {
                    report.shifted_factorizations += 1;
                }
                report.factorizations += 1;
            }
            Some(_) => {
                let key = objective.quasi_newton_key();
                if key.is_none() || self.preconditioner.as_ref().map(|p| p.0) != Some(key) {
                    let assembling = Instant::now();
                    let at_rest = objective.rest_hessian().ok_or_else(|| HookeError::Solver {
                        reason: "initial_hessian = \"frame_hessian\" with cg_iterations preconditions by the rest pose's Hessian, which this problem has not".to_string(),
                    })??;
                    rest_assembly = assembling.elapsed().as_secs_f64();
                    report.assembly_seconds += rest_assembly;
                    self.preconditioner = Some((key, incomplete_cholesky(&at_rest)?));
                }
                self.iterative = Some(hessian);
            }
        }
        report.solve_seconds += started.elapsed().as_secs_f64() - rest_assembly;
        Ok(())
    }

    /// Factorises A₀ unless the one factorised already is the same.
    fn prepare_laplacian(&mut self, objective: &dyn Objective, report: &mut MinimizerReport) -> Result<()> {
        let key = objective.quasi_newton_key().ok_or_else(|| HookeError::Solver {
            reason: "the L-BFGS solver needs a constant approximation of the Hessian, which this problem has not"
                .to_string(),
        })?;
        if self.factorized == Some(key) {
            return Ok(());
        }
        let started = Instant::now();
        let QuasiNewtonMatrix { matrix, coordinates } = objective.quasi_newton_matrix()?;
        report.assembly_seconds += started.elapsed().as_secs_f64();
        let started = Instant::now();
        self.factorized = None;
        self.coordinates = coordinates;
        if self.own.cg_iterations.is_some() {
            // Liu 2018 thesis, Fig. 7.8 e–f: A₀ solved by CG with its own IC(0).
            self.preconditioner = Some((Some(key), incomplete_cholesky(&matrix)?));
            self.iterative = Some(matrix);
            self.rounded = false;
            report.solve_seconds += started.elapsed().as_secs_f64();
            self.factorized = Some(key);
            return Ok(());
        }
        // A₀ is SPD when the inertia or pins hold every rigid motion; a static
        // solve of a body held only through loads is shifted to definite.
        if let crate::linalg::FactorizationOutcome::Shifted { .. } =
            self.solver.factorize(&matrix, IndefiniteSystem::Shift)?
        {
            report.shifted_factorizations += 1;
        }
        // Solves read the factor rounded to single precision, half the memory.
        // L-BFGS needs A₀ only SPD, and its line search keeps every step a
        // descent. Local/global's decrease without a line search rests on the
        // matrix itself, which the rounded factor keeps unless A is very
        // badly conditioned (~1e10 in the tests): each step checks that Φ
        // did not rise ([`DECREASE_SLACK`]), and a matrix whose rounded
        // factor once failed that is used as computed.
        // L-BFGS without a line search has neither guarantee and keeps it exact.
        let may_round = self.own.line_search || self.own.history == 0;
        self.rounded = may_round && !self.needs_exact.contains(&key) && self.solver.keep_factor_in_single_precision();
        report.factorizations += 1;
        report.solve_seconds += started.elapsed().as_secs_f64();
        self.factorized = Some(key);
        Ok(())
    }

    /// q ← A₀⁻¹ q; a per-coordinate factor solves a vertex's coordinates as
    /// one row of right-hand sides, which is how q holds them.
    fn solve(&self, q: &mut [f64]) -> Result<()> {
        if let (Some(matrix), Some((_, preconditioner)), Some(iterations)) =
            (&self.iterative, &self.preconditioner, self.own.cg_iterations)
        {
            let d = self.coordinates;
            for c in 0..d {
                let column: Vec<f64> = q.iter().skip(c).step_by(d).copied().collect();
                let solved = conjugate_gradient(&|v, out| matrix.multiply(v, out), preconditioner, &column, iterations);
                for (i, value) in solved.x.into_iter().enumerate() {
                    q[i * d + c] = value;
                }
            }
            return Ok(());
        }
        match self.coordinates {
            1 => self.solver.solve_in_place(q),
            d => self.solver.solve_rows_in_place(q, d),
        }
    }

    /// −H ∇Φ by the two-loop recursion, H the L-BFGS inverse Hessian built on A₀.
    fn direction(&self, gradient: &[f64], history: &VecDeque<Pair>) -> Result<Vec<f64>> {
        let dot = crate::linalg::dot;
        let mut q = gradient.to_vec();
        let mut zeta = vec![0.0; history.len()];
        for (i, pair) in history.iter().enumerate().rev() {
            zeta[i] = dot(&pair.s, &q) / pair.rho;
            q.iter_mut().zip(&pair.t).for_each(|(q, t)| *q -= zeta[i] * t);
        }
        self.solve(&mut q)?;
        for (i, pair) in history.iter().enumerate() {
            let eta = dot(&pair.t, &q) / pair.rho;
            q.iter_mut().zip(&pair.s).for_each(|(r, s)| *r += s * (zeta[i] - eta));
        }
        q.iter_mut().for_each(|r| *r = -*r);
        Ok(q)
    }
}

impl Minimizer for Lbfgs {
    fn name(&self) -> &'static str {
        self.name
    }

    fn iterations_are(&self) -> &'static str {
        if self.name == super::local_global::ENTRY.name {
            "local/global iterations"
        } else {
            "L-BFGS iterations"
        }
    }

    ///
    /// One function of about 150 lines: the iteration keeps its history, gradients, line search,
    /// stall test and the rounded factor's fallback in one loop whose state they share.
    fn minimize(&mut self, objective: &dyn Objective, x: &mut [f64]) -> Result<MinimizerReport> {
        let settings = self.settings.clone();
        let own = self.own;
        let mut report = MinimizerReport::default();
        let mut tracer = Tracer::new(settings.trace);
        self.prepare(objective, x, &mut report)?;
        let threshold = settings.increment_threshold(objective);
        let n = objective.size();
        // The history starts empty at every step: the first iteration is a plain A₀ step.
        let mut history: VecDeque<Pair> = VecDeque::with_capacity(own.history);
        let mut gradient = vec![0.0; n];
        let mut next_gradient = vec![0.0; n];
        let started = Instant::now();
        let mut value = objective.gradient(x, &mut gradient)?;
        report.assembly_seconds += started.elapsed().as_secs_f64();
        tracer.record(&mut report, objective, x, Some(value));
        let mut increments = Vec::new();
        let limit = settings.iteration_limit();
        for iteration in 1..=limit {
            report.iterations = iteration;
            report.residual = gradient.iter().fold(0.0, |m: f64, g| m.max(g.abs()));
            if report.residual == 0.0 {
                report.increment = 0.0;
                return Ok(report);
            }
            let started = Instant::now();
            let mut direction = self.direction(&gradient, &history)?;
            let mut slope: f64 = gradient.iter().zip(&direction).map(|(g, d)| g * d).sum();
            let descends = slope < 0.0;
            if !descends && !history.is_empty() {
                // Not a descent direction (rounding in the history): start it again.
                history.clear();
                direction = self.direction(&gradient, &history)?;
                slope = gradient.iter().zip(&direction).map(|(g, d)| g * d).sum();
            }
            report.solve_seconds += started.elapsed().as_secs_f64();
            report.increment = objective.increment_size(&direction);
            report.relative_increment = report.increment / objective.length_scale();
            if !report.increment.is_finite() {
                return Err(HookeError::LinearSolver {
                    reason: "the L-BFGS direction is not finite".to_string(),
                });
            }
            // L-BFGS's direction approximates Newton's step whichever way A₀
            // is solved; the increment test is the same for all (unlike
            // Newton's, whose test assumes the exact step).
            let bound = feasible_bound(objective, x, &direction)?;
            if report.increment <= threshold && bound == 1.0 && small_against_gaps(objective, x, report.increment) {
                x.iter_mut().zip(&direction).for_each(|(a, d)| *a += d);
                tracer.record(&mut report, objective, x, None);
                return Ok(report);
            }
            if bound < 1.0 {
                report.bounded_steps += 1;
            }
            increments.push(report.relative_increment);
            // Linear convergence shrinks the increment slowly: stalled only when
            // it makes no new smallest increment for many iterations.
            if bound == 1.0
                && report.relative_increment <= ROUND_OFF_LEVEL
                && stalled_over(&increments, LINEAR_STALL_WINDOW, 1.0)
            {
                if settings.stagnation == Stagnation::Fail {
                    return Err(HookeError::Solver {
                        reason: format!(
                            "L-BFGS stalled at increment {:.3e} of the body's size, above the tolerance {:.3e} ([solver] stagnation = \"fail\")",
                            report.relative_increment, settings.tolerance
                        ),
                    });
                }
                report.short_of_tolerance = true;
                return Ok(report);
            }
            // Each line-search trial evaluates Φ and ∇Φ together: the accepted
            // point's gradient is the next iteration's (the source's prefetch).
            let started = Instant::now();
            let (step, next_value) = if own.line_search {
                let (search, next_value) =
                    backtrack_with_gradient(objective, x, &direction, value, slope, ARMIJO, &mut next_gradient)
                        .map_err(|error| line_search_failed(error, "L-BFGS", iteration, report.residual))?;
                report.line_search_reductions += search.halvings;
                (search.step, next_value)
            } else {
                // The full step (cut to the feasible bound): its Φ, and its
                // gradient into `next_gradient`. Local/global's surrogate is a
                // convex quadratic that its full step minimises, so a cut step
                // decreases Φ too.
                let full_step = |direction: &[f64], step: f64, next_gradient: &mut [f64]| {
                    let trial: Vec<f64> = x.iter().zip(direction).map(|(a, d)| a + step * d).collect();
                    objective.gradient(&trial, next_gradient)
                };
                let mut step = bound;
                let mut next_value = full_step(&direction, step, &mut next_gradient)?;
                let rise = next_value - value;
                let lost = rise > 0.5 * step * slope.abs() && rise > DECREASE_SLACK * value.abs();
                if self.rounded && (lost || next_value.is_nan()) {
                    // The rounded factor lost the decrease the exact one guarantees:
                    // this step again with the factor as computed.
                    let solving = Instant::now();
                    self.solver.use_factor_in_double_precision();
                    self.rounded = false;
                    if let Some(key) = self.factorized {
                        if self.needs_exact.len() == EXACT_KEYS_KEPT {
                            self.needs_exact.pop_front();
                        }
                        self.needs_exact.push_back(key);
                    }
                    direction = self.direction(&gradient, &history)?;
                    report.solve_seconds += solving.elapsed().as_secs_f64();
                    report.increment = objective.increment_size(&direction);
                    report.relative_increment = report.increment / objective.length_scale();
                    if let Some(last) = increments.last_mut() {
                        *last = report.relative_increment;
                    }
                    step = feasible_bound(objective, x, &direction)?;
                    next_value = full_step(&direction, step, &mut next_gradient)?;
                }
                (step, next_value)
            };
            report.assembly_seconds += started.elapsed().as_secs_f64();
            let s: Vec<f64> = direction.iter().map(|d| step * d).collect();
            x.iter_mut().zip(&s).for_each(|(a, s)| *a += s);
            value = next_value;
            tracer.record(&mut report, objective, x, Some(value));
            std::mem::swap(&mut gradient, &mut next_gradient);
            let previous = &next_gradient;
            if own.history > 0 {
                let t: Vec<f64> = gradient.iter().zip(previous).map(|(a, b)| a - b).collect();
                let rho: f64 = s.iter().zip(&t).map(|(a, b)| a * b).sum();
                // Only pairs of positive curvature keep the inverse Hessian definite.
                let scale = s.iter().map(|a| a * a).sum::<f64>().sqrt() * t.iter().map(|a| a * a).sum::<f64>().sqrt();
                if rho > 1e-12 * scale {
                    if history.len() == own.history {
                        history.pop_front();
                    }
                    history.push_back(Pair { s, t, rho });
                }
            }
            if settings.iterations == Some(iteration) {
                report.residual = gradient.iter().fold(0.0, |m: f64, g| m.max(g.abs()));
                return Ok(report);
            }
        }
        Err(HookeError::Solver {
            reason: format!(
                "L-BFGS did not converge in {limit} iterations (residual {:.3e}, last increment {:.3e}, tolerance {:.3e})",
                report.residual, report.increment, threshold
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::SystemMatrix;
    use nalgebra::{DMatrix, DVector};
    use std::cell::Cell;

    /// Φ(u) = ½ uᵀA u − bᵀu with A₀ = diag(A) as the quasi-Newton matrix
    /// (under `key`), counting how often A₀ is built.
    struct Quadratic {
        a: DMatrix<f64>,
        b: DVector<f64>,
        key: u64,
        builds: Cell<usize>,
    }

    impl Quadratic {
        fn new(n: usize) -> Quadratic {
            let a = DMatrix::from_fn(n, n, |i, j| match i.abs_diff(j) {
                0 => 4.0 + i as f64,
                1 => -1.5,
                _ => 0.1,
            });
            Quadratic {
                a,
                b: DVector::from_fn(n, |i, _| (i as f64).sin() + 1.0),
                key: 1,
                builds: Cell::new(0),
            }
        }

        fn solution(&self) -> DVector<f64> {
            self.a.clone().lu().solve(&self.b).unwrap()
        }
    }

    impl Objective for Quadratic {
        fn size(&self) -> usize {
            self.b.len()
        }
        fn value(&self, u: &[f64]) -> f64 {
            let u = DVector::from_column_slice(u);
            0.5 * u.dot(&(&self.a * &u)) - self.b.dot(&u)
        }
        fn gradient(&self, u: &[f64], gradient: &mut [f64]) -> Result<f64> {
            let g = &self.a * DVector::from_column_slice(u) - &self.b;
            gradient.copy_from_slice(g.as_slice());
            Ok(self.value(u))
        }
        fn hessian(&self, u: &[f64], gradient: &mut [f64], hessian: &mut SystemMatrix) -> Result<f64> {
            *hessian = SystemMatrix::Dense(self.a.clone());
            self.gradient(u, gradient)
        }
        fn hessian_matrix(&self) -> SystemMatrix {
            SystemMatrix::Dense(DMatrix::zeros(self.size(), self.size()))
        }
        fn length_scale(&self) -> f64 {
            1.0
        }
        fn quasi_newton_key(&self) -> Option<u64> {
            Some(self.key)
        }
        fn quasi_newton_matrix(&self) -> Result<QuasiNewtonMatrix> {
            self.builds.set(self.builds.get() + 1);
            Ok(QuasiNewtonMatrix {
                matrix: SystemMatrix::Dense(DMatrix::from_diagonal(&self.a.diagonal())),
                coordinates: 1,
            })
        }
    }

    fn settings(iterations: Option<usize>) -> SolverSettings {
        SolverSettings {
            tolerance: 1e-12,
            iterations,
            ..SolverSettings::named("lbfgs").unwrap()
        }
    }

    fn lbfgs(history: usize, iterations: Option<usize>) -> Lbfgs {
        Lbfgs::new(
            settings(iterations),
            LbfgsSettings {
                history,
                ..LbfgsSettings::default()
            },
        )
    }

    /// L-BFGS reaches the minimiser of a quadratic, in fewer iterations with a
    /// history than without (plain iteration with A₀); A₀ is factorised once
    /// while its key stays the same and again when it changes.
    #[test]
    fn it_minimises_a_quadratic_and_reuses_its_factorisation() {
        let mut quadratic = Quadratic::new(12);
        let exact = quadratic.solution();
        let mut iterations = Vec::new();
        for history in [0, 5] {
            let mut minimizer = lbfgs(history, None);
            let mut u = vec![0.0; 12];
            let report = minimizer.minimize(&quadratic, &mut u).unwrap();
            assert!((DVector::from_vec(u) - &exact).amax() < 1e-10, "history {history}");
            iterations.push(report.iterations);
        }
        assert!(iterations[1] < iterations[0], "{iterations:?}");

        let mut minimizer = lbfgs(5, None);
        let builds = quadratic.builds.get();
        for _ in 0..3 {
            minimizer.minimize(&quadratic, &mut [0.0; 12]).unwrap();
        }
        assert_eq!(
            quadratic.builds.get(),
            builds + 1,
            "one factorisation for three minimisations"
        );
        quadratic.key = 2;
        minimizer.minimize(&quadratic, &mut [0.0; 12]).unwrap();
        assert_eq!(quadratic.builds.get(), builds + 2, "a new key, a new factorisation");
    }

    /// As Newton's: a loose tolerance must not end on a step large against the
    /// contact's gap (see newton.rs, a_loose_tolerance_still_ends_close_against_the_contact_gap).
    /// Not from deep inside the barrier (κ = 10⁵ from d̂/2, say): there the
    /// first curvature pair is the barrier's, A₀ (the spring) lacks it, the
    /// line search leaves the barrier's reach, and the next direction, scaled
    /// by that stiff pair, passes the increment test with the residual at 1.
    /// That is L-BFGS's increment test, not the gap's, and stays open.
    #[test]
    fn a_loose_tolerance_still_ends_close_against_the_contact_gap() {
        use crate::solve::test_objectives::PressedOnWall;
        for (kappa, start) in [(1e3, 0.9e-3), (1e2, 0.9e-3), (1e4, 0.9e-3), (10.0, 1e-5), (1e3, 0.5e-3)] {
            let wall = PressedOnWall::with_stiffness(kappa);
            let minimum = wall.minimum();
            let mut x = vec![start];
            let mut minimizer = Lbfgs::new(
                SolverSettings {
                    tolerance: 1e-2,
                    ..SolverSettings::named("lbfgs").unwrap()
                },
                LbfgsSettings::default(),
            );
            let report = minimizer.minimize(&wall, &mut x).unwrap();
            assert!(
                (x[0] - minimum).abs() <= 0.05 * minimum,
                "κ {kappa}, from {start}: ended at {} against the minimum {minimum} ({report:?})",
                x[0]
            );
        }
    }

    /// A fixed budget stops after exactly that many iterations, short of the
    /// minimum but lower than the start, and is no failure.
    #[test]
    fn a_fixed_budget_takes_exactly_its_iterations() {
        let quadratic = Quadratic::new(30);
        let mut u = vec![0.0; 30];
        let report = lbfgs(5, Some(3)).minimize(&quadratic, &mut u).unwrap();
        assert_eq!(report.iterations, 3);
        assert!(quadratic.value(&u) < quadratic.value(&[0.0; 30]));
        assert!((DVector::from_vec(u) - quadratic.solution()).amax() > 1e-8);
    }

    /// Φ = ½uᵀAu − bᵀu with A = εI plus a weighted Laplacian of a cubic grid
    /// graph, whose edges along x have stiffness `stiff` and the others 1;
    /// A itself is the quasi-Newton matrix, so local/global is Newton's
    /// method and one exact step reaches the minimum.
    struct GridQuadratic {
        pattern: std::sync::Arc<crate::linalg::LowerPattern>,
        values: Vec<f64>,
        b: Vec<f64>,
    }

    fn grid_quadratic(side: usize, stiff: f64, epsilon: f64) -> GridQuadratic {
        let index = |i: usize, j: usize, k: usize| i + side * (j + side * k);
        let n = side * side * side;
        let mut entries = vec![std::collections::BTreeMap::new(); n];
        for v in 0..n {
            entries[v].insert(v, epsilon);
        }
        for k in 0..side {
            for j in 0..side {
                for i in 0..side {
                    let v = index(i, j, k);
                    let neighbours = [(i + 1, j, k, stiff), (i, j + 1, k, 1.0), (i, j, k + 1, 1.0)];
                    for (a, b, c, weight) in neighbours {
                        if a < side && b < side && c < side {
                            let w = index(a, b, c);
                            *entries[v].get_mut(&v).expect("diagonal") += weight;
                            *entries[w].entry(w).or_insert(0.0) += weight;
                            *entries[v].entry(w).or_insert(0.0) -= weight;
                        }
                    }
                }
            }
        }
        let columns: Vec<Vec<usize>> = entries.iter().map(|c| c.keys().copied().collect()).collect();
        let values = entries.iter().flat_map(|c| c.values().copied()).collect();
        GridQuadratic {
            pattern: std::sync::Arc::new(crate::linalg::LowerPattern::from_columns(columns)),
            values,
            b: (0..n).map(|v| (v as f64 * 0.37).sin()).collect(),
        }
    }

    impl Objective for GridQuadratic {
        fn size(&self) -> usize {
            self.b.len()
        }
        fn value(&self, u: &[f64]) -> f64 {
            let mut au = vec![0.0; u.len()];
            self.pattern.symmetric_multiply(&self.values, u, &mut au);
            u.iter()
                .zip(&au)
                .zip(&self.b)
                .map(|((u, a), b)| 0.5 * u * a - b * u)
                .sum()
        }
        fn gradient(&self, u: &[f64], gradient: &mut [f64]) -> Result<f64> {
            self.pattern.symmetric_multiply(&self.values, u, gradient);
            gradient.iter_mut().zip(&self.b).for_each(|(g, b)| *g -= b);
            Ok(self.value(u))
        }
        fn hessian(&self, u: &[f64], gradient: &mut [f64], hessian: &mut SystemMatrix) -> Result<f64> {
            *hessian = self.quasi_newton_matrix()?.matrix;
            self.gradient(u, gradient)
        }
        fn hessian_matrix(&self) -> SystemMatrix {
            SystemMatrix::zeros_on(self.pattern.clone())
        }
        fn length_scale(&self) -> f64 {
            1.0
        }
        fn quasi_newton_key(&self) -> Option<u64> {
            Some(7)
        }
        fn quasi_newton_matrix(&self) -> Result<QuasiNewtonMatrix> {
            Ok(QuasiNewtonMatrix {
                matrix: SystemMatrix::Sparse {
                    pattern: self.pattern.clone(),
                    values: self.values.clone(),
                    low_rank: None,
                },
                coordinates: 1,
            })
        }
    }

    fn local_global(iterations: usize) -> Lbfgs {
        Lbfgs::local_global(SolverSettings {
            kind: "local_global".to_string(),
            iterations: Some(iterations),
            trace: true,
            ..SolverSettings::default()
        })
    }

    /// Local/global solves with its factor rounded to single precision while
    /// that keeps the decrease: on a well-conditioned matrix it stays rounded
    /// and still lands on the minimum to single-precision accuracy in one
    /// step, and the next step refines it.
    #[test]
    fn local_global_keeps_a_rounded_factor_that_decreases() {
        let problem = grid_quadratic(14, 1.0, 1.0);
        let mut minimizer = local_global(2);
        let mut u = vec![0.0; problem.size()];
        minimizer.minimize(&problem, &mut u).unwrap();
        assert!(minimizer.rounded, "a well-conditioned matrix keeps its rounded factor");
        let mut gradient = vec![0.0; u.len()];
        problem.gradient(&u, &mut gradient).unwrap();
        let residual = gradient.iter().fold(0.0f64, |m, g| m.max(g.abs()));
        assert!(residual < 1e-10, "two steps reach the minimum: residual {residual:e}");
    }

    /// Where the rounded factor loses the decrease the exact one guarantees
    /// (A's condition ~4e10, beyond single precision), the step is taken
    /// again with the factor as computed, so Φ goes down at every
    /// iteration; that matrix keeps the exact factor from then on.
    #[test]
    fn local_global_falls_back_to_the_exact_factor_when_rounding_loses_the_decrease() {
        let problem = grid_quadratic(14, 1e7, 1e-3);
        let mut minimizer = local_global(3);
        let report = minimizer.minimize(&problem, &mut vec![0.0; problem.size()]).unwrap();
        assert!(!minimizer.rounded, "the rounded factor was dropped");
        assert_eq!(minimizer.needs_exact, [7]);
        let values: Vec<f64> = report.trace.iter().map(|point| point.value).collect();
        assert_eq!(values.len(), 4, "{values:?}");
        assert!(
            values.windows(2).all(|pair| pair[1] < pair[0]),
            "Φ falls at every iteration: {values:?}"
        );
        let mut exact = local_global(1);
        exact.needs_exact.push_back(7);
        let report = exact.minimize(&problem, &mut vec![0.0; problem.size()]).unwrap();
        assert!(!exact.rounded);
        // The exact factor's one step goes far below the rounded factor's.
        let exact_step = report.trace[1].value;
        assert!(
            values[1] - exact_step > 1e-6 * exact_step.abs(),
            "{exact_step} {values:?}"
        );
    }

    /// L-BFGS rounds its factor with a line search, which keeps every step a
    /// descent; without one it has no guarantee to check and keeps it exact.
    #[test]
    fn lbfgs_rounds_its_factor_only_with_a_line_search() {
        let problem = grid_quadratic(14, 1.0, 1.0);
        for line_search in [true, false] {
            let mut minimizer = Lbfgs::new(
                settings(Some(2)),
                LbfgsSettings {
                    line_search,
                    ..LbfgsSettings::default()
                },
            );
            minimizer.minimize(&problem, &mut vec![0.0; problem.size()]).unwrap();
            assert_eq!(minimizer.rounded, line_search, "line search {line_search}");
        }
    }
}
