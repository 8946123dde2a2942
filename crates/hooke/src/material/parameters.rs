//! User parameters (E, ν, ρ) and the Lamé pair used inside.

use crate::error::{HookeError, Result};
use crate::numbers::readable;

/// Lamé parameters: shear modulus μ and first parameter λ, in Pa.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lame {
    /// μ, the shear modulus, Pa.
    pub mu: f64,
    /// λ, Lamé's first parameter, Pa.
    pub lambda: f64,
}

impl Lame {
    /// From Young's modulus and Poisson ratio (3D).
    pub fn from_youngs_poisson(youngs_modulus: f64, poisson_ratio: f64) -> Lame {
        let e = youngs_modulus;
        let nu = poisson_ratio;
        Lame {
            mu: e / (2.0 * (1.0 + nu)),
            lambda: e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)),
        }
    }

    /// Bulk modulus κ = λ + 2μ/3.
    pub fn bulk_modulus(&self) -> f64 {
        self.lambda + 2.0 * self.mu / 3.0
    }
}

/// The stiffest modulus accepted, in Pa. Diamond is 1.2e12 Pa; far beyond
/// this, products in the stiffness (λ + 2μ, then times strains and volumes)
/// overflow double precision and a run fails inside the solver instead of at
/// the scene.
pub const MAX_MODULUS: f64 = 1e100;

/// The range of densities accepted, in kg/m³ (air is about 1.2, osmium
/// 22 600). Outside it a vertex mass ρ V / 4 underflows to zero or overflows.
pub const DENSITY_RANGE: (f64, f64) = (1e-100, 1e100);

/// Why a density cannot be used, if it cannot.
pub fn density_problem(density: f64) -> Option<String> {
    let (low, high) = DENSITY_RANGE;
    if !(density.is_finite() && density > 0.0) {
        Some(format!(
            "density must be a positive number of kg/m³, got {}",
            readable(density)
        ))
    } else if !(low..=high).contains(&density) {
        Some(format!(
            "density {} kg/m³ is outside the range Hooke can compute with, {low:e} to {high:e} kg/m³ \
             (vertex masses would underflow to zero or overflow)",
            readable(density)
        ))
    } else {
        None
    }
}

/// Why a modulus (Pa) named `name` cannot be used, if it cannot.
pub fn modulus_problem(name: &str, value: f64) -> Option<String> {
    if !(value.is_finite() && value > 0.0) {
        Some(format!(
            "{name} must be a positive number of pascals, got {}",
            readable(value)
        ))
    } else if value > MAX_MODULUS {
        Some(format!(
            "{name} = {} Pa is beyond the {MAX_MODULUS:e} Pa Hooke can compute with \
             (diamond is 1.2e12 Pa): the stiffness would overflow double precision",
            readable(value)
        ))
    } else {
        None
    }
}

/// What a user states about a material: Young's modulus (Pa), Poisson ratio and density (kg/m³).
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialParameters {
    /// Young's modulus E, Pa.
    pub youngs_modulus: f64,
    /// Poisson's ratio ν, in (−1, 0.5).
    pub poisson_ratio: f64,
    /// Mass density ρ, kg/m³.
    pub density: f64,
}

impl MaterialParameters {
    /// Checks the physical ranges; `context` names where the values came from.
    pub fn validate(&self, context: &str) -> Result<()> {
        let fail = |reason: String| {
            Err(HookeError::Material {
                context: context.to_string(),
                reason,
            })
        };
        if let Some(problem) = modulus_problem("youngs_modulus", self.youngs_modulus) {
            return fail(problem);
        }
        if !(self.poisson_ratio > -1.0 && self.poisson_ratio < 0.5) {
            return fail(format!(
                "poisson_ratio must lie in (-1, 0.5) (0.5 is incompressible, which displacement-based elements cannot represent), got {}",
                self.poisson_ratio
            ));
        }
        if let Some(problem) = density_problem(self.density) {
            return fail(problem);
        }
        // A Poisson ratio just below ½ makes λ far larger than E.
        let lame = self.lame();
        let p_wave = lame.lambda + 2.0 * lame.mu;
        if let Some(problem) = modulus_problem("the P-wave modulus λ + 2μ", p_wave) {
            return fail(format!(
                "{problem} (from youngs_modulus {} and poisson_ratio {})",
                readable(self.youngs_modulus),
                self.poisson_ratio
            ));
        }
        Ok(())
    }

    /// The Lamé pair of E and ν ([`Lame::from_youngs_poisson`]).
    pub fn lame(&self) -> Lame {
        Lame::from_youngs_poisson(self.youngs_modulus, self.poisson_ratio)
    }
}
