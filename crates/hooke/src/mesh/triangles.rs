//! Triangle meshes in the plane, the geometry of 2D (plane-strain) bodies:
//! vertices with z = 0, counter-clockwise triangles, an integer label each.

use super::{check_elements, compact};
use crate::error::{HookeError, Result};
use nalgebra::Vector3;

/// A planar triangle mesh with per-element labels.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TriangleMesh {
    /// Rest positions of the vertices, m (z = 0).
    pub vertices: Vec<Vector3<f64>>,
    /// The three vertex indices of each triangle, counter-clockwise.
    pub triangles: Vec<[usize; 3]>,
    /// The label of each triangle (its material region).
    pub labels: Vec<i32>,
}

/// Relative area below which a triangle counts as degenerate: area / (longest edge)².
const DEGENERATE_RELATIVE_AREA: f64 = 1e-10;

impl TriangleMesh {
    /// Builds a mesh, checking indices, repeated vertices, labels and finiteness;
    /// z coordinates are dropped (set to 0).
    pub fn new(vertices: Vec<Vector3<f64>>, triangles: Vec<[usize; 3]>, labels: Vec<i32>) -> Result<Self> {
        check_elements(&vertices, &triangles, labels.len(), "triangles", "triangle")?;
        let vertices = vertices.into_iter().map(|p| Vector3::new(p.x, p.y, 0.0)).collect();
        Ok(TriangleMesh {
            vertices,
            triangles,
            labels,
        })
    }

    /// The number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.vertices.len()
    }

    /// The number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.triangles.len()
    }

    /// Signed area of triangle e (positive when counter-clockwise).
    pub fn signed_area(&self, e: usize) -> f64 {
        let [a, b, c] = self.triangles[e].map(|v| self.vertices[v]);
        0.5 * ((b - a).x * (c - a).y - (b - a).y * (c - a).x)
    }

    /// Centroid of triangle e at rest.
    pub fn centroid(&self, e: usize) -> Vector3<f64> {
        self.triangles[e]
            .iter()
            .map(|&v| self.vertices[v])
            .sum::<Vector3<f64>>()
            / 3.0
    }

    /// Makes every triangle counter-clockwise (reversing those that are not);
    /// a flat triangle is an error naming it. Returns the reversed triangles.
    pub fn orient(&mut self) -> Result<Vec<usize>> {
        let mut reversed = Vec::new();
        for e in 0..self.triangles.len() {
            let area = self.signed_area(e);
            let t = self.triangles[e];
            let longest = (0..3)
                .map(|i| (self.vertices[t[i]] - self.vertices[t[(i + 1) % 3]]).norm())
                .fold(0.0, f64::max);
            // Written so that a NaN area also counts as degenerate.
            if area.is_nan() || area.abs() <= DEGENERATE_RELATIVE_AREA * longest * longest {
                return Err(HookeError::Mesh {
                    reason: format!(
                        "triangle {e} (vertices {t:?}) is degenerate: area {area:e} for longest edge {longest:e}"
                    ),
                });
            }
            if area < 0.0 {
                self.triangles[e].swap(1, 2);
                reversed.push(e);
            }
        }
        Ok(reversed)
    }

    /// Drops vertices that no triangle uses and renumbers the rest; returns how many were dropped.
    pub fn remove_unused_vertices(&mut self) -> usize {
        compact(&mut self.vertices, &mut self.triangles)
    }

    /// Appends another mesh; its labels are kept.
    pub fn append(&mut self, other: &TriangleMesh) {
        let offset = self.vertices.len();
        self.vertices.extend_from_slice(&other.vertices);
        self.triangles
            .extend(other.triangles.iter().map(|t| t.map(|v| v + offset)));
        self.labels.extend_from_slice(&other.labels);
    }
}

/// A rectangle [origin, origin + size] cut into nx × ny cells, each split into
/// two triangles along alternating diagonals (a criss-cross-free, symmetric
/// pattern: the diagonal flips with the cell's parity).
pub fn rectangle_mesh(origin: [f64; 2], size: [f64; 2], cells: [usize; 2]) -> Result<TriangleMesh> {
    let [nx, ny] = cells;
    super::limits::check_generated("rectangle", &cells, 2)?;
    if !(size[0] > 0.0 && size[1] > 0.0 && size.iter().chain(&origin).all(|v| v.is_finite())) {
        return Err(HookeError::Mesh {
            reason: format!("a rectangle needs a positive, finite size, got {size:?}"),
        });
    }
    let index = |i: usize, j: usize| j * (nx + 1) + i;
    let mut vertices = Vec::with_capacity((nx + 1) * (ny + 1));
    for j in 0..=ny {
        for i in 0..=nx {
            vertices.push(Vector3::new(
                origin[0] + size[0] * i as f64 / nx as f64,
                origin[1] + size[1] * j as f64 / ny as f64,
                0.0,
            ));
        }
    }
    let mut triangles = Vec::with_capacity(2 * nx * ny);
    for j in 0..ny {
        for i in 0..nx {
            let (a, b, c, d) = (index(i, j), index(i + 1, j), index(i + 1, j + 1), index(i, j + 1));
            if (i + j) % 2 == 0 {
                triangles.extend([[a, b, c], [a, c, d]]);
            } else {
                triangles.extend([[a, b, d], [b, c, d]]);
            }
        }
    }
    let labels = vec![0; triangles.len()];
    TriangleMesh::new(vertices, triangles, labels)
}
