//! The run loop: it advances the integrator step by step, keeps the run's
//! books (statistics, dissipated energy, records), tells the observers, writes
//! checkpoints (the books and each observer's part), and writes the summary
//! whether the run completed, failed or was interrupted.

use super::observers::{
    Divergence, EnergyPlot, EnergyTable, FineDisplay, FrameSeries, Progress, RunEnding, RunObserver, RunView,
};
use super::{RunOutcome, RunSettings, RunStatus, RunSummary, Simulation};
use crate::checkpoint::{self, Checkpoint};
use crate::error::{HookeError, Result};
use crate::integrate::Integrator;
use crate::model::{Model, State};
use crate::output::{tidy, EnergyRecord};
use crate::run_record::StepStatistics;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use web_time::Instant;

/// What a run keeps between steps besides the state and the observers' own
/// parts: the loop's share of a checkpoint.
struct Ledger {
    /// Steps completed.
    step: usize,
    statistics: StepStatistics,
    dissipated: f64,
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

/// The built-in observers a run's settings ask for, in the order they are
/// told: the energies table, the frames and pictures, the fine-mesh display,
/// the energy plot, the divergence watch, the progress callback; then the
/// caller's own.
fn observers_for<'a>(
    settings: &RunSettings,
    progress: Option<&'a mut dyn FnMut(usize, usize)>,
    own: Vec<Box<dyn RunObserver + 'a>>,
) -> Vec<Box<dyn RunObserver + 'a>> {
    let mut observers: Vec<Box<dyn RunObserver + 'a>> = Vec::new();
    if settings.energies {
        observers.push(Box::new(EnergyTable::new(settings)));
    }
    // Pictures are drawn from frames, so a run with pictures writes frames at their steps.
    let writes_frames = settings.vtk_every > 0 || settings.render_every > 0;
    if writes_frames {
        observers.push(Box::new(FrameSeries::new(settings)));
        if let Some(map) = &settings.fine_display {
            observers.push(Box::new(FineDisplay::new(map.clone())));
        }
    }
    if settings.plot {
        observers.push(Box::new(EnergyPlot));
    }
    observers.push(Box::new(Divergence::new()));
    if let Some(callback) = progress {
        observers.push(Box::new(Progress::new(callback)));
    }
    observers.extend(own);
    observers
}

