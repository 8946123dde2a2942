//! What a minimiser minimises: a scalar function of some unknowns with its
//! gradient and Hessian. Implicit steps build one (the incremental potential
//! over their coordinates); minimisers see only this interface, so a new
//! minimiser works with every implicit integrator.

use crate::error::Result;
use crate::linalg::SystemMatrix;

/// A constant approximation of an objective's Hessian for quasi-Newton
/// minimisers: the matrix itself (`coordinates = 1`), or a smaller matrix S
/// that acts alike on each of `coordinates` interleaved coordinates, the
/// approximation being I ⊗ S (unknown k is row k / coordinates of S, in
/// column k % coordinates). Factorising S instead of I ⊗ S is 3× smaller in
/// size and about 9× in fill for 3D solids.
pub struct QuasiNewtonMatrix {
    /// S, or the whole approximation when `coordinates` is 1.
    pub matrix: SystemMatrix,
    /// How many interleaved coordinates S acts on alike.
    pub coordinates: usize,
}

/// A scalar function of some unknowns with its gradient and Hessian: what a
/// [`Minimizer`](super::Minimizer) minimises. Implicit steps build one (the
/// incremental potential over their coordinates); a test or a study may
/// write its own.
///
/// Φ(u) = ½ Σ kᵢ (uᵢ − 1)², minimised by any registered minimiser:
///
/// ```
/// use hooke::linalg::SystemMatrix;
/// use hooke::prelude::*;
/// use nalgebra::DMatrix;
///
/// struct Springs(Vec<f64>);
///
/// impl Objective for Springs {
///     fn size(&self) -> usize {
///         self.0.len()
///     }
///     fn value(&self, u: &[f64]) -> f64 {
///         self.0.iter().zip(u).map(|(k, x)| 0.5 * k * (x - 1.0).powi(2)).sum()
///     }
///     fn gradient(&self, u: &[f64], gradient: &mut [f64]) -> hooke::Result<f64> {
///         for ((g, k), x) in gradient.iter_mut().zip(&self.0).zip(u) {
///             *g = k * (x - 1.0);
///         }
///         Ok(self.value(u))
///     }
///     fn hessian(&self, u: &[f64], gradient: &mut [f64], hessian: &mut SystemMatrix) -> hooke::Result<f64> {
///         *hessian = SystemMatrix::Dense(DMatrix::from_diagonal(&self.0.clone().into()));
///         self.gradient(u, gradient)
///     }
///     fn hessian_matrix(&self) -> SystemMatrix {
///         SystemMatrix::Dense(DMatrix::zeros(self.size(), self.size()))
///     }
///     fn length_scale(&self) -> f64 {
///         1.0
///     }
/// }
///
/// # fn main() -> hooke::Result<()> {
/// let mut u = vec![0.0; 3];
/// let report = SolverSettings::default().minimizer()?.minimize(&Springs(vec![1.0, 10.0, 100.0]), &mut u)?;
/// assert!(u.iter().all(|x| (x - 1.0).abs() < 1e-12));
/// assert!(report.iterations <= 2, "Newton solves a quadratic in one iteration");
/// # Ok(())
/// # }
/// ```
pub trait Objective {
    /// Number of unknowns.
    fn size(&self) -> usize;

    /// Φ(u); +∞ where the objective is undefined (an inverted element of a
    /// material undefined there), which a line search must treat as "too far".
    fn value(&self, u: &[f64]) -> f64;

    /// Φ(u) and ∇Φ(u) (written into `gradient`).
    fn gradient(&self, u: &[f64], gradient: &mut [f64]) -> Result<f64>;

    /// Φ(u), ∇Φ(u) and the Hessian, written into `hessian`, which must come
    /// from [`Objective::hessian_matrix`].
    fn hessian(&self, u: &[f64], gradient: &mut [f64], hessian: &mut SystemMatrix) -> Result<f64>;

    /// The Hessian-vector product H(u) v, written into `product`. The default
    /// assembles the Hessian; objectives with a cheaper product override it.
    fn hessian_times(&self, u: &[f64], v: &[f64], product: &mut [f64]) -> Result<()> {
        let mut gradient = vec![0.0; self.size()];
        let mut hessian = self.hessian_matrix();
        self.hessian(u, &mut gradient, &mut hessian)?;
        hessian.multiply(v, product);
        Ok(())
    }

    /// A matrix of the kind and shape [`Objective::hessian`] fills (sparse on
    /// the free DOFs' pattern, or dense r×r for reduced coordinates).
    fn hessian_matrix(&self) -> SystemMatrix;

    /// A key of the constant SPD approximation of the Hessian that
    /// quasi-Newton minimisers factorise once and reuse (for an implicit step
    /// the inertia plus the weighted Laplacian, Liu 2018 thesis, §7.1): it changes
    /// exactly when the approximation does. None: the objective has none.
    fn quasi_newton_key(&self) -> Option<u64> {
        None
    }

    /// That approximation.
    fn quasi_newton_matrix(&self) -> Result<QuasiNewtonMatrix> {
        Err(crate::error::HookeError::Solver {
            reason: "this objective has no constant approximation of its Hessian for a quasi-Newton solver".into(),
        })
    }

    /// The Hessian at the rest pose (every vertex, pinned ones too, at
    /// rest), on [`Objective::hessian_matrix`]'s pattern, where the objective
    /// has one (an implicit step over free DOFs): it preconditions some
    /// inexact solves. None: no rest pose.
    fn rest_hessian(&self) -> Option<Result<SystemMatrix>> {
        None
    }

    /// The feasible step bound: the largest α ∈ [0, 1] such that every point
    /// u + β d with 0 ≤ β ≤ α is admissible (no intersection, for contact by
    /// continuous collision detection; no inverted element, for a material
    /// that forbids it). Every line search starts from it and every full step
    /// is cut to it, so a minimiser that starts admissible stays admissible.
    /// The default, 1, admits every point.
    fn feasible_step(&self, u: &[f64], direction: &[f64]) -> Result<f64> {
        let _ = (u, direction);
        Ok(1.0)
    }

    /// The smallest distance between contact primitives at u (barrier
    /// contact's closest pair within its reach), or None when the objective
    /// has no contact or no pair is that close. A minimiser counts a step as
    /// converged only when it is a small fraction of this distance
    /// ([`GAP_FRACTION`](super::GAP_FRACTION)): a loose tolerance would
    /// otherwise accept steps that close most of a gap, and over a few steps
    /// the gaps shrink to zero, where no step is admissible.
    fn contact_gap(&self, u: &[f64]) -> Option<f64> {
        let _ = u;
        None
    }

    /// The size of a change of the unknowns in length units (∞-norm of the
    /// positions it moves), for convergence tests.
    fn increment_size(&self, change: &[f64]) -> f64 {
        change.iter().fold(0.0, |m: f64, d| m.max(d.abs()))
    }

    /// The body's size: tolerances are relative to it.
    fn length_scale(&self) -> f64;

    /// The time over which the unknowns move, s, when they are a time
    /// step's positions (None: a static or non-temporal problem): a
    /// `velocity_tolerance` is scaled by it.
    fn step_length(&self) -> Option<f64> {
        None
    }
}
