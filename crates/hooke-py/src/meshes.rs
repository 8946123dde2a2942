//! Meshes as arrays: the mesher, and the readers and writers of the formats
//! Hooke reads.

use crate::arrays::{self, to_matrix, Floats};
use crate::errors::OrRaise;
use crate::model::toml_into;
use crate::toml_value::to_toml;
use hooke::mesh::TetMesh;
use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::path::PathBuf;

type MeshArrays<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>);

fn mesh_arrays<'py>(
    py: Python<'py>,
    vertices: &[nalgebra::Vector3<f64>],
    dimension: usize,
    corners: Vec<i64>,
    k: usize,
    labels: &[i32],
) -> PyResult<MeshArrays<'py>> {
    let flat: Vec<f64> = vertices
        .iter()
        .flat_map(|p| p.iter().take(dimension).copied().collect::<Vec<_>>())
        .collect();
    let elements = PyArray1::from_vec(py, corners).reshape([labels.len(), k])?.into_any();
    Ok((
        to_matrix(py, flat, dimension)?,
        elements,
        PyArray1::from_slice(py, labels).into_any(),
    ))
}

fn tet_arrays<'py>(py: Python<'py>, mesh: &TetMesh) -> PyResult<MeshArrays<'py>> {
    let corners = mesh.tets.iter().flatten().map(|&v| v as i64).collect();
    mesh_arrays(py, &mesh.vertices, 3, corners, 4, &mesh.labels)
}

/// Tetrahedra filling a shape (the scene grammar's `shape` as a dict, e.g.
/// `{"ball": {"center": [0, 0, 0], "radius": 0.1}}`) by isosurface stuffing,
/// with edges about `edge_length` m long. `regions` is a list of
/// `{"label": int, "shape": {...}}`: elements whose centroid lies in a region
/// get its label (later regions win). Returns (vertices (n, 3), tets (m, 4), labels (m,)).
#[pyfunction]
#[pyo3(signature = (shape, edge_length, regions=None))]
pub fn mesh_shape<'py>(
    py: Python<'py>,
    shape: &Bound<'py, PyAny>,
    edge_length: f64,
    regions: Option<&Bound<'py, PyAny>>,
) -> PyResult<MeshArrays<'py>> {
    let mut table = toml::Table::new();
    table.insert("shape".into(), to_toml(shape, "shape")?);
    table.insert("edge_length".into(), toml::Value::Float(edge_length));
    if let Some(regions) = regions {
        table.insert("regions".into(), to_toml(regions, "regions")?);
    }
    let recipe: hooke::meshing::MeshRecipe = toml_into(toml::Value::Table(table), "mesh_shape")?;
    let base = std::env::current_dir().unwrap_or_default();
    let meshed = py
        .detach(|| hooke::meshing::mesh_recipe(recipe, &base, "mesh_shape"))
        .or_raise()?;
    tet_arrays(py, &meshed.mesh)
}

/// Reads a volume mesh: TetGen (.node with its .ele), MEDIT (.mesh) or Gmsh
/// (.msh). With `dimension=2`, a triangle mesh (.msh, .obj). Returns
/// (vertices (n, d), elements (m, d + 1), labels (m,)).
#[pyfunction]
#[pyo3(signature = (path, dimension=3))]
pub fn read_mesh<'py>(py: Python<'py>, path: PathBuf, dimension: usize) -> PyResult<MeshArrays<'py>> {
    match dimension {
        3 => {
            let mesh = py.detach(|| hooke::io::read_mesh(&path)).or_raise()?;
            tet_arrays(py, &mesh)
        }
        2 => {
            let mesh = py.detach(|| hooke::io::read_planar_mesh(&path)).or_raise()?;
            let corners = mesh.triangles.iter().flatten().map(|&v| v as i64).collect();
            mesh_arrays(py, &mesh.vertices, 2, corners, 3, &mesh.labels)
        }
        other => Err(PyValueError::new_err(format!("dimension: 2 or 3, got {other}"))),
    }
}

