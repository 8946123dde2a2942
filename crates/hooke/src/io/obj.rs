//! Wavefront OBJ surfaces: the `v` and `f` statements (polygons are fanned
//! into triangles); texture coordinates, normals, groups, materials and the
//! other statements are skipped. Every error names its line.

use super::surface_file::{SurfaceFile, TriangleSource};
use crate::error::{HookeError, Result};
use std::path::Path;

/// Parses the vertices and faces of an OBJ file.
pub fn parse_obj(path: &Path, text: &str) -> Result<SurfaceFile> {
    let mut surface = SurfaceFile::default();
    let mut statement = String::new();
    let mut first_line = 0;
    for (index, raw) in text.lines().enumerate() {
        let content = raw.split('#').next().unwrap_or_default();
        if statement.is_empty() {
            first_line = index + 1;
        }
        // A trailing backslash continues the statement on the next line.
        if let Some(joined) = content.trim_end().strip_suffix('\\') {
            statement.push_str(joined);
            statement.push(' ');
            continue;
        }
        statement.push_str(content);
        let line = first_line;
        let fail = |reason: String| HookeError::parse(path, Some(line), reason);
        let mut words = statement.split_whitespace();
        match words.next() {
            Some("v") => {
                surface.vertices.push(super::point_of_words(&mut words).map_err(fail)?);
            }
            Some("f") => {
                let corners = words
                    .map(|word| corner_index(word, surface.vertices.len()).map_err(&fail))
                    .collect::<Result<Vec<usize>>>()?;
                if corners.len() < 3 {
                    return Err(fail(format!(
                        "a face needs at least 3 corners, found {}",
                        corners.len()
                    )));
                }
                for k in 1..corners.len() - 1 {
                    surface.push([corners[0], corners[k], corners[k + 1]], TriangleSource::Line(line));
                }
            }
            _ => {}
        }
        statement.clear();
    }
    Ok(surface)
}

/// The 0-based vertex of a face corner `v`, `v/vt`, `v//vn` or `v/vt/vn`;
/// negative numbers count back from the last vertex read so far.
fn corner_index(word: &str, vertices_so_far: usize) -> std::result::Result<usize, String> {
    let number = word.split('/').next().unwrap_or_default();
    let value: i64 = number
        .parse()
        .map_err(|_| format!("face corner {word:?} does not start with a vertex number"))?;
    let index = match value {
        0 => return Err("vertex numbers start at 1 (0 is not a vertex)".to_string()),
        v if v > 0 => v as usize - 1,
        v => match vertices_so_far.checked_sub(v.unsigned_abs() as usize) {
            Some(index) => index,
            None => {
                return Err(format!(
                    "face corner {value} counts back past the first vertex ({vertices_so_far} read so far)"
                ))
            }
        },
    };
    Ok(index)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<SurfaceFile> {
        parse_obj(Path::new("shape.obj"), text)
    }

    fn error_line(text: &str) -> (Option<usize>, String) {
        match parse(text) {
            Err(HookeError::Parse { line, reason, .. }) => (line, reason),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn reads_polygons_slashed_corners_negative_indices_and_continued_lines() {
        let text = "# a unit square and a triangle\nv 0 0 0\nv 1 0 0\nv 1 1 0 1.0\nv 0 1 0\n\
                    vt 0 0\nvn 0 0 1\ng square\nusemtl steel\nf 1/1/1 2//1 3/1 \\\n 4\nf -4 -3 -1 # last\n";
        let surface = parse(text).unwrap();
        assert_eq!(surface.vertices.len(), 4);
        assert_eq!(surface.triangles, [[0, 1, 2], [0, 2, 3], [0, 1, 3]]);
        assert_eq!(
            surface.sources,
            [
                TriangleSource::Line(10),
                TriangleSource::Line(10),
                TriangleSource::Line(12)
            ]
        );
    }

    #[test]
    fn errors_name_their_line() {
        assert_eq!(error_line("v 0 0 0\nv 1 0\n").0, Some(2));
        assert_eq!(error_line("v 0 0 0\nv 1 0 nan\n").0, Some(2));
        assert_eq!(error_line("v 0 0 0\nv 1 0 0\nv 0 1 0\n\nf 1 2\n").0, Some(5));
        let (line, reason) = error_line("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n");
        assert_eq!(line, Some(4));
        assert!(reason.contains("start at 1"), "{reason}");
        assert_eq!(error_line("v 0 0 0\nf -1 -2 -3\n").0, Some(2));
        assert_eq!(error_line("v 0 0 0\nf a b c\n").0, Some(2));
    }
}
