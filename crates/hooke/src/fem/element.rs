//! One linear tetrahedron: shape-function gradients, deformation gradient, and the
//! chain rule from P and ∂P/∂F to nodal forces and the 12×12 stiffness.

use crate::error::{HookeError, Result};
use crate::material::{vec_index, Matrix9, StressDerivative, StretchEigensystem, PAIRS};
use crate::mesh::TetMesh;
use nalgebra::{Matrix3, Vector3};

/// Entries of the lower triangle of a symmetric 12×12 element matrix.
pub const PACKED_HESSIAN_LEN: usize = 78;

/// Index of local entry (p, q), p ≥ q, in the packed lower triangle.
#[inline]
pub fn packed_index(p: usize, q: usize) -> usize {
    debug_assert!(p >= q);
    p * (p + 1) / 2 + q
}

/// Rest-state quantities of one element.
#[derive(Clone, Copy, Debug)]
pub struct ElementGeometry {
    /// ∇Nᵢ in the rest configuration: rows of Dm⁻¹ for i = 1..3, minus their sum for i = 0
    /// (seed 001 §2.3; taking them from Dm⁻¹ sidesteps the thesis's missing 1/6 in its face-normal form).
    pub shape_gradients: [Vector3<f64>; 4],
    pub rest_volume: f64,
}

impl ElementGeometry {
    /// An element that contributes nothing (zero volume, zero gradients).
    pub const EMPTY: ElementGeometry = ElementGeometry {
        shape_gradients: [Vector3::new(0.0, 0.0, 0.0); 4],
        rest_volume: 0.0,
    };

    /// The geometry of a tet whose rest corners are given; None when it is flat or inverted.
    pub fn from_corners(x: &[Vector3<f64>; 4]) -> Option<ElementGeometry> {
        let dm = Matrix3::from_columns(&[x[1] - x[0], x[2] - x[0], x[3] - x[0]]);
        let volume = dm.determinant() / 6.0;
        let inverse = dm.try_inverse().filter(|_| volume > 0.0)?;
        let g1: Vector3<f64> = inverse.row(0).transpose();
        let g2: Vector3<f64> = inverse.row(1).transpose();
        let g3: Vector3<f64> = inverse.row(2).transpose();
        Some(ElementGeometry {
            shape_gradients: [-(g1 + g2 + g3), g1, g2, g3],
            rest_volume: volume,
        })
    }

    /// Precomputes every element; the mesh must already be oriented.
    pub fn for_mesh(mesh: &TetMesh) -> Result<Vec<ElementGeometry>> {
        (0..mesh.tet_count())
            .map(|e| {
                ElementGeometry::from_corners(&mesh.tets[e].map(|v| mesh.vertices[v])).ok_or_else(|| HookeError::Mesh {
                    reason: format!(
                        "element {e} has non-positive rest volume {:e}",
                        mesh.signed_volume(e, &mesh.vertices)
                    ),
                })
            })
            .collect()
    }

    /// F = Σᵢ xᵢ ∇Nᵢᵀ.
    #[inline]
    pub fn deformation_gradient(&self, x: &[Vector3<f64>; 4]) -> Matrix3<f64> {
        let mut f = Matrix3::zeros();
        for i in 0..4 {
            f += x[i] * self.shape_gradients[i].transpose();
        }
        f
    }

    /// ∂(Vψ)/∂xᵢ = V P ∇Nᵢ, as 12 values ordered (vertex, axis).
    #[inline]
    pub fn gradient(&self, first_piola: &Matrix3<f64>) -> [f64; 12] {
        let mut out = [0.0; 12];
        for i in 0..4 {
            let fi = first_piola * self.shape_gradients[i] * self.rest_volume;
            out[3 * i..3 * i + 3].copy_from_slice(fi.as_slice());
        }
        out
    }

    /// Packed lower triangle of the element stiffness for ∂P/∂F in either form.
    #[inline]
    pub fn stiffness(&self, derivative: &StressDerivative) -> [f64; PACKED_HESSIAN_LEN] {
        match derivative {
            StressDerivative::Matrix(c) => self.hessian(c),
            StressDerivative::Eigensystem(system) => self.hessian_from_eigensystem(system),
        }
    }

