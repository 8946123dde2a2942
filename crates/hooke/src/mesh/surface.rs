//! Boundary surface: the triangles that belong to exactly one tetrahedron,
//! and the edges that belong to exactly one triangle.

use super::{Mesh, TetMesh};
use nalgebra::Vector3;
use std::collections::HashMap;

/// The faces of a positively oriented tet, each listed so that its normal points outward.
const OUTWARD_FACES: [[usize; 3]; 4] = [[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]];

/// Boundary triangles with outward normals, each with the element it belongs to,
/// in a deterministic order (by element, then by local face).
pub fn boundary_faces(mesh: &TetMesh) -> Vec<([usize; 3], usize)> {
    let mut count: HashMap<[usize; 3], u32> = HashMap::with_capacity(mesh.tets.len() * 2);
    let key = |f: [usize; 3]| {
        let mut k = f;
        k.sort_unstable();
        k
    };
    for tet in &mesh.tets {
        for local in OUTWARD_FACES {
            *count.entry(key(local.map(|i| tet[i]))).or_insert(0) += 1;
        }
    }
    let mut faces = Vec::new();
    for (e, tet) in mesh.tets.iter().enumerate() {
        for local in OUTWARD_FACES {
            let face = local.map(|i| tet[i]);
            if count[&key(face)] == 1 {
                faces.push((face, e));
            }
        }
    }
    faces
}

/// The outward boundary facets of a mesh: vertices, unit outward normal,
/// measure and the element they bound: a tetrahedral mesh's boundary
/// triangles (see [`boundary_faces`]), a triangle mesh's boundary edges. The
/// one place that says what the boundary of each element kind is.
pub fn boundary_facets(mesh: &Mesh) -> Vec<(Vec<usize>, Vector3<f64>, f64, usize)> {
    match mesh {
        Mesh::Tetrahedra(tets) => boundary_faces(tets)
            .into_iter()
            .map(|(face, element)| {
                let [a, b, c] = face.map(|v| tets.vertices[v]);
                let cross = (b - a).cross(&(c - a));
                let area = 0.5 * cross.norm();
                (face.to_vec(), cross.normalize(), area, element)
            })
            .collect(),
        Mesh::Triangles(triangles) => {
            let mut count = std::collections::HashMap::new();
            for t in &triangles.triangles {
                for c in 0..3 {
                    let (a, b) = (t[c], t[(c + 1) % 3]);
                    *count.entry((a.min(b), a.max(b))).or_insert(0) += 1;
                }
            }
            let mut facets = Vec::new();
            for (element, t) in triangles.triangles.iter().enumerate() {
                for c in 0..3 {
                    let (a, b) = (t[c], t[(c + 1) % 3]);
                    if count[&(a.min(b), a.max(b))] == 1 {
                        // Counter-clockwise triangles: the outward normal is the edge turned clockwise.
                        let edge = triangles.vertices[b] - triangles.vertices[a];
                        let length = edge.norm();
                        facets.push((vec![a, b], Vector3::new(edge.y, -edge.x, 0.0) / length, length, element));
                    }
                }
            }
            facets
        }
    }
}
