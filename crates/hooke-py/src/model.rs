//! `hooke.Model`: a body from arrays (or a scene's model), and the quantities
//! of its potential: E(x), ∇E(x), the Hessian and the mass matrix, and modes.

use crate::arrays::{self, symmetric_csr, to_matrix, Floats};
use crate::errors::OrRaise;
use crate::toml_value::{to_table, to_toml};
use hooke::material::registry::{self, MaterialContext, MaterialSource};
use hooke::material::MaterialRef;
use hooke::mesh::{TetMesh, TriangleMesh};
use hooke::model::MassKind;
use hooke::model::{Damping, Model, Motion, Obstacle, Pin, RegionForce};
use hooke::scene::Scene;
use nalgebra::Vector3;
use numpy::{PyArray1, PyArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;

/// How a model was made, so that a simulation can build its own copy (whose
/// pins it may then drive).
pub enum Recipe {
    Arrays(Box<ArraysRecipe>),
    Scene(Box<Scene>),
}

impl Recipe {
    pub fn build(&self) -> hooke::Result<Model> {
        match self {
            Recipe::Arrays(recipe) => recipe.build(),
            Recipe::Scene(scene) => scene.build().map(|built| built.model),
        }
    }
}

/// A model given as arrays and keyword arguments, checked and oriented.
pub struct ArraysRecipe {
    vertices: Vec<Vector3<f64>>,
    dimension: usize,
    elements: Vec<Vec<usize>>,
    labels: Vec<i32>,
    materials: Vec<MaterialRef>,
    pins: Vec<Vec<usize>>,
    gravity: [f64; 3],
    damping: Option<Damping>,
    obstacles: Vec<Obstacle>,
    forces: Vec<(usize, Vector3<f64>)>,
    mass: MassKind,
}

impl ArraysRecipe {
    fn build(&self) -> hooke::Result<Model> {
        let mut model = if self.dimension == 3 {
            let tets = self.elements.iter().map(|e| [e[0], e[1], e[2], e[3]]).collect();
            let mesh = TetMesh::new(self.vertices.clone(), tets, self.labels.clone())?;
            Model::new(mesh, self.materials.clone(), self.mass)?
        } else {
            let triangles = self.elements.iter().map(|e| [e[0], e[1], e[2]]).collect();
            let mesh = TriangleMesh::new(self.vertices.clone(), triangles, self.labels.clone())?;
            Model::planar(mesh, self.materials.clone(), self.mass)?
        };
        model.set_gravity(Vector3::from(self.gravity));
        for (k, vertices) in self.pins.iter().enumerate() {
            let mut pin = Pin::new(vertices.clone(), Motion::Fixed {}, None);
            pin.key = Some(format!("pins[{k}]"));
            model.add_pin(pin);
        }
        model.set_damping(self.damping)?;
        for obstacle in &self.obstacles {
            model.add_obstacle(obstacle.clone());
        }
        for &(vertex, force) in &self.forces {
            model.add_force(RegionForce {
                vertices: vec![vertex],
                shares: vec![1.0],
                total: force,
                amplitude: Vector3::zeros(),
                frequency: 0.0,
                phase: 0.0,
                ramp_time: 0.0,
                dimension: self.dimension,
            });
        }
        Ok(model)
    }
}

/// A deformable body: its mesh, materials, mass, pins, gravity, damping,
/// obstacles and nodal forces, and the potential they define.
///
/// Positions are (n, d) arrays (d = 3, or 2 for plane-strain triangles) in
/// metres, or flat (n·d,) arrays interleaved x, y(, z) per vertex.
#[pyclass(name = "Model", module = "hooke", frozen)]
pub struct PyModel {
    pub model: Arc<Model>,
    pub recipe: Arc<Recipe>,
}

impl PyModel {
    pub fn from_scene(scene: Scene) -> hooke::Result<PyModel> {
        let built = scene.build()?;
        Ok(PyModel {
            model: Arc::new(built.model),
            recipe: Arc::new(Recipe::Scene(Box::new(scene))),
        })
    }
}

#[pymethods]
impl PyModel {
    #[new]
    #[pyo3(signature = (vertices, elements, material, *, labels=None, pins=None, gravity=None, damping=None, obstacles=None, forces=None, mass="lumped"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        vertices: &Bound<'_, PyAny>,
        elements: &Bound<'_, PyAny>,
        material: &Bound<'_, PyAny>,
        labels: Option<&Bound<'_, PyAny>>,
        pins: Option<&Bound<'_, PyAny>>,
        gravity: Option<&Bound<'_, PyAny>>,
        damping: Option<&Bound<'_, PyDict>>,
        obstacles: Option<&Bound<'_, PyAny>>,
        forces: Option<&Bound<'_, PyAny>>,
        mass: &str,
    ) -> PyResult<PyModel> {
        let (points, dimension) = Floats::read(vertices, "vertices")?.points()?;
        let (mut corners, k) = arrays::elements(elements, "elements")?;
        if k != dimension + 1 {
            return Err(PyValueError::new_err(format!(
                "elements: {dimension}D vertices need {} vertices per element, got {k} \
                 (tetrahedra need (n, 3) vertices; triangles (n, 2), for plane strain)",
                dimension + 1
            )));
        }
        let n = points.len();
        let m = corners.len();
        if let Some((e, v)) = corners
            .iter()
            .enumerate()
            .find_map(|(e, c)| c.iter().find(|&&v| v >= n).map(|&v| (e, v)))
        {
            return Err(PyValueError::new_err(format!(
                "elements: element {e} names vertex {v}, but there are {n} vertices"
            )));
        }
        // A vertex in no element would have no mass: refused here, before the
        // model's arrays (some hundreds of bytes a vertex) are allocated for it.
        let mut used = vec![false; n];
        corners.iter().flatten().for_each(|&v| used[v] = true);
        if let Some(v) = used.iter().position(|u| !u) {
            let unused = used.iter().filter(|u| !**u).count();
            return Err(PyValueError::new_err(format!(
                "vertices: vertex {v} belongs to no element ({unused} of the {n} vertices do): it would have no mass; \
                 pass only the vertices the elements use"
            )));
        }
        let labels: Vec<i32> = match labels {
            None => vec![0; m],
            Some(labels) => arrays::labels(labels, m)?,
        };
        let reoriented = orient(&points, &mut corners, dimension, &labels).or_raise()?;
        if reoriented > 0 {
            let warnings = py.import("warnings")?;
            warnings.call_method1(
                "warn",
                (format!(
                    "hooke.Model: re-oriented {reoriented} inside-out elements (their vertex order)"
                ),),
            )?;
        }
        let materials = element_materials(py, material, &labels, dimension)?;
        let pin_groups = pin_groups(pins, n)?;
        let gravity = match gravity {
            None => [0.0; 3],
            Some(g) => Floats::read(g, "gravity")?.fixed_vector(dimension)?,
        };
        let damping = match damping {
            None => None,
            Some(d) => Some(from_dict::<Damping>(d, "damping")?),
        };
        let obstacles = match obstacles {
            None => Vec::new(),
            Some(list) => list
                .try_iter()?
                .enumerate()
                .map(|(i, o)| {
                    let key = format!("obstacles[{i}]");
                    let obstacle: Obstacle = toml_into(to_toml(&o?, &key)?, &key)?;
                    if matches!(obstacle.shape, hooke::model::ObstacleShape::Mesh { .. }) {
                        return Err(PyValueError::new_err(format!(
                            "{key}.shape: a mesh obstacle is for barrier contact, which scenes take ([contact]); a model's obstacles are penalty obstacles: a plane, sphere, box or torus"
                        )));
                    }
                    if obstacle.motion.is_some() {
                        return Err(PyValueError::new_err(format!(
                            "{key}.motion: moving obstacles are for barrier contact, which scenes take ([contact]); a model's obstacles are fixed penalty obstacles"
                        )));
                    }
                    if !obstacle.stiffness.is_some_and(|k| k.is_finite() && k >= 0.0) {
                        return Err(PyValueError::new_err(format!(
                            "{key}.stiffness: the penalty stiffness must be given, ≥ 0 (1/s²)"
                        )));
                    }
                    Ok(obstacle)
                })
                .collect::<PyResult<_>>()?,
        };
        let forces = match forces {
            None => Vec::new(),
            Some(f) => {
                let floats = Floats::read(f, "forces")?;
                let values = floats.dof_vector(n, dimension)?;
                (0..n)
                    .filter_map(|v| {
                        let f = &values[v * dimension..(v + 1) * dimension];
                        f.iter()
                            .any(|c| *c != 0.0)
                            .then(|| (v, Vector3::new(f[0], f[1], if dimension == 3 { f[2] } else { 0.0 })))
                    })
                    .collect()
            }
        };
        let mass = match mass {
            "lumped" => MassKind::Lumped,
            "consistent" => MassKind::Consistent,
            other => {
                return Err(PyValueError::new_err(format!(
                    "mass: expected \"lumped\" or \"consistent\", got {other:?}"
                )))
            }
        };
        let recipe = ArraysRecipe {
            vertices: points,
            dimension,
            elements: corners,
            labels,
            materials,
            pins: pin_groups,
            gravity,
            damping,
            obstacles,
            forces,
            mass,
        };
        let model = py.detach(|| recipe.build()).or_raise()?;
        Ok(PyModel {
            model: Arc::new(model),
            recipe: Arc::new(Recipe::Arrays(Box::new(recipe))),
        })
    }

    /// 3 for tetrahedra, 2 for plane-strain triangles.
    #[getter]
    fn dimension(&self) -> usize {
        self.model.dimension()
    }

    #[getter]
    fn vertex_count(&self) -> usize {
        self.model.mesh().vertex_count()
    }

    #[getter]
    fn element_count(&self) -> usize {
        self.model.mesh().element_count()
    }

    /// Degrees of freedom, pinned ones included: vertices × dimension.
    #[getter]
    fn dof_count(&self) -> usize {
        self.model.dof_count()
    }

    /// Rest positions, (n, d) array in m.
    #[getter]
    fn rest_positions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_matrix(py, self.model.rest_positions(), self.model.dimension())
    }

    /// Element corners, (m, 4) or (m, 3) int64 array (after orientation).
    #[getter]
    fn elements<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mesh = self.model.mesh();
        let k = self.model.dimension() + 1;
        let flat: Vec<i64> = (0..mesh.element_count())
            .flat_map(|e| mesh.element(e).iter().map(|&v| v as i64).collect::<Vec<_>>())
            .collect();
        Ok(PyArray1::from_vec(py, flat)
            .reshape([mesh.element_count(), k])?
            .into_any())
    }

    /// Element labels, (m,) int32 array.
    #[getter]
    fn labels<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        PyArray1::from_slice(py, self.model.mesh().labels()).into_any()
    }

    /// The DOFs the pins leave free at `time`, sorted: index x[free] of a flat
    /// x to get the free part, and H[free][:, free] of the Hessian (what
    /// `hooke export` writes).
    #[pyo3(signature = (time=0.0))]
    fn free_dofs<'py>(&self, py: Python<'py>, time: f64) -> Bound<'py, PyAny> {
        let dofs = self.model.dof_map(time);
        PyArray1::from_vec(py, dofs.free_dofs.iter().map(|&d| d as i64).collect()).into_any()
    }

    /// Pinned vertices, one int64 array per pin.
    #[getter]
    fn pins<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyAny>> {
        self.model
            .pins()
            .iter()
            .map(|p| PyArray1::from_vec(py, p.vertices.iter().map(|&v| v as i64).collect()).into_any())
            .collect()
    }

    /// The potential E(x, t) in J: elastic energy, gravity, loads, contact
    /// penalties and soft pins. +inf where an element leaves its material's
    /// domain (an inverted Neo-Hookean element).
    #[pyo3(signature = (x, time=0.0))]
    fn energy(&self, py: Python<'_>, x: &Bound<'_, PyAny>, time: f64) -> PyResult<f64> {
        let x = Floats::read(x, "x")?;
        let values = x.dof_vector(self.vertex_count(), self.dimension())?;
        let model = &self.model;
        Ok(py.detach(|| model.energy(&values, time)))
    }

    /// ∂E/∂x in N, the shape of `x`.
    #[pyo3(signature = (x, time=0.0))]
    fn gradient<'py>(&self, py: Python<'py>, x: &Bound<'py, PyAny>, time: f64) -> PyResult<Bound<'py, PyAny>> {
        let x = Floats::read(x, "x")?;
        let values = x.dof_vector(self.vertex_count(), self.dimension())?;
        let model = &self.model;
        let gradient = py
            .detach(|| {
                let mut gradient = vec![0.0; values.len()];
                model.gradient(&values, time, &mut gradient).map(|_| gradient)
            })
            .or_raise()?;
        let shape = x.shape().to_vec();
        Ok(PyArray1::from_vec(py, gradient).reshape(shape)?.into_any())
    }

    /// ∂²E/∂x² in N/m as a symmetric scipy.sparse CSR matrix over every DOF
    /// (pinned ones included; `free_dofs` selects the rest). `project`
    /// projects each element's Hessian to positive semi-definite, as Newton's
    /// method uses it.
    #[pyo3(signature = (x, project=true, time=0.0))]
    fn hessian<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        project: bool,
        time: f64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let x = Floats::read(x, "x")?;
        let values = x.dof_vector(self.vertex_count(), self.dimension())?;
        let model = &self.model;
        let hessian = py.detach(|| model.stiffness(&values, time, project)).or_raise()?;
        symmetric_csr(py, model.pattern(), &hessian)
    }

    /// The mass matrix in kg (lumped: diagonal), scipy.sparse CSR.
    fn mass_matrix<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        symmetric_csr(py, self.model.pattern(), self.model.mass().values())
    }

    /// Each vertex's lumped mass, (n,) array in kg.
    #[getter]
    fn vertex_masses<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        PyArray1::from_slice(py, self.model.mass().lumped()).into_any()
    }

    fn __repr__(&self) -> String {
        format!(
            "hooke.Model({} vertices, {} {}, {} pins)",
            self.vertex_count(),
            self.element_count(),
            self.model.mesh().element_name(),
            self.model.pins().len()
        )
    }
}

