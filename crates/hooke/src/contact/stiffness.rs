//! The barrier's stiffness κ (Li et al. 2020, §4.3 and the supplement's
//! adaptive rule, as the IPC toolkit computes it): a first κ that balances
//! the barrier's gradient against the rest of the incremental potential's,
//! kept between a floor set by the mass and 100 times it, and doubled when
//! the smallest distance keeps shrinking while it is already tiny.
//!
//! Hooke's incremental potential is the paper's divided by h² (Φ = ‖x − x̃‖²_M
//! / 2h² + E, against the paper's ½‖x − x̃‖²_M + h² E), so the floor uses the
//! mean vertex mass over h² where the paper uses the mass: the same rule in
//! Hooke's units.

use super::barrier::barrier_second_derivative;

/// The floor's scale (the paper's 10¹¹; the toolkit's default).
pub const FLOOR_SCALE: f64 = 1e11;
/// A squared distance below (this × the bounding-box diagonal)² is "tiny"
/// for the doubling rule (the toolkit's 10⁻⁹).
pub const TINY_DISTANCE_SCALE: f64 = 1e-9;

/// The first κ and its ceiling: κ = −∇B·∇E / ‖∇B‖² (E the rest of the
/// potential, B the barrier sum), clamped to [κ_min, 100 κ_min] with
/// κ_min = 10¹¹ m / (4 d₀ b″(d₀)), d₀ = (10⁻⁸ × diagonal)² and m the mean
/// vertex mass (over h² in Hooke's units, see the module's note).
pub fn initial(diagonal: f64, dhat: f64, mass: f64, energy_gradient: &[f64], barrier_gradient: &[f64]) -> (f64, f64) {
    let reach = dhat * dhat;
    let mut d0 = (1e-8 * diagonal).powi(2);
    if d0 >= reach {
        d0 = 0.5 * reach;
    }
    let floor = FLOOR_SCALE * mass / (4.0 * d0 * barrier_second_derivative(d0, reach));
    let ceiling = 100.0 * floor;
    let squared: f64 = barrier_gradient.iter().map(|g| g * g).sum();
    let balanced = match squared > 0.0 {
        true => {
            -barrier_gradient
                .iter()
                .zip(energy_gradient)
                .map(|(b, e)| b * e)
                .sum::<f64>()
                / squared
        }
        false => 1.0,
    };
    (balanced.clamp(floor, ceiling), ceiling)
}

/// κ after a solve: doubled (up to the ceiling) when the smallest squared
/// distance, before and now, is tiny and still shrinking.
pub fn updated(previous_distance: f64, distance: f64, stiffness: f64, ceiling: f64, diagonal: f64) -> f64 {
    let tiny = (TINY_DISTANCE_SCALE * diagonal).powi(2);
    if previous_distance < tiny && distance < tiny && distance < previous_distance {
        return ceiling.min(2.0 * stiffness);
    }
    stiffness
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_stiffness_balances_the_gradients_within_its_bounds() {
        let (diagonal, dhat, mass) = (1.0, 1e-3, 1e-3);
        let (floor, ceiling) = initial(diagonal, dhat, mass, &[0.0], &[0.0]);
        assert!(
            (ceiling / floor - 100.0).abs() < 1e-9,
            "no barrier gradient: κ is the floor"
        );
        // A gradient ratio inside the bounds is taken as it is.
        let wanted = 10.0 * floor;
        let (kappa, _) = initial(diagonal, dhat, mass, &[wanted, 0.0], &[-1.0, 0.0]);
        assert!((kappa - wanted).abs() < 1e-9 * wanted);
        // Gradients that agree (the barrier pushing the way E already goes) give the floor.
        assert_eq!(initial(diagonal, dhat, mass, &[-1.0], &[-1.0]).0, floor);
        assert_eq!(initial(diagonal, dhat, mass, &[1e300], &[-1.0]).0, ceiling);
    }

    #[test]
    fn the_stiffness_doubles_only_while_a_tiny_distance_shrinks() {
        let tiny = (TINY_DISTANCE_SCALE * 2.0).powi(2);
        assert_eq!(updated(0.5 * tiny, 0.25 * tiny, 3.0, 100.0, 2.0), 6.0);
        assert_eq!(updated(0.5 * tiny, 0.25 * tiny, 80.0, 100.0, 2.0), 100.0);
        assert_eq!(updated(0.25 * tiny, 0.5 * tiny, 3.0, 100.0, 2.0), 3.0, "growing");
        assert_eq!(updated(2.0 * tiny, 0.5 * tiny, 3.0, 100.0, 2.0), 3.0, "was not tiny");
    }
}
