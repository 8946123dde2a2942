//! Backtracking line search with the Armijo sufficient-decrease condition,
//! shared by the minimisers. Every search starts from the objective's
//! feasible step bound, so no trial leaves the admissible set.

use super::Objective;
use crate::error::{HookeError, Result};

/// Armijo sufficient-decrease constant.
const ARMIJO: f64 = 1e-4;
/// At most this many halvings (a step of 2⁻⁴⁰ of the first is no progress).
const MAX_HALVINGS: usize = 40;
/// Relative differences of Φ below this are rounding, not decrease: Φ sums
/// many terms of either sign, so its rounding is well above machine epsilon.
const ROUNDING: f64 = 1e-10;

/// What a line search found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LineSearch {
    /// The accepted step length α.
    pub step: f64,
    /// Halvings from the first trial to α.
    pub halvings: usize,
    /// Whether the first trial was the feasible step bound, below 1.
    pub bounded: bool,
}

/// The step length α along `direction` from `u` (where Φ = `value` and the
/// directional derivative is `slope` < 0): the feasible step bound α₀ ≤ 1
/// ([`Objective::feasible_step`]), halved until Φ(u + α d) ≤ Φ(u) + c α slope.
///
/// Near a minimum the decrease a step makes can fall below the rounding of Φ
/// itself, and comparing values then says nothing. When the values differ by
/// less than that rounding, the decrease is measured from slopes instead
/// (Hager and Zhang's approximate Armijo test): the trapezoid
/// ½ α (Φ'(0) + Φ'(α)) of the change must pass the same test, which holds
/// when Φ'(α) ≤ (2c − 1) Φ'(0).
pub fn backtrack(
    objective: &dyn Objective,
    u: &[f64],
    direction: &[f64],
    value: f64,
    slope: f64,
) -> Result<LineSearch> {
    backtrack_with(objective, u, direction, value, slope, ARMIJO)
}

/// [`backtrack`] with another sufficient-decrease constant c ∈ (0, ½).
pub fn backtrack_with(
    objective: &dyn Objective,
    u: &[f64],
    direction: &[f64],
    value: f64,
    slope: f64,
    armijo: f64,
) -> Result<LineSearch> {
    let mut trial_gradient = Vec::new();
    halve_until(objective, u, direction, |trial, step| {
        let trial_value = objective.value(trial);
        let trial_slope = || {
            trial_gradient.resize(u.len(), 0.0);
            objective.gradient(trial, &mut trial_gradient)?;
            Ok(dot(&trial_gradient, direction))
        };
        accepts(value, slope, armijo, step, trial_value, trial_slope)
    })
}

/// [`backtrack_with`] for minimisers that need the gradient where they step:
/// each trial evaluates Φ and ∇Φ together (one pass over the elements, not
/// two), and the accepted point's gradient is left in `gradient`. A trial
/// where Φ is undefined (+∞, or an error naming an inverted element) is too
/// far. Returns the search and Φ(u + α d).
pub fn backtrack_with_gradient(
    objective: &dyn Objective,
    u: &[f64],
    direction: &[f64],
    value: f64,
    slope: f64,
    armijo: f64,
    gradient: &mut [f64],
) -> Result<(LineSearch, f64)> {
    let mut accepted_value = f64::NAN;
    let search = halve_until(objective, u, direction, |trial, step| {
        let trial_value = objective.gradient(trial, gradient).unwrap_or(f64::INFINITY);
        accepted_value = trial_value;
        let trial_slope = dot(gradient, direction);
        accepts(value, slope, armijo, step, trial_value, || Ok(trial_slope))
    })?;
    Ok((search, accepted_value))
}

/// The feasible step bound along `direction`, checked to lie in [0, 1].
pub(crate) fn feasible_bound(objective: &dyn Objective, u: &[f64], direction: &[f64]) -> Result<f64> {
    let bound = objective.feasible_step(u, direction)?;
    if !(0.0..=1.0).contains(&bound) {
        return Err(HookeError::Solver {
            reason: format!("the objective's feasible step bound must lie in [0, 1], got {bound}"),
        });
    }
    Ok(bound)
}

/// The largest increment a converged step may make against the smallest
/// contact distance: a tenth of it, the margin additive CCD keeps too, so a
/// converged step closes at most a fifth of any gap (both sides move).
pub const GAP_FRACTION: f64 = 0.1;

