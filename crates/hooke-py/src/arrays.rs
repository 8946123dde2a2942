//! numpy arrays in and out. A float64 array is read where it lies (no copy
//! when it is C-contiguous); anything else array-like is converted once by
//! numpy. Shapes are checked with messages that name the argument.

use numpy::{PyArray1, PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use std::borrow::Cow;

/// A float64 array borrowed from Python.
pub struct Floats<'py> {
    array: PyReadonlyArrayDyn<'py, f64>,
    name: String,
}

impl<'py> Floats<'py> {
    /// Reads `value` as float64: a float64 ndarray as it is, anything else through `numpy.asarray`.
    pub fn read(value: &Bound<'py, PyAny>, name: &str) -> PyResult<Floats<'py>> {
        let array = match value.cast::<PyArrayDyn<f64>>() {
            Ok(array) => array.clone(),
            Err(_) => {
                let converted = numpy_module(value.py())?
                    .call_method1("asarray", (value, "float64"))
                    .map_err(|e| PyTypeError::new_err(format!("{name}: expected an array of numbers ({e})")))?;
                converted
                    .cast_into::<PyArrayDyn<f64>>()
                    .map_err(|e| PyTypeError::new_err(format!("{name}: expected an array of numbers ({e})")))?
            }
        };
        let array = array
            .try_readonly()
            .map_err(|e| PyValueError::new_err(format!("{name}: the array is being written elsewhere ({e})")))?;
        Ok(Floats {
            array,
            name: name.to_string(),
        })
    }

    pub fn shape(&self) -> &[usize] {
        self.array.shape()
    }

    /// The values in C order: a view when the array is contiguous, else one copy.
    pub fn values(&self) -> Cow<'_, [f64]> {
        // as_slice also accepts Fortran order, whose memory order is not the C order wanted here.
        match self.array.as_slice() {
            Ok(slice) if self.array.is_c_contiguous() => Cow::Borrowed(slice),
            _ => Cow::Owned(self.array.as_array().iter().copied().collect()),
        }
    }

    /// The values, refusing NaN and infinity with the index of the first.
    pub fn finite_values(&self) -> PyResult<Cow<'_, [f64]>> {
        let values = self.values();
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return Err(PyValueError::new_err(format!(
                "{}: entry {} (flat index {i}) is {}; positions and parameters must be finite",
                self.name,
                self.index_of(i),
                values[i]
            )));
        }
        Ok(values)
    }

    /// The multi-index of flat index `i`, for messages.
    fn index_of(&self, mut i: usize) -> String {
        let shape = self.shape();
        let mut index = vec![0; shape.len()];
        for (axis, &n) in shape.iter().enumerate().rev() {
            index[axis] = i % n.max(1);
            i /= n.max(1);
        }
        format!("{index:?}")
    }

    /// Vertex coordinates: an (n, d) array with d = 2 or 3. Returns the points (z = 0 in 2D) and d.
    pub fn points(&self) -> PyResult<(Vec<nalgebra::Vector3<f64>>, usize)> {
        let shape = self.shape().to_vec();
        let [n, d] = shape[..] else {
            return Err(PyValueError::new_err(format!(
                "{}: expected an (n, 3) or (n, 2) array of vertex positions, got shape {shape:?}",
                self.name
            )));
        };
        if d != 2 && d != 3 {
            return Err(PyValueError::new_err(format!(
                "{}: expected 2 or 3 coordinates per vertex, got shape {shape:?}",
                self.name
            )));
        }
        let values = self.finite_values()?;
        let points = (0..n)
            .map(|v| {
                nalgebra::Vector3::new(
                    values[v * d],
                    values[v * d + 1],
                    if d == 3 { values[v * d + 2] } else { 0.0 },
                )
            })
            .collect();
        Ok((points, d))
    }

    /// A per-DOF vector of `vertices` × `dimension` values, given as (n, d) or flat (n·d,).
    pub fn dof_vector(&self, vertices: usize, dimension: usize) -> PyResult<Cow<'_, [f64]>> {
        let shape = self.shape();
        let fits = shape == [vertices, dimension] || shape == [vertices * dimension];
        if !fits {
            return Err(PyValueError::new_err(format!(
                "{}: expected shape ({vertices}, {dimension}) or ({},), got {shape:?}",
                self.name,
                vertices * dimension
            )));
        }
        self.finite_values()
    }

    /// A vector of `length` values (a length-3 vector may be given for a 2D one with z = 0).
    pub fn fixed_vector(&self, length: usize) -> PyResult<[f64; 3]> {
        let values = self.finite_values()?;
        let fits = values.len() == length || (length == 2 && values.len() == 3 && values[2] == 0.0);
        if self.shape().len() != 1 || !fits {
            return Err(PyValueError::new_err(format!(
                "{}: expected {length} numbers, got shape {:?}",
                self.name,
                self.shape()
            )));
        }
        let mut out = [0.0; 3];
        out[..length].copy_from_slice(&values[..length]);
        Ok(out)
    }
}

