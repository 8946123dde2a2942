//! Mass matrices of linear tetrahedra.
//!
//! The consistent element mass is ρV/20 (1 + δᵢⱼ) per scalar component; its row
//! sums are the lumped masses ρV/4, so gravity (M·g) is the same for both.

use crate::mesh::TetMesh;

/// Which mass matrix the integrators use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MassKind {
    /// Diagonal: each element gives a quarter of its mass to each vertex.
    #[default]
    Lumped,
    /// The consistent (Galerkin) mass matrix.
    Consistent,
}

/// Lumped vertex masses Σₑ ρₑVₑ/4.
pub fn lumped_masses(mesh: &TetMesh, element_masses: &[f64]) -> Vec<f64> {
    let mut masses = vec![0.0; mesh.vertex_count()];
    for (tet, m) in mesh.tets.iter().zip(element_masses) {
        for &v in tet {
            masses[v] += 0.25 * m;
        }
    }
    masses
}

/// Scalar consistent mass between local vertices i and j of an element of mass m.
#[inline]
pub fn consistent_entry(element_mass: f64, i: usize, j: usize) -> f64 {
    element_mass / 20.0 * if i == j { 2.0 } else { 1.0 }
}
