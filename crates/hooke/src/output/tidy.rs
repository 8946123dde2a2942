//! Numbers as people read them in messages: a time of 0.6 computed as
//! 0.6000000000000001 prints as 0.6, and −0 prints as 0.

/// `x` rounded to 12 significant digits (far below any tolerance a message
/// reports, far above the rounding of the arithmetic that produced it), with −0
/// made 0. Only for display: never feed the result back into a computation.
pub fn tidy(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return if x == 0.0 { 0.0 } else { x };
    }
    let magnitude = x.abs().log10().floor() as i32;
    let scale = 10f64.powi(11 - magnitude);
    if !scale.is_finite() || scale == 0.0 {
        return x;
    }
    let rounded = (x * scale).round() / scale;
    if rounded.is_finite() {
        rounded
    } else {
        x
    }
}

#[cfg(test)]
mod tests {
    use super::tidy;

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