/// The values of an integer ndarray as i64, read through numpy's own conversion
/// (no Python int per entry).
fn int64_values(array: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    let converted = array
        .call_method1("astype", ("int64",))?
        .cast_into::<PyArrayDyn<i64>>()?;
    let readonly = converted.readonly();
    Ok(readonly.as_array().iter().copied().collect())
}

/// One integer label per element (`count` of them), as i32.
pub fn labels(value: &Bound<'_, PyAny>, count: usize) -> PyResult<Vec<i32>> {
    let array = numpy_module(value.py())?
        .call_method1("asarray", (value,))
        .map_err(|e| PyTypeError::new_err(format!("labels: expected one integer per element ({e})")))?;
    let kind: String = array.getattr("dtype")?.getattr("kind")?.extract()?;
    if !matches!(kind.as_str(), "i" | "u" | "b") {
        return Err(PyTypeError::new_err(format!(
            "labels: expected integers, got dtype {}",
            array.getattr("dtype")?.str()?
        )));
    }
    let values = int64_values(&array)?;
    if array.getattr("ndim")?.extract::<usize>()? != 1 || values.len() != count {
        return Err(PyValueError::new_err(format!(
            "labels: expected one label per element ({count}), got shape {}",
            array.getattr("shape")?.str()?
        )));
    }
    values
        .into_iter()
        .map(|l| i32::try_from(l).map_err(|_| PyValueError::new_err(format!("labels: {l} is out of range"))))
        .collect()
}

/// Integer indices from an index array, or the true positions of a boolean mask of `length`.
pub fn indices(value: &Bound<'_, PyAny>, name: &str, length: usize) -> PyResult<Vec<usize>> {
    let py = value.py();
    let array = numpy_module(py)?
        .call_method1("asarray", (value,))
        .map_err(|e| PyTypeError::new_err(format!("{name}: expected indices or a mask ({e})")))?;
    let kind: String = array.getattr("dtype")?.getattr("kind")?.extract()?;
    let ndim: usize = array.getattr("ndim")?.extract()?;
    if ndim != 1 {
        return Err(PyValueError::new_err(format!(
            "{name}: expected a 1D array of indices or a boolean mask, got {ndim} dimensions"
        )));
    }
    match kind.as_str() {
        "b" => {
            let mask = int64_values(&array)?;
            if mask.len() != length {
                return Err(PyValueError::new_err(format!(
                    "{name}: a mask must have one entry per vertex ({length}), got {}",
                    mask.len()
                )));
            }
            Ok(mask
                .iter()
                .enumerate()
                .filter(|(_, m)| **m != 0)
                .map(|(i, _)| i)
                .collect())
        }
        "i" | "u" => int64_values(&array)?
            .iter()
            .map(|&i| {
                usize::try_from(i)
                    .ok()
                    .filter(|&i| i < length)
                    .ok_or_else(|| PyValueError::new_err(format!("{name}: index {i} is outside 0..{length}")))
            })
            .collect(),
        "f" if array.getattr("size")?.extract::<usize>()? == 0 => Ok(Vec::new()),
        _ => Err(PyTypeError::new_err(format!(
            "{name}: expected integer indices or a boolean mask, got dtype {}",
            array.getattr("dtype")?.str()?
        ))),
    }
}

/// An (m, k) integer array of element corners, k = 3 (triangles) or 4 (tetrahedra).
pub fn elements(value: &Bound<'_, PyAny>, name: &str) -> PyResult<(Vec<Vec<usize>>, usize)> {
    let array = numpy_module(value.py())?
        .call_method1("asarray", (value,))
        .map_err(|e| PyTypeError::new_err(format!("{name}: expected an integer array ({e})")))?;
    let kind: String = array.getattr("dtype")?.getattr("kind")?.extract()?;
    let shape: Vec<usize> = array.getattr("shape")?.extract()?;
    if !matches!(kind.as_str(), "i" | "u") {
        return Err(PyTypeError::new_err(format!(
            "{name}: expected integer vertex indices, got dtype {}",
            array.getattr("dtype")?.str()?
        )));
    }
    let [_, k] = shape[..] else {
        return Err(PyValueError::new_err(format!(
            "{name}: expected an (m, 4) array of tetrahedra or (m, 3) of triangles, got shape {shape:?}"
        )));
    };
    if k != 3 && k != 4 {
        return Err(PyValueError::new_err(format!(
            "{name}: expected 4 (tetrahedra) or 3 (triangles) vertices per element, got shape {shape:?}"
        )));
    }
    Ok((index_rows(&array, k, name)?, k))
}

