//! Neo-Hookean: ψ = μ/2 (I_C − 3) − μ log J + λ/2 (log J)² (Liu 2018 thesis, eq. 7.17).
//!
//! Policy for J ≤ 0: the energy is +∞. Line searches then never accept an
//! inverted state, and asking for forces or stiffness there is an error that
//! names the element (see `fem`), rather than a silent NaN.

use super::isotropic::{cofactor, StretchEnergy};
use super::Lame;
use nalgebra::{Matrix3, Vector3};

pub struct NeoHookean;

/// ψ from I_C = ‖F‖² and J = det F; +∞ for J ≤ 0.
fn energy_of_invariants(lame: &Lame, ic: f64, j: f64) -> f64 {
    if j <= 0.0 {
        return f64::INFINITY;
    }
    let log_j = j.ln();
    0.5 * lame.mu * (ic - 3.0) - lame.mu * log_j + 0.5 * lame.lambda * log_j * log_j
}

impl StretchEnergy for NeoHookean {
    fn energy(&self, s: &Vector3<f64>, lame: &Lame) -> f64 {
        energy_of_invariants(lame, s.norm_squared(), s.product())
    }

    /// P = μF + (λ log J − μ) F⁻ᵀ, with F⁻ᵀ = cof F / J.
    fn direct(&self, f: &Matrix3<f64>, lame: &Lame, stress: bool) -> Option<(f64, Matrix3<f64>)> {
        let j = f.determinant();
        let energy = energy_of_invariants(lame, f.norm_squared(), j);
        let stress = match stress && energy.is_finite() {
            true => f * lame.mu + cofactor(f) * ((lame.lambda * j.ln() - lame.mu) / j),
            false => Matrix3::zeros(),
        };
        Some((energy, stress))
    }

    fn gradient(&self, s: &Vector3<f64>, lame: &Lame) -> Vector3<f64> {
        let log_j = s.product().ln();
        s.map(|si| lame.mu * si - lame.mu / si + lame.lambda * log_j / si)
    }

    fn hessian(&self, s: &Vector3<f64>, lame: &Lame) -> Matrix3<f64> {
        let log_j = s.product().ln();
        Matrix3::from_fn(|i, j| {
            if i == j {
                lame.mu + (lame.mu + lame.lambda - lame.lambda * log_j) / (s[i] * s[i])
            } else {
                lame.lambda / (s[i] * s[j])
            }
        })
    }
}
