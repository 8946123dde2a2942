//! Co-rotational linear elasticity: ψ = μ‖F − R‖² + λ/2 tr(RᵀF − I)²
//! = μ Σ(σᵢ − 1)² + λ/2 (Σσᵢ − 3)² (Liu 2018 thesis, eq. 3.7 with the corotated strain S − I of eq. 3.10).

use super::isotropic::StretchEnergy;
use super::Lame;
use nalgebra::{Matrix3, Vector3};

pub struct Corotational;

impl StretchEnergy for Corotational {
    fn energy(&self, s: &Vector3<f64>, lame: &Lame) -> f64 {
        let trace = s.sum() - 3.0;
        lame.mu * (s - Vector3::repeat(1.0)).norm_squared() + 0.5 * lame.lambda * trace * trace
    }

    fn gradient(&self, s: &Vector3<f64>, lame: &Lame) -> Vector3<f64> {
        (s - Vector3::repeat(1.0)) * (2.0 * lame.mu) + Vector3::repeat(lame.lambda * (s.sum() - 3.0))
    }

    fn hessian(&self, _s: &Vector3<f64>, lame: &Lame) -> Matrix3<f64> {
        Matrix3::identity() * (2.0 * lame.mu) + Matrix3::repeat(lame.lambda)
    }

    /// With R the polar rotation: P = 2μ(F − R) + λ (tr(RᵀF) − 3) R.
    fn at_rotation(
        &self,
        f: &Matrix3<f64>,
        r: &Matrix3<f64>,
        lame: &Lame,
        stress: bool,
    ) -> Option<(f64, Matrix3<f64>)> {
        let trace = (r.transpose() * f).trace() - 3.0;
        let energy = lame.mu * (f - r).norm_squared() + 0.5 * lame.lambda * trace * trace;
        let stress = match stress {
            true => (f - r) * (2.0 * lame.mu) + r * (lame.lambda * trace),
            false => Matrix3::zeros(),
        };
        Some((energy, stress))
    }

    fn direct(&self, f: &Matrix3<f64>, lame: &Lame, stress: bool) -> Option<(f64, Matrix3<f64>)> {
        super::isotropic::direct_by_rotation(self, f, lame, stress)
    }
}
