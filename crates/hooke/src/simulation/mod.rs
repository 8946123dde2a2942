//! Running a built scene: what to run ([`RunSettings`]), the run and its
//! builder ([`Simulation`]), and what it produced ([`RunOutcome`],
//! [`RunSummary`]). The loop (run_loop.rs) advances the integrator and tells
//! the observers (observers.rs: energies, frames and pictures, plot,
//! divergence, progress, and any of the caller's own). A run that fails
//! midway keeps everything it wrote and its summary says where it stopped.

use crate::checkpoint::Checkpoint;
use crate::error::{HookeError, Result};
use crate::integrate::Integrator;
use crate::model::{Model, State, TermKind};
use crate::output::{EnergyRecord, Frame, VtkSeriesWriter};
use nalgebra::Vector3;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

mod observers;
mod run_loop;

pub use crate::run_record::{energy_record, StepStatistics};
pub use observers::{RunEnding, RunObserver, RunView};

/// What to run and what to write.
#[derive(Clone, Debug)]
pub struct RunSettings {
    /// The run's name, in its summary and the title of its energy plot.
    pub name: String,
    /// The simulated time to cover, s.
    pub duration: f64,
    /// The time step, s.
    pub time_step: f64,
    /// The folder the frames, energies, pictures, checkpoint and summary are written to.
    pub output_directory: PathBuf,
    /// VTK frame every n steps (0: none).
    pub vtk_every: usize,
    /// Write the energies table `energies.csv`, one row a step.
    pub energies: bool,
    /// Plot the energies over time into `energies.png` at the end of the run.
    pub plot: bool,
    /// PNG picture every n steps (0: none), drawn with `render`.
    pub render_every: usize,
    /// How the pictures are drawn: the field shown, the size, the view.
    pub render: crate::output::RenderSettings,
    /// A coarsening's display map: the frames are also written on its fine mesh (fine.pvd).
    pub fine_display: Option<PathBuf>,
}

impl RunSettings {
    /// Whole steps that cover the duration.
    pub fn step_count(&self) -> usize {
        ((self.duration / self.time_step).round() as usize).max(1)
    }
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every planned step was taken.
    Completed,
    /// A step or an output failed; `error` says which and where.
    Failed,
    /// The run was asked to stop and stopped at the end of a step.
    Interrupted,
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(match self {
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        })
    }
}

/// The outcome of a run, as written to `summary.json`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RunSummary {
    /// The run's name (the scene's `name`, else its file stem).
    pub name: String,
    /// The integrator's scene-file name.
    pub integrator: String,
    /// What `statistics.total_iterations` counts, in words ("Newton iterations",
    /// "L-BFGS iterations", "SQP iterations", "force evaluations", …).
    pub iterations_are: String,
    /// How the run ended.
    pub status: RunStatus,
    /// The message of the error that stopped the run (None: it completed).
    pub error: Option<String>,
    /// The steps the run was to take: the duration over the time step, rounded.
    pub steps_planned: usize,
    /// The simulation time the run reached, s.
    pub final_time: f64,
    /// The time step, s.
    pub time_step: f64,
    /// Vertices of the mesh.
    pub vertices: usize,
    /// Elements of the mesh (tetrahedra, or triangles in 2D).
    pub elements: usize,
    /// Degrees of freedom not held by pins at t = 0.
    pub free_dofs_at_start: usize,
    /// Wall-clock seconds the run took, over all its sessions when it was resumed.
    pub wall_seconds: f64,
    /// Totals over the steps: iterations, residuals, split steps, tears, timings.
    pub statistics: StepStatistics,
    /// The energies and momenta of the last state recorded (None if there is none).
    pub final_energy: Option<EnergyRecord>,
    /// For a solver with stretch unknowns (mixed FEM): the largest constraint
    /// gap over the run's records, and the mean of their volume-weighted means.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constraint_gap: Option<crate::output::ConstraintGap>,
    /// The files the run wrote: the frame collection, `energies.csv`, the plot, `summary.json`.
    pub outputs: Vec<PathBuf>,
    /// What the user should know about the run: the scene's notes, split steps,
    /// a resumption, outputs that could not be written.
    pub notes: Vec<String>,
    /// The scene text, so the summary alone says what was run.
    pub scene: Option<String>,
}

/// Flat per-vertex values as 3-vectors (z = 0 in 2D).
fn as_points(model: &Model, flat: &[f64]) -> Vec<Vector3<f64>> {
    let d = model.dimension();
    (0..flat.len() / d)
        .map(|v| crate::model::vertex_point(flat, v, d))
        .collect()
}

