//! What the run loop tells about a run as it goes, and the observers that
//! turn it into outputs: the energies table, the frame series and its
//! pictures, the fine-mesh display of a coarsened body, the energy plot, the
//! divergence watch and the progress callback. A new output is a new
//! observer (`Simulation::observe`), not a new branch in the loop.

use super::{draw_pictures, write_obstacles, write_state, RunSettings};
use crate::checkpoint::Checkpoint;
use crate::divergence::DivergenceWatch;
use crate::error::{HookeError, Result};
use crate::model::{Model, State};
use crate::output::{plot_energies, tidy, EnergiesCsvWriter, EnergyRecord, VtkSeriesWriter};
use std::path::PathBuf;

/// A run as an observer sees it: the model, the settings, where the run is,
/// and the energies so far.
pub struct RunView<'a> {
    /// The model being stepped.
    pub model: &'a Model,
    /// What to run and what to write.
    pub settings: &'a RunSettings,
    /// The integrator's scene-file name.
    pub integrator: &'a str,
    /// Steps completed (0 at the start).
    pub step: usize,
    /// The steps the run plans.
    pub steps: usize,
    /// The state after `step` (in full when an observer asked for it with
    /// [`RunObserver::needs_full_state`], at the start and at the end).
    pub state: &'a State,
    /// The energies and momenta of every state recorded so far, the one
    /// after `step` last.
    pub records: &'a [EnergyRecord],
}

impl RunView<'_> {
    /// The energies and momenta of the state after `step`.
    pub fn record(&self) -> &EnergyRecord {
        self.records.last().expect("a run records its start")
    }
}

/// How a run ends, which the observers' `finish` add to.
#[derive(Debug, Default)]
pub struct RunEnding {
    /// What stopped the run early, if anything; an output that cannot be
    /// made the run was asked for sets it when the simulation itself was whole.
    pub failure: Option<HookeError>,
    /// The files written, for the summary.
    pub outputs: Vec<PathBuf>,
    /// What the user should know, for the summary.
    pub notes: Vec<String>,
}

/// Something the run loop tells about each step. Every method has a default
/// that does nothing, so an observer implements what it needs; the loop
/// calls the observers in the order they were given.
pub trait RunObserver {
    /// Takes up its part of an interrupted run from `checkpoint` (the run
    /// then starts after the checkpoint's step and `start` is not called);
    /// an observer that keeps records adds them to `records`.
    fn resume(&mut self, _checkpoint: &Checkpoint, _records: &mut Vec<EnergyRecord>) -> Result<()> {
        Ok(())
    }

    /// Writes its part into a checkpoint being written.
    fn save(&self, _checkpoint: &mut Checkpoint) {}

    /// Prepares a run that is not resumed (creates its files): an error
    /// means the run cannot start.
    fn prepare(&mut self) -> Result<()> {
        Ok(())
    }

    /// Whether it needs the full state after `step` (an integrator in
    /// coordinates of its own then expands it).
    fn needs_full_state(&self, _step: usize, _steps: usize) -> bool {
        false
    }

    /// The start of a run that is not resumed, with the initial state.
    fn start(&mut self, _run: &RunView) -> Result<()> {
        Ok(())
    }

    /// A reason to refuse the state a step reached (a divergence), in words
    /// the run's error repeats: the run then ends at the state before it, as
    /// failed.
    fn refuses(&mut self, _run: &RunView) -> Option<String> {
        None
    }

    /// After each step that was kept. An error ends the run as failed (its
    /// outputs so far are kept).
    fn after_step(&mut self, _run: &RunView) -> Result<()> {
        Ok(())
    }

    /// At the end, whether the run completed or not, with its last state;
    /// adds outputs and notes, and may fail a run whose outputs it could not
    /// make.
    fn finish(&mut self, _run: &RunView, _ending: &mut RunEnding) {}
}

/// Whether something due every `every` steps is due after `step` (the last step always).
fn due(every: usize, step: usize, steps: usize) -> bool {
    every > 0 && (step % every == 0 || step == steps)
}

/// The energies table `energies.csv`: a row for the start and one a step.
pub(super) struct EnergyTable {
    path: PathBuf,
    writer: Option<EnergiesCsvWriter>,
}

impl EnergyTable {
    pub(super) fn new(settings: &RunSettings) -> EnergyTable {
        EnergyTable {
            path: settings.output_directory.join("energies.csv"),
            writer: None,
        }
    }

    /// Writes the records the table lacks: the last one, and after a
    /// resumption whose last row had not been written, the one before it.
    fn append(&mut self, run: &RunView) -> Result<()> {
        let Some(writer) = self.writer.as_mut() else {
            return Ok(());
        };
        for record in run.records.iter().skip(writer.rows_written()) {
            writer.append(record)?;
        }
        Ok(())
    }
}

impl RunObserver for EnergyTable {
    fn resume(&mut self, checkpoint: &Checkpoint, records: &mut Vec<EnergyRecord>) -> Result<()> {
        let (writer, read) = EnergiesCsvWriter::resume(&self.path, checkpoint.energy_rows)?;
        self.writer = Some(writer);
        *records = read;
        Ok(())
    }