/// Runs `simulation` from `initial_state` (or from its checkpoint).
pub(super) fn run(simulation: Simulation, initial_state: State) -> Result<RunOutcome> {
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
        observers,
    } = simulation;
    let started = Instant::now();
    integrator.check(model)?;
    // The full state is needed only for frames, checkpoints and the end: an
    // integrator in a subspace need not expand it at every step.
    integrator.defer_full_state(true);
    let directory = &settings.output_directory;
    crate::output::run_files::create_output_directory(directory)?;
    let steps = settings.step_count();
    let mut observers = observers_for(settings, progress, observers);
    let resuming = resume.is_some();
    let (mut state, mut ledger) = match resume {
        Some(checkpoint) => resumed(checkpoint, integrator, model, settings, steps, &mut observers)?,
        None => fresh(initial_state, notes, integrator, model, settings, &mut observers)?,
    };
    // Checkpoints are written when the scene's text is known (it is how a run is rebuilt).
    let checkpoints = Checkpoints {
        scene_text: scene_text.clone(),
        scene_directory,
        started,
        steps,
    };
    let save =
        |state: &State, ledger: &Ledger, integrator: &dyn Integrator, observers: &[Box<dyn RunObserver + '_>]| {
            checkpoints.save(model, settings, state, ledger, integrator, observers)
        };
    // Anything that stops the run (a failed step, an output that cannot be
    // written) ends the loop; the summary below is written in every case.
    let mut failure = None;
    if !resuming {
        let run = view_of(model, settings, integrator.name(), &ledger, &state, (0, steps));
        failure = tell(&mut observers, |o| o.start(&run)).err();
        if failure.is_none() {
            failure = save(&state, &ledger, &*integrator, &observers).err();
        }
    }
    let interval = checkpoint_interval(settings, steps);
    while failure.is_none() && ledger.step < steps {
        let step = ledger.step + 1;
        let run = StepRun {
            model,
            settings,
            steps,
            checkpoint_due: step < steps && step % interval == 0,
        };
        failure = run
            .take(step, integrator, &mut state, &mut ledger, &mut observers, &save)
            .err();
        if failure.is_none() && step < steps && stop.is_some_and(|flag| flag.load(Ordering::SeqCst)) {
            failure = Some(HookeError::Interrupted { step, time: state.time });
        }
    }
    // The state the run ends with is returned, checkpointed and drawn in full.
    if let Err(error) = integrator.expand_state(model, &mut state) {
        failure.get_or_insert(error);
    }
    integrator.defer_full_state(false);
    let mut ending = RunEnding {
        failure,
        outputs: Vec::new(),
        notes: std::mem::take(&mut ledger.notes),
    };
    checkpoints.close(
        model,
        settings,
        &state,
        &mut ledger,
        integrator,
        &observers,
        &mut ending,
    );
    ending.notes.extend(ledger.statistics.notes());
    let run = view_of(
        model,
        settings,
        integrator.name(),
        &ledger,
        &state,
        (ledger.step, steps),
    );
    for observer in observers.iter_mut() {
        observer.finish(&run, &mut ending);
    }
    let summary_path = directory.join("summary.json");
    ending.outputs.push(summary_path.clone());
    let failure = ending.failure.take();
    let (summary, records) = summarise(
        model,
        settings,
        &*integrator,
        &state,
        ledger,
        ending,
        &failure,
        scene_text,
    );
    let summary = RunSummary {
        wall_seconds: summary.wall_seconds + started.elapsed().as_secs_f64(),
        ..summary
    };
    if let Err(error) = write_summary(&summary_path, &summary) {
        return Err(summary_not_written(error, &summary, directory));
    }
    Ok(RunOutcome {
        summary,
        state,
        records,
        failure,
    })
}

/// Where and how a run writes its checkpoints: only when the scene's text
/// is known, since that is how a run is rebuilt.
struct Checkpoints {
    scene_text: Option<String>,
    scene_directory: PathBuf,
    started: Instant,
    steps: usize,
}

