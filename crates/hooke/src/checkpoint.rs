//! Checkpoints: what a run must keep to go on later exactly as if it had
//! never stopped. The run writes `checkpoint.json` in its output folder after
//! every frame and when it stops early; `hooke run --resume DIR` rebuilds the
//! scene from the text kept here, restores the state, the integrator's
//! history and the run's bookkeeping, and continues with the next step.
//!
//! Numbers are kept exactly: serde_json writes the shortest decimal that
//! parses back to the same f64, and the `float_roundtrip` feature makes the
//! parse exact. A completed run removes its checkpoint.

use crate::divergence::DivergenceWatch;
use crate::error::{HookeError, Result};
use crate::model::State;
use crate::run_record::StepStatistics;
use std::path::{Path, PathBuf};

/// The version of the file's layout; a checkpoint of another version is refused.
pub const FORMAT: u32 = 2;

/// The file name in a run's output folder.
pub const FILE_NAME: &str = "checkpoint.json";

/// Everything needed to continue a run after its step `step`.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Checkpoint {
    /// The layout version the file was written in ([`FORMAT`]).
    pub format: u32,
    /// The scene's text and the folder its relative paths start from.
    pub scene_text: String,
    /// The folder the scene's relative paths start from.
    pub scene_directory: PathBuf,
    /// The scene-file name of the integrator that wrote it; only that integrator resumes it.
    pub integrator: String,
    /// The run's time step, s; a resumed run must use the same.
    pub time_step: f64,
    /// The steps the whole run takes; a resumed run must plan the same.
    pub steps_planned: usize,
    /// Steps completed; the run goes on with step `step + 1`.
    pub step: usize,
    /// The state after step `step`.
    pub state: State,
    /// [`crate::integrate::Integrator::history`].
    pub integrator_history: serde_json::Value,
    /// Totals over the steps taken so far.
    pub statistics: StepStatistics,
    /// Energy dissipated so far (damping, drag, torn elements), J.
    pub dissipated: f64,
    /// The divergence watch, with the energy scales it has seen so far (None:
    /// the run had none).
    #[serde(default)]
    pub divergence: Option<DivergenceWatch>,
    /// The frames (indices into `frames`) that pictures are drawn from.
    pub render_frames: Vec<usize>,
    /// The frame series so far: time and file name.
    pub frames: Vec<(f64, String)>,
    /// Data rows of `energies.csv` so far (the initial state's included).
    pub energy_rows: usize,
    /// Wall-clock seconds spent before this checkpoint, over all sessions.
    pub wall_seconds: f64,
    /// The notes of the run so far (scene notes included).
    pub notes: Vec<String>,
    /// [`crate::model::Model::torn_elements`]: what has torn (absent in
    /// checkpoints of runs that cannot tear).
    #[serde(default)]
    pub torn: Vec<Vec<usize>>,
    /// [`crate::model::Model::term_histories`]: what terms carry between
    /// steps (absent when no term keeps any).
    #[serde(default)]
    pub term_histories: Vec<crate::model::TermHistory>,
}

impl Checkpoint {
    /// Writes the checkpoint into `directory`, atomically.
    pub fn write(&self, directory: &Path) -> Result<()> {
        let path = directory.join(FILE_NAME);
        let text = serde_json::to_vec(self).map_err(|error| HookeError::io(&path, std::io::Error::other(error)))?;
        crate::output::atomic::write_bytes_atomically(&path, &text)
    }

    /// Reads the checkpoint of the run in `directory`.
    pub fn read(directory: &Path) -> Result<Checkpoint> {
        let path = directory.join(FILE_NAME);
        let bytes = std::fs::read(&path).map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound => HookeError::io(
                &path,
                std::io::Error::new(
                    error.kind(),
                    "no checkpoint here: the run completed (nothing to resume), or this is not a run's output folder",
                ),
            ),
            _ => HookeError::io(&path, error),
        })?;
        let checkpoint: Checkpoint = serde_json::from_slice(&bytes).map_err(|error| {
            HookeError::parse(&path, Some(error.line()), format!("not a readable checkpoint: {error}"))
        })?;
        if checkpoint.format != FORMAT {
            return Err(HookeError::parse(
                &path,
                None,
                format!(
                    "checkpoint format {} (this Hooke reads format {FORMAT}); rerun the scene",
                    checkpoint.format
                ),
            ));
        }
        let dofs = checkpoint.state.positions.len();
        if checkpoint.state.velocities.len() != dofs || checkpoint.frames.len() > checkpoint.step + 1 {
            return Err(HookeError::parse(
                &path,
                None,
                "the checkpoint is inconsistent (state or frame counts)",
            ));
        }
        Ok(checkpoint)
    }

    /// Removes the checkpoint of a run that has completed.
    pub fn remove(directory: &Path) -> Result<()> {
        let path = directory.join(FILE_NAME);
        match std::fs::remove_file(&path) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(HookeError::io(&path, error)),
            _ => Ok(()),
        }
    }
}
