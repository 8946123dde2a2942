//! The linear tetrahedron: shape-function gradients, deformation gradient, and the
//! chain rule from P and ∂P/∂F to nodal forces and the 12×12 stiffness.

use super::kind::{packed_index, ElementKind};
use crate::material::{vec_index, Matrix9, StressDerivative, StretchEigensystem, PAIRS};
use nalgebra::{Matrix3, Vector3};

/// Entries of the lower triangle of a symmetric 12×12 element matrix.
pub const PACKED_HESSIAN_LEN: usize = 78;

/// The linear (four-node) tetrahedron.
pub struct LinearTetrahedron;

impl ElementKind for LinearTetrahedron {
    const NODES: usize = 4;
    const DIMENSION: usize = 3;
    const PACKED: usize = PACKED_HESSIAN_LEN;
    type Geometry = TetrahedronGeometry;

    fn name() -> &'static str {
        "tetrahedra"
    }

    fn geometry(corners: &[Vector3<f64>]) -> Option<TetrahedronGeometry> {
        TetrahedronGeometry::from_corners(&[corners[0], corners[1], corners[2], corners[3]])
    }

    fn empty() -> TetrahedronGeometry {
        TetrahedronGeometry::EMPTY
    }

    fn measure(geometry: &TetrahedronGeometry) -> f64 {
        geometry.rest_volume
    }

    #[inline]
    fn deformation_gradient(geometry: &TetrahedronGeometry, local: &[f64]) -> Matrix3<f64> {
        let mut f = Matrix3::zeros();
        for (i, g) in geometry.shape_gradients().iter().enumerate() {
            let x = Vector3::new(local[3 * i], local[3 * i + 1], local[3 * i + 2]);
            f += x * g.transpose();
        }
        f
    }

    #[inline]
    fn deformation_gradient_at(geometry: &TetrahedronGeometry, vertices: &[usize], x: &[f64]) -> Matrix3<f64> {
        let mut f = Matrix3::zeros();
        for (&v, g) in vertices.iter().zip(&geometry.shape_gradients()) {
            let p: [f64; 3] = x[3 * v..3 * v + 3].try_into().expect("three coordinates a vertex");
            f += Vector3::from(p) * g.transpose();
        }
        f
    }

    #[inline]
    fn gradient(geometry: &TetrahedronGeometry, first_piola: &Matrix3<f64>, out: &mut [f64]) {
        out.copy_from_slice(&geometry.gradient(first_piola));
    }

    #[inline]
    fn stiffness(geometry: &TetrahedronGeometry, derivative: &StressDerivative, out: &mut [f64]) {
        let packed: &mut [f64; PACKED_HESSIAN_LEN] = out.try_into().expect("a tetrahedron has 78 packed entries");
        match derivative {
            StressDerivative::Matrix(c) => geometry.hessian_into(c, packed),
            StressDerivative::Eigensystem(system) => geometry.hessian_from_eigensystem_into(system, packed),
        }
    }

    fn consistent_mass(mass: f64, i: usize, j: usize) -> f64 {
        mass / 20.0 * if i == j { 2.0 } else { 1.0 }
    }
}

/// Rest-state quantities of one tetrahedron.
#[derive(Clone, Copy, Debug)]
pub struct TetrahedronGeometry {
    /// ∇N₁, ∇N₂, ∇N₃ in the rest configuration: the rows of Dm⁻¹ (Kharevych 2010
    /// thesis, §2.2.1; taking them from Dm⁻¹ sidesteps the thesis's missing 1/6 in its
    /// face-normal form). ∇N₀ is minus their sum, formed when it is read:
    /// the gradient passes read every element's geometry, and 80 bytes
    /// instead of 104 leave more of the cache to the solve that follows.
    gradients: [Vector3<f64>; 3],
    /// Volume V at rest, m³ (positive).
    pub rest_volume: f64,
}

impl TetrahedronGeometry {
    /// An element that contributes nothing (zero volume, zero gradients).
    pub const EMPTY: TetrahedronGeometry = TetrahedronGeometry {
        gradients: [Vector3::new(0.0, 0.0, 0.0); 3],
        rest_volume: 0.0,
    };

    /// ∇N₀ … ∇N₃ in the rest configuration.
    #[inline(always)]
    pub fn shape_gradients(&self) -> [Vector3<f64>; 4] {
        let [g1, g2, g3] = self.gradients;
        [-(g1 + g2 + g3), g1, g2, g3]
    }

