//! A run's frames read back as arrays, for post-processing a run (a sweep's
//! tracked vertices, a plot) without its scene.

use crate::arrays::to_matrix;
use crate::errors::OrRaise;
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

fn flat(points: &[nalgebra::Vector3<f64>]) -> Vec<f64> {
    points.iter().flat_map(|p| [p.x, p.y, p.z]).collect()
}

/// Reads one frame a run wrote (`frame_XXXX.vtu`) as a dict of numpy
/// arrays: `positions` (n, 3) and `velocities` (n, 3) of the vertices (m,
/// m/s), `rest_positions` (n, 3), and `strain_energy_density` (elements,
/// J/m³). A file Hooke did not write, or a damaged one, raises ParseError
/// naming the file.
#[pyfunction]
pub fn read_frame<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyDict>> {
    let frame = py.detach(|| hooke::output::read_frame(&path)).or_raise()?;
    let dict = PyDict::new(py);
    dict.set_item("positions", to_matrix(py, flat(&frame.positions), 3)?)?;
    dict.set_item("velocities", to_matrix(py, flat(&frame.velocities), 3)?)?;
    dict.set_item("rest_positions", to_matrix(py, flat(frame.mesh.vertices()), 3)?)?;
    dict.set_item(
        "strain_energy_density",
        PyArray1::from_slice(py, &frame.strain_energy_density),
    )?;
    Ok(dict)
}
