//! Modified Neo-Hookean of the Kharevych 2010 thesis (eq. 2.4, after Bonet & Burton):
//! ψ = c (I_C J^(−2/3) − 3) + κ/2 (J − 1)².
//!
//! The thesis writes the shear coefficient as μ; its small-strain shear modulus is
//! then 2μ. To keep E and ν meaning the same for every model we set c = μ/2 and
//! κ = λ + 2μ/3 (the bulk modulus). ψ is +∞ for J ≤ 0 (as for Neo-Hookean).

use super::isotropic::{volume_gradient, volume_hessian, StretchEnergy};
use super::Lame;
use nalgebra::{Matrix3, Vector3};

pub struct ModifiedNeoHookean;

impl StretchEnergy for ModifiedNeoHookean {
    fn energy(&self, s: &Vector3<f64>, lame: &Lame) -> f64 {
        let j = s.product();
        if j <= 0.0 {
            return f64::INFINITY;
        }
        let c = 0.5 * lame.mu;
        c * (s.norm_squared() * j.powf(-2.0 / 3.0) - 3.0) + 0.5 * lame.bulk_modulus() * (j - 1.0).powi(2)
    }

    fn gradient(&self, s: &Vector3<f64>, lame: &Lame) -> Vector3<f64> {
        let j = s.product();
        let ic = s.norm_squared();
        let g = j.powf(-2.0 / 3.0);
        let c = 0.5 * lame.mu;
        let isochoric = s.map(|si| c * g * (2.0 * si - (2.0 / 3.0) * ic / si));
        isochoric + volume_gradient(s) * (lame.bulk_modulus() * (j - 1.0))
    }

    fn hessian(&self, s: &Vector3<f64>, lame: &Lame) -> Matrix3<f64> {
        let j = s.product();
        let ic = s.norm_squared();
        let g = j.powf(-2.0 / 3.0);
        let c = 0.5 * lame.mu;
        let kappa = lame.bulk_modulus();
        // d/dσⱼ of c g (2σᵢ − (2/3) I_C/σᵢ), with ∂g/∂σⱼ = −(2/3) g/σⱼ.
        let isochoric = Matrix3::from_fn(|i, k| {
            let bracket = 2.0 * s[i] - (2.0 / 3.0) * ic / s[i];
            let mut value = -(2.0 / 3.0) / s[k] * bracket - (4.0 / 3.0) * s[k] / s[i];
            if i == k {
                value += 2.0 + (2.0 / 3.0) * ic / (s[i] * s[i]);
            }
            c * g * value
        });
        let dj = volume_gradient(s);
        isochoric + dj * dj.transpose() * kappa + volume_hessian(s) * (kappa * (j - 1.0))
    }
}
