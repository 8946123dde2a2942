//! Projective-dynamics constraints as a material (Liu 2018 thesis, ch. 6): strain
//! limiting, volume preservation, or both in one element (Fig. 6.2 combines
//! them). Each constraint c is k_c/2 ‖F − p_c(F)‖², so their sum is minimised
//! exactly by local/global with the Laplacian weight Σ k_c:
//!
//! - `model = "strain_limit"`, `min`, `max`: stretches in [min, max], k = 2μ
//!   ([`super::strain_limit`]); an optional `volume = { min, max }` adds the
//!   volume constraint.
//! - `model = "volume"`, `min`, `max`: volume ratio det F in [min, max],
//!   k = 3λ + 2μ = 3κ ([`super::volume`]).
//!
//! μ and λ come from `youngs_modulus` and `poisson_ratio`, so ν sets the
//! relative weight of the two constraints.

use super::entry::{settings_from, MaterialContext, MaterialEntry, MaterialSource};
use super::isotropic::{evaluate, StretchEnergy};
use super::strain_limit::StrainLimitEnergy;
use super::volume::VolumeEnergy;
use super::{Evaluation, Lame, Material, MaterialCapabilities, MaterialParameters, Want};
use crate::error::{HookeError, Result};
use nalgebra::{Matrix3, Vector3};
use std::sync::Arc;

/// A sum of projective constraints on the stretches.
#[derive(Clone, Debug)]
pub struct Projective {
    /// The strain-limiting constraint; None: no limit on the stretches.
    pub strain: Option<StrainLimitEnergy>,
    /// The volume constraint; None: no limit on the volume ratio.
    pub volume: Option<VolumeEnergy>,
    /// Mass density, kg/m³.
    pub density: f64,
}

impl Projective {
    /// Strain limiting alone.
    pub fn strain_limit(energy: StrainLimitEnergy, density: f64) -> Self {
        Projective {
            strain: Some(energy),
            volume: None,
            density,
        }
    }
}

impl StretchEnergy for Projective {
    fn energy(&self, s: &Vector3<f64>, lame: &Lame) -> f64 {
        self.strain.map_or(0.0, |e| e.energy(s, lame)) + self.volume.map_or(0.0, |e| e.energy(s, lame))
    }

    fn gradient(&self, s: &Vector3<f64>, lame: &Lame) -> Vector3<f64> {
        self.strain.map_or(Vector3::zeros(), |e| e.gradient(s, lame))
            + self.volume.map_or(Vector3::zeros(), |e| e.gradient(s, lame))
    }

    fn hessian(&self, s: &Vector3<f64>, lame: &Lame) -> Matrix3<f64> {
        self.strain.map_or(Matrix3::zeros(), |e| e.hessian(s, lame))
            + self.volume.map_or(Matrix3::zeros(), |e| e.hessian(s, lame))
    }
}

const NO_LAME: Lame = Lame { mu: 0.0, lambda: 0.0 };

impl Material for Projective {
    fn name(&self) -> String {
        match (self.strain.is_some(), self.volume.is_some()) {
            (true, true) => "strain_limit + volume".into(),
            (false, true) => "volume".into(),
            _ => "strain_limit".into(),
        }
    }

    fn density(&self) -> f64 {
        self.density
    }

    fn evaluate(&self, f: &Matrix3<f64>, want: Want) -> Evaluation {
        evaluate(self, f, &NO_LAME, want)
    }

    fn capabilities(&self) -> MaterialCapabilities {
        MaterialCapabilities {
            defined_under_inversion: true,
            rotation_invariant: true,
            corotated_quadratic: false,
            projective: true,
        }
    }

    /// Σ k_c: local/global's global step is then exact for the sum.
    fn laplacian_weight(&self, _: &super::laplacian_weight::StretchSamples) -> Option<f64> {
        Some(2.0 * self.strain.map_or(0.0, |e| e.mu) + self.volume.map_or(0.0, |e| e.stiffness))
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Range {
    min: f64,
    max: f64,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    youngs_modulus: f64,
    poisson_ratio: f64,
    density: f64,
    min: f64,
    max: f64,
    volume: Option<Range>,
}

/// 0 < min ≤ 1 ≤ max < ∞, or an error naming `key`.
fn checked_range(key: &str, min: f64, max: f64) -> Result<()> {
    if min > 0.0 && min <= 1.0 && max >= 1.0 && max.is_finite() {
        return Ok(());
    }
    Err(HookeError::scene(
        key,
        format!("needs 0 < min ≤ 1 ≤ max, got min = {min}, max = {max}"),
    ))
}

fn parse(name: &str, table: &toml::Table, context: &MaterialContext) -> Result<MaterialSource> {
    let key = context.key;
    let settings: Settings = settings_from(table, key)?;
    let parameters = MaterialParameters {
        youngs_modulus: settings.youngs_modulus,
        poisson_ratio: settings.poisson_ratio,
        density: settings.density,
    };
    parameters.validate(key)?;
    checked_range(key, settings.min, settings.max)?;
    let lame = parameters.lame();
    let volume = |min: f64, max: f64| VolumeEnergy {
        stiffness: 3.0 * lame.lambda + 2.0 * lame.mu,
        min,
        max,
    };
    let material = if name == "volume" {
        if settings.volume.is_some() {
            return Err(HookeError::scene(
                format!("{key}.volume"),
                "belongs to strain_limit; a volume material's range is its own min and max",
            ));
        }
        Projective {
            strain: None,
            volume: Some(volume(settings.min, settings.max)),
            density: settings.density,
        }
    } else {
        let extra = match settings.volume {
            Some(range) => {
                checked_range(&format!("{key}.volume"), range.min, range.max)?;
                Some(volume(range.min, range.max))
            }
            None => None,
        };
        Projective {
            strain: Some(StrainLimitEnergy {
                mu: lame.mu,
                min: settings.min,
                max: settings.max,
            }),
            volume: extra,
            density: settings.density,
        }
    };
    Ok(MaterialSource::Uniform(Arc::new(material)))
}

pub(crate) const ENTRY: MaterialEntry = MaterialEntry {
    names: &["strain_limit", "volume"],
    keys: &["youngs_modulus", "poisson_ratio", "density", "min", "max", "volume"],
    summary: "projective constraints: strain_limit = μ Σ (σᵢ − clamp(σᵢ, min, max))² (k = 2μ), optionally with \
              volume = { min, max }; volume = k/2 ‖F − p(F)‖², p the closest F with det in [min, max] (k = 3λ + 2μ)",
    parse,
};
