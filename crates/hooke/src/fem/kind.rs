//! What the assembly needs from one kind of finite element: its rest data, the
//! deformation gradient, and the chain rule from P and ∂P/∂F to the element's
//! force and stiffness. Elements are linear simplices, so F is constant over each.

use crate::material::StressDerivative;
use nalgebra::{Matrix3, Vector3};

/// A kind of element (linear tetrahedron, linear triangle): the assembly and
/// the elasticity term are generic over it.
pub trait ElementKind: Send + Sync + 'static {
    /// Vertices per element.
    const NODES: usize;
    /// Coordinates per vertex (3, or 2 for plane strain).
    const DIMENSION: usize;
    /// Entries of the packed lower triangle of the element matrix
    /// (NODES·DIMENSION local DOFs, ordered vertex by vertex).
    const PACKED: usize;
    /// Rest-state quantities of one element.
    type Geometry: Copy + Send + Sync + std::fmt::Debug;

    /// The element's name in messages ("tetrahedra", "triangles").
    fn name() -> &'static str;
    /// Rest data from the corners (z = 0 in 2D); None when flat or inverted.
    fn geometry(corners: &[Vector3<f64>]) -> Option<Self::Geometry>;
    /// An element that contributes nothing (zero measure).
    fn empty() -> Self::Geometry;
    /// Volume (area per unit thickness in 2D), at rest.
    fn measure(geometry: &Self::Geometry) -> f64;
    /// F from the element's local positions (3×3; in 2D the in-plane block with F₃₃ = 1).
    fn deformation_gradient(geometry: &Self::Geometry, local: &[f64]) -> Matrix3<f64>;
    /// F of the element with vertices `vertices` from the positions of all
    /// vertices, the same value as [`Self::deformation_gradient`] of its
    /// local positions (a kind may read them in place instead of copying).
    #[inline]
    fn deformation_gradient_at(geometry: &Self::Geometry, vertices: &[usize], x: &[f64]) -> Matrix3<f64> {
        let d = Self::DIMENSION;
        let mut local = [0.0; 12];
        for (n, &v) in vertices.iter().enumerate() {
            local[n * d..(n + 1) * d].copy_from_slice(&x[d * v..d * v + d]);
        }
        Self::deformation_gradient(geometry, &local[..Self::NODES * d])
    }
    /// The element force ∂(measure·ψ)/∂x from P, into `out` (local DOFs).
    fn gradient(geometry: &Self::Geometry, first_piola: &Matrix3<f64>, out: &mut [f64]);
    /// The packed lower triangle of measure · Bᵀ (∂P/∂F) B, into `out`.
    fn stiffness(geometry: &Self::Geometry, derivative: &StressDerivative, out: &mut [f64]);
    /// Entry (i, j) of the consistent mass of an element of mass m, per scalar component.
    fn consistent_mass(mass: f64, i: usize, j: usize) -> f64;
}

/// Index of local entry (p, q), p ≥ q, in a packed lower triangle.
#[inline]
pub fn packed_index(p: usize, q: usize) -> usize {
    debug_assert!(p >= q);
    p * (p + 1) / 2 + q
}
