//! The isotropic family as a [`Material`]: one of the models of
//! [`MaterialModel`] with its Lamé pair and density. Scenes give Young's
//! modulus, Poisson ratio and density.

use super::entry::{settings_from, MaterialContext, MaterialEntry, MaterialSource};
use super::{evaluate, Evaluation, Lame, Material, MaterialCapabilities, MaterialModel, MaterialParameters, Want};
use crate::error::{HookeError, Result};
use nalgebra::Matrix3;
use std::sync::Arc;

/// An isotropic model with its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IsotropicMaterial {
    /// Which constitutive model.
    pub model: MaterialModel,
    /// Its Lamé parameters, Pa.
    pub lame: Lame,
    /// Mass density, kg/m³.
    pub density: f64,
}

impl IsotropicMaterial {
    /// From the parameters a user states (validate them first).
    pub fn new(model: MaterialModel, parameters: &MaterialParameters) -> IsotropicMaterial {
        IsotropicMaterial {
            model,
            lame: parameters.lame(),
            density: parameters.density,
        }
    }

    /// The same, shared.
    pub fn shared(model: MaterialModel, parameters: &MaterialParameters) -> Arc<dyn Material> {
        Arc::new(IsotropicMaterial::new(model, parameters))
    }
}

impl Material for IsotropicMaterial {
    fn name(&self) -> String {
        self.model.name().to_string()
    }

    fn density(&self) -> f64 {
        self.density
    }

    fn evaluate(&self, f: &Matrix3<f64>, want: Want) -> Evaluation {
        evaluate(self.model, f, &self.lame, want)
    }

    fn evaluate_stresses(&self, f: &[Matrix3<f64>], want: Want, energies: &mut [f64], stresses: &mut [Matrix3<f64>]) {
        super::evaluate_stresses(self.model, f, &self.lame, want, energies, stresses)
    }

    fn evaluate_symmetric(&self, s: &Matrix3<f64>, want: Want) -> Option<super::symmetric::SymmetricEvaluation> {
        super::evaluate_symmetric(self.model, s, &self.lame, want)
    }

    fn capabilities(&self) -> MaterialCapabilities {
        MaterialCapabilities {
            defined_under_inversion: !self.model.has_undefined_states(),
            rotation_invariant: self.model != MaterialModel::Linear,
            corotated_quadratic: self.model == MaterialModel::Corotational,
            projective: self.model == MaterialModel::Arap,
        }
    }
}

/// The scene names of the family.
const NAMES: [&str; 8] = [
    "linear",
    "corotational",
    "st_venant_kirchhoff",
    "neo_hookean",
    "stable_neo_hookean",
    "fixed_corotational",
    "arap",
    "modified_neo_hookean",
];

fn parse(name: &str, settings: &toml::Table, context: &MaterialContext) -> Result<MaterialSource> {
    let model = MaterialModel::ALL
        .into_iter()
        .find(|m| m.name() == name)
        .ok_or_else(|| HookeError::scene(format!("{}.model", context.key), format!("no isotropic model {name}")))?;
    let parameters: MaterialParameters = settings_from(settings, context.key)?;
    parameters.validate(context.key)?;
    Ok(MaterialSource::Uniform(IsotropicMaterial::shared(model, &parameters)))
}

pub(crate) const ENTRY: MaterialEntry = MaterialEntry {
    names: &NAMES,
    keys: &["youngs_modulus", "poisson_ratio", "density"],
    summary: "isotropic hyperelastic models: youngs_modulus (Pa), poisson_ratio, density (kg/m³)",
    parse,
};
