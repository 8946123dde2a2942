//! A fibre term added to any material (Liu 2018 thesis, §8.3, "Anisotropic Materials"):
//! ψ = ψ_base + (κ/2)(‖F d‖ − 1)², with d the unit fibre direction at rest.
//!
//! With a = F d and ℓ = ‖a‖: P_fibre = κ (ℓ − 1) (a/ℓ) dᵀ, and in column-major
//! vec(F), ∂P_fibre/∂F = (d dᵀ) ⊗ H with H = κ [â âᵀ + (1 − 1/ℓ)(I − â âᵀ)],
//! â = a/ℓ. H has eigenvalue κ along the fibre and κ(1 − 1/ℓ) across it, which
//! is negative for a compressed fibre; projection clamps it at zero. The base
//! and the fibre are projected separately, which keeps the sum PSD.

use super::{Evaluation, Material, MaterialCapabilities, MaterialRef, Matrix9, StressDerivative, Want};
use nalgebra::{Matrix3, Vector3};

/// A material with a fibre term (Liu 2018 thesis, §8.3) added: ψ = ψ_base + (κ/2)(‖F d‖ − 1)²,
/// which resists stretching and compressing along the rest direction d; the density is the base's.
#[derive(Clone, Debug)]
pub struct WithFibre {
    /// The material the fibre is added to.
    pub base: MaterialRef,
    /// Unit direction d in the rest configuration.
    pub direction: Vector3<f64>,
    /// κ, Pa.
    pub stiffness: f64,
}

impl WithFibre {
    /// ψ, P and ∂P/∂F (optionally projected) of the fibre term alone.
    pub fn fibre_terms(&self, f: &Matrix3<f64>, derivative: Option<bool>) -> (f64, Matrix3<f64>, Option<Matrix9>) {
        let d = self.direction;
        let a = f * d;
        let length = a.norm();
        let kappa = self.stiffness;
        let energy = 0.5 * kappa * (length - 1.0).powi(2);
        // A fibre collapsed to a point has no direction; its force is then taken as zero.
        let unit = if length > 0.0 { a / length } else { Vector3::zeros() };
        let stress = unit * d.transpose() * (kappa * (length - 1.0));
        let matrix = derivative.map(|project| {
            let along = unit * unit.transpose();
            let mut across = if length > 0.0 { 1.0 - 1.0 / length } else { 1.0 };
            if project {
                across = across.max(0.0);
            }
            let h = (along + (Matrix3::identity() - along) * across) * kappa;
            // vec(δP) = (d dᵀ ⊗ H) vec(δF): block (column of P j, column of F l) is dⱼ dₗ H.
            let mut c = Matrix9::zeros();
            for j in 0..3 {
                for l in 0..3 {
                    c.fixed_view_mut::<3, 3>(3 * j, 3 * l).copy_from(&(h * (d[j] * d[l])));
                }
            }
            c
        });
        (energy, stress, matrix)
    }
}

impl Material for WithFibre {
    fn name(&self) -> String {
        format!("{} + fibre", self.base.name())
    }

    fn density(&self) -> f64 {
        self.base.density()
    }

    fn evaluate(&self, f: &Matrix3<f64>, want: Want) -> Evaluation {
        let base = self.base.evaluate(f, want);
        if base.is_undefined() {
            return base;
        }
        let (energy, stress, matrix) = self.fibre_terms(f, want.derivative());
        let first_piola_derivative = match (base.first_piola_derivative, matrix) {
            (Some(StressDerivative::Matrix(c)), Some(m)) => Some(StressDerivative::Matrix(c + m)),
            (Some(StressDerivative::Eigensystem(system)), Some(m)) => {
                Some(StressDerivative::Matrix(system.to_matrix() + m))
            }
            _ => None,
        };
        Evaluation {
            energy_density: base.energy_density + energy,
            first_piola: if want == Want::Energy {
                base.first_piola
            } else {
                base.first_piola + stress
            },
            first_piola_derivative,
        }
    }

    fn laplacian_weight(&self, stretches: &super::laplacian_weight::StretchSamples) -> Option<f64> {
        Some(super::laplacian_weight::material_weight(self.base.as_ref(), stretches))
    }

    fn capabilities(&self) -> MaterialCapabilities {
        MaterialCapabilities {
            // ‖F d‖ is unchanged by a rotation of F, so the fibre keeps invariance.
            corotated_quadratic: false,
            projective: false,
            ..self.base.capabilities()
        }
    }
}