    /// V Σₖ λₖ (Bᵀqₖ)(Bᵀqₖ)ᵀ for the nine eigen-modes qₖ = vec(U Dₖ Vᵀ) of ∂P/∂F.
    /// Bᵀ vec(u vᵀ) at vertex n is u (v·∇Nₙ), so with w = Vᵀ[∇N₀ … ∇N₃] each mode's
    /// 12-vector costs a few dozen operations and the 9×9 matrix is never formed.
    pub fn hessian_from_eigensystem(&self, system: &StretchEigensystem) -> [f64; PACKED_HESSIAN_LEN] {
        let u = &system.u;
        let w: [[f64; 4]; 3] =
            std::array::from_fn(|j| std::array::from_fn(|n| system.v.column(j).dot(&self.shape_gradients[n])));
        let mut packed = [0.0; PACKED_HESSIAN_LEN];
        let mut add_mode = |value: f64, mode: &[f64; 12]| {
            if value == 0.0 {
                return;
            }
            let scaled = value * self.rest_volume;
            for p in 0..12 {
                let factor = scaled * mode[p];
                let row = &mut packed[p * (p + 1) / 2..p * (p + 1) / 2 + p + 1];
                for (entry, m) in row.iter_mut().zip(&mode[..=p]) {
                    *entry += factor * m;
                }
            }
        };
        for k in 0..3 {
            let e = system.scaling_vectors.column(k);
            let mut mode = [0.0; 12];
            for n in 0..4 {
                let weights = Vector3::new(e[0] * w[0][n], e[1] * w[1][n], e[2] * w[2][n]);
                mode[3 * n..3 * n + 3].copy_from_slice((u * weights).as_slice());
            }
            add_mode(system.scaling_values[k], &mode);
        }
        let inv_sqrt2 = std::f64::consts::FRAC_1_SQRT_2;
        for (&(flip, twist), (i, j)) in system.pair_values.iter().zip(PAIRS) {
            let (ui, uj) = (u.column(i), u.column(j));
            let mut flip_mode = [0.0; 12];
            let mut twist_mode = [0.0; 12];
            for n in 0..4 {
                let a = ui * (w[j][n] * inv_sqrt2);
                let b = uj * (w[i][n] * inv_sqrt2);
                flip_mode[3 * n..3 * n + 3].copy_from_slice((a + b).as_slice());
                twist_mode[3 * n..3 * n + 3].copy_from_slice((a - b).as_slice());
            }
            add_mode(flip, &flip_mode);
            add_mode(twist, &twist_mode);
        }
        packed
    }

    /// Packed lower triangle of V Bᵀ C B, where B = ∂vec(F)/∂x:
    /// H[(i,a),(j,c)] = V Σ_{b,d} C[(a,b),(c,d)] ∇Nᵢ[b] ∇Nⱼ[d].
    #[inline]
    pub fn hessian(&self, c: &Matrix9) -> [f64; PACKED_HESSIAN_LEN] {
        let g = &self.shape_gradients;
        // C B: column (j, c) is Σ_d C[:, (c,d)] ∇Nⱼ[d].
        let mut cb = [[0.0; 9]; 12];
        for j in 0..4 {
            for col in 0..3 {
                let column = &mut cb[3 * j + col];
                for d in 0..3 {
                    let weight = g[j][d];
                    let source = c.column(vec_index(col, d));
                    for (value, s) in column.iter_mut().zip(source.iter()) {
                        *value += weight * s;
                    }
                }
            }
        }
        let mut packed = [0.0; PACKED_HESSIAN_LEN];
        for p in 0..12 {
            let (i, a) = (p / 3, p % 3);
            for (q, column) in cb.iter().enumerate().take(p + 1) {
                let value = (0..3).map(|b| column[vec_index(a, b)] * g[i][b]).sum::<f64>();
                packed[packed_index(p, q)] = value * self.rest_volume;
            }
        }
        packed
    }
}
