//! Newton's method with a backtracking (Armijo) line search.

use super::entry::{MinimizerCapabilities, MinimizerEntry, SettingKey};
use super::line_search::{backtrack, feasible_bound, small_against_gaps};
use super::minimizer::Tracer;
use super::settings::MinimizerSettings;
use super::{Minimizer, MinimizerReport, Objective, SolverSettings, Stagnation};
use crate::error::{HookeError, Result};
use crate::linalg::{conjugate_gradient, FactorizationOutcome, IndefiniteSystem, Jacobi, SystemSolver};
use web_time::Instant;

/// Newton's own `[solver]` keys.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct NewtonSettings {
    /// Backtrack along the Newton direction until Φ decreases enough (off:
    /// full steps, cut only by the feasible step bound).
    pub line_search: bool,
    /// Solve each Newton system by this many Jacobi-preconditioned conjugate
    /// gradient iterations instead of a factorisation (inexact Newton; Liu
    /// 2018 thesis, Fig. 7.7). None: a direct solve.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cg_iterations: Option<usize>,
}

impl Default for NewtonSettings {
    fn default() -> Self {
        NewtonSettings {
            line_search: true,
            cg_iterations: None,
        }
    }
}

impl MinimizerSettings for NewtonSettings {
    const NAME: &'static str = "newton";
}

fn build(settings: &SolverSettings) -> Result<Box<dyn Minimizer>> {
    let own: NewtonSettings = settings.own_settings("solver")?;
    if own.cg_iterations == Some(0) {
        return Err(HookeError::scene("solver.cg_iterations", "must be at least 1"));
    }
    Ok(Box::new(Newton::new(settings.clone(), own)))
}

pub(crate) const ENTRY: MinimizerEntry = MinimizerEntry {
    name: "newton",
    aliases: &[],
    summary: "Newton's method with a backtracking line search: the Hessian assembled and factorised every iteration, quadratic convergence",
    keys: &[
        SettingKey {
            name: "line_search",
            default: "true",
            meaning: "backtrack until Φ decreases enough (Armijo); off: full steps",
        },
        SettingKey {
            name: "cg_iterations",
            default: "",
            meaning: "solve each system by this many Jacobi-preconditioned CG iterations instead of a factorisation",
        },
    ],
    capabilities: MinimizerCapabilities {
        hessian: true,
        constant_matrix: false,
        projective_energies_only: false,
    },
    default_iteration_limit: 50,
    build,
};

/// Newton's method; keeps its factorisation's symbolic analysis between calls
/// while the Hessian's pattern stays the same.
pub struct Newton {
    settings: SolverSettings,
    own: NewtonSettings,
    solver: SystemSolver,
}

impl Newton {
    /// Newton with the shared `[solver]` settings and its own.
    pub fn new(settings: SolverSettings, own: NewtonSettings) -> Newton {
        Newton {
            settings,
            own,
            solver: SystemSolver::new(),
        }
    }
}

/// A CG solve whose residual is at most this fraction of the right-hand side
/// counts as exact for the convergence test: the step it gives is then
/// within that fraction, times the preconditioned condition number, of the
/// exact step. A truncated solve above it never ends the iteration by its size.
pub(super) const SOLVED_BY_CG: f64 = 1e-6;

/// A failed line search's reason, with where it happened: the minimiser's
/// direction, the iteration and the residual there.
pub(super) fn line_search_failed(error: HookeError, direction: &str, iteration: usize, residual: f64) -> HookeError {
    let reason = match error {
        HookeError::Solver { reason } => reason,
        other => other.to_string(),
    };
    HookeError::Solver {
        reason: format!("{reason} ({direction} direction, iteration {iteration}, residual {residual:.3e})"),
    }
}

/// Iterations over which the increment must at least halve: when it does not,
/// the iteration has stalled at the level rounding sets.
const STALL_WINDOW: usize = 8;

