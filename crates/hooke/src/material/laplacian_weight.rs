//! The stiffness k a material gives the weighted Laplacian of quasi-Newton
//! solvers (Liu 2018 thesis, §7.1, eqs. 7.13–7.14): the slope of the straight line
//! k (x − 1) closest, in least squares, to the material's uniaxial stress
//! f(x) = P₁₁(diag(x, 1, 1)) over stretches x in an interval about rest.
//!
//! The rest-state stiffness f′(1) would be the obvious choice but is zero for
//! materials that are soft at rest (the polynomial a(x) = μ(x − 1)⁴); the fit
//! sees the material's stiffness over the stretches a simulation visits. It
//! is exact (2μ + λ) for materials linear in the stretch, such as corotated.
//!
//! Anisotropic materials are fitted along each axis and the three slopes
//! averaged: the Laplacian acts alike on every direction.

use super::{Material, Want};
use nalgebra::Matrix3;

/// Stretches over which k is fitted, with the sample count. The source's text
/// uses [0.5, 1.5]; its code [0.9, 1.1]; its worked example [0.8, 1.2] with 41
/// samples. The result barely depends on it (its Fig. 7.6); [0.5, 1.5] covers
/// the stretches of a large deformation.
pub const DEFAULT_STRETCHES: StretchSamples = StretchSamples {
    low: 0.5,
    high: 1.5,
    samples: 101,
};

/// Evenly spaced stretches from `low` to `high`, both included.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StretchSamples {
    /// The smallest stretch x (1 is rest).
    pub low: f64,
    /// The largest stretch x.
    pub high: f64,
    /// How many stretches, evenly spaced.
    pub samples: usize,
}

/// The weight a material gives the Laplacian: its own where it sets one
/// (projective materials, fibres), else the fit below over `stretches`.
pub fn material_weight(material: &dyn Material, stretches: &StretchSamples) -> f64 {
    material
        .laplacian_weight(stretches)
        .unwrap_or_else(|| laplacian_weight(material, *stretches))
}

/// k = Σ (x − 1) f(x) / Σ (x − 1)² over the samples, averaged over the three
/// axes; stretches where the material is undefined are left out. Never
/// negative: a material that resists no stretch gets k = 0 (then the inertia
/// alone makes the solver's matrix definite).
pub fn laplacian_weight(material: &dyn Material, stretches: StretchSamples) -> f64 {
    let mut total = 0.0;
    for axis in 0..3 {
        let (mut moment, mut norm) = (0.0, 0.0);
        for i in 0..stretches.samples {
            let t = i as f64 / (stretches.samples - 1).max(1) as f64;
            let x = stretches.low + t * (stretches.high - stretches.low);
            let mut f = Matrix3::identity();
            f[(axis, axis)] = x;
            let evaluation = material.evaluate(&f, Want::Stress);
            if evaluation.is_undefined() {
                continue;
            }
            moment += (x - 1.0) * evaluation.first_piola[(axis, axis)];
            norm += (x - 1.0) * (x - 1.0);
        }
        if norm > 0.0 {
            total += moment / norm;
        }
    }
    (total / 3.0).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::material::{IsotropicMaterial, Lame, MaterialModel};

    fn material(model: MaterialModel, mu: f64, lambda: f64) -> IsotropicMaterial {
        IsotropicMaterial {
            model,
            lame: Lame { mu, lambda },
            density: 1000.0,
        }
    }

    /// k is linear in (μ, λ) for these models, so two materials give its two
    /// coefficients: k = a μ + b λ.
    fn coefficients(model: MaterialModel, stretches: StretchSamples) -> (f64, f64) {
        let a = laplacian_weight(&material(model, 1.0, 0.0), stretches);
        let b = laplacian_weight(&material(model, 1.0, 1.0), stretches) - a;
        (a, b)
    }

    /// The source's numbers: corotated 2μ + λ on any interval; Neo-Hookean
    /// 2.0260μ + 1.0480λ on [0.8, 1.2] with 41 samples (its §8.1 example);
    /// St. Venant–Kirchhoff 2.15μ + 1.075λ on [0.5, 1.5] (the continuous fit,
    /// approached by many samples).
    #[test]
    fn the_weights_match_the_source() {
        let example = StretchSamples {
            low: 0.8,
            high: 1.2,
            samples: 41,
        };
        let (a, b) = coefficients(MaterialModel::Corotational, DEFAULT_STRETCHES);
        assert!(
            (a - 2.0).abs() < 1e-6 && (b - 1.0).abs() < 1e-6,
            "corotated {a} μ + {b} λ"
        );
        let (a, b) = coefficients(MaterialModel::NeoHookean, example);
        assert!(
            (a - 2.0260).abs() < 1e-4 && (b - 1.0480).abs() < 1e-4,
            "Neo-Hookean {a} μ + {b} λ"
        );
        let fine = StretchSamples {
            samples: 20001,
            ..DEFAULT_STRETCHES
        };
        let (a, b) = coefficients(MaterialModel::StVenantKirchhoff, fine);
        assert!(
            (a - 2.15).abs() < 1e-3 && (b - 1.075).abs() < 1e-3,
            "StVK {a} μ + {b} λ"
        );
    }
}
