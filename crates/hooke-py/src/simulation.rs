//! `hooke.Simulation`: a model stepped one call at a time, its state read and
//! set as numpy arrays between steps (interactive use, control loops).

use crate::arrays::{to_matrix, Floats};
use crate::errors::{to_python, OrRaise};
use crate::model::{from_dict, PyModel};
use crate::toml_value::to_table;
use hooke::integrate::{Integrator, IntegratorConfig, StepReport};
use hooke::model::{Model, Motion, State};
use hooke::solve::SolverSettings;
use hooke::HookeError;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Mutex;

/// A simulation of its own copy of a model: integrator, time step and state.
#[pyclass(name = "Simulation", module = "hooke")]
pub struct PySimulation {
    model: Model,
    /// In a mutex only so that the class is `Sync`: methods that step hold `&mut self`.
    integrator: Mutex<Box<dyn Integrator>>,
    state: State,
    dt: f64,
    steps_taken: usize,
    /// The time the current run of equal steps started from, and how many it has
    /// taken: the time after k steps is snapped to origin + k·dt, so that
    /// rounding does not pile up (t = 0.1, not 0.09999999999999999).
    clock: (f64, usize),
}

impl PySimulation {
    pub fn from_parts(model: Model, integrator: Box<dyn Integrator>, state: State, dt: f64) -> PyResult<PySimulation> {
        check_time_step(dt)?;
        integrator.check(&model).or_raise()?;
        let state_time = state.time;
        Ok(PySimulation {
            model,
            integrator: Mutex::new(integrator),
            state,
            dt,
            steps_taken: 0,
            clock: (state_time, 0),
        })
    }

    fn one_step(&mut self) -> hooke::Result<StepReport> {
        let before = self.state.clone();
        let step = self.steps_taken + 1;
        let time = before.time;
        let failed = |reason: String| HookeError::StepFailed { step, time, reason };
        let integrator = self.integrator.get_mut().unwrap_or_else(|p| p.into_inner());
        let report = match integrator.step(&self.model, &mut self.state, self.dt) {
            Ok(report) => report,
            Err(error @ HookeError::StepFailed { .. }) => return Err(error),
            Err(error) => return Err(failed(error.to_string())),
        };
        if !self.state.is_finite() {
            self.state = before;
            return Err(failed(
                "the state became non-finite (the step is too long for this integrator?)".into(),
            ));
        }
        self.steps_taken = step;
        self.clock.1 += 1;
        let nominal = self.clock.0 + self.clock.1 as f64 * self.dt;
        if (self.state.time - nominal).abs() <= 1e-9 * self.dt {
            self.state.time = nominal;
        }
        Ok(report)
    }

    fn locked_integrator(&self) -> std::sync::MutexGuard<'_, Box<dyn Integrator>> {
        self.integrator.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn dof_vector(&self, value: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<f64>> {
        let floats = Floats::read(value, name)?;
        let values = floats.dof_vector(self.model.mesh().vertex_count(), self.model.dimension())?;
        Ok(values.into_owned())
    }
}

#[pymethods]
impl PySimulation {
    /// `integrator` is a scene integrator name (`hooke.integrators()`) or a
    /// dict `{"kind": name, ...its settings}`; `solver` is the scene's
    /// `[solver]` table as a dict; `dt` the time step in s.
    #[new]
    #[pyo3(signature = (model, integrator=None, solver=None, dt=0.01))]
    fn new(
        py: Python<'_>,
        model: &PyModel,
        integrator: Option<&Bound<'_, PyAny>>,
        solver: Option<&Bound<'_, PyDict>>,
        dt: f64,
    ) -> PyResult<PySimulation> {
        let config = integrator_config(integrator)?;
        let solver: SolverSettings = match solver {
            None => SolverSettings::default(),
            Some(dict) => from_dict(dict, "solver")?,
        };
        solver.validate("solver").or_raise()?;
        let integrator = config.build(&solver).or_raise()?;
        let recipe = model.recipe.clone();
        let model = py.detach(|| recipe.build()).or_raise()?;
        let state = model.initial_state();
        PySimulation::from_parts(model, integrator, state, dt)
    }

