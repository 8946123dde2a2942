//! Mass matrices: lumped (each element gives an equal share of its mass ρV to
//! each of its vertices) or consistent (Galerkin: ρV/20 (1 + δᵢⱼ) per scalar
//! component for a tetrahedron, ρA/12 (1 + δᵢⱼ) for a triangle). The consistent
//! rows sum to the lumped masses, so gravity (M·g) is the same for both.

use super::EnergyTerm;
use crate::error::{HookeError, Result};
use crate::linalg::LowerPattern;

/// Which mass matrix the integrators use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MassKind {
    /// Diagonal: each element gives an equal share of its mass to each vertex.
    #[default]
    Lumped,
    /// The consistent (Galerkin) mass matrix.
    Consistent,
}

/// The model's mass matrix.
#[derive(Clone, Debug)]
pub struct MassMatrix {
    kind: MassKind,
    dimension: usize,
    /// Lumped (row-sum) mass of each vertex.
    lumped: Vec<f64>,
    /// The lumped mass of each DOF (kept so that hot loops need no division).
    per_dof: Vec<f64>,
    /// The matrix on the model's pattern (diagonal only when lumped).
    values: Vec<f64>,
}

impl MassMatrix {
    /// From the elements of the terms that have them, plus masses carried by
    /// vertices themselves (spring networks; lumped even in a consistent matrix).
    /// Every vertex must end up with a positive mass.
    pub fn assemble(
        kind: MassKind,
        dimension: usize,
        pattern: &LowerPattern,
        terms: &[Box<dyn EnergyTerm>],
        vertex_masses: &[f64],
    ) -> Result<MassMatrix> {
        let vertex_count = pattern.size / dimension;
        let mut lumped = vec![0.0; vertex_count];
        let mut values = vec![0.0; pattern.nonzeros()];
        for term in terms {
            if let Some(elements) = term.as_elasticity() {
                let consistent = (kind == MassKind::Consistent).then_some((pattern, values.as_mut_slice()));
                elements.add_masses(&mut lumped, consistent);
            }
        }
        for (total, extra) in lumped.iter_mut().zip(vertex_masses) {
            *total += extra;
        }
        if let Some(v) = lumped.iter().position(|m| m.is_nan() || *m <= 0.0) {
            let owned = terms
                .iter()
                .filter_map(|term| term.as_elasticity())
                .any(|elements| (0..elements.element_count()).any(|e| elements.element_vertices(e).contains(&v)));
            let reason = if owned {
                format!(
                    "vertex {v} has no mass: the density × volume of its elements is {}",
                    lumped[v]
                )
            } else {
                format!("vertex {v} has no mass: it belongs to no element and no spring network")
            };
            return Err(HookeError::Mesh { reason });
        }
        let diagonal = pattern.diagonal_positions();
        match kind {
            MassKind::Consistent => {
                for (dof, k) in diagonal.into_iter().enumerate() {
                    values[k] += vertex_masses.get(dof / dimension).copied().unwrap_or(0.0);
                }
            }
            MassKind::Lumped => {
                for (dof, k) in diagonal.into_iter().enumerate() {
                    values[k] = lumped[dof / dimension];
                }
            }
        }
        let per_dof = lumped.iter().flat_map(|&m| std::iter::repeat_n(m, dimension)).collect();
        Ok(MassMatrix {
            kind,
            dimension,
            lumped,
            per_dof,
            values,
        })
    }

    /// Whether it is lumped or consistent.
    pub fn kind(&self) -> MassKind {
        self.kind
    }

    /// Lumped (row-sum) mass of each vertex.
    pub fn lumped(&self) -> &[f64] {
        &self.lumped
    }

    /// M's diagonal, DOF by DOF, when M is diagonal (lumped): M v is then
    /// `diagonal[i] * v[i]` entry by entry, as [`Self::multiply`] computes it.
    pub fn diagonal(&self) -> Option<&[f64]> {
        match self.kind {
            MassKind::Lumped => Some(&self.per_dof),
            MassKind::Consistent => None,
        }
    }

    /// Lumped mass of DOF i.
    #[inline]
    pub fn of_dof(&self, i: usize) -> f64 {
        self.per_dof[i]
    }

    /// Coordinates per vertex.
    pub fn dimension(&self) -> usize {
        self.dimension
    }

    /// The matrix's values on the model's pattern.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// out = M v (`pattern` is the model's).
    pub fn multiply(&self, pattern: &LowerPattern, v: &[f64], out: &mut [f64]) {
        match self.kind {
            MassKind::Lumped => {
                for ((o, x), m) in out.iter_mut().zip(v).zip(&self.per_dof) {
                    *o = m * x;
                }
            }
            MassKind::Consistent => pattern.symmetric_multiply(&self.values, v, out),
        }
    }
}