    fn save(&self, checkpoint: &mut Checkpoint) {
        checkpoint.energy_rows = self.writer.as_ref().map_or(0, |w| w.rows_written());
    }

    fn start(&mut self, run: &RunView) -> Result<()> {
        // Created at the first record, which says whether the solver has
        // stretch unknowns whose gap the table carries.
        let columns = crate::output::OptionalColumns::of(run.record());
        self.writer = Some(EnergiesCsvWriter::create_with(&self.path, columns)?);
        self.append(run)
    }

    fn after_step(&mut self, run: &RunView) -> Result<()> {
        self.append(run)
    }

    fn finish(&mut self, _run: &RunView, ending: &mut RunEnding) {
        if self.writer.is_some() {
            ending.outputs.push(self.path.clone());
        }
    }
}

/// The ParaView series `frame.pvd` and the pictures drawn from its frames:
/// a frame every `vtk_every` steps and at every picture; the pictures at the
/// end, all in one framing; a run that stops early adds its last good state.
pub(super) struct FrameSeries {
    directory: PathBuf,
    vtk_every: usize,
    render_every: usize,
    writer: Option<VtkSeriesWriter>,
    /// The obstacles at each frame's time (`obstacle.pvd`), for viewers that
    /// have only the run's files; None without obstacles.
    obstacles: Option<VtkSeriesWriter>,
    /// Frames (indices in the series) that pictures are drawn from.
    render_frames: Vec<usize>,
    /// The time of the last frame written.
    last_frame_time: Option<f64>,
}

impl FrameSeries {
    pub(super) fn new(settings: &RunSettings) -> FrameSeries {
        FrameSeries {
            directory: settings.output_directory.clone(),
            vtk_every: settings.vtk_every,
            render_every: settings.render_every,
            writer: None,
            obstacles: None,
            render_frames: Vec::new(),
            last_frame_time: None,
        }
    }

    fn write(&mut self, run: &RunView) -> Result<()> {
        if let Some(writer) = self.writer.as_mut() {
            write_frame(writer, &mut self.obstacles, &self.directory, run)?;
            self.last_frame_time = Some(run.state.time);
        }
        Ok(())
    }
}

/// The body's frame, and the obstacles' at the same index when there are any.
fn write_frame(
    writer: &mut VtkSeriesWriter,
    obstacles: &mut Option<VtkSeriesWriter>,
    directory: &std::path::Path,
    run: &RunView,
) -> Result<PathBuf> {
    let path = write_state(writer, run.model, run.state)?;
    if !run.model.obstacles().is_empty() {
        if obstacles.is_none() {
            *obstacles = Some(VtkSeriesWriter::create(directory, OBSTACLES)?);
        }
        let series = obstacles.as_mut().expect("created above");
        // Frames of a resumed run that began without this file list stay aligned.
        if series.frame_count() + 1 == writer.frame_count() {
            write_obstacles(series, run.model, run.state)?;
        }
    }
    Ok(path)
}

/// The base name of the obstacles' series.
const OBSTACLES: &str = "obstacle";

impl RunObserver for FrameSeries {
    fn resume(&mut self, checkpoint: &Checkpoint, _records: &mut Vec<EnergyRecord>) -> Result<()> {
        let writer = VtkSeriesWriter::resume(&self.directory, "frame", checkpoint.frames.clone())?;
        // The obstacles' frames have the body's times and numbers.
        if self.directory.join(format!("{OBSTACLES}.pvd")).exists() {
            let frames = checkpoint
                .frames
                .iter()
                .map(|(time, name)| (*time, name.replacen("frame_", &format!("{OBSTACLES}_"), 1)))
                .collect();
            self.obstacles = Some(VtkSeriesWriter::resume(&self.directory, OBSTACLES, frames)?);
        }
        self.last_frame_time = writer.frames().last().map(|&(time, _)| time);
        self.writer = Some(writer);
        self.render_frames = checkpoint.render_frames.clone();
        Ok(())
    }

    fn save(&self, checkpoint: &mut Checkpoint) {
        checkpoint.frames = self.writer.as_ref().map(|w| w.frames().to_vec()).unwrap_or_default();
        checkpoint.render_frames = self.render_frames.clone();
    }

    fn prepare(&mut self) -> Result<()> {
        self.writer = Some(VtkSeriesWriter::create(&self.directory, "frame")?);
        Ok(())
    }

    fn needs_full_state(&self, step: usize, steps: usize) -> bool {
        due(self.vtk_every, step, steps) || due(self.render_every, step, steps)
    }

    fn start(&mut self, run: &RunView) -> Result<()> {
        if self.render_every > 0 {
            self.render_frames.push(0);
        }
        self.write(run)
    }

    fn after_step(&mut self, run: &RunView) -> Result<()> {
        if !self.needs_full_state(run.step, run.steps) {
            return Ok(());
        }
        self.write(run)?;
        if due(self.render_every, run.step, run.steps) {
            let writer = self.writer.as_ref().expect("a frame was written");
            self.render_frames.extend(writer.frames().len().checked_sub(1));
        }
        Ok(())
    }