/// Draws the body at `state`.
pub fn render_state(
    model: &Model,
    state: &State,
    settings: &crate::output::RenderSettings,
) -> Result<crate::output::Image> {
    let positions = as_points(model, &state.positions);
    let densities = match settings.field {
        crate::output::RenderField::EnergyDensity => model.energy_densities(&state.positions),
        crate::output::RenderField::Material => model.material_numbers().into_iter().map(f64::from).collect(),
        _ => Vec::new(),
    };
    let obstacles: Vec<_> = model.obstacles().iter().map(|o| o.shape_at(state.time)).collect();
    crate::output::render(
        &crate::output::RenderInput {
            mesh: model.mesh(),
            positions: &positions,
            element_values: &densities,
            edges: &model.spring_edges(),
            obstacles: &obstacles,
        },
        settings,
    )
}

/// Writes the model's obstacles where they are at `state`'s time as the next
/// frame of their own series (`obstacle.pvd`, beside the body's frames): a
/// plane as a square four body sizes wide around the body, the others whole.
pub fn write_obstacles(writer: &mut VtkSeriesWriter, model: &Model, state: &State) -> Result<PathBuf> {
    let positions = as_points(model, &state.positions);
    let (low, high) = positions.iter().fold(
        (Vector3::repeat(f64::INFINITY), Vector3::repeat(f64::NEG_INFINITY)),
        |(low, high), p| (low.inf(p), high.sup(p)),
    );
    let size = (high - low).norm().max(f64::MIN_POSITIVE);
    let triangles: Vec<[Vector3<f64>; 3]> = model
        .obstacles()
        .iter()
        .flat_map(|o| crate::output::obstacle_triangles(&o.shape_at(state.time), 0.5 * (low + high), 2.0 * size))
        .collect();
    writer.write_surface(state.time, &triangles)
}

/// Writes `state` of `model` as the next frame of a ParaView series: positions,
/// velocities, each element's strain energy density and material number,
/// springs as line cells, and for discontinuous bodies the mean displacement of
/// each vertex's copies. Returns the frame file's path.
pub fn write_state(writer: &mut VtkSeriesWriter, model: &Model, state: &State) -> Result<PathBuf> {
    let positions = as_points(model, &state.positions);
    let velocities = as_points(model, &state.velocities);
    let densities = model.energy_densities(&state.positions);
    // Discontinuous bodies: the mean displacement of each vertex's copies.
    let continuous = match model.vertex_groups() {
        Some(_) => {
            let rest = model.rest_positions();
            let displacement: Vec<f64> = state.positions.iter().zip(&rest).map(|(x, r)| x - r).collect();
            let means = model.group_means(&displacement).expect("the model has groups");
            as_points(model, &means)
        }
        None => Vec::new(),
    };
    let contact_force = match model.barrier_contact() {
        Some(contact) => {
            // The barrier's normal force, plus friction's over the step just
            // taken (its lag is still that step's).
            let mut force = contact.forces(&state.positions);
            let mut friction = vec![0.0; force.len()];
            for term in model.terms().iter().filter(|t| t.kind() == TermKind::Friction) {
                term.gradient(&state.positions, state.time, &mut friction, false)?;
            }
            force.iter_mut().zip(&friction).for_each(|(f, g)| *f -= g);
            as_points(model, &force)
        }
        None => Vec::new(),
    };
    writer.write_frame(&Frame {
        time: state.time,
        mesh: model.mesh(),
        positions: &positions,
        velocities: &velocities,
        strain_energy_density: &densities,
        edges: &model.spring_edges(),
        materials: &model.material_numbers(),
        continuous_displacement: &continuous,
        contact_force: &contact_force,
    })
}

/// Draws the pictures of a run from its frames, in one framing: the frames
/// at `render_frames`, and the last one when the run `stopped_early` (its last
/// good state).
fn draw_pictures(
    model: &Model,
    writer: &VtkSeriesWriter,
    render_frames: &[usize],
    stopped_early: bool,
    settings: &RunSettings,
) -> Result<Vec<PathBuf>> {
    let mut chosen = render_frames.to_vec();
    if let (true, Some(last)) = (stopped_early, writer.frames().len().checked_sub(1)) {
        if chosen.last() != Some(&last) {
            chosen.push(last);
        }
    }
    let frames: Vec<(f64, PathBuf)> = chosen
        .iter()
        .filter_map(|&i| writer.frames().get(i))
        .map(|(time, name)| (*time, settings.output_directory.join(name)))
        .collect();
    crate::output::render_frames(
        &frames,
        &settings.output_directory,
        &settings.render,
        model.obstacles(),
        false,
    )
}

