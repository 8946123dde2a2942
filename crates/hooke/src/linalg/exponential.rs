//! The dense matrix exponential and the φ₁ function (Chen 2019 thesis, §4.1), for the small
//! reduced Jacobians of the exponential integrators.
//!
//! exp(A) by scaling and squaring with diagonal Padé approximants of degree 3,
//! 5, 7, 9 or 13, chosen by ‖A‖₁ (Higham, "The scaling and squaring method for
//! the matrix exponential revisited", 2005). φ₁(A)v = Σ Aᵏv/(k+1)! comes from the
//! augmented matrix: exp([[A, v], [0, 0]]) = [[exp(A), φ₁(A)v], [0, 1]].

use crate::error::{HookeError, Result};
use nalgebra::{DMatrix, DVector};

/// Largest ‖A‖₁ for which each Padé degree meets double precision without scaling.
const THETA: [(usize, f64); 5] = [
    (3, 1.495585217958292e-2),
    (5, 2.53939833006323e-1),
    (7, 9.504178996162932e-1),
    (9, 2.097847961257068e0),
    (13, 5.371920351148152e0),
];

/// Coefficients b₀ … b_m of the degree-m diagonal Padé approximant of exp.
fn pade_coefficients(degree: usize) -> &'static [f64] {
    match degree {
        3 => &[120.0, 60.0, 12.0, 1.0],
        5 => &[30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0],
        7 => &[17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0],
        9 => &[
            17643225600.0,
            8821612800.0,
            2075673600.0,
            302702400.0,
            30270240.0,
            2162160.0,
            110880.0,
            3960.0,
            90.0,
            1.0,
        ],
        _ => &[
            64764752532480000.0,
            32382376266240000.0,
            7771770303897600.0,
            1187353796428800.0,
            129060195264000.0,
            10559470521600.0,
            670442572800.0,
            33522128640.0,
            1323241920.0,
            40840800.0,
            960960.0,
            16380.0,
            182.0,
            1.0,
        ],
    }
}

fn norm1(a: &DMatrix<f64>) -> f64 {
    a.column_iter()
        .map(|c| c.iter().map(|x| x.abs()).sum::<f64>())
        .fold(0.0, f64::max)
}

/// exp(A) for a square matrix with finite entries.
pub fn expm(a: &DMatrix<f64>) -> Result<DMatrix<f64>> {
    let n = a.nrows();
    if a.ncols() != n {
        return Err(HookeError::LinearSolver {
            reason: format!("exp needs a square matrix, got {}×{}", n, a.ncols()),
        });
    }
    if !a.iter().all(|x| x.is_finite()) {
        return Err(HookeError::LinearSolver {
            reason: "exp of a matrix with non-finite entries".to_string(),
        });
    }
    let identity = DMatrix::<f64>::identity(n, n);
    let norm = norm1(a);
    let a2 = a * a;
    for &(degree, theta) in &THETA[..4] {
        if norm <= theta {
            // Low degrees: U = A Σ b_odd A^(k−1), V = Σ b_even A^k, powers of A² only.
            let b = pade_coefficients(degree);
            let mut power = identity.clone(); // A^(2j)
            let mut u_inner = DMatrix::<f64>::zeros(n, n);
            let mut v = DMatrix::<f64>::zeros(n, n);
            for j in 0..=degree / 2 {
                v += &power * b[2 * j];
                u_inner += &power * b[2 * j + 1];
                power = &power * &a2;
            }
            return pade_ratio(&(a * u_inner), &v);
        }
    }
    // Degree 13 with scaling by 2⁻ˢ so that ‖A/2ˢ‖₁ ≤ θ₁₃, then s squarings.
    let squarings = (norm / THETA[4].1).log2().ceil().max(0.0) as i32;
    let scale = 2f64.powi(-squarings);
    let a = a * scale;
    let a2 = &a2 * (scale * scale);
    let a4 = &a2 * &a2;
    let a6 = &a4 * &a2;
    let b = pade_coefficients(13);
    let u =
        &a * (&a6 * (&a6 * b[13] + &a4 * b[11] + &a2 * b[9]) + &a6 * b[7] + &a4 * b[5] + &a2 * b[3] + &identity * b[1]);
    let v = &a6 * (&a6 * b[12] + &a4 * b[10] + &a2 * b[8]) + &a6 * b[6] + &a4 * b[4] + &a2 * b[2] + &identity * b[0];
    let mut result = pade_ratio(&u, &v)?;
    for _ in 0..squarings {
        result = &result * &result;
    }
    Ok(result)
}

