//! Springs: the 1D element of mass-spring networks (ropes, cloth).
//!
//! E = ½ k (l − l₀)², with l = |xₐ − x_b|. With ŝ the unit direction, the force on
//! a is −k (l − l₀) ŝ, and the 3×3 Hessian block is
//!   H = k ŝŝᵀ + k (1 − l₀/l)(I − ŝŝᵀ)
//! (material + geometric stiffness; seed 000 §3 prints ssᵀ without normalising
//! and a wrong block sign, see ../shared/reference/seed-000.md §8). The element
//! Hessian is [[H, −H], [−H, H]]. The geometric part is negative for a compressed
//! spring; PSD projection drops it then.

use nalgebra::{Matrix3, Vector3};

/// One spring between two vertices.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spring {
    pub vertices: [usize; 2],
    pub rest_length: f64,
    /// k, N/m.
    pub stiffness: f64,
}

impl Spring {
    fn direction(a: &Vector3<f64>, b: &Vector3<f64>) -> (Vector3<f64>, f64) {
        let s = a - b;
        let length = s.norm();
        // A spring collapsed to a point has no direction; any unit vector serves.
        (if length > 0.0 { s / length } else { Vector3::x() }, length)
    }

    /// Stored energy.
    pub fn energy(&self, a: &Vector3<f64>, b: &Vector3<f64>) -> f64 {
        let stretch = (a - b).norm() - self.rest_length;
        0.5 * self.stiffness * stretch * stretch
    }

    /// ∂E/∂xₐ (the gradient with respect to x_b is its negative).
    pub fn gradient(&self, a: &Vector3<f64>, b: &Vector3<f64>) -> Vector3<f64> {
        let (unit, length) = Self::direction(a, b);
        unit * (self.stiffness * (length - self.rest_length))
    }

    /// The material part k ŝŝᵀ of the block H: stiffness along the spring only,
    /// always positive semi-definite (MSSI's implicit term, seed 000 ch. 5).
    pub fn material_block(&self, a: &Vector3<f64>, b: &Vector3<f64>) -> Matrix3<f64> {
        let (unit, _) = Self::direction(a, b);
        unit * unit.transpose() * self.stiffness
    }

    /// The block H of the element Hessian [[H, −H], [−H, H]].
    pub fn hessian_block(&self, a: &Vector3<f64>, b: &Vector3<f64>, project: bool) -> Matrix3<f64> {
        let (unit, length) = Self::direction(a, b);
        let along = unit * unit.transpose();
        let mut geometric = if length > 0.0 {
            1.0 - self.rest_length / length
        } else {
            0.0
        };
        if project {
            geometric = geometric.max(0.0);
        }
        (along + (Matrix3::identity() - along) * geometric) * self.stiffness
    }
}

/// The springs of a model and the masses their vertices carry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SpringNetwork {
    pub springs: Vec<Spring>,
    /// Mass of each vertex (of the whole model) from the networks, kg; empty when none.
    pub vertex_masses: Vec<f64>,
}
