//! Mesh file readers (TetGen, MEDIT, Gmsh) and the MEDIT writer.
//!
//! Readers return the mesh exactly as stored: orienting the elements is left to the
//! caller, which also reports what was changed.

pub mod gmsh;
pub mod matrix_market;
pub mod medit;
mod obj;
mod stl;
mod surface;
mod surface_file;
pub mod tetgen;

pub use surface::{parse_surface, read_surface, write_surface};

use crate::error::{HookeError, Result};
use crate::mesh::TetMesh;
use std::path::Path;

/// File extensions [`read_mesh`] understands, as listed in its error message.
const SUPPORTED_EXTENSIONS: &str = ".node/.ele (TetGen), .mesh (MEDIT), .msh (Gmsh 4.1), .vtu (VTK XML)";

/// Reads a tetrahedral mesh, choosing the format from the file extension.
///
/// `.node` and `.ele` read the TetGen pair sharing the stem, `.mesh` reads MEDIT and
/// `.msh` reads Gmsh. The mesh is returned as read, without re-orienting elements.
pub fn read_mesh(path: &Path) -> Result<TetMesh> {
    match lowercase_extension(path).as_deref() {
        Some("node") | Some("ele") => tetgen::read_tetgen(path),
        Some("mesh" | "msh" | "vtu") => parse_mesh(path, &read_bytes(path)?),
        _ => parse_mesh(path, &[]),
    }
}

fn lowercase_extension(path: &Path) -> Option<String> {
    path.extension()
        .and_then(|extension| extension.to_str())
        .map(str::to_ascii_lowercase)
}

/// Parses the bytes of a one-file tetrahedral mesh; `name` gives the format
/// (by extension) and names the file in errors. TetGen's two files are read
/// by [`tetgen::parse_tetgen`].
pub fn parse_mesh(name: &Path, bytes: &[u8]) -> Result<TetMesh> {
    let path = name;
    match lowercase_extension(name).as_deref() {
        Some("mesh") => medit::parse_medit(path, text_of(path, bytes)?),
        Some("msh") => gmsh::parse_gmsh(path, bytes),
        Some("vtu") => vtu_tetrahedra(path, crate::output::parse_frame(path, bytes)?),
        _ => Err(HookeError::parse(
            path,
            None,
            format!("unknown mesh format; supported extensions are {SUPPORTED_EXTENSIONS}"),
        )),
    }
}

/// The tetrahedra of a VTK XML file, such as `hooke mesh` writes or a frame of
/// a run (then at rest: its displacement is taken off).
fn vtu_tetrahedra(path: &Path, frame: crate::output::FrameData) -> Result<TetMesh> {
    match frame.mesh {
        crate::mesh::Mesh::Tetrahedra(mesh) => Ok(mesh),
        crate::mesh::Mesh::Triangles(_) => Err(HookeError::parse(
            path,
            None,
            "the file holds triangles; a 3D body needs tetrahedra (a 2D scene reads triangles from .msh or .obj)",
        )),
    }
}

/// The next three words as a point with finite coordinates (an OBJ `v`, an
/// STL `vertex`); the reason names the missing or bad coordinate.
fn point_of_words<'a>(
    words: &mut impl Iterator<Item = &'a str>,
) -> std::result::Result<nalgebra::Vector3<f64>, String> {
    let mut coordinate = |axis: &str| {
        let word = words
            .next()
            .ok_or_else(|| format!("vertex without a {axis} coordinate"))?;
        word.parse::<f64>()
            .ok()
            .filter(|value| value.is_finite())
            .ok_or_else(|| format!("vertex {axis} coordinate {word:?} is not a finite number"))
    };
    Ok(nalgebra::Vector3::new(
        coordinate("x")?,
        coordinate("y")?,
        coordinate("z")?,
    ))
}

/// The first vertex an element lists twice (the element would be degenerate).
fn repeated_corner(corners: &[usize]) -> Option<usize> {
    (0..corners.len()).find_map(|a| corners[a + 1..].contains(&corners[a]).then_some(corners[a]))
}

