//! The linear simplices of either dimension as numerical coarsening sees
//! them: corners, measure, barycentric coordinates (negative outside, which
//! extrapolates), shape gradients, and the strain of a nodal field in Voigt
//! form with engineering shears (xx, yy, zz, 2yz, 2xz, 2xy; 2D: xx, yy, 2xy),
//! the order of [`crate::material::ElasticityTensor`].

use crate::mesh::Mesh;
use nalgebra::{DMatrix, DVector, Vector3};

/// The index pairs (i, j) of the Voigt components of a `dimension`-D strain.
pub fn voigt_pairs(dimension: usize) -> &'static [(usize, usize)] {
    if dimension == 2 {
        &[(0, 0), (1, 1), (0, 1)]
    } else {
        &[(0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1)]
    }
}

/// One element's rest geometry.
#[derive(Clone, Debug)]
pub struct Simplex {
    /// The corners' rest positions, d + 1 of them (m; z = 0 in 2D).
    pub corners: Vec<Vector3<f64>>,
    /// ∇Nᵢ for each corner (d components each).
    pub gradients: Vec<DVector<f64>>,
    /// The rest volume (m³), or area in 2D (m²).
    pub measure: f64,
    /// Dm⁻¹ with Dm = [x₁ − x₀, …]: barycentric coordinates from positions.
    inverse: DMatrix<f64>,
}

impl Simplex {
    /// Element `e` of `mesh`; None when it is flat.
    pub fn of(mesh: &Mesh, e: usize) -> Option<Simplex> {
        let d = mesh.dimension();
        let corners: Vec<Vector3<f64>> = mesh.element(e).iter().map(|&v| mesh.vertices()[v]).collect();
        let dm = DMatrix::from_fn(d, d, |r, c| corners[c + 1][r] - corners[0][r]);
        let determinant = dm.determinant();
        let inverse = dm.try_inverse()?;
        let factorial = if d == 2 { 2.0 } else { 6.0 };
        let measure = determinant.abs() / factorial;
        if measure == 0.0 {
            return None;
        }
        let mut gradients: Vec<DVector<f64>> = (0..d).map(|i| inverse.row(i).transpose()).collect();
        let first = -gradients.iter().fold(DVector::zeros(d), |sum, g| sum + g);
        gradients.insert(0, first);
        Some(Simplex {
            corners,
            gradients,
            measure,
            inverse,
        })
    }

    /// Barycentric coordinates of `point` (negative outside the element).
    pub fn barycentric(&self, point: &Vector3<f64>) -> Vec<f64> {
        let d = self.gradients[0].len();
        let offset = DVector::from_fn(d, |r, _| point[r] - self.corners[0][r]);
        let tail = &self.inverse * offset;
        let mut coordinates = vec![1.0 - tail.sum()];
        coordinates.extend(tail.iter());
        coordinates
    }

    /// The Voigt strain (engineering shears) of a nodal displacement field
    /// given at the corners (`dimension` numbers each).
    pub fn strain(&self, corner_displacements: &[f64]) -> DVector<f64> {
        let d = self.gradients[0].len();
        let mut gradient = DMatrix::zeros(d, d);
        for (i, g) in self.gradients.iter().enumerate() {
            for a in 0..d {
                for b in 0..d {
                    gradient[(a, b)] += corner_displacements[i * d + a] * g[b];
                }
            }
        }
        let pairs = voigt_pairs(d);
        DVector::from_iterator(
            pairs.len(),
            pairs.iter().map(|&(i, j)| {
                if i == j {
                    gradient[(i, i)]
                } else {
                    gradient[(i, j)] + gradient[(j, i)]
                }
            }),
        )
    }
}