    fn finish(&mut self, run: &RunView, ending: &mut RunEnding) {
        let Some(writer) = self.writer.as_mut() else {
            return;
        };
        // A run that stopped early keeps its last good state as the series' last frame.
        if let (Some(_), Some(written)) = (&ending.failure, self.last_frame_time) {
            if written != run.state.time {
                match write_frame(writer, &mut self.obstacles, &self.directory, run) {
                    Ok(_) => ending.notes.push(format!(
                        "the last good state (t = {}) was added as the last frame",
                        tidy(run.state.time)
                    )),
                    Err(error) => ending
                        .notes
                        .push(format!("the last good state could not be written: {error}")),
                }
            }
        }
        if self.render_every > 0 {
            let stopped_early = ending.failure.is_some();
            if let Err(error) = draw_pictures(run.model, writer, &self.render_frames, stopped_early, run.settings) {
                let reason = format!(
                    "the pictures could not be drawn ({error}); `hooke render {}` draws them from the frames",
                    self.directory.display()
                );
                ending
                    .failure
                    .get_or_insert(HookeError::io(&self.directory, std::io::Error::other(reason)));
            }
        }
        if let Some(Err(error)) = self.obstacles.as_mut().map(VtkSeriesWriter::finish) {
            ending
                .notes
                .push(format!("the obstacles' VTK collection could not be written: {error}"));
        }
        match writer.finish() {
            Ok(path) => ending.outputs.push(path),
            Err(error) => ending
                .notes
                .push(format!("the VTK collection could not be written: {error}")),
        }
    }
}

/// A coarsened body's run shown on its fine mesh (`fine.pvd`), from the
/// frames, at the end of the run.
pub(super) struct FineDisplay {
    /// The coarsening's display map.
    map: PathBuf,
}

impl FineDisplay {
    pub(super) fn new(map: PathBuf) -> FineDisplay {
        FineDisplay { map }
    }
}

impl RunObserver for FineDisplay {
    fn finish(&mut self, run: &RunView, ending: &mut RunEnding) {
        let directory = &run.settings.output_directory;
        let shown = crate::coarsen::display::read_display_map(&self.map)
            .and_then(|map| crate::coarsen::display::show_run_on_fine_mesh(directory, &map, directory));
        match shown {
            Ok(frames) => {
                ending.outputs.push(directory.join("fine.pvd"));
                ending.notes.push(format!(
                    "the {frames} frames were also written on the fine mesh of {} (fine.pvd)",
                    self.map.display()
                ));
            }
            // The simulation is whole, but an output it was asked for is not: the run fails, saying so.
            Err(error) => {
                ending.failure.get_or_insert(HookeError::io(
                    directory.join("fine.pvd"),
                    std::io::Error::other(format!(
                        "the frames could not be shown on the fine mesh ({error}); `hooke uncoarsen` retries"
                    )),
                ));
            }
        }
    }
}

/// The energies over time, plotted into `energies.png` at the end.
pub(super) struct EnergyPlot;

impl RunObserver for EnergyPlot {
    fn finish(&mut self, run: &RunView, ending: &mut RunEnding) {
        let path = run.settings.output_directory.join("energies.png");
        let title = format!("{} ({})", run.settings.name, run.integrator);
        // A plot is a convenience: failing to draw it does not fail the simulation.
        match plot_energies(&path, &title, &[(run.integrator, run.records)]) {
            Ok(()) => ending.outputs.push(path),
            Err(error) => ending
                .notes
                .push(format!("the energy plot could not be drawn: {error}")),
        }
    }
}

/// Refuses a state whose energy has grown without cause (a run past its
/// stability limit), while its numbers are still finite.
pub(super) struct Divergence {
    watch: Option<DivergenceWatch>,
}

impl Divergence {
    pub(super) fn new() -> Divergence {
        Divergence { watch: None }
    }
}

impl RunObserver for Divergence {
    fn resume(&mut self, checkpoint: &Checkpoint, _records: &mut Vec<EnergyRecord>) -> Result<()> {
        self.watch = checkpoint.divergence.clone();
        Ok(())
    }

    fn save(&self, checkpoint: &mut Checkpoint) {
        checkpoint.divergence = self.watch.clone();
    }

    fn start(&mut self, run: &RunView) -> Result<()> {
        self.watch = Some(DivergenceWatch::new(run.model, run.state, run.record()));
        Ok(())
    }

    fn refuses(&mut self, run: &RunView) -> Option<String> {
        let reason = self.watch.as_mut()?.check(run.record())?;
        Some(format!("the run diverged: {reason}"))
    }
}

/// Tells a callback (step, steps) after every step.
pub(super) struct Progress<'a> {
    callback: &'a mut dyn FnMut(usize, usize),
}

impl<'a> Progress<'a> {
    pub(super) fn new(callback: &'a mut dyn FnMut(usize, usize)) -> Progress<'a> {
        Progress { callback }
    }
}

impl RunObserver for Progress<'_> {
    fn after_step(&mut self, run: &RunView) -> Result<()> {
        (self.callback)(run.step, run.steps);
        Ok(())
    }
}