impl Checkpoints {
    /// Writes a checkpoint after `ledger.step`: the loop's books, the
    /// integrator's and the model's histories, and each observer's part.
    fn save(
        &self,
        model: &Model,
        settings: &RunSettings,
        state: &State,
        ledger: &Ledger,
        integrator: &dyn Integrator,
        observers: &[Box<dyn RunObserver + '_>],
    ) -> Result<()> {
        let Some(scene_text) = &self.scene_text else {
            return Ok(());
        };
        let mut checkpoint = Checkpoint {
            format: checkpoint::FORMAT,
            scene_text: scene_text.clone(),
            scene_directory: self.scene_directory.clone(),
            integrator: integrator.name().to_string(),
            time_step: settings.time_step,
            steps_planned: self.steps,
            step: ledger.step,
            state: state.clone(),
            integrator_history: integrator.history()?,
            statistics: ledger.statistics.clone(),
            dissipated: ledger.dissipated,
            divergence: None,
            render_frames: Vec::new(),
            frames: Vec::new(),
            energy_rows: 0,
            wall_seconds: ledger.wall_before + self.started.elapsed().as_secs_f64(),
            notes: ledger.notes.clone(),
            torn: model.torn_elements(),
            term_histories: model.term_histories(),
        };
        observers.iter().for_each(|o| o.save(&mut checkpoint));
        checkpoint.write(&settings.output_directory)
    }

    /// At the end: a completed run removes its checkpoint; one that stopped
    /// early writes one from the state it reached (before the observers add
    /// to its outputs, which a resumed run drops), and says so.
    #[allow(clippy::too_many_arguments)]
    fn close(
        &self,
        model: &Model,
        settings: &RunSettings,
        state: &State,
        ledger: &mut Ledger,
        integrator: &dyn Integrator,
        observers: &[Box<dyn RunObserver + '_>],
        ending: &mut RunEnding,
    ) {
        let directory = &settings.output_directory;
        match (&ending.failure, &self.scene_text) {
            (None, _) => {
                if let Err(error) = checkpoint::Checkpoint::remove(directory) {
                    ending
                        .notes
                        .push(format!("the checkpoint could not be removed: {error}"));
                }
            }
            (Some(_), Some(_)) => {
                ledger.notes = ending.notes.clone();
                match self.save(model, settings, state, ledger, integrator, observers) {
                    Ok(()) => ending.notes.push(format!(
                        "a checkpoint after step {} was written: `hooke run --resume {}` goes on from it",
                        ledger.step,
                        directory.display()
                    )),
                    Err(error) => ending
                        .notes
                        .push(format!("the checkpoint could not be written: {error}")),
                }
            }
            (Some(_), None) => {}
        }
    }
}

/// The summary of a run that ended with `failure` (None: it completed), and
/// its records; `wall_seconds` holds the earlier sessions' time only.
#[allow(clippy::too_many_arguments)]
fn summarise(
    model: &Model,
    settings: &RunSettings,
    integrator: &dyn Integrator,
    state: &State,
    ledger: Ledger,
    ending: RunEnding,
    failure: &Option<HookeError>,
    scene_text: Option<String>,
) -> (RunSummary, Vec<EnergyRecord>) {
    let Ledger {
        statistics,
        records,
        wall_before,
        ..
    } = ledger;
    let mut notes = ending.notes;
    let constraint_gap = run_constraint_gap(&records);
    if let Some(gap) = constraint_gap {
        notes.push(format!(
            "the recorded elastic energy is ψ at the mixed solver's stretch unknowns; their gap to the stretches of the positions was at most {} and {} on average (energies.csv, columns constraint_gap_largest and constraint_gap_mean)",
            crate::numbers::significant(gap.largest, 2),
            crate::numbers::significant(gap.mean, 2)
        ));
    }
    let summary = RunSummary {
        name: settings.name.clone(),
        integrator: integrator.name().to_string(),
        iterations_are: integrator.iterations_are().to_string(),
        status: match failure {
            None => RunStatus::Completed,
            Some(HookeError::Interrupted { .. }) => RunStatus::Interrupted,
            Some(_) => RunStatus::Failed,
        },
        error: failure.as_ref().map(|e| e.to_string()),
        steps_planned: settings.step_count(),
        final_time: state.time,
        time_step: settings.time_step,
        vertices: model.mesh().vertex_count(),
        elements: model.mesh().element_count(),
        free_dofs_at_start: model.dof_map(0.0).free_count(),
        wall_seconds: wall_before,
        statistics,
        final_energy: records.last().cloned(),
        constraint_gap,
        outputs: ending.outputs,
        notes,
        scene: scene_text,
    };
    (summary, records)
}

/// The run's constraint gap from its records (None: no record has one).
fn run_constraint_gap(records: &[EnergyRecord]) -> Option<crate::output::ConstraintGap> {
    let gaps: Vec<_> = records.iter().filter_map(|r| r.constraint_gap).collect();
    (!gaps.is_empty()).then(|| crate::output::ConstraintGap {
        largest: gaps.iter().map(|g| g.largest).fold(0.0, f64::max),
        mean: gaps.iter().map(|g| g.mean).sum::<f64>() / gaps.len() as f64,
    })
}

/// One step of a run, as the loop takes it.
struct StepRun<'a> {
    model: &'a Model,
    settings: &'a RunSettings,
    steps: usize,
    /// Whether a checkpoint is written after this step.
    checkpoint_due: bool,
}

/// Writes a checkpoint of the run as it stands.
type Save<'s, 'o> = dyn Fn(&State, &Ledger, &dyn Integrator, &[Box<dyn RunObserver + 'o>]) -> Result<()> + 's;

impl StepRun<'_> {
    /// Takes step `step`: the integrator's step and its books, the record of
    /// the state it reached, the observers' verdicts (a refused state, or a
    /// failed step, leaves the state as it was before), the full state where
    /// an observer or the checkpoint needs it, the observers' outputs, and the
    /// checkpoint when due.
    fn take<'o>(
        &self,
        step: usize,
        integrator: &mut dyn Integrator,
        state: &mut State,
        ledger: &mut Ledger,
        observers: &mut [Box<dyn RunObserver + 'o>],
        save: &Save<'_, 'o>,
    ) -> Result<()> {
        let (model, settings, steps) = (self.model, self.settings, self.steps);
        let before = state.clone();
        if let Err(error) = advance(model, integrator, settings, state, ledger, step) {
            *state = before;
            return Err(error);
        }
        let mut record = integrator.energy_record(model, state)?;
        record.dissipated = ledger.dissipated;
        ledger.records.push(record);
        let run = view_of(model, settings, integrator.name(), ledger, state, (step, steps));
        if let Some(reason) = observers.iter_mut().find_map(|o| o.refuses(&run)) {
            // A refused state (a divergence) is not a result: the run ends at the state before it.
            let time = state.time;
            ledger.records.pop();
            *state = before;
            return Err(HookeError::StepFailed { step, time, reason });
        }
        if self.checkpoint_due || observers.iter().any(|o| o.needs_full_state(step, steps)) {
            integrator.expand_state(model, state)?;
        }
        let run = view_of(model, settings, integrator.name(), ledger, state, (step, steps));
        let written = tell(observers, |o| o.after_step(&run));
        ledger.step = step;
        written?;
        if self.checkpoint_due {
            save(state, ledger, &*integrator, observers)?;
        }
        Ok(())
    }
}

/// The run as the observers see it after step `step` of `steps`.
fn view_of<'a>(
    model: &'a Model,
    settings: &'a RunSettings,
    integrator: &'a str,
    ledger: &'a Ledger,
    state: &'a State,
    (step, steps): (usize, usize),
) -> RunView<'a> {
    RunView {
        model,
        settings,
        integrator,
        step,
        steps,
        state,
        records: &ledger.records,
    }
}

