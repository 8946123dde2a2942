//! User parameters (E, ν, ρ) and the Lamé pair used inside.

use crate::error::{HookeError, Result};

/// Lamé parameters: shear modulus μ and first parameter λ, in Pa.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lame {
    pub mu: f64,
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

/// What a user states about a material: Young's modulus (Pa), Poisson ratio and density (kg/m³).
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct MaterialParameters {
    pub youngs_modulus: f64,
    pub poisson_ratio: f64,
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
        if !(self.youngs_modulus.is_finite() && self.youngs_modulus > 0.0) {
            return fail(format!(
                "youngs_modulus must be a positive number of pascals, got {}",
                self.youngs_modulus
            ));
        }
        if !(self.poisson_ratio > -1.0 && self.poisson_ratio < 0.5) {
            return fail(format!(
                "poisson_ratio must lie in (-1, 0.5) (0.5 is incompressible, which displacement-based elements cannot represent), got {}",
                self.poisson_ratio
            ));
        }
        if !(self.density.is_finite() && self.density > 0.0) {
            return fail(format!(
                "density must be a positive number of kg/m³, got {}",
                self.density
            ));
        }
        Ok(())
    }

    pub fn lame(&self) -> Lame {
        Lame::from_youngs_poisson(self.youngs_modulus, self.poisson_ratio)
    }
}
