//! Python values (dicts, lists, numbers, strings, numpy arrays) as the TOML
//! values of Hooke's scene format, so that a dict stands for a scene table.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// `value` as TOML; `key` names it in errors (`bodies[0].material.density`).
pub fn to_toml(value: &Bound<'_, PyAny>, key: &str) -> PyResult<toml::Value> {
    if value.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(value.extract()?));
    }
    if value.is_instance_of::<PyInt>() {
        return Ok(toml::Value::Integer(value.extract().map_err(|_| {
            PyTypeError::new_err(format!("{key}: the integer {value} does not fit in 64 bits"))
        })?));
    }
    if value.is_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(value.extract()?));
    }
    if value.is_instance_of::<PyString>() {
        return Ok(toml::Value::String(value.extract()?));
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        return Ok(toml::Value::Table(to_table(dict, key)?));
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let items = value
            .try_iter()?
            .enumerate()
            .map(|(i, item)| to_toml(&item?, &format!("{key}[{i}]")))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(toml::Value::Array(items));
    }
    // numpy arrays and scalars become lists and Python numbers.
    if value.hasattr("tolist")? {
        return to_toml(&value.call_method0("tolist")?, key);
    }
    // A path (pathlib.Path) becomes its text.
    if value.hasattr("__fspath__")? {
        return Ok(toml::Value::String(value.call_method0("__fspath__")?.extract()?));
    }
    Err(PyTypeError::new_err(format!(
        "{key}: a {} cannot stand in a scene (use numbers, strings, booleans, lists and dicts)",
        value.get_type().name()?
    )))
}

/// A dict with string keys as a TOML table.
pub fn to_table(dict: &Bound<'_, PyDict>, key: &str) -> PyResult<toml::Table> {
    let mut table = toml::Table::new();
    for (name, value) in dict.iter() {
        let name: String = name
            .extract()
            .map_err(|_| PyTypeError::new_err(format!("{key}: keys must be strings, got {name:?}")))?;
        let inner = if key.is_empty() {
            name.clone()
        } else {
            format!("{key}.{name}")
        };
        if value.is_none() {
            continue; // None leaves a key out, as if it were not written.
        }
        table.insert(name, to_toml(&value, &inner)?);
    }
    Ok(table)
}
