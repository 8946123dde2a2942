//! `hooke.Scene`: a scene file (or a dict in its format) run as `hooke run`
//! runs it, with the energies table handed back as numpy arrays.

use crate::arrays::to_matrix;
use crate::errors::{to_python, OrRaise};
use crate::model::PyModel;
use crate::simulation::PySimulation;
use crate::toml_value::to_table;
use hooke::output::EnergyRecord;
use hooke::scene::Scene;
use hooke::simulation::{RunOutcome, RunStatus, Simulation};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// A checked scene (see the README's scene format).
#[pyclass(name = "Scene", module = "hooke", frozen)]
pub struct PyScene {
    scene: Scene,
}

#[pymethods]
impl PyScene {
    /// Reads and checks a scene file (.toml); relative paths in it are taken from its folder.
    #[staticmethod]
    #[pyo3(signature = (path, cache=None))]
    fn from_file(path: PathBuf, cache: Option<PathBuf>) -> PyResult<PyScene> {
        let mut scene = Scene::from_file(&path).or_raise()?;
        scene.cache_directory = cache;
        Ok(PyScene { scene })
    }

    /// A scene from a dict in the scene format (tables as dicts, arrays as
    /// lists or numpy arrays; None leaves a key out). Relative paths are taken
    /// from `base_directory` (default: the working directory).
    #[staticmethod]
    #[pyo3(signature = (scene, base_directory=None, cache=None))]
    fn from_dict(
        scene: &Bound<'_, PyDict>,
        base_directory: Option<PathBuf>,
        cache: Option<PathBuf>,
    ) -> PyResult<PyScene> {
        let table = to_table(scene, "")?;
        let text = toml::to_string(&table).map_err(|e| {
            to_python(hooke::HookeError::scene(
                "scene",
                format!("cannot be written as TOML: {e}"),
            ))
        })?;
        let base = base_directory.unwrap_or_else(|| std::env::current_dir().unwrap_or_default());
        let mut scene = Scene::from_text(&text, "the scene dict (as TOML text: Scene.text)", base).or_raise()?;
        scene.cache_directory = cache;
        Ok(PyScene { scene })
    }

    /// The scene's name (its `name` key, else the file's stem).
    #[getter]
    fn name(&self) -> String {
        self.scene.name()
    }

    /// The folder its relative paths (meshes, reference scenes) are taken from.
    #[getter]
    fn base_directory(&self) -> PathBuf {
        std::path::absolute(&self.scene.base_directory).unwrap_or_else(|_| self.scene.base_directory.clone())
    }

    /// The scene as TOML text.
    #[getter]
    fn text(&self) -> &str {
        &self.scene.text
    }

    /// The simulated duration (s) and time step (s).
    #[getter]
    fn duration(&self) -> f64 {
        self.scene.file.simulation.duration
    }

    #[getter]
    fn time_step(&self) -> f64 {
        self.scene.file.simulation.time_step
    }

    /// The scene's model: its bodies, pins, forces, gravity and damping.
    fn model(&self, py: Python<'_>) -> PyResult<PyModel> {
        let scene = self.scene.clone();
        py.detach(|| PyModel::from_scene(scene)).or_raise()
    }

    /// A simulation at the scene's initial state with its integrator and time
    /// step, to be stepped from Python.
    fn simulation(&self, py: Python<'_>) -> PyResult<PySimulation> {
        let scene = &self.scene;
        let built = py.detach(|| scene.build()).or_raise()?;
        PySimulation::from_parts(
            built.model,
            built.integrator,
            built.initial_state,
            scene.file.simulation.time_step,
        )
    }

    /// Runs the scene as `hooke run` does, writing its outputs (frames,
    /// energies.csv, summary.json, plot) into `output_directory` (default:
    /// the scene's). Returns a RunResult. A run that fails raises the error
    /// with the partial result as its `result` attribute; Ctrl-C stops it
    /// after the step under way, keeps a checkpoint (`Scene.resume`) and
    /// raises KeyboardInterrupt.
    #[pyo3(signature = (output_directory=None, progress=true))]
    fn run(&self, py: Python<'_>, output_directory: Option<PathBuf>, progress: bool) -> PyResult<RunResult> {
        let settings = self.scene.run_settings(output_directory.as_deref());
        run_scene(py, &self.scene, settings, None, progress)
    }