/// Tells every observer, in order, stopping at the first error.
fn tell<'a>(
    observers: &mut [Box<dyn RunObserver + 'a>],
    mut what: impl FnMut(&mut dyn RunObserver) -> Result<()>,
) -> Result<()> {
    observers.iter_mut().try_for_each(|o| what(o.as_mut()))
}

/// Takes step `step`: the integrator's step, its statistics and the energy
/// dissipated in it, with the time rounded to step × h.
fn advance(
    model: &Model,
    integrator: &mut dyn Integrator,
    settings: &RunSettings,
    state: &mut State,
    ledger: &mut Ledger,
    step: usize,
) -> Result<()> {
    let before_positions = state.positions.clone();
    let (before_velocities, before_time) = (state.velocities.clone(), state.time);
    let report = integrator.step(model, state, settings.time_step)?;
    ledger.statistics.add(&report, state.time);
    if let Some(contact) = model.barrier_contact() {
        let seen = contact.report(&state.positions);
        ledger.statistics.add_contact(seen.smallest_distance, seen.active_pairs);
    }
    let work = model.damping_work(&before_positions, &state.positions, state.time - before_time)?;
    ledger.dissipated += work + model.ether_drag_work(&before_velocities, before_time) + report.torn_energy;
    // Step × h, not a running sum, so output times carry no accumulated
    // rounding (adaptive integrators keep their own, different times).
    let nominal = step as f64 * settings.time_step;
    if (state.time - nominal).abs() <= 1e-9 * settings.time_step {
        state.time = nominal;
    }
    Ok(())
}

/// A run from its start: earlier run files cleared, the observers' files
/// created, the initial state recorded.
fn fresh<'a>(
    state: State,
    mut notes: Vec<String>,
    integrator: &dyn Integrator,
    model: &Model,
    settings: &RunSettings,
    observers: &mut [Box<dyn RunObserver + 'a>],
) -> Result<(State, Ledger)> {
    // A series that mixed two runs would be read as one.
    let directory = &settings.output_directory;
    let cleared = crate::output::run_files::clear_previous_run(directory)?;
    if cleared > 0 {
        notes.push(format!(
            "{cleared} files of an earlier run were removed from {} first",
            directory.display()
        ));
    }
    tell(observers, |o| o.prepare())?;
    let record = integrator.energy_record(model, &state)?;
    let ledger = Ledger {
        step: 0,
        statistics: StepStatistics::default(),
        dissipated: 0.0,
        records: vec![record],
        notes,
        wall_before: 0.0,
    };
    Ok((state, ledger))
}

