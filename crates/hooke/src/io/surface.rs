//! Triangle surface readers (and writers): Wavefront OBJ and STL (ASCII or binary) by our
//! own parsers, which know the line (or byte) of every triangle, and PLY
//! (ASCII or binary) by ply-rs-bw. Polygons are fan-triangulated, and corners
//! at exactly the same point are welded into one vertex, so a surface written
//! with duplicated vertices (every STL file) has no cracks.

use crate::error::{HookeError, Result};
use crate::mesh::TriangleSoup;
use nalgebra::Vector3;
use std::collections::HashMap;
use std::path::Path;

pub use super::surface_file::{SurfaceFile, TriangleSource};

/// Reads a closed triangle surface, by file extension (.obj, .stl, .ply).
pub fn read_surface(path: &Path) -> Result<TriangleSoup> {
    let extension = super::lowercase_extension(path).unwrap_or_default();
    if !["obj", "stl", "ply"].contains(&extension.as_str()) {
        return Err(parse_error(path, "unknown surface format: expected .obj, .stl or .ply"));
    }
    parse_surface(path, &super::read_bytes(path)?)
}

/// Writes a triangulated surface by extension: Wavefront OBJ (`.obj`), ASCII
/// STL (`.stl`, with facet normals) or ASCII PLY (`.ply`); coordinates are
/// written so that they read back exactly.
pub fn write_surface(path: &Path, vertices: &[Vector3<f64>], triangles: &[[usize; 3]]) -> Result<()> {
    use std::fmt::Write as _;
    let extension = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let mut text = String::new();
    match extension.as_deref() {
        Some("obj") => {
            for p in vertices {
                let _ = writeln!(text, "v {:e} {:e} {:e}", p.x, p.y, p.z);
            }
            for t in triangles {
                let _ = writeln!(text, "f {} {} {}", t[0] + 1, t[1] + 1, t[2] + 1);
            }
        }
        Some("stl") => {
            text.push_str("solid hooke\n");
            for t in triangles {
                let [a, b, c] = t.map(|v| vertices[v]);
                let normal = (b - a)
                    .cross(&(c - a))
                    .try_normalize(0.0)
                    .unwrap_or_else(Vector3::zeros);
                let _ = writeln!(
                    text,
                    "facet normal {:e} {:e} {:e}\nouter loop",
                    normal.x, normal.y, normal.z
                );
                for p in [a, b, c] {
                    let _ = writeln!(text, "vertex {:e} {:e} {:e}", p.x, p.y, p.z);
                }
                text.push_str("endloop\nendfacet\n");
            }
            text.push_str("endsolid hooke\n");
        }
        Some("ply") => {
            let _ = write!(
                text,
                "ply\nformat ascii 1.0\nelement vertex {}\nproperty double x\nproperty double y\nproperty double z\n\
                 element face {}\nproperty list uchar int vertex_indices\nend_header\n",
                vertices.len(),
                triangles.len()
            );
            for p in vertices {
                let _ = writeln!(text, "{:e} {:e} {:e}", p.x, p.y, p.z);
            }
            for t in triangles {
                let _ = writeln!(text, "3 {} {} {}", t[0], t[1], t[2]);
            }
        }
        _ => {
            return Err(HookeError::io(
                path,
                std::io::Error::other("unknown surface format: use .obj, .stl or .ply"),
            ))
        }
    }
    crate::output::atomic::write_bytes_atomically(path, text.as_bytes())
}

/// Parses the bytes of a surface file; `name` gives the format by extension
/// and names the file in errors.
pub fn parse_surface(name: &Path, bytes: &[u8]) -> Result<TriangleSoup> {
    let path = name;
    let surface = match super::lowercase_extension(path).unwrap_or_default().as_str() {
        "obj" => super::obj::parse_obj(path, &String::from_utf8_lossy(bytes))?,
        "stl" => super::stl::parse_stl(path, bytes)?,
        "ply" => parse_ply(path, bytes)?,
        _ => return Err(parse_error(path, "unknown surface format: expected .obj, .stl or .ply")),
    };
    validate(path, surface)
}

