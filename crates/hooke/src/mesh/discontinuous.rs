//! Discontinuous Galerkin meshes in 2D (Chen 2019 thesis, §5.2): every triangle gets
//! three vertices of its own, so the displacement may jump across edges, and
//! every interior edge becomes an interface joining the two triangles that
//! share it. The map back to the continuous mesh (which continuous vertex
//! each copy came from) serves outputs.

use super::TriangleMesh;
use crate::error::{HookeError, Result};
use nalgebra::Vector2;
use std::collections::BTreeMap;

/// An interior edge of the continuous mesh, seen from its two triangles.
#[derive(Clone, Debug, PartialEq)]
pub struct Interface {
    /// The two triangles: the "minus" side first (the triangle with the
    /// lower index), then the "plus" side.
    pub elements: [usize; 2],
    /// Each side's DG vertices at the edge's two ends, in the same order on
    /// both sides: `ends[s][k]` of side s sits at the edge's end k at rest.
    pub ends: [[usize; 2]; 2],
    /// The edge's rest length, m.
    pub length: f64,
    /// The unit normal of the edge at rest, pointing out of the minus triangle.
    pub normal: Vector2<f64>,
}

impl Interface {
    /// The same interface after the mesh it lives in is appended behind
    /// `elements` triangles and `vertices` vertices.
    pub fn offset(&self, elements: usize, vertices: usize) -> Interface {
        Interface {
            elements: self.elements.map(|e| e + elements),
            ends: self.ends.map(|side| side.map(|v| v + vertices)),
            ..self.clone()
        }
    }
}

/// A triangle mesh split into independent triangles, with its interfaces.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DiscontinuousMesh {
    /// Triangle e uses vertices 3e, 3e + 1, 3e + 2, copies of its corners.
    pub mesh: TriangleMesh,
    /// Interior edges, in the order of their continuous vertex pairs.
    pub interfaces: Vec<Interface>,
    /// For each DG vertex, the continuous vertex it copies.
    pub continuous_vertex: Vec<usize>,
}

impl DiscontinuousMesh {
    /// Splits `continuous` (counter-clockwise triangles, as
    /// [`TriangleMesh::orient`] leaves them). An edge shared by more than two
    /// triangles is an error naming it.
    pub fn new(continuous: &TriangleMesh) -> Result<DiscontinuousMesh> {
        let mut vertices = Vec::with_capacity(3 * continuous.triangle_count());
        let mut triangles = Vec::with_capacity(continuous.triangle_count());
        let mut continuous_vertex = Vec::with_capacity(3 * continuous.triangle_count());
        for (e, triangle) in continuous.triangles.iter().enumerate() {
            for &v in triangle {
                vertices.push(continuous.vertices[v]);
                continuous_vertex.push(v);
            }
            triangles.push([3 * e, 3 * e + 1, 3 * e + 2]);
        }
        // Every edge with the triangles (and local corners) that have it.
        let mut edges: BTreeMap<[usize; 2], Vec<(usize, [usize; 2])>> = BTreeMap::new();
        for (e, triangle) in continuous.triangles.iter().enumerate() {
            for corner in 0..3 {
                let (a, b) = (triangle[corner], triangle[(corner + 1) % 3]);
                let (key, corners) = if a < b {
                    ([a, b], [corner, (corner + 1) % 3])
                } else {
                    ([b, a], [(corner + 1) % 3, corner])
                };
                edges.entry(key).or_default().push((e, corners));
            }
        }
        let mut interfaces = Vec::new();
        for (edge, sides) in edges {
            match sides.as_slice() {
                [_] => {}
                [minus, plus] => {
                    let (start, end) = (continuous.vertices[edge[0]].xy(), continuous.vertices[edge[1]].xy());
                    let along = end - start;
                    let length = along.norm();
                    // Counter-clockwise triangles: the outward normal of an edge
                    // walked in the triangle's order is its direction turned clockwise.
                    let walked_forward = (minus.1[1] + 3 - minus.1[0]) % 3 == 1;
                    let direction = if walked_forward { along } else { -along };
                    let normal = Vector2::new(direction.y, -direction.x) / length;
                    interfaces.push(Interface {
                        elements: [minus.0, plus.0],
                        ends: [minus, plus].map(|(e, corners)| corners.map(|c| 3 * e + c)),
                        length,
                        normal,
                    });
                }
                more => {
                    return Err(HookeError::Mesh {
                        reason: format!(
                            "edge between vertices {} and {} is shared by {} triangles ({:?}); a discontinuous mesh needs at most two",
                            edge[0],
                            edge[1],
                            more.len(),
                            more.iter().map(|s| s.0).collect::<Vec<_>>()
                        ),
                    })
                }
            }
        }
        let mesh = TriangleMesh::new(vertices, triangles, continuous.labels.clone())?;
        Ok(DiscontinuousMesh {
            mesh,
            interfaces,
            continuous_vertex,
        })
    }

    /// The number of vertices of the continuous mesh the copies come from.
    pub fn continuous_vertex_count(&self) -> usize {
        self.continuous_vertex.iter().map(|v| v + 1).max().unwrap_or(0)
    }

    /// The continuous field: each continuous vertex gets the mean of its
    /// copies' values (`dimension` numbers per vertex).
    pub fn average(&self, values: &[f64], dimension: usize) -> Vec<f64> {
        let n = self.continuous_vertex_count();
        let mut sums = vec![0.0; n * dimension];
        let mut counts = vec![0usize; n];
        for (copy, &v) in self.continuous_vertex.iter().enumerate() {
            counts[v] += 1;
            for a in 0..dimension {
                sums[v * dimension + a] += values[copy * dimension + a];
            }
        }
        for (v, &count) in counts.iter().enumerate() {
            for a in 0..dimension {
                sums[v * dimension + a] /= count.max(1) as f64;
            }
        }
        sums
    }
}
