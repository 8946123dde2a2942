//! Element quality: dihedral angles, aspect ratio and volumes of a tet mesh.

use super::TetMesh;
use nalgebra::Vector3;

/// Quality figures of a mesh.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct QualityReport {
    /// The number of vertices.
    pub vertices: usize,
    /// The number of tetrahedra.
    pub tets: usize,
    /// Smallest dihedral angle over all tets, degrees.
    pub min_dihedral_degrees: f64,
    /// Largest dihedral angle over all tets, degrees.
    pub max_dihedral_degrees: f64,
    /// Largest aspect ratio: longest edge / (2√6 × inradius), 1 for a regular tet.
    pub max_aspect_ratio: f64,
    /// Smallest signed tet volume, m³ (negative for an inverted tet).
    pub min_volume: f64,
    /// Largest signed tet volume, m³.
    pub max_volume: f64,
    /// Sum of the signed tet volumes, m³.
    pub total_volume: f64,
}

impl std::fmt::Display for QualityReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "vertices           {}", self.vertices)?;
        writeln!(f, "tetrahedra         {}", self.tets)?;
        writeln!(
            f,
            "dihedral angles    {:.2}° to {:.2}°",
            self.min_dihedral_degrees, self.max_dihedral_degrees
        )?;
        writeln!(f, "max aspect ratio   {:.3}", self.max_aspect_ratio)?;
        writeln!(
            f,
            "volumes            {:.4e} to {:.4e}",
            self.min_volume, self.max_volume
        )?;
        write!(f, "total volume       {:.6e}", self.total_volume)
    }
}

/// The six dihedral angles of a tet (radians), at edges 01, 02, 03, 12, 13, 23.
pub fn dihedral_angles(p: &[Vector3<f64>; 4]) -> [f64; 6] {
    // Outward normals of the faces opposite each vertex.
    let normal = |i: usize| {
        let others: Vec<usize> = (0..4).filter(|&j| j != i).collect();
        let n = (p[others[1]] - p[others[0]]).cross(&(p[others[2]] - p[others[0]]));
        // Point away from vertex i.
        if n.dot(&(p[i] - p[others[0]])) > 0.0 {
            -n
        } else {
            n
        }
    };
    let normals: Vec<Vector3<f64>> = (0..4).map(normal).collect();
    // The dihedral angle at edge ij is π minus the angle between the outward
    // normals of the two faces containing it (those opposite k and l).
    let edges = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)];
    edges.map(|(i, j)| {
        let (k, l) = {
            let rest: Vec<usize> = (0..4).filter(|&m| m != i && m != j).collect();
            (rest[0], rest[1])
        };
        let cosine = normals[k].dot(&normals[l]) / (normals[k].norm() * normals[l].norm());
        std::f64::consts::PI - cosine.clamp(-1.0, 1.0).acos()
    })
}

/// Signed volume (positive for the mesh's orientation convention).
pub fn tet_volume(p: &[Vector3<f64>; 4]) -> f64 {
    (p[1] - p[0]).cross(&(p[2] - p[0])).dot(&(p[3] - p[0])) / 6.0
}

/// Quality of every element of `mesh`.
pub fn mesh_quality(mesh: &TetMesh) -> QualityReport {
    let mut report = QualityReport {
        vertices: mesh.vertex_count(),
        tets: mesh.tet_count(),
        min_dihedral_degrees: f64::INFINITY,
        max_dihedral_degrees: f64::NEG_INFINITY,
        max_aspect_ratio: 0.0,
        min_volume: f64::INFINITY,
        max_volume: f64::NEG_INFINITY,
        total_volume: 0.0,
    };
    for tet in &mesh.tets {
        let p = tet.map(|v| mesh.vertices[v]);
        for angle in dihedral_angles(&p) {
            report.min_dihedral_degrees = report.min_dihedral_degrees.min(angle.to_degrees());
            report.max_dihedral_degrees = report.max_dihedral_degrees.max(angle.to_degrees());
        }
        let volume = tet_volume(&p);
        report.min_volume = report.min_volume.min(volume);
        report.max_volume = report.max_volume.max(volume);
        report.total_volume += volume;
        let area: f64 = (0..4)
            .map(|i| {
                let o: Vec<usize> = (0..4).filter(|&j| j != i).collect();
                0.5 * (p[o[1]] - p[o[0]]).cross(&(p[o[2]] - p[o[0]])).norm()
            })
            .sum();
        let inradius = 3.0 * volume.abs() / area;
        let longest = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
            .iter()
            .map(|&(i, j)| (p[i] - p[j]).norm())
            .fold(0.0, f64::max);
        let aspect = longest / (2.0 * 6f64.sqrt() * inradius);
        report.max_aspect_ratio = report.max_aspect_ratio.max(aspect);
    }
    if mesh.tets.is_empty() {
        report.min_dihedral_degrees = 0.0;
        report.max_dihedral_degrees = 0.0;
        report.min_volume = 0.0;
        report.max_volume = 0.0;
    }
    report
}
