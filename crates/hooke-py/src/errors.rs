//! Hooke's errors as Python exceptions (the classes of `hooke.errors`), with
//! the message the command line prints and the place it names as attributes.

use hooke::HookeError;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// The Python exception for a Hooke error: its class by kind, its message,
/// and `path`, `line`, `key`, `element`, `step` and `time` where they are known.
pub fn to_python(error: HookeError) -> PyErr {
    Python::attach(|py| match exception(py, &error) {
        Ok(raised) => raised,
        // The package's own module is missing: still say what went wrong.
        Err(_) => PyRuntimeError::new_err(error.to_string()),
    })
}

fn exception(py: Python<'_>, error: &HookeError) -> PyResult<PyErr> {
    let (class, attributes): (&str, Vec<(&str, Py<PyAny>)>) = match error {
        HookeError::Io { path, .. } => (
            "HookeIOError",
            vec![(
                "path",
                path.display().to_string().into_pyobject(py)?.into_any().unbind(),
            )],
        ),
        HookeError::Parse { path, line, .. } => (
            "ParseError",
            vec![
                (
                    "path",
                    path.display().to_string().into_pyobject(py)?.into_any().unbind(),
                ),
                ("line", line.into_pyobject(py)?.into_any().unbind()),
            ],
        ),
        HookeError::Mesh { .. } => ("MeshError", vec![]),
        HookeError::Material { context, .. } => (
            "MaterialError",
            vec![("key", context.into_pyobject(py)?.into_any().unbind())],
        ),
        HookeError::Scene { key, .. } => ("SceneError", vec![("key", key.into_pyobject(py)?.into_any().unbind())]),
        HookeError::InvalidDeformation { element, .. } => (
            "InvalidDeformationError",
            vec![("element", element.into_pyobject(py)?.into_any().unbind())],
        ),
        HookeError::LinearSolver { .. } | HookeError::Solver { .. } => ("SolverError", vec![]),
        HookeError::StepFailed { step, time, .. } => (
            "StepFailedError",
            vec![
                ("step", step.into_pyobject(py)?.into_any().unbind()),
                ("time", time.into_pyobject(py)?.into_any().unbind()),
            ],
        ),
        HookeError::Interrupted { step, time } => (
            "RunInterrupted",
            vec![
                ("step", step.into_pyobject(py)?.into_any().unbind()),
                ("time", time.into_pyobject(py)?.into_any().unbind()),
            ],
        ),
    };
    let class = py.import("hooke.errors")?.getattr(class)?;
    let instance = class.call1((error.to_string(),))?;
    for (name, value) in attributes {
        instance.setattr(name, value)?;
    }
    Ok(PyErr::from_value(instance))
}

/// `?` on a Hooke result inside a Python-facing function.
pub trait OrRaise<T> {
    fn or_raise(self) -> PyResult<T>;
}

impl<T> OrRaise<T> for hooke::Result<T> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(to_python)
    }
}
