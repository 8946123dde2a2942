//! As-rigid-as-possible: ψ = μ‖F − R‖² = μ Σ(σᵢ − 1)². Only the shear modulus
//! is used; volume is resisted only through the stretches themselves.

use super::isotropic::StretchEnergy;
use super::Lame;
use nalgebra::{Matrix3, Vector3};

pub struct Arap;

impl StretchEnergy for Arap {
    fn energy(&self, s: &Vector3<f64>, lame: &Lame) -> f64 {
        lame.mu * (s - Vector3::repeat(1.0)).norm_squared()
    }

    fn gradient(&self, s: &Vector3<f64>, lame: &Lame) -> Vector3<f64> {
        (s - Vector3::repeat(1.0)) * (2.0 * lame.mu)
    }

    fn hessian(&self, _s: &Vector3<f64>, lame: &Lame) -> Matrix3<f64> {
        Matrix3::identity() * (2.0 * lame.mu)
    }

    /// With R the polar rotation: ψ = μ‖F − R‖², P = 2μ(F − R).
    fn direct(&self, f: &Matrix3<f64>, lame: &Lame, stress: bool) -> Option<(f64, Matrix3<f64>)> {
        let r = crate::linalg::polar_rotation(f)?;
        let stress = match stress {
            true => (f - r) * (2.0 * lame.mu),
            false => Matrix3::zeros(),
        };
        Some((lame.mu * (f - r).norm_squared(), stress))
    }
}
