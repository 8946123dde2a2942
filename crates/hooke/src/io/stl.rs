//! STL surfaces, ASCII or binary. Each facet brings its own three corners;
//! the surface reader welds equal corners into shared vertices afterwards.
//! ASCII errors name their line, binary ones their byte offset.
//!
//! Binary files may begin with the word `solid` too (their 80-byte header is
//! free text), so the format is decided by the size: a file of exactly
//! 84 + 50 n bytes whose header announces n facets is binary.

use super::surface_file::{SurfaceFile, TriangleSource};
use crate::error::{HookeError, Result};
use nalgebra::Vector3;
use std::path::Path;

const HEADER_BYTES: usize = 80;
const FACET_BYTES: usize = 50;

/// Reads an STL file, ASCII or binary.
pub fn parse_stl(path: &Path, bytes: &[u8]) -> Result<SurfaceFile> {
    if binary_facet_count(bytes).is_some() || !bytes.trim_ascii_start().starts_with(b"solid") {
        parse_binary(path, bytes)
    } else {
        parse_ascii(path, &String::from_utf8_lossy(bytes))
    }
}

/// The facet count when the size of `bytes` matches a binary file's header.
fn binary_facet_count(bytes: &[u8]) -> Option<usize> {
    let count = u32::from_le_bytes(bytes.get(HEADER_BYTES..HEADER_BYTES + 4)?.try_into().ok()?) as usize;
    (bytes.len() as u64 == (HEADER_BYTES + 4) as u64 + FACET_BYTES as u64 * count as u64).then_some(count)
}

fn parse_binary(path: &Path, bytes: &[u8]) -> Result<SurfaceFile> {
    let fail = |reason: String| HookeError::parse(path, None, reason);
    let count = match binary_facet_count(bytes) {
        Some(count) => count,
        None if bytes.len() < HEADER_BYTES + 4 => {
            return Err(fail(format!(
                "binary STL: the file has {} bytes, fewer than the 84 of a header, and does not \
                 begin with `solid` (ASCII)",
                bytes.len()
            )))
        }
        None => {
            let count = u32::from_le_bytes([bytes[80], bytes[81], bytes[82], bytes[83]]) as u64;
            return Err(fail(format!(
                "binary STL: the header (bytes 80–83) announces {count} facets, which take {} bytes, \
                 but the file has {}",
                84 + 50 * count,
                bytes.len()
            )));
        }
    };
    let mut surface = SurfaceFile::default();
    for facet in 0..count {
        let start = HEADER_BYTES + 4 + FACET_BYTES * facet;
        // 12 bytes of normal (ignored: the corners' order gives the orientation).
        let mut corners = [Vector3::zeros(); 3];
        for (k, corner) in corners.iter_mut().enumerate() {
            for axis in 0..3 {
                let at = start + 12 + 12 * k + 4 * axis;
                let value = f32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
                if !value.is_finite() {
                    return Err(fail(format!(
                        "binary STL: facet {facet} has a non-finite coordinate (at byte {at})"
                    )));
                }
                corner[axis] = value as f64;
            }
        }
        surface.push_corners(corners, TriangleSource::Facet { facet, byte: start });
    }
    Ok(surface)
}

