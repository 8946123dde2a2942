//! Strain limiting, a projective material (Liu 2018 thesis, §6.2, Figs. 6.1–6.2):
//! ψ = μ Σᵢ (σᵢ − clamp(σᵢ, min, max))² = k/2 ‖F − p(F)‖² with k = 2μ and
//! p(F) = U clamp(Σ) Vᵀ, the closest deformation whose stretches lie in
//! [min, max]. Stretches inside the range cost nothing; outside, the material
//! pulls back like ARAP (which is min = max = 1). Projective: a local/global
//! iteration minimises it exactly with the Laplacian weight k = 2μ. The
//! material that carries it is [`super::projective::Projective`].

use super::isotropic::StretchEnergy;
use super::Lame;
use nalgebra::{Matrix3, Vector3};

/// The energy in the stretches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StrainLimitEnergy {
    /// μ, Pa: the constraint's weight k = 2μ.
    pub mu: f64,
    /// The smallest stretch σ that costs nothing.
    pub min: f64,
    /// The largest stretch σ that costs nothing.
    pub max: f64,
}

impl StrainLimitEnergy {
    fn excess(&self, s: &Vector3<f64>) -> Vector3<f64> {
        s.map(|x| x - x.clamp(self.min, self.max))
    }
}

impl StretchEnergy for StrainLimitEnergy {
    fn energy(&self, s: &Vector3<f64>, _lame: &Lame) -> f64 {
        self.mu * self.excess(s).norm_squared()
    }

    fn gradient(&self, s: &Vector3<f64>, _lame: &Lame) -> Vector3<f64> {
        self.excess(s) * (2.0 * self.mu)
    }

    /// 2μ where a stretch is outside the range, 0 inside: the energy is C¹,
    /// its Hessian jumps at the limits.
    fn hessian(&self, s: &Vector3<f64>, _lame: &Lame) -> Matrix3<f64> {
        Matrix3::from_diagonal(&s.map(|x| {
            if x < self.min || x > self.max {
                2.0 * self.mu
            } else {
                0.0
            }
        }))
    }
}
