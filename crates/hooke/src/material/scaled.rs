//! A material with its stiffness scaled: ψ, P and ∂P/∂F of a base material
//! times a factor, its density unchanged. Dynamics-aware coarsening (DAC,
//! Chen et al. 2017, the baseline EigenFit generalises) rescales a coarse mesh's
//! Young's modulus this way for every model, not only those with a modulus.

use super::{Evaluation, Material, MaterialCapabilities, MaterialRef, StressDerivative, Want};
use nalgebra::Matrix3;

/// A base material whose energy, stress and stiffness are multiplied by a factor, its
/// density unchanged (dynamics-aware coarsening, Chen et al. 2017).
#[derive(Clone, Debug)]
pub struct Scaled {
    /// The material scaled.
    pub base: MaterialRef,
    /// The factor on ψ, P and ∂P/∂F.
    pub factor: f64,
}

impl Material for Scaled {
    fn name(&self) -> String {
        format!("{} × {}", self.base.name(), self.factor)
    }

    fn density(&self) -> f64 {
        self.base.density()
    }

    fn evaluate(&self, f: &Matrix3<f64>, want: Want) -> Evaluation {
        let mut evaluation = self.base.evaluate(f, want);
        evaluation.energy_density *= self.factor;
        evaluation.first_piola *= self.factor;
        evaluation.first_piola_derivative = evaluation.first_piola_derivative.map(|d| match d {
            StressDerivative::Matrix(c) => StressDerivative::Matrix(c * self.factor),
            StressDerivative::Eigensystem(mut system) => {
                system.scaling_values *= self.factor;
                for pair in &mut system.pair_values {
                    pair.0 *= self.factor;
                    pair.1 *= self.factor;
                }
                StressDerivative::Eigensystem(system)
            }
        });
        evaluation
    }

    fn evaluate_symmetric(&self, s: &Matrix3<f64>, want: Want) -> Option<super::symmetric::SymmetricEvaluation> {
        let mut evaluation = self.base.evaluate_symmetric(s, want)?;
        evaluation.energy *= self.factor;
        evaluation.gradient *= self.factor;
        evaluation.hessian *= self.factor;
        Some(evaluation)
    }

    fn capabilities(&self) -> MaterialCapabilities {
        self.base.capabilities()
    }

    fn laplacian_weight(&self, stretches: &super::laplacian_weight::StretchSamples) -> Option<f64> {
        self.base.laplacian_weight(stretches).map(|k| k * self.factor)
    }
}
