//! Reduced coordinates x = x₀ + B u: the model's positions restricted to an
//! affine subspace spanned by a dense basis B (n×r), for subspace simulation
//! (modal bases, skinning eigenmodes). Implicit steps then minimise over u:
//! gradients map as Bᵀg and Hessians as BᵀHB, an r×r dense system.

use crate::error::{HookeError, Result};
use nalgebra::{DMatrix, DVector};

/// An affine subspace of the positions.
#[derive(Clone, Debug)]
pub struct Subspace {
    /// x₀ over all DOFs.
    pub origin: Vec<f64>,
    /// B: one column per reduced coordinate, rows over all DOFs.
    pub basis: DMatrix<f64>,
}

impl Subspace {
    /// Checks the shapes and that B has full column rank.
    pub fn new(origin: Vec<f64>, basis: DMatrix<f64>) -> Result<Subspace> {
        if basis.nrows() != origin.len() || basis.ncols() == 0 {
            return Err(HookeError::scene(
                "coordinates",
                format!(
                    "a basis of {}×{} for {} DOFs: it needs one row per DOF and at least one column",
                    basis.nrows(),
                    basis.ncols(),
                    origin.len()
                ),
            ));
        }
        let gram = basis.tr_mul(&basis);
        let eigenvalues = gram.symmetric_eigenvalues();
        if eigenvalues.min() <= 1e-12 * eigenvalues.max() {
            return Err(HookeError::scene(
                "coordinates",
                "the basis columns are linearly dependent (BᵀB is singular)",
            ));
        }
        Ok(Subspace { origin, basis })
    }

    /// r: the number of reduced coordinates (the basis's columns).
    pub fn rank(&self) -> usize {
        self.basis.ncols()
    }

    /// x₀ + B u.
    pub fn positions(&self, u: &[f64]) -> Vec<f64> {
        let x = &self.basis * DVector::from_column_slice(u);
        x.iter().zip(&self.origin).map(|(a, b)| a + b).collect()
    }

    /// Bᵀ g.
    pub fn reduce(&self, full: &[f64]) -> Vec<f64> {
        self.basis.tr_mul(&DVector::from_column_slice(full)).as_slice().to_vec()
    }

    /// The u whose x₀ + B u is closest to x in the norm of `weight` (a symmetric
    /// positive definite product, the mass for example): (BᵀWB) u = BᵀW(x − x₀).
    pub fn project(&self, x: &[f64], weight: impl Fn(&[f64], &mut [f64])) -> Result<Vec<f64>> {
        let n = x.len();
        let mut weighted = DMatrix::zeros(n, self.rank());
        let mut column = vec![0.0; n];
        for j in 0..self.rank() {
            weight(self.basis.column(j).as_slice(), &mut column);
            weighted.column_mut(j).copy_from_slice(&column);
        }
        let offset: Vec<f64> = x.iter().zip(&self.origin).map(|(a, b)| a - b).collect();
        let mut wx = vec![0.0; n];
        weight(&offset, &mut wx);
        let gram = self.basis.tr_mul(&weighted);
        let rhs = self.basis.tr_mul(&DVector::from_column_slice(&wx));
        gram.cholesky()
            .map(|c| c.solve(&rhs).as_slice().to_vec())
            .ok_or_else(|| HookeError::LinearSolver {
                reason: "the subspace's weighted Gram matrix BᵀWB is not positive definite".to_string(),
            })
    }
}
