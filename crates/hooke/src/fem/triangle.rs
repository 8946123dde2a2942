//! The linear triangle in plane strain: 2 DOFs per vertex, F the in-plane 2×2
//! gradient embedded in 3×3 with F₃₃ = 1 (no out-of-plane strain). Any 3D
//! material then applies unchanged: P's in-plane block is the plane-strain
//! stress, and the in-plane 4×4 block of ∂P/∂F its derivative (a principal
//! submatrix, so PSD projection of the 9×9 carries over). Quantities are per
//! unit thickness: area instead of volume, J/m of energy, kg/m of mass.

use super::kind::{packed_index, ElementKind};
use crate::material::{vec_index, StressDerivative};
use nalgebra::{Matrix2, Matrix3, Vector2, Vector3};

/// Rest data of one triangle.
#[derive(Clone, Copy, Debug)]
pub struct TriangleGeometry {
    /// ∇Nᵢ at rest: rows of Dm⁻¹ for i = 1, 2, minus their sum for i = 0.
    pub shape_gradients: [Vector2<f64>; 3],
    /// Area at rest, m².
    pub rest_area: f64,
}

/// The linear (three-node) triangle.
pub struct LinearTriangle;

impl ElementKind for LinearTriangle {
    const NODES: usize = 3;
    const DIMENSION: usize = 2;
    const PACKED: usize = 21;
    type Geometry = TriangleGeometry;

    fn name() -> &'static str {
        "triangles"
    }

    fn geometry(corners: &[Vector3<f64>]) -> Option<TriangleGeometry> {
        let (a, b, c) = (corners[0].xy(), corners[1].xy(), corners[2].xy());
        let dm = Matrix2::from_columns(&[b - a, c - a]);
        let area = 0.5 * dm.determinant();
        let inverse = dm.try_inverse().filter(|_| area > 0.0)?;
        let g1: Vector2<f64> = inverse.row(0).transpose();
        let g2: Vector2<f64> = inverse.row(1).transpose();
        Some(TriangleGeometry {
            shape_gradients: [-(g1 + g2), g1, g2],
            rest_area: area,
        })
    }

    fn empty() -> TriangleGeometry {
        TriangleGeometry {
            shape_gradients: [Vector2::zeros(); 3],
            rest_area: 0.0,
        }
    }

    fn measure(geometry: &TriangleGeometry) -> f64 {
        geometry.rest_area
    }

    #[inline]
    fn deformation_gradient(geometry: &TriangleGeometry, local: &[f64]) -> Matrix3<f64> {
        let mut f = Matrix3::identity();
        f[(0, 0)] = 0.0;
        f[(1, 1)] = 0.0;
        for i in 0..3 {
            let g = &geometry.shape_gradients[i];
            for a in 0..2 {
                for b in 0..2 {
                    f[(a, b)] += local[2 * i + a] * g[b];
                }
            }
        }
        f
    }

    #[inline]
    fn gradient(geometry: &TriangleGeometry, first_piola: &Matrix3<f64>, out: &mut [f64]) {
        for i in 0..3 {
            let g = &geometry.shape_gradients[i];
            for a in 0..2 {
                out[2 * i + a] = geometry.rest_area * (first_piola[(a, 0)] * g[0] + first_piola[(a, 1)] * g[1]);
            }
        }
    }

    fn stiffness(geometry: &TriangleGeometry, derivative: &StressDerivative, out: &mut [f64]) {
        let c = match derivative {
            StressDerivative::Matrix(c) => *c,
            StressDerivative::Eigensystem(system) => system.to_matrix(),
        };
        // H[(i,a),(j,c)] = A Σ_{b,d} C[(a,b),(c,d)] ∇Nᵢ[b] ∇Nⱼ[d], in-plane indices only.
        let g = &geometry.shape_gradients;
        for p in 0..6 {
            let (i, a) = (p / 2, p % 2);
            for q in 0..=p {
                let (j, cc) = (q / 2, q % 2);
                let mut value = 0.0;
                for b in 0..2 {
                    for d in 0..2 {
                        value += c[(vec_index(a, b), vec_index(cc, d))] * g[i][b] * g[j][d];
                    }
                }
                out[packed_index(p, q)] = value * geometry.rest_area;
            }
        }
    }

    fn consistent_mass(mass: f64, i: usize, j: usize) -> f64 {
        mass / 12.0 * if i == j { 2.0 } else { 1.0 }
    }
}
