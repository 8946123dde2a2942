//! Backtracking line search with the Armijo sufficient-decrease condition,
//! shared by the minimisers.

use super::Objective;
use crate::error::{HookeError, Result};

/// Armijo sufficient-decrease constant.
const ARMIJO: f64 = 1e-4;
/// At most this many halvings (a step of 2⁻⁴⁰ of the first is no progress).
const MAX_HALVINGS: usize = 40;

/// The step length α along `direction` from `u` (where Φ = `value` and the
/// directional derivative is `slope` < 0): 1, halved until
/// Φ(u + α d) ≤ Φ(u) + c α slope. Returns (α, halvings).
pub fn backtrack(
    objective: &dyn Objective,
    u: &[f64],
    direction: &[f64],
    value: f64,
    slope: f64,
) -> Result<(f64, usize)> {
    // Round-off allowance: near the minimum Φ differences drown in rounding of Φ itself.
    let noise = 1e-12 * value.abs();
    let mut step = 1.0;
    for halvings in 0..=MAX_HALVINGS {
        let trial: Vec<f64> = u.iter().zip(direction).map(|(a, d)| a + step * d).collect();
        if objective.value(&trial) <= value + ARMIJO * step * slope + noise {
            return Ok((step, halvings));
        }
        step *= 0.5;
    }
    Err(HookeError::Solver {
        reason: format!("line search found no decrease along the search direction in {MAX_HALVINGS} halvings"),
    })
}