/// What a run produced. `failure` is set when it stopped early; everything up
/// to that point is in `records`, `state` and on disk.
pub struct RunOutcome {
    /// The summary, as written to `summary.json`.
    pub summary: RunSummary,
    /// The state the run ended with: the last one, or the last good one when it stopped early.
    pub state: State,
    /// The energies and momenta of the initial state and after every step (a
    /// resumed run without `energies.csv` has only those of its own steps).
    pub records: Vec<EnergyRecord>,
    /// What stopped the run early (None: every planned step was taken).
    pub failure: Option<HookeError>,
}

impl RunOutcome {
    /// The outcome as a `Result`: the failure, if there was one.
    pub fn into_result(self) -> Result<RunOutcome> {
        match self.failure {
            Some(error) => Err(error),
            None => Ok(self),
        }
    }
}

/// A run to be made: the model, the integrator and the run settings, with
/// optional notes, the scene text for the summary, and a progress callback.
///
/// ```no_run
/// # fn example(built: hooke::scene::BuiltScene, settings: hooke::simulation::RunSettings) -> hooke::Result<()> {
/// let mut built = built;
/// let outcome = hooke::simulation::Simulation::new(&built.model, built.integrator.as_mut(), &settings)
///     .notes(built.notes.clone())
///     .progress(&mut |step, total| eprintln!("{step}/{total}"))
///     .run(built.initial_state.clone())?;
/// # Ok(()) }
/// ```
pub struct Simulation<'a> {
    model: &'a Model,
    integrator: &'a mut dyn Integrator,
    settings: &'a RunSettings,
    notes: Vec<String>,
    scene_text: Option<String>,
    scene_directory: PathBuf,
    progress: Option<&'a mut dyn FnMut(usize, usize)>,
    stop: Option<&'a AtomicBool>,
    resume: Option<Checkpoint>,
    observers: Vec<Box<dyn RunObserver + 'a>>,
}

impl<'a> Simulation<'a> {
    /// A run of `model` stepped by `integrator` as `settings` say, with no
    /// notes, no scene text (so no checkpoints), no progress callback and
    /// relative scene paths taken from the current folder.
    pub fn new(model: &'a Model, integrator: &'a mut dyn Integrator, settings: &'a RunSettings) -> Simulation<'a> {
        Simulation {
            model,
            integrator,
            settings,
            notes: Vec::new(),
            scene_text: None,
            scene_directory: PathBuf::from("."),
            progress: None,
            stop: None,
            resume: None,
            observers: Vec::new(),
        }
    }

    /// Things the user should know, copied into the summary.
    pub fn notes(mut self, notes: Vec<String>) -> Self {
        self.notes = notes;
        self
    }

    /// The scene's text, kept in the summary so that it alone says what was
    /// run. With it, the run also writes checkpoints (`checkpoint.json`) it
    /// can be resumed from: after every frame, and when it stops early.
    pub fn scene_text(mut self, text: String) -> Self {
        self.scene_text = Some(text);
        self
    }

    /// The folder the scene's relative paths start from (kept in checkpoints).
    pub fn scene_directory(mut self, directory: PathBuf) -> Self {
        self.scene_directory = directory;
        self
    }

    /// Called with (step, total) after every step.
    pub fn progress(mut self, progress: &'a mut dyn FnMut(usize, usize)) -> Self {
        self.progress = Some(progress);
        self
    }

    /// A flag another thread (a signal handler) sets to ask the run to stop.
    /// It is read after every step: the run then ends as interrupted, with
    /// that step's outputs, a checkpoint and the summary written.
    pub fn stop_when(mut self, flag: &'a AtomicBool) -> Self {
        self.stop = Some(flag);
        self
    }

    /// Goes on from a checkpoint of this same run (same scene, integrator and
    /// output folder) instead of starting over: the frames, pictures and
    /// energies written after the checkpoint are dropped, and the steps
    /// taken from there are those the uninterrupted run would have taken.
    pub fn resume_from(mut self, checkpoint: Checkpoint) -> Self {
        self.resume = Some(checkpoint);
        self
    }

    /// Runs the steps from `state` (ignored when resuming: the checkpoint's
    /// state is used), writing outputs as it goes. A failed step
    /// ends the run: the outputs so far are kept, and the summary and the
    /// returned outcome record the failure. `Err` is kept for runs that cannot
    /// start (an integrator that does not handle the model, outputs that
    /// cannot be set up, a checkpoint of another run).
    pub fn run(self, state: State) -> Result<RunOutcome> {
        run_loop::run(self, state)
    }

    /// Adds an observer of your own, told after the built-in ones (the
    /// energies table, frames and pictures, the plot, the divergence watch,
    /// progress) about the start, every step and the end of the run.
    pub fn observe(mut self, observer: Box<dyn RunObserver + 'a>) -> Self {
        self.observers.push(observer);
        self
    }
}
