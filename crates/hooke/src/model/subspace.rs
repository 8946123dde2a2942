//! Reduced coordinates x = x₀ + B u: the model's positions restricted to an
//! affine subspace spanned by a dense basis B (n×r), for subspace simulation
//! (modal bases, skinning eigenmodes). Implicit steps then minimise over u:
//! gradients map as Bᵀg and Hessians as BᵀHB, an r×r dense system.

use crate::error::{HookeError, Result};
use nalgebra::{DMatrix, DVector};

/// An affine subspace of the positions.
///
/// A cantilever simulated in the span of its four lowest modes, x = x₀ + B u:
/// every implicit step minimises over the four coordinates u, and the state
/// never leaves the subspace.
///
/// ```
/// use hooke::linalg::EigenSettings;
/// use hooke::prelude::*;
/// use nalgebra::{DMatrix, DVector, Vector3};
///
/// # fn main() -> hooke::Result<()> {
/// let mesh = box_mesh(&BoxMeshOptions {
///     origin: Vector3::zeros(),
///     size: Vector3::new(0.6, 0.1, 0.1),
///     cells: [6, 1, 1],
///     tets_per_hex: TetsPerHex::Six,
/// })?;
/// let rubber = MaterialParameters { youngs_modulus: 1e5, poisson_ratio: 0.3, density: 1000.0 };
/// let material = IsotropicMaterial::shared(MaterialModel::Linear, &rubber);
/// let mut model = Model::new(mesh.clone(), vec![material; mesh.tet_count()], MassKind::Lumped)?;
/// let clamped = Selection::Plane { point: [0.0; 3], normal: [-1.0, 0.0, 0.0], tolerance: None }
///     .vertices(model.mesh(), "clamp")?;
/// model.add_pin(Pin::new(clamped, Motion::Fixed {}, None));
/// model.set_gravity(Vector3::new(0.0, 0.0, -9.81));
///
/// let modes = hooke::modal::lowest_modes(&model, &model.initial_state(), 4, &EigenSettings::default())?;
/// let basis = DMatrix::from_fn(model.dof_count(), 4, |row, mode| modes.shapes[mode][row]);
/// let origin = model.rest_positions();
/// model.set_subspace(Some(Subspace::new(origin.clone(), basis.clone())?))?;
///
/// let mut integrator = BackwardEuler::new(SolverSettings::default())?;
/// integrator.check(&model)?;
/// let mut state = model.initial_state();
/// for _ in 0..5 {
///     integrator.step(&model, &mut state, 0.01)?;
/// }
/// // x − x₀ lies in the span of B: its least-squares coordinates reproduce it.
/// let displacement = DVector::from_iterator(origin.len(), state.positions.iter().zip(&origin).map(|(x, o)| x - o));
/// let u = basis.clone().svd(true, true).solve(&displacement, 1e-12).expect("solvable");
/// assert!((&basis * u - &displacement).amax() < 1e-9 * displacement.amax());
/// assert!(displacement.amax() > 1e-4, "the bar sags");
/// # Ok(())
/// # }
/// ```
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
