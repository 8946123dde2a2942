//! MEDIT `.mesh` (ASCII) reader and writer.
//!
//! The format is a stream of keywords, each followed by a count and that many
//! fixed-width entries; line breaks carry no meaning. Only `Vertices` and
//! `Tetrahedra` are kept (the tetrahedron reference becomes the label); the other
//! common sections are skipped by their entry width.

use super::{last_line_number, parse_coordinate, parse_count, parse_label, tokens, Token};
use crate::error::{HookeError, Result};
use crate::mesh::TetMesh;
use nalgebra::Vector3;
use std::io::Write;
use std::path::Path;

/// Sections we do not use, with the number of values per entry.
const SKIPPED_SECTIONS: &[(&str, usize)] = &[
    ("Edges", 3),
    ("Triangles", 4),
    ("Quadrilaterals", 5),
    ("Hexahedra", 9),
    ("Prisms", 7),
    ("Corners", 1),
    ("RequiredVertices", 1),
    ("Ridges", 1),
    ("RequiredEdges", 1),
    ("Normals", 3),
    ("Tangents", 3),
    ("NormalAtVertices", 2),
    ("TangentAtEdges", 3),
];

/// Reads the vertices and tetrahedra of an ASCII MEDIT file.
pub fn read_medit(path: &Path) -> Result<TetMesh> {
    let bytes = super::read_bytes(path)?;
    parse_medit(path, super::text_of(path, &bytes)?)
}

/// Writes `mesh` as an ASCII MEDIT file; labels become tetrahedron references.
pub fn write_medit(path: &Path, mesh: &TetMesh) -> Result<()> {
    let file = std::fs::File::create(path).map_err(|source| HookeError::io(path, source))?;
    let mut output = std::io::BufWriter::new(file);
    write_contents(&mut output, mesh)
        .and_then(|()| output.flush())
        .map_err(|source| HookeError::io(path, source))
}

fn write_contents(output: &mut impl Write, mesh: &TetMesh) -> std::io::Result<()> {
    // Version 2 declares double precision: readers such as libMeshb would otherwise
    // read coordinates into single precision.
    writeln!(output, "MeshVersionFormatted 2")?;
    writeln!(output, "Dimension 3")?;
    writeln!(output, "Vertices\n{}", mesh.vertices.len())?;
    for vertex in &mesh.vertices {
        writeln!(
            output,
            "{} {} {} 0",
            Coordinate(vertex.x),
            Coordinate(vertex.y),
            Coordinate(vertex.z)
        )?;
    }
    writeln!(output, "Tetrahedra\n{}", mesh.tets.len())?;
    for (tet, label) in mesh.tets.iter().zip(&mesh.labels) {
        let [a, b, c, d] = tet.map(|vertex| vertex + 1);
        writeln!(output, "{a} {b} {c} {d} {label}")?;
    }
    writeln!(output, "End")
}

/// Prints a coordinate exactly (shortest round-trip digits), switching to exponent
/// notation for very small or large magnitudes so no value turns into a long run of zeros.
struct Coordinate(f64);

impl std::fmt::Display for Coordinate {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let magnitude = self.0.abs();
        if magnitude == 0.0 || (1e-5..1e16).contains(&magnitude) {
            write!(formatter, "{}", self.0)
        } else {
            write!(formatter, "{:e}", self.0)
        }
    }
}

/// A tetrahedron as read, with its line kept until the vertex count is known
/// (MEDIT does not require `Vertices` to come first).
struct TetEntry {
    line: usize,
    corners: [usize; 4],
    label: i32,
}

