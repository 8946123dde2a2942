//! St. Venant–Kirchhoff: ψ = μ‖E‖² + λ/2 tr(E)², E = ½(FᵀF − I).
//! In stretches: μ/4 Σ(σᵢ² − 1)² + λ/8 (Σσᵢ² − 3)². Softens and collapses under
//! strong compression, as it is known to.

use super::isotropic::StretchEnergy;
use super::Lame;
use nalgebra::{Matrix3, Vector3};

pub struct StVenantKirchhoff;

impl StretchEnergy for StVenantKirchhoff {
    fn energy(&self, s: &Vector3<f64>, lame: &Lame) -> f64 {
        let squares = s.component_mul(s);
        let trace = squares.sum() - 3.0;
        0.25 * lame.mu * (squares - Vector3::repeat(1.0)).norm_squared() + 0.125 * lame.lambda * trace * trace
    }

    /// ψ = μ‖E‖² + λ/2 tr(E)² and P = F (2μE + λ tr E I).
    fn direct(&self, f: &Matrix3<f64>, lame: &Lame, stress: bool) -> Option<(f64, Matrix3<f64>)> {
        let green = (f.transpose() * f - Matrix3::identity()) * 0.5;
        let trace = green.trace();
        let energy = lame.mu * green.norm_squared() + 0.5 * lame.lambda * trace * trace;
        let stress = match stress {
            true => f * (green * (2.0 * lame.mu) + Matrix3::identity() * (lame.lambda * trace)),
            false => Matrix3::zeros(),
        };
        Some((energy, stress))
    }

    fn gradient(&self, s: &Vector3<f64>, lame: &Lame) -> Vector3<f64> {
        let trace = s.norm_squared() - 3.0;
        Vector3::from_fn(|i, _| lame.mu * (s[i] * s[i] - 1.0) * s[i] + 0.5 * lame.lambda * trace * s[i])
    }

    fn hessian(&self, s: &Vector3<f64>, lame: &Lame) -> Matrix3<f64> {
        let trace = s.norm_squared() - 3.0;
        Matrix3::from_fn(|i, j| {
            let diagonal = if i == j {
                lame.mu * (3.0 * s[i] * s[i] - 1.0) + 0.5 * lame.lambda * trace
            } else {
                0.0
            };
            diagonal + lame.lambda * s[i] * s[j]
        })
    }
}
