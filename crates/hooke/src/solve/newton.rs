//! Newton's method with a backtracking (Armijo) line search.

use super::line_search::backtrack;
use super::minimizer::Tracer;
use super::{Minimizer, MinimizerReport, Objective, SolverSettings, Stagnation};
use crate::error::{HookeError, Result};
use crate::linalg::{conjugate_gradient, FactorizationOutcome, IndefiniteSystem, Jacobi, SystemSolver};
use std::time::Instant;

/// Newton's method; keeps its factorisation's symbolic analysis between calls
/// while the Hessian's pattern stays the same.
pub struct Newton {
    settings: SolverSettings,
    solver: SystemSolver,
}

impl Newton {
    pub fn new(settings: SolverSettings) -> Newton {
        Newton {
            settings,
            solver: SystemSolver::new(),
        }
    }
}

/// A CG solve whose residual is at most this fraction of the right-hand side
/// counts as exact for the convergence test: the step it gives is then
/// within that fraction, times the preconditioned condition number, of the
/// exact step. A truncated solve above it never ends the iteration by its size.
pub(super) const SOLVED_BY_CG: f64 = 1e-6;

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
    fn name(&self) -> &'static str {
        "newton"
    }

    fn minimize(&mut self, objective: &dyn Objective, x: &mut [f64]) -> Result<MinimizerReport> {
        let settings = &self.settings;
        let mut report = MinimizerReport::default();
        let threshold = settings.tolerance * objective.length_scale();
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
            let shifted = match settings.cg_iterations {
                Some(iterations) => {
                    // Inexact Newton (seed 004 Fig. 7.7): Jacobi-preconditioned CG.
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

            // Converged when the full Newton increment (not a step the line search
            // shortened, nor one from a shifted matrix) is below the tolerance. It is
            // applied whole: near the minimum Φ cannot resolve a decrease of its size.
            if !shifted && report.increment <= threshold {
                x.iter_mut().zip(&direction).for_each(|(a, d)| *a += d);
                tracer.record(&mut report, objective, x, None);
                return Ok(report);
            }
            // Stalled at rounding level above the tolerance: more iterations (or a
            // smaller step) cannot help. Stop, and say so.
            increments.push(report.relative_increment);
            if !shifted && report.relative_increment <= ROUND_OFF_LEVEL && stalled(&increments) {
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

            let mut step = 1.0;
            if settings.line_search {
                let slope: f64 = gradient.iter().zip(&direction).map(|(g, d)| g * d).sum();
                let (length, halvings) = backtrack(objective, x, &direction, value, slope).map_err(|_| {
                    HookeError::Solver {
                        reason: format!(
                            "line search found no decrease along the Newton direction (iteration {iteration}, residual {:.3e})",
                            report.residual
                        ),
                    }
                })?;
                step = length;
                report.line_search_reductions += halvings;
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

    #[test]
    fn reaches_a_tolerance_above_the_noise_in_few_iterations() {
        let mut x = vec![0.0; 4];
        let report = Newton::new(settings(1e-8, Stagnation::Report))
            .minimize(&NoisyQuadratic::new(1e-12), &mut x)
            .unwrap();
        assert!(!report.short_of_tolerance && report.iterations <= 3, "{report:?}");
        assert!(report.relative_increment <= 1e-8);
    }

    #[test]
    fn a_tolerance_below_the_noise_stops_short_and_says_so() {
        let objective = NoisyQuadratic::new(1e-10);
        let mut x = vec![0.0; 4];
        let report = Newton::new(settings(1e-14, Stagnation::Report))
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
        let error = Newton::new(settings(1e-14, Stagnation::Fail))
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