/// The `count` lowest vibration modes of `model` about `x` (default: rest),
/// with the pins held: (frequencies in Hz, shapes as a (count, n, d) array of
/// mass-normalised displacements). Rigid modes (a free body) come first with
/// frequency 0.
#[pyfunction]
#[pyo3(signature = (model, count, x=None))]
pub fn modes<'py>(
    py: Python<'py>,
    model: &PyModel,
    count: usize,
    x: Option<&Bound<'py, PyAny>>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let inner = &model.model;
    let mut state = inner.initial_state();
    if let Some(x) = x {
        let x = Floats::read(x, "x")?;
        state.positions = x
            .dof_vector(inner.mesh().vertex_count(), inner.dimension())?
            .into_owned();
    }
    let modes = py
        .detach(|| hooke::modal::lowest_modes(inner, &state, count, &hooke::linalg::EigenSettings::default()))
        .or_raise()?;
    let frequencies = modes.frequencies();
    let found = modes.shapes.len();
    let shapes: Vec<f64> = modes.shapes.into_iter().flatten().collect();
    let d = inner.dimension();
    let n = inner.mesh().vertex_count();
    Ok((
        PyArray1::from_vec(py, frequencies).into_any(),
        PyArray1::from_vec(py, shapes).reshape([found, n, d])?.into_any(),
    ))
}

