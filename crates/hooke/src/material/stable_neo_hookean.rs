//! Stable Neo-Hookean (Smith, de Goes, Kim 2018):
//! ψ = μ'/2 (I_C − 3) + λ'/2 (J − α)² − μ'/2 log(I_C + 1) − ψ₀,
//! with μ' = 4μ/3, λ' = λ + 5μ/6 (their Lamé re-parametrisation, so that the
//! model linearises to the given E and ν), α = 1 + 3μ'/(4λ') (P(I) = 0), and the
//! constant ψ₀ chosen so that ψ(I) = 0. Defined and smooth for inverted elements.

use super::isotropic::{cofactor, volume_gradient, volume_hessian, StretchEnergy};
use super::stretch_coordinates::{StretchInvariants, SymmetricEvaluation, OFF_DIAGONAL_WEIGHT};
use super::Lame;
use nalgebra::{Matrix3, Vector3};

pub struct StableNeoHookean;

struct Coefficients {
    mu: f64,
    lambda: f64,
    alpha: f64,
}

fn coefficients(lame: &Lame) -> Coefficients {
    let mu = 4.0 * lame.mu / 3.0;
    let lambda = lame.lambda + 5.0 * lame.mu / 6.0;
    Coefficients {
        mu,
        lambda,
        alpha: 1.0 + 0.75 * mu / lambda,
    }
}

/// ψ from the invariants I_C = ‖F‖² = Σσᵢ² and J = det F = Πσᵢ.
fn energy_of_invariants(c: &Coefficients, ic: f64, j: f64) -> f64 {
    let shape = |ic: f64, j: f64| {
        0.5 * c.mu * (ic - 3.0) + 0.5 * c.lambda * (j - c.alpha).powi(2) - 0.5 * c.mu * (ic + 1.0).ln()
    };
    shape(ic, j) - shape(3.0, 1.0)
}

impl StretchEnergy for StableNeoHookean {
    fn energy(&self, s: &Vector3<f64>, lame: &Lame) -> f64 {
        energy_of_invariants(&coefficients(lame), s.norm_squared(), s.product())
    }

    /// ψ(I_C, J) with I_C = ‖S‖² = zᵀDz and J = det S.
    fn at_stretch(&self, z: &StretchInvariants, lame: &Lame, derivatives: bool) -> Option<SymmetricEvaluation> {
        let c = coefficients(lame);
        let (ic, j) = (z.norm_squared(), z.determinant);
        let energy = energy_of_invariants(&c, ic, j);
        if !derivatives {
            return Some(SymmetricEvaluation::energy_only(energy));
        }
        let shear = c.mu * (1.0 - 1.0 / (ic + 1.0));
        let (dz, dj) = (z.weighted(), z.determinant_gradient());
        let mut hessian = dz * dz.transpose() * (2.0 * c.mu / (ic + 1.0).powi(2))
            + dj * dj.transpose() * c.lambda
            + z.determinant_hessian() * (c.lambda * (j - c.alpha));
        for k in 0..6 {
            hessian[(k, k)] += shear * OFF_DIAGONAL_WEIGHT[k];
        }
        Some(SymmetricEvaluation {
            energy,
            gradient: dz * shear + dj * (c.lambda * (j - c.alpha)),
            hessian,
        })
    }

    /// P = μ'(1 − 1/(I_C + 1)) F + λ'(J − α) cof F.
    fn direct(&self, f: &Matrix3<f64>, lame: &Lame, stress: bool) -> Option<(f64, Matrix3<f64>)> {
        let c = coefficients(lame);
        let (ic, j) = (f.norm_squared(), f.determinant());
        let energy = energy_of_invariants(&c, ic, j);
        let stress = match stress {
            true => f * (c.mu * (1.0 - 1.0 / (ic + 1.0))) + cofactor(f) * (c.lambda * (j - c.alpha)),
            false => Matrix3::zeros(),
        };
        Some((energy, stress))
    }

    fn gradient(&self, s: &Vector3<f64>, lame: &Lame) -> Vector3<f64> {
        let c = coefficients(lame);
        let ic = s.norm_squared();
        let j = s.product();
        s * (c.mu * (1.0 - 1.0 / (ic + 1.0))) + volume_gradient(s) * (c.lambda * (j - c.alpha))
    }

    fn hessian(&self, s: &Vector3<f64>, lame: &Lame) -> Matrix3<f64> {
        let c = coefficients(lame);
        let ic = s.norm_squared();
        let j = s.product();
        let dj = volume_gradient(s);
        Matrix3::identity() * (c.mu * (1.0 - 1.0 / (ic + 1.0)))
            + s * s.transpose() * (2.0 * c.mu / (ic + 1.0).powi(2))
            + dj * dj.transpose() * c.lambda
            + volume_hessian(s) * (c.lambda * (j - c.alpha))
    }
}
