//! The hand of an interactive session: a zero-length spring from one vertex
//! the user holds to a point they move (a mouse or a finger on a page).
//! E = ½ k |x_v − p|² while a vertex is held, 0 otherwise.
//!
//! The term is always in the model, held or not, so that what was computed
//! from the model's list of terms (a subspace's reduction) stays valid; it
//! counts as varying in time, so a subspace reduces it again at each step.
//! It is a [`TermKind::Load`]: the hand does work on the body, and its energy
//! is not part of the body's total. It is not projective (its vertex changes
//! between steps, which a prefactored Laplacian would not see), so
//! local/global solvers refuse it; Newton, L-BFGS and subspaces take it.

use super::term::{EnergyTerm, HessianTarget, TermCapabilities, TermKind};
use crate::error::Result;
use crate::linalg::LowerPattern;
use nalgebra::Vector3;

/// The name every pointer spring goes by (a model has at most one).
pub(super) const NAME: &str = "pointer spring";

/// A vertex held toward a target point by a spring of stiffness k (N/m).
#[derive(Clone, Debug, Default)]
pub struct PointerSpring {
    /// The vertex held and where the pointer is (z ignored in 2D); None: nothing held.
    pub held: Option<(usize, Vector3<f64>)>,
    /// k, N/m.
    pub stiffness: f64,
    dimension: usize,
    /// The pattern's diagonal position of every DOF.
    diagonal: Vec<usize>,
}

impl PointerSpring {
    /// A spring of stiffness `stiffness` (N/m) holding `held` (vertex, target), if any.
    pub fn new(held: Option<(usize, Vector3<f64>)>, stiffness: f64) -> PointerSpring {
        PointerSpring {
            held,
            stiffness,
            ..PointerSpring::default()
        }
    }

    /// (DOF, offset from the target) of each coordinate of the held vertex.
    fn offsets<'a>(&'a self, x: &'a [f64]) -> impl Iterator<Item = (usize, f64)> + 'a {
        let d = self.dimension;
        self.held
            .iter()
            .flat_map(move |&(v, target)| (0..d).map(move |a| (d * v + a, x[d * v + a] - target[a])))
    }
}

impl EnergyTerm for PointerSpring {
    fn name(&self) -> String {
        NAME.to_string()
    }

    fn kind(&self) -> TermKind {
        TermKind::Load
    }

    fn capabilities(&self) -> TermCapabilities {
        TermCapabilities {
            material_stiffness: true,
            time_dependent: true,
            ..TermCapabilities::SMOOTH
        }
    }

    fn hessian_vertices(&self, _time: f64) -> Option<Vec<usize>> {
        Some(self.held.iter().map(|&(v, _)| v).collect())
    }

    fn bind(&mut self, pattern: &LowerPattern, dimension: usize) {
        self.dimension = dimension;
        self.diagonal = (0..pattern.size)
            .map(|dof| pattern.position(dof, dof).expect("diagonal entries are in the pattern"))
            .collect();
    }

    fn energy(&self, x: &[f64], _time: f64) -> f64 {
        self.offsets(x).map(|(_, e)| 0.5 * self.stiffness * e * e).sum()
    }

    fn gradient(&self, x: &[f64], time: f64, gradient: &mut [f64], overwrite: bool) -> Result<f64> {
        if overwrite {
            gradient.fill(0.0);
        }
        for (dof, e) in self.offsets(x) {
            gradient[dof] += self.stiffness * e;
        }
        Ok(self.energy(x, time))
    }

    fn hessian(
        &self,
        x: &[f64],
        time: f64,
        _project: bool,
        gradient: &mut [f64],
        hessian: &mut HessianTarget,
        overwrite: bool,
    ) -> Result<f64> {
        if overwrite {
            hessian.values.fill(0.0);
        }
        self.add_material_stiffness(x, time, hessian.values);
        self.gradient(x, time, gradient, overwrite)
    }

    fn add_material_stiffness(&self, x: &[f64], _time: f64, values: &mut [f64]) {
        for (dof, _) in self.offsets(x) {
            values[self.diagonal[dof]] += self.stiffness;
        }
    }
}