fn parse_ascii(path: &Path, text: &str) -> Result<SurfaceFile> {
    let mut surface = SurfaceFile::default();
    let mut corners: Vec<Vector3<f64>> = Vec::with_capacity(3);
    let mut facet_line = 0;
    let mut inside_solid = false;
    let mut facets = 0;
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let fail = |reason: String| HookeError::parse(path, Some(line), reason);
        let mut words = raw.split_whitespace();
        let Some(keyword) = words.next() else { continue };
        match keyword {
            // The name after `solid` and `endsolid` is optional (and free text).
            "solid" => inside_solid = true,
            "endsolid" => inside_solid = false,
            "facet" => {
                if !inside_solid {
                    return Err(fail("`facet` outside a `solid … endsolid` block".into()));
                }
                facet_line = line;
                corners.clear();
            }
            "vertex" => {
                let corner = super::point_of_words(&mut words).map_err(fail)?;
                if corners.len() == 3 {
                    return Err(fail(format!("the facet of line {facet_line} has more than 3 vertices")));
                }
                corners.push(corner);
            }
            "endfacet" => {
                if corners.len() != 3 {
                    return Err(fail(format!(
                        "the facet of line {facet_line} has {} vertices, expected 3",
                        corners.len()
                    )));
                }
                surface.push_corners([corners[0], corners[1], corners[2]], TriangleSource::Line(facet_line));
                corners.clear();
                facets += 1;
            }
            "outer" | "endloop" => {}
            other => return Err(fail(format!("unexpected {other:?} in an ASCII STL file"))),
        }
    }
    if facets == 0 && !text.contains("endsolid") {
        return Err(HookeError::parse(
            path,
            None,
            "ASCII STL without facets or `endsolid`: the file is empty or truncated",
        ));
    }
    Ok(surface)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRIANGLE: &str = "solid\n  facet normal 0 0 1\n    outer loop\n      vertex 0 0 0\n      \
                            vertex 1 0 0\n      vertex 0 1 0\n    endloop\n  endfacet\nendsolid\n";

    fn binary(facets: &[[[f32; 3]; 3]], header: &[u8]) -> Vec<u8> {
        let mut bytes = vec![b' '; 80];
        bytes[..header.len()].copy_from_slice(header);
        bytes.extend((facets.len() as u32).to_le_bytes());
        for facet in facets {
            bytes.extend([0u8; 12]);
            for corner in facet {
                for value in corner {
                    bytes.extend(value.to_le_bytes());
                }
            }
            bytes.extend([0u8; 2]);
        }
        bytes
    }

    fn error(result: Result<SurfaceFile>) -> (Option<usize>, String) {
        match result {
            Err(HookeError::Parse { line, reason, .. }) => (line, reason),
            other => panic!("expected a parse error, got {other:?}"),
        }
    }

    #[test]
    fn a_bare_solid_line_starts_an_ascii_file() {
        let surface = parse_ascii(Path::new("t.stl"), TRIANGLE).unwrap();
        assert_eq!(surface.triangles.len(), 1);
        assert_eq!(surface.vertices[1], Vector3::new(1.0, 0.0, 0.0));
        let named = TRIANGLE
            .replace("solid\n", "solid my part\n")
            .replace("endsolid\n", "endsolid my part\n");
        assert_eq!(parse_ascii(Path::new("t.stl"), &named).unwrap().triangles.len(), 1);
    }

    #[test]
    fn ascii_errors_name_their_line() {
        let path = Path::new("t.stl");
        assert_eq!(
            error(parse_ascii(path, &TRIANGLE.replace("vertex 1 0 0", "vertex 1 zero 0"))).0,
            Some(5)
        );
        let (line, reason) = error(parse_ascii(path, &TRIANGLE.replace("      vertex 0 1 0\n", "")));
        assert_eq!(line, Some(7));
        assert!(reason.contains("line 2") && reason.contains("2 vertices"), "{reason}");
        assert_eq!(
            error(parse_ascii(path, &TRIANGLE.replace("endloop", "endlop"))).0,
            Some(7)
        );
        assert_eq!(error(parse_ascii(path, "solid x\n")).0, None);
    }

    #[test]
    fn binary_files_are_told_by_their_size_even_when_the_header_says_solid() {
        let corners = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        let bytes = binary(&[corners, corners], b"solid exported by a CAD tool");
        assert_eq!(binary_facet_count(&bytes), Some(2));
        let surface = parse_binary(Path::new("b.stl"), &bytes).unwrap();
        assert_eq!(surface.triangles.len(), 2);
        assert_eq!(surface.sources[1], TriangleSource::Facet { facet: 1, byte: 134 });
        let (_, reason) = error(parse_binary(Path::new("b.stl"), &bytes[..bytes.len() - 7]));
        assert!(
            reason.contains("announces 2 facets") && reason.contains("177"),
            "{reason}"
        );
        let (_, reason) = error(parse_binary(Path::new("b.stl"), &bytes[..40]));
        assert!(reason.contains("40 bytes"), "{reason}");
        let nan = binary(&[[[0.0, f32::NAN, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], b"");
        let (_, reason) = error(parse_binary(Path::new("b.stl"), &nan));
        assert!(reason.contains("facet 0") && reason.contains("byte 100"), "{reason}");
    }
}
