//! Running a built scene: the step loop, energy and momentum bookkeeping, and
//! the outputs. A run that fails midway keeps everything it wrote and its
//! summary says where it stopped.

use crate::checkpoint::{self, Checkpoint};
use crate::divergence::DivergenceWatch;
use crate::error::{HookeError, Result};
use crate::integrate::Integrator;
use crate::model::{Model, State};
use crate::output::{plot_energies, tidy, EnergiesCsvWriter, EnergyRecord, Frame, VtkSeriesWriter};
use nalgebra::Vector3;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

pub use crate::run_record::{energy_record, StepStatistics};

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
    let obstacles: Vec<_> = model.obstacles().iter().map(|o| o.shape.clone()).collect();
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
    writer.write_frame(&Frame {
        time: state.time,
        mesh: model.mesh(),
        positions: &positions,
        velocities: &velocities,
        strain_energy_density: &densities,
        edges: &model.spring_edges(),
        materials: &model.material_numbers(),
        continuous_displacement: &continuous,
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
    let obstacles: Vec<_> = model.obstacles().iter().map(|o| o.shape.clone()).collect();
    crate::output::render_frames(&frames, &settings.output_directory, &settings.render, &obstacles, false)
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
        run_steps(self, state)
    }
}

/// What a run keeps between steps besides the state: what a checkpoint saves.
struct Ledger {
    /// Steps completed.
    step: usize,
    statistics: StepStatistics,
    dissipated: f64,
    watch: DivergenceWatch,
    /// Frames (indices in the series) that pictures are drawn from at the end.
    render_frames: Vec<usize>,
    records: Vec<EnergyRecord>,
    notes: Vec<String>,
    /// Wall-clock seconds of earlier sessions of this run.
    wall_before: f64,
}

/// How often a checkpoint is written: with every frame, else with every
/// picture, else every hundredth of the run.
fn checkpoint_interval(settings: &RunSettings, steps: usize) -> usize {
    [settings.vtk_every, settings.render_every]
        .into_iter()
        .find(|&every| every > 0)
        .unwrap_or(steps.div_ceil(100))
        .max(1)
}