    /// Advances `count` steps of `dt` with the interpreter's lock released;
    /// Ctrl-C stops after the step under way (KeyboardInterrupt). Returns the
    /// last step's report. A failed step raises StepFailedError and leaves the
    /// state as it was before that step.
    #[pyo3(signature = (count=1))]
    fn step<'py>(&mut self, py: Python<'py>, count: usize) -> PyResult<Bound<'py, PyDict>> {
        let mut interrupted = None;
        let result = py.detach(|| {
            let mut last = StepReport::default();
            for k in 0..count {
                last = self.one_step()?;
                if k + 1 < count {
                    if let Err(signal) = Python::attach(|py| py.check_signals()) {
                        interrupted = Some(signal);
                        break;
                    }
                }
            }
            Ok(last)
        });
        let report = result.map_err(to_python)?;
        if let Some(signal) = interrupted {
            return Err(signal);
        }
        report_dict(py, &report)
    }

    /// Moves pin `pin` (its index in `model.pins`) in a straight line to
    /// `displacement` from its rest position, reached at the end of the next
    /// step and held there until moved again. Every vertex of the pin moves
    /// by the same displacement; a pin with another motion gives it up.
    fn move_pin(&mut self, pin: usize, displacement: &Bound<'_, PyAny>) -> PyResult<()> {
        let d = self.model.dimension();
        let target = Floats::read(displacement, "displacement")?.fixed_vector(d)?;
        let Some(held) = self.model.pins().get(pin) else {
            return Err(PyValueError::new_err(format!(
                "pin {pin}: the model has {} pins",
                self.model.pins().len()
            )));
        };
        let Some(&first) = held.vertices.first() else {
            return Ok(());
        };
        let time = self.state.time;
        let rest = self.model.mesh().vertices()[first];
        let now = held.motion.position(&rest, time) - rest;
        let velocity = (nalgebra::Vector3::from(target) - now) / self.dt;
        let motion = Motion::Segment {
            start_time: time,
            end_time: time + self.dt,
            start_displacement: now.into(),
            velocity: velocity.into(),
        };
        self.model.set_pin_motion(pin, motion).or_raise()
    }

    /// Positions, (n, d) array in m (a copy; assign an array to set them).
    #[getter]
    fn positions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_matrix(py, self.state.positions.clone(), self.model.dimension())
    }

    #[setter]
    fn set_positions(&mut self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.state.positions = self.dof_vector(value, "positions")?;
        Ok(())
    }

    /// Velocities, (n, d) array in m/s (a copy; assign an array to set them).
    #[getter]
    fn velocities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_matrix(py, self.state.velocities.clone(), self.model.dimension())
    }

    #[setter]
    fn set_velocities(&mut self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.state.velocities = self.dof_vector(value, "velocities")?;
        Ok(())
    }

    /// Simulated time, s.
    #[getter]
    fn time(&self) -> f64 {
        self.state.time
    }

    #[setter]
    fn set_time(&mut self, time: f64) -> PyResult<()> {
        if !time.is_finite() {
            return Err(PyValueError::new_err(format!("time: must be finite, got {time}")));
        }
        self.state.time = time;
        self.clock = (time, 0);
        Ok(())
    }

    /// The time step, s.
    #[getter]
    fn dt(&self) -> f64 {
        self.dt
    }

    #[setter]
    fn set_dt(&mut self, dt: f64) -> PyResult<()> {
        check_time_step(dt)?;
        self.dt = dt;
        self.clock = (self.state.time, 0);
        Ok(())
    }

    /// Steps taken so far.
    #[getter]
    fn steps(&self) -> usize {
        self.steps_taken
    }

    /// The integrator's scene name.
    #[getter]
    fn integrator(&self) -> &'static str {
        self.locked_integrator().name()
    }

    /// Energies (J) and momenta of the current state: kinetic, elastic,
    /// gravitational, penalty, total, linear and angular momentum, deepest
    /// penetration.
    fn energies<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let record = self
            .locked_integrator()
            .energy_record(&self.model, &self.state)
            .or_raise()?;
        let dict = PyDict::new(py);
        dict.set_item("time", record.time)?;
        dict.set_item("kinetic", record.kinetic)?;
        dict.set_item("elastic", record.elastic)?;
        dict.set_item("gravitational", record.gravitational)?;
        dict.set_item("penalty", record.penalty)?;
        dict.set_item("total", record.total)?;
        dict.set_item("linear_momentum", record.linear_momentum.to_vec())?;
        dict.set_item("angular_momentum", record.angular_momentum.to_vec())?;
        dict.set_item("max_penetration", record.max_penetration)?;
        if let Some(gap) = record.constraint_gap {
            dict.set_item("constraint_gap_largest", gap.largest)?;
            dict.set_item("constraint_gap_mean", gap.mean)?;
        }
        Ok(dict)
    }

    fn __repr__(&self) -> String {
        format!(
            "hooke.Simulation({}, dt = {} s, t = {} s, {} steps)",
            self.locked_integrator().name(),
            self.dt,
            self.state.time,
            self.steps_taken
        )
    }
}

