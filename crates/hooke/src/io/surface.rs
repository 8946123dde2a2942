//! Triangle surface readers: Wavefront OBJ (tobj), STL in ASCII or binary
//! (stl_io) and PLY in ASCII or binary (ply-rs-bw). Polygons are fan-triangulated.

use crate::error::{HookeError, Result};
use crate::mesh::TriangleSoup;
use nalgebra::Vector3;
use std::path::Path;

/// Reads a closed triangle surface, by file extension (.obj, .stl, .ply).
pub fn read_surface(path: &Path) -> Result<TriangleSoup> {
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    let soup = match extension.as_str() {
        "obj" => read_obj(path)?,
        "stl" => read_stl(path)?,
        "ply" => read_ply(path)?,
        _ => return Err(parse_error(path, "unknown surface format: expected .obj, .stl or .ply")),
    };
    validate(path, soup)
}

fn parse_error(path: &Path, reason: impl std::fmt::Display) -> HookeError {
    HookeError::Parse {
        path: path.to_path_buf(),
        line: None,
        reason: reason.to_string(),
    }
}

/// Checks indices and coordinates, naming the first bad triangle or vertex.
fn validate(path: &Path, soup: TriangleSoup) -> Result<TriangleSoup> {
    if let Some(v) = soup.vertices.iter().position(|p| !p.iter().all(|c| c.is_finite())) {
        return Err(parse_error(path, format!("vertex {v} has a non-finite coordinate")));
    }
    for (t, triangle) in soup.triangles.iter().enumerate() {
        if let Some(&bad) = triangle.iter().find(|&&i| i >= soup.vertices.len()) {
            return Err(parse_error(
                path,
                format!(
                    "triangle {t} refers to vertex {bad}, but there are {} vertices",
                    soup.vertices.len()
                ),
            ));
        }
    }
    if soup.triangles.is_empty() {
        return Err(parse_error(path, "the file holds no triangles"));
    }
    Ok(soup)
}

fn read_obj(path: &Path) -> Result<TriangleSoup> {
    let options = tobj::LoadOptions {
        triangulate: true,
        single_index: true,
        ..tobj::LoadOptions::default()
    };
    let (models, _materials) = tobj::load_obj(path, &options).map_err(|e| parse_error(path, e))?;
    let mut soup = TriangleSoup::default();
    for model in models {
        let offset = soup.vertices.len();
        let mesh = &model.mesh;
        soup.vertices
            .extend(mesh.positions.chunks(3).map(|p| Vector3::new(p[0], p[1], p[2])));
        soup.triangles.extend(
            mesh.indices
                .chunks(3)
                .map(|t| [0, 1, 2].map(|k| offset + t[k] as usize)),
        );
    }
    Ok(soup)
}

fn read_stl(path: &Path) -> Result<TriangleSoup> {
    let mut file = std::fs::File::open(path).map_err(|e| HookeError::io(path, e))?;
    let mesh = stl_io::read_stl(&mut file).map_err(|e| parse_error(path, e))?;
    Ok(TriangleSoup {
        vertices: mesh
            .vertices
            .iter()
            .map(|v| Vector3::new(v[0] as f64, v[1] as f64, v[2] as f64))
            .collect(),
        triangles: mesh.faces.iter().map(|f| f.vertices).collect(),
    })
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

fn read_ply(path: &Path) -> Result<TriangleSoup> {
    let mut file = std::io::BufReader::new(std::fs::File::open(path).map_err(|e| HookeError::io(path, e))?);
    let parser = ply_rs_bw::parser::Parser::<ply_rs_bw::ply::DefaultElement>::new();
    let ply = parser.read_ply(&mut file).map_err(|e| parse_error(path, e))?;
    let vertices = ply
        .payload
        .get("vertex")
        .ok_or_else(|| parse_error(path, "no `vertex` element"))?;
    let mut soup = TriangleSoup::default();
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
            soup.triangles
                .push([indices[0] as usize, indices[k] as usize, indices[k + 1] as usize]);
        }
    }
    Ok(soup)
}