    /// Goes on with an interrupted or failed run from the checkpoint in its
    /// output folder, into the same folder.
    #[staticmethod]
    #[pyo3(signature = (output_directory, progress=true))]
    fn resume(py: Python<'_>, output_directory: PathBuf, progress: bool) -> PyResult<RunResult> {
        let checkpoint = hooke::checkpoint::Checkpoint::read(&output_directory).or_raise()?;
        let origin = format!(
            "the scene kept in {}",
            output_directory.join(hooke::checkpoint::FILE_NAME).display()
        );
        let scene = Scene::from_text(&checkpoint.scene_text, &origin, checkpoint.scene_directory.clone()).or_raise()?;
        let settings = scene.run_settings(Some(&output_directory));
        run_scene(py, &scene, settings, Some(checkpoint), progress)
    }

    fn __repr__(&self) -> String {
        format!("hooke.Scene({:?} from {})", self.scene.name(), self.scene.origin)
    }
}

/// Runs with the interpreter's lock released, checking for Ctrl-C after every step.
fn run_scene(
    py: Python<'_>,
    scene: &Scene,
    settings: hooke::simulation::RunSettings,
    checkpoint: Option<hooke::checkpoint::Checkpoint>,
    show_progress: bool,
) -> PyResult<RunResult> {
    let stop = AtomicBool::new(false);
    let mut signal: Option<PyErr> = None;
    // One line rewritten in place (`\r`) on a terminal; elsewhere (a log, a
    // pipe, a notebook) a plain line every tenth of the run.
    let terminal = show_progress
        && py
            .import("sys")
            .and_then(|sys| sys.getattr("stderr")?.call_method0("isatty")?.extract::<bool>())
            .unwrap_or(false);
    let outcome = py.detach(|| -> hooke::Result<RunOutcome> {
        let mut built = scene.build()?;
        let steps = settings.step_count();
        let name = settings.name.clone();
        let mut last_shown = usize::MAX;
        let mut on_step = |step: usize, total: usize| {
            Python::attach(|py| {
                if let Err(error) = py.check_signals() {
                    signal.get_or_insert(error);
                    stop.store(true, Ordering::SeqCst);
                }
                let percent = step * 100 / total.max(1);
                let shown = if terminal { percent } else { percent / 10 * 10 };
                if show_progress && shown != last_shown {
                    last_shown = shown;
                    let line = if terminal {
                        let end = if step == total { "\n" } else { "" };
                        format!("\r{name}: step {step}/{steps} ({percent}%){end}")
                    } else {
                        format!("{name}: step {step}/{steps} ({percent}%)\n")
                    };
                    let _ = py
                        .import("sys")
                        .and_then(|sys| sys.getattr("stderr")?.call_method1("write", (line,)).map(|_| ()));
                }
            });
        };
        let directory = std::path::absolute(&scene.base_directory).unwrap_or_else(|_| scene.base_directory.clone());
        let mut simulation = Simulation::new(&built.model, built.integrator.as_mut(), &settings)
            .notes(built.notes.clone())
            .scene_text(scene.text.clone())
            .scene_directory(directory)
            .progress(&mut on_step)
            .stop_when(&stop);
        if let Some(checkpoint) = checkpoint {
            simulation = simulation.resume_from(checkpoint);
        }
        simulation.run(built.initial_state.clone())
    });
    let outcome = outcome.or_raise()?;
    let result = RunResult::new(&outcome, &settings.output_directory);
    if let Some(signal) = signal {
        return Err(signal);
    }
    match (outcome.summary.status, outcome.failure) {
        (RunStatus::Completed, _) | (_, None) => Ok(result),
        (_, Some(error)) => {
            let raised = to_python(error);
            let value = raised.value(py);
            value.setattr("result", Py::new(py, result)?)?;
            Err(raised)
        }
    }
}