/// Whether an increment of size `increment` (in length units) from `u` is
/// small against the objective's smallest contact distance
/// ([`Objective::contact_gap`]), as a converged step must be. Asked only
/// when every other convergence test has passed: it may run a broad phase.
pub(crate) fn small_against_gaps(objective: &dyn Objective, u: &[f64], increment: f64) -> bool {
    objective
        .contact_gap(u)
        .is_none_or(|gap| increment <= GAP_FRACTION * gap)
}

/// Tries α = α₀, α₀/2, α₀/4, … from the feasible step bound α₀ until
/// `accept(u + α d, α)` holds.
fn halve_until(
    objective: &dyn Objective,
    u: &[f64],
    direction: &[f64],
    mut accept: impl FnMut(&[f64], f64) -> Result<bool>,
) -> Result<LineSearch> {
    let bound = feasible_bound(objective, u, direction)?;
    if bound == 0.0 {
        return Err(HookeError::Solver {
            reason: "the feasible step bound admits no step along the search direction (the state is on the boundary of the admissible set, moving out)".to_string(),
        });
    }
    let mut step = bound;
    for halvings in 0..=MAX_HALVINGS {
        let trial: Vec<f64> = u.iter().zip(direction).map(|(a, d)| a + step * d).collect();
        if accept(&trial, step)? {
            return Ok(LineSearch {
                step,
                halvings,
                bounded: bound < 1.0,
            });
        }
        step *= 0.5;
    }
    Err(no_decrease())
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn no_decrease() -> HookeError {
    HookeError::Solver {
        reason: format!("line search found no decrease along the search direction in {MAX_HALVINGS} halvings"),
    }
}

/// The sufficient-decrease test of a trial at step α, from values, or, where
/// they differ by less than their rounding, from the slope there (asked for
/// only then).
fn accepts(
    value: f64,
    slope: f64,
    armijo: f64,
    step: f64,
    trial_value: f64,
    trial_slope: impl FnOnce() -> Result<f64>,
) -> Result<bool> {
    if trial_value <= value + armijo * step * slope {
        return Ok(true);
    }
    let within_rounding = trial_value - value <= ROUNDING * value.abs().max(trial_value.abs());
    if trial_value.is_finite() && within_rounding {
        return Ok(trial_slope()? <= (2.0 * armijo - 1.0) * slope);
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::SystemMatrix;

    /// Φ(u) = 1 + ½ u² with a deterministic ripple of 1e-11 in its value (its
    /// rounding) and an exact gradient u.
    struct RippledParabola;

    impl Objective for RippledParabola {
        fn size(&self) -> usize {
            1
        }
        fn value(&self, u: &[f64]) -> f64 {
            1.0 + 0.5 * u[0] * u[0] + 1e-11 * (1e9 * u[0] + 1.0).sin()
        }
        fn gradient(&self, u: &[f64], gradient: &mut [f64]) -> Result<f64> {
            gradient[0] = u[0];
            Ok(self.value(u))
        }
        fn hessian(&self, u: &[f64], gradient: &mut [f64], _: &mut SystemMatrix) -> Result<f64> {
            self.gradient(u, gradient)
        }
        fn hessian_matrix(&self) -> SystemMatrix {
            SystemMatrix::Dense(nalgebra::DMatrix::zeros(1, 1))
        }
        fn length_scale(&self) -> f64 {
            1.0
        }
    }

    /// Below the rounding of Φ the slopes decide: the exact step to the
    /// minimum is taken and an overshoot to the far side is halved back,
    /// though the rippled values rise along both (values alone would refuse them).
    #[test]
    fn below_the_rounding_the_slopes_decide() {
        let u = [1e-7];
        let slope = |d: f64| u[0] * d;
        // The ripple (1e-11) drowns the decrease (5e-15): values alone refuse some of these.
        let search = backtrack(&RippledParabola, &u, &[-1e-7], RippledParabola.value(&u), slope(-1e-7)).unwrap();
        assert_eq!((search.step, search.halvings), (1.0, 0));
        // To −2e-7 the slope is uphill; half way, at −0.5e-7, it passes.
        let search = backtrack(&RippledParabola, &u, &[-3e-7], RippledParabola.value(&u), slope(-3e-7)).unwrap();
        assert_eq!((search.step, search.halvings), (0.5, 1));
    }
}
