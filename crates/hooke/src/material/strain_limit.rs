//! Strain limiting, a projective material (seed 004 §2.9, Fig. 6.1–6.2):
//! ψ = μ Σᵢ (σᵢ − clamp(σᵢ, min, max))² = k/2 ‖F − p(F)‖² with k = 2μ and
//! p(F) = U clamp(Σ) Vᵀ, the closest deformation whose stretches lie in
//! [min, max]. Stretches inside the range cost nothing; outside, the material
//! pulls back like ARAP (which is min = max = 1). Projective: a local/global
//! iteration minimises it exactly with the Laplacian weight k = 2μ.

use super::entry::{settings_from, MaterialContext, MaterialEntry, MaterialSource};
use super::isotropic::{evaluate, StretchEnergy};
use super::{Evaluation, Lame, Material, MaterialCapabilities, MaterialParameters, Want};
use crate::error::{HookeError, Result};
use nalgebra::{Matrix3, Vector3};
use std::sync::Arc;

/// The energy in the stretches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StrainLimitEnergy {
    pub mu: f64,
    pub min: f64,
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

#[derive(Clone, Debug)]
pub struct StrainLimit {
    pub energy: StrainLimitEnergy,
    pub density: f64,
}

const NO_LAME: Lame = Lame { mu: 0.0, lambda: 0.0 };

impl Material for StrainLimit {
    fn name(&self) -> String {
        "strain_limit".into()
    }

    fn density(&self) -> f64 {
        self.density
    }

    fn evaluate(&self, f: &Matrix3<f64>, want: Want) -> Evaluation {
        evaluate(&self.energy, f, &NO_LAME, want)
    }

    fn capabilities(&self) -> MaterialCapabilities {
        MaterialCapabilities {
            defined_under_inversion: true,
            rotation_invariant: true,
            corotated_quadratic: false,
            projective: true,
        }
    }

    fn laplacian_weight(&self, _: &super::laplacian_weight::StretchSamples) -> Option<f64> {
        Some(2.0 * self.energy.mu)
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    youngs_modulus: f64,
    poisson_ratio: f64,
    density: f64,
    min: f64,
    max: f64,
}

fn parse(_name: &str, table: &toml::Table, context: &MaterialContext) -> Result<MaterialSource> {
    let key = context.key;
    let settings: Settings = settings_from(table, key)?;
    let parameters = MaterialParameters {
        youngs_modulus: settings.youngs_modulus,
        poisson_ratio: settings.poisson_ratio,
        density: settings.density,
    };
    parameters.validate(key)?;
    if !(settings.min > 0.0 && settings.min <= 1.0 && settings.max >= 1.0 && settings.max.is_finite()) {
        return Err(HookeError::scene(
            key,
            format!(
                "needs 0 < min ≤ 1 ≤ max, got min = {}, max = {}",
                settings.min, settings.max
            ),
        ));
    }
    Ok(MaterialSource::Uniform(Arc::new(StrainLimit {
        energy: StrainLimitEnergy {
            mu: parameters.lame().mu,
            min: settings.min,
            max: settings.max,
        },
        density: settings.density,
    })))
}

pub(crate) const ENTRY: MaterialEntry = MaterialEntry {
    names: &["strain_limit"],
    keys: &["youngs_modulus", "poisson_ratio", "density", "min", "max"],
    summary: "strain limiting (projective): μ Σ (σᵢ − clamp(σᵢ, min, max))², μ from youngs_modulus and poisson_ratio; \
              free within the stretch range [min, max]",
    parse,
};