/// What a run produced: where, how it ended, and its energies per recorded step.
#[pyclass(name = "RunResult", module = "hooke", frozen)]
pub struct RunResult {
    /// The output folder.
    #[pyo3(get)]
    directory: PathBuf,
    /// "completed", "failed" or "interrupted".
    #[pyo3(get)]
    status: String,
    /// Steps taken.
    #[pyo3(get)]
    steps: usize,
    /// Simulated time reached, s.
    #[pyo3(get)]
    final_time: f64,
    /// The error that stopped the run, if one did.
    #[pyo3(get)]
    error: Option<String>,
    /// Things the run noted (re-oriented elements, stability limits).
    #[pyo3(get)]
    notes: Vec<String>,
    records: Vec<EnergyRecord>,
}

impl RunResult {
    fn new(outcome: &RunOutcome, directory: &Path) -> RunResult {
        RunResult {
            directory: directory.to_path_buf(),
            status: outcome.summary.status.to_string(),
            steps: outcome.summary.statistics.steps,
            final_time: outcome.state.time,
            error: outcome.summary.error.clone(),
            notes: outcome.summary.notes.clone(),
            records: outcome.records.clone(),
        }
    }
}

#[pymethods]
impl RunResult {
    /// The energies table (energies.csv) as numpy arrays: time, kinetic,
    /// elastic, gravitational, penalty, total, dissipated (J),
    /// max_penetration (m), linear_momentum and angular_momentum (k, 3); for
    /// mixed FEM also constraint_gap_largest and constraint_gap_mean (the
    /// relative gap between the stretch unknowns and the positions' stretches).
    #[getter]
    fn energies<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        let column = |f: fn(&EnergyRecord) -> f64| -> Vec<f64> { self.records.iter().map(f).collect() };
        dict.set_item("time", PyArray1::from_vec(py, column(|r| r.time)))?;
        dict.set_item("kinetic", PyArray1::from_vec(py, column(|r| r.kinetic)))?;
        dict.set_item("elastic", PyArray1::from_vec(py, column(|r| r.elastic)))?;
        dict.set_item("gravitational", PyArray1::from_vec(py, column(|r| r.gravitational)))?;
        dict.set_item("penalty", PyArray1::from_vec(py, column(|r| r.penalty)))?;
        dict.set_item("total", PyArray1::from_vec(py, column(|r| r.total)))?;
        dict.set_item("dissipated", PyArray1::from_vec(py, column(|r| r.dissipated)))?;
        dict.set_item("max_penetration", PyArray1::from_vec(py, column(|r| r.max_penetration)))?;
        let vectors = |f: fn(&EnergyRecord) -> [f64; 3]| -> Vec<f64> { self.records.iter().flat_map(f).collect() };
        dict.set_item("linear_momentum", to_matrix(py, vectors(|r| r.linear_momentum), 3)?)?;
        dict.set_item("angular_momentum", to_matrix(py, vectors(|r| r.angular_momentum), 3)?)?;
        if self.records.iter().all(|r| r.constraint_gap.is_some()) && !self.records.is_empty() {
            let gap = |f: fn(&hooke::output::ConstraintGap) -> f64| -> Vec<f64> {
                self.records
                    .iter()
                    .filter_map(|r| r.constraint_gap.as_ref().map(f))
                    .collect()
            };
            dict.set_item("constraint_gap_largest", PyArray1::from_vec(py, gap(|g| g.largest)))?;
            dict.set_item("constraint_gap_mean", PyArray1::from_vec(py, gap(|g| g.mean)))?;
        }
        Ok(dict)
    }

    fn __repr__(&self) -> String {
        format!(
            "hooke.RunResult({}, {} steps to t = {} s, in {})",
            self.status,
            self.steps,
            self.final_time,
            self.directory.display()
        )
    }
}
