//! The library's error type: every failure says what went wrong and where
//! (file, line, element, key), so the CLI can show it without a backtrace.

use std::path::PathBuf;

/// Everything that can go wrong in Hooke.
#[derive(Debug, thiserror::Error)]
pub enum HookeError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file's (or folder's) path.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },

    /// A file was read but its contents are malformed.
    #[error("{path}{}: {reason}", line.map(|l| format!(", line {l}")).unwrap_or_default())]
    Parse {
        /// The file's path (or, for text that came from no file, what it was).
        path: PathBuf,
        /// The 1-based line of the problem (None: not tied to one line).
        line: Option<usize>,
        /// What is wrong there.
        reason: String,
    },

    /// The mesh is unusable (degenerate element, bad index, ...).
    #[error("mesh: {reason}")]
    Mesh {
        /// What is wrong with the mesh, and where.
        reason: String,
    },

    /// A material parameter is out of its physical range.
    #[error("material {context}: {reason}")]
    Material {
        /// Where the parameters came from (a scene key such as `bodies[0].material`).
        context: String,
        /// Which value is out of range, and what it must be.
        reason: String,
    },

    /// A scene key is missing, unknown or has an invalid value.
    #[error("scene {key}: {reason}")]
    Scene {
        /// The scene key, such as `bodies[0].mesh.file`.
        key: String,
        /// What is wrong with its value.
        reason: String,
    },

    /// A derivative was asked for at a state where the material is undefined
    /// (for example Neo-Hookean with J <= 0).
    #[error("element {element}: {reason}")]
    InvalidDeformation {
        /// The element's index (for an interface penalty, the interface's).
        element: usize,
        /// What is undefined there, and the deformation (det F).
        reason: String,
    },

    /// A linear solve or factorisation failed.
    #[error("linear solver: {reason}")]
    LinearSolver {
        /// Why the solve or factorisation failed.
        reason: String,
    },

    /// A nonlinear solve did not converge.
    #[error("{reason}")]
    Solver {
        /// Why the iteration stopped.
        reason: String,
    },

    /// A time step failed (no convergence, non-finite values).
    #[error("step {step} (t = {time:.6} s): {reason}")]
    StepFailed {
        /// The 1-based number of the step that failed.
        step: usize,
        /// The time the step was to end at, s.
        time: f64,
        /// Why it failed.
        reason: String,
    },

    /// The run was asked to stop (Ctrl-C, a termination signal) and stopped
    /// after finishing step `step`.
    #[error("interrupted after step {step} (t = {time} s)", time = crate::numbers::tidy(*time))]
    Interrupted {
        /// The last step completed.
        step: usize,
        /// The simulation time reached, s.
        time: f64,
    },
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

    /// Whether the machine, not the input or Hooke, is at fault: a full disk,
    /// a read-only or over-quota file system, a file too large, no memory.
    /// The command line exits with status 3 for these.
    pub fn is_environment_error(&self) -> bool {
        use std::io::ErrorKind::*;
        match self {
            HookeError::Io { source, .. } => matches!(
                source.kind(),
                StorageFull | ReadOnlyFilesystem | QuotaExceeded | FileTooLarge | OutOfMemory
            ),
            _ => false,
        }
    }

    /// True when the error comes from what the user gave (a file, a scene, a
    /// parameter) rather than from a numerical failure inside Hooke.
    pub fn is_user_error(&self) -> bool {
        !self.is_environment_error()
            && matches!(
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

/// A deserialiser's message in the user's words: "invalid type: string "1 s",
/// expected f64" becomes "expected a number, got the string "1 s"", with no
/// Rust type names (f64, usize, …) left in it.
pub fn in_plain_words(message: &str) -> String {
    let plain_expected = |expected: &str| -> String {
        let expected = expected.trim();
        match expected {
            "f64" | "f32" => "a number".to_string(),
            "usize" | "u64" | "u32" | "u16" | "u8" => "a whole number, 0 or more".to_string(),
            "i64" | "i32" | "isize" => "a whole number".to_string(),
            "bool" | "a boolean" => "true or false".to_string(),
            other => other
                .replace("a sequence", "a list [..]")
                .replace("an array", "a list [..]")
                .replace("a map", "a table { .. }")
                .replace("struct ", "a table ")
                .replace("tuple of size", "list of"),
        }
    };
    let plain_found = |found: &str| -> String {
        let found = found.trim();
        let value = |prefix: &str| found.strip_prefix(prefix).map(|v| v.trim_matches('`').to_string());
        if let Some(text) = found.strip_prefix("string ") {
            format!("the string {text}")
        } else if let Some(number) = value("floating point ") {
            format!("the number {number}")
        } else if let Some(number) = value("integer ") {
            format!("the whole number {number}")
        } else if let Some(flag) = value("boolean ") {
            format!("`{flag}`")
        } else if found == "sequence" {
            "a list".to_string()
        } else if found == "map" {
            "a table".to_string()
        } else {
            found.to_string()
        }
    };
    for kind in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = message.strip_prefix(kind) {
            if let Some((found, expected)) = rest.split_once(", expected ") {
                return format!("expected {}, got {}", plain_expected(expected), plain_found(found));
            }
        }
    }
    if let Some(rest) = message.strip_prefix("invalid length ") {
        if let Some((found, expected)) = rest.split_once(", expected ") {
            return format!("expected {}, got {found} entries", plain_expected(expected));
        }
    }
    message.to_string()
}

#[cfg(test)]
mod tests {
    use super::in_plain_words;

    #[test]
    fn a_full_disk_is_the_machines_fault_a_missing_file_the_users() {
        use super::HookeError;
        use std::io::{Error, ErrorKind};
        let full = HookeError::io("out/summary.json", Error::from(ErrorKind::StorageFull));
        assert!(full.is_environment_error() && !full.is_user_error());
        let read_only = HookeError::io("out/frame_0001.vtu", Error::from(ErrorKind::ReadOnlyFilesystem));
        assert!(read_only.is_environment_error());
        let missing = HookeError::io("scene.toml", Error::from(ErrorKind::NotFound));
        assert!(!missing.is_environment_error() && missing.is_user_error());
        let solver = HookeError::Solver {
            reason: "no convergence".into(),
        };
        assert!(!solver.is_environment_error() && !solver.is_user_error());
    }

    #[test]
    fn deserialiser_messages_lose_their_rust_type_names() {
        assert_eq!(
            in_plain_words("invalid type: string \"1 s\", expected f64"),
            "expected a number, got the string \"1 s\""
        );
        assert_eq!(
            in_plain_words("invalid type: floating point `50.5`, expected usize"),
            "expected a whole number, 0 or more, got the number 50.5"
        );
        assert_eq!(
            in_plain_words("invalid value: integer `-1`, expected usize"),
            "expected a whole number, 0 or more, got the whole number -1"
        );
        assert_eq!(
            in_plain_words("invalid type: integer `3`, expected a boolean"),
            "expected true or false, got the whole number 3"
        );
        assert_eq!(in_plain_words("missing field `kind`"), "missing field `kind`");
    }
}