/// Reads a planar triangle mesh for a 2D scene: Gmsh 4.1 (`.msh`, its linear
/// triangles) or Wavefront OBJ (`.obj`, its faces triangulated; z is ignored).
pub fn read_planar_mesh(path: &Path) -> Result<crate::mesh::TriangleMesh> {
    let extension = path
        .extension()
        .and_then(|extension| extension.to_str())
        .map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("msh") => gmsh::read_gmsh_triangles(path),
        Some("obj") => {
            let soup = read_surface(path)?;
            let labels = vec![0; soup.triangles.len()];
            crate::mesh::TriangleMesh::new(soup.vertices, soup.triangles, labels)
                .map_err(|error| HookeError::parse(path, None, error.to_string()))
        }
        _ => Err(HookeError::parse(
            path,
            None,
            "unknown 2D mesh format; supported extensions are .msh (Gmsh 4.1 triangles) and .obj",
        )),
    }
}

/// Reads a whole text file, reporting failures against its path.
fn read_bytes(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|source| HookeError::io(path, source))
}

/// The bytes of a text format as text; the error names the line and byte of
/// the first one that is not UTF-8.
fn text_of<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a str> {
    std::str::from_utf8(bytes).map_err(|error| {
        let at = error.valid_up_to();
        let line = 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count();
        HookeError::parse(path, Some(line), format!("not UTF-8 text (byte {at})"))
    })
}

/// A whitespace-separated word of a text mesh file and the 1-based line it is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Token<'a> {
    text: &'a str,
    line: usize,
}

/// The words of each line that still has some once its `#` comment is removed,
/// numbered from 1 so errors can point at the line in an editor.
fn content_lines(text: &str) -> impl Iterator<Item = (usize, Vec<&str>)> {
    text.lines().enumerate().filter_map(|(index, line)| {
        let without_comment = line.split('#').next().unwrap_or_default();
        let words: Vec<&str> = without_comment.split_whitespace().collect();
        (!words.is_empty()).then_some((index + 1, words))
    })
}

/// All words of the file in order, comments removed, each with its line number.
fn tokens(text: &str) -> impl Iterator<Item = Token<'_>> {
    content_lines(text).flat_map(|(line, words)| words.into_iter().map(move |text| Token { text, line }))
}

/// The line a "file ends too early" error points at: the last line of the file.
fn last_line_number(text: &str) -> usize {
    text.lines().count().max(1)
}

/// Parses a non-negative integer (a count or a vertex index).
fn parse_count(word: &str, what: &str) -> std::result::Result<usize, String> {
    word.parse::<usize>()
        .map_err(|_| format!("{what}: expected a non-negative integer, found '{word}'"))
}

/// Parses a coordinate; infinities and NaN are refused here, where the line is known.
fn parse_coordinate(word: &str, what: &str) -> std::result::Result<f64, String> {
    match word.parse::<f64>() {
        Ok(value) if value.is_finite() => Ok(value),
        Ok(_) => Err(format!("{what}: '{word}' is not a finite number")),
        Err(_) => Err(format!("{what}: expected a number, found '{word}'")),
    }
}