fn parse_error(path: &Path, reason: impl std::fmt::Display) -> HookeError {
    HookeError::Parse {
        path: path.to_path_buf(),
        line: None,
        reason: reason.to_string(),
    }
}

/// An error about one triangle: on its line when it has one.
fn triangle_error(path: &Path, source: TriangleSource, reason: String) -> HookeError {
    match source {
        TriangleSource::Line(line) => HookeError::parse(path, Some(line), reason),
        other => HookeError::parse(path, None, format!("{other}: {reason}")),
    }
}

/// Checks indices and coordinates, naming the first bad triangle or vertex,
/// and welds equal corners.
fn validate(path: &Path, surface: SurfaceFile) -> Result<TriangleSoup> {
    if let Some(v) = surface.vertices.iter().position(|p| !p.iter().all(|c| c.is_finite())) {
        return Err(parse_error(
            path,
            format!("vertex {} has a non-finite coordinate", v + 1),
        ));
    }
    for (triangle, &source) in surface.triangles.iter().zip(&surface.sources) {
        if let Some(&bad) = triangle.iter().find(|&&i| i >= surface.vertices.len()) {
            return Err(triangle_error(
                path,
                source,
                format!(
                    "refers to vertex {} (counting from 1), but the file has {} vertices",
                    bad + 1,
                    surface.vertices.len()
                ),
            ));
        }
        if triangle[0] == triangle[1] || triangle[1] == triangle[2] || triangle[0] == triangle[2] {
            return Err(triangle_error(
                path,
                source,
                format!(
                    "a triangle repeats a vertex (vertices {:?}, counting from 1)",
                    triangle.map(|v| v + 1)
                ),
            ));
        }
    }
    if surface.triangles.is_empty() {
        return Err(parse_error(path, "the file holds no triangles"));
    }
    Ok(weld(surface))
}

/// Merges vertices at exactly the same point (−0 and +0 alike) and drops the
/// vertices no triangle uses. Triangles that collapse (two corners at one
/// point: a zero-area sliver, common in STL exports) are dropped: they bound
/// nothing.
fn weld(surface: SurfaceFile) -> TriangleSoup {
    let key = |p: &Vector3<f64>| p.map(|c| if c == 0.0 { 0u64 } else { c.to_bits() });
    let mut first_at: HashMap<Vector3<u64>, usize> = HashMap::new();
    let mut vertices = Vec::new();
    let mut renumbered = vec![usize::MAX; surface.vertices.len()];
    let mut triangles = Vec::with_capacity(surface.triangles.len());
    for triangle in &surface.triangles {
        let corners = triangle.map(|v| {
            if renumbered[v] == usize::MAX {
                renumbered[v] = *first_at.entry(key(&surface.vertices[v])).or_insert_with(|| {
                    vertices.push(surface.vertices[v]);
                    vertices.len() - 1
                });
            }
            renumbered[v]
        });
        if corners[0] != corners[1] && corners[1] != corners[2] && corners[0] != corners[2] {
            triangles.push(corners);
        }
    }
    TriangleSoup { vertices, triangles }
}

fn scalar(property: &ply_rs_bw::ply::Property) -> Option<f64> {
    use ply_rs_bw::ply::Property::*;
    Some(match property {
        Char(v) => *v as f64,
        UChar(v) => *v as f64,
        Short(v) => *v as f64,
        UShort(v) => *v as f64,
        Int(v) => *v as f64,
        UInt(v) => *v as f64,
        Float(v) => *v as f64,
        Double(v) => *v,
        _ => return None,
    })
}

