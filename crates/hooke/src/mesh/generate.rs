//! Procedural meshes: an axis-aligned box of hexahedral cells, each split into tetrahedra.

use super::TetMesh;
use crate::error::{HookeError, Result};
use nalgebra::Vector3;

/// How each hexahedral cell is split.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub enum TetsPerHex {
    /// Five tets (a central one and four corners), alternating with cell parity so
    /// that neighbouring cells share face diagonals.
    Five,
    /// Six tets around the cell's main diagonal (Kuhn/Freudenthal split); conforming on any grid.
    Six,
}

/// A box `[origin, origin + size]` cut into `cells` hexahedra.
#[derive(Clone, Debug)]
pub struct BoxMeshOptions {
    /// The box's minimum corner, m.
    pub origin: Vector3<f64>,
    /// The box's edge lengths along x, y and z, m (each positive).
    pub size: Vector3<f64>,
    /// Hexahedral cells along x, y and z.
    pub cells: [usize; 3],
    /// How each cell is split into tetrahedra.
    pub tets_per_hex: TetsPerHex,
}

// Corner c of a cell sits at offset (c & 1, (c >> 1) & 1, (c >> 2) & 1).
const SIX_TETS: [[usize; 4]; 6] = [
    [0, 1, 3, 7],
    [0, 1, 5, 7],
    [0, 2, 3, 7],
    [0, 2, 6, 7],
    [0, 4, 5, 7],
    [0, 4, 6, 7],
];
const FIVE_TETS_EVEN: [[usize; 4]; 5] = [[1, 2, 4, 7], [0, 1, 2, 4], [3, 1, 2, 7], [5, 1, 4, 7], [6, 2, 4, 7]];
const FIVE_TETS_ODD: [[usize; 4]; 5] = [[0, 3, 5, 6], [1, 0, 3, 5], [2, 0, 3, 6], [4, 0, 5, 6], [7, 3, 5, 6]];

/// Generates a box mesh with positively oriented tetrahedra, all labelled 0.
pub fn box_mesh(options: &BoxMeshOptions) -> Result<TetMesh> {
    let [nx, ny, nz] = options.cells;
    let per_cell = match options.tets_per_hex {
        TetsPerHex::Five => 5,
        TetsPerHex::Six => 6,
    };
    super::limits::check_generated("box", &options.cells, per_cell)?;
    if !options.size.iter().all(|s| s.is_finite() && *s > 0.0) {
        return Err(HookeError::Mesh {
            reason: format!("box size must be positive, got {:?}", options.size.as_slice()),
        });
    }
    let vertex_index = |i: usize, j: usize, k: usize| i + (nx + 1) * (j + (ny + 1) * k);
    let mut vertices = Vec::with_capacity((nx + 1) * (ny + 1) * (nz + 1));
    for k in 0..=nz {
        for j in 0..=ny {
            for i in 0..=nx {
                let t = Vector3::new(i as f64 / nx as f64, j as f64 / ny as f64, k as f64 / nz as f64);
                vertices.push(options.origin + options.size.component_mul(&t));
            }
        }
    }
    let mut tets = Vec::with_capacity(nx * ny * nz * per_cell);
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let corner = |c: usize| vertex_index(i + (c & 1), j + ((c >> 1) & 1), k + ((c >> 2) & 1));
                let pattern: &[[usize; 4]] = match options.tets_per_hex {
                    TetsPerHex::Six => &SIX_TETS,
                    TetsPerHex::Five if (i + j + k) % 2 == 0 => &FIVE_TETS_EVEN,
                    TetsPerHex::Five => &FIVE_TETS_ODD,
                };
                for local in pattern {
                    tets.push(local.map(corner));
                }
            }
        }
    }
    let labels = vec![0; tets.len()];
    let mut mesh = TetMesh::new(vertices, tets, labels)?;
    // The patterns are listed without regard to handedness; fix it here once.
    mesh.orient()?;
    Ok(mesh)
}