fn check_time_step(dt: f64) -> PyResult<()> {
    if dt.is_finite() && dt > 0.0 {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!(
            "dt: the time step must be > 0 s, got {dt}"
        )))
    }
}

/// An integrator by name, or a dict of `kind` and its settings (unknown keys refused).
fn integrator_config(value: Option<&Bound<'_, PyAny>>) -> PyResult<IntegratorConfig> {
    let Some(value) = value else {
        return Ok(IntegratorConfig::default());
    };
    if let Ok(name) = value.extract::<String>() {
        return IntegratorConfig::from_name(&name).ok_or_else(|| {
            to_python(HookeError::scene(
                "integrator",
                format!(
                    "unknown integrator {name:?} (known: {})",
                    hooke::integrate::registry::names()
                ),
            ))
        });
    }
    let dict = value
        .cast::<PyDict>()
        .map_err(|_| PyTypeError::new_err("integrator: expected a name or a dict {\"kind\": name, ...settings}"))?;
    let mut table = to_table(dict, "integrator")?;
    let kind = match table.remove("kind") {
        Some(toml::Value::String(kind)) => kind,
        _ => {
            return Err(to_python(HookeError::scene(
                "integrator.kind",
                format!("is missing (a name: {})", hooke::integrate::registry::names()),
            )))
        }
    };
    let mut config = IntegratorConfig::from_name(&kind).ok_or_else(|| {
        to_python(HookeError::scene(
            "integrator.kind",
            format!(
                "unknown integrator {kind:?} (known: {})",
                hooke::integrate::registry::names()
            ),
        ))
    })?;
    let entry = config.entry().or_raise()?;
    if let Some(key) = table.keys().find(|k| !entry.keys.contains(&k.as_str())) {
        let expected: Vec<String> = entry.keys.iter().map(|k| format!("`{k}`")).collect();
        return Err(to_python(HookeError::scene(
            format!("integrator.{key}"),
            format!("unknown setting of {}; it takes {}", entry.name, expected.join(", ")),
        )));
    }
    config.settings = table;
    Ok(config)
}

fn report_dict<'py>(py: Python<'py>, report: &StepReport) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("iterations", report.iterations)?;
    dict.set_item("residual", report.residual)?;
    dict.set_item("line_search_reductions", report.line_search_reductions)?;
    dict.set_item("factorizations", report.factorizations)?;
    dict.set_item("halvings", report.halvings)?;
    dict.set_item("relative_increment", report.relative_increment)?;
    dict.set_item("short_of_tolerance", report.short_of_tolerance)?;
    dict.set_item("seconds", report.total_seconds)?;
    Ok(dict)
}