/// Parses the text of a MEDIT file; `path` names it in errors.
pub fn parse_medit(path: &Path, text: &str) -> Result<TetMesh> {
    let mut stream = TokenStream {
        path,
        tokens: Box::new(tokens(text)),
        last_line: last_line_number(text),
    };
    let mut vertices: Option<Vec<Vector3<f64>>> = None;
    let mut tet_entries: Option<Vec<TetEntry>> = None;

    while let Some(keyword) = stream.tokens.next() {
        let is = |name: &str| keyword.text.eq_ignore_ascii_case(name);
        if is("End") {
            break;
        } else if is("MeshVersionFormatted") {
            let version = stream.next_count(|| "the mesh version".into())?;
            if !(1..=4).contains(&version.value) {
                return Err(stream.error(version.line, format!("mesh version {} is not 1 to 4", version.value)));
            }
        } else if is("Dimension") {
            let dimension = stream.next_count(|| "the dimension".into())?;
            if dimension.value != 3 {
                return Err(stream.error(dimension.line, format!("dimension is {}, expected 3", dimension.value)));
            }
        } else if is("Vertices") {
            if vertices.is_some() {
                return Err(stream.error(keyword.line, "a second Vertices section".into()));
            }
            vertices = Some(read_vertices(&mut stream)?);
        } else if is("Tetrahedra") {
            if tet_entries.is_some() {
                return Err(stream.error(keyword.line, "a second Tetrahedra section".into()));
            }
            tet_entries = Some(read_tetrahedra(&mut stream)?);
        } else if is("Identifier") || is("Geometry") {
            stream.skip_string(keyword.text)?;
        } else if let Some(&(name, width)) = SKIPPED_SECTIONS
            .iter()
            .find(|(name, _)| keyword.text.eq_ignore_ascii_case(name))
        {
            skip_section(&mut stream, name, width)?;
        } else {
            return Err(stream.error(keyword.line, format!("unknown keyword '{}'", keyword.text)));
        }
    }

    let missing = |section: &str| {
        HookeError::parse(
            path,
            None,
            format!("no {section} section; a tetrahedral mesh needs Vertices and Tetrahedra"),
        )
    };
    let vertices = vertices.ok_or_else(|| missing("Vertices"))?;
    let tet_entries = tet_entries.ok_or_else(|| missing("Tetrahedra"))?;

    let mut tets = Vec::with_capacity(tet_entries.len());
    let mut labels = Vec::with_capacity(tet_entries.len());
    for entry in tet_entries {
        if let Some(&corner) = entry.corners.iter().find(|&&corner| corner > vertices.len()) {
            return Err(stream.error(
                entry.line,
                format!(
                    "vertex index {corner} is out of range: the file has {} vertices",
                    vertices.len()
                ),
            ));
        }
        if let Some(corner) = super::repeated_corner(&entry.corners) {
            return Err(stream.error(entry.line, format!("the tetrahedron lists vertex {corner} twice")));
        }
        tets.push(entry.corners.map(|corner| corner - 1));
        labels.push(entry.label);
    }
    TetMesh::new(vertices, tets, labels).map_err(|error| HookeError::parse(path, None, error.to_string()))
}

/// A counted value and the line it was read from.
struct Counted {
    value: usize,
    line: usize,
}

/// The file's words in order, with errors that name the file and line.
struct TokenStream<'a> {
    path: &'a Path,
    tokens: Box<dyn Iterator<Item = Token<'a>> + 'a>,
    last_line: usize,
}

impl<'a> TokenStream<'a> {
    fn error(&self, line: usize, reason: String) -> HookeError {
        HookeError::parse(self.path, Some(line), reason)
    }

    /// The next word; `expected` describes it for the error when the file ends first.
    fn next_token(&mut self, expected: impl FnOnce() -> String) -> Result<Token<'a>> {
        match self.tokens.next() {
            Some(token) => Ok(token),
            None => Err(self.error(self.last_line, format!("file ends before {}", expected()))),
        }
    }

    fn next_count(&mut self, expected: impl FnOnce() -> String) -> Result<Counted> {
        let description = expected();
        let token = self.next_token(|| description.clone())?;
        parse_count(token.text, &description)
            .map(|value| Counted {
                value,
                line: token.line,
            })
            .map_err(|reason| self.error(token.line, reason))
    }

    /// Skips the string after `Identifier` or `Geometry`, which may be quoted and
    /// then span several words.
    fn skip_string(&mut self, keyword: &str) -> Result<()> {
        let first = self.next_token(|| format!("the string after {keyword}"))?;
        let quoted = first.text.starts_with('"');
        let mut closed = !quoted || (first.text.len() > 1 && first.text.ends_with('"'));
        while !closed {
            let word = self.next_token(|| format!("the closing quote of the {keyword} string"))?;
            closed = word.text.ends_with('"');
        }
        Ok(())
    }
}

fn read_vertices(stream: &mut TokenStream<'_>) -> Result<Vec<Vector3<f64>>> {
    let count = stream.next_count(|| "the number of vertices".into())?.value;
    // Built only on error: formatting a context per value would slow large files down.
    let in_vertex = |vertex: usize, message: String| format!("vertex {} of {count}: {message}", vertex + 1);
    let mut vertices = Vec::new();
    for vertex in 0..count {
        let mut coordinates = [0.0; 3];
        for (coordinate, name) in coordinates.iter_mut().zip(["x", "y", "z"]) {
            let token = stream.next_token(|| in_vertex(vertex, format!("its {name}")))?;
            *coordinate = parse_coordinate(token.text, name)
                .map_err(|reason| stream.error(token.line, in_vertex(vertex, reason)))?;
        }
        // The vertex reference is not used, but it must be there and be an integer.
        let token = stream.next_token(|| in_vertex(vertex, "its reference".into()))?;
        parse_label(token.text, "reference").map_err(|reason| stream.error(token.line, in_vertex(vertex, reason)))?;
        vertices.push(Vector3::from(coordinates));
    }
    Ok(vertices)
}