fn run_steps(simulation: Simulation, initial_state: State) -> Result<RunOutcome> {
    let Simulation {
        model,
        integrator,
        settings,
        notes,
        scene_text,
        scene_directory,
        progress,
        stop,
        resume,
    } = simulation;
    let mut nothing = |_: usize, _: usize| {};
    let progress = progress.unwrap_or(&mut nothing);
    let started = Instant::now();
    integrator.check(model)?;
    // The full state is needed only for frames, checkpoints and the end: an
    // integrator in a subspace need not expand it at every step.
    integrator.defer_full_state(true);
    let directory = &settings.output_directory;
    crate::output::run_files::create_output_directory(directory)?;
    let steps = settings.step_count();
    let energies_path = directory.join("energies.csv");
    let resuming = resume.is_some();
    // Pictures are drawn from frames, so a run with pictures writes frames at their steps.
    let writes_frames = settings.vtk_every > 0 || settings.render_every > 0;
    let mut failure = None;
    let (mut state, mut ledger, mut vtk, mut csv) = match resume {
        Some(checkpoint) => {
            check_resumable(&checkpoint, integrator.name(), model, settings, steps)?;
            integrator.restore_history(&checkpoint.integrator_history)?;
            model.restore_torn(&checkpoint.torn)?;
            model.restore_term_histories(&checkpoint.term_histories)?;
            let vtk = match writes_frames {
                false => None,
                true => Some(VtkSeriesWriter::resume(directory, "frame", checkpoint.frames)?),
            };
            let (csv, records) = if settings.energies {
                let (writer, records) = EnergiesCsvWriter::resume(&energies_path, checkpoint.energy_rows)?;
                (Some(writer), records)
            } else {
                (None, Vec::new())
            };
            let mut notes = checkpoint.notes;
            notes.push(format!(
                "resumed after step {} (t = {}) from {}",
                checkpoint.step,
                tidy(checkpoint.state.time),
                checkpoint::FILE_NAME
            ));
            let ledger = Ledger {
                step: checkpoint.step,
                statistics: checkpoint.statistics,
                dissipated: checkpoint.dissipated,
                watch: checkpoint.divergence,
                render_frames: checkpoint.render_frames,
                records,
                notes,
                wall_before: checkpoint.wall_seconds,
            };
            (checkpoint.state, ledger, vtk, csv)
        }
        None => {
            let mut notes = notes;
            // A series that mixed two runs would be read as one.
            let cleared = crate::output::run_files::clear_previous_run(directory)?;
            if cleared > 0 {
                notes.push(format!(
                    "{cleared} files of an earlier run were removed from {} first",
                    directory.display()
                ));
            }
            let vtk = match writes_frames {
                false => None,
                true => Some(VtkSeriesWriter::create(directory, "frame")?),
            };
            let csv = match settings.energies {
                true => Some(EnergiesCsvWriter::create(&energies_path)?),
                false => None,
            };
            let state = initial_state;
            let record = integrator.energy_record(model, &state)?;
            let ledger = Ledger {
                step: 0,
                statistics: StepStatistics::default(),
                dissipated: 0.0,
                watch: DivergenceWatch::new(model, &state, &record),
                render_frames: Vec::new(),
                records: vec![record],
                notes,
                wall_before: 0.0,
            };
            (state, ledger, vtk, csv)
        }
    };
    // Anything that stops the run (a failed step, an output that cannot be
    // written) ends the loop; the summary below is written in every case.
    let checkpoints = scene_text.is_some();
    let write_checkpoint = |state: &State,
                            ledger: &Ledger,
                            integrator: &dyn Integrator,
                            vtk: &Option<VtkSeriesWriter>,
                            csv: &Option<EnergiesCsvWriter>|
     -> Result<()> {
        if !checkpoints {
            return Ok(());
        }
        Checkpoint {
            format: checkpoint::FORMAT,
            scene_text: scene_text.clone().unwrap_or_default(),
            scene_directory: scene_directory.clone(),
            integrator: integrator.name().to_string(),
            time_step: settings.time_step,
            steps_planned: steps,
            step: ledger.step,
            state: state.clone(),
            integrator_history: integrator.history()?,
            statistics: ledger.statistics.clone(),
            dissipated: ledger.dissipated,
            divergence: ledger.watch.clone(),
            render_frames: ledger.render_frames.clone(),
            frames: vtk.as_ref().map(|w| w.frames().to_vec()).unwrap_or_default(),
            energy_rows: csv.as_ref().map_or(0, |w| w.rows_written()),
            wall_seconds: ledger.wall_before + started.elapsed().as_secs_f64(),
            notes: ledger.notes.clone(),
            torn: model.torn_elements(),
            term_histories: model.term_histories(),
        }
        .write(directory)
    };
    if !resuming {
        failure = write_step_outputs(csv.as_mut(), vtk.as_mut(), model, &state, &ledger.records[0]).err();
        if settings.render_every > 0 {
            ledger.render_frames.push(0);
        }
        if failure.is_none() {
            failure = write_checkpoint(&state, &ledger, &*integrator, &vtk, &csv).err();
        }
    }
    // The time of the last frame written, so that a run that stops early can
    // add its last good state to the series.
    let mut last_frame_time = vtk.as_ref().and_then(|w| w.frames().last().map(|&(time, _)| time));
    let interval = checkpoint_interval(settings, steps);
    if failure.is_none() {
        for step in ledger.step + 1..=steps {
            let before = state.clone();
            let previous_time = state.time;
            match integrator.step(model, &mut state, settings.time_step) {
                Ok(report) => {
                    ledger.statistics.add(&report, state.time);
                    match model.damping_work(&before.positions, &state.positions, state.time - previous_time) {
                        Ok(work) => {
                            ledger.dissipated +=
                                work + model.ether_drag_work(&before.velocities, before.time) + report.torn_energy
                        }
                        Err(error) => {
                            failure = Some(error);
                            state = before;
                            break;
                        }
                    }
                }
                Err(error) => {
                    failure = Some(error);
                    break;
                }
            }
            // Step × h, not a running sum, so output times carry no accumulated
            // rounding (adaptive integrators keep their own, different times).
            let nominal = step as f64 * settings.time_step;
            if (state.time - nominal).abs() <= 1e-9 * settings.time_step {
                state.time = nominal;
            }
            let mut record = match integrator.energy_record(model, &state) {
                Ok(record) => record,
                Err(error) => {
                    failure = Some(error);
                    break;
                }
            };
            record.dissipated = ledger.dissipated;
            if let Some(reason) = ledger.watch.check(&record) {
                // A diverged state is not a result: the run ends at the state before it.
                failure = Some(HookeError::StepFailed {
                    step,
                    time: state.time,
                    reason: format!("the run diverged: {reason}"),
                });
                state = before;
                break;
            }
            let due = |every: usize| every > 0 && (step % every == 0 || step == steps);
            let render_due = due(settings.render_every);
            let frame_due = due(settings.vtk_every) || render_due;
            let checkpoint_due = step < steps && step % interval == 0;
            let mut written = match frame_due || checkpoint_due {
                true => integrator.expand_state(model, &mut state),
                false => Ok(()),
            };
            if written.is_ok() {
                written = write_step_outputs(csv.as_mut(), vtk.as_mut().filter(|_| frame_due), model, &state, &record);
            }
            if let (true, true, Some(writer)) = (render_due, written.is_ok(), &vtk) {
                ledger.render_frames.extend(writer.frames().len().checked_sub(1));
            }
            ledger.records.push(record);
            ledger.step = step;
            if written.is_ok() && checkpoint_due {
                written = write_checkpoint(&state, &ledger, &*integrator, &vtk, &csv);
            }
            if let Err(error) = written {
                failure = Some(error);
                break;
            }
            if frame_due {
                last_frame_time = Some(state.time);
            }
            progress(step, steps);
            if step < steps && stop.is_some_and(|flag| flag.load(Ordering::SeqCst)) {
                failure = Some(HookeError::Interrupted { step, time: state.time });
                break;
            }
        }
    }
    // The state the run ends with is returned, checkpointed and drawn in full.
    if let Err(error) = integrator.expand_state(model, &mut state) {
        failure.get_or_insert(error);
    }
    integrator.defer_full_state(false);
    let mut notes = std::mem::take(&mut ledger.notes);
    match &failure {
        // A completed run needs no checkpoint.
        None => {
            if let Err(error) = checkpoint::Checkpoint::remove(directory) {
                notes.push(format!("the checkpoint could not be removed: {error}"));
            }
        }
        // A run that stopped early can be resumed from the state it reached
        // (before the extra frame below, which a resumed run drops).
        Some(_) if checkpoints => {
            ledger.notes = notes.clone();
            match write_checkpoint(&state, &ledger, &*integrator, &vtk, &csv) {
                Ok(()) => notes.push(format!(
                    "a checkpoint after step {} was written: `hooke run --resume {}` goes on from it",
                    ledger.step,
                    directory.display()
                )),
                Err(error) => notes.push(format!("the checkpoint could not be written: {error}")),
            }
        }
        Some(_) => {}
    }
    // A run that stopped early keeps its last good state as the series' last frame.
    if let (Some(_), Some(writer), Some(written)) = (&failure, vtk.as_mut(), last_frame_time) {
        if written != state.time {
            match write_state(writer, model, &state) {
                Ok(_) => notes.push(format!(
                    "the last good state (t = {}) was added as the last frame",
                    tidy(state.time)
                )),
                Err(error) => notes.push(format!("the last good state could not be written: {error}")),
            }
        }
    }
    if let (true, Some(writer)) = (settings.render_every > 0, &vtk) {
        if let Err(error) = draw_pictures(model, writer, &ledger.render_frames, failure.is_some(), settings) {
            let reason = format!(
                "the pictures could not be drawn ({error}); `hooke render {}` draws them from the frames",
                directory.display()
            );
            failure.get_or_insert(HookeError::io(directory, std::io::Error::other(reason)));
        }
    }

    let Ledger {
        statistics, records, ..
    } = ledger;
    notes.extend(statistics.notes());
    let mut outputs = Vec::new();
    if let Some(writer) = vtk.as_mut() {
        match writer.finish() {
            Ok(path) => outputs.push(path),
            Err(error) => notes.push(format!("the VTK collection could not be written: {error}")),
        }
    }
    if let Some(writer) = &csv {
        outputs.push(writer.path().to_path_buf());
    }
    if let (Some(display), Some(series)) = (&settings.fine_display, vtk.as_ref().map(|w| w.frames().len())) {
        let shown = crate::coarsen::display::read_display_map(display)
            .and_then(|map| crate::coarsen::display::show_run_on_fine_mesh(directory, &map, directory));
        match shown {
            Ok(frames) => {
                outputs.push(directory.join("fine.pvd"));
                notes.push(format!(
                    "the {frames} of {series} frames were also written on the fine mesh of {} (fine.pvd)",
                    display.display()
                ));
            }
            // The simulation is whole, but an output it was asked for is not: the run fails, saying so.
            Err(error) => {
                failure.get_or_insert(HookeError::io(
                    directory.join("fine.pvd"),
                    std::io::Error::other(format!(
                        "the frames could not be shown on the fine mesh ({error}); `hooke uncoarsen` retries"
                    )),
                ));
            }
        }
    }
    if settings.plot {
        let path = directory.join("energies.png");
        let title = format!("{} ({})", settings.name, integrator.name());
        // A plot is a convenience: failing to draw it does not fail the simulation.
        match plot_energies(&path, &title, &[(integrator.name(), &records)]) {
            Ok(()) => outputs.push(path),
            Err(error) => notes.push(format!("the energy plot could not be drawn: {error}")),
        }
    }
    let summary_path = directory.join("summary.json");
    outputs.push(summary_path.clone());
    let summary = RunSummary {
        name: settings.name.clone(),
        integrator: integrator.name().to_string(),
        status: match failure {
            None => RunStatus::Completed,
            Some(HookeError::Interrupted { .. }) => RunStatus::Interrupted,
            Some(_) => RunStatus::Failed,
        },
        error: failure.as_ref().map(|e| e.to_string()),
        steps_planned: steps,
        final_time: state.time,
        time_step: settings.time_step,
        vertices: model.mesh().vertex_count(),
        elements: model.mesh().element_count(),
        free_dofs_at_start: model.dof_map(0.0).free_count(),
        wall_seconds: ledger.wall_before + started.elapsed().as_secs_f64(),
        statistics,
        final_energy: records.last().cloned(),
        outputs,
        notes,
        scene: scene_text,
    };
    write_summary(&summary_path, &summary)?;
    Ok(RunOutcome {
        summary,
        state,
        records,
        failure,
    })
}