/// Flips the vertex order of inside-out elements; a flat one is an error naming it.
fn orient(
    points: &[Vector3<f64>],
    corners: &mut [Vec<usize>],
    dimension: usize,
    labels: &[i32],
) -> hooke::Result<usize> {
    if dimension == 3 {
        let tets = corners.iter().map(|c| [c[0], c[1], c[2], c[3]]).collect();
        let mut mesh = TetMesh::new(points.to_vec(), tets, labels.to_vec())?;
        let report = mesh.orient()?;
        for (c, t) in corners.iter_mut().zip(&mesh.tets) {
            *c = t.to_vec();
        }
        Ok(report.reoriented.len())
    } else {
        let triangles = corners.iter().map(|c| [c[0], c[1], c[2]]).collect();
        let mut mesh = TriangleMesh::new(points.to_vec(), triangles, labels.to_vec())?;
        let reversed = mesh.orient()?;
        for (c, t) in corners.iter_mut().zip(&mesh.triangles) {
            *c = t.to_vec();
        }
        Ok(reversed.len())
    }
}

/// The material of every element: one table (a dict in the scene format whose
/// values may be numpy arrays of one value per element), or a dict from label
/// to table.
fn element_materials(
    py: Python<'_>,
    material: &Bound<'_, PyAny>,
    labels: &[i32],
    dimension: usize,
) -> PyResult<Vec<MaterialRef>> {
    let dict = material
        .cast::<PyDict>()
        .map_err(|_| PyTypeError::new_err("material: expected a dict such as {\"model\": \"stable_neo_hookean\", \"youngs_modulus\": 1e6, \"poisson_ratio\": 0.45, \"density\": 1000}"))?;
    let by_label = dict.keys().iter().all(|k| k.extract::<i64>().is_ok()) && !dict.is_empty();
    if by_label {
        let mut tables = std::collections::HashMap::new();
        for (label, table) in dict.iter() {
            let label: i64 = label.extract()?;
            let table = table
                .cast::<PyDict>()
                .map_err(|_| PyTypeError::new_err(format!("material[{label}]: expected a material dict")))?;
            tables.insert(label, table.clone());
        }
        let mut out = Vec::with_capacity(labels.len());
        let mut parsed: std::collections::HashMap<i64, Vec<MaterialRef>> = Default::default();
        let mut rank_of_label: std::collections::HashMap<i64, usize> = Default::default();
        for (e, &label) in labels.iter().enumerate() {
            let label = i64::from(label);
            if let std::collections::hash_map::Entry::Vacant(slot) = parsed.entry(label) {
                let table = tables.get(&label).ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "material: element {e} has label {label}, which has no material"
                    ))
                })?;
                let indices: Vec<usize> = labels
                    .iter()
                    .enumerate()
                    .filter(|(_, l)| i64::from(**l) == label)
                    .map(|(i, _)| i)
                    .collect();
                let key = format!("material[{label}]");
                slot.insert(table_materials(py, table, &indices, labels.len(), &key, dimension)?);
            }
            let rank = rank_of_label.entry(label).or_insert(0);
            out.push(parsed[&label][*rank].clone());
            *rank += 1;
        }
        return Ok(out);
    }
    let all: Vec<usize> = (0..labels.len()).collect();
    table_materials(py, dict, &all, labels.len(), "material", dimension)
}

