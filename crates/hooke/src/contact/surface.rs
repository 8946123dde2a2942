//! The contact surface of a body: the primitives barrier contact acts
//! between (Li et al. 2020, §4): its surface vertices, edges and triangles,
//! named by the model's vertex indices. A tetrahedral mesh contributes its
//! boundary triangles; a triangle surface (cloth, an obstacle) all of its
//! triangles; a rope its segments, edges of no triangle. A 2D body (plane
//! strain, in z = 0) contributes its boundary edges, and its surface is
//! *planar*: its pairs are point–edge pairs, as 2D IPC has them.

use crate::mesh::{TetMesh, TriangleMesh};
use rayon::prelude::*;

/// Vertices, edges and triangles of a contact surface, each list sorted, so
/// that everything built on it is in one order whatever the input's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContactSurface {
    /// The vertices of its triangles and edges, ascending.
    pub vertices: Vec<usize>,
    /// Its edges [a, b] with a < b, ascending.
    pub edges: Vec<[usize; 2]>,
    /// Its triangles, in the given orientation, ascending.
    pub faces: Vec<[usize; 3]>,
    /// A 2D surface: boundary edges in the plane z = 0, no triangles; its
    /// pairs are a vertex and an edge.
    pub planar: bool,
}

impl ContactSurface {
    /// The boundary of a tetrahedral mesh (outward triangles).
    pub fn of_tetrahedra(mesh: &TetMesh) -> ContactSurface {
        let faces = crate::mesh::boundary_faces(mesh).into_iter().map(|(f, _)| f).collect();
        ContactSurface::of_triangles(faces)
    }

    /// The boundary of a 2D triangle mesh: its boundary edges (a planar surface).
    pub fn of_plane_triangles(mesh: &TriangleMesh) -> ContactSurface {
        let mut count = std::collections::HashMap::new();
        for t in &mesh.triangles {
            for c in 0..3 {
                let (a, b) = (t[c], t[(c + 1) % 3]);
                *count.entry([a.min(b), a.max(b)]).or_insert(0) += 1;
            }
        }
        let boundary = count.into_iter().filter(|(_, n)| *n == 1).map(|(e, _)| e).collect();
        ContactSurface::of_plane_edges(boundary)
    }

    /// A planar surface of edges in the plane z = 0.
    pub fn of_plane_edges(edges: Vec<[usize; 2]>) -> ContactSurface {
        ContactSurface {
            planar: true,
            ..ContactSurface::of_parts(Vec::new(), edges)
        }
    }

    /// The surface of a list of triangles (and their edges and vertices).
    pub fn of_triangles(faces: Vec<[usize; 3]>) -> ContactSurface {
        ContactSurface::of_parts(faces, Vec::new())
    }

    /// The surface of triangles and of segments that bound no triangle (a
    /// rope's): every edge of either, and every vertex.
    pub fn of_parts(mut faces: Vec<[usize; 3]>, segments: Vec<[usize; 2]>) -> ContactSurface {
        faces.par_sort_unstable();
        faces.dedup();
        let mut edges: Vec<[usize; 2]> = faces
            .iter()
            .flat_map(|f| [[f[0], f[1]], [f[1], f[2]], [f[2], f[0]]])
            .chain(segments)
            .map(|[a, b]| [a.min(b), a.max(b)])
            .collect();
        edges.par_sort_unstable();
        edges.dedup();
        // Every vertex is on an edge; marks in place of a sort.
        let count = edges.iter().map(|e| e[1] + 1).max().unwrap_or(0);
        let mut used = vec![false; count];
        for &v in edges.iter().flatten() {
            used[v] = true;
        }
        let vertices = (0..count).filter(|&v| used[v]).collect();
        ContactSurface {
            vertices,
            edges,
            faces,
            planar: false,
        }
    }

    /// This surface with `other`'s primitives added (one sorted list each);
    /// planar if either is (a planar surface has no triangles).
    pub fn joined(self, other: ContactSurface) -> ContactSurface {
        let planar = self.planar || other.planar;
        let faces: Vec<_> = self.faces.into_iter().chain(other.faces).collect();
        debug_assert!(!planar || faces.is_empty(), "a planar surface has no triangles");
        let segments = self.edges.into_iter().chain(other.edges).collect();
        ContactSurface {
            planar,
            ..ContactSurface::of_parts(faces, segments)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{box_mesh, BoxMeshOptions};

    #[test]
    fn a_box_has_the_surface_euler_counts_of_a_sphere() {
        let mesh = box_mesh(&BoxMeshOptions {
            origin: nalgebra::Vector3::zeros(),
            size: nalgebra::Vector3::new(1.0, 0.5, 0.25),
            cells: [3, 2, 1],
            tets_per_hex: crate::mesh::TetsPerHex::Six,
        })
        .unwrap();
        let surface = ContactSurface::of_tetrahedra(&mesh);
        // A closed surface of genus 0: V − E + F = 2, and 3F = 2E.
        let (v, e, f) = (surface.vertices.len(), surface.edges.len(), surface.faces.len());
        assert_eq!(v as i64 - e as i64 + f as i64, 2);
        assert_eq!(3 * f, 2 * e);
        // Every vertex of a 3 × 2 × 1 box is on its surface.
        assert_eq!(v, mesh.vertices.len());
    }

    #[test]
    fn a_rectangle_in_the_plane_is_a_closed_loop_of_its_boundary_edges() {
        let mesh = crate::mesh::rectangle_mesh([0.0, 0.0], [1.0, 0.5], [4, 2]).unwrap();
        let surface = ContactSurface::of_plane_triangles(&mesh);
        assert!(surface.planar && surface.faces.is_empty());
        // 2 (4 + 2) boundary edges and as many vertices, each on two edges.
        assert_eq!(surface.edges.len(), 12);
        assert_eq!(surface.vertices.len(), 12);
        let mut degree = vec![0; mesh.vertices.len()];
        surface.edges.iter().flatten().for_each(|&v| degree[v] += 1);
        assert!(surface.vertices.iter().all(|&v| degree[v] == 2));
    }

    #[test]
    fn a_rope_adds_its_segments_and_vertices_and_nothing_else() {
        let cloth = ContactSurface::of_triangles(vec![[0, 1, 2], [1, 3, 2]]);
        let rope = ContactSurface::of_parts(Vec::new(), vec![[5, 4], [5, 6], [4, 5]]);
        assert_eq!(rope.edges, vec![[4, 5], [5, 6]]);
        assert_eq!(rope.vertices, vec![4, 5, 6]);
        let both = cloth.clone().joined(rope);
        assert_eq!(both.faces, cloth.faces);
        assert_eq!(both.edges.len(), cloth.edges.len() + 2);
        assert_eq!(both.vertices, vec![0, 1, 2, 3, 4, 5, 6]);
    }
}
