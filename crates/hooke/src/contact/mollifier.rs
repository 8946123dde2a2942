//! The edge–edge mollifier of Incremental Potential Contact (Li et al. 2020,
//! §4.3 and supplement): the distance between two edges is not smooth where
//! they turn parallel (the closest features jump), so an edge–edge barrier is
//! multiplied by
//!
//!   m(x) = (2 − x/ε) x/ε   for x < ε,   1 otherwise,
//!
//! of x = ‖(a1 − a0) × (b1 − b0)‖², which vanishes with its gradient as the
//! edges turn parallel and is C¹ where it reaches 1. ε = 10⁻³ ‖ā1 − ā0‖²
//! ‖b̄1 − b̄0‖² from the edges' rest lengths: the mollifier acts below an angle
//! of about 1.8° between edges of their rest length.

use super::distance::WithHessian;
use super::jet;
use nalgebra::Vector3;

/// The fraction of the product of the squared rest lengths below which the
/// mollifier acts (the paper's 10⁻³).
pub const THRESHOLD_SCALE: f64 = 1e-3;

/// ε of the edges (a0, a1) and (b0, b1) at rest.
pub fn threshold(a0: &Vector3<f64>, a1: &Vector3<f64>, b0: &Vector3<f64>, b1: &Vector3<f64>) -> f64 {
    THRESHOLD_SCALE * (a1 - a0).norm_squared() * (b1 - b0).norm_squared()
}

/// x = ‖(a1 − a0) × (b1 − b0)‖²: the squared sine of the edges' angle times
/// their squared lengths.
pub fn cross_squared_norm(a0: &Vector3<f64>, a1: &Vector3<f64>, b0: &Vector3<f64>, b1: &Vector3<f64>) -> f64 {
    (a1 - a0).cross(&(b1 - b0)).norm_squared()
}

/// m(x) for the threshold ε.
pub fn mollifier_of(x: f64, epsilon: f64) -> f64 {
    match x < epsilon {
        true => (2.0 - x / epsilon) * x / epsilon,
        false => 1.0,
    }
}

/// m of the edges (a0, a1), (b0, b1) for the threshold ε, with its gradient
/// and Hessian with respect to (a0, a1, b0, b1); the derivatives are zero
/// where m = 1.
pub fn mollifier(
    a0: &Vector3<f64>,
    a1: &Vector3<f64>,
    b0: &Vector3<f64>,
    b1: &Vector3<f64>,
    epsilon: f64,
) -> WithHessian<12> {
    let x = jet::variables::<12>(&[*a0, *a1, *b0, *b1]);
    let c = jet::cross(&jet::sub(&x[1], &x[0]), &jet::sub(&x[3], &x[2]));
    let squared = jet::dot(&c, &c);
    if squared.value >= epsilon {
        return (1.0, [0.0; 12], nalgebra::SMatrix::zeros());
    }
    // (2 − x/ε) x/ε = (2ε − x) x / ε².
    let two_epsilon = jet::Jet::constant(2.0 * epsilon);
    let m = ((two_epsilon - squared) * squared) * (1.0 / (epsilon * epsilon));
    (m.value, m.gradient, m.hessian)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mollifier_is_c1_at_its_threshold_and_vanishes_for_parallel_edges() {
        let epsilon = 0.5;
        assert_eq!(mollifier_of(0.0, epsilon), 0.0);
        assert!((mollifier_of(epsilon * (1.0 - 1e-9), epsilon) - 1.0).abs() < 1e-12);
        assert_eq!(mollifier_of(epsilon, epsilon), 1.0);
        // The slope 2/ε (1 − x/ε) reaches 0 at ε.
        let h = 1e-7;
        let slope = (mollifier_of(epsilon - h, epsilon) - mollifier_of(epsilon - 2.0 * h, epsilon)) / h;
        assert!(slope.abs() < 1e-5, "{slope}");
        let parallel = mollifier(
            &Vector3::new(0.0, 0.0, 0.0),
            &Vector3::new(1.0, 0.0, 0.0),
            &Vector3::new(0.0, 1.0, 0.0),
            &Vector3::new(2.0, 1.0, 0.0),
            1e-3,
        );
        assert_eq!(parallel.0, 0.0);
        assert!(parallel.1.iter().all(|g| *g == 0.0));
    }

    #[test]
    fn gradient_and_hessian_match_central_differences() {
        let base = [
            Vector3::new(0.0, 0.0, 0.0),
            Vector3::new(1.0, 0.02, 0.01),
            Vector3::new(0.3, 0.5, 0.2),
            Vector3::new(1.2, 0.505, 0.21),
        ];
        let epsilon = threshold(&base[0], &base[1], &base[2], &base[3]);
        let at = |p: &[Vector3<f64>; 4]| mollifier(&p[0], &p[1], &p[2], &p[3], epsilon);
        let (m, gradient, hessian) = at(&base);
        assert!(m > 0.0 && m < 1.0, "the pair is inside the threshold: {m}");
        let h = 1e-7;
        for i in 0..12 {
            let shifted = |s: f64| {
                let mut p = base;
                p[i / 3][i % 3] += s;
                at(&p)
            };
            let (plus, minus) = (shifted(h), shifted(-h));
            let g = (plus.0 - minus.0) / (2.0 * h);
            assert!((g - gradient[i]).abs() < 1e-6 * (1.0 + gradient[i].abs()), "∂m/∂x{i}");
            for j in 0..12 {
                let column = (plus.1[j] - minus.1[j]) / (2.0 * h);
                assert!(
                    (column - hessian[(i, j)]).abs() < 1e-5 * (1.0 + hessian[(i, j)].abs()),
                    "H[{i},{j}]"
                );
            }
        }
    }
}