/// The materials of `elements` from one table whose values may be per-element arrays.
fn table_materials(
    py: Python<'_>,
    table: &Bound<'_, PyDict>,
    elements: &[usize],
    total_elements: usize,
    key: &str,
    dimension: usize,
) -> PyResult<Vec<MaterialRef>> {
    let numpy = arrays::numpy_module(py)?;
    let ndarray = numpy.getattr("ndarray")?;
    let mut fixed = toml::Table::new();
    let mut varying: Vec<(String, Vec<toml::Value>)> = Vec::new();
    for (name, value) in table.iter() {
        let name: String = name.extract()?;
        let inner = format!("{key}.{name}");
        if value.is_none() {
            continue;
        }
        // A numpy array as long as the body's (or this label's) element list
        // gives one value per element; other arrays are vectors (a fibre direction).
        let length = match value.is_instance(&ndarray)? && value.getattr("ndim")?.extract::<usize>()? >= 1 {
            true => Some(value.len()?),
            false => None,
        };
        let pick: Option<Vec<usize>> = match length {
            Some(l) if l == elements.len() => Some((0..l).collect()),
            Some(l) if l == total_elements => Some(elements.to_vec()),
            _ => None,
        };
        match pick {
            Some(rows) => {
                let values = rows
                    .iter()
                    .map(|&i| to_toml(&value.get_item(i)?, &format!("{inner}[{i}]")))
                    .collect::<PyResult<_>>()?;
                varying.push((name, values));
            }
            None => {
                fixed.insert(name, to_toml(&value, &inner)?);
            }
        }
    }
    let base = std::env::current_dir().unwrap_or_default();
    let parse = |table: &toml::Table, key: &str| -> PyResult<MaterialSource> {
        let context = MaterialContext {
            key,
            dimension,
            base_directory: &base,
        };
        registry::parse(table, &context).or_raise()
    };
    if varying.is_empty() {
        let source = parse(&fixed, key)?;
        return elements.iter().map(|&e| source.for_element(e).or_raise()).collect();
    }
    // Elements with the same parameters share one parsed table.
    let mut cache: std::collections::HashMap<String, MaterialSource> = Default::default();
    (0..elements.len())
        .map(|i| {
            let mut table = fixed.clone();
            for (name, values) in &varying {
                table.insert(name.clone(), values[i].clone());
            }
            let signature = toml::to_string(&table).unwrap_or_default();
            if !cache.contains_key(&signature) {
                let source = parse(&table, &format!("{key} (element {})", elements[i]))?;
                cache.insert(signature.clone(), source);
            }
            cache[&signature].for_element(elements[i]).or_raise()
        })
        .collect()
}