/// (V − U)⁻¹ (V + U).
fn pade_ratio(u: &DMatrix<f64>, v: &DMatrix<f64>) -> Result<DMatrix<f64>> {
    let denominator = v - u;
    let numerator = v + u;
    denominator
        .lu()
        .solve(&numerator)
        .ok_or_else(|| HookeError::LinearSolver {
            reason: "the Padé denominator of exp is singular".to_string(),
        })
}

/// φ₁(A) v = A⁻¹(exp(A) − I) v (defined also for singular A), by the augmented matrix.
pub fn phi1_times(a: &DMatrix<f64>, v: &DVector<f64>) -> Result<DVector<f64>> {
    let n = a.nrows();
    let mut augmented = DMatrix::<f64>::zeros(n + 1, n + 1);
    augmented.view_mut((0, 0), (n, n)).copy_from(a);
    augmented.view_mut((0, n), (n, 1)).copy_from(v);
    let exponential = expm(&augmented)?;
    Ok(exponential.view((0, n), (n, 1)).clone_owned().column(0).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &DMatrix<f64>, b: &DMatrix<f64>, tolerance: f64) -> bool {
        (a - b).amax() <= tolerance * b.amax().max(1.0)
    }

    /// exp by a long Taylor series, accurate for small norms.
    fn taylor(a: &DMatrix<f64>) -> DMatrix<f64> {
        let n = a.nrows();
        let mut term = DMatrix::<f64>::identity(n, n);
        let mut sum = term.clone();
        for k in 1..60 {
            term = &term * a / k as f64;
            sum += &term;
        }
        sum
    }

    fn pseudo_random(n: usize, scale: f64, seed: u64) -> DMatrix<f64> {
        let mut state = seed;
        DMatrix::from_fn(n, n, |_, _| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            scale * (((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0)
        })
    }

    #[test]
    fn every_pade_degree_matches_the_taylor_series() {
        // Norms that select degrees 3, 5, 7, 9 and 13 (unscaled).
        for (scale, seed) in [(1e-3, 1), (2e-2, 2), (8e-2, 3), (0.2, 4), (0.5, 5)] {
            let a = pseudo_random(6, scale, seed);
            assert!(close(&expm(&a).unwrap(), &taylor(&a), 1e-14), "‖A‖ ~ {scale}");
        }
    }

    #[test]
    fn closed_forms_and_identities() {
        // A rotation generator: exp gives the rotation by θ, far into the scaling regime.
        let theta: f64 = 37.0;
        let generator = DMatrix::from_row_slice(2, 2, &[0.0, -theta, theta, 0.0]);
        let rotation = DMatrix::from_row_slice(2, 2, &[theta.cos(), -theta.sin(), theta.sin(), theta.cos()]);
        assert!(close(&expm(&generator).unwrap(), &rotation, 1e-12));
        // A nilpotent matrix: exp(N) = I + N + N²/2.
        let nilpotent = DMatrix::from_row_slice(3, 3, &[0.0, 2.0, 5.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0]);
        let expected = DMatrix::identity(3, 3) + &nilpotent + &nilpotent * &nilpotent * 0.5;
        assert!(close(&expm(&nilpotent).unwrap(), &expected, 1e-15));
        // exp(A) exp(−A) = I for a large-norm matrix.
        let a = pseudo_random(8, 3.0, 7);
        let product = expm(&a).unwrap() * expm(&(-&a)).unwrap();
        assert!(close(&product, &DMatrix::identity(8, 8), 1e-10));
        // A symmetric matrix against its eigen-decomposition, stiff (eigenvalues to −200).
        let b = pseudo_random(7, 1.0, 9);
        let symmetric = (&b + b.transpose()) * 50.0;
        let eigen = symmetric.clone().symmetric_eigen();
        let reference = &eigen.eigenvectors
            * DMatrix::from_diagonal(&eigen.eigenvalues.map(f64::exp))
            * eigen.eigenvectors.transpose();
        assert!(close(&expm(&symmetric).unwrap(), &reference, 1e-11));
    }

    #[test]
    fn phi1_matches_its_definition() {
        let a = pseudo_random(5, 1.5, 11);
        let v = DVector::from_fn(5, |i, _| (i as f64 + 1.0).sin());
        // Invertible A: φ₁(A)v = A⁻¹(exp(A) − I)v.
        let expected = a
            .clone()
            .lu()
            .solve(&((expm(&a).unwrap() - DMatrix::identity(5, 5)) * &v))
            .unwrap();
        let phi = phi1_times(&a, &v).unwrap();
        assert!((&phi - &expected).amax() < 1e-12 * expected.amax());
        // A = 0: φ₁(0)v = v.
        assert!((phi1_times(&DMatrix::zeros(5, 5), &v).unwrap() - &v).amax() < 1e-15);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(expm(&DMatrix::zeros(2, 3)).is_err());
        assert!(expm(&DMatrix::from_element(2, 2, f64::NAN)).is_err());
    }
}
