//! The barrier of Incremental Potential Contact (Li et al. 2020, §4.1, Eq. 6):
//!
//!   b(d, d̂) = −(d − d̂)² ln(d / d̂)   for 0 < d < d̂,   0 for d ≥ d̂,
//!
//! which is C² at d = d̂ (b, b′ and b″ all reach 0 there) and grows without
//! bound as d → 0⁺, so that a minimiser whose line search keeps d > 0 never
//! lets two primitives meet.
//! Hooke evaluates it on *squared* distances, b(d², d̂²), as the paper's own
//! implementation does: the squared distances of contact/distance.rs are
//! smooth where the distance is not.

/// b(d, d̂): +∞ at d ≤ 0 (a contact, which the line search never accepts), 0
/// from d̂ on.
pub fn barrier(d: f64, dhat: f64) -> f64 {
    if d <= 0.0 {
        return f64::INFINITY;
    }
    if d >= dhat {
        return 0.0;
    }
    -(d - dhat) * (d - dhat) * (d / dhat).ln()
}

/// ∂b/∂d = (d̂ − d) (2 ln(d/d̂) − d̂/d + 1), negative inside the barrier's
/// reach (it pushes the primitives apart), 0 outside it.
pub fn barrier_first_derivative(d: f64, dhat: f64) -> f64 {
    if d <= 0.0 || d >= dhat {
        return 0.0;
    }
    (dhat - d) * (2.0 * (d / dhat).ln() - dhat / d + 1.0)
}

/// ∂²b/∂d² = (d̂/d + 2) d̂/d − 2 ln(d/d̂) − 3, positive inside the reach.
pub fn barrier_second_derivative(d: f64, dhat: f64) -> f64 {
    if d <= 0.0 || d >= dhat {
        return 0.0;
    }
    let ratio = dhat / d;
    (ratio + 2.0) * ratio - 2.0 * (d / dhat).ln() - 3.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivatives_match_central_differences_across_the_reach() {
        let dhat = 1e-3;
        for k in 1..50 {
            let d = dhat * k as f64 / 50.0;
            let h = 1e-7 * d;
            let first = (barrier(d + h, dhat) - barrier(d - h, dhat)) / (2.0 * h);
            let second = (barrier_first_derivative(d + h, dhat) - barrier_first_derivative(d - h, dhat)) / (2.0 * h);
            let scale = barrier_first_derivative(d, dhat).abs().max(1e-12);
            assert!(
                (first - barrier_first_derivative(d, dhat)).abs() < 1e-6 * scale,
                "b' at {d}"
            );
            let scale = barrier_second_derivative(d, dhat).abs().max(1e-9);
            assert!(
                (second - barrier_second_derivative(d, dhat)).abs() < 1e-5 * scale,
                "b'' at {d}"
            );
        }
    }

    #[test]
    fn it_is_twice_continuous_at_the_reach_and_unbounded_at_contact() {
        let dhat = 2.0;
        let inside = dhat * (1.0 - 1e-9);
        assert!(barrier(inside, dhat) < 1e-17);
        assert!(barrier_first_derivative(inside, dhat).abs() < 1e-16);
        assert!(barrier_second_derivative(inside, dhat).abs() < 1e-8);
        assert_eq!(barrier(dhat, dhat), 0.0);
        assert_eq!(barrier(3.0, dhat), 0.0);
        assert_eq!(barrier(0.0, dhat), f64::INFINITY);
        assert!(barrier(1e-300, dhat) > 1e3);
        // Pushing apart (b' < 0), convex (b'' > 0), everywhere inside.
        for k in 1..100 {
            let d = dhat * k as f64 / 100.0;
            assert!(barrier_first_derivative(d, dhat) < 0.0 && barrier_second_derivative(d, dhat) > 0.0);
        }
    }
}
