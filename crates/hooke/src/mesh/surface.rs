//! Boundary surface: the triangles that belong to exactly one tetrahedron.

use super::TetMesh;
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