fn read_tetrahedra(stream: &mut TokenStream<'_>) -> Result<Vec<TetEntry>> {
    let count = stream.next_count(|| "the number of tetrahedra".into())?.value;
    let in_tet = |tet: usize, message: String| format!("tetrahedron {} of {count}: {message}", tet + 1);
    let mut entries = Vec::new();
    for tet in 0..count {
        let mut corners = [0; 4];
        // The entry is reported at the line where it starts.
        let mut line = stream.last_line;
        for (position, (corner, name)) in corners
            .iter_mut()
            .zip(["vertex 1", "vertex 2", "vertex 3", "vertex 4"])
            .enumerate()
        {
            let token = stream.next_token(|| in_tet(tet, format!("its {name}")))?;
            if position == 0 {
                line = token.line;
            }
            *corner = parse_count(token.text, name).map_err(|reason| stream.error(token.line, in_tet(tet, reason)))?;
            if *corner == 0 {
                let reason = format!("{name} is 0, but vertex indices start at 1");
                return Err(stream.error(token.line, in_tet(tet, reason)));
            }
        }
        let token = stream.next_token(|| in_tet(tet, "its reference".into()))?;
        let label =
            parse_label(token.text, "reference").map_err(|reason| stream.error(token.line, in_tet(tet, reason)))?;
        entries.push(TetEntry { line, corners, label });
    }
    Ok(entries)
}

