//! Newton's method with a backtracking (Armijo) line search on an incremental potential.

use super::{FreeSystem, IncrementalPotential};
use crate::error::{HookeError, Result};
use crate::linalg::FactorizationOutcome;
use std::time::Instant;

/// Newton settings shared by every Newton-based step.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct NewtonSettings {
    /// Converged when the Newton increment ‖Δx‖∞ is below this fraction of the body's size.
    pub tolerance: f64,
    pub max_iterations: usize,
    /// Project each element's ∂P/∂F to positive semi-definite, so that the system is SPD.
    pub project_hessian: bool,
    /// Backtrack along the Newton direction until the potential decreases enough.
    pub line_search: bool,
    /// When Newton fails, split the step in two, recursively, at most this deep
    /// (2^depth sub-steps; seed 000 §2.4). 0 turns continuation off.
    pub max_step_halvings: usize,
}

impl Default for NewtonSettings {
    fn default() -> Self {
        NewtonSettings {
            tolerance: 1e-8,
            max_iterations: 50,
            project_hessian: true,
            line_search: true,
            max_step_halvings: 4,
        }
    }
}

impl NewtonSettings {
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
        if self.max_iterations == 0 {
            return Err(HookeError::scene(format!("{key}.max_iterations"), "must be at least 1"));
        }
        Ok(())
    }
}

/// What a Newton solve did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct NewtonReport {
    pub iterations: usize,
    /// ‖∇Φ‖∞ over the free DOFs where the last iteration started (before its update).
    pub residual: f64,
    /// ‖Δx‖∞ of the last Newton increment.
    pub increment: f64,
    /// Step-length halvings over all iterations.
    pub line_search_reductions: usize,
    /// Factorisations that needed a diagonal shift (indefinite Hessian without projection).
    pub shifted_factorizations: usize,
    pub assembly_seconds: f64,
    pub solve_seconds: f64,
}

/// Armijo sufficient-decrease constant.
const ARMIJO: f64 = 1e-4;
/// At most this many halvings (a step of 2⁻⁴⁰ of Newton's is no progress).
const MAX_HALVINGS: usize = 40;

/// Minimises Φ over the free values `x`, in place.
pub fn minimize(
    potential: &IncrementalPotential,
    x: &mut [f64],
    system: &mut FreeSystem,
    settings: &NewtonSettings,
    length_scale: f64,
) -> Result<NewtonReport> {
    let mut report = NewtonReport::default();
    let threshold = settings.tolerance * length_scale;
    for iteration in 1..=settings.max_iterations {
        report.iterations = iteration;
        let started = Instant::now();
        let (value, gradient) = potential.evaluate(x, Some(system))?;
        report.assembly_seconds += started.elapsed().as_secs_f64();
        report.residual = gradient.iter().fold(0.0, |m: f64, g| m.max(g.abs()));
        if report.residual == 0.0 {
            report.increment = 0.0;
            return Ok(report);
        }

        let started = Instant::now();
        let shifted = matches!(system.factorize()?, FactorizationOutcome::Shifted { .. });
        if shifted {
            report.shifted_factorizations += 1;
        }
        let mut direction: Vec<f64> = gradient.iter().map(|g| -g).collect();
        system.solve_in_place(&mut direction)?;
        report.solve_seconds += started.elapsed().as_secs_f64();
        report.increment = direction.iter().fold(0.0, |m: f64, d| m.max(d.abs()));
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

        let slope: f64 = gradient.iter().zip(&direction).map(|(g, d)| g * d).sum();
        let mut step = 1.0;
        if settings.line_search {
            // Round-off allowance: near the minimum Φ differences drown in rounding of Φ itself.
            let noise = 1e-12 * value.abs();
            let mut halvings = 0;
            loop {
                let trial: Vec<f64> = x.iter().zip(&direction).map(|(a, d)| a + step * d).collect();
                let trial_value = potential.value(&trial);
                if trial_value <= value + ARMIJO * step * slope + noise {
                    break;
                }
                halvings += 1;
                if halvings > MAX_HALVINGS {
                    return Err(HookeError::Solver {
                        reason: format!(
                            "line search found no decrease along the Newton direction (iteration {iteration}, residual {:.3e})",
                            report.residual
                        ),
                    });
                }
                step *= 0.5;
            }
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
