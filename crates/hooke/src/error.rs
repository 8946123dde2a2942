//! The library's error type: every failure says what went wrong and where
//! (file, line, element, key), so the CLI can show it without a backtrace.

use std::path::PathBuf;

/// Everything that can go wrong in Hooke.
#[derive(Debug, thiserror::Error)]
pub enum HookeError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// A file was read but its contents are malformed.
    #[error("{path}{}: {reason}", line.map(|l| format!(", line {l}")).unwrap_or_default())]
    Parse {
        path: PathBuf,
        line: Option<usize>,
        reason: String,
    },

    /// The mesh is unusable (degenerate element, bad index, ...).
    #[error("mesh: {reason}")]
    Mesh { reason: String },

    /// A material parameter is out of its physical range.
    #[error("material {context}: {reason}")]
    Material { context: String, reason: String },

    /// A scene key is missing, unknown or has an invalid value.
    #[error("scene {key}: {reason}")]
    Scene { key: String, reason: String },

    /// A derivative was asked for at a state where the material is undefined
    /// (for example Neo-Hookean with J <= 0).
    #[error("element {element}: {reason}")]
    InvalidDeformation { element: usize, reason: String },

    /// A linear solve or factorisation failed.
    #[error("linear solver: {reason}")]
    LinearSolver { reason: String },

    /// A nonlinear solve did not converge.
    #[error("{reason}")]
    Solver { reason: String },

    /// A time step failed (no convergence, non-finite values).
    #[error("step {step} (t = {time:.6} s): {reason}")]
    StepFailed { step: usize, time: f64, reason: String },

    /// The run was asked to stop (Ctrl-C, a termination signal) and stopped
    /// after finishing step `step`.
    #[error("interrupted after step {step} (t = {time} s)", time = crate::output::tidy(*time))]
    Interrupted { step: usize, time: f64 },
}

impl HookeError {
    /// Shorthand for a parse error at a given line of a file.
    pub fn parse(path: impl Into<PathBuf>, line: Option<usize>, reason: impl Into<String>) -> Self {
        HookeError::Parse {
            path: path.into(),
            line,
            reason: reason.into(),
        }
    }

    /// Shorthand for an I/O error on a file.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        HookeError::Io {
            path: path.into(),
            source,
        }
    }

    /// Shorthand for a scene error on a key.
    pub fn scene(key: impl Into<String>, reason: impl Into<String>) -> Self {
        HookeError::Scene {
            key: key.into(),
            reason: reason.into(),
        }
    }

    /// True when the error comes from what the user gave (a file, a scene, a
    /// parameter) rather than from a numerical failure inside Hooke.
    pub fn is_user_error(&self) -> bool {
        matches!(
            self,
            HookeError::Io { .. }
                | HookeError::Parse { .. }
                | HookeError::Mesh { .. }
                | HookeError::Material { .. }
                | HookeError::Scene { .. }
        )
    }
}

/// Result alias used throughout the library.
pub type Result<T, E = HookeError> = std::result::Result<T, E>;
