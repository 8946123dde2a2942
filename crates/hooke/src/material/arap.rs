//! As-rigid-as-possible: ψ = μ‖F − R‖² = μ Σ(σᵢ − 1)². Only the shear modulus
//! is used; volume is resisted only through the stretches themselves.

use super::isotropic::StretchEnergy;
use super::stretch_coordinates::{StretchInvariants, SymmetricEvaluation, OFF_DIAGONAL_WEIGHT};
use super::{Lame, Matrix6};
use nalgebra::{Matrix3, Vector3, Vector6};

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

    /// ψ = μ‖S − I‖², ∂ψ/∂z = 2μ D(z − z(I)), ∂²ψ/∂z² = 2μ D.
    fn at_stretch(&self, z: &StretchInvariants, lame: &Lame, derivatives: bool) -> Option<SymmetricEvaluation> {
        let energy = lame.mu * z.distance_to_identity_squared();
        Some(match derivatives {
            false => SymmetricEvaluation::energy_only(energy),
            true => SymmetricEvaluation {
                energy,
                gradient: z.weighted_from_identity() * (2.0 * lame.mu),
                hessian: Matrix6::from_diagonal(&Vector6::from_column_slice(&OFF_DIAGONAL_WEIGHT)) * (2.0 * lame.mu),
            },
        })
    }

    /// With R the polar rotation: ψ = μ‖F − R‖², P = 2μ(F − R).
    fn at_rotation(
        &self,
        f: &Matrix3<f64>,
        r: &Matrix3<f64>,
        lame: &Lame,
        stress: bool,
    ) -> Option<(f64, Matrix3<f64>)> {
        let stress = match stress {
            true => (f - r) * (2.0 * lame.mu),
            false => Matrix3::zeros(),
        };
        Some((lame.mu * (f - r).norm_squared(), stress))
    }

    fn direct(&self, f: &Matrix3<f64>, lame: &Lame, stress: bool) -> Option<(f64, Matrix3<f64>)> {
        super::isotropic::direct_by_rotation(self, f, lame, stress)
    }
}
