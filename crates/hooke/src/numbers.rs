//! Numbers as people read them in messages: a time of 0.6 computed as
//! 0.6000000000000001 prints as 0.6, and −0 prints as 0.

/// `x` rounded to 12 significant digits (far below any tolerance a message
/// reports, far above the rounding of the arithmetic that produced it), with −0
/// made 0. Only for display: never feed the result back into a computation.
pub fn tidy(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return if x == 0.0 { 0.0 } else { x };
    }
    // Decimal rounding through text is exact where scaling by 10^k is not (1e308).
    format!("{x:.11e}").parse().unwrap_or(x)
}

/// `x` as text for people: [`tidy`], then plain digits for magnitudes from
/// 1e-4 to 1e9 and scientific notation outside them (1e-320, not 320 zeros).
pub fn readable(x: f64) -> String {
    let x = tidy(x);
    if x == 0.0 || !x.is_finite() || (1e-4..1e9).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// `x` rounded to `digits` significant digits, as [`readable`] text: for
/// estimates, whose further digits mean nothing.
pub fn significant(x: f64, digits: usize) -> String {
    let rounded = format!("{:.*e}", digits.max(1) - 1, x).parse().unwrap_or(x);
    readable(rounded)
}

#[cfg(test)]
mod tests {
    use super::{readable, significant, tidy};

    #[test]
    fn estimates_keep_their_significant_digits() {
        assert_eq!(significant(0.00209206852189, 3), "0.00209");
        assert_eq!(significant(956.182887468, 3), "956");
        assert_eq!(significant(2.00040012004, 3), "2");
    }

    #[test]
    fn readable_numbers_pick_their_notation() {
        assert_eq!(readable(-0.0), "0");
        assert_eq!(readable(2.3000000000000003), "2.3");
        assert_eq!(readable(1e-320), "1e-320");
        assert_eq!(readable(1.5e12), "1.5e12");
        assert_eq!(readable(-250.0), "-250");
        assert_eq!(readable(1e308), "1e308");
        assert_eq!(readable(1e90 * 1.0000000000000002), "1e90");
        assert_eq!(readable(f64::NAN), "NaN");
    }

    #[test]
    fn drops_rounding_noise_and_negative_zero() {
        assert_eq!(tidy(0.6000000000000001).to_string(), "0.6");
        assert_eq!(tidy(2.3000000000000003).to_string(), "2.3");
        assert_eq!(tidy(-0.0).to_string(), "0");
        assert_eq!(tidy(1.0 / 3.0).to_string(), "0.333333333333");
        assert_eq!(tidy(1e300), 1e300);
        assert_eq!(tidy(-1.5e-300), -1.5e-300);
        assert_eq!(tidy(5e-324), 5e-324);
        assert!(tidy(f64::NAN).is_nan());
        assert_eq!(tidy(f64::INFINITY), f64::INFINITY);
    }
}