fn index_list(property: &ply_rs_bw::ply::Property) -> Option<Vec<i64>> {
    use ply_rs_bw::ply::Property::*;
    Some(match property {
        ListChar(v) => v.iter().map(|&i| i as i64).collect(),
        ListUChar(v) => v.iter().map(|&i| i as i64).collect(),
        ListShort(v) => v.iter().map(|&i| i as i64).collect(),
        ListUShort(v) => v.iter().map(|&i| i as i64).collect(),
        ListInt(v) => v.iter().map(|&i| i as i64).collect(),
        ListUInt(v) => v.iter().map(|&i| i as i64).collect(),
        _ => return None,
    })
}

fn parse_ply(path: &Path, bytes: &[u8]) -> Result<SurfaceFile> {
    let mut file = std::io::Cursor::new(bytes);
    let parser = ply_rs_bw::parser::Parser::<ply_rs_bw::ply::DefaultElement>::new();
    let ply = parser.read_ply(&mut file).map_err(|e| parse_error(path, e))?;
    let vertices = ply
        .payload
        .get("vertex")
        .ok_or_else(|| parse_error(path, "no `vertex` element"))?;
    let mut soup = SurfaceFile::default();
    for (v, vertex) in vertices.iter().enumerate() {
        let coordinate = |name: &str| {
            vertex
                .get(name)
                .and_then(scalar)
                .ok_or_else(|| parse_error(path, format!("vertex {v} has no numeric `{name}`")))
        };
        soup.vertices
            .push(Vector3::new(coordinate("x")?, coordinate("y")?, coordinate("z")?));
    }
    let faces = ply
        .payload
        .get("face")
        .ok_or_else(|| parse_error(path, "no `face` element"))?;
    for (f, face) in faces.iter().enumerate() {
        let indices = face
            .get("vertex_indices")
            .or_else(|| face.get("vertex_index"))
            .and_then(index_list)
            .ok_or_else(|| parse_error(path, format!("face {f} has no `vertex_indices` list")))?;
        if indices.len() < 3 || indices.iter().any(|&i| i < 0) {
            return Err(parse_error(path, format!("face {f} has invalid indices {indices:?}")));
        }
        for k in 1..indices.len() - 1 {
            let triangle = [indices[0] as usize, indices[k] as usize, indices[k + 1] as usize];
            soup.push(triangle, TriangleSource::Face(f));
        }
    }
    Ok(soup)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square_with_duplicated_corners() -> SurfaceFile {
        let mut surface = SurfaceFile::default();
        let [a, b, c, d] = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, -0.0]]
            .map(|p| Vector3::new(p[0], p[1], p[2]));
        surface.push_corners([a, b, c], TriangleSource::Line(1));
        surface.push_corners(
            [a, c, d.map(|x| if x == 0.0 { -0.0 } else { x })],
            TriangleSource::Line(2),
        );
        // A sliver whose corners coincide bounds nothing.
        surface.push_corners([a, b, b], TriangleSource::Line(3));
        surface
    }

    #[test]
    fn equal_corners_are_welded_and_collapsed_triangles_dropped() {
        let soup = validate(Path::new("s.stl"), square_with_duplicated_corners()).unwrap();
        assert_eq!(soup.vertices.len(), 4);
        assert_eq!(soup.triangles, [[0, 1, 2], [0, 2, 3]]);
    }

    #[test]
    fn a_triangle_that_repeats_an_index_is_reported_where_it_was_written() {
        let mut surface = square_with_duplicated_corners();
        surface.push([0, 4, 4], TriangleSource::Line(9));
        match validate(Path::new("s.obj"), surface) {
            Err(HookeError::Parse {
                line: Some(9), reason, ..
            }) => assert!(reason.contains("repeats"), "{reason}"),
            other => panic!("expected an error on line 9, got {other:?}"),
        }
        let mut surface = square_with_duplicated_corners();
        surface.push([0, 1, 40], TriangleSource::Facet { facet: 3, byte: 234 });
        let error = validate(Path::new("s.stl"), surface).unwrap_err().to_string();
        assert!(
            error.contains("s.stl") && error.contains("facet 3 (at byte 234)") && error.contains("vertex 41"),
            "{error}"
        );
    }
}