    /// The geometry of a tet whose rest corners are given; None when it is flat or inverted.
    pub fn from_corners(x: &[Vector3<f64>; 4]) -> Option<TetrahedronGeometry> {
        let dm = Matrix3::from_columns(&[x[1] - x[0], x[2] - x[0], x[3] - x[0]]);
        let volume = dm.determinant() / 6.0;
        let inverse = dm.try_inverse().filter(|_| volume > 0.0)?;
        let g1: Vector3<f64> = inverse.row(0).transpose();
        let g2: Vector3<f64> = inverse.row(1).transpose();
        let g3: Vector3<f64> = inverse.row(2).transpose();
        Some(TetrahedronGeometry {
            gradients: [g1, g2, g3],
            rest_volume: volume,
        })
    }

    /// F = Σᵢ xᵢ ∇Nᵢᵀ.
    #[inline]
    pub fn deformation_gradient(&self, x: &[Vector3<f64>; 4]) -> Matrix3<f64> {
        let mut f = Matrix3::zeros();
        for (x, g) in x.iter().zip(&self.shape_gradients()) {
            f += x * g.transpose();
        }
        f
    }

    /// ∂(Vψ)/∂xᵢ = V P ∇Nᵢ, as 12 values ordered (vertex, axis).
    #[inline]
    pub fn gradient(&self, first_piola: &Matrix3<f64>) -> [f64; 12] {
        let mut out = [0.0; 12];
        for (i, g) in self.shape_gradients().iter().enumerate() {
            let fi = first_piola * g * self.rest_volume;
            out[3 * i..3 * i + 3].copy_from_slice(fi.as_slice());
        }
        out
    }

    /// V Σₖ λₖ (Bᵀqₖ)(Bᵀqₖ)ᵀ for the nine eigen-modes qₖ = vec(U Dₖ Vᵀ) of ∂P/∂F.
    /// Bᵀ vec(u vᵀ) at vertex n is u (v·∇Nₙ), so with w = Vᵀ[∇N₀ … ∇N₃] each mode's
    /// 12-vector costs a few dozen operations and the 9×9 matrix is never formed.
    pub fn hessian_from_eigensystem_into(&self, system: &StretchEigensystem, packed: &mut [f64; PACKED_HESSIAN_LEN]) {
        let u = &system.u;
        let g = self.shape_gradients();
        let w: [[f64; 4]; 3] = std::array::from_fn(|j| std::array::from_fn(|n| system.v.column(j).dot(&g[n])));
        packed.fill(0.0);
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
    }

    /// Packed lower triangle of V Bᵀ C B, where B = ∂vec(F)/∂x:
    /// H[(i,a),(j,c)] = V Σ_{b,d} C[(a,b),(c,d)] ∇Nᵢ\[b\] ∇Nⱼ\[d\].
    #[inline]
    pub fn hessian_into(&self, c: &Matrix9, packed: &mut [f64; PACKED_HESSIAN_LEN]) {
        let g = &self.shape_gradients();
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
        for p in 0..12 {
            let (i, a) = (p / 3, p % 3);
            for (q, column) in cb.iter().enumerate().take(p + 1) {
                let value = (0..3).map(|b| column[vec_index(a, b)] * g[i][b]).sum::<f64>();
                packed[packed_index(p, q)] = value * self.rest_volume;
            }
        }
    }

    /// The packed element stiffness for a 9×9 ∂P/∂F.
    pub fn hessian(&self, c: &Matrix9) -> [f64; PACKED_HESSIAN_LEN] {
        let mut packed = [0.0; PACKED_HESSIAN_LEN];
        self.hessian_into(c, &mut packed);
        packed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// F read in place from all the positions is, bit for bit, F of the
        /// element's corners copied out first (the assembly's two paths).
        #[test]
        fn f_read_in_place_equals_f_of_the_copied_corners(
            sizes in prop::array::uniform3(0.5f64..1.5),
            shears in prop::array::uniform3(-0.5f64..0.5),
            x in prop::collection::vec(-3.0f64..3.0, 30),
        ) {
            let corners = [
                Vector3::zeros(),
                Vector3::new(sizes[0], 0.0, 0.0),
                Vector3::new(shears[0], sizes[1], 0.0),
                Vector3::new(shears[1], shears[2], sizes[2]),
            ];
            let geometry = TetrahedronGeometry::from_corners(&corners).expect("a right-handed tetrahedron");
            let vertices = [7, 2, 9, 4];
            let local: Vec<f64> = vertices.iter().flat_map(|&v| x[3 * v..3 * v + 3].to_vec()).collect();
            let in_place = LinearTetrahedron::deformation_gradient_at(&geometry, &vertices, &x);
            let copied = LinearTetrahedron::deformation_gradient(&geometry, &local);
            for k in 0..9 {
                prop_assert_eq!(in_place[k].to_bits(), copied[k].to_bits());
            }
        }
    }
}
