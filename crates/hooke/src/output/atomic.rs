//! Files written whole or not at all: the bytes go to a hidden temporary file
//! beside the target, which is renamed over it only once everything is on
//! disk. A reader (ParaView, a resumed run) never sees half a file, a killed
//! run leaves no empty frame, and a failed write leaves no temporary behind.

use crate::error::{HookeError, Result};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// The temporary name used while `path` is being written: `.<name>.tmp` in
/// the same directory (a rename across file systems would not be atomic).
pub fn temporary_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp"))
}

/// Writes `path` through `write`, atomically. The error names `path` and is
/// the first one met; the temporary file is removed on any failure.
pub fn write_atomically(path: &Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<()> {
    let temporary = temporary_path(path);
    let result = (|| {
        let file = File::create(&temporary)?;
        let mut writer = BufWriter::new(file);
        write(&mut writer)?;
        let file = writer.into_inner().map_err(|error| error.into_error())?;
        // The data must be on disk before the rename makes it visible.
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    result.map_err(|error| {
        let _ = std::fs::remove_file(&temporary);
        HookeError::io(path, error)
    })
}

/// Writes `bytes` to `path` atomically.
pub fn write_bytes_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomically(path, |writer| writer.write_all(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_write_keeps_the_old_file_and_leaves_no_temporary() {
        let directory = crate::output::scratch_directory("atomic");
        std::fs::create_dir_all(&directory).unwrap();
        let path = directory.join("frame_0000.vtu");
        write_bytes_atomically(&path, b"first").unwrap();
        let error = write_atomically(&path, |writer| {
            writer.write_all(b"half")?;
            Err(io::Error::other("disk full"))
        })
        .unwrap_err();
        assert!(error.to_string().contains("frame_0000.vtu"), "{error}");
        assert!(error.to_string().contains("disk full"), "{error}");
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
        let names: Vec<_> = std::fs::read_dir(&directory)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("frame_0000.vtu")]);
        std::fs::remove_dir_all(&directory).ok();
    }

    #[test]
    fn a_write_into_a_missing_directory_names_the_target() {
        let path = Path::new("/nonexistent-hooke-directory/summary.json");
        let error = write_bytes_atomically(path, b"{}").unwrap_err();
        assert!(error.to_string().contains("summary.json"), "{error}");
    }
}