/// Refuses a checkpoint of another run: another integrator, time step or
/// length, or a state of another model.
fn check_resumable(
    checkpoint: &Checkpoint,
    integrator: &str,
    model: &Model,
    settings: &RunSettings,
    steps: usize,
) -> Result<()> {
    let fail = |reason: String| {
        Err(HookeError::parse(
            settings.output_directory.join(checkpoint::FILE_NAME),
            None,
            format!("{reason}: this checkpoint belongs to another run"),
        ))
    };
    if checkpoint.integrator != integrator {
        return fail(format!("it was written by {}, not {integrator}", checkpoint.integrator));
    }
    if checkpoint.time_step.to_bits() != settings.time_step.to_bits() || checkpoint.steps_planned != steps {
        return fail(format!(
            "it plans {} steps of {} s, not {steps} of {} s",
            checkpoint.steps_planned, checkpoint.time_step, settings.time_step
        ));
    }
    if checkpoint.state.positions.len() != model.dof_count() {
        return fail(format!(
            "its state has {} DOFs, the model {}",
            checkpoint.state.positions.len(),
            model.dof_count()
        ));
    }
    if checkpoint.step >= steps {
        return fail(format!(
            "it is after step {} of {steps}: the run had completed",
            checkpoint.step
        ));
    }
    Ok(())
}

/// Appends a state's energies to the table and, when given a writer, writes its frame.
fn write_step_outputs(
    csv: Option<&mut EnergiesCsvWriter>,
    vtk: Option<&mut VtkSeriesWriter>,
    model: &Model,
    state: &State,
    record: &EnergyRecord,
) -> Result<()> {
    if let Some(writer) = csv {
        writer.append(record)?;
    }
    if let Some(writer) = vtk {
        write_state(writer, model, state)?;
    }
    Ok(())
}

fn write_summary(path: &Path, summary: &RunSummary) -> Result<()> {
    let text = serde_json::to_string_pretty(summary).map_err(|e| HookeError::io(path, std::io::Error::other(e)))?;
    crate::output::atomic::write_bytes_atomically(path, text.as_bytes())
}