/// Reads a triangulated surface (.obj, .stl, .ply): (vertices (n, 3), triangles (m, 3)).
#[pyfunction]
pub fn read_surface<'py>(py: Python<'py>, path: PathBuf) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let soup = py.detach(|| hooke::io::read_surface(&path)).or_raise()?;
    let flat: Vec<f64> = soup
        .vertices
        .iter()
        .flat_map(|p| p.iter().copied().collect::<Vec<_>>())
        .collect();
    let corners: Vec<i64> = soup.triangles.iter().flatten().map(|&v| v as i64).collect();
    Ok((
        to_matrix(py, flat, 3)?,
        PyArray1::from_vec(py, corners)
            .reshape([soup.triangles.len(), 3])?
            .into_any(),
    ))
}

/// Writes a mesh by extension. Tetrahedra ((n, 3) vertices, (m, 4) tets):
/// MEDIT (.mesh), TetGen (.node, with its .ele beside it), Gmsh 4.1 (.msh) or
/// VTK (.vtu). Triangles ((n, 2) vertices, (m, 3) triangles, a 2D mesh): Gmsh
/// (.msh) or OBJ (.obj, z = 0). Labels (m,) default to 0.
#[pyfunction]
#[pyo3(signature = (path, vertices, elements, labels=None))]
pub fn write_mesh(
    py: Python<'_>,
    path: PathBuf,
    vertices: &Bound<'_, PyAny>,
    elements: &Bound<'_, PyAny>,
    labels: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let (points, dimension) = Floats::read(vertices, "vertices")?.points()?;
    let (corners, k) = arrays::elements(elements, "elements")?;
    if k != dimension + 1 {
        return Err(PyValueError::new_err(format!(
            "elements: {dimension}D vertices need {} vertices per element, got {k}",
            dimension + 1
        )));
    }
    let labels: Vec<i32> = match labels {
        None => vec![0; corners.len()],
        Some(labels) => arrays::labels(labels, corners.len())?,
    };
    if dimension == 3 {
        let tets = corners.iter().map(|c| [c[0], c[1], c[2], c[3]]).collect();
        let mesh = TetMesh::new(points, tets, labels).or_raise()?;
        return py.detach(|| hooke::meshing::write_mesh(&path, &mesh)).or_raise();
    }
    let triangles: Vec<[usize; 3]> = corners.iter().map(|c| [c[0], c[1], c[2]]).collect();
    let extension = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("obj") => py
            .detach(|| hooke::io::write_surface(&path, &points, &triangles))
            .or_raise(),
        _ => {
            let mesh = hooke::mesh::TriangleMesh::new(points, triangles, labels).or_raise()?;
            let mesh = hooke::mesh::Mesh::Triangles(mesh);
            py.detach(|| hooke::io::gmsh::write_gmsh(&path, &mesh)).or_raise()
        }
    }
}

/// Writes a triangulated surface ((n, 3) vertices, (m, 3) triangles) by
/// extension: OBJ (.obj), ASCII STL (.stl) or ASCII PLY (.ply).
#[pyfunction]
pub fn write_surface(
    py: Python<'_>,
    path: PathBuf,
    vertices: &Bound<'_, PyAny>,
    triangles: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let (points, dimension) = Floats::read(vertices, "vertices")?.points()?;
    let (corners, k) = arrays::elements(triangles, "triangles")?;
    if dimension != 3 || k != 3 {
        return Err(PyValueError::new_err(
            "write_surface: expected (n, 3) vertices and (m, 3) triangles",
        ));
    }
    if let Some((t, v)) = corners
        .iter()
        .enumerate()
        .find_map(|(t, c)| c.iter().find(|&&v| v >= points.len()).map(|&v| (t, v)))
    {
        return Err(PyValueError::new_err(format!(
            "triangles: triangle {t} names vertex {v}, but there are {} vertices",
            points.len()
        )));
    }
    let triangles: Vec<[usize; 3]> = corners.iter().map(|c| [c[0], c[1], c[2]]).collect();
    py.detach(|| hooke::io::write_surface(&path, &points, &triangles))
        .or_raise()
}
