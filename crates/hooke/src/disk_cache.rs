//! Precomputations kept on disk between runs (the `.hooke-cache` folder
//! beside a scene, or `hooke … --cache DIR`): EigenFit's fine-mesh
//! eigenvalues, a subspace's eigenmodes and cubature. A file is named by a
//! hash of everything its result depends on, so a changed mesh, material or
//! pin reads nothing stale; a file that cannot be read or written is only a
//! cost: the result is computed again. A model's fingerprint is
//! [`crate::model::Model::fingerprint`].

use std::path::{Path, PathBuf};

/// FNV-1a, fed piece by piece.
pub struct Fingerprint(u64);

impl Default for Fingerprint {
    fn default() -> Self {
        Fingerprint(0xcbf29ce484222325)
    }
}

impl Fingerprint {
    pub fn feed(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(0x100000001b3);
        }
    }

    pub fn feed_number(&mut self, value: u64) {
        self.feed(&value.to_le_bytes());
    }

    /// The hash so far.
    pub fn value(&self) -> u64 {
        self.0
    }

    /// `<directory>/<kind>-<hash>.json`.
    pub fn path(&self, directory: &Path, kind: &str) -> PathBuf {
        directory.join(format!("{kind}-{:016x}.json", self.0))
    }
}

/// The value stored at `path`, if it is there and reads.
pub fn load<T: serde::de::DeserializeOwned>(path: &Path) -> Option<T> {
    std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
}

/// Stores `value` at `path`, written beside and renamed so that a reader
/// never sees half a file; failures are ignored (the cache is an optimisation).
pub fn store<T: serde::Serialize>(path: &Path, value: &T) {
    if let Some(directory) = path.parent() {
        let _ = std::fs::create_dir_all(directory);
    }
    let partial = path.with_extension("json.partial");
    if let Ok(text) = serde_json::to_vec(value) {
        if std::fs::write(&partial, text).is_ok() {
            let _ = std::fs::rename(&partial, path);
        }
    }
}
