//! Reads back a frame that a run wrote (`frame_XXXX.vtu`), so it can be drawn
//! or post-processed without the scene.

use crate::error::{HookeError, Result};
use crate::mesh::{Mesh, TetMesh, TriangleMesh};
use nalgebra::Vector3;
use std::path::Path;
use vtkio::model::{Attribute, CellType, DataSet, VertexNumbers, Vtk};

/// A frame: the mesh at rest (positions minus displacement), its current
/// positions, the element fields and the springs.
#[derive(Clone, Debug)]
pub struct FrameData {
    /// The mesh at rest (the frame's positions minus its displacement), with the elements' labels.
    pub mesh: Mesh,
    /// The vertices' positions in the frame, m.
    pub positions: Vec<Vector3<f64>>,
    /// Strain energy density of each element, J/m³ (0 where the file has none).
    pub strain_energy_density: Vec<f64>,
    /// The springs (the file's line cells), as pairs of vertex indices.
    pub edges: Vec<[usize; 2]>,
    /// Vertex velocities (zero when the file has none).
    pub velocities: Vec<Vector3<f64>>,
    /// Material number of each element (empty when the file has none).
    pub materials: Vec<i32>,
    /// Discontinuous bodies: the mean displacement of each vertex's copies
    /// (empty when the file has none).
    pub continuous_displacement: Vec<Vector3<f64>>,
}

fn error(path: &Path, reason: impl Into<String>) -> HookeError {
    HookeError::parse(path, None, reason)
}

/// Reads a `.vtu` frame written by Hooke.
pub fn read_frame(path: &Path) -> Result<FrameData> {
    parse_frame(path, &std::fs::read(path).map_err(|error| HookeError::io(path, error))?)
}

/// Parses the bytes of a `.vtu` frame; `path` names it in errors.
pub fn parse_frame(path: &Path, bytes: &[u8]) -> Result<FrameData> {
    // vtkio 0.6 panics on some malformed files (a binary array shorter than
    // its header, found by the fuzzer): such a panic is a parse error too.
    crate::quiet_panic::catch_quietly(|| parse_frame_unguarded(path, bytes)).unwrap_or_else(|panic| {
        Err(error(
            path,
            format!("malformed VTK file: the VTK reader failed ({panic})"),
        ))
    })
}

fn parse_frame_unguarded(path: &Path, bytes: &[u8]) -> Result<FrameData> {
    let vtk = Vtk::parse_xml(bytes).map_err(|e| {
        // The VTK reader does not say where; a scan of the text usually can.
        match super::xml_check::first_problem(&String::from_utf8_lossy(bytes)) {
            Some((line, reason)) => HookeError::parse(path, Some(line), reason),
            None => error(path, format!("not a readable VTK file: {e}")),
        }
    })?;
    let DataSet::UnstructuredGrid { pieces, .. } = vtk.data else {
        return Err(error(path, "expected an unstructured grid"));
    };
    let piece = pieces
        .into_iter()
        .next()
        .ok_or_else(|| error(path, "the file has no piece"))?
        .into_loaded_piece_data(None)
        .map_err(|e| error(path, format!("cannot load the piece: {e}")))?;
    let points: Vec<f64> = piece
        .points
        .cast_into::<f64>()
        .ok_or_else(|| error(path, "points are not numeric"))?;
    let positions: Vec<Vector3<f64>> = points.chunks(3).map(|p| Vector3::new(p[0], p[1], p[2])).collect();
    let array = |attributes: &[Attribute], name: &str| -> Option<Vec<f64>> {
        attributes.iter().find_map(|attribute| match attribute {
            Attribute::DataArray(array) if array.name == name => array.data.clone().cast_into::<f64>(),
            _ => None,
        })
    };
    let displacement = array(&piece.data.point, "displacement").unwrap_or_else(|| vec![0.0; points.len()]);
    if displacement.len() != points.len() {
        return Err(error(path, "displacement and points differ in length"));
    }
    let velocity = array(&piece.data.point, "velocity").unwrap_or_else(|| vec![0.0; points.len()]);
    if velocity.len() != points.len() {
        return Err(error(path, "velocity and points differ in length"));
    }
    let velocities: Vec<Vector3<f64>> = velocity.chunks(3).map(|v| Vector3::new(v[0], v[1], v[2])).collect();
    let continuous = array(&piece.data.point, "continuous_displacement").unwrap_or_default();
    if !continuous.is_empty() && continuous.len() != points.len() {
        return Err(error(path, "continuous_displacement and points differ in length"));
    }
    let continuous_displacement = continuous.chunks(3).map(|v| Vector3::new(v[0], v[1], v[2])).collect();
    let (connectivity, offsets) = match piece.cells.cell_verts {
        VertexNumbers::XML { connectivity, offsets } => (connectivity, offsets),
        VertexNumbers::Legacy { .. } => return Err(error(path, "unexpected legacy cell layout")),
    };
    let labels_in = array(&piece.data.cell, "label").unwrap_or_default();
    let densities_in = array(&piece.data.cell, "strain_energy_density").unwrap_or_default();
    let materials_in = array(&piece.data.cell, "material");
    let (mut tets, mut triangles, mut labels, mut densities, mut edges, mut materials) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut start = 0usize;
    for (c, (&kind, &end)) in piece.cells.types.iter().zip(&offsets).enumerate() {
        let end = end as usize;
        let vertices: Vec<usize> = connectivity
            .get(start..end)
            .ok_or_else(|| error(path, format!("cell {c} has offsets beyond the connectivity")))?
            .iter()
            .map(|&v| v as usize)
            .collect();
        if vertices.iter().any(|&v| v >= positions.len()) {
            return Err(error(path, format!("cell {c} refers to a missing point")));
        }
        match (kind, vertices.len()) {
            (CellType::Tetra, 4) => tets.push([vertices[0], vertices[1], vertices[2], vertices[3]]),
            (CellType::Triangle, 3) => triangles.push([vertices[0], vertices[1], vertices[2]]),
            (CellType::Line, 2) => {
                edges.push([vertices[0], vertices[1]]);
                start = end;
                continue;
            }
            _ => {
                return Err(error(
                    path,
                    format!("cell {c} is a {kind:?}; only tetrahedra, triangles and lines are read"),
                ))
            }
        }
        // An element (not a spring): its fields.
        labels.push(labels_in.get(c).copied().unwrap_or(0.0) as i32);
        densities.push(densities_in.get(c).copied().unwrap_or(0.0));
        if let Some(numbers) = &materials_in {
            materials.push(numbers.get(c).copied().unwrap_or(0.0) as i32);
        }
        start = end;
    }
    let rest: Vec<Vector3<f64>> = positions
        .iter()
        .zip(displacement.chunks(3))
        .map(|(p, d)| p - Vector3::new(d[0], d[1], d[2]))
        .collect();
    let mesh = match (tets.is_empty(), triangles.is_empty()) {
        (_, true) => Mesh::Tetrahedra(TetMesh::new(rest, tets, labels)?),
        (true, false) => Mesh::Triangles(TriangleMesh::new(rest, triangles, labels)?),
        (false, false) => return Err(error(path, "the frame mixes tetrahedra and triangles")),
    };
    Ok(FrameData {
        mesh,
        positions,
        strain_energy_density: densities,
        edges,
        velocities,
        materials,
        continuous_displacement,
    })
}