/// An integer array's rows of `k` vertex indices, none negative.
fn index_rows(array: &Bound<'_, PyAny>, k: usize, name: &str) -> PyResult<Vec<Vec<usize>>> {
    let flat = int64_values(array)?;
    flat.chunks(k)
        .enumerate()
        .map(|(e, row)| {
            row.iter()
                .map(|&i| {
                    usize::try_from(i)
                        .map_err(|_| PyValueError::new_err(format!("{name}: row {e} has the negative index {i}")))
                })
                .collect::<PyResult<Vec<usize>>>()
        })
        .collect()
}

/// Edges as an (m, 2) integer array of vertex indices, each below `vertex_count`.
pub fn edges(value: &Bound<'_, PyAny>, name: &str, vertex_count: usize) -> PyResult<Vec<[usize; 2]>> {
    let array = numpy_module(value.py())?
        .call_method1("asarray", (value,))
        .map_err(|e| PyTypeError::new_err(format!("{name}: expected an integer array ({e})")))?;
    let kind: String = array.getattr("dtype")?.getattr("kind")?.extract()?;
    let shape: Vec<usize> = array.getattr("shape")?.extract()?;
    if !matches!(kind.as_str(), "i" | "u") || !matches!(shape[..], [_, 2]) {
        return Err(PyValueError::new_err(format!(
            "{name}: expected an (m, 2) integer array of edges, got shape {shape:?} of dtype {}",
            array.getattr("dtype")?.str()?
        )));
    }
    let rows = index_rows(&array, 2, name)?;
    rows.iter()
        .enumerate()
        .map(|(e, row)| match row.iter().find(|&&v| v >= vertex_count) {
            Some(v) => Err(PyValueError::new_err(format!(
                "{name}[{e}] names vertex {v}, but there are {vertex_count}"
            ))),
            None => Ok([row[0], row[1]]),
        })
        .collect()
}

/// A flat vector as an (n, d) array.
pub fn to_matrix<'py>(py: Python<'py>, values: Vec<f64>, columns: usize) -> PyResult<Bound<'py, PyAny>> {
    let rows = values.len() / columns.max(1);
    Ok(PyArray1::from_vec(py, values).reshape([rows, columns])?.into_any())
}

pub fn numpy_module(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    py.import("numpy")
}

/// A symmetric matrix stored as its lower triangle (CSC) as a full
/// `scipy.sparse.csr_matrix` (both triangles, sorted column indices).
pub fn symmetric_csr<'py>(
    py: Python<'py>,
    pattern: &hooke::linalg::LowerPattern,
    values: &[f64],
) -> PyResult<Bound<'py, PyAny>> {
    let n = pattern.size;
    // Row r of the full matrix: the lower entries (r, j < r), found column by
    // column (so in increasing j), then column r itself (diagonal and i > r).
    let mut below = vec![0usize; n];
    for j in 0..n {
        for &i in &pattern.row_indices[pattern.column_starts[j] + 1..pattern.column_starts[j + 1]] {
            below[i] += 1;
        }
    }
    let mut starts = vec![0usize; n + 1];
    for r in 0..n {
        let column = pattern.column_starts[r + 1] - pattern.column_starts[r];
        starts[r + 1] = starts[r] + below[r] + column;
    }
    let total = starts[n];
    let mut columns = vec![0i64; total];
    let mut data = vec![0.0; total];
    let mut cursor: Vec<usize> = starts[..n].to_vec();
    for j in 0..n {
        let range = pattern.column_starts[j]..pattern.column_starts[j + 1];
        for k in range.clone().skip(1) {
            let i = pattern.row_indices[k];
            columns[cursor[i]] = j as i64;
            data[cursor[i]] = values[k];
            cursor[i] += 1;
        }
    }
    for r in 0..n {
        for k in pattern.column_starts[r]..pattern.column_starts[r + 1] {
            columns[cursor[r]] = pattern.row_indices[k] as i64;
            data[cursor[r]] = values[k];
            cursor[r] += 1;
        }
    }
    let starts: Vec<i64> = starts.into_iter().map(|s| s as i64).collect();
    let sparse = py.import("scipy.sparse").map_err(|e| {
        pyo3::exceptions::PyImportError::new_err(format!("matrices are returned as scipy.sparse matrices: {e}"))
    })?;
    sparse.getattr("csr_matrix")?.call1((
        (
            PyArray1::from_vec(py, data),
            PyArray1::from_vec(py, columns),
            PyArray1::from_vec(py, starts),
        ),
        (n, n),
    ))
}
