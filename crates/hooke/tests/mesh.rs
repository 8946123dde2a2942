//! Generated meshes are conforming and positively oriented; the boundary surface
//! is a closed, outward-oriented manifold; orientation repair and degenerate elements.

mod common;

use common::bar;
use hooke::mesh::{boundary_faces, TetMesh, TetsPerHex};
use hooke::HookeError;
use nalgebra::Vector3;
use std::collections::HashMap;

#[test]
fn box_meshes_are_conforming_positive_and_closed() {
    let (nx, ny, nz) = (4, 3, 2);
    for split in [TetsPerHex::Five, TetsPerHex::Six] {
        let mesh = bar([2.0, 1.5, 1.0], [nx, ny, nz], split);
        let per_cell = if split == TetsPerHex::Five { 5 } else { 6 };
        assert_eq!(mesh.tet_count(), nx * ny * nz * per_cell);
        let total: f64 = (0..mesh.tet_count())
            .map(|e| mesh.signed_volume(e, &mesh.vertices))
            .sum();
        assert!((total - 3.0).abs() < 1e-12, "volumes sum to the box volume");
        assert!((0..mesh.tet_count()).all(|e| mesh.signed_volume(e, &mesh.vertices) > 0.0));

        // Conforming: every face is shared by two tets except the box's own faces,
        // which are split into two triangles per cell face.
        let faces = boundary_faces(&mesh);
        assert_eq!(faces.len(), 2 * 2 * (nx * ny + ny * nz + nx * nz), "{split:?}");

        // Closed manifold: every boundary edge in exactly two faces, once in each direction.
        let mut edges: HashMap<(usize, usize), i32> = HashMap::new();
        for (face, _) in &faces {
            for k in 0..3 {
                let (a, b) = (face[k], face[(k + 1) % 3]);
                *edges.entry((a.min(b), a.max(b))).or_insert(0) += if a < b { 1 } else { -1 };
            }
        }
        assert!(edges.values().all(|&balance| balance == 0), "edges used once each way");

        // Outward normals: the divergence theorem gives back the volume.
        let p = |v: usize| mesh.vertices[v];
        let enclosed: f64 = faces
            .iter()
            .map(|(f, _)| p(f[0]).dot(&(p(f[1]) - p(f[0])).cross(&(p(f[2]) - p(f[0])))) / 6.0)
            .sum();
        assert!((enclosed - 3.0).abs() < 1e-12, "enclosed volume {enclosed}");
    }
}

#[test]
fn inside_out_elements_are_reoriented_and_reported() {
    let mut mesh = bar([1.0, 1.0, 1.0], [1, 1, 1], TetsPerHex::Six);
    mesh.tets[2].swap(0, 1);
    mesh.tets[4].swap(1, 3);
    let report = mesh.orient().unwrap();
    assert_eq!(report.reoriented, vec![2, 4]);
    assert!((0..mesh.tet_count()).all(|e| mesh.signed_volume(e, &mesh.vertices) > 0.0));
    assert!(mesh.orient().unwrap().reoriented.is_empty());
}

#[test]
fn degenerate_elements_and_bad_indices_are_errors_naming_the_element() {
    let flat = vec![
        Vector3::new(0.0, 0.0, 0.0),
        Vector3::new(1.0, 0.0, 0.0),
        Vector3::new(0.0, 1.0, 0.0),
        Vector3::new(1.0, 1.0, 0.0),
        Vector3::new(0.0, 0.0, 1.0),
    ];
    let mut mesh = TetMesh::new(flat.clone(), vec![[0, 1, 2, 4], [0, 1, 2, 3]], vec![0, 0]).unwrap();
    match mesh.orient() {
        Err(HookeError::Mesh { reason }) => assert!(reason.contains("element 1"), "{reason}"),
        other => panic!("expected a degenerate-element error, got {other:?}"),
    }
    match TetMesh::new(flat.clone(), vec![[0, 1, 2, 9]], vec![0]) {
        Err(HookeError::Mesh { reason }) => assert!(reason.contains("element 0") && reason.contains("vertex 9")),
        other => panic!("expected an index error, got {other:?}"),
    }
    assert!(
        TetMesh::new(flat, vec![[0, 1, 1, 2]], vec![0]).is_err(),
        "a repeated vertex is an error"
    );
}

#[test]
fn unused_vertices_are_removed_and_elements_renumbered() {
    let mut mesh = bar([1.0, 1.0, 1.0], [1, 1, 1], TetsPerHex::Five);
    mesh.vertices.insert(0, Vector3::new(9.0, 9.0, 9.0));
    mesh.tets.iter_mut().for_each(|t| *t = t.map(|v| v + 1));
    assert_eq!(mesh.remove_unused_vertices(), 1);
    assert_eq!(mesh.vertex_count(), 8);
    assert!((0..mesh.tet_count()).all(|e| mesh.signed_volume(e, &mesh.vertices) > 0.0));
}

/// `TetMesh::locate` (a grid search) gives what comparing every
/// tetrahedron gives: the first one containing the point, or for a point
/// outside them all the one whose worst barycentric coordinate is best; the
/// coordinates reproduce the point.
#[test]
fn locating_points_agrees_with_testing_every_tetrahedron() {
    let mesh = bar([1.0, 0.3, 0.2], [7, 3, 2], TetsPerHex::Six);
    let every = |x: &Vector3<f64>| {
        let mut best = (0, f64::NEG_INFINITY);
        for (e, t) in mesh.tets.iter().enumerate() {
            let p = |k: usize| mesh.vertices[t[k]];
            let Some(inverse) = nalgebra::Matrix3::from_columns(&[p(1) - p(0), p(2) - p(0), p(3) - p(0)]).try_inverse()
            else {
                continue;
            };
            let local = inverse * (x - p(0));
            let worst = (1.0 - local.sum()).min(local.min());
            if worst > best.1 {
                best = (e, worst);
                if worst >= -1e-12 {
                    break;
                }
            }
        }
        best.0
    };
    let mut rng = common::Lcg::new(5);
    // Inside, outside, and on the mesh's own vertices (shared by many tetrahedra).
    let mut points: Vec<Vector3<f64>> = (0..400)
        .map(|_| Vector3::new(0.6 + 1.4 * rng.next(), 0.15 + 0.5 * rng.next(), 0.1 + 0.4 * rng.next()))
        .collect();
    points.extend(mesh.vertices.iter().copied());
    let located = mesh.locate(&points);
    for (x, (e, weights)) in points.iter().zip(&located) {
        assert_eq!(*e, every(x), "point {x:?}");
        let tet = mesh.tets[*e];
        let back: Vector3<f64> = (0..4).map(|k| mesh.vertices[tet[k]] * weights[k]).sum();
        assert!((back - x).norm() < 1e-12, "{back:?} against {x:?}");
    }
}
