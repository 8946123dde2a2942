//! Holonomic constraints g(q) = 0 that keep vertices on a surface (Kharevych 2010
//! thesis, §3.2.7: a vertex sliding on a plane or a sphere), enforced by Lagrange
//! multipliers in the variational midpoint integrator.

use super::ObstacleShape;
use crate::error::{HookeError, Result};
use nalgebra::Vector3;

/// Each listed vertex stays on the surface of `shape`: gᵥ(x) = signed distance = 0.
#[derive(Clone, Debug, PartialEq)]
pub struct SurfaceConstraint {
    /// The vertices kept on the surface.
    pub vertices: Vec<usize>,
    /// The surface: a plane or a sphere (a box is refused: not smooth).
    pub shape: ObstacleShape,
}

impl SurfaceConstraint {
    /// Checks the shape (planes and spheres: smooth surfaces) and the vertices.
    pub fn validate(&self, vertex_count: usize, key: &str) -> Result<()> {
        if let ObstacleShape::Box { .. } = self.shape {
            return Err(HookeError::scene(
                format!("{key}.surface"),
                "constraints need a smooth surface: a plane or a sphere",
            ));
        }
        if let Some(v) = self.vertices.iter().find(|&&v| v >= vertex_count) {
            return Err(HookeError::scene(
                key,
                format!("vertex {v} does not exist (the mesh has {vertex_count})"),
            ));
        }
        Ok(())
    }

    /// g and ∇g (a unit normal) of one vertex at `x`.
    pub fn value_and_gradient(&self, x: &Vector3<f64>) -> (f64, Vector3<f64>) {
        let proximity = self.shape.proximity(x);
        (proximity.distance, proximity.normal)
    }
}
