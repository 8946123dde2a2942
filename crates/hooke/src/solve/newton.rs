//! Newton's method with a backtracking (Armijo) line search.

use super::line_search::backtrack;
use super::{Minimizer, MinimizerReport, Objective, SolverSettings};
use crate::error::{HookeError, Result};
use crate::linalg::{FactorizationOutcome, IndefiniteSystem, SystemSolver};
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
        for iteration in 1..=settings.max_iterations {
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
            let shifted = matches!(
                self.solver.factorize(&hessian, IndefiniteSystem::Shift)?,
                FactorizationOutcome::Shifted { .. }
            );
            if shifted {
                report.shifted_factorizations += 1;
            }
            let mut direction: Vec<f64> = gradient.iter().map(|g| -g).collect();
            self.solver.solve_in_place(&mut direction)?;
            report.solve_seconds += started.elapsed().as_secs_f64();
            report.increment = objective.increment_size(&direction);
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
        }
        Err(HookeError::Solver {
            reason: format!(
                "Newton did not converge in {} iterations (residual {:.3e}, last increment {:.3e}, tolerance {:.3e})",
                settings.max_iterations, report.residual, report.increment, threshold
            ),
        })
    }
}