/// Skips a section we do not use, still checking that its entries are numbers so a
/// short section cannot silently swallow the next keyword.
fn skip_section(stream: &mut TokenStream<'_>, name: &str, width: usize) -> Result<()> {
    let count = stream.next_count(|| format!("the number of {name}"))?;
    let value_count = count
        .value
        .checked_mul(width)
        .ok_or_else(|| stream.error(count.line, format!("{} {name} is too many", count.value)))?;
    for value in 0..value_count {
        let context = || format!("entry {} of {} {name}", value / width + 1, count.value);
        let token = stream.next_token(context)?;
        if token.text.parse::<f64>().is_err() {
            return Err(stream.error(
                token.line,
                format!("{}: expected a number, found '{}'", context(), token.text),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::tests::{scratch_directory, write_test_file};

    /// Unit cube in 6 tets, with skipped sections, comments and the split
    /// `Dimension` form in the way.
    const CUBE: &str = "\
MeshVersionFormatted 2 # double precision
Identifier \"unit cube, six tets\"
Dimension
3

Vertices
8
0 0 0 1
1 0 0 1
1 1 0 1
0 1 0 1
0 0 1 2   # top face
1 0 1 2
1 1 1 2
0 1 1 2
Edges
2
1 2 5
2 3 5
Triangles 2
1 2 3 10
1 3 4 10
Corners 1 1
Tetrahedra
6
1 2 3 7 1
1 6 2 7 1
1 3 4 7 2
1 4 8 7 2
1 5 6 7 1
1 8 5 7 2
Quadrilaterals 1
1 2 6 5 3
End
";

    /// Reads text that must fail and returns the reported line.
    fn failure_line(test_name: &str, text: &str) -> Option<usize> {
        let directory = scratch_directory(test_name);
        let path = write_test_file(&directory, "body.mesh", text.as_bytes());
        match read_medit(&path) {
            Err(HookeError::Parse { line, .. }) => line,
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn reads_cube_skipping_other_sections() {
        let directory = scratch_directory("medit-cube");
        let path = write_test_file(&directory, "cube.mesh", CUBE.as_bytes());
        let mesh = read_medit(&path).expect("valid MEDIT file");
        assert_eq!(mesh.vertex_count(), 8);
        assert_eq!(mesh.tet_count(), 6);
        assert_eq!(mesh.vertices[5], Vector3::new(1.0, 0.0, 1.0));
        assert_eq!(mesh.tets[1], [0, 5, 1, 6]);
        assert_eq!(mesh.labels, vec![1, 1, 2, 2, 1, 2]);
    }

    #[test]
    fn tetrahedra_may_come_before_vertices_and_end_is_optional() {
        let text = "Dimension 3\nTetrahedra 1\n1 2 3 4 5\n\
                    Vertices 4\n0 0 0 0\n1 0 0 0\n0 1 0 0\n0 0 1 0\n";
        let directory = scratch_directory("medit-order");
        let path = write_test_file(&directory, "tet.mesh", text.as_bytes());
        let mesh = read_medit(&path).expect("valid MEDIT file");
        assert_eq!(mesh.tets, vec![[0, 1, 2, 3]]);
        assert_eq!(mesh.labels, vec![5]);
    }

    #[test]
    fn write_then_read_gives_the_same_mesh() {
        let vertices = vec![
            Vector3::new(0.1, 1.0 / 3.0, -2.5e20),
            Vector3::new(1e-9, 0.0, 7.0),
            Vector3::new(-0.0, 123456.789, 1e-300),
            Vector3::new(2.0, 2.0, f64::MAX),
            Vector3::new(-1.0, 0.5, 0.25),
        ];
        let tets = vec![[0, 1, 2, 3], [4, 3, 2, 1]];
        let mesh = TetMesh::new(vertices, tets, vec![-4, 17]).expect("valid mesh");
        let directory = scratch_directory("medit-round-trip");
        let path = directory.join("round.mesh");
        write_medit(&path, &mesh).expect("write succeeds");
        let read_back = read_medit(&path).expect("written file reads back");
        assert_eq!(read_back, mesh);
    }

    #[test]
    fn write_to_missing_directory_is_an_io_error() {
        let directory = scratch_directory("medit-write-error");
        let path = directory.join("absent").join("out.mesh");
        let error = write_medit(&path, &TetMesh::default()).expect_err("directory is absent");
        assert!(matches!(error, HookeError::Io { .. }), "{error}");
    }

    #[test]
    fn truncated_vertices_point_at_the_last_line() {
        let text = "MeshVersionFormatted 1\nDimension 3\nVertices 3\n0 0 0 0\n1 0 0";
        assert_eq!(failure_line("medit-truncated", text), Some(5));
    }

    #[test]
    fn non_number_is_reported_at_its_line() {
        let text = "Dimension 3\nVertices 2\n0 0 0 0\n1 one 0 0\nEnd\n";
        assert_eq!(failure_line("medit-non-number", text), Some(4));
    }

    #[test]
    fn out_of_range_index_is_reported_at_its_entry() {
        let text = "Dimension 3\nVertices 4\n0 0 0 0\n1 0 0 0\n0 1 0 0\n0 0 1 0\n\
                    Tetrahedra 2\n1 2 3 4 0\n1 2 3 5 0\nEnd\n";
        assert_eq!(failure_line("medit-out-of-range", text), Some(9));
        let zero_based = text.replace("1 2 3 4 0", "0 1 2 3 0");
        assert_eq!(failure_line("medit-zero-index", &zero_based), Some(8));
        let repeated = text.replace("1 2 3 5 0", "1 2 2 4 0");
        assert_eq!(failure_line("medit-repeated-vertex", &repeated), Some(9));
    }

    #[test]
    fn missing_sections_are_reported() {
        let no_tets = "Dimension 3\nVertices 1\n0 0 0 0\nEnd\n";
        assert_eq!(failure_line("medit-missing-tets", no_tets), None);
        let no_vertices = "Dimension 3\nTetrahedra 0\nEnd\n";
        assert_eq!(failure_line("medit-missing-vertices", no_vertices), None);
    }

    #[test]
    fn unknown_keyword_is_reported_with_its_name() {
        let text = "Dimension 3\n# comment\nVertexes 1\n0 0 0 0\n";
        let directory = scratch_directory("medit-unknown");
        let path = write_test_file(&directory, "body.mesh", text.as_bytes());
        match read_medit(&path) {
            Err(HookeError::Parse {
                line: Some(3), reason, ..
            }) => assert!(reason.contains("Vertexes"), "{reason}"),
            other => panic!("expected a parse error at line 3, got {other:?}"),
        }
    }

    #[test]
    fn short_skipped_section_does_not_swallow_the_next_keyword() {
        let text = "Dimension 3\nTriangles 2\n1 2 3 0\nVertices 1\n0 0 0 0\n";
        assert_eq!(failure_line("medit-short-section", text), Some(4));
    }

    #[test]
    fn wrong_headers_are_reported() {
        assert_eq!(
            failure_line("medit-dimension", "MeshVersionFormatted 1\nDimension\n\n2\n"),
            Some(4)
        );
        assert_eq!(failure_line("medit-version", "MeshVersionFormatted x\n"), Some(1));
        assert_eq!(failure_line("medit-empty-count", "Dimension 3\nVertices"), Some(2));
    }
}