/// Pins: None, one index array or mask, or a list of them (one pin each).
fn pin_groups(pins: Option<&Bound<'_, PyAny>>, vertices: usize) -> PyResult<Vec<Vec<usize>>> {
    let Some(pins) = pins else {
        return Ok(Vec::new());
    };
    let is_group_list =
        pins.is_instance_of::<pyo3::types::PyList>() && pins.len()? > 0 && pins.get_item(0)?.hasattr("__len__")?;
    if is_group_list {
        pins.try_iter()?
            .enumerate()
            .map(|(k, group)| arrays::indices(&group?, &format!("pins[{k}]"), vertices))
            .collect()
    } else {
        let group = arrays::indices(pins, "pins", vertices)?;
        Ok(if group.is_empty() { Vec::new() } else { vec![group] })
    }
}

/// A scene table given as a dict, read into its Rust type.
pub fn from_dict<T: serde::de::DeserializeOwned>(dict: &Bound<'_, PyDict>, key: &str) -> PyResult<T> {
    toml_into(toml::Value::Table(to_table(dict, key)?), key)
}

pub fn toml_into<T: serde::de::DeserializeOwned>(value: toml::Value, key: &str) -> PyResult<T> {
    value
        .try_into()
        .map_err(|e: toml::de::Error| crate::errors::to_python(hooke::HookeError::scene(key, e.message().to_string())))
}