/// Parses a region label. Some writers store integer attributes as floats (`2.0`),
/// so integral floats are accepted as well.
fn parse_label(word: &str, what: &str) -> std::result::Result<i32, String> {
    if let Ok(label) = word.parse::<i32>() {
        return Ok(label);
    }
    match word.parse::<f64>() {
        Ok(value) if value.fract() == 0.0 && value >= i32::MIN as f64 && value <= i32::MAX as f64 => Ok(value as i32),
        Ok(_) => Err(format!("{what}: '{word}' is not an integer label")),
        Err(_) => Err(format!("{what}: expected an integer label, found '{word}'")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A fresh directory for one test, so parallel tests never share files; it is
    /// removed when the test is done with it.
    pub(crate) struct ScratchDirectory(PathBuf);

    impl std::ops::Deref for ScratchDirectory {
        type Target = Path;

        fn deref(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for ScratchDirectory {
        fn drop(&mut self) {
            // Best effort: a leftover file in the temp directory is harmless.
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    pub(crate) fn scratch_directory(test_name: &str) -> ScratchDirectory {
        let directory = std::env::temp_dir().join(format!(
            "hooke-io-{}-{}-{}",
            std::process::id(),
            test_name,
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|elapsed| elapsed.as_nanos())
                .unwrap_or_default()
        ));
        std::fs::create_dir_all(&directory).expect("create test directory");
        ScratchDirectory(directory)
    }

    pub(crate) fn write_test_file(directory: &Path, name: &str, contents: &[u8]) -> PathBuf {
        let path = directory.join(name);
        std::fs::write(&path, contents).expect("write fixture");
        path
    }

    /// The shared fixtures all describe the same unit cube split into 6 positive tets.
    fn assert_is_fixture_cube(mut mesh: TetMesh) {
        assert_eq!(mesh.vertex_count(), 8);
        assert_eq!(mesh.tet_count(), 6);
        let mut labels = mesh.labels.clone();
        labels.sort_unstable();
        assert_eq!(labels, vec![1, 1, 1, 2, 2, 2]);
        let (low, high) = mesh.bounding_box();
        assert_eq!(low, nalgebra::Vector3::zeros());
        assert_eq!(high, nalgebra::Vector3::repeat(1.0));
        let total_volume: f64 = (0..mesh.tet_count())
            .map(|element| mesh.signed_volume(element, &mesh.vertices))
            .sum();
        assert!((total_volume - 1.0).abs() < 1e-12, "volume {total_volume}");
        // Label 1 is the half x > y, label 2 the half y > x.
        for element in 0..mesh.tet_count() {
            let centroid = mesh.centroid(element);
            let expected = if centroid.x > centroid.y { 1 } else { 2 };
            assert_eq!(mesh.labels[element], expected, "element {element}");
        }
        let report = mesh.orient().expect("fixture tets are not degenerate");
        assert!(report.reoriented.is_empty(), "fixtures are positively oriented");
    }

    #[test]
    fn every_fixture_reads_as_the_same_cube() {
        let directory = scratch_directory("fixtures");
        let node = include_bytes!("../../tests/data/cube.node");
        let ele = include_bytes!("../../tests/data/cube.ele");
        let node_path = write_test_file(&directory, "cube.node", node);
        let ele_path = write_test_file(&directory, "cube.ele", ele);
        let medit_path = write_test_file(&directory, "cube.mesh", include_bytes!("../../tests/data/cube.mesh"));
        let gmsh_path = write_test_file(&directory, "cube.msh", include_bytes!("../../tests/data/cube.msh"));
        for path in [node_path, ele_path, medit_path, gmsh_path] {
            let mesh = read_mesh(&path).unwrap_or_else(|error| panic!("{error}"));
            assert_is_fixture_cube(mesh);
        }
    }

    #[test]
    fn unknown_extension_names_the_file_and_the_formats() {
        let error = read_mesh(Path::new("body.stl")).expect_err("stl is not supported");
        let message = error.to_string();
        assert!(matches!(error, HookeError::Parse { line: None, .. }));
        assert!(message.contains("body.stl"), "{message}");
        assert!(message.contains(".mesh") && message.contains(".msh"), "{message}");
        assert!(read_mesh(Path::new("no_extension")).is_err());
    }

    #[test]
    fn missing_file_is_an_io_error() {
        let directory = scratch_directory("missing");
        let error = read_mesh(&directory.join("absent.mesh")).expect_err("file is absent");
        assert!(matches!(error, HookeError::Io { .. }), "{error}");
    }

    #[test]
    fn lines_drop_comments_and_blank_lines() {
        let text = "# header comment\n\n3 4 # trailing\n   \nx#y\n";
        let lines: Vec<(usize, Vec<&str>)> = content_lines(text).collect();
        assert_eq!(lines, vec![(3, vec!["3", "4"]), (5, vec!["x"])]);
        let words: Vec<Token> = tokens(text).collect();
        assert_eq!(words[2], Token { text: "x", line: 5 });
        assert_eq!(last_line_number(text), 5);
        assert_eq!(last_line_number(""), 1);
    }

    #[test]
    fn labels_accept_integral_floats_only() {
        assert_eq!(parse_label("2", "label"), Ok(2));
        assert_eq!(parse_label("2.0", "label"), Ok(2));
        assert_eq!(parse_label("-3e0", "label"), Ok(-3));
        assert!(parse_label("2.5", "label").is_err());
        assert!(parse_label("abc", "label").is_err());
        assert!(parse_label("1e20", "label").is_err());
    }

    #[test]
    fn coordinates_must_be_finite_numbers() {
        assert_eq!(parse_coordinate("-1.5e-3", "x"), Ok(-1.5e-3));
        assert!(parse_coordinate("nan", "x").is_err());
        assert!(parse_coordinate("inf", "x").is_err());
        assert!(parse_coordinate("1,0", "x").is_err());
        assert!(parse_count("-1", "index").is_err());
        assert_eq!(parse_count("7", "index"), Ok(7));
    }
}
