//! Elasticity tensors in Voigt notation.
//!
//! Order xx, yy, zz, yz, xz, xy, with engineering shear strains: the strain
//! vector is (ε₁₁, ε₂₂, ε₃₃, 2ε₂₃, 2ε₁₃, 2ε₁₂), the stress vector (σ₁₁, σ₂₂, σ₃₃,
//! σ₂₃, σ₁₃, σ₁₂), σ = C ε and ψ = ½ εᵀ C ε. An isotropic material has
//! C₁₁ = λ + 2μ, C₁₂ = λ and shear diagonal μ. In 2D (plane strain) the order is
//! xx, yy, xy and C is 3×3; it acts on the 3D strain through the entries
//! (0, 1, 5) of the 3D order.

use crate::error::{HookeError, Result};
use nalgebra::{Matrix3, SMatrix, SVector};

/// A 6×6 matrix, such as an elasticity tensor in Voigt form.
pub type Matrix6 = SMatrix<f64, 6, 6>;
/// A 6-vector, such as a strain or a stress in Voigt form.
pub type Vector6 = SVector<f64, 6>;

/// The Voigt index of tensor entry (i, j).
#[inline]
pub fn voigt_index(i: usize, j: usize) -> usize {
    match (i.min(j), i.max(j)) {
        (0, 0) => 0,
        (1, 1) => 1,
        (2, 2) => 2,
        (1, 2) => 3,
        (0, 2) => 4,
        _ => 5,
    }
}

/// The Voigt strain of a symmetric tensor (engineering shears).
pub fn strain_vector(e: &Matrix3<f64>) -> Vector6 {
    Vector6::new(
        e[(0, 0)],
        e[(1, 1)],
        e[(2, 2)],
        e[(1, 2)] + e[(2, 1)],
        e[(0, 2)] + e[(2, 0)],
        e[(0, 1)] + e[(1, 0)],
    )
}

/// The symmetric tensor of a Voigt stress.
pub fn stress_tensor(s: &Vector6) -> Matrix3<f64> {
    Matrix3::new(s[0], s[5], s[4], s[5], s[1], s[3], s[4], s[3], s[2])
}

/// A symmetric, positive definite elasticity tensor (6×6 Voigt; a 2D tensor embedded).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ElasticityTensor {
    /// C as the 6×6 Voigt matrix (order xx, yy, zz, yz, xz, xy; engineering shears), Pa.
    pub voigt: Matrix6,
}

/// The 3D Voigt indices of the 2D order xx, yy, xy.
const PLANE_INDICES: [usize; 3] = [0, 1, 5];

impl ElasticityTensor {
    /// The isotropic tensor of a Lamé pair.
    pub fn isotropic(lame: &super::Lame) -> ElasticityTensor {
        let mut voigt = Matrix6::zeros();
        for i in 0..3 {
            for j in 0..3 {
                voigt[(i, j)] = lame.lambda;
            }
            voigt[(i, i)] += 2.0 * lame.mu;
            voigt[(i + 3, i + 3)] = lame.mu;
        }
        ElasticityTensor { voigt }
    }

    /// From the rows a scene gives: 6×6 in 3D, 3×3 in 2D (xx, yy, xy). The matrix
    /// must be symmetric and positive definite (every strain stores energy).
    /// `key` names it in errors.
    pub fn from_rows(rows: &[Vec<f64>], dimension: usize, key: &str) -> Result<ElasticityTensor> {
        let size = if dimension == 2 { 3 } else { 6 };
        if rows.len() != size || rows.iter().any(|r| r.len() != size) {
            return Err(HookeError::scene(
                key,
                format!(
                    "must be {size} rows of {size} numbers (Voigt order {}), got {} rows of {:?}",
                    if dimension == 2 {
                        "xx, yy, xy"
                    } else {
                        "xx, yy, zz, yz, xz, xy"
                    },
                    rows.len(),
                    rows.iter().map(Vec::len).collect::<Vec<_>>()
                ),
            ));
        }
        let values: Vec<f64> = rows.iter().flatten().copied().collect();
        Self::from_square(&values, size, key)
    }

    /// From the upper triangle, row by row (21 numbers in 3D, 6 in 2D).
    pub fn from_upper_triangle(values: &[f64], dimension: usize, key: &str) -> Result<ElasticityTensor> {
        let size = if dimension == 2 { 3 } else { 6 };
        if values.len() != size * (size + 1) / 2 {
            return Err(HookeError::scene(
                key,
                format!("needs {} numbers, got {}", size * (size + 1) / 2, values.len()),
            ));
        }
        let mut square = vec![0.0; size * size];
        let mut next = values.iter();
        for i in 0..size {
            for j in i..size {
                let v = *next.next().expect("length checked above");
                square[i * size + j] = v;
                square[j * size + i] = v;
            }
        }
        Self::from_square(&square, size, key)
    }

    fn from_square(values: &[f64], size: usize, key: &str) -> Result<ElasticityTensor> {
        if let Some(v) = values.iter().find(|v| !v.is_finite()) {
            return Err(HookeError::scene(key, format!("entries must be finite, got {v}")));
        }
        let matrix = nalgebra::DMatrix::from_row_slice(size, size, values);
        let scale = matrix.amax();
        if (&matrix - matrix.transpose()).amax() > 1e-9 * scale {
            return Err(HookeError::scene(key, "must be symmetric (C_ij = C_ji)"));
        }
        let lowest = matrix.clone().symmetric_eigenvalues().min();
        if lowest.is_nan() || lowest <= 1e-12 * scale {
            return Err(HookeError::scene(
                key,
                format!("must be positive definite (its lowest eigenvalue is {lowest:e}): some strain would store no or negative energy"),
            ));
        }
        let indices: Vec<usize> = if size == 3 {
            PLANE_INDICES.to_vec()
        } else {
            (0..6).collect()
        };
        let mut voigt = Matrix6::zeros();
        for (a, &i) in indices.iter().enumerate() {
            for (b, &j) in indices.iter().enumerate() {
                voigt[(i, j)] = 0.5 * (matrix[(a, b)] + matrix[(b, a)]);
            }
        }
        Ok(ElasticityTensor { voigt })
    }

    /// σ = C : ε for a symmetric strain tensor.
    pub fn stress(&self, strain: &Matrix3<f64>) -> Matrix3<f64> {
        stress_tensor(&(self.voigt * strain_vector(strain)))
    }

    /// ½ ε : C : ε.
    pub fn energy(&self, strain: &Matrix3<f64>) -> f64 {
        let e = strain_vector(strain);
        0.5 * e.dot(&(self.voigt * e))
    }

    /// C as a 9×9 matrix on column-major vec: entry (vec(i,j), vec(k,l)) is C[v(i,j), v(k,l)].
    pub fn matrix9(&self) -> super::Matrix9 {
        let mut c = super::Matrix9::zeros();
        for i in 0..3 {
            for j in 0..3 {
                for k in 0..3 {
                    for l in 0..3 {
                        c[(super::vec_index(i, j), super::vec_index(k, l))] =
                            self.voigt[(voigt_index(i, j), voigt_index(k, l))];
                    }
                }
            }
        }
        c
    }
}