/// An increment below this fraction of the body's size is at a level where a
/// stall is rounding (of the gradient, the factorisation and x itself, about
/// √ε amplified by the conditioning), not a failure to converge.
pub(super) const ROUND_OFF_LEVEL: f64 = 1e-8;

/// Whether the last [`STALL_WINDOW`] increments failed to halve the smallest
/// increment seen before them.
pub(super) fn stalled(increments: &[f64]) -> bool {
    stalled_over(increments, STALL_WINDOW, 0.5)
}

/// Whether none of the last `window` increments is below `factor` times the
/// smallest before them. A quadratically convergent method halves its
/// increment every iteration (window 8, factor ½); a linearly convergent one
/// may shrink it by a fraction of a percent per iteration, and has stalled only
/// when it makes no new smallest increment at all (a long window, factor 1).
pub(super) fn stalled_over(increments: &[f64], window: usize, factor: f64) -> bool {
    if increments.len() <= window {
        return false;
    }
    let (before, last) = increments.split_at(increments.len() - window);
    let best_before = before.iter().copied().fold(f64::INFINITY, f64::min);
    last.iter().all(|&d| d >= factor * best_before)
}

impl Minimizer for Newton {
    fn iterations_are(&self) -> &'static str {
        "Newton iterations"
    }

    fn name(&self) -> &'static str {
        "newton"
    }

    fn minimize(&mut self, objective: &dyn Objective, x: &mut [f64]) -> Result<MinimizerReport> {
        let settings = &self.settings;
        let mut report = MinimizerReport::default();
        let threshold = settings.increment_threshold(objective);
        let mut hessian = objective.hessian_matrix();
        let mut gradient = vec![0.0; objective.size()];
        let mut increments = Vec::new();
        let mut tracer = Tracer::new(settings.trace);
        tracer.record(&mut report, objective, x, None);
        let limit = settings.iteration_limit();
        for iteration in 1..=limit {
            report.iterations = iteration;
            let started = Instant::now();
            let value = objective.hessian(x, &mut gradient, &mut hessian)?;
            report.assembly_seconds += started.elapsed().as_secs_f64();
            report.residual = gradient.iter().fold(0.0, |m: f64, g| m.max(g.abs()));
            if report.residual == 0.0 {
                report.increment = 0.0;
                return Ok(report);
            }

            let started = Instant::now();
            let mut direction: Vec<f64> = gradient.iter().map(|g| -g).collect();
            // Whether the direction is not the Newton step itself (a shifted
            // matrix's, or a truncated CG solve's): its size then says nothing
            // of convergence.
            let shifted = match self.own.cg_iterations {
                Some(iterations) => {
                    // Inexact Newton (Liu 2018 thesis, Fig. 7.7): Jacobi-preconditioned CG.
                    let jacobi = Jacobi::new(&hessian.diagonal());
                    let solution =
                        conjugate_gradient(&|v, out| hessian.multiply(v, out), &jacobi, &direction, iterations);
                    direction = solution.x;
                    solution.relative_residual > SOLVED_BY_CG
                }
                None => {
                    let shifted = matches!(
                        self.solver.factorize(&hessian, IndefiniteSystem::Shift)?,
                        FactorizationOutcome::Shifted { .. }
                    );
                    report.factorizations += 1;
                    if shifted {
                        report.shifted_factorizations += 1;
                    }
                    self.solver.solve_in_place(&mut direction)?;
                    shifted
                }
            };
            report.solve_seconds += started.elapsed().as_secs_f64();
            report.increment = objective.increment_size(&direction);
            report.relative_increment = report.increment / objective.length_scale();
            if !report.increment.is_finite() {
                return Err(HookeError::LinearSolver {
                    reason: "the Newton direction is not finite".to_string(),
                });
            }

            let bound = feasible_bound(objective, x, &direction)?;
            // Converged when the full Newton increment (not a step the line search
            // shortened, nor one from a shifted matrix) is below the tolerance. It is
            // applied whole: near the minimum Φ cannot resolve a decrease of its size.
            // A step the feasible bound cuts is not the minimiser's: iterate on. Nor
            // is one large against the closest contact's gap (see GAP_FRACTION).
            if !shifted
                && report.increment <= threshold
                && bound == 1.0
                && small_against_gaps(objective, x, report.increment)
            {
                x.iter_mut().zip(&direction).for_each(|(a, d)| *a += d);
                tracer.record(&mut report, objective, x, None);
                return Ok(report);
            }
            // Stalled at rounding level above the tolerance: more iterations (or a
            // smaller step) cannot help. Stop, and say so.
            increments.push(report.relative_increment);
            if !shifted && bound == 1.0 && report.relative_increment <= ROUND_OFF_LEVEL && stalled(&increments) {
                if settings.stagnation == Stagnation::Fail {
                    return Err(HookeError::Solver {
                        reason: format!(
                            "Newton stalled at increment {:.3e} of the body's size, above the tolerance {:.3e}: rounding limits this problem's accuracy ([solver] stagnation = \"fail\")",
                            report.relative_increment, settings.tolerance
                        ),
                    });
                }
                x.iter_mut().zip(&direction).for_each(|(a, d)| *a += d);
                report.short_of_tolerance = true;
                tracer.record(&mut report, objective, x, None);
                return Ok(report);
            }

            let mut step = bound;
            if bound < 1.0 {
                report.bounded_steps += 1;
            }
            if self.own.line_search {
                let slope: f64 = gradient.iter().zip(&direction).map(|(g, d)| g * d).sum();
                let search = backtrack(objective, x, &direction, value, slope)
                    .map_err(|error| line_search_failed(error, "Newton", iteration, report.residual))?;
                step = search.step;
                report.line_search_reductions += search.halvings;
            }
            x.iter_mut().zip(&direction).for_each(|(a, d)| *a += step * d);
            tracer.record(&mut report, objective, x, None);
            // A fixed budget (real-time use) ends here, converged or not.
            if settings.iterations == Some(iteration) {
                return Ok(report);
            }
        }
        Err(HookeError::Solver {
            reason: format!(
                "Newton did not converge in {limit} iterations (residual {:.3e}, last increment {:.3e}, tolerance {:.3e})",
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

    /// Φ(u) = ½ uᵀA u − bᵀu, whose gradient carries a deterministic "rounding"
    /// error of size `noise` (a hash of u's bits): below that level the
    /// gradient, and so the Newton increment, is noise.
    struct NoisyQuadratic {
        a: DMatrix<f64>,
        b: DVector<f64>,
        noise: f64,
    }

    impl NoisyQuadratic {
        fn new(noise: f64) -> Self {
            let a = DMatrix::from_fn(4, 4, |i, j| if i == j { 4.0 + i as f64 } else { 0.5 });
            NoisyQuadratic {
                a,
                b: DVector::from_vec(vec![1.0, -2.0, 0.5, 3.0]),
                noise,
            }
        }

        fn jitter(&self, u: &[f64], i: usize) -> f64 {
            let bits = u.iter().fold(i as u64 + 1, |h, x| {
                (h ^ x.to_bits()).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            });
            self.noise * ((bits >> 11) as f64 / (1u64 << 53) as f64 - 0.5)
        }
    }

    impl Objective for NoisyQuadratic {
        fn size(&self) -> usize {
            4
        }
        fn value(&self, u: &[f64]) -> f64 {
            let u = DVector::from_column_slice(u);
            0.5 * u.dot(&(&self.a * &u)) - self.b.dot(&u)
        }
        fn gradient(&self, u: &[f64], gradient: &mut [f64]) -> Result<f64> {
            let g = &self.a * DVector::from_column_slice(u) - &self.b;
            for (i, out) in gradient.iter_mut().enumerate() {
                *out = g[i] + self.jitter(u, i);
            }
            Ok(self.value(u))
        }
        fn hessian(&self, u: &[f64], gradient: &mut [f64], hessian: &mut SystemMatrix) -> Result<f64> {
            *hessian = SystemMatrix::Dense(self.a.clone());
            self.gradient(u, gradient)
        }
        fn hessian_matrix(&self) -> SystemMatrix {
            SystemMatrix::Dense(DMatrix::zeros(4, 4))
        }
        fn length_scale(&self) -> f64 {
            1.0
        }
    }

    fn settings(tolerance: f64, stagnation: Stagnation) -> SolverSettings {
        SolverSettings {
            tolerance,
            stagnation,
            ..SolverSettings::default()
        }
    }

    /// A loose tolerance (1 cm on a gap of 0.1 mm) must not end on a step
    /// that moves the contact by more than a tenth of its gap: over steps that
    /// closes gaps to zero (the gripper scene did, at tolerance 1e-4).
    #[test]
    fn a_loose_tolerance_still_ends_close_against_the_contact_gap() {
        use crate::solve::test_objectives::PressedOnWall;
        for (kappa, start) in [(1e3, 0.9e-3), (1e3, 1e-6), (1e5, 0.5e-3), (10.0, 1e-5)] {
            let wall = PressedOnWall::with_stiffness(kappa);
            let minimum = wall.minimum();
            let mut x = vec![start];
            let report = Newton::new(settings(1e-2, Stagnation::Report), NewtonSettings::default())
                .minimize(&wall, &mut x)
                .unwrap();
            assert!(
                (x[0] - minimum).abs() <= 0.2 * minimum,
                "κ {kappa}, from {start}: ended at {} against the minimum {minimum} ({report:?})",
                x[0]
            );
        }
    }

    #[test]
    fn reaches_a_tolerance_above_the_noise_in_few_iterations() {
        let mut x = vec![0.0; 4];
        let report = Newton::new(settings(1e-8, Stagnation::Report), NewtonSettings::default())
            .minimize(&NoisyQuadratic::new(1e-12), &mut x)
            .unwrap();
        assert!(!report.short_of_tolerance && report.iterations <= 3, "{report:?}");
        assert!(report.relative_increment <= 1e-8);
    }

    #[test]
    fn a_tolerance_below_the_noise_stops_short_and_says_so() {
        let objective = NoisyQuadratic::new(1e-10);
        let mut x = vec![0.0; 4];
        let report = Newton::new(settings(1e-14, Stagnation::Report), NewtonSettings::default())
            .minimize(&objective, &mut x)
            .unwrap();
        assert!(report.short_of_tolerance, "{report:?}");
        assert!(
            report.relative_increment > 1e-14 && report.relative_increment < 1e-9,
            "{report:?}"
        );
        assert!(
            report.iterations < 50,
            "stopped by the stall test, not the iteration cap: {report:?}"
        );
        // The result is as accurate as the noise allows.
        let exact = objective.a.clone().lu().solve(&objective.b).unwrap();
        let error = (DVector::from_vec(x) - exact).amax();
        assert!(error < 1e-9, "error {error}");

        let mut x = vec![0.0; 4];
        let error = Newton::new(settings(1e-14, Stagnation::Fail), NewtonSettings::default())
            .minimize(&objective, &mut x)
            .unwrap_err();
        assert!(matches!(error, HookeError::Solver { .. }), "{error}");
        assert!(error.to_string().contains("stalled"), "{error}");
    }

    #[test]
    fn slow_but_steady_progress_is_not_a_stall() {
        // Halving at least every 8 iterations, never stalled.
        let increments: Vec<f64> = (0..40).map(|k| 1e-9 * 0.9f64.powi(k)).collect();
        for end in 1..=increments.len() {
            assert!(!stalled(&increments[..end]), "flagged after {end}");
        }
        let mut flat = increments[..10].to_vec();
        flat.extend([flat[9] * 0.8; STALL_WINDOW]);
        assert!(stalled(&flat));
    }
}
