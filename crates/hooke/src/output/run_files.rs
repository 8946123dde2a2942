//! The files a run (or a modes export) owns in its output folder. A new run
//! into a folder that holds an earlier one removes exactly these first, so a
//! series never mixes two runs; anything else in the folder (a mesh, notes,
//! other results) stays.

use crate::error::{HookeError, Result};
use std::path::Path;

/// Whether `name` is one of the files a run writes: the frame series
/// (`frame_0000.vtu`, `frame.pvd`), the obstacles at the same times
/// (`obstacle_0000.vtu`, `obstacle.pvd`), the pictures (`render_0000.png`), the
/// energies (`energies.csv`, `energies.png`), `summary.json`, the checkpoint,
/// and the hidden temporaries of any of them that a killed run left behind.
pub fn is_run_file(name: &str) -> bool {
    numbered(name, "frame_", ".vtu")
        || numbered(name, "obstacle_", ".vtu")
        || numbered(name, "render_", ".png")
        || matches!(
            name,
            "frame.pvd"
                | "frame.pvd.tmp"
                | "obstacle.pvd"
                | "energies.csv"
                | "energies.png"
                | "summary.json"
                | "checkpoint.json"
        )
        || temporary_of(name, is_run_file)
}

/// Whether `name` is one of the files `hooke modes` writes: `modes.csv`, the
/// shapes `mode_0000.vtu`, … and `mode.pvd`, and their temporaries.
pub fn is_modes_file(name: &str) -> bool {
    numbered(name, "mode_", ".vtu") || matches!(name, "modes.csv" | "mode.pvd") || temporary_of(name, is_modes_file)
}

/// `<prefix><digits><extension>`.
fn numbered(name: &str, prefix: &str, extension: &str) -> bool {
    name.strip_prefix(prefix)
        .and_then(|rest| rest.strip_suffix(extension))
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// `.<owned>.tmp`, the temporary of an atomic write (see `output::atomic`).
fn temporary_of(name: &str, owned: fn(&str) -> bool) -> bool {
    name.strip_prefix('.')
        .and_then(|rest| rest.strip_suffix(".tmp"))
        .is_some_and(|inner| !inner.starts_with('.') && owned(inner))
}

/// Creates the output folder (and its parents) if missing. A path that is a
/// file is refused with that reason, not the system's "File exists".
pub fn create_output_directory(directory: &Path) -> Result<()> {
    if directory.exists() && !directory.is_dir() {
        return Err(HookeError::io(
            directory,
            std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "this output path is a file, not a folder; choose another output folder",
            ),
        ));
    }
    std::fs::create_dir_all(directory).map_err(|error| HookeError::io(directory, error))
}

/// Removes the files of an earlier run from `directory` and returns how many
/// there were. A missing folder holds none.
pub fn clear_previous_run(directory: &Path) -> Result<usize> {
    clear_matching(directory, is_run_file)
}

/// Removes the files of an earlier modes export from `directory`.
pub fn clear_previous_modes(directory: &Path) -> Result<usize> {
    clear_matching(directory, is_modes_file)
}

fn clear_matching(directory: &Path, owned: fn(&str) -> bool) -> Result<usize> {
    let entries = match std::fs::read_dir(directory) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(error) => return Err(HookeError::io(directory, error)),
    };
    let mut removed = 0;
    for entry in entries {
        let entry = entry.map_err(|error| HookeError::io(directory, error))?;
        let is_owned = entry.file_name().to_str().is_some_and(owned);
        if is_owned && entry.file_type().is_ok_and(|kind| kind.is_file()) {
            let path = entry.path();
            std::fs::remove_file(&path).map_err(|error| HookeError::io(&path, error))?;
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_files_a_run_writes_are_its_own() {
        for name in [
            "frame_0000.vtu",
            "frame_12345.vtu",
            "frame.pvd",
            "render_0003.png",
            "energies.csv",
            "energies.png",
            "summary.json",
            "checkpoint.json",
            ".frame_0007.vtu.tmp",
            ".summary.json.tmp",
            "frame.pvd.tmp",
            "obstacle_0002.vtu",
            "obstacle.pvd",
            ".obstacle.pvd.tmp",
        ] {
            assert!(is_run_file(name), "{name}");
        }
        for name in [
            "frame_.vtu",
            "frame_00a1.vtu",
            "frame_0000.vtk",
            "mesh.vtu",
            "render.png",
            "notes.txt",
            "scene.toml",
            ".notes.tmp",
            "..summary.json.tmp.tmp",
            "comparison.json",
            "obstacle.obj",
        ] {
            assert!(!is_run_file(name), "{name}");
        }
        assert!(is_modes_file("mode_0004.vtu") && is_modes_file("modes.csv") && is_modes_file(".mode.pvd.tmp"));
        assert!(!is_modes_file("frame_0004.vtu") && !is_modes_file("modes.txt"));
    }

    #[test]
    fn clearing_removes_an_earlier_run_and_keeps_everything_else() {
        let directory = crate::output::scratch_directory("run-files");
        std::fs::create_dir_all(directory.join("frame_0009.vtu")).unwrap(); // a folder, not a file
        for name in [
            "frame_0000.vtu",
            "frame_0001.vtu",
            "frame.pvd",
            "summary.json",
            "mesh.vtu",
            "notes.txt",
        ] {
            std::fs::write(directory.join(name), "x").unwrap();
        }
        assert_eq!(clear_previous_run(&directory).unwrap(), 4);
        let mut left: Vec<String> = std::fs::read_dir(&directory)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["frame_0009.vtu", "mesh.vtu", "notes.txt"]);
        assert_eq!(clear_previous_run(&directory.join("missing")).unwrap(), 0);
        let error = create_output_directory(&directory.join("notes.txt")).unwrap_err();
        assert!(
            error.to_string().contains("notes.txt") && error.to_string().contains("is a file"),
            "{error}"
        );
        std::fs::remove_dir_all(&directory).ok();
    }
}