/// A run taken up from its checkpoint: the integrator's history, what has
/// torn, the terms' histories, the books and each observer's part restored.
fn resumed<'a>(
    checkpoint: Checkpoint,
    integrator: &mut dyn Integrator,
    model: &Model,
    settings: &RunSettings,
    steps: usize,
    observers: &mut [Box<dyn RunObserver + 'a>],
) -> Result<(State, Ledger)> {
    check_resumable(&checkpoint, integrator.name(), model, settings, steps)?;
    integrator.restore_history(&checkpoint.integrator_history)?;
    model.restore_torn(&checkpoint.torn)?;
    model.restore_term_histories(&checkpoint.term_histories)?;
    let mut records = Vec::new();
    tell(observers, |o| o.resume(&checkpoint, &mut records))?;
    // A run stopped by a failed write (a full disk) may have its last step's
    // state in the checkpoint but not its row: the record is recomputed, and
    // the table writes it before the next step's.
    if !records.is_empty() && records.len() == checkpoint.step {
        let mut record = integrator.energy_record(model, &checkpoint.state)?;
        record.dissipated = checkpoint.dissipated;
        records.push(record);
    }
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
        records,
        notes,
        wall_before: checkpoint.wall_seconds,
    };
    Ok((checkpoint.state, ledger))
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

fn write_summary(path: &Path, summary: &RunSummary) -> Result<()> {
    let text = serde_json::to_string_pretty(summary).map_err(|e| HookeError::io(path, std::io::Error::other(e)))?;
    crate::output::atomic::write_bytes_atomically(path, text.as_bytes())
}

/// The error of a run whose summary could not be written (a full disk, a
/// folder made read-only): what stopped where, and what it kept, since the
/// summary that would have said so is missing. The error keeps its kind, so
/// a full disk is still the machine's fault.
fn summary_not_written(error: HookeError, summary: &RunSummary, directory: &Path) -> HookeError {
    let ending = match &summary.error {
        None => "completed".to_string(),
        Some(reason) => format!("stopped ({reason})"),
    };
    let account = format!(
        "the run {ending} after {} of {} steps, at t = {}; the frames and energies.csv rows it wrote before are kept in {}, and a checkpoint if one was written",
        summary.statistics.steps,
        summary.steps_planned,
        tidy(summary.final_time),
        directory.display()
    );
    match error {
        HookeError::Io { path, source } => HookeError::Io {
            source: std::io::Error::new(source.kind(), format!("{source}; {account}")),
            path,
        },
        other => HookeError::Solver {
            reason: format!("{other}; {account}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_that_cannot_be_written_says_where_the_run_stopped() {
        let summary = RunSummary {
            name: "bar".into(),
            integrator: "backward_euler".into(),
            iterations_are: "Newton iterations".into(),
            status: RunStatus::Failed,
            error: Some("frame_0004.vtu: No space left on device".into()),
            steps_planned: 100,
            final_time: 0.37,
            time_step: 0.01,
            vertices: 8,
            elements: 6,
            free_dofs_at_start: 24,
            wall_seconds: 1.0,
            statistics: StepStatistics {
                steps: 37,
                ..StepStatistics::default()
            },
            final_energy: None,
            constraint_gap: None,
            outputs: Vec::new(),
            notes: Vec::new(),
            scene: None,
        };
        let error = HookeError::io(
            "out/summary.json",
            std::io::Error::from(std::io::ErrorKind::StorageFull),
        );
        let error = summary_not_written(error, &summary, Path::new("out"));
        assert!(error.is_environment_error(), "{error}");
        let message = error.to_string();
        for part in [
            "summary.json",
            "after 37 of 100 steps",
            "t = 0.37",
            "No space left",
            "kept in out",
        ] {
            assert!(message.contains(part), "{part:?} not in: {message}");
        }
    }
}
