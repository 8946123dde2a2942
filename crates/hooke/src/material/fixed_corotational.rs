//! Fixed co-rotational (Stomakhin, Howes, Schroeder, Teran 2012):
//! ψ = μ‖F − R‖² + λ/2 (J − 1)², defined and smooth through inversion.

use super::isotropic::{cofactor, volume_gradient, volume_hessian, StretchEnergy};
use super::stretch_coordinates::{StretchInvariants, SymmetricEvaluation, OFF_DIAGONAL_WEIGHT};
use super::Lame;
use nalgebra::{Matrix3, Vector3};

pub struct FixedCorotational;

impl StretchEnergy for FixedCorotational {
    fn energy(&self, s: &Vector3<f64>, lame: &Lame) -> f64 {
        let j = s.product();
        lame.mu * (s - Vector3::repeat(1.0)).norm_squared() + 0.5 * lame.lambda * (j - 1.0).powi(2)
    }

    fn gradient(&self, s: &Vector3<f64>, lame: &Lame) -> Vector3<f64> {
        let j = s.product();
        (s - Vector3::repeat(1.0)) * (2.0 * lame.mu) + volume_gradient(s) * (lame.lambda * (j - 1.0))
    }

    fn hessian(&self, s: &Vector3<f64>, lame: &Lame) -> Matrix3<f64> {
        let j = s.product();
        let dj = volume_gradient(s);
        Matrix3::identity() * (2.0 * lame.mu)
            + dj * dj.transpose() * lame.lambda
            + volume_hessian(s) * (lame.lambda * (j - 1.0))
    }

    /// ψ = μ‖S − I‖² + λ/2 (det S − 1)².
    fn at_stretch(&self, z: &StretchInvariants, lame: &Lame, derivatives: bool) -> Option<SymmetricEvaluation> {
        let volume = z.determinant - 1.0;
        let energy = lame.mu * z.distance_to_identity_squared() + 0.5 * lame.lambda * volume * volume;
        if !derivatives {
            return Some(SymmetricEvaluation::energy_only(energy));
        }
        let dj = z.determinant_gradient();
        let mut hessian = z.determinant_hessian() * (lame.lambda * volume) + dj * dj.transpose() * lame.lambda;
        for k in 0..6 {
            hessian[(k, k)] += 2.0 * lame.mu * OFF_DIAGONAL_WEIGHT[k];
        }
        Some(SymmetricEvaluation {
            energy,
            gradient: z.weighted_from_identity() * (2.0 * lame.mu) + dj * (lame.lambda * volume),
            hessian,
        })
    }

    /// With R the polar rotation: P = 2μ(F − R) + λ (J − 1) cof F.
    fn at_rotation(
        &self,
        f: &Matrix3<f64>,
        r: &Matrix3<f64>,
        lame: &Lame,
        stress: bool,
    ) -> Option<(f64, Matrix3<f64>)> {
        let j = f.determinant();
        let energy = lame.mu * (f - r).norm_squared() + 0.5 * lame.lambda * (j - 1.0).powi(2);
        let stress = match stress {
            true => (f - r) * (2.0 * lame.mu) + cofactor(f) * (lame.lambda * (j - 1.0)),
            false => Matrix3::zeros(),
        };
        Some((energy, stress))
    }

    fn direct(&self, f: &Matrix3<f64>, lame: &Lame, stress: bool) -> Option<(f64, Matrix3<f64>)> {
        super::isotropic::direct_by_rotation(self, f, lame, stress)
    }
}
